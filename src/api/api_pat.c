/*
 * The PAT session's public functions (Proficz21, Listing 1: agx_pat_init, the compute
 * marks, agx_pat_finalize, agx_pat_get_info): the checks and the one raise; the work is
 * in src/pat.
 */
#include "api.h"
#include "pat.h"

#include <math.h>

int agx_pat_init(MPI_Comm comm)
{
    agx_coll_install();
    if (comm == MPI_COMM_NULL)
        return agx_raise(comm, agx_error(MPI_ERR_COMM, "agx_pat_init: communicator is MPI_COMM_NULL"));
    return agx_raise(comm, agx_pat_session_init(comm));
}

int agx_pat_finalize(MPI_Comm comm)
{
    if (comm == MPI_COMM_NULL)
        return agx_raise(comm, agx_error(MPI_ERR_COMM, "agx_pat_finalize: communicator is MPI_COMM_NULL"));
    return agx_raise(comm, agx_pat_session_finalize(comm));
}

int agx_pat_get_info(MPI_Comm comm, agx_pat_info *info)
{
    if (!info)
        return agx_raise(comm, agx_error(MPI_ERR_ARG, "agx_pat_get_info: info is NULL"));
    if (comm == MPI_COMM_NULL)
        return agx_raise(comm, agx_error(MPI_ERR_COMM, "agx_pat_get_info: communicator is MPI_COMM_NULL"));
    return agx_raise(comm, agx_pat_session_info(comm, info));
}

int agx_pat_predict(MPI_Comm comm, const double *arrival, double tau, long long block_bytes)
{
    if (comm == MPI_COMM_NULL)
        return agx_raise(comm, agx_error(MPI_ERR_COMM, "agx_pat_predict: communicator is MPI_COMM_NULL"));
    if (!arrival)
        return agx_raise(comm, agx_error(MPI_ERR_ARG, "agx_pat_predict: arrival is NULL"));
    if (!(tau >= 0) || !isfinite(tau))
        return agx_raise(comm, agx_error(MPI_ERR_ARG, "agx_pat_predict: tau %g is not a time >= 0", tau));
    if (block_bytes < 0)
        return agx_raise(comm, agx_error(MPI_ERR_COUNT, "agx_pat_predict: block_bytes %lld < 0", block_bytes));
    int p;
    MPI_Comm_size(comm, &p);
    for (int q = 0; q < p; q++)
        if (!isfinite(arrival[q]))
            return agx_raise(comm, agx_error(MPI_ERR_ARG, "agx_pat_predict: arrival[%d] is not finite", q));
    return agx_raise(comm, agx_pat_session_predict(comm, arrival, tau, block_bytes));
}

int agx_pat_compute_begin(void) { return agx_raise(MPI_COMM_WORLD, agx_pat_session_compute_begin()); }

int agx_pat_progress(double fraction) { return agx_raise(MPI_COMM_WORLD, agx_pat_session_progress(fraction)); }

int agx_pat_compute_end(void) { return agx_raise(MPI_COMM_WORLD, agx_pat_session_compute_end()); }
