/*
 * Per-communicator context, cached on the user's communicator with MPI attribute
 * caching: created on first use, freed by the attribute's delete callback when the
 * communicator is freed. Contexts still alive at MPI_Finalize are freed by a delete
 * callback on MPI_COMM_SELF, which MPI_Finalize runs first.
 */
#include "agx_internal.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int comm_keyval = MPI_KEYVAL_INVALID;
static atomic_int keyvals_ready; /* set once the keyvals exist: no lock on the hot path */
static int self_keyval = MPI_KEYVAL_INVALID;
static agx_ctx *live;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* The last (communicator, context) pair each thread looked up, so a program that calls
 * on one communicator pays no attribute lookup per call. Every context freed bumps the
 * generation, which empties every thread's entry: a freed handle reused by a new
 * communicator is never taken for the old one. */
static atomic_uint ctx_gen;
#ifdef AGX_SMPI
/* SimGrid runs many ranks on one thread; it privatises each rank's globals, not TLS */
#define AGX_HOT_STORAGE static
#else
#define AGX_HOT_STORAGE static _Thread_local
#endif
AGX_HOT_STORAGE struct {
    MPI_Comm comm;
    agx_ctx *ctx;
    unsigned gen;
} hot;

static void ctx_free(agx_ctx *ctx)
{
    atomic_fetch_add_explicit(&ctx_gen, 1, memory_order_acq_rel);
    pthread_mutex_lock(&lock);
    if (ctx->prev)
        ctx->prev->next = ctx->next;
    else
        live = ctx->next;
    if (ctx->next)
        ctx->next->prev = ctx->prev;
    pthread_mutex_unlock(&lock);
    agx_shm_free(ctx->shm[0]), agx_shm_free(ctx->shm[1]); /* their windows first */
    if (ctx->pcomm != MPI_COMM_NULL)
        MPI_Comm_free(&ctx->pcomm);
    for (int op = 0; op < AGX_OP_LAST; op++) {
        free(ctx->env_bad[op]);
        agx_env_rules_free(ctx->env_rules[op], ctx->env_n[op]);
    }
    free(ctx->rules_bad);
    agx_pat_ctx_free(ctx);
    if (ctx->a2a)
        agx_a2a_pattern_free(ctx->a2a);
    free(ctx->a2a);
    agx_cache_free(ctx);
    agx_ctx_free_locality(ctx);
    agx_ig_free(ctx->ig);
    free(ctx->scratch[0]), free(ctx->scratch[1]);
    free(ctx);
}

int agx_ctx_scratch(agx_ctx *ctx, MPI_Comm comm, size_t data, size_t meta, void **dp, void **mp, const char *fn)
{
    size_t want[2] = {data, meta};
    if (data > ctx->scratch_size[0] || meta > ctx->scratch_size[1]) {
        int mine = MPI_SUCCESS;
        for (int i = 0; i < 2; i++)
            if (want[i] > ctx->scratch_size[i]) {
                free(ctx->scratch[i]);
                ctx->scratch_size[i] = 0;
                if (!(ctx->scratch[i] = malloc(want[i])))
                    mine = agx_error(MPI_ERR_NO_MEM, "%s: no memory for %zu bytes of scratch", fn, want[i]);
                else
                    ctx->scratch_size[i] = want[i];
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

/* Set when MPI_Finalize runs the MPI_COMM_SELF hook: every context is freed there, so a
 * later delete callback (an MPI may also delete MPI_COMM_WORLD's attributes) has nothing
 * left to free. */
static int finalizing;

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
    agx_rules_reset();
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

/* The AGX_FALLBACK policy; -1 for a value that is none of the three (reported by the
 * first collective call, as an unknown algorithm name is). */
static int fallback_from_env(void)
{
    const char *s = getenv("AGX_FALLBACK");
    if (!s || !*s || !strcasecmp(s, "warn"))
        return AGX_FALLBACK_WARN;
    if (!strcasecmp(s, "error"))
        return AGX_FALLBACK_ERROR;
    if (!strcasecmp(s, "silent"))
        return AGX_FALLBACK_SILENT;
    return -1;
}

int agx_ctx_get(MPI_Comm comm, agx_ctx **out)
{
    int rc, found = 0, inter = 0;
    void *val;
    unsigned gen = atomic_load_explicit(&ctx_gen, memory_order_acquire);
    if (hot.ctx && hot.comm == comm && hot.gen == gen) {
        *out = hot.ctx;
        return MPI_SUCCESS;
    }
    if ((rc = keyvals_create()) != MPI_SUCCESS)
        return rc;
    if ((rc = MPI_Comm_get_attr(comm, comm_keyval, &val, &found)) != MPI_SUCCESS)
        return rc;
    if (found) {
        hot.comm = comm, hot.ctx = val, hot.gen = gen;
        *out = val;
        return MPI_SUCCESS;
    }
    agx_ctx *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return MPI_ERR_NO_MEM;
    ctx->user = comm;
    ctx->pcomm = MPI_COMM_NULL;
    MPI_Comm_test_inter(comm, &inter);
    ctx->kind = inter ? AGX_KIND_INTER : AGX_KIND_INTRA;
    MPI_Comm_rank(comm, &ctx->rank);
    MPI_Comm_size(comm, &ctx->p);
    ctx->fallback_policy = fallback_from_env();
    { /* AGX_CHECK_ARGS: collective calls agree on their arguments first (api_allreduce.c) */
        const char *c = getenv("AGX_CHECK_ARGS");
        ctx->check_args = c && *c && strcmp(c, "0");
    }
    pthread_mutex_lock(&lock);
    ctx->next = live;
    if (live)
        live->prev = ctx;
    live = ctx;
    pthread_mutex_unlock(&lock);
    for (int op = 0; op < AGX_OP_LAST; op++) {
        ctx->last[op] = -1;
        for (int k = 0; k < AGX_KIND_LAST; k++)
            ctx->forced[k][op] = ctx->env_forced[k][op] = -1;
        const char *e = getenv(agx_op_get((agx_op)op)->env);
        if (!e || !*e || !strcasecmp(e, "auto"))
            continue;
        /* the environment speaks to every communicator: a name of the other kind's table
         * leaves this one to its default; only a name no table has is an error */
        agx_rule *r;
        int n;
        if ((rc = agx_env_rules(ctx, (agx_op)op, e, &r, &n, &ctx->env_bad[op])) != MPI_SUCCESS) {
            ctx_free(ctx);
            return rc;
        }
        if (n == 1 && r[0].bytes.lo == 0 && r[0].bytes.end == 0) { /* one name: forced */
            for (int k = 0; k < AGX_KIND_LAST; k++)
                ctx->env_forced[k][op] = r[0].kidx[k];
            agx_env_rules_free(r, n);
        } else {
            ctx->env_rules[op] = r;
            ctx->env_n[op] = n;
        }
    }
    if ((rc = MPI_Comm_set_attr(comm, comm_keyval, ctx)) != MPI_SUCCESS) {
        ctx_free(ctx);
        return rc;
    }
    *out = ctx;
    return MPI_SUCCESS;
}

int agx_node_map(MPI_Comm comm, int **node_of)
{
    MPI_Comm node;
    int rc, rank, p;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &p);
    int leader = rank, *map = malloc(sizeof(int) * (size_t)p);
    if (!map)
        return MPI_ERR_NO_MEM;
    rc = MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    if (rc == MPI_SUCCESS) {
        rc = PMPI_Bcast(&leader, 1, MPI_INT, 0, node);
        MPI_Comm_free(&node);
    }
    if (rc == MPI_SUCCESS)
        rc = PMPI_Allgather(&leader, 1, MPI_INT, map, 1, MPI_INT, comm);
    if (rc != MPI_SUCCESS) {
        free(map);
        return rc;
    }
    *node_of = map;
    return MPI_SUCCESS;
}

int agx_ctx_setup(agx_ctx *ctx)
{
    int rc = MPI_SUCCESS;
    if (ctx->pcomm == MPI_COMM_NULL) {
        if ((rc = MPI_Comm_dup(ctx->user, &ctx->pcomm)) != MPI_SUCCESS)
            return rc;
        MPI_Comm_set_errhandler(ctx->pcomm, MPI_ERRORS_RETURN);
        if ((rc = agx_rules_agree(ctx)) != MPI_SUCCESS)
            return rc;
    }
    if (agx_stats_enabled() && !ctx->reg && ctx->kind == AGX_KIND_INTRA) {
        const agx_regions *reg;
        rc = agx_ctx_regions(ctx, &reg);
    }
    return rc;
}

int agx_ctx_forced(const agx_ctx *ctx, agx_op op, agx_kind kind)
{
    return ctx->forced[kind][op] >= 0 ? ctx->forced[kind][op] : ctx->env_forced[kind][op];
}

int agx_ctx_resolve(const agx_ctx *ctx, agx_op op, const char *name, int idx[AGX_KIND_LAST])
{
    /* an intra-communicator serves the intra table and, through colour splits, the inter
     * table; an inter-communicator only the inter table */
    int any = 0;
    for (int k = 0; k < AGX_KIND_LAST; k++) {
        int usable = !(ctx->kind == AGX_KIND_INTER && k == AGX_KIND_INTRA);
        idx[k] = usable ? agx_alg_find(op, (agx_kind)k, name) : -1;
        any += idx[k] >= 0;
    }
    return any;
}

int agx_env_int(const char *name, long long min, long long max, long long *v)
{
    const char *s = getenv(name);
    char *end;
    if (!s || !*s)
        return 1;
    errno = 0;
    long long x = strtoll(s, &end, 10);
    if (errno || end == s || *end || x < min || x > max)
        return -1;
    *v = x;
    return 0;
}
