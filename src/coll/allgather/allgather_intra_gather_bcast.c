/*
 * Linear gather + broadcast (the LNBC of seed 004), src/patterns/binomial.c.
 *
 * Steps: every rank r > 0 sends its block to rank 0, which posts all p-1 receives at
 * once (a linear tree); then rank 0 broadcasts the whole result along a binomial tree
 * (ceil(log2 p) rounds). Both phases are agx point-to-point, so the counters see them.
 * Cost = (p-1).alpha + n.((p-1)/p).beta at the root for the gather,
 *      + ceil(log2 p).(alpha + n.beta) for the broadcast.
 * Memory requirements: p request handles and statuses at the root.
 */
#include "agx_internal.h"

#include <stdlib.h>

static int linear_gather(const agx_args *a)
{
    int rc = MPI_SUCCESS;
    agx_step st;
    if (a->rank != 0) {
        agx_linear_gather_step(a->rank, a->p, 0, &st);
        return agx_send_set(a, &st.send.set, st.send.peer);
    }
    int n = a->p - 1;
    MPI_Request *req = malloc(sizeof(MPI_Request) * (size_t)(n > 0 ? n : 1));
    MPI_Datatype *owned = malloc(sizeof(MPI_Datatype) * (size_t)(n > 0 ? n : 1));
    if (!req || !owned) {
        free(req);
        free(owned);
        return MPI_ERR_NO_MEM;
    }
    int posted = 0;
    for (int src = 1; src <= n && rc == MPI_SUCCESS; src++) {
        agx_blockset s;
        agx_set_clear(&s);
        agx_set_add(&s, src, 1);
        rc = agx_irecv_set(a, &s, src, &req[posted], &owned[posted]);
        if (rc == MPI_SUCCESS)
            posted++;
    }
    if (rc != MPI_SUCCESS)
        agx_cancel_all(posted, req);
    else
        rc = agx_waitall(posted, req);
    for (int i = 0; i < posted; i++)
        if (owned[i] != MPI_DATATYPE_NULL)
            MPI_Type_free(&owned[i]);
    free(req);
    free(owned);
    return rc;
}

int agx_allgather_intra_gather_bcast(const agx_args *a)
{
    int rc = agx_copy_own_block(a);
    if (rc == MPI_SUCCESS)
        rc = linear_gather(a);
    if (rc == MPI_SUCCESS)
        rc = agx_run_schedule(a, agx_binomial_bcast_nsteps, agx_binomial_bcast_step);
    return rc;
}
