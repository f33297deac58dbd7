/*
 * The MPI library's own collective, called through the profiling interface (PMPI_) so
 * that agx can also be interposed as MPI_Allgather without recursion. Serves intra- and
 * inter-communicators. Its messages are invisible to agx's counters.
 * Cost: whatever the library selects (Open MPI coll/tuned, MPICH's CVAR rules).
 *
 * On a one-process intra-communicator there is nothing to communicate and agx does the
 * local copy itself: MPICH 4.0.2's MPI_Allgatherv copies to displacement 0 there,
 * ignoring displs[0] (tests/mpi/test_diff.c probes for it).
 */
#include "agx_internal.h"

static int single_process(const agx_args *a)
{
    return a->ctx->kind == AGX_KIND_INTRA && a->p == 1;
}

int agx_allgather_native(const agx_args *a)
{
    return PMPI_Allgather(a->sendbuf, a->sendcount, a->sendtype, a->recvbuf, a->recvcount,
                          a->recvtype, a->user_comm);
}

int agx_allgatherv_native(const agx_args *a)
{
    if (single_process(a))
        return agx_copy_own_block(a);
    return PMPI_Allgatherv(a->sendbuf, a->sendcount, a->sendtype, a->recvbuf, a->recvcounts,
                           a->displs, a->recvtype, a->user_comm);
}
