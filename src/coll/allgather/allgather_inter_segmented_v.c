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
#include "coll_allgather.h"

int agx_allgather_inter_segmented_v(const agx_args *a)
{
    const agx_intergroup *ig = a->ig;
    const agx_ig_io *io = a->u.ag.io;
    long long K = 0, R = 0, *sbnd = io->bnd, *rbnd = io->bnd + ig->rsize + 1;
    /* Lines 1-2 and the Exscan, from the agreement's records: every block size of my group */
    for (int i = 0; i < ig->lsize; i++) {
        if (i == ig->lrank)
            R = K;
        K += agx_ig_send_bytes(ig, ig->local_x[i]);
    }
    agx_partition_balanced(K, ig->rsize, sbnd);
    agx_partition_balanced(io->rpre[ig->rsize], ig->lsize, rbnd);
    return agx_ig_exchange(a, R, sbnd, rbnd);
}
