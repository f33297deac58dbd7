/*
 * The MPI library's own allgather / allgatherv, called through the profiling interface
 * (PMPI_) so that agx can also be interposed as MPI_Allgather without recursion. Its
 * messages are invisible to agx's counters. It runs on agx's private duplicate of the
 * communicator (MPI_ERRORS_RETURN), so a failure reaches the user's error handler once,
 * through agx's entry point, not twice.
 * Cost: whatever the library selects (Open MPI coll/tuned, MPICH's CVAR rules).
 *
 * On a one-process intra-communicator there is nothing to communicate and agx does the
 * local copy itself: MPICH 4.0.2's MPI_Allgatherv copies to displacement 0 there,
 * ignoring displs[0] (tests/mpi/test_diff.c probes for it). A call whose result has no
 * bytes (zero counts, or a zero-size type; the same on every rank, as the type signatures
 * match) moves nothing and returns at once: MPICH rejects such a call when its buffers
 * alias, which agx's own algorithms (and the MPI standard, for no data) do not.
 */
#include "coll_allgather.h"

int agx_allgather_intra_native(const agx_args *a)
{
    const agx_ag_args *g = &a->u.ag;
    if (a->msg_bytes == 0)
        return MPI_SUCCESS;
    if (a->op == AGX_OP_ALLGATHER)
        return PMPI_Allgather(g->sendbuf, g->sendcount, g->sendtype, g->recvbuf, g->recvcount,
                              g->recvtype, a->comm);
    if (a->p == 1)
        return agx_copy_own_block(a);
    return PMPI_Allgatherv(g->sendbuf, g->sendcount, g->sendtype, g->recvbuf, g->recvcounts, g->displs,
                           g->recvtype, a->comm);
}
