/*
 * The MPI library's own intergroup allgather / allgatherv through PMPI_: on the user's
 * inter-communicator, or for a colour split on an inter-communicator agx creates once
 * from the two groups (MPI_Intercomm_create; unavailable where the MPI lacks it, e.g.
 * SimGrid SMPI). Production libraries use root gathering (seed 000, Eq. 2).
 */
#include "agx_internal.h"

int agx_allgather_inter_native(const agx_args *a)
{
    MPI_Comm inter;
    int rc = agx_ig_inter_comm((agx_intergroup *)a->ig, &inter);
    if (rc != MPI_SUCCESS)
        return rc;
    return PMPI_Allgather(a->sendbuf, a->sendcount, a->sendtype, a->recvbuf, a->recvcount,
                          a->recvtype, inter);
}

int agx_allgatherv_inter_native(const agx_args *a)
{
    MPI_Comm inter;
    int rc = agx_ig_inter_comm((agx_intergroup *)a->ig, &inter);
    if (rc != MPI_SUCCESS)
        return rc;
    return PMPI_Allgatherv(a->sendbuf, a->sendcount, a->sendtype, a->recvbuf, a->recvcounts,
                           a->displs, a->recvtype, inter);
}
