/* Internal interfaces shared by src/core and src/coll. Nothing here is public. */
#ifndef AGX_INTERNAL_H
#define AGX_INTERNAL_H

#include "agx.h"
#include "intergroup.h"
#include "locality.h"
#include "patterns.h"

#include <mpi.h>

/* ---- block layout ---------------------------------------------------------------------
 * The receive buffer of allgather and allgatherv seen the same way: block i is
 * count(i) elements of `type` at buf + displ(i) * extent. counts == NULL means the
 * regular layout of allgather (count ucount, displ i * ucount). Every intra algorithm
 * is written once against this layout and so serves both operations. */
typedef struct {
    char *buf;
    MPI_Datatype type;
    MPI_Aint extent;
    int type_size;
    int p;
    int ucount;
    const int *counts;
    const int *displs;
} agx_blocks;

static inline int agx_blk_count(const agx_blocks *b, int i)
{
    return b->counts ? b->counts[i] : b->ucount;
}
static inline MPI_Aint agx_blk_displ(const agx_blocks *b, int i)
{
    return b->counts ? (MPI_Aint)b->displs[i] : (MPI_Aint)i * b->ucount;
}

typedef struct agx_ctx agx_ctx;
typedef struct agx_intergroup agx_intergroup;

/* Everything an algorithm needs for one call. */
typedef struct {
    agx_op op;
    agx_kind kind;        /* which table serves the call: intra, or inter (an
                           * inter-communicator or a colour split) */
    agx_ctx *ctx;
    const agx_intergroup *ig; /* the two groups, for inter algorithms */
    MPI_Comm comm;        /* agx's private duplicate of the user's communicator */
    MPI_Comm user_comm;   /* the user's communicator (native algorithms use it) */
    int rank, p;          /* p: size of the group whose blocks are gathered (the remote
                           * group for inter calls), rank: in the caller's own group */
    int inter;            /* an inter call: inter-communicator or colour split */
    agx_blocks blk;       /* receive layout */
    /* the call's own arguments, as the user gave them */
    const void *sendbuf;  /* may be MPI_IN_PLACE */
    int sendcount;
    MPI_Datatype sendtype;
    void *recvbuf;
    int recvcount;
    const int *recvcounts;
    const int *displs;
    MPI_Datatype recvtype;
    long long total_bytes; /* bytes of the gathered result */
} agx_args;

typedef int (*agx_coll_fn)(const agx_args *a);

/* ---- registry ------------------------------------------------------------------------- */
/* Restrictions an algorithm declares; the selector checks them before running it. */
enum {
    AGX_R_EVEN_P = 1u << 0, /* needs an even number of processes */
    AGX_R_POW2 = 1u << 1,   /* needs a power-of-two number of processes */
    AGX_R_PAT = 1u << 2,    /* needs the PAT monitor on this communicator (src/core/pat.c) */
};

typedef struct {
    int id;
    const char *name;
    const char *desc;
    unsigned restrictions;
    const char *fallback;       /* used when restrictions fail; NULL: the default rule */
    agx_coll_fn fn[AGX_OP_LAST]; /* NULL: the algorithm does not serve that op */
} agx_alg;

/* The table of a communicator kind (src/coll/coll_table.c). */
const agx_alg *agx_table(agx_kind kind, int *n);
/* Index of `name` among the algorithms of (op, kind), or -1. */
int agx_alg_find(agx_op op, agx_kind kind, const char *name);
const agx_alg *agx_alg_get(agx_kind kind, int index);
/* Comma-separated names valid for (op, kind), into buf. */
void agx_alg_names(agx_op op, agx_kind kind, char *buf, int len);
/* NULL when `alg` may run on this call, else why not. */
const char *agx_alg_violation(const agx_alg *alg, const agx_args *a);

/* ---- per-communicator context (MPI attribute caching) ---------------------------------- */
enum { AGX_FALLBACK_WARN = 0, AGX_FALLBACK_SILENT, AGX_FALLBACK_ERROR };

struct agx_ctx {
    MPI_Comm user;
    MPI_Comm pcomm;            /* private duplicate, MPI_COMM_NULL until first collective */
    agx_kind kind;             /* of the communicator itself */
    int rank, p;
    /* Choices per (table, op): an intra-communicator also serves the colour-split
     * intergroup calls from the inter table. Table index, -1: none. */
    int forced[AGX_KIND_LAST][AGX_OP_LAST];
    int env_forced[AGX_KIND_LAST][AGX_OP_LAST];
    char *env_bad[AGX_OP_LAST]; /* unknown name from the environment, reported at first call */
    int last[AGX_OP_LAST];     /* index of the algorithm that ran last, -1: none */
    agx_kind last_kind[AGX_OP_LAST];
    int warned[AGX_KIND_LAST][AGX_OP_LAST];
    int fallback_policy;
    int leaders;               /* multileader: leaders per region (AGX_LEADERS, default 2) */
    agx_regions *reg;          /* regions (AGX_REGION_SIZE / AGX_REGIONS or shared-memory
                                * nodes), NULL until an algorithm or the counters need them */
    struct agx_locplan *locplans; /* cached plans of the locality-aware algorithms */
    agx_intergroup *ig;        /* the two groups (inter-communicator or colour split) */
    struct agx_ctx *prev, *next;
};

/* The context of comm, created (locally, no communication) on first use. */
int agx_ctx_get(MPI_Comm comm, agx_ctx **out);
/* Collective set-up done at the first collective call: private communicator, and the
 * node map when counters are on. Every rank of comm calls it at the same call. */
int agx_ctx_setup(agx_ctx *ctx);

/* node_of[r] = smallest rank of r's shared-memory node, for every rank of comm. */
int agx_node_map(MPI_Comm comm, int **node_of);
/* The regions of ctx (collective on first use, then cached). */
int agx_ctx_regions(agx_ctx *ctx, const agx_regions **out);
void agx_ctx_free_locality(agx_ctx *ctx);
/* Run a locality-aware algorithm: its virtual order and plan (built once per communicator
 * and cached), over the receive layout permuted to that order. */
int agx_run_locality(const agx_args *a, agx_order_fn order, agx_locplan_fn plan, int nl);

/* ---- intergroup (src/core/intergroup.c) -------------------------------------------------
 * The two groups of an inter call, as one interface whatever their origin: `xcomm` is an
 * intra-communicator spanning both groups (the merge of an inter-communicator, or the
 * private duplicate of a colour-split communicator) with remote_x[] mapping remote-group
 * ranks to xcomm ranks; `local` is the caller's own group. */
struct agx_intergroup {
    MPI_Comm xcomm, local;
    MPI_Comm inter;          /* an inter-communicator for `native` (user's or created lazily) */
    int owns_xcomm, owns_inter;
    int lrank, lsize, rsize, xrank;
    int *remote_x;           /* remote rank -> xcomm rank */
    int *node_of;            /* xcomm rank -> node id; NULL until counters need it */
    int color;               /* colour split: 0 or 1; inter-communicator: -1 */
};
/* The intergroup of ctx for this call (built collectively on first use, cached). color
 * < 0: ctx is an inter-communicator. */
int agx_ig_get(agx_ctx *ctx, int color, agx_intergroup **out);
void agx_ig_free(agx_intergroup *ig);
/* An inter-communicator over the two groups (for the library's own collective). */
int agx_ig_inter_comm(agx_intergroup *ig, MPI_Comm *out);
/* The byte view of an intergroup call, shared by its algorithms:
 *  - bytes/k: my contribution as contiguous packed bytes (sendbuf itself for a predefined
 *    type, else packed into stmp);
 *  - rpre[0..p]: byte prefix sums of the remote blocks;
 *  - full: where the remote message lands in packed rank order, the receive buffer itself
 *    when its layout is exactly that (direct), else a temporary unpacked at the end. */
typedef struct {
    const char *bytes;
    long long k;
    char *stmp, *full;
    int direct;
    long long *rpre;
} agx_ig_io;
int agx_ig_io_begin(const agx_args *a, agx_ig_io *io);
/* Unpack (when rc is MPI_SUCCESS and not direct), free, and return rc or the unpack error. */
int agx_ig_io_end(const agx_args *a, agx_ig_io *io, int rc);
/* Seed 000's exchange: send my bytes [R, R+k) of my group's index space under partition
 * sbnd (rsize segments), receive my segment of the remote space (partition rbnd over
 * lsize segments, remote prefix sums rpre) into full + rbnd[lrank], posting receives in
 * Section 4.1's order, then allgatherv the segments over the local group into full. */
int agx_ig_exchange(const agx_args *a, const char *bytes, long long R, long long k,
                    const long long *sbnd, const long long *rbnd, const long long *rpre,
                    char *full);

/* ---- selection ------------------------------------------------------------------------- */
/* Choose the algorithm for this call (table index), or an error code after raising. */
int agx_select(agx_args *a, int *index);

/* ---- errors ---------------------------------------------------------------------------- */
/* Raise an error of MPI class `cls` with a message through comm's error handler
 * (MPI_COMM_WORLD's for MPI_COMM_NULL); returns the code to give back to the caller. */
int agx_raise(MPI_Comm comm, int cls, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Pass an error code from an MPI call through comm's error handler. */
int agx_raise_code(MPI_Comm comm, int code);

/* ---- counters -------------------------------------------------------------------------- */
void agx_stats_count(const agx_ctx *ctx, int peer, long long bytes);
/* One message of `sent` bytes to the other group (sent < 0: none) and `recvd` bytes
 * received from it, in an intergroup collective. */
void agx_stats_intergroup(long long sent, long long recvd);
/* The same with an explicit rank -> node map (NULL: not counted). */
void agx_stats_count_map(const int *node_of, int me, int peer, long long bytes);

/* ---- schedule engine ------------------------------------------------------------------- */
/* Copy the own contribution from sendbuf into its block (no-op for MPI_IN_PLACE). */
int agx_copy_own_block(const agx_args *a);
/* MPI_Waitall with statuses (portable across MPI headers). */
int agx_waitall(int n, MPI_Request *req);
/* Error path: cancel and free n posted requests. */
void agx_cancel_all(int n, MPI_Request *req);
/* Run a plan (src/patterns/locality.h) over layout blk: each step's sends and receives
 * are posted together, then waited for. */
int agx_run_plan(const agx_args *a, const agx_blocks *blk, const agx_plan *pl);
/* Run a schedule from src/patterns over the receive layout. */
int agx_run_schedule(const agx_args *a, agx_nsteps_fn nsteps, agx_step_fn step);
/* Send / receive a block set (counted). */
int agx_send_set(const agx_args *a, const agx_blockset *s, int peer);
int agx_recv_set(const agx_args *a, const agx_blockset *s, int peer);
int agx_irecv_set(const agx_args *a, const agx_blockset *s, int peer, MPI_Request *req,
                  MPI_Datatype *owned);

/* Local copy between typed buffers of equal signature (MPIR_Localcopy's role). */
int agx_localcopy(const void *src, int scount, MPI_Datatype stype, void *dst, int dcount,
                  MPI_Datatype dtype);

#define AGX_TAG 0x6167 /* on agx's private communicator only */

#endif
