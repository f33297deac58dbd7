/*
 * dissemination_shm: dissemination_node with its node-local parts in shared memory, as
 * SharedNotify Sec. III does them ("the local ranks reduce their parts of the vector in
 * the node's shared segment"), on an MPI-3 shared window (src/core/shm.c).
 * Regions and lanes as in dissemination_node: nl = min(smallest region, elements,
 * max(1, bytes / AGX_AR_LANE_BYTES)); local rank j < nl is lane j and owns the elements
 * [j n / nl, (j + 1) n / nl).
 * The region's segment (agx_shmar_layout_of, src/patterns/shm_layout.c): each local
 * rank's byte count, the result, then one slot of the vector per local rank, the slots
 * placed after the larger of this call's result and the last call's.
 * Steps:
 *  1. every rank stores its count and its vector in its slot; agx_shm_sync;
 *  2. lane j reduces block j of every slot (in local-rank order) into block j of the
 *     result: the node-local reduce-scatter, as loads, without messages;
 *  3. lane j runs agx_allreduce_intra_dissemination on block j of the result, in place,
 *     among the lanes j of all regions (the lane communicator);
 *  4. agx_shm_sync; every rank copies the result out: the node-local allgather.
 * Ranks of a node that pass different byte counts (an erroneous program: the window has no
 * messages whose size would tell) all see it in the counts after step 1; they finish the
 * steps, so no lane of another node waits, and return MPI_ERR_TRUNCATE. A mismatch that
 * makes only some ranks grow the segment (a collective) is not caught: AGX_CHECK_ARGS=1.
 * Why two syncs are enough (every order of the steps of 2-4 ranks over calls of growing
 * and shrinking sizes is explored in tests/unit/test_shm_protocols.c):
 *  - a slot is written in step 1 of a call and read in step 2 of the same call, between
 *    its two syncs; the counts likewise;
 *  - the result is written in steps 2-3 (after the call's first sync) and read in step 4
 *    (after its second);
 *  - a rank that has passed a call's second sync may store its count and slot for the
 *    next call (step 1 comes before that call's first sync) while a slower rank still
 *    copies the result out. Those stores land in the header and the slots, which start
 *    after the last result (segment.held bytes): they never touch it. The next call's
 *    result is written only after its first sync, which every rank reaches after its copy
 *    out. (Before, the slots came first and the result after them, both placed by this
 *    call's size: a larger next call's slot covered the last result while a slower rank
 *    copied it, and that rank returned the next call's vector mixed into its result.)
 *  - a segment that grows is replaced after a region barrier (src/core/shm.c).
 * Cost (regions of L ranks, n bytes, R regions, l = floor(log2 R)): 2 node barriers;
 * l rounds of (l + popcount(R) - 1) messages of n/nl bytes per lane across nodes; each
 * rank copies n bytes in and out, lane j loads L n/nl bytes. Segment: about (L + 1) n
 * bytes, (L + 2) n when the sizes alternate.
 * Needs an exact reduction (like dissemination) and a predefined datatype (the slots hold
 * the vector's bytes); otherwise, or where the regions do not share memory (SimGrid SMPI,
 * regions spanning nodes), it runs dissemination_node.
 */
#include "coll_allreduce.h"
#include "shm_layout.h"

#include <string.h>

/* Step 3: dissemination among the lanes j (every region's rank j), in place on `block`. */
static int lane_allreduce(const agx_args *a, const agx_shm *m, void *block, int count)
{
    int lanes;
    if (m->lane == MPI_COMM_NULL || (MPI_Comm_size(m->lane, &lanes) == MPI_SUCCESS && lanes == 1))
        return MPI_SUCCESS; /* one region: nothing to reduce across (and no context for the lane to make) */
    agx_args b = {.op = AGX_OP_ALLREDUCE, .user_comm = m->lane, .alg = a->alg, .u.ar = a->u.ar};
    b.u.ar.sendbuf = MPI_IN_PLACE;
    b.u.ar.recvbuf = block;
    b.u.ar.count = count;
    int rc = agx_call_begin(&b, "agx_allreduce (dissemination_shm lanes)");
    if (rc != MPI_SUCCESS || b.p == 1 || count == 0)
        return rc;
    return agx_ar_exec_flat(&b, agx_build_ar_dissemination);
}

int agx_allreduce_intra_dissemination_shm(const agx_args *a)
{
    const agx_ar_args *g = &a->u.ar;
    const agx_regions *R;
    agx_shm *m = NULL;
    agx_shmar_layout lay;
    int lane_bytes, rc;
    MPI_Aint lb, extent, tlb, textent;
    MPI_Type_get_extent(g->type, &lb, &extent);
    MPI_Type_get_true_extent(g->type, &tlb, &textent);
    if (a->p == 1 || g->count == 0 || !agx_type_is_dense(g->type))
        return agx_allreduce_intra_dissemination_node(a);
    if ((rc = agx_alg_param(a, 0 /* lane_bytes */, &lane_bytes)) != MPI_SUCCESS ||
        (rc = agx_ctx_regions(a->ctx, &R)) != MPI_SUCCESS)
        return rc;
    size_t span = (size_t)(textent + (MPI_Aint)(g->count - 1) * extent);
    const agx_shm *last = a->ctx->shm[AGX_SHM_REDUCE];
    agx_shmar_layout_of(R->max_size, span, last ? last->held : 0, &lay);
    if ((rc = agx_ctx_shm(a->ctx, R, AGX_SHM_REDUCE, lay.bytes, &m, "agx_allreduce")) != MPI_SUCCESS)
        return rc;
    if (!m)
        return agx_allreduce_intra_dissemination_node(a);
    int L = R->size[R->region_of[a->rank]], j = R->local[a->rank], tsize;
    MPI_Type_size(g->type, &tsize);
    long long n = g->count, nl = agx_ar_lanes(n, n * tsize, lane_bytes, R->min_size);
    long long *bytes = (long long *)m->base, mine = n * tsize, other = mine;
    char *res = m->base + lay.res;
    const char *in = g->sendbuf == MPI_IN_PLACE ? g->recvbuf : g->sendbuf;
    m->held = span; /* every rank of the region, at the same call */
    bytes[j] = mine;
    memcpy(m->base + lay.slots + (size_t)j * lay.slot, in, span); /* step 1 */
    agx_test_pause();
    rc = agx_shm_sync(m);
    for (int i = 0; i < L && other == mine; i++) /* what the node's ranks pass (no messages to tell) */
        other = bytes[i];
    if (rc == MPI_SUCCESS && j < nl) {
        long long lo = n * j / nl, hi = n * (j + 1) / nl;
        size_t off = (size_t)(lo * extent);
        int cnt = (int)(hi - lo);
        if (cnt > 0) { /* step 2 */
            const char *slot = m->base + lay.slots + off;
            memcpy(res + off, slot, (size_t)(textent + (MPI_Aint)(cnt - 1) * extent));
            for (int i = 1; i < L && rc == MPI_SUCCESS; i++)
                rc = MPI_Reduce_local(slot + (size_t)i * lay.slot, res + off, cnt, g->type, g->op);
        }
        agx_test_pause();
        if (rc == MPI_SUCCESS)
            rc = lane_allreduce(a, m, res + off, cnt); /* step 3 */
    }
    agx_test_pause();
    int rc2 = agx_shm_sync(m); /* every rank reaches it, whatever failed: no rank is left waiting */
    if (rc == MPI_SUCCESS && (rc = rc2) == MPI_SUCCESS && other != mine)
        rc = agx_error(MPI_ERR_TRUNCATE, "agx_allreduce (dissemination_shm): this rank passes %lld bytes, another "
                       "of its node %lld: the ranks passed different counts or datatypes (AGX_CHECK_ARGS=1 "
                       "agrees on them first)", mine, other);
    if (rc == MPI_SUCCESS)
        memcpy(g->recvbuf, res, span); /* step 4 */
    agx_test_pause();
    return rc;
}
