/*
 * native: the MPI library's own MPI_Alltoallv (PMPI_), on agx's private duplicate of the
 * communicator. Serves intra- and inter-communicators.
 * Cost: the library's choice (Open MPI 4.1: pairwise or linear; MPICH: scattered, i.e.
 * spread-out throttled by MPIR_CVAR_ALLTOALL_THROTTLE, or pairwise).
 */
#include "coll_alltoallv.h"

int agx_alltoallv_native(const agx_args *a)
{
    const agx_a2a_args *g = &a->u.a2a;
    return PMPI_Alltoallv(g->sendbuf, g->sendcounts, g->sdispls, g->sendtype, g->recvbuf, g->recvcounts,
                          g->rdispls, g->recvtype, a->comm);
}
