/*
 * native: the MPI library's own MPI_Allreduce (PMPI_), on agx's private duplicate of the
 * communicator. Serves intra- and inter-communicators (where MPI defines the result as
 * the reduction of the other group's vectors).
 * Cost: the library's choice (Open MPI 4.1 tuned: recursive doubling, ring, segmented
 * ring, Rabenseifner by size; MPICH 4: recursive doubling below 2 KiB, Rabenseifner above).
 */
#include "coll_allreduce.h"

int agx_allreduce_native(const agx_args *a)
{
    const agx_ar_args *g = &a->u.ar;
    return PMPI_Allreduce(g->sendbuf, g->recvbuf, g->count, g->type, g->op, a->comm);
}
