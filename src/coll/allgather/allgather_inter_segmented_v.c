/*
 * Intergroup allgatherv with byte-index segmentation (KangTraff19, Algorithm 2).
 *
 *  1. Allreduce the block sizes of my group (K, Lines 1-2) and Exscan them (my first
 *     global byte index R, Section 4.1), both over my group.
 *  2. My group's K bytes are cut into as many segments as the remote group has processes,
 *     floor/ceil(K/n) each (Lines 3-11); I send the parts of [R, R+k) that fall in each
 *     receiver's segment, receivers ascending (Lines 12-14). The remote layout is known
 *     from recvcounts, so I receive my segment of the remote message from the remote
 *     senders that cover it, posted in Section 4.1's order (higher multi-target sender,
 *     senders only to me, lower multi-target sender).
 *  3. An in-place allgatherv over my group of the equal-sized segments (Lines 25-26).
 * Serves allgather too (all blocks equal), where `segmented` is the special case with
 * whole blocks.
 * Cost (Theorem 3): (M + max(max kA, max kB) + log(pq)).tw with M = max(KA, KB);
 * start-ups: log(p) + log(q) for the reductions, the exchange, log(p) for the allgatherv.
 * Memory requirements: as `segmented`, plus O(p + q) integers for the plans.
 */
#include "agx_internal.h"

#include <stdlib.h>

int agx_allgather_inter_segmented_v(const agx_args *a)
{
    const agx_intergroup *ig = a->ig;
    agx_ig_io io;
    long long K = 0, R = 0, *sbnd = NULL, *rbnd = NULL;
    int rc = agx_ig_io_begin(a, &io);
    if (rc == MPI_SUCCESS) {
        sbnd = malloc(sizeof(long long) * (size_t)(ig->rsize + ig->lsize + 2));
        rc = sbnd ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    }
    if (rc == MPI_SUCCESS)
        rc = PMPI_Allreduce(&io.k, &K, 1, MPI_LONG_LONG, MPI_SUM, ig->local);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Exscan(&io.k, &R, 1, MPI_LONG_LONG, MPI_SUM, ig->local);
    if (rc == MPI_SUCCESS) {
        if (ig->lrank == 0)
            R = 0; /* Exscan leaves rank 0's result undefined */
        rbnd = sbnd + ig->rsize + 1;
        agx_partition_balanced(K, ig->rsize, sbnd);
        agx_partition_balanced(io.rpre[ig->rsize], ig->lsize, rbnd);
        rc = agx_ig_exchange(a, io.bytes, R, io.k, sbnd, rbnd, io.rpre, io.full);
    }
    free(sbnd);
    return agx_ig_io_end(a, &io, rc);
}
