/*
 * Eager intergroup allgather / allgatherv: blocks of at most AGX_IG_EAGER (32) bytes ride
 * on the call's agreement (allgather_ig_groups.c), the one allgather of a record per
 * process over both groups that every intergroup call makes anyway: after it each process
 * holds every block, so the call needs no further message.
 *
 *  1. (the agreement) allgather over all p + q processes of a 64-byte record: colour,
 *     size, error, size hash, and the block itself when it fits;
 *  2. copy the remote group's blocks out of the records.
 * When some block does not fit (known identically on every process from the records), it
 * runs `segmented` (allgather) or `segmented_v` (allgatherv) instead.
 * Cost: ceil(log2(p + q)) alpha + (p + q) 64 B beta (the MPI library's allgather of the
 * records), against KangTraff19's (p/q + log p) alpha for `segmented`: the latency-bound
 * regime, where moving 64 B instead of k <= 32 B costs nothing.
 */
#include "coll_allgather.h"

int agx_allgather_inter_eager(const agx_args *a)
{
    if (agx_ig_eager_fits(a->ig)) {
        agx_ig_eager_copy(a);
        return MPI_SUCCESS;
    }
    return agx_run_instead(a, a->op == AGX_OP_ALLGATHER ? agx_allgather_inter_segmented
                                                        : agx_allgather_inter_segmented_v);
}
