/*
 * The core layer: agx's MPI runtime, which knows no operation: the per-communicator
 * context and its slots, the schedule engine, local copies and datatype helpers, errors,
 * counters, the schedule cache, node-shared segments, the regions and node map, the
 * agreement, and the environment read once. It calls only itself and src/patterns; every
 * layer above includes this header (docs/ARCHITECTURE.md).
 */
#ifndef AGX_CORE_H
#define AGX_CORE_H

#include "agx.h"
#include "patterns.h"
#include "locality.h"

#include <mpi.h>
#include <stdatomic.h>
#include <stddef.h>

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
typedef struct agx_req agx_req; /* agx.h's agx_request */
typedef struct agx_cached agx_cached;

/* ---- per-communicator context (MPI attribute caching) ----------------------------------
 * The layers above keep their own state in the context's slots: each attaches a pointer
 * with its free callback at first use (the idiom of MPI attributes), and the context
 * frees the slots, last first, before its own parts. */
enum { AGX_SLOT_SELECT, AGX_SLOT_PAT, AGX_SLOT_IG, AGX_SLOT_A2A, AGX_SLOT_API, AGX_SLOT_API_AR, AGX_SLOT_IO, AGX_SLOT_LAST };
typedef struct {
    void *p;
    void (*release)(void *p);
} agx_slot;

struct agx_ctx {
    MPI_Comm user;
    MPI_Comm pcomm;            /* private duplicate, MPI_COMM_NULL until first collective */
    int pcomm_borrowed;        /* pcomm is user itself, agx's own already (agx_ctx_private) */
    agx_kind kind;             /* of the communicator itself */
    int rank, p;
    agx_regions *reg;          /* regions (AGX_REGION_SIZE / AGX_REGIONS or shared-memory
                                * nodes), NULL until an algorithm or the counters need them */
    int reg_nodes;             /* reg came from MPI_COMM_TYPE_SHARED: each region shares memory */
    agx_cached *cache;         /* schedules cached per (algorithm, shape) */
    struct agx_shm *shm[2];    /* node-shared segments (src/core/shm.c), by AGX_SHM_*, NULL
                                * until used */
    void *scratch[2];          /* agx_ctx_scratch: data, and per-rank tables, kept between */
    size_t scratch_size[2];    /* calls (the same sizes on every rank) */
    unsigned req_seq;          /* requests made on it: each gets its own tag (agx_req_tag) */
    agx_req *lq_head, *lq_tail; /* requests whose agreement or library call is not yet
                                 * posted on pcomm, in call order (src/core/request_lib.c) */
    int check_args;            /* AGX_CHECK_ARGS: collective calls agree on their arguments
                                * first (read when the context is made) */
    agx_slot slot[AGX_SLOT_LAST];
    long long kept_id;         /* agreed when pcomm was made (ctx_kept.c); -1: not kept */
    unsigned long long env_print; /* agx_env_print() then */
    int orphans;               /* requests its communicator's MPI_Comm_free left pending on
                                * pcomm: pcomm is not freed before MPI_Finalize */
    agx_slot carried;          /* the select slot of the kept context this one took, until
                                * the select layer takes its learned state (call.c) */
    struct agx_ctx *prev, *next;
};
int agx_ctx_find(MPI_Comm comm, agx_ctx **out); /* agx_ctx_get's lookup, out of line */
/* The last (communicator, context) pair each thread looked up (context.c): no attribute
 * lookup per call, inline on a repeated call's path. Every context freed bumps
 * agx_ctx_gen, which empties every thread's entry: a freed handle reused by a new
 * communicator is never taken for the old one. Thread-local in the initial-exec model (a
 * load at a fixed offset from the thread pointer, where a shared library's default model
 * calls __tls_get_addr); under SimGrid, which runs many ranks on one thread and
 * privatises each rank's globals, not TLS, a global. */
typedef struct {
    MPI_Comm comm;
    agx_ctx *ctx;
    unsigned gen;
} agx_ctx_hot;
#ifdef AGX_SMPI
#define AGX_HOT_STORAGE
#else
#define AGX_HOT_STORAGE _Thread_local __attribute__((tls_model("initial-exec")))
#endif
extern AGX_HOT_STORAGE agx_ctx_hot agx_hot;
extern atomic_uint agx_ctx_gen;
/* The context of comm, created (locally, no communication) on first use. */
static inline int agx_ctx_get(MPI_Comm comm, agx_ctx **out)
{
    agx_ctx *c = agx_hot.ctx;
    if (c && agx_hot.comm == comm && agx_hot.gen == atomic_load_explicit(&agx_ctx_gen, memory_order_acquire)) {
        *out = c;
        return MPI_SUCCESS;
    }
    return agx_ctx_find(comm, out);
}
/* Collective set-up at the first collective call (the private communicator; the regions
 * when counters are on); *fresh = 1 when this call made the private communicator, 2 when
 * it took a kept one (ctx_kept.c; ctx->carried then holds the kept select slot). Every
 * rank of comm calls it at the same call. */
int agx_ctx_setup(agx_ctx *ctx, int *fresh);
/* ctx_kept.c: an intra-communicator's private communicator, a kept context's (agreed:
 * one MPI_Allreduce on ctx->user) or a new duplicate; and at MPI_Comm_free, ctx kept for
 * the next congruent communicator (1) or not (0: the caller destroys it). */
int agx_ctx_share(agx_ctx *ctx, int *fresh);
int agx_ctx_keep(agx_ctx *ctx);
/* A private communicator that requests may still use, freed at MPI_Finalize (Open MPI
 * 4.1's non-blocking collectives crash when their communicator is freed before they
 * complete: a plain MPI_Iallreduce, MPI_Comm_free, MPI_Wait does). */
void agx_ctx_park(MPI_Comm c);
/* Frees a context's parts and the context (unlinked from the live ones already). */
void agx_ctx_destroy(agx_ctx *ctx);
/* comm is agx's own (a duplicate that no program sees, as the MPI-IO drop-in keeps per
 * file): its context communicates on comm itself, no duplicate of its own (a collective
 * MPI_Comm_dup less at its first call: 0.4 ms on 16 ranks of this VM). Local; before
 * comm's first agx call. */
int agx_ctx_private(MPI_Comm comm);
/* A layer's slot: its pointer (NULL until attached), and attaching one (the previous one,
 * if any, is freed by its callback). */
static inline void *agx_ctx_slot(const agx_ctx *ctx, int slot) { return ctx->slot[slot].p; }
void agx_ctx_attach(agx_ctx *ctx, int slot, void *p, void (*free_fn)(void *p));
/* fn runs at MPI_Finalize, after every context is freed (once however often registered). */
void agx_at_finalize(void (*fn)(void));
/* Scratch kept in ctx for the next calls: `data` bytes (large vectors; SimGrid may fold
 * it) and `meta` bytes (this rank's tables), grown when a call needs more. Growing is
 * agreed over comm (one allreduce), so a rank that cannot allocate fails the call on every
 * rank; the sizes, hence the decision to grow, depend only on the call's arguments, which
 * are the same on every rank. Collective when it grows. Trimmed at a call's end: */
int agx_ctx_scratch(agx_ctx *ctx, MPI_Comm comm, size_t data, size_t meta, void **dp, void **mp, const char *fn);
void agx_ctx_scratch_trim(agx_ctx *ctx, size_t used); /* every rank: over 256 MiB, unused */
/* The token of an agx_allgatherv_shared result (agx_shared_handle.seg): the segment it
 * lies in, NULL once that segment was freed or overwrote it; agx_shared_release frees it. */
typedef struct agx_hold {
    struct agx_shm *m;
} agx_hold;
/* A node-shared segment (src/core/shm.c): node = the region's ranks (the private
 * communicator itself, not owned, where one region holds them all), lane = the ranks of
 * the same index in every region (ordered by region; MPI_COMM_NULL with one region), base
 * = the segment (the same memory for every rank of the region). */
typedef struct agx_shm {
    MPI_Comm node, lane;
    MPI_Win win;               /* the segment's MPI-3 shared window, or MPI_WIN_NULL (none yet,
                                * or a POSIX segment: mapped != 0) */
    size_t mapped;             /* a POSIX segment's mapped bytes (shm_open + mmap), or 0 */
    char *base;
    size_t size;
    int usable;                /* every region shares memory (agreed) */
    size_t held;               /* dissemination_shm: the bytes of the last call's result, which
                                * a slower rank of the region may still be copying out */
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
/* node_of[r] = smallest rank of r's shared-memory node, for every rank of comm (collective:
 * MPI_Comm_split_type until a map of the whole world taught each process its node, one
 * allgather after). */
int agx_node_map(MPI_Comm comm, int **node_of);
/* The regions of ctx (collective on first use, then cached). */
int agx_ctx_regions(agx_ctx *ctx, const agx_regions **out);
/* The cached virtual order and this rank's schedule of a locality-aware builder. */
int agx_locality_sched(agx_ctx *ctx, const agx_regions *R, agx_order_fn order, agx_locbuild_fn fn, int nl,
                       const agx_sched **out, const int **vorder);

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

/* The schedule of a flat builder for (rank, p), from the communicator's cache or new. */
int agx_flat_sched_of(agx_ctx *ctx, int rank, int p, agx_build_fn build, int param, const agx_sched **out);

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

/* MPI_ERR_BUFFER for a NULL buffer that would be read or written. */
int agx_check_buffer(const void *buf, long long count, MPI_Datatype t, const char *what);

/* ---- the agreement (src/core/agree.c) ---------------------------------------------------- */
/* One allreduce (MAX) of any failing rank's (class << 32 | rank) and n <= AGX_AGREE_MAX
 * values (vals: in and out, element-wise maxima; negate a value to agree on a minimum).
 * Returns mine when this rank failed, a new code of the failing rank's class naming it
 * ("fn: rank r why") when another did, else MPI_SUCCESS: the same verdict everywhere. */
#define AGX_AGREE_MAX 16
int agx_agree(MPI_Comm comm, int rank, int mine, long long *vals, int n, const char *fn, const char *why);
/* The same verdict and maxima, with k <= AGX_AGREE_MAX more values of every rank gathered
 * alongside (all[r * k + i]: rank r's extra[i]), in one allgather instead of the
 * allreduce and an allgather; p <= AGX_AGREE_GATHER_P (where an allgather of a few
 * values costs what the allreduce does). */
#define AGX_AGREE_GATHER_P 64
int agx_agree_gather(MPI_Comm comm, int rank, int p, int mine, long long *vals, int n, const long long *extra, int k,
                     long long *all, const char *fn, const char *why);

/* ---- errors: internal functions return codes; only the public entry points raise ----- */
/* An error code of MPI class `cls` carrying a message (MPI_Error_string and
 * agx_error_string give it back); not raised. */
int agx_error(int cls, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Raise `code` through comm's error handler (MPI_COMM_WORLD's for MPI_COMM_NULL) and
 * return it: called once per failing public call, by the public entry point (inline: a
 * success, every call's, costs a compare, not a call). */
int agx_raise_error(MPI_Comm comm, int code);
static inline int agx_raise(MPI_Comm comm, int code)
{
    return code == MPI_SUCCESS ? code : agx_raise_error(comm, code);
}
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

/* ---- the environment (src/core/env.c): read when a context or a layer's state is made, or
 * once per process; never on a call's path ---------------------------------------------------
 * The integer value of variable `name` in [min, max]: 0 and *v set, 1 when unset (or empty),
 * -1 when malformed. */
int agx_env_int(const char *name, long long min, long long max, long long *v);
/* agx_env_int's parsing of a value s (NULL: unset). */
int agx_env_parse_int(const char *s, long long min, long long max, long long *v);
/* The environment's AGX_ entries ("NAME=value", at most max), read in one pass, and
 * name's value among them (NULL: unset): a communicator's state reads its many
 * parameter variables from one pass, not a getenv each. */
int agx_env_list(const char **out, int max);
const char *agx_env_in(const char *const *list, int n, const char *name);
/* A fingerprint of every AGX_ variable and its value (but the tests' AGX_TEST_KEPT_SKIP):
 * a kept context (ctx_kept.c) serves only where the environment it was set up under is
 * the same. */
unsigned long long agx_env_print(void);
/* 1 when variable `name` is set, not empty and not "0". */
int agx_env_flag(const char *name);
/* Test hook between the steps of the node-shared protocols: a seeded random pause when
 * AGX_TEST_PAUSE=SEED:MAX_US:PERCENT is set (tests only), else nothing. */
void agx_test_pause(void);

#define AGX_TAG 0x6167 /* on agx's private communicator only */

/* ---- plans and requests: persistent and non-blocking collectives -----------------------
 * A plan (src/core/plan.c): schedule s over x's buffers made persistent requests, every
 * message built once; it copies what it reads (schedule, layouts, node map). Never
 * blocks unless asked: a start posts round 0 after the prologue (a local copy, e.g.
 * allgather's own block); agx_plan_step advances it by every round that completed, or
 * (block) waits for every round (*done at the end, then the start's code). */
typedef struct agx_plan agx_plan;
int agx_plan_make(const agx_exec *x, const agx_sched *s, agx_plan **out);
int agx_plan_prologue(agx_plan *p, const void *src, MPI_Aint scount, MPI_Datatype stype, void *dst,
                      MPI_Aint dcount, MPI_Datatype dtype);
void agx_plan_own(agx_plan *p, void *mem); /* scratch its buffers lie in: freed with it */
int agx_plan_start(agx_plan *p);
int agx_plan_step(agx_plan *p, int block, int *done);
void agx_plan_free(agx_plan *p);
/* A request (src/core/request.c; the public agx_request): a plan, or the MPI library's own
 * non-blocking call, which lib_start posts at each start (arg: freed with the request).
 * Progress: agx_req_test / wait, starts and the engine's waits advance every active
 * request (agx_req_progress); AGX_PROGRESS_THREAD=1 adds a thread. */
typedef int (*agx_lib_start_fn)(void *arg, MPI_Comm comm, MPI_Request *req);
int agx_req_new(agx_ctx *ctx, MPI_Comm user, const char *fn, int persistent, agx_req **out);
void agx_req_set_plan(agx_req *r, agx_plan *p);
void agx_req_set_lib(agx_req *r, agx_lib_start_fn start, void *arg);
int agx_req_start(agx_req *r);
/* A non-blocking request's agreement (docs/algorithms.md "Errors"): before agx_req_start,
 * an MPI_Iallreduce of "made it" over comm (the context's pcomm), queued with the
 * context's other collectives (request_lib.c) and posted in call order; round 0 or the
 * library's call is posted when every rank made its request, and the request completes
 * with the error where one did not. A rank that could not make its request calls
 * agx_req_gate_failed with its code instead: it posts the queue, joins the same
 * reduction, waits for it (advancing the active requests meanwhile) and returns rc. Every
 * rank of comm takes one part or the other at the same call. The library's call of a
 * request (agx_req_set_lib) is posted on the context's pcomm. */
int agx_req_gate(agx_req *r, MPI_Comm comm);
int agx_req_gate_failed(agx_ctx *ctx, MPI_Comm comm, int rc);
int agx_req_test(agx_req *r, int *flag);
int agx_req_wait(agx_req *r);
int agx_req_free(agx_req *r);         /* MPI_ERR_REQUEST while active */
int agx_req_persistent(const agx_req *r);
MPI_Comm agx_req_comm(const agx_req *r); /* where its errors go (MPI_COMM_SELF once freed) */
int agx_req_progress(void);             /* how many remain active */
int agx_req_any_active(void);
int agx_progress_thread_on(void);  /* starts it (AGX_PROGRESS_THREAD) if not asked yet */
/* A started non-blocking request handed to MPI: *out, a generalized request the progress
 * thread completes with it; freed (with r) when MPI reports it. Needs the thread. */
int agx_req_to_mpi(agx_req *r, MPI_Request *out);
/* MPI_Comm_free of ctx's communicator: its requests can no longer start; how many there
 * were (a context with requests is not kept: they use its private communicator). */
int agx_req_orphan(agx_ctx *ctx);
/* The tag of the next request on ctx: requests on one communicator never match each
 * other's messages, whatever order their rounds interleave in (every rank makes them in
 * the same order, as MPI requires of collective calls). 2^30 tags from 65536 where
 * MPI_TAG_UB allows (Open MPI, MPICH, SMPI), else 8192 from 1024. */
int agx_req_tag(agx_ctx *ctx);
/* Every agreement and library call of ctx's requests that is still queued, posted (in call
 * order, waiting for their agreements as needed, advancing the active requests meanwhile):
 * called before any blocking collective on ctx->pcomm, so that every process posts that
 * communicator's collectives in one order (src/core/request_lib.c). Cheap when none is
 * queued. */
void agx_req_flush(agx_ctx *ctx);
static inline void agx_req_flush_queued(agx_ctx *ctx) /* the test inline: a repeated call's */
{
    if (__atomic_load_n(&ctx->lq_head, __ATOMIC_ACQUIRE)) /* requests queued (rare) */
        agx_req_flush(ctx);
}

#endif
