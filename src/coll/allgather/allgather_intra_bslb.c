/*
 * Background Sorted Linear synchronized tree with Broadcast (seed 004, Listing 3): the
 * PAP-aware gather BSLS to rank 0, then the MPI library's broadcast.
 *
 * Steps: the monitor thread (src/core/pat.c) exchanges the predicted arrivals during
 * the compute phase; rank 0's thread then gathers in the background, one process at a
 * time, the first ready one in predicted-arrival order: a non-root that reaches the
 * call sends the first AGX_PAT_SHORT_BYTES of its block (the ready signal), waits for
 * rank 0's GO, and sends the rest. Rank 0 receives straight into its receive buffer once
 * it is in the call itself, into staging before. Finally MPI_Bcast of the p blocks from
 * rank 0 on the session's communicator.
 * Cost: gather (p-1).(2.alpha + n/p.beta) + GO signals, serialised at rank 0 but
 * overlapped with rank 0's computation; then the library's bcast of n bytes. A wrong
 * prediction only reorders ready processes (this implementation serves whoever is ready
 * first among the predicted order; the paper's strict order could wait for a late one).
 * Without a prepared epoch it is gather_bcast.
 * Counters: the short and rest messages are counted; the GO signals (0 bytes) and the
 * library's bcast are not visible to agx.
 * Memory requirements: rank 0 stages blocks that arrive before its own call.
 */
#include "pat.h"

int agx_allgather_intra_gather_bcast(const agx_args *a);

int agx_allgather_intra_bslb(const agx_args *a)
{
    agx_pat_call c;
    int rc = agx_pat_call_begin(a, AGX_PAT_BSLB, a->rank == 0, &c);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!c.s)
        return agx_allgather_intra_gather_bcast(a);
    if (c.rank != 0) {
        long long ns = c.blk < AGX_PAT_SHORT_BYTES ? c.blk : AGX_PAT_SHORT_BYTES;
        char *own = c.target + (long long)c.rank * c.blk;
        rc = MPI_Send(own, (int)ns, MPI_BYTE, 0, AGX_PAT_TAG_SHORT, c.data);
        if (rc == MPI_SUCCESS)
            rc = MPI_Recv(NULL, 0, MPI_BYTE, 0, AGX_PAT_TAG_GO, c.data, MPI_STATUS_IGNORE);
        if (rc == MPI_SUCCESS)
            rc = MPI_Send(own + ns, (int)(c.blk - ns), MPI_BYTE, 0, AGX_PAT_TAG_REST, c.data);
        agx_stats_count(a->ctx, 0, ns);
        agx_stats_count(a->ctx, 0, c.blk - ns);
    }
    if (rc == MPI_SUCCESS && c.blk > 0) {
        MPI_Datatype block;
        rc = MPI_Type_contiguous((int)c.blk, MPI_BYTE, &block);
        if (rc == MPI_SUCCESS && (rc = MPI_Type_commit(&block)) == MPI_SUCCESS) {
            rc = MPI_Bcast(c.target, c.p, block, 0, c.data);
            MPI_Type_free(&block);
        }
    }
    return agx_pat_call_end(a, &c, 0, rc);
}
