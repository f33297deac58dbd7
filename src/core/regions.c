/*
 * Regions of a communicator, its node map, and the cached schedules of the locality-aware
 * builders (Bienz).
 *
 * Regions come from AGX_REGION_SIZE=n (consecutive blocks of n ranks) or
 * AGX_REGIONS=round_robin:n, else from MPI_COMM_TYPE_SHARED (one region per node). They
 * are derived once per communicator (collectively, at the first call that needs them:
 * a locality-aware algorithm, or the counters' local/non-local split) and cached in the
 * context, as are the schedules (src/core/cache.c), which depend only on the regions.
 */
#include "core.h"

#include <stdlib.h>
#include <string.h>

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

int agx_ctx_regions(agx_ctx *ctx, const agx_regions **out)
{
    int rc = MPI_SUCCESS, *label = NULL;
    if (ctx->reg) {
        *out = ctx->reg;
        return MPI_SUCCESS;
    }
    agx_req_flush(ctx); /* collectives on pcomm follow: the requests' queued ones first */
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
    ctx->reg_nodes = o == 0;
    R = NULL;
    *out = ctx->reg;
fn_exit:
    free(R);
    free(label);
    return rc;
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
