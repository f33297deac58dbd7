/*
 * dissemination_node: SharedNotify Sec. III, last paragraph ("Depending on message size
 * we split the Allreduce load across the number of local ranks per node").
 * Regions: the shared-memory nodes (or AGX_REGION_SIZE / AGX_REGIONS). The vector is cut
 * into nl blocks, nl = min(smallest region, elements, max(1, bytes / AGX_AR_LANE_BYTES));
 * local rank j of every region is lane j and owns block j.
 * Steps (src/patterns/allreduce.c, agx_build_ar_dissemination_node):
 *  1. node-local reduce-scatter: every rank sends block j to lane j of its region, which
 *     reduces the region's blocks j (one round, the paper's shared-window step done with
 *     messages);
 *  2. the dissemination of agx_allreduce_intra_dissemination over the R regions, among
 *     the lanes j, on block j: floor(log2 R) rounds, partial results sent in the same
 *     rounds;
 *  3. node-local allgather: lane j sends block j to the rest of its region.
 * Cost (regions of L ranks, n bytes, R regions, l = floor(log2 R)):
 *   (l + 2) rounds; (l + popcount(R) - 1) messages of n/nl bytes per lane across nodes
 *   (instead of p's (floor(log2 p) + popcount(p) - 1) messages of n bytes per rank with
 *   plain dissemination), 2 (L - 1) local messages of n/nl bytes per lane.
 *   Scratch: n + (1 + l + L) n / nl bytes.
 * Small vectors use one lane (the region's first rank: a flat gather, dissemination
 * among the nodes' first ranks, a flat broadcast); the split starts at AGX_AR_LANE_BYTES
 * bytes per lane (default 4096). Like dissemination it reduces in a different order on
 * each node, so it needs an exact reduction (else recursive_doubling). Regions larger
 * than AGX_AR_NODE_MAX ranks (the schedule's buffer numbering) run plain dissemination.
 */
#include "coll_allreduce.h"

#define AGX_AR_NODE_MAX 200

int agx_allreduce_intra_dissemination_node(const agx_args *a)
{
    const agx_regions *R;
    const agx_sched *s;
    const int *ord;
    int lane_bytes, rc = agx_ar_prepare(a);
    long long n = agx_ar_nelems(&a->u.ar);
    if (rc != MPI_SUCCESS || a->p == 1 || n == 0)
        return rc;
    if ((rc = agx_alg_param(a, 0 /* lane_bytes */, &lane_bytes)) != MPI_SUCCESS ||
        (rc = agx_ctx_regions(a->ctx, &R)) != MPI_SUCCESS)
        return rc;
    if (R->max_size > AGX_AR_NODE_MAX)
        return agx_ar_exec_flat(a, agx_build_ar_dissemination);
    MPI_Count size;
    MPI_Type_size_x(a->u.ar.type, &size);
    long long nl = agx_ar_lanes(n, (long long)a->u.ar.count * size, lane_bytes, R->min_size);
    if ((rc = agx_locality_sched(a->ctx, R, agx_order_regions, agx_build_ar_dissemination_node, (int)nl, &s,
                                 &ord)) != MPI_SUCCESS)
        return rc;
    return agx_ar_exec(a, s, (int)nl, agx_ar_node_nbufs(R), AGX_AR_TMP);
}
