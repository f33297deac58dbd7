/*
 * pairwise: p - 1 steps of one send and one receive each (MPI_Sendrecv's semantics, one
 * round per step): exchange with r XOR i when p is a power of two, else send to r + i and
 * receive from r - i. Empty pairs are skipped, so a rank with nothing to do at a step
 * goes on to the next one. KangRoss20 Sec. II-B, V (implemented with MPI_Sendrecv there).
 * Cost: (p - 1) ts + k tw (S = R = P); in all-to-many every step waits on its one
 * partner, so the straggler delays add up over steps.
 */
#include "coll_alltoallv.h"

int agx_alltoallv_intra_pairwise(const agx_args *a)
{
    return agx_a2a_run(a, AGX_A2A_PAIRWISE, 0, 0);
}
