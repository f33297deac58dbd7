/*
 * Sparbit allgather / allgatherv (LochKoslovski21; Open MPI 5 coll/base, UCC tl/ucp),
 * src/patterns/sparbit.c.
 *
 * Steps: copy the own block into place; in round i = 0..L-1 (L = ceil(log2 p)) with
 * distance d = 2^(L-1-i), halving: send to r+d the blocks r, r-2d, r-4d, ... held so far
 * and receive from r-d the blocks r-d, r-3d, ..., one message each way (a scattered set:
 * an hindexed type). Distances that p's binary expansion skips drop the last transfer,
 * so any p works and every block arrives once. The first rounds cross the largest
 * distance with the least data, the last the nearest neighbour with the most: on a
 * block-placed machine the big messages stay inside a node (the paper's data locality).
 * Cost = ceil(log2 p).alpha + n.((p-1)/p).beta
 * Memory requirements: none beyond the receive buffer (one datatype per message).
 */
#include "coll_allgather.h"

int agx_allgather_intra_sparbit(const agx_args *a)
{
    return agx_run_flat(a, agx_build_sparbit, 0);
}
