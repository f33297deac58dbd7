/*
 * Hierarchical allgather / allgatherv (Traeff 2006; Bienz's related work).
 *
 *  1. linear gather of every region's blocks to its first rank (the leader);
 *  2. Bruck allgather among the r leaders, a region's blocks moving as one unit;
 *  3. binomial broadcast of the whole result from the leader inside each region.
 * Only leaders communicate non-locally: ceil(log2 r) messages, (r-1)/r of the result.
 * Cost = (p_l - 1).alpha_l + ceil(log2 r).alpha + ((r-1)/r) b.beta + ceil(log2 p_l).(alpha_l + b.beta_l)
 * Memory requirements: the plan and the permuted layout (O(p)).
 */
#include "coll_allgather.h"

int agx_allgather_intra_hierarchical(const agx_args *a)
{
    return agx_run_locality(a, agx_order_regions, agx_build_hierarchical, 1);
}
