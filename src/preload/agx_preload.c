/*
 * libagx-preload.so: agx under an unmodified MPI program (PMPI interposition, the way mpiP
 * and Darshan attach). Loaded with LD_PRELOAD (tools/agxrun --preload), it defines the C
 * bindings MPI_Allgather, MPI_Allgatherv, MPI_Alltoallv and MPI_Allreduce, each forwarding
 * to agx_<op> (intra- and inter-communicators), whose `native` algorithm calls PMPI_<op>;
 * MPI_Iallgather, MPI_Iallgatherv and MPI_Iallreduce while agx's progress thread runs
 * (else PMPI_), and MPI-4's persistent collectives (preload_persist.c);
 * and the MPI-IO calls a collective write needs (MPI_File_open, _set_view, _set_info,
 * _write_all, _write_at_all, _close -> agx_mpi_file_*: the two-phase engine). agx itself
 * calls only PMPI_ collectives and file calls it does not define here, so nothing
 * recurses. MPI_Finalize prints what went through agx when AGX_STATS or AGX_VERBOSE is set.
 *
 *   AGX_ENABLE=0              every call goes straight to PMPI_ (agx is not touched)
 *   AGX_ENABLE=name[,name...] only those through agx (allgather, allgatherv, alltoallv,
 *                             allreduce, file_write_all); unset or 1: all of them
 *   AGX_<OP>_ALGORITHM=name   agx's choice forced, as for any agx program
 *
 * Fortran and C++: C++ programs call these C bindings, so they are intercepted. MPICH's
 * Fortran bindings (libmpichfort) call MPI_Allgather and the others, so Fortran programs
 * are intercepted too; Open MPI 4.1's (libmpi_mpifh, libmpi_usempif08) call PMPI_Allgather
 * directly, so there Fortran calls bypass agx. tests/preload_check.sh tests each claim
 * (README.md, "Without changing the program").
 */
#include "preload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { NOPS = AGX_OP_LAST, NALG = 32 };

static int on[NOPS + 1], read_done; /* on[op], on[NOPS] = file writes: through agx (AGX_ENABLE,
                                     * read at the first call) */
static int report;                /* AGX_STATS or AGX_VERBOSE: count for the report */
static long long calls[NOPS];
static struct {
    const char *name; /* the registry's (static) name */
    long long n;
} used[NOPS][NALG];

static int set(const char *name)
{
    const char *v = getenv(name);
    return v && *v && strcmp(v, "0");
}

static void read_enable(void)
{
    const char *e = getenv("AGX_ENABLE");
    report = set("AGX_STATS") || set("AGX_VERBOSE");
    for (int op = 0; op <= NOPS; op++) {
        if (!e || !*e || !strcmp(e, "1"))
            on[op] = 1;
        else if (!strcmp(e, "0"))
            on[op] = 0;
        else { /* a list of operation names: whole words only */
            const char *name = op < NOPS ? agx_op_name((agx_op)op) : "file_write_all", *s = e;
            size_t len = strlen(name);
            on[op] = 0;
            while ((s = strstr(s, name))) {
                if ((s == e || s[-1] == ',') && (s[len] == ',' || s[len] == '\0'))
                    on[op] = 1;
                s += len;
            }
        }
    }
    read_done = 1;
}

int agx_preload_enabled(int op)
{
    if (agx_preload_foreign()) /* built for another MPI than the program's: step aside */
        return 0;
    if (!read_done)
        read_enable();
    return on[op];
}

/* The drop-in learns on the run by default: a call of the default rule's choice times its
 * candidates, the library's own among them, over its first calls (AGX_ADAPT; unset only). */
__attribute__((constructor)) static void adapt_by_default(void) { setenv("AGX_ADAPT", "1", 0); }

#define enabled agx_preload_enabled
#define count agx_preload_count

/* The algorithm agx ran, counted by name for the report at MPI_Finalize. */
void agx_preload_count(agx_op op, MPI_Comm comm)
{
    const char *name = NULL;
    if (!report) /* the report is all the counts are for: no cost per call without it */
        return;
    if (agx_comm_last_algorithm(comm, op, &name) != MPI_SUCCESS)
        name = NULL;
    agx_preload_count_name(op, name);
}

void agx_preload_count_name(agx_op op, const char *name)
{
    if (!report)
        return;
    calls[op]++;
    if (!name)
        return;
    for (int i = 0; i < NALG; i++) {
        if (!used[op][i].name)
            used[op][i].name = name;
        if (used[op][i].name == name || !strcmp(used[op][i].name, name)) {
            used[op][i].n++;
            return;
        }
    }
}

AGX_EXPORT int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                  MPI_Datatype recvtype, MPI_Comm comm)
{
    if (!enabled(AGX_OP_ALLGATHER))
        return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    int rc = agx_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    if (rc == MPI_SUCCESS)
        count(AGX_OP_ALLGATHER, comm);
    return rc;
}

AGX_EXPORT int MPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                   const int displs[], MPI_Datatype recvtype, MPI_Comm comm)
{
    if (!enabled(AGX_OP_ALLGATHERV))
        return PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
    int rc = agx_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
    if (rc == MPI_SUCCESS)
        count(AGX_OP_ALLGATHERV, comm);
    return rc;
}

AGX_EXPORT int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                  void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    if (!enabled(AGX_OP_ALLTOALLV))
        return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
    int rc = agx_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
    if (rc == MPI_SUCCESS)
        count(AGX_OP_ALLTOALLV, comm);
    return rc;
}

AGX_EXPORT int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count_, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    if (!enabled(AGX_OP_ALLREDUCE))
        return PMPI_Allreduce(sendbuf, recvbuf, count_, datatype, op, comm);
    int rc = agx_allreduce(sendbuf, recvbuf, count_, datatype, op, comm);
    if (rc == MPI_SUCCESS)
        count(AGX_OP_ALLREDUCE, comm);
    return rc;
}

/* Non-blocking allgather(v) and allreduce: through agx only while its progress thread runs
 * (the preload's MPI_Wait & co. advance agx's rounds, but a program may wait in a call that
 * does not, MPI_Recv or a barrier, for a peer that needs them): then agx's request
 * handed to MPI as a generalized request (agx_request_mpi); otherwise the library's own
 * call. An alltoallv request would run the library's call inside agx anyway: not
 * intercepted. */
int agx_preload_async_ok(int op)
{
    static int said;
    if (!enabled(op))
        return 0;
    if (agx_progress_async())
        return 1;
    if (!said && set("AGX_VERBOSE")) {
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

#define async_ok agx_preload_async_ok

/* agx's request r (made with code rc) as the program's MPI request. */
static int hand_over(int rc, agx_request *r, MPI_Request *request, agx_op op, MPI_Comm comm)
{
    if (rc == MPI_SUCCESS && (rc = agx_request_mpi(r, request)) == MPI_SUCCESS)
        count(op, comm);
    return rc;
}

AGX_EXPORT int MPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                              MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    agx_request r;
    if (!async_ok(AGX_OP_ALLGATHER))
        return PMPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
    return hand_over(agx_iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, &r), &r,
                     request, AGX_OP_ALLGATHER, comm);
}

AGX_EXPORT int MPI_Iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                               const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                               MPI_Request *request)
{
    agx_request r;
    if (!async_ok(AGX_OP_ALLGATHERV))
        return PMPI_Iallgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, request);
    return hand_over(agx_iallgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, &r),
                     &r, request, AGX_OP_ALLGATHERV, comm);
}

AGX_EXPORT int MPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                              MPI_Comm comm, MPI_Request *request)
{
    agx_request r;
    if (!async_ok(AGX_OP_ALLREDUCE))
        return PMPI_Iallreduce(sendbuf, recvbuf, count, datatype, op, comm, request);
    return hand_over(agx_iallreduce(sendbuf, recvbuf, count, datatype, op, comm, &r), &r, request, AGX_OP_ALLREDUCE,
                     comm);
}

/* MPI-IO: a file opened while file writes are enabled is agx's to watch; the others
 * (and every file when AGX_ENABLE leaves file_write_all out) are the library's alone. */
#define FILES enabled(NOPS)

AGX_EXPORT int MPI_File_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh)
{
    return FILES ? agx_mpi_file_open(comm, filename, amode, info, fh) : PMPI_File_open(comm, filename, amode, info, fh);
}

AGX_EXPORT int MPI_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                                 const char *datarep, MPI_Info info)
{
    return FILES ? agx_mpi_file_set_view(fh, disp, etype, filetype, datarep, info)
                 : PMPI_File_set_view(fh, disp, etype, filetype, datarep, info);
}

AGX_EXPORT int MPI_File_set_info(MPI_File fh, MPI_Info info)
{
    return FILES ? agx_mpi_file_set_info(fh, info) : PMPI_File_set_info(fh, info);
}

AGX_EXPORT int MPI_File_write_all(MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    return FILES ? agx_mpi_file_write_all(fh, buf, count, datatype, status)
                 : PMPI_File_write_all(fh, buf, count, datatype, status);
}

AGX_EXPORT int MPI_File_write_at_all(MPI_File fh, MPI_Offset offset, const void *buf, int count,
                                     MPI_Datatype datatype, MPI_Status *status)
{
    return FILES ? agx_mpi_file_write_at_all(fh, offset, buf, count, datatype, status)
                 : PMPI_File_write_at_all(fh, offset, buf, count, datatype, status);
}

AGX_EXPORT int MPI_File_close(MPI_File *fh)
{
    return FILES ? agx_mpi_file_close(fh) : PMPI_File_close(fh);
}

/* The report, on MPI_COMM_WORLD's rank 0: one line per operation it called through agx
 * ("agx-preload: rank 0: allgather 12 calls through agx: bruck 8, ring 4"). */
AGX_EXPORT int MPI_Finalize(void)
{
    if (set("AGX_STATS") || set("AGX_VERBOSE")) {
        int rank = 0;
        PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
        for (int op = 0; op < NOPS && rank == 0; op++) {
            if (!calls[op])
                continue;
            char line[1024];
            int n = snprintf(line, sizeof line, "agx-preload: rank %d: %s %lld calls through agx:", rank,
                             agx_op_name((agx_op)op), calls[op]);
            for (int i = 0; i < NALG && used[op][i].name && n < (int)sizeof line; i++)
                n += snprintf(line + n, sizeof line - (size_t)n, "%s %s %lld", i ? "," : "", used[op][i].name,
                              used[op][i].n);
            fprintf(stderr, "%s\n", line);
        }
    }
    return PMPI_Finalize();
}
