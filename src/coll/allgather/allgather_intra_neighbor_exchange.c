/*
 * Neighbour-exchange allgather / allgatherv (Chen et al. 2005; Open MPI's "neighbor",
 * the NEX of Proficz21), src/patterns/neighbor_exchange.c.
 *
 * Steps (p even): step 0 swaps blocks inside the pairs (2i, 2i+1); steps 1..p/2-1 each
 * send to one neighbour, alternately left and right, the two blocks received in the
 * previous step. Declared AGX_R_EVEN_P with fallback `ring`, as Open MPI does for odd p.
 * Cost = (p/2).alpha + n.((p-1)/p).beta
 * Memory requirements: none beyond the receive buffer.
 */
#include "coll_allgather.h"

int agx_allgather_intra_neighbor_exchange(const agx_args *a)
{
    return agx_run_flat(a, agx_build_neighbor_exchange, 0);
}
