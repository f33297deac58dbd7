/*
 * The MPI library's own intergroup allgather / allgatherv through PMPI_: on the user's
 * inter-communicator, or for a colour split on an inter-communicator agx creates once
 * from the two groups (MPI_Intercomm_create; unavailable where the MPI lacks it, e.g.
 * SimGrid SMPI). Production libraries use root gathering (KangTraff19, Eq. 2).
 */
#include "coll_allgather.h"

int agx_allgather_inter_native(const agx_args *a)
{
    const agx_ag_args *g = &a->u.ag;
    MPI_Comm inter;
    int rc = agx_ig_inter_comm((agx_intergroup *)a->ig, &inter);
    if (rc != MPI_SUCCESS)
        return rc;
    if (a->op == AGX_OP_ALLGATHER)
        return PMPI_Allgather(g->sendbuf, g->sendcount, g->sendtype, g->recvbuf, g->recvcount,
                              g->recvtype, inter);
    return PMPI_Allgatherv(g->sendbuf, g->sendcount, g->sendtype, g->recvbuf, g->recvcounts, g->displs,
                           g->recvtype, inter);
}
