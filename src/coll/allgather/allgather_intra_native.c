/*
 * The MPI library's own collective, called through the profiling interface (PMPI_) so
 * that agx can also be interposed as MPI_Allgather without recursion. Serves intra- and
 * inter-communicators. Its messages are invisible to agx's counters.
 * Cost: whatever the library selects (Open MPI coll/tuned, MPICH's CVAR rules).
 */
#include "agx_internal.h"

int agx_allgather_native(const agx_args *a)
{
    return PMPI_Allgather(a->sendbuf, a->sendcount, a->sendtype, a->recvbuf, a->recvcount,
                          a->recvtype, a->user_comm);
}

int agx_allgatherv_native(const agx_args *a)
{
    return PMPI_Allgatherv(a->sendbuf, a->sendcount, a->sendtype, a->recvbuf, a->recvcounts,
                           a->displs, a->recvtype, a->user_comm);
}
