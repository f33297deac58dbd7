/*
 * Regions of a communicator and the runner of the locality-aware algorithms (seed 002).
 *
 * Regions come from AGX_REGION_SIZE=n (consecutive blocks of n ranks) or
 * AGX_REGIONS=round_robin:n, else from MPI_COMM_TYPE_SHARED (one region per node). They
 * are derived once per communicator (collectively, at the first call that needs them:
 * a locality-aware algorithm, or the counters' local/non-local split) and cached in the
 * context, as are the plans, which depend only on the regions.
 */
#include "agx_internal.h"

#include <stdlib.h>
#include <string.h>

struct agx_locplan {
    agx_locplan_fn fn;    /* which algorithm (its builder) */
    int nl;
    int *order;           /* virtual index -> rank */
    agx_plan plan;        /* this rank's plan */
    struct agx_locplan *next;
};

int agx_ctx_regions(agx_ctx *ctx, const agx_regions **out)
{
    int rc = MPI_SUCCESS, *label = NULL;
    if (ctx->reg) {
        *out = ctx->reg;
        return MPI_SUCCESS;
    }
    label = malloc(sizeof(int) * (size_t)ctx->p);
    agx_regions *R = calloc(1, sizeof *R);
    if (!label || !R) {
        rc = MPI_ERR_NO_MEM;
        goto fn_exit;
    }
    int o = agx_regions_override(getenv("AGX_REGION_SIZE"), getenv("AGX_REGIONS"), ctx->p, label);
    if (o < 0) {
        rc = agx_raise(ctx->user, MPI_ERR_ARG, "malformed AGX_REGION_SIZE (a positive integer) or "
                       "AGX_REGIONS (round_robin:N)");
        goto fn_exit;
    }
    if (o == 0) {
        int *node_of;
        if ((rc = agx_node_map(ctx->pcomm, &node_of)) != MPI_SUCCESS)
            goto fn_exit;
        memcpy(label, node_of, sizeof(int) * (size_t)ctx->p);
        free(node_of);
    }
    if (agx_regions_init(R, ctx->p, label)) {
        rc = MPI_ERR_NO_MEM;
        goto fn_exit;
    }
    ctx->reg = R;
    R = NULL;
    *out = ctx->reg;
fn_exit:
    free(R);
    free(label);
    return rc;
}

void agx_ctx_free_locality(agx_ctx *ctx)
{
    while (ctx->locplans) {
        struct agx_locplan *lp = ctx->locplans;
        ctx->locplans = lp->next;
        free(lp->order);
        agx_plan_free(&lp->plan);
        free(lp);
    }
    if (ctx->reg) {
        agx_regions_free(ctx->reg);
        free(ctx->reg);
        ctx->reg = NULL;
    }
}

static int get_plan(agx_ctx *ctx, const agx_regions *R, agx_order_fn order, agx_locplan_fn fn, int nl,
                    struct agx_locplan **out)
{
    for (struct agx_locplan *lp = ctx->locplans; lp; lp = lp->next)
        if (lp->fn == fn && lp->nl == nl) {
            *out = lp;
            return MPI_SUCCESS;
        }
    struct agx_locplan *lp = calloc(1, sizeof *lp);
    int *vidx = malloc(sizeof(int) * (size_t)R->p);
    if (!lp || !vidx || !(lp->order = malloc(sizeof(int) * (size_t)R->p))) {
        free(vidx);
        if (lp)
            free(lp->order);
        free(lp);
        return MPI_ERR_NO_MEM;
    }
    lp->fn = fn;
    lp->nl = nl;
    order(R, nl, lp->order);
    for (int v = 0; v < R->p; v++)
        vidx[lp->order[v]] = v;
    agx_plan_init(&lp->plan);
    int bad = fn(R, nl, vidx, ctx->rank, &lp->plan) || lp->plan.overflow;
    free(vidx);
    if (bad) {
        agx_plan_free(&lp->plan);
        free(lp->order);
        free(lp);
        return MPI_ERR_INTERN;
    }
    lp->next = ctx->locplans;
    ctx->locplans = lp;
    *out = lp;
    return MPI_SUCCESS;
}

int agx_run_locality(const agx_args *a, agx_order_fn order, agx_locplan_fn fn, int nl)
{
    const agx_regions *R;
    struct agx_locplan *lp;
    int rc = agx_ctx_regions(a->ctx, &R);
    if (rc != MPI_SUCCESS)
        return rc;
    if (nl > R->min_size)
        nl = R->min_size; /* every region needs its nl leaders */
    if ((rc = get_plan(a->ctx, R, order, fn, nl, &lp)) != MPI_SUCCESS)
        return rc;
    if ((rc = agx_copy_own_block(a)) != MPI_SUCCESS)
        return rc;
    /* the receive layout in the algorithm's virtual order */
    int *cnt = malloc(sizeof(int) * (size_t)a->p), *dsp = malloc(sizeof(int) * (size_t)a->p);
    if (!cnt || !dsp) {
        free(cnt);
        free(dsp);
        return MPI_ERR_NO_MEM;
    }
    for (int v = 0; v < a->p; v++) {
        MPI_Aint d = agx_blk_displ(&a->blk, lp->order[v]);
        cnt[v] = agx_blk_count(&a->blk, lp->order[v]);
        dsp[v] = (int)d;
        if (d != dsp[v])
            rc = MPI_ERR_COUNT; /* displacements beyond int elements */
    }
    agx_blocks vblk = a->blk;
    vblk.counts = cnt;
    vblk.displs = dsp;
    if (rc == MPI_SUCCESS)
        rc = agx_run_plan(a, &vblk, &lp->plan);
    free(cnt);
    free(dsp);
    return rc;
}

int agx_comm_regions(MPI_Comm comm, int *region_of)
{
    agx_ctx *ctx;
    const agx_regions *R;
    int rc;
    if (comm == MPI_COMM_NULL)
        return agx_raise(comm, MPI_ERR_COMM, "agx_comm_regions: MPI_COMM_NULL");
    if (!region_of)
        return agx_raise(comm, MPI_ERR_BUFFER, "agx_comm_regions: region_of is NULL");
    if ((rc = agx_ctx_get(comm, &ctx)) != MPI_SUCCESS || (rc = agx_ctx_setup(ctx)) != MPI_SUCCESS)
        return agx_raise_code(comm, rc);
    if (ctx->kind != AGX_KIND_INTRA)
        return agx_raise(comm, MPI_ERR_COMM, "agx_comm_regions: needs an intra-communicator");
    if ((rc = agx_ctx_regions(ctx, &R)) != MPI_SUCCESS)
        return rc; /* raised */
    memcpy(region_of, R->region_of, sizeof(int) * (size_t)R->p);
    return MPI_SUCCESS;
}
