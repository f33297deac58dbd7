/*
 * reduce_bcast: binomial reduce to rank 0, then binomial broadcast (Intel MPI's
 * I_MPI_ADJUST_ALLREDUCE=3, one of SharedNotify's Sec. III-B baselines).
 * Steps (agx_build_ar_reduce_bcast): in round k, a rank whose bit k is set sends its
 * partial (ranks r .. r+2^k-1) to r - 2^k; the others reduce what r + 2^k sends after
 * their own; then rank 0's result travels down the binomial tree.
 * Cost: 2 ceil(log2 p) rounds of n bytes. Order: rank order, one tree: the same bits on
 * every rank, non-commutative ops too.
 */
#include "coll_allreduce.h"

int agx_allreduce_intra_reduce_bcast(const agx_args *a)
{
    return agx_ar_run(a, agx_build_ar_reduce_bcast);
}
