/*
 * MPI's completion calls under the preload: MPI_Test, _Testall, _Testany, _Testsome,
 * MPI_Request_get_status, MPI_Wait, _Waitall, _Waitany and _Waitsome advance agx's
 * active requests first (agx_progress), from the program's own thread.
 *
 * Why: the requests agx hands to the program (the preload's MPI_Iallgather(v),
 * MPI_Iallreduce and persistent collectives) are advanced by agx's progress thread, which
 * must get into the MPI library to do so. MPICH has one global lock; a program thread
 * polling MPI_Test takes it again the moment it lets it go, and on a busy core the
 * progress thread waited for it without end (2026-11-24: the preloaded persistent test
 * hung at 3 ranks under MPICH with two busy processes beside it; every process's
 * progress thread stood in PMPI_Testall, the program's thread in MPI_Test). Here the
 * program's thread takes agx's lock before MPI's (the progress thread's order), so
 * whichever thread holds it advances the requests and neither starves.
 *
 * While agx has active requests a wait is a loop of agx_progress and the matching test
 * (MPI_Wait is MPI_Test repeated; the same statuses, codes and MPI_ERR_IN_STATUS); agx's
 * progress thread steps aside while it runs. Once none is active, or when none was, the
 * call is PMPI_'s, with nothing added but one atomic load. Results are the library's:
 * nothing here completes a request that MPI did not. Also here: whether the preload's
 * non-blocking and persistent entries may hand agx's requests out (agx_preload_async_ok).
 */
#include "preload.h"


AGX_EXPORT int MPI_Test(MPI_Request *req, int *flag, MPI_Status *st)
{
    agx_progress();
    return PMPI_Test(req, flag, st);
}

AGX_EXPORT int MPI_Testall(int n, MPI_Request reqs[], int *flag, MPI_Status sts[])
{
    agx_progress();
    return PMPI_Testall(n, reqs, flag, sts);
}

AGX_EXPORT int MPI_Testany(int n, MPI_Request reqs[], int *idx, int *flag, MPI_Status *st)
{
    agx_progress();
    return PMPI_Testany(n, reqs, idx, flag, st);
}

AGX_EXPORT int MPI_Testsome(int n, MPI_Request reqs[], int *outcount, int idxs[], MPI_Status sts[])
{
    agx_progress();
    return PMPI_Testsome(n, reqs, outcount, idxs, sts);
}

AGX_EXPORT int MPI_Request_get_status(MPI_Request req, int *flag, MPI_Status *st)
{
    agx_progress();
    return PMPI_Request_get_status(req, flag, st);
}

AGX_EXPORT int MPI_Wait(MPI_Request *req, MPI_Status *st)
{
    int flag = 0, rc;
    while (agx_progress() > 0) {
        if ((rc = PMPI_Test(req, &flag, st)) != MPI_SUCCESS || flag)
            return rc;
    }
    return PMPI_Wait(req, st);
}

AGX_EXPORT int MPI_Waitall(int n, MPI_Request reqs[], MPI_Status sts[])
{
    int flag = 0, rc;
    while (agx_progress() > 0) {
        if ((rc = PMPI_Testall(n, reqs, &flag, sts)) != MPI_SUCCESS || flag)
            return rc;
    }
    return PMPI_Waitall(n, reqs, sts);
}

AGX_EXPORT int MPI_Waitany(int n, MPI_Request reqs[], int *idx, MPI_Status *st)
{
    int flag = 0, rc;
    while (agx_progress() > 0) {
        if ((rc = PMPI_Testany(n, reqs, idx, &flag, st)) != MPI_SUCCESS || flag)
            return rc;
    }
    return PMPI_Waitany(n, reqs, idx, st);
}

AGX_EXPORT int MPI_Waitsome(int n, MPI_Request reqs[], int *outcount, int idxs[], MPI_Status sts[])
{
    int rc;
    while (agx_progress() > 0) { /* MPI_UNDEFINED (none active) or some completed: done */
        if ((rc = PMPI_Testsome(n, reqs, outcount, idxs, sts)) != MPI_SUCCESS || *outcount != 0)
            return rc;
    }
    return PMPI_Waitsome(n, reqs, outcount, idxs, sts);
}

/* Non-blocking allgather(v) and allreduce: through agx only while its progress thread runs
 * (the preload's MPI_Wait & co. advance agx's rounds, but a program may wait in a call that
 * does not, MPI_Recv or a barrier, for a peer that needs them): then agx's request
 * handed to MPI as a generalized request (agx_request_mpi), where it is faster than the
 * library's own call (AGX_ADAPT: timed at a size class's first call, preload_nbtune.c);
 * otherwise the library's own. (An alltoallv request would run the library's anyway.) */
int agx_preload_async_ok(int op)
{
    static int said;
    static int async; /* thread on (1) or off (-1): fixed from the first ask to MPI_Finalize */
    if (!agx_preload_enabled(op)) {
        agx_preload_left(op, AGX_LEFT_ENABLE);
        return 0;
    }
    int on = __atomic_load_n(&async, __ATOMIC_RELAXED);
    if (!on)
        __atomic_store_n(&async, on = agx_progress_async() ? 1 : -1, __ATOMIC_RELAXED);
    if (on > 0)
        return 1;
    agx_preload_left(op, AGX_LEFT_THREAD);
    if (!said && agx_preload_set("AGX_VERBOSE")) {
        int rank = 0;
        PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
        if (rank == 0)
            fprintf(stderr, "agx-preload: MPI_Iallgather(v) and MPI_Iallreduce go to the MPI library, and the "
                    "persistent collectives (MPI_Allgather_init & co.): agx's requests need its progress thread "
                    "(AGX_PROGRESS_THREAD=1 and MPI_Init_thread with MPI_THREAD_MULTIPLE)\n");
    }
    said = 1;
    return 0;
}
