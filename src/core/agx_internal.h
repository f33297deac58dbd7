/* Internal interfaces shared by src/core, src/pat and src/coll. Nothing here is public. */
#ifndef AGX_INTERNAL_H
#define AGX_INTERNAL_H

#include "agx.h"
#include "allreduce.h"
#include "alltoallv.h"
#include "intergroup.h"
#include "locality.h"
#include "patterns.h"

#include <stddef.h>

#include <mpi.h>

/* ---- block layout ---------------------------------------------------------------------
 * A buffer seen as blocks: block i is count(i) elements of `type` at buf + displ(i) *
 * extent. Three forms: the regular layout (count ucount, displ i * ucount), the user's
 * allgatherv arrays (int counts / displs), or 64-bit arrays (lcounts / ldispls: byte
 * pieces and permuted orders, whose values may exceed an int). Allgather(v)'s receive
 * buffer is one, so every intra algorithm serves both operations; the engine moves blocks
 * with 64-bit sizes (above INT_MAX elements as derived datatypes). */
typedef struct {
    char *buf;
    MPI_Datatype type;
    MPI_Aint extent;
    long long type_size;
    int p;
    int ucount;
    const int *counts;
    const int *displs;
    const MPI_Aint *lcounts;
    const MPI_Aint *ldispls;
    int same_shape;       /* every rank has this layout (SMPI builds may cut messages) */
} agx_blocks;

static inline MPI_Aint agx_blk_count(const agx_blocks *b, int i)
{
    return b->counts ? (MPI_Aint)b->counts[i] : b->lcounts ? b->lcounts[i] : (MPI_Aint)b->ucount;
}
static inline MPI_Aint agx_blk_displ(const agx_blocks *b, int i)
{
    return b->counts ? (MPI_Aint)b->displs[i] : b->lcounts ? b->ldispls[i] : (MPI_Aint)i * b->ucount;
}
static inline int agx_blk_listed(const agx_blocks *b) { return b->counts || b->lcounts; } /* not regular */
/* A layout of n byte pieces (counts / displs in bytes, 64-bit) over buf. */
void agx_blocks_bytes(agx_blocks *b, void *buf, int n, const MPI_Aint *counts, const MPI_Aint *displs);
/* The elements of one message or copy piece: at most an int (larger ones are cut). */
#define AGX_MAX_PIECE (1 << 30)

typedef struct agx_ctx agx_ctx;
typedef struct agx_intergroup agx_intergroup;
typedef struct agx_table agx_table;
typedef struct agx_alg agx_alg;
typedef struct agx_ig_io agx_ig_io;

/* ---- arguments of one call: an operation-neutral part and a per-operation part ------- */
/* allgather / allgatherv, as the user gave them, and the receive layout */
typedef struct {
    const void *sendbuf;  /* may be MPI_IN_PLACE */
    int sendcount;
    MPI_Datatype sendtype;
    void *recvbuf;
    int recvcount;
    const int *recvcounts;
    const int *displs;
    MPI_Datatype recvtype;
    agx_blocks blk;       /* the receive layout */
    agx_ig_io *io;        /* intergroup calls: the byte view (NULL for raw algorithms) */
    const void **shared;  /* agx_allgatherv_shared: where shm_notify leaves the result
                           * (recvbuf unused), NULL otherwise */
} agx_ag_args;

/* alltoallv, as the user gave it, and its two layouts (block j of the send layout goes to
 * rank j, block s of the receive layout comes from rank s) */
typedef struct {
    const void *sendbuf;  /* may be MPI_IN_PLACE */
    const int *sendcounts, *sdispls;
    MPI_Datatype sendtype;
    void *recvbuf;
    const int *recvcounts, *rdispls;
    MPI_Datatype recvtype;
    agx_blocks sblk, rblk; /* in place: sblk describes a copy of the receive buffer */
    unsigned char *snz, *rnz; /* the non-empty pairs, per peer */
    int throttle;          /* AGX_ALLTOALLV_THROTTLE */
    unsigned send_flags;   /* AGX_ALLTOALLV_SYNC: AGX_SOP_SYNC for issend */
} agx_a2a_args;

/* allreduce, as the user gave it, and the vector's layout: the whole vector as one block,
 * or cut into `nb` blocks of about equal counts (ring, Rabenseifner) */
typedef struct {
    const void *sendbuf;  /* may be MPI_IN_PLACE */
    void *recvbuf;
    int count;
    MPI_Datatype type;
    MPI_Op op;
    int commutative;      /* MPI_Op_commutative */
    int exact;            /* the result does not depend on the order (integer types) */
    MPI_Datatype base;    /* the predefined element type of `type` */
    int per;              /* elements of base per element of type */
    int predef;           /* op is a predefined op */
    int opk;              /* its index in MPI-3.1 Sec. 5.9.2's list (MAX .. MAXLOC), -1: user op */
    int elem;             /* base's place in MPI's table of types (class x 64 + index), 0: none */
    const char *unproven; /* why only the library's own MPI_Allreduce may run this (type, op),
                           * NULL where agx's algorithms are tested to give its answer */
} agx_ar_args;

typedef struct {
    agx_op op;
    agx_kind kind;        /* which table serves the call: intra, or inter (an
                           * inter-communicator or a colour split) */
    const agx_table *table;
    const agx_alg *alg;   /* the algorithm running (after selection) */
    agx_ctx *ctx;
    const agx_intergroup *ig; /* the two groups, for inter algorithms */
    MPI_Comm comm;        /* agx's private duplicate of the user's communicator */
    MPI_Comm user_comm;   /* the user's communicator (errors are raised on it) */
    int rank, p;          /* p: the size of the group the algorithm runs over (the remote
                           * group for intergroup allgathers), rank: in the caller's group */
    int inter;            /* an inter call: inter-communicator or colour split */
    long long msg_bytes;  /* the size the selection rules look at (allgather: the result) */
    const agx_a2a_pattern *pattern; /* alltoallv: the call's pattern (selection reads it) */
    const struct agx_rule *rule; /* the rules file's row that chose (its parameters), or NULL */
    union {               /* the per-operation part */
        agx_ag_args ag;
        agx_a2a_args a2a;
        agx_ar_args ar;
    } u;
} agx_args;

typedef int (*agx_coll_fn)(const agx_args *a);

/* ---- registry: one table per (operation family, communicator kind) -------------------- */
enum {
    AGX_R_EVEN_P = 1u << 0, /* needs an even number of processes */
};
#define AGX_MAX_PARAMS 2

/* A tunable parameter of an algorithm, read from the environment. */
typedef struct {
    const char *name, *env, *desc;
    int def, min, max;
} agx_param;

/* Why `a` cannot run this call (NULL: it can): a restriction beyond the flags. *told
 * set: the reason was already explained to the user (agx_pat_init does), so the fallback
 * runs without the AGX_FALLBACK=warn line. */
typedef const char *(*agx_check_fn)(const agx_args *a, int *told);

struct agx_pat_alg; /* the background half of a PAP-aware algorithm (src/pat/pat.h) */

struct agx_alg {
    const char *name;
    agx_coll_fn fn;
    unsigned ops;               /* bit (1 << op) for each op of the family it serves */
    const char *desc;           /* one line */
    const char *cost;           /* alpha-beta cost */
    const char *cite;           /* docs/REFERENCES.md key + algorithm / equation */
    agx_param params[AGX_MAX_PARAMS];
    unsigned restrictions;      /* AGX_R_* */
    agx_check_fn check;         /* further restriction, NULL: none */
    const char *fallback;       /* when a restriction fails; NULL: the default rule */
    const struct agx_pat_alg *pat;
    int raw;                    /* inter: reads the user's buffers itself (no byte view) */
};

/* A range of a selection quantity: lo <= x < end; end 0: no upper bound ({0, 0}: any).
 * Written "lo-hi" (inclusive) in rules files and the environment (src/core/rules.c). */
typedef struct {
    long long lo, end;
} agx_span;

/* A selection rule: the built-in default (each table's `rules`, the first row whose
 * conditions hold choosing), a rules file's row (AGX_TUNING_FILE) or an item of the
 * environment's size-ranged form. Data, not code. */
typedef struct agx_rule {
    agx_span bytes;            /* the call's msg_bytes */
    agx_span size;             /* p */
    agx_span ppn;              /* the most processes of one region (node) */
    agx_span nodes;            /* regions (nodes) the communicator spans */
    int pow2;                   /* 1: p must be a power of two */
    /* alltoallv's pattern (0: any): |R| <= recv_pct_max % of p; the most senders of one
     * receiver >= send_pct_min % of p, or < send_pct_max % of p */
    int recv_pct_max, send_pct_min, send_pct_max;
    const char *alg;
    /* rules file: the parameters it sets, its line; file and environment rules: the
     * algorithm's index in each kind's table (-1: not there) */
    int nparams;
    const char *pname[AGX_MAX_PARAMS];
    int pval[AGX_MAX_PARAMS];
    int line;
    int kidx[AGX_KIND_LAST];
} agx_rule;

struct agx_table {
    agx_kind kind;
    const agx_alg *algs;
    int n;
    const agx_rule *rules;
    int nrules;
};

/* The operations agx knows: name, environment variable, and the tables serving it. */
typedef struct {
    const char *name, *env;
    const agx_table *table[AGX_KIND_LAST];
} agx_op_desc;

/* src/coll/coll_table.c */
const agx_op_desc *agx_op_get(agx_op op);
const agx_table *agx_table_of(agx_op op, agx_kind kind);
/* Index of `name` among the algorithms of (op, kind) serving op, or -1. */
int agx_alg_find(agx_op op, agx_kind kind, const char *name);
const agx_alg *agx_alg_at(agx_op op, agx_kind kind, int index);
/* agx_alg_at for a call whose table is known (on every call's path: no call out). */
static inline const agx_alg *agx_call_alg(const agx_args *a, int index)
{
    const agx_table *t = a->table;
    return index >= 0 && index < t->n && ((t->algs[index].ops >> a->op) & 1u) ? &t->algs[index] : NULL;
}
/* Comma-separated names valid for (op, kind), into buf. */
void agx_alg_names(agx_op op, agx_kind kind, char *buf, int len);
/* NULL when `alg` may run on this call, else why not (*told: already explained to the
 * user; told may be NULL). */
const char *agx_alg_violation(const agx_alg *alg, const agx_args *a, int *told);
/* Value of the running algorithm's parameter `name` (environment or default); an error
 * code when the environment's value is malformed. */
int agx_alg_param(const agx_args *a, const char *name, int *value);

/* ---- selection rules (src/core/rules.c, rules_file.c) ---------------------------------- */
/* "lo-hi" (inclusive), "lo-", "N"; K, M, G multiply by 1024. 0, or -1 when malformed. */
int agx_span_parse(const char *s, agx_span *r);
int agx_span_holds(agx_span r, long long x);
int agx_span_meet(agx_span a, agx_span b);
void agx_span_text(agx_span r, char *buf, size_t len);
/* Whether the rule's conditions hold for the call (derives the regions when it asks). */
int agx_rule_holds(const agx_rule *r, const agx_args *a);
/* The environment's value for op ("alg[:bytes],..."), items resolved per kind. *why: a
 * message when the value is wrong (then no rules). */
int agx_env_rules(const agx_ctx *ctx, agx_op op, const char *value, agx_rule **out, int *n, char **why);
void agx_env_rules_free(agx_rule *rules, int n);
/* The rules file: its rows for (op, kind), its path (NULL: none), agreement on it by the
 * communicator (sets ctx->rules_on or ctx->rules_bad), and its release at finalize. */
const agx_rule *agx_rules_file(agx_op op, agx_kind kind, int *n);
const char *agx_rules_path(void);
int agx_rules_agree(agx_ctx *ctx);
void agx_rules_free(void);
void agx_rules_reset(void);

/* ---- per-communicator context (MPI attribute caching) ---------------------------------- */
/* The rules file's row for the last call's shape (select.c): a call of the same size and
 * group skips the scan. */
typedef struct {
    long long bytes;
    int p, valid;
    const agx_rule *row; /* NULL: no row holds */
} agx_file_memo;

/* The last intra allgather whose types are common predefined ones, ready to run again
 * (api.c): its key and its arguments after the checks, layout and selection. */
typedef struct {
    int valid, inplace, scount, rcount;
    MPI_Datatype stype, rtype;
    unsigned gen;            /* ctx->select_gen when it was made */
    const void *pat;         /* ctx->pat when it was made */
    agx_args a;
} agx_ag_memo;

enum { AGX_FALLBACK_WARN = 0, AGX_FALLBACK_SILENT, AGX_FALLBACK_ERROR };

typedef struct agx_cached agx_cached;
struct agx_pat;

struct agx_ctx {
    MPI_Comm user;
    MPI_Comm pcomm;            /* private duplicate, MPI_COMM_NULL until first collective */
    agx_kind kind;             /* of the communicator itself */
    int rank, p;
    /* Choices per (table kind, op): an intra-communicator also serves the colour-split
     * intergroup calls from the inter table. Table index, -1: none. */
    int forced[AGX_KIND_LAST][AGX_OP_LAST];
    int env_forced[AGX_KIND_LAST][AGX_OP_LAST]; /* the environment's one name, -1: none */
    agx_rule *env_rules[AGX_OP_LAST]; /* its size-ranged form (bruck:0-8K,ring), in order */
    int env_n[AGX_OP_LAST];
    char *env_bad[AGX_OP_LAST]; /* what is wrong with the environment's value, reported at
                                 * each call */
    int rules_on;               /* the rules file is agreed on: its rows choose */
    char *rules_bad;            /* why the rules file cannot be used, reported at each call */
    agx_file_memo file_memo[AGX_KIND_LAST][AGX_OP_LAST];
    /* The last intra allgather call whose types are common predefined ones, ready to run
     * again (api.c): a call with the same counts, types, in-place-ness, forced choices and
     * PAT session skips the checks, the layout and the selection, which it would pass
     * the same way. */
    agx_ag_memo ag_memo;
    unsigned select_gen;        /* bumped by agx_comm_set_algorithm: memos are stale */
    long long vseen[64];        /* AGX_VERBOSE: the choices already printed (select.c) */
    int nvseen;
    int last[AGX_OP_LAST];     /* index of the algorithm that ran last, -1: none */
    agx_kind last_kind[AGX_OP_LAST];
    int warned[AGX_KIND_LAST][AGX_OP_LAST];
    int fallback_policy;
    int check_args;            /* AGX_CHECK_ARGS: agree on the arguments before a reduction */
    agx_regions *reg;          /* regions (AGX_REGION_SIZE / AGX_REGIONS or shared-memory
                                * nodes), NULL until an algorithm or the counters need them */
    agx_cached *cache;         /* schedules cached per (algorithm, shape) */
    agx_intergroup *ig;        /* the two groups (inter-communicator or colour split) */
    struct agx_pat *pat;       /* the PAT session on this communicator (src/pat) */
    agx_a2a_pattern *a2a;      /* alltoallv: the pattern of the last call, verified */
    unsigned long long a2a_hash; /* this rank's side of that call (its pair sizes) */
    struct agx_shm *shm[2];    /* node-shared segments (src/core/shm.c), by AGX_SHM_*, NULL
                                * until used */
    void *scratch[2];          /* agx_ctx_scratch: data, and per-rank tables, kept between */
    size_t scratch_size[2];    /* calls (the same sizes on every rank) */
    struct agx_ctx *prev, *next;
};

/* Scratch kept in ctx for the next calls: `data` bytes (large vectors; SimGrid may fold
 * it) and `meta` bytes (this rank's tables), grown when a call needs more. Growing is
 * agreed over comm (one allreduce), so a rank that cannot allocate fails the call on
 * every rank; the sizes, hence the decision to grow, depend only on the call's arguments,
 * which are the same on every rank. Collective when it grows. */
int agx_ctx_scratch(agx_ctx *ctx, MPI_Comm comm, size_t data, size_t meta, void **dp, void **mp, const char *fn);
/* A node-shared segment (src/core/shm.c): node = the region's ranks, lane = the ranks of
 * the same index in every region (ordered by region), base = the segment (the same memory
 * for every rank of the region). */
/* The token of an agx_allgatherv_shared result (agx_shared_handle.seg): the segment it
 * lies in, NULL once that segment was freed or overwrote it; agx_shared_release frees it. */
typedef struct agx_hold {
    struct agx_shm *m;
} agx_hold;
typedef struct agx_shm {
    MPI_Comm node, lane;
    MPI_Win win;               /* MPI_WIN_NULL until a segment exists */
    char *base;
    size_t size;
    int usable;                /* every region shares memory (agreed) */
    /* the notified layer (src/core/notify.c) */
    MPI_Comm all;              /* the communicator's private duplicate (not owned) */
    MPI_Win iwin;              /* the segment exposed to every rank of the communicator
                                * (MPI_Win_create), MPI_WIN_NULL until needed */
    int fresh;                 /* the segment is new (zeroed, no call used it yet) */
    int seq;                   /* calls run on this segment's notifications */
    agx_hold *hold;            /* the unreleased agx_allgatherv_shared result, or NULL */
    int note;                  /* the seq of this rank's last failure notice (sent from here) */
    int noticed, noticer;      /* the latest call another rank's notice failed, and that rank */
    const char *why;           /* why the notified layer cannot run (NULL: it can) */
} agx_shm;
/* Segments are per use: calls of different operations interleave on a communicator, and
 * the notified layer's remote writes must not land in another operation's segment. */
enum { AGX_SHM_REDUCE = 0, AGX_SHM_NOTIFY = 1 };
/* The communicator's segment `which` of at least `bytes` bytes (zeroed when new) in
 * *out, or *out = NULL when its regions do not share memory (the same answer on every
 * rank). Collective the first time and when it grows; failures are agreed. */
int agx_ctx_shm(agx_ctx *ctx, const agx_regions *R, int which, size_t bytes, agx_shm **out, const char *fn);
/* Every store before it, on any rank of the region, is visible to loads after it. */
int agx_shm_sync(const agx_shm *m);
void agx_shm_free(agx_shm *m);
/* The context of comm, created (locally, no communication) on first use. */
int agx_ctx_get(MPI_Comm comm, agx_ctx **out);
/* Collective set-up done at the first collective call: private communicator, and the
 * regions when counters are on. Every rank of comm calls it at the same call. */
int agx_ctx_setup(agx_ctx *ctx);
/* The algorithm forced on (op, kind): per communicator, else environment; -1: none. */
int agx_ctx_forced(const agx_ctx *ctx, agx_op op, agx_kind kind);
/* Resolve a name in every table it may choose from on ctx (idx[kind], -1 where absent);
 * returns how many tables have it. */
int agx_ctx_resolve(const agx_ctx *ctx, agx_op op, const char *name, int idx[AGX_KIND_LAST]);

/* Free the PAT session of ctx, if any (src/pat). */
void agx_pat_ctx_free(agx_ctx *ctx);

/* node_of[r] = smallest rank of r's shared-memory node, for every rank of comm. */
int agx_node_map(MPI_Comm comm, int **node_of);
/* The regions of ctx (collective on first use, then cached). */
int agx_ctx_regions(agx_ctx *ctx, const agx_regions **out);
void agx_ctx_free_locality(agx_ctx *ctx);

/* ---- schedule cache: per (communicator, builder, shape), freed with the communicator -- */
typedef struct {
    const void *builder;       /* the builder function: identifies the algorithm */
    int p, param;              /* the shape */
} agx_cache_key;
/* The cached schedule (and virtual order, NULL for flat schedules) for key, or NULL. */
const agx_sched *agx_cache_find(agx_ctx *ctx, const agx_cache_key *key, const int **order);
/* Store s (taken over) and order (taken over, may be NULL). */
int agx_cache_put(agx_ctx *ctx, const agx_cache_key *key, agx_sched *s, int *order,
                  const agx_sched **out);
void agx_cache_free(agx_ctx *ctx);

/* ---- running schedules (src/core/engine.c) ---------------------------------------------
 * How one schedule runs: on which communicator with which tag, over which buffers, and
 * how its messages are counted. */
typedef struct {
    MPI_Comm comm;
    int tag;
    const agx_blocks *bufs;    /* the schedule's buffers, by agx_sop.buf / .src */
    int nbufs;
    const int *node_of;        /* counters: rank -> node / region (NULL: not counted) */
    int me;
    int intergroup;            /* count sends and receives as intergroup traffic too */
    MPI_Op op;                 /* AGX_SOP_REDUCE */
} agx_exec;

int agx_sched_run(const agx_exec *x, const agx_sched *s);
/* The exec of an intra call over its receive layout (counters by regions). */
void agx_exec_of(const agx_args *a, const agx_blocks *blk, agx_exec *x);
/* The schedule of a flat builder for this rank and p, from the communicator's cache or
 * built now. */
int agx_flat_sched(const agx_args *a, agx_build_fn build, int param, const agx_sched **out);
/* A flat allgather: copy the own block, then the cached schedule of `build`. */
int agx_run_flat(const agx_args *a, agx_build_fn build, int param);
/* Run a locality-aware algorithm: its virtual order and schedule (built once per
 * communicator and cached), over the receive layout permuted to that order. */
int agx_run_locality(const agx_args *a, agx_order_fn order, agx_locbuild_fn build, int nl);
/* The cached virtual order and this rank's schedule of a locality-aware builder. */
int agx_locality_sched(agx_ctx *ctx, const agx_regions *R, agx_order_fn order, agx_locbuild_fn fn, int nl,
                       const agx_sched **out, const int **vorder);

/* Copy the own contribution from sendbuf into its block (no-op for MPI_IN_PLACE). */
int agx_copy_own_block(const agx_args *a);
/* MPI_Waitall with statuses (portable across MPI headers). */
int agx_waitall(int n, MPI_Request *req);
/* Error path: cancel and free n posted requests. */
void agx_cancel_all(int n, MPI_Request *req);
/* Local copy between typed buffers of equal signature (MPIR_Localcopy's role); counts
 * may exceed an int. */
int agx_localcopy(const void *src, MPI_Aint scount, MPI_Datatype stype, void *dst, MPI_Aint dcount,
                  MPI_Datatype dtype);
/* agx's private MPI_COMM_SELF duplicate (MPI_ERRORS_RETURN): for MPI_Pack / MPI_Unpack and
 * local copies, so their errors come back to the call instead of MPI_COMM_SELF's fatal
 * handler. */
int agx_self_comm(MPI_Comm *out);
/* 1 for a predefined (named) datatype. */
int agx_type_is_named(MPI_Datatype t);
/* named, and all data (size == extent): n elements are n * size contiguous bytes */
int agx_type_is_dense(MPI_Datatype t);
/* The size of the common predefined types (byte, char, int, unsigned, long, long long,
 * float, double), known without a call into MPI; 0 for any other type. */
int agx_type_common_size(MPI_Datatype t);
/* A type's size and (when extent is not NULL) extent; the common predefined types without
 * a call into MPI. */
void agx_type_layout(MPI_Datatype t, long long *size, MPI_Aint *extent);
/* MPI_ERR_TYPE (made) for MPI_DATATYPE_NULL or an uncommitted type, else MPI_SUCCESS;
 * the message names "fn: what". */
int agx_type_check(MPI_Datatype t, const char *fn, const char *what);
/* Pack count elements of t at `typed` into contiguous bytes (unpack: the reverse), in
 * pieces whose packed size fits an int. */
int agx_pack(void *typed, MPI_Aint count, MPI_Datatype t, char *bytes, int unpack);

/* ---- intergroup (src/core/intergroup.c, ig_io.c) ---------------------------------------
 * The two groups of an inter call, as one interface whatever their origin: `xcomm` is an
 * intra-communicator spanning both groups (the merge of an inter-communicator, or the
 * private duplicate of a colour-split communicator) with local_x[] / remote_x[] mapping
 * group ranks to xcomm ranks; `local` is the caller's own group. */
enum { AGX_IG_BRUCK, AGX_IG_RING, AGX_IG_GATHER, AGX_IG_BCAST, AGX_IG_NSCHED,
       AGX_IG_ALLGATHER = -1 /* agx_ig_local_run: Bruck or the ring by size */ };
struct agx_intergroup {
    MPI_Comm xcomm, local;
    MPI_Comm inter;          /* an inter-communicator for `native` (agx's duplicate of the
                              * user's, or created lazily for a split) */
    int owns_xcomm, owns_inter;
    int lrank, lsize, rsize, xrank, xsize;
    int *local_x;            /* local rank -> xcomm rank */
    int *remote_x;           /* remote rank -> xcomm rank */
    int *colors;             /* colour split: every rank's colour (0 / 1); NULL otherwise */
    int *node_of;            /* xcomm rank -> node id; NULL unless counters are on */
    int *lnode_of;           /* local rank -> node id, likewise */
    int color;               /* colour split: 0 or 1; inter-communicator: -1 */
    long long *rec;          /* the last agreement's records, per xcomm rank */
    agx_sched lsched[AGX_IG_NSCHED]; /* local Bruck, ring, gather to 0, bcast from 0 */
};
void agx_ig_free(agx_intergroup *ig);
/* Lay out and check one process's side of the call after the groups are known (a->ig,
 * a->rank, a->p set); its error is agreed. */
typedef int (*agx_ig_prepare_fn)(agx_args *a, const char *fn);
/* The agreement that opens every inter call: (re)build the groups when any colour changed,
 * run `prepare`, exchange the records, and return the same verdict on every process
 * (local_rc: this process's earlier check). Collective over both groups. */
int agx_ig_call(agx_args *a, int color, int local_rc, agx_ig_prepare_fn prepare, const char *fn);
/* Bytes process x (xcomm rank) sends in the current call, from the agreement. */
long long agx_ig_send_bytes(const agx_intergroup *ig, int x);
/* Blocks of at most AGX_IG_EAGER bytes travel inside the agreement's records. */
#define AGX_IG_EAGER 32
/* 1 when every block of the current call fit its record (the same on every process). */
int agx_ig_eager_fits(const agx_intergroup *ig);
/* Copy the remote blocks from the records into the byte view's `full`. */
void agx_ig_eager_copy(const agx_args *a);
/* An inter-communicator over the two groups (for the library's own collective). */
int agx_ig_inter_comm(agx_intergroup *ig, MPI_Comm *out);
/* Build the local schedules of ig (lsched). */
int agx_ig_local_scheds(agx_intergroup *ig);
/* Run local schedule `which` (AGX_IG_*) over the byte layout cnt / dsp of lsize blocks. */
int agx_ig_local_run(const agx_args *a, int which, char *base, const MPI_Aint *cnt, const MPI_Aint *dsp);
/* The byte view of an intergroup call, shared by its algorithms, set up before the
 * agreement (so its allocations and packing are agreed on):
 *  - bytes/k: my contribution as contiguous packed bytes (sendbuf itself for a predefined
 *    type, else packed into stmp);
 *  - rpre[0..p]: byte prefix sums of the remote blocks;
 *  - full: where the remote message lands in packed rank order, the receive buffer itself
 *    when its layout is exactly that (direct), else a temporary unpacked at the end;
 *  - bnd, pieces, lay: scratch for partitions (lsize + rsize + 2), plans and layouts. */
struct agx_ig_io {
    const char *bytes;
    long long k;
    char *stmp, *full;
    int direct, began;
    long long *rpre, *bnd;
    agx_piece *pieces;
    MPI_Aint *lay;
};
int agx_ig_io_begin(const agx_args *a, agx_ig_io *io);
/* Unpack (when rc is MPI_SUCCESS and not direct), free, and return rc or the unpack error;
 * nothing when io was not begun. */
int agx_ig_io_end(const agx_args *a, agx_ig_io *io, int rc);
/* KangTraff19's exchange: send my bytes [R, R+k) of my group's index space under
 * partition sbnd (rsize segments), receive my segment of the remote space (partition rbnd
 * over lsize segments) into full + rbnd[lrank], posting receives in Section 4.1's order,
 * then allgather the segments over the local group into full. */
int agx_ig_exchange(const agx_args *a, long long R, const long long *sbnd, const long long *rbnd);
/* One byte message each way between this process and xcomm rank peer, as a schedule. */
int agx_ig_swap(const agx_args *a, int peer, const void *sbuf, long long sn, void *rbuf,
                long long rn);

/* ---- the entry points' shared checks (src/core/api.c) ------------------------------------ */
/* An intra allgather(v) call up to its choice: context, local checks, receive layout. */
int agx_ag_prepare_intra(agx_args *a, const char *fn);
/* MPI_ERR_BUFFER for a NULL buffer that would be read or written. */
int agx_check_buffer(const void *buf, long long count, MPI_Datatype t, const char *what);
/* The opening of every entry point: the communicator checked, its context set up (the
 * private duplicate), a->ctx, comm, rank, p set. */
int agx_call_begin(agx_args *a, const char *fn);
/* Select the algorithm (a->alg) and remember it as the communicator's last. */
int agx_choose(agx_args *a);
/* One allreduce (MAX) of any failing rank's (class << 32 | rank) and n <= AGX_AGREE_MAX
 * values (vals: in and out, element-wise maxima; negate a value to agree on a minimum).
 * Returns mine when this rank failed, a new code of the failing rank's class naming it
 * ("fn: rank r why") when another did, else MPI_SUCCESS: the same verdict everywhere. */
#define AGX_AGREE_MAX 8
int agx_agree(MPI_Comm comm, int rank, int mine, long long *vals, int n, const char *fn, const char *why);

/* ---- alltoallv (src/coll/alltoallv/alltoallv_run.c) ---------------------------------------
 * Run `kernel` over the call's layouts, throttle receives per round (0: none), sends with
 * send_flags (AGX_SOP_SYNC: Issend). */
int agx_a2a_run(const agx_args *a, agx_a2a_kernel kernel, int throttle, unsigned send_flags);
/* AGX_ALLTOALLV_THROTTLE and AGX_ALLTOALLV_SYNC into g (an error code when malformed). */
int agx_a2a_env(agx_a2a_args *g);
/* An exchange of bytes whose sizes both ends derived from the same data (two-phase I/O):
 * no agreement; algorithm `alg` (index in the intra alltoallv table) over `pt`, which
 * every rank must hold alike. base: ctx, comm, rank, p of the call. snz / rnz: p bytes of
 * scratch. */
int agx_a2a_exchange(const agx_args *base, int alg, const agx_a2a_pattern *pt, int throttle, unsigned flags,
                     const void *sbuf, const int *sc, const int *sd, void *rbuf, const int *rc, const int *rd,
                     unsigned char *snz, unsigned char *rnz);

/* ---- selection ------------------------------------------------------------------------- */
/* Choose the algorithm for this call (table index), or an error code (not raised). */
int agx_select(agx_args *a, int *index);
/* The table's default rule alone (no forced choice): a table index. */
int agx_select_rule(const agx_args *a);

/* ---- errors: internal functions return codes; only the public entry points raise ----- */
/* An error code of MPI class `cls` carrying a message (MPI_Error_string and
 * agx_error_string give it back); not raised. */
int agx_error(int cls, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Raise `code` through comm's error handler (MPI_COMM_WORLD's for MPI_COMM_NULL) and
 * return it: called once per failing public call, by the public entry point. */
int agx_raise(MPI_Comm comm, int code);
/* The same through fh's error handler (comm's when fh is MPI_FILE_NULL). */
int agx_raise_file(MPI_File fh, MPI_Comm comm, int code);

/* ---- counters -------------------------------------------------------------------------- */
/* One message of `sent` bytes to the other group (sent < 0: none) and `recvd` bytes
 * received from it, in an intergroup collective. */
void agx_stats_intergroup(long long sent, long long recvd);
/* The same with an explicit rank -> node map (NULL: not counted). */
void agx_stats_count_map(const int *node_of, int me, int peer, long long bytes);

/* The arrival trace (agx_stats_trace): on, and one receive completed at time t. */
int agx_stats_tracing(void);
void agx_stats_arrival(double t);

/* ---- strict environment parsing ---------------------------------------------------------- */
/* The integer value of variable `name` in [min, max]: 0 and *v set, 1 when unset (or empty),
 * -1 when malformed. */
int agx_env_int(const char *name, long long min, long long max, long long *v);

#define AGX_TAG 0x6167 /* on agx's private communicator only */

#endif
