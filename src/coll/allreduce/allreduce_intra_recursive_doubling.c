/*
 * recursive_doubling: MPICH's allreduce for short messages (Thakur05), any p.
 * Steps (agx_build_ar_recursive_doubling): with p2 = floor_pow2(p) and e = p - p2, ranks
 * 2i < 2e hand their vector to 2i+1, which reduces it; the p2 remaining ranks exchange
 * their whole vector with the partner at distance 1, 2, .., p2/2 (virtual ranks) and
 * reduce, the lower ranks' data always the left operand; 2i+1 returns the result to 2i.
 * Cost: log2(p2) (+2 when e > 0) rounds of n bytes; one reduction per round.
 * Order: a fixed tree over the ranks in rank order, the same on every rank, so the same
 * bits everywhere, and non-commutative ops are reduced correctly.
 */
#include "coll_allreduce.h"

int agx_allreduce_intra_recursive_doubling(const agx_args *a)
{
    return agx_ar_run(a, agx_build_ar_recursive_doubling);
}
