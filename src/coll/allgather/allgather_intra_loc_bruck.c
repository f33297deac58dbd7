/*
 * Locality-aware Bruck allgather / allgatherv (Bienz, Algorithm 2), generalised.
 *
 * Regions: MPI_COMM_TYPE_SHARED, or AGX_REGION_SIZE / AGX_REGIONS. With r regions and
 * radix k = the smallest region's size (at least 2):
 *  1. local Bruck allgather inside every region;
 *  2. ceil(log_k r) non-local steps: at step i (D = k^i regions held), local rank j
 *     (1 <= j < k) of region R sends the first c_j = min(D, r - jD) held regions to local
 *     rank j of region R - jD and receives c_j regions from region R + jD; local rank 0
 *     and ranks >= k are idle (the paper's idle first process); no region arrives twice;
 *  3. after each non-local step, a local Bruck allgather of what arrived.
 * Unequal regions: the radix is the smallest region, so every region has a handler for
 * every digit; larger regions have more idle ranks, and every local phase is padded to
 * the largest region's ceil(log2) steps so all ranks share one step numbering. A region
 * of one process (k = 2) handles its single digit itself.
 * Cost (Eq. 4, equal regions of p_l): ceil(log_pl r).alpha + (b/p_l).beta
 *      + (ceil(log_pl r) + 1) log2(p_l).alpha_l + (b-1).beta_l   (b: result bytes).
 * The log2(p_l) factor on the local term is the paper's text ("log2(p_l) (log_pl(r) + 1)
 * local messages": every local phase is a Bruck allgather of log2(p_l) steps); the
 * printed Eq. 4 drops it. agx follows the text, here, in docs/algorithms.md and in
 * src/patterns/model.c.
 * Memory requirements: the plan (O(log p) operations) and the permuted layout (O(p)).
 */
#include "coll_allgather.h"

int agx_allgather_intra_loc_bruck(const agx_args *a)
{
    return agx_run_locality(a, agx_order_regions, agx_build_loc_bruck, 1);
}
