/*
 * dissemination: SharedNotify Sec. III (Figs. 4-5), for any p.
 * Steps (src/patterns/allreduce.c, agx_build_ar_dissemination): p = sum_k c_k 2^k,
 * l = floor(log2 p). In round k < l every rank sends its running result (the reduction
 * of ranks r-2^k+1 .. r) to r + 2^k and reduces what r - 2^k sends it; when c_k = 1 the
 * same message also goes, as the partial result P_k, to r + D_k (D_k = sum_{i>k} c_i 2^i)
 * in that same round, overlapping the ongoing dissemination (the paper's improved
 * variant, its partial results "sent in parallel"). After round l-1 each rank reduces
 * the partials it received in front of its window: the result covers ranks r+1 .. r in
 * that cyclic order.
 * Cost: l rounds (the power-of-two part's log2, not ceil(log2 p)); l + popcount(p) - 1
 * messages of n bytes sent per rank; l + popcount(p) - 1 reductions; scratch
 * (1 + l) n. The order differs from rank to rank, so only exact reductions (integer
 * types, predefined ops) give every rank the same bits: others fall back to
 * recursive_doubling (docs/algorithms.md).
 */
#include "coll_allreduce.h"

int agx_allreduce_intra_dissemination(const agx_args *a)
{
    return agx_ar_run(a, agx_build_ar_dissemination);
}
