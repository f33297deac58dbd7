/*
 * rabenseifner: reduce-scatter by recursive halving, allgather by recursive doubling
 * (Rabenseifner 2004; MPICH's allreduce above 2 KiB; Thakur05), any p through the fold
 * of recursive_doubling.
 * Steps (agx_build_ar_rabenseifner): the vector cut into p2 = floor_pow2(p) blocks;
 * halving: at distance p2/2, .., 1 a rank sends the half of its current range its
 * partner keeps and reduces the half it keeps; it ends with block v (its virtual rank)
 * complete; doubling: ranges of 1, 2, .. blocks exchanged until every rank holds all.
 * Cost: 2 log2(p2) (+2) rounds, 2 (p2-1)/p2 n bytes sent per rank (+n for the fold).
 * Order: each block reduced once (a fixed tree) and copied: the same bits on every rank;
 * halving interleaves the ranks, so commutative ops only.
 */
#include "coll_allreduce.h"

int agx_allreduce_intra_rabenseifner(const agx_args *a)
{
    return agx_ar_run(a, agx_build_ar_rabenseifner);
}
