/*
 * Contexts kept from a freed communicator for the next congruent one (the same ranks in
 * the same order). A program that makes a communicator per step (MPI_Comm_dup or _split
 * at every step, as PnetCDF does per file and many codes per phase) made agx pay, at every
 * new communicator, an MPI_Comm_dup for the private communicator, the node map and shared
 * segments again, and (AGX_ADAPT) a learning window per class of calls: 4 ranks of this VM,
 * 20 allreduces of 8 B per communicator, ran 3-5x the library's time. Kept, the next
 * communicator takes the private communicator with everything set up on it, the choice
 * state's learned classes (the select layer takes them from ctx->carried) and alltoallv's
 * state (its last pattern, and its settling on the library's call, whose re-checks go on
 * growing apart; the new communicator's first call is an agreed one, the choice state's
 * generation having moved): no MPI_Comm_dup, no window again.
 *
 * Which kept context a communicator takes is agreed at its first collective call, in one
 * MPI_Allreduce on the communicator in place of the MPI_Comm_dup: each rank offers the
 * kept context congruent with it of the largest id that no other communicator is taking
 * (claimed at once, so that a second thread cannot offer it too), and it is taken only
 * where every rank offered the same; else every rank duplicates anew. Only a context set
 * up under the same AGX_ environment is offered (a test may change AGX_REGION_SIZE between
 * communicators: agx_env_print). A context's id is
 * agreed in that reduction when it is made (src/patterns/kept.h: the largest of the ranks'
 * reservations with its rank 0's), so one id names one private communicator on every rank
 * of it. Its state is the same on every rank when kept: every rank made the same calls on
 * it, each complete when its communicator was freed. Requests still running on the private
 * communicator keep running there (their plans own what they use; their tags are the
 * context's, and the next communicator's requests take the next ones). Up to KEPT per
 * process, the least recently kept made room for the newest; freed at MPI_Finalize.
 * AGX_KEEP_COMMS=0 keeps none and agrees nothing (an MPI_Comm_dup at every communicator's
 * first call, as before). A private communicator that requests may still use when its
 * context is freed is parked until MPI_Finalize (agx_ctx_park).
 */
#include "core.h"
#include "kept.h"

#include <pthread.h>
#include <stdlib.h>

#define KEPT 4

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
    agx_ctx *ctx;
    int busy;               /* offered by a communicator's set-up now */
    unsigned long long use; /* when it was kept: the oldest makes room */
} kept[KEPT];
static int nkept, registered, nparked;
static MPI_Comm *parked;
static long long next_id;
static unsigned long long clock_;

static int keep_on(void)
{
    static int on = -1;
    if (on < 0) {
        const char *v = getenv("AGX_KEEP_COMMS");
        on = !v || !*v || atoi(v) != 0;
    }
    return on;
}

static void free_kept(void)
{
    pthread_mutex_lock(&mu);
    int n = nkept, np = nparked;
    agx_ctx *c[KEPT];
    MPI_Comm *pk = parked;
    for (int i = 0; i < n; i++)
        c[i] = kept[i].ctx;
    nkept = 0, next_id = 0, registered = 0, nparked = 0, parked = NULL;
    pthread_mutex_unlock(&mu);
    for (int i = 0; i < n; i++)
        agx_ctx_destroy(c[i]);
    for (int i = 0; i < np; i++)
        MPI_Comm_free(&pk[i]);
    free(pk);
}

static void at_finalize(void) /* under mu */
{
    if (!registered)
        registered = 1, agx_at_finalize(free_kept);
}

void agx_ctx_park(MPI_Comm c)
{
    pthread_mutex_lock(&mu);
    MPI_Comm *pk = realloc(parked, sizeof *pk * (size_t)(nparked + 1));
    if (pk)
        parked = pk, parked[nparked++] = c, at_finalize();
    pthread_mutex_unlock(&mu);
    if (!pk) /* no memory to keep it: freed now, as before */
        MPI_Comm_free(&c);
}

int agx_ctx_keep(agx_ctx *ctx)
{
    if (ctx->kind != AGX_KIND_INTRA || ctx->pcomm_borrowed || ctx->pcomm == MPI_COMM_NULL || ctx->kept_id < 0 ||
        ctx->carried.p || !keep_on()) /* carried: a taken state its set-up never took in (an error) */
        return 0;
    for (int i = AGX_SLOT_LAST - 1; i > AGX_SLOT_SELECT; i--) { /* the choice state and alltoallv's go on */
        if (i == AGX_SLOT_A2A)
            continue;
        if (ctx->slot[i].p && ctx->slot[i].release)
            ctx->slot[i].release(ctx->slot[i].p);
        ctx->slot[i].p = NULL, ctx->slot[i].release = NULL;
    }
    ctx->user = MPI_COMM_NULL;
    agx_ctx *out = NULL;
    pthread_mutex_lock(&mu);
    int at = nkept < KEPT ? nkept : -1;
    for (int i = 0; nkept == KEPT && i < nkept; i++) /* full: the oldest not being offered makes room */
        if (!kept[i].busy && (at < 0 || kept[i].use < kept[at].use))
            at = i;
    if (at >= 0) {
        out = at < nkept ? kept[at].ctx : NULL;
        kept[at].ctx = ctx, kept[at].busy = 0, kept[at].use = ++clock_;
        nkept += at == nkept;
        at_finalize();
    }
    pthread_mutex_unlock(&mu);
    if (out)
        agx_ctx_destroy(out);
    return at >= 0;
}

/* The kept context this rank offers ctx (claimed), NULL: none; v: what the reduction agrees. */
static agx_ctx *offer(agx_ctx *ctx, long long v[4])
{
    int slot = -1;
    ctx->env_print = agx_env_print();
    const char *skip = getenv("AGX_TEST_KEPT_SKIP"); /* tests only: this world rank offers none */
    int me = -1;
    if (skip)
        PMPI_Comm_rank(MPI_COMM_WORLD, &me);
    pthread_mutex_lock(&mu);
    for (int i = 0; i < nkept && (!skip || me != atoi(skip)); i++) {
        int same = MPI_UNEQUAL;
        if (!kept[i].busy && kept[i].ctx->env_print == ctx->env_print &&
            (slot < 0 || kept[i].ctx->kept_id > kept[slot].ctx->kept_id) &&
            PMPI_Comm_compare(ctx->user, kept[i].ctx->pcomm, &same) == MPI_SUCCESS && same == MPI_CONGRUENT)
            slot = i;
    }
    agx_ctx *k = slot >= 0 ? kept[slot].ctx : NULL;
    if (k)
        kept[slot].busy = 1;
    long long mine = next_id++ & AGX_KEPT_RES_MASK; /* this set-up's reservation (kept.h) */
    v[0] = k ? k->kept_id : -1, v[1] = k ? -k->kept_id : 1, v[2] = mine, v[3] = ctx->rank ? -1 : mine;
    pthread_mutex_unlock(&mu);
    return k;
}

/* Claimed k leaves the kept ones (taken), or is offered again (not taken). Found by
 * pointer: another thread's taking moves the entries. */
static void settle(agx_ctx *k, int taken)
{
    pthread_mutex_lock(&mu);
    for (int i = 0; i < nkept; i++)
        if (kept[i].ctx == k) {
            if (taken)
                kept[i] = kept[--nkept];
            else
                kept[i].busy = 0;
            break;
        }
    pthread_mutex_unlock(&mu);
}

/* ctx takes the kept context k: its private communicator and all set up on it. */
static void adopt(agx_ctx *ctx, agx_ctx *k)
{
    settle(k, 1);
    ctx->pcomm = k->pcomm, ctx->pcomm_borrowed = 0;
    ctx->reg = k->reg, ctx->reg_nodes = k->reg_nodes, ctx->cache = k->cache;
    for (int i = 0; i < 2; i++)
        ctx->shm[i] = k->shm[i], ctx->scratch[i] = k->scratch[i], ctx->scratch_size[i] = k->scratch_size[i];
    ctx->req_seq = k->req_seq, ctx->kept_id = k->kept_id, ctx->orphans = k->orphans;
    ctx->carried = k->slot[AGX_SLOT_SELECT];
    ctx->slot[AGX_SLOT_A2A] = k->slot[AGX_SLOT_A2A]; /* agreed state; its first call is agreed */
    free(k);
}

int agx_ctx_share(agx_ctx *ctx, int *fresh)
{
    long long v[4] = {-1, 1, 0, -1};
    agx_ctx *k = keep_on() ? offer(ctx, v) : NULL; /* the environment is the same on every rank */
    int rc = keep_on() ? PMPI_Allreduce(MPI_IN_PLACE, v, 4, MPI_LONG_LONG, MPI_MAX, ctx->user) : MPI_SUCCESS;
    if (rc == MPI_SUCCESS && k && agx_kept_same(v[0], v[1])) { /* every rank offered this one */
        adopt(ctx, k);
        *fresh = 2;
        return MPI_SUCCESS;
    }
    if (k) /* not taken: free for the next communicator */
        settle(k, 0);
    if (rc != MPI_SUCCESS || (rc = MPI_Comm_dup(ctx->user, &ctx->pcomm)) != MPI_SUCCESS)
        return rc;
    MPI_Comm_set_errhandler(ctx->pcomm, MPI_ERRORS_RETURN);
    ctx->kept_id = keep_on() ? agx_kept_id(v[2], v[3]) : -1;
    *fresh = 1;
    return MPI_SUCCESS;
}
