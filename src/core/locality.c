/*
 * Regions of a communicator and the runner of the locality-aware algorithms (Bienz).
 *
 * Regions come from AGX_REGION_SIZE=n (consecutive blocks of n ranks) or
 * AGX_REGIONS=round_robin:n, else from MPI_COMM_TYPE_SHARED (one region per node). They
 * are derived once per communicator (collectively, at the first call that needs them:
 * a locality-aware algorithm, or the counters' local/non-local split) and cached in the
 * context, as are the schedules (src/core/cache.c), which depend only on the regions.
 */
#include "agx_internal.h"

#include <stdlib.h>
#include <string.h>

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
        rc = agx_error(MPI_ERR_NO_MEM, "out of memory for the regions of %d ranks", ctx->p);
        goto fn_exit;
    }
    int o = agx_regions_override(getenv("AGX_REGION_SIZE"), getenv("AGX_REGIONS"), ctx->p, label);
    if (o < 0) {
        rc = agx_error(MPI_ERR_ARG, "malformed AGX_REGION_SIZE (a positive integer) or "
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
        rc = agx_error(MPI_ERR_NO_MEM, "out of memory for the regions of %d ranks", ctx->p);
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
    if (ctx->reg) {
        agx_regions_free(ctx->reg);
        free(ctx->reg);
        ctx->reg = NULL;
    }
}

/* The virtual order and this rank's schedule of builder `fn`, cached per communicator
 * (the regions are fixed per communicator, so (builder, nl) is the whole shape). */
int agx_locality_sched(agx_ctx *ctx, const agx_regions *R, agx_order_fn order, agx_locbuild_fn fn, int nl,
                       const agx_sched **out, const int **vorder)
{
    agx_cache_key key = {.builder = (const void *)fn, .p = R->p, .param = nl};
    if ((*out = agx_cache_find(ctx, &key, vorder)))
        return MPI_SUCCESS;
    agx_sched s;
    agx_sched_init(&s);
    int *ord = malloc(sizeof(int) * (size_t)R->p), *vidx = malloc(sizeof(int) * (size_t)R->p);
    int bad = !ord || !vidx;
    if (!bad) {
        order(R, nl, ord);
        for (int v = 0; v < R->p; v++)
            vidx[ord[v]] = v;
        bad = fn(R, nl, vidx, ctx->rank, &s) || agx_sched_finish(&s);
    }
    free(vidx);
    if (bad) {
        agx_sched_free(&s);
        free(ord);
        return agx_error(MPI_ERR_NO_MEM, "cannot build the locality-aware schedule (out of memory)");
    }
    *vorder = ord;
    return agx_cache_put(ctx, &key, &s, ord, out);
}

int agx_run_locality(const agx_args *a, agx_order_fn order, agx_locbuild_fn fn, int nl)
{
    const agx_regions *R;
    const agx_sched *s;
    const int *ord;
    const agx_blocks *blk = &a->u.ag.blk;
    int rc = agx_ctx_regions(a->ctx, &R);
    if (rc != MPI_SUCCESS)
        return rc;
    if ((rc = agx_locality_sched(a->ctx, R, order, fn, nl, &s, &ord)) != MPI_SUCCESS)
        return rc;
    if ((rc = agx_copy_own_block(a)) != MPI_SUCCESS)
        return rc;
    /* the receive layout in the algorithm's virtual order (64-bit: displacements of a
     * regular layout may pass an int) */
    MPI_Aint *cnt = malloc(sizeof(MPI_Aint) * 2 * (size_t)a->p), *dsp = cnt + a->p;
    if (!cnt)
        return agx_error(MPI_ERR_NO_MEM, "out of memory for the permuted layout");
    for (int v = 0; v < a->p; v++) {
        cnt[v] = agx_blk_count(blk, ord[v]);
        dsp[v] = agx_blk_displ(blk, ord[v]);
    }
    agx_blocks vblk = *blk;
    vblk.counts = vblk.displs = NULL;
    vblk.lcounts = cnt;
    vblk.ldispls = dsp;
    vblk.same_shape = blk->same_shape || !agx_blk_listed(blk);
    agx_exec x;
    agx_exec_of(a, &vblk, &x);
    rc = agx_sched_run(&x, s);
    free(cnt);
    return rc;
}

int agx_comm_regions(MPI_Comm comm, int *region_of)
{
    agx_ctx *ctx;
    const agx_regions *R;
    int rc;
    if (comm == MPI_COMM_NULL)
        return agx_raise(comm, agx_error(MPI_ERR_COMM, "agx_comm_regions: MPI_COMM_NULL"));
    if (!region_of)
        return agx_raise(comm, agx_error(MPI_ERR_BUFFER, "agx_comm_regions: region_of is NULL"));
    if ((rc = agx_ctx_get(comm, &ctx)) != MPI_SUCCESS || (rc = agx_ctx_setup(ctx)) != MPI_SUCCESS)
        return agx_raise(comm, rc);
    if (ctx->kind != AGX_KIND_INTRA)
        return agx_raise(comm, agx_error(MPI_ERR_COMM, "agx_comm_regions: needs an intra-communicator"));
    if ((rc = agx_ctx_regions(ctx, &R)) != MPI_SUCCESS)
        return agx_raise(comm, rc);
    memcpy(region_of, R->region_of, sizeof(int) * (size_t)R->p);
    return MPI_SUCCESS;
}
