/*
 * dissemination_radix: agx's extension of SharedNotify Sec. III for short vectors: the
 * dissemination among nodes in radix k = the smallest region's size (at least 2, at most
 * 64), every rank of a node carrying one of its k - 1 messages per round, and the paper's
 * partial results generalised from base 2 to base k.
 * Steps (src/patterns/allreduce.c, agx_build_ar_dissemination_radix), R regions,
 * R = sum_i d_i k^i, m = floor(log_k R):
 *  0. every rank of a node gets the node's sum (one flat exchange in the region);
 *  1. non-local round i < m: local rank j (1 <= j < k) receives the running result (a
 *     window of k^i nodes) of the node j k^i before it, and d_i further local ranks
 *     receive partial windows of k^i nodes (the nodes D_i + t k^i before, the paper's
 *     P_i sent early, in the same round); round m, when d_m > 1: d_m - 1 windows of k^m;
 *  2. after each non-local round, each received window goes to the rest of the node
 *     (one flat round), and every rank reduces them: regular windows into its running
 *     result, partial ones into a partial sum added at the end.
 * Cost: m + (d_m > 1) non-local rounds (ceil-ish log_k R instead of floor(log2 R)), each
 * followed by a node-local round; every received window crosses the node once, so a
 * node receives (k - 1 + d_i) n bytes per round from other nodes and every rank (k - 1 +
 * d_i) n bytes from its node: a short-vector algorithm. Scratch (2 + max(2k, L)) n.
 * Order: node-local index order, then per node its own order: exact reductions only
 * (the restriction and fallback of dissemination). Regions of more than 120 ranks run
 * plain dissemination.
 */
#include "coll_allreduce.h"

#define RADIX_MAX 64
#define REGION_MAX 120

int agx_allreduce_intra_dissemination_radix(const agx_args *a)
{
    const agx_regions *R;
    const agx_sched *s;
    const int *ord;
    int rc = agx_ar_prepare(a);
    if (rc != MPI_SUCCESS || a->p == 1 || agx_ar_nelems(&a->u.ar) == 0)
        return rc;
    if ((rc = agx_ctx_regions(a->ctx, &R)) != MPI_SUCCESS)
        return rc;
    if (R->max_size > REGION_MAX)
        return agx_ar_exec_flat(a, agx_build_ar_dissemination);
    int k = R->min_size < 2 ? 2 : R->min_size > RADIX_MAX ? RADIX_MAX : R->min_size;
    int nbufs = agx_ar_radix_nbufs(R, k);
    if ((rc = agx_locality_sched(a->ctx, R, agx_order_regions, agx_build_ar_dissemination_radix, k, &s,
                                 &ord)) != MPI_SUCCESS)
        return rc;
    return agx_ar_exec(a, s, 1, nbufs, nbufs);
}
