/*
 * Multi-leader allgather / allgatherv (Kandalla et al. 2009; Bienz's related work).
 *
 * Each region is cut into nl sub-blocks of consecutive ranks (AGX_LEADERS, default 2,
 * e.g. one per socket; at most the smallest region's size), each led by its first rank:
 *  1. linear gather of each sub-block to its leader;
 *  2. the r leaders of each index l run a Bruck allgather of their sub-blocks (nl
 *     independent non-local exchanges, the duplicated non-local traffic Bienz notes);
 *  3. the nl leaders of each region run a Bruck allgather of what they hold;
 *  4. binomial broadcast of the whole result inside each sub-block.
 * The virtual order is sub-block index first, then region, so every unit moved is one or
 * two contiguous ranges.
 * Cost = ceil(log2 r).alpha + ((r-1)/r)(b/nl).beta + (ceil(log2 nl) + ceil(log2(p_l/nl)) + 1).alpha_l + ...
 * Memory requirements: the plan and the permuted layout (O(p)).
 */
#include "coll_allgather.h"

int agx_allgather_intra_multileader(const agx_args *a)
{
    int nl, rc = agx_alg_param(a, 0 /* leaders */, &nl);
    return rc != MPI_SUCCESS ? rc : agx_run_locality(a, agx_order_multileader, agx_build_multileader, nl);
}
