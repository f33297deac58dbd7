/*
 * Per-communicator context, cached on the user's communicator with MPI attribute
 * caching: created on first use, freed by the attribute's delete callback when the
 * communicator is freed. Contexts still alive at MPI_Finalize are freed by a delete
 * callback on MPI_COMM_SELF, which MPI_Finalize runs first.
 */
#include "core.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

static int comm_keyval = MPI_KEYVAL_INVALID;
static atomic_int keyvals_ready; /* set once the keyvals exist: no lock on the hot path */
static int self_keyval = MPI_KEYVAL_INVALID;
static agx_ctx *live;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* The last (communicator, context) pair each thread looked up, and the generation that
 * empties them (core.h, agx_ctx_get). */
atomic_uint agx_ctx_gen;
AGX_HOT_STORAGE agx_ctx_hot agx_hot;

/* Set when MPI_Finalize runs the MPI_COMM_SELF hook: every context is freed there, so a
 * later delete callback (an MPI may also delete MPI_COMM_WORLD's attributes) has nothing
 * left to free. */
static int finalizing;

static void ctx_free(agx_ctx *ctx)
{
    atomic_fetch_add_explicit(&agx_ctx_gen, 1, memory_order_acq_rel);
    pthread_mutex_lock(&lock);
    if (ctx->prev)
        ctx->prev->next = ctx->next;
    else
        live = ctx->next;
    if (ctx->next)
        ctx->next->prev = ctx->prev;
    ctx->prev = ctx->next = NULL;
    pthread_mutex_unlock(&lock);
    ctx->orphans += agx_req_orphan(ctx);
    if (!finalizing && agx_ctx_keep(ctx))
        return; /* for the next congruent communicator (ctx_kept.c) */
    agx_ctx_destroy(ctx);
}

void agx_ctx_destroy(agx_ctx *ctx)
{
    if (ctx->carried.p && ctx->carried.release)
        ctx->carried.release(ctx->carried.p);
    for (int i = AGX_SLOT_LAST - 1; i >= 0; i--) /* the layers' state, the highest first */
        if (ctx->slot[i].p && ctx->slot[i].release)
            ctx->slot[i].release(ctx->slot[i].p);
    agx_shm_free(ctx->shm[0]), agx_shm_free(ctx->shm[1]); /* their windows first */
    if (ctx->pcomm != MPI_COMM_NULL && !ctx->pcomm_borrowed && ctx->orphans && !finalizing)
        agx_ctx_park(ctx->pcomm); /* its requests may still run on it */
    else if (ctx->pcomm != MPI_COMM_NULL && !ctx->pcomm_borrowed)
        MPI_Comm_free(&ctx->pcomm);
    agx_cache_free(ctx);
    if (ctx->reg) {
        agx_regions_free(ctx->reg);
        free(ctx->reg);
    }
    free(ctx->scratch[0]), free(ctx->scratch[1]);
    free(ctx);
}

void agx_ctx_attach(agx_ctx *ctx, int slot, void *p, void (*free_fn)(void *p))
{
    if (ctx->slot[slot].p && ctx->slot[slot].release && ctx->slot[slot].p != p)
        ctx->slot[slot].release(ctx->slot[slot].p);
    ctx->slot[slot].p = p;
    ctx->slot[slot].release = free_fn;
}

int agx_ctx_scratch(agx_ctx *ctx, MPI_Comm comm, size_t data, size_t meta, void **dp, void **mp, const char *fn)
{
    size_t want[2] = {data, meta};
    if (data > ctx->scratch_size[0] || meta > ctx->scratch_size[1]) {
        int mine = MPI_SUCCESS;
        agx_req_flush(ctx); /* an agreement on pcomm follows: the requests' queued collectives first */
        for (int i = 0; i < 2; i++)
            if (want[i] > ctx->scratch_size[i]) {
                /* at least doubled: the algorithms of one size (an on-line window's
                 * candidates, each needing a little more) and growing sizes regrow it
                 * O(log) times, and a fresh buffer's pages fault again when touched */
                size_t w = want[i] < 2 * ctx->scratch_size[i] ? 2 * ctx->scratch_size[i] : want[i];
                free(ctx->scratch[i]);
                ctx->scratch_size[i] = 0;
                if (!(ctx->scratch[i] = malloc(w)) && !(ctx->scratch[i] = malloc(w = want[i])))
                    mine = agx_error(MPI_ERR_NO_MEM, "%s: no memory for %zu bytes of scratch", fn, want[i]);
                else
                    ctx->scratch_size[i] = w;
            }
        int rc = agx_agree(comm, ctx->rank, mine, NULL, 0, fn, "could not allocate scratch");
        if (rc != MPI_SUCCESS) { /* every rank drops both: the sizes stay equal everywhere */
            for (int i = 0; i < 2; i++) {
                free(ctx->scratch[i]);
                ctx->scratch[i] = NULL;
                ctx->scratch_size[i] = 0;
            }
            return rc;
        }
    }
    *dp = ctx->scratch[0];
    *mp = ctx->scratch[1];
    return MPI_SUCCESS;
}

/* At a call's end on every rank of it, `used` the data scratch it needed (alike
 * everywhere): over AGX_SCRATCH_KEEP bytes, scratch that this call did not need is freed
 * (sizes are alike everywhere, so every rank frees, and a later call that needs it grows
 * it anew, agreed): one allreduce of GBs had left twice the vector allocated for the
 * communicator's life; repeated large calls keep theirs. */
#define AGX_SCRATCH_KEEP ((size_t)256 << 20)
void agx_ctx_scratch_trim(agx_ctx *ctx, size_t used)
{
    if (ctx->scratch_size[0] > AGX_SCRATCH_KEEP && used <= AGX_SCRATCH_KEEP) { /* alike on every rank */
        free(ctx->scratch[0]);
        ctx->scratch[0] = NULL;
        ctx->scratch_size[0] = 0;
    }
}

/* What the layers above drop at MPI_Finalize (agx_at_finalize), run after the contexts. */
static void (*finals[16])(void);
static int nfinals;

void agx_at_finalize(void (*fn)(void))
{
    pthread_mutex_lock(&lock);
    int known = 0;
    for (int i = 0; i < nfinals; i++)
        known |= finals[i] == fn;
    if (!known && nfinals < (int)(sizeof finals / sizeof finals[0]))
        finals[nfinals++] = fn;
    pthread_mutex_unlock(&lock);
}

static int comm_delete(MPI_Comm comm, int keyval, void *val, void *extra)
{
    (void)comm;
    (void)keyval;
    (void)extra;
    if (!finalizing)
        ctx_free(val);
    return MPI_SUCCESS;
}

static int self_delete(MPI_Comm comm, int keyval, void *val, void *extra)
{
    (void)comm;
    (void)keyval;
    (void)val;
    (void)extra;
    /* Free the contexts directly rather than detaching them: detaching from a predefined
     * communicator inside MPI_Finalize fails on some MPIs (SimGrid SMPI aborts). */
    finalizing = 1;
    for (;;) {
        pthread_mutex_lock(&lock);
        agx_ctx *ctx = live;
        pthread_mutex_unlock(&lock);
        if (!ctx)
            break;
        ctx_free(ctx);
    }
    for (int i = 0; i < nfinals; i++)
        finals[i]();
    atomic_store(&keyvals_ready, 0);
    MPI_Comm_free_keyval(&comm_keyval);
    MPI_Comm_free_keyval(&self_keyval);
    comm_keyval = self_keyval = MPI_KEYVAL_INVALID;
    return MPI_SUCCESS;
}

static int keyvals_create(void)
{
    int rc = MPI_SUCCESS;
    if (atomic_load_explicit(&keyvals_ready, memory_order_acquire))
        return MPI_SUCCESS;
    pthread_mutex_lock(&lock);
    if (comm_keyval == MPI_KEYVAL_INVALID) {
        rc = MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, comm_delete, &comm_keyval, NULL);
        if (rc == MPI_SUCCESS)
            rc = MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, self_delete, &self_keyval, NULL);
        if (rc == MPI_SUCCESS)
            rc = MPI_Comm_set_attr(MPI_COMM_SELF, self_keyval, NULL);
        if (rc == MPI_SUCCESS)
            atomic_store_explicit(&keyvals_ready, 1, memory_order_release);
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

int agx_ctx_find(MPI_Comm comm, agx_ctx **out)
{
    int rc, found = 0, inter = 0;
    void *val;
    unsigned gen = atomic_load_explicit(&agx_ctx_gen, memory_order_acquire);
    if (agx_hot.ctx && agx_hot.comm == comm && agx_hot.gen == gen) {
        *out = agx_hot.ctx;
        return MPI_SUCCESS;
    }
    if ((rc = keyvals_create()) != MPI_SUCCESS)
        return rc;
    if ((rc = MPI_Comm_get_attr(comm, comm_keyval, &val, &found)) != MPI_SUCCESS)
        return rc;
    if (found) {
        agx_hot.comm = comm, agx_hot.ctx = val, agx_hot.gen = gen;
        *out = val;
        return MPI_SUCCESS;
    }
    agx_ctx *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return MPI_ERR_NO_MEM;
    ctx->user = comm;
    ctx->pcomm = MPI_COMM_NULL;
    ctx->kept_id = -1;
    MPI_Comm_test_inter(comm, &inter);
    ctx->kind = inter ? AGX_KIND_INTER : AGX_KIND_INTRA;
    MPI_Comm_rank(comm, &ctx->rank);
    MPI_Comm_size(comm, &ctx->p);
    ctx->check_args = agx_env_flag("AGX_CHECK_ARGS");
    pthread_mutex_lock(&lock);
    ctx->next = live;
    if (live)
        live->prev = ctx;
    live = ctx;
    pthread_mutex_unlock(&lock);
    if ((rc = MPI_Comm_set_attr(comm, comm_keyval, ctx)) != MPI_SUCCESS) {
        ctx_free(ctx);
        return rc;
    }
    *out = ctx;
    return MPI_SUCCESS;
}

int agx_ctx_setup(agx_ctx *ctx, int *fresh)
{
    int rc = MPI_SUCCESS;
    *fresh = 0;
    if (ctx->pcomm == MPI_COMM_NULL && ctx->kind == AGX_KIND_INTRA) {
        if ((rc = agx_ctx_share(ctx, fresh)) != MPI_SUCCESS)
            return rc;
    } else if (ctx->pcomm == MPI_COMM_NULL) {
        if ((rc = MPI_Comm_dup(ctx->user, &ctx->pcomm)) != MPI_SUCCESS)
            return rc;
        MPI_Comm_set_errhandler(ctx->pcomm, MPI_ERRORS_RETURN);
        *fresh = 1;
    }
    if (agx_stats_enabled() && !ctx->reg && ctx->kind == AGX_KIND_INTRA) {
        const agx_regions *reg;
        rc = agx_ctx_regions(ctx, &reg);
    }
    return rc;
}

int agx_ctx_private(MPI_Comm comm)
{
    agx_ctx *ctx;
    int rc = agx_ctx_get(comm, &ctx);
    if (rc == MPI_SUCCESS && ctx->pcomm == MPI_COMM_NULL && ctx->kind == AGX_KIND_INTRA) {
        ctx->pcomm = comm, ctx->pcomm_borrowed = 1;
        MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    }
    return rc;
}
