/*
 * Background Disseminated Ring (seed 004, Listing 2), the PAP-aware ring.
 *
 * Steps: the monitor thread (src/core/pat.c) exchanges the predicted arrivals during
 * the compute phase and builds the schedule (src/patterns/bdr.c): pre-steps in which
 * the processes that have arrived send their own block to processes still computing
 * (r-1, r-2, ... slowest first), then the ring for the hops left. Before the call, the
 * thread receives this rank's blocks up to its first send step (lines 47-51). In the
 * call (lines 53-67), per remaining step: post the receive, send (blocking), wait.
 * Cost: as the ring, (p-1).alpha + n.((p-1)/p).beta, when arrivals are equal; with an
 * imbalance omega, up to min(p-1, omega/tau) of the late process's blocks arrive before
 * it does, and it leaves after as few as one step. A wrong prediction delays the
 * pre-steps' senders, up to (p-2).tau of average elapsed time (Section 3.1).
 * Without a prepared epoch (no compute phase before the call) it is the ring itself.
 * Every message carries one block as bytes; a recvtype that is not contiguous goes
 * through one packed copy of the result (src/core/pat.c).
 * Memory requirements: the schedule, O(p^2) on every rank; blocks that arrive before
 * the receive buffer is known are staged (at most p-1 blocks).
 */
#include "pat.h"

#include <limits.h>

int agx_allgather_intra_ring(const agx_args *a);

int agx_allgather_intra_bdr(const agx_args *a)
{
    agx_pat_call c;
    int rc = agx_pat_call_begin(a, AGX_PAT_BDR, 1, &c);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!c.s)
        return agx_allgather_intra_ring(a);
    if (!c.sched)
        return agx_pat_call_end(a, &c, 0, MPI_ERR_INTERN); /* the monitor failed (reported) */
    const agx_bdr_sched *sc = c.sched;
    int me = c.rank, ks = sc->soff[me], ke = sc->soff[me + 1];
    int kr = sc->roff[me] + c.bg_recvs, kre = sc->roff[me + 1];
    /* tau sample: this rank's foreground time per step. Single steps mislead (a send into
     * socket buffers returns early); the whole foreground does not. The monitor keeps the
     * smallest sample of all ranks, the one that waited least for others. */
    int nsteps = 0;
    double t_begin = MPI_Wtime();
    while ((ks < ke || kr < kre) && rc == MPI_SUCCESS) {
        int sstep = ks < ke ? sc->sends[ks].step : INT_MAX;
        int rstep = kr < kre ? sc->recvs[kr].step : INT_MAX;
        int step = sstep < rstep ? sstep : rstep;
        MPI_Request req = MPI_REQUEST_NULL;
        nsteps++;
        if (rstep == step) {
            const agx_bdr_op *o = &sc->recvs[kr++];
            rc = MPI_Irecv(c.target + (long long)o->seg * c.blk, (int)c.blk, MPI_BYTE, o->peer,
                           agx_pat_seg_tag(&c, o->seg), c.data, &req);
        }
        if (sstep == step && rc == MPI_SUCCESS) {
            const agx_bdr_op *o = &sc->sends[ks++];
            rc = MPI_Send(c.target + (long long)o->seg * c.blk, (int)c.blk, MPI_BYTE, o->peer,
                          agx_pat_seg_tag(&c, o->seg), c.data);
            agx_stats_count(a->ctx, o->peer, c.blk);
        }
        if (req != MPI_REQUEST_NULL) {
            if (rc == MPI_SUCCESS)
                rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
            else
                agx_cancel_all(1, &req);
        }
    }
    double tau = nsteps > 0 && c.blk > 0 ? (MPI_Wtime() - t_begin) / nsteps : 0;
    return agx_pat_call_end(a, &c, tau, rc);
}
