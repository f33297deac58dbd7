/*
 * Ring allgather / allgatherv (Thakur, Rabenseifner, Gropp 2005; the RING of Proficz21).
 *
 * Steps: copy the own block into place; at step s = 0..p-2 send block (r-s) mod p to
 * rank r+1 and receive block (r-s-1) mod p from rank r-1 (src/patterns/ring.c).
 * Cost = (p-1).alpha + n.((p-1)/p).beta, n = bytes of the whole result (for
 * allgatherv the slowest step bounds each round: sum over steps of the largest block).
 * Memory requirements: none beyond the receive buffer.
 */
#include "coll_allgather.h"

int agx_allgather_intra_ring(const agx_args *a)
{
    return agx_run_flat(a, agx_build_ring, 0);
}
