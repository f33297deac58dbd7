/*
 * ring: reduce-scatter around the ring, then the ring allgather (bandwidth-optimal;
 * Intel MPI's I_MPI_ADJUST_ALLREDUCE=8, Patarasuk & Yuan's allreduce).
 * Steps (agx_build_ar_ring): the vector cut into p blocks; in round k < p-1 rank r sends
 * block r-k to r+1 and reduces block r-k-1 from r-1 into its own; rank r then holds block
 * r+1 complete and p-1 ring rounds spread the blocks.
 * Cost: 2(p-1) rounds, 2 (p-1)/p n bytes sent per rank, (p-1)/p n reduced. Order: block c
 * is reduced once, in the cyclic order c, c+1, .., c-1, then copied: the same bits on
 * every rank; commutative ops only.
 */
#include "coll_allreduce.h"

int agx_allreduce_intra_ring(const agx_args *a)
{
    return agx_ar_run(a, agx_build_ar_ring);
}
