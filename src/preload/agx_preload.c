/*
 * libagx-preload.so: agx under an unmodified MPI program (PMPI interposition, the way mpiP
 * and Darshan attach). Loaded with LD_PRELOAD (tools/agxrun --preload), it defines the C
 * bindings MPI_Allgather, MPI_Allgatherv, MPI_Alltoallv and MPI_Allreduce, each forwarding
 * to agx_<op> (intra- and inter-communicators), whose `native` algorithm calls PMPI_<op>;
 * MPI_Iallgather, MPI_Iallgatherv and MPI_Iallreduce while agx's progress thread runs
 * (else PMPI_), and MPI-4's persistent collectives (preload_persist.c);
 * and the MPI-IO calls collective writes and reads need (MPI_File_open, _set_view,
 * _set_info, _write_all, _write_at_all, _read_all, _read_at_all, _close ->
 * agx_mpi_file_*: the two-phase engine). agx itself
 * calls only PMPI_ collectives and file calls it does not define here, so nothing
 * recurses. MPI_Finalize prints what went through agx when AGX_STATS or AGX_VERBOSE is set.
 *
 *   AGX_ENABLE=0              every call goes straight to PMPI_ (agx is not touched)
 *   AGX_ENABLE=name[,name...] only those through agx (allgather, allgatherv, alltoallv,
 *                             allreduce, file_write_all, file_read_all); unset or 1: all
 *   AGX_<OP>_ALGORITHM=name   agx's choice forced, as for any agx program
 *
 * Fortran and C++: C++ programs call these C bindings, so they are intercepted. MPICH's
 * Fortran bindings (libmpichfort) call MPI_Allgather and the others, so Fortran programs
 * are intercepted too; Open MPI 4.1's (libmpi_mpifh, libmpi_usempif08) call PMPI_Allgather
 * directly, so there Fortran calls bypass agx. tests/preload_check.sh tests each claim
 * (README.md, "Without changing the program").
 */
#include "preload.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { NOPS = AGX_OP_LAST, NALG = 32 };
enum { FWRITE = NOPS, FREAD, NSLOT }; /* the report's slots: the operations, file writes, reads */
static int on[NSLOT], read_done;  /* on[slot]: through agx (AGX_ENABLE, read at the first call) */
static int report, fp_lib;        /* AGX_STATS or AGX_VERBOSE: count for the report; fp_lib: MPI_Allreduce */
static long long calls[NSLOT], bytes[NSLOT], left[NSLOT][AGX_LEFT_N];
static struct {
    const char *name; /* the registry's (static) name; for file writes and reads, two_phase
                       * or the reason the library's own call took it (a static string) */
    long long n;
} used[NSLOT][NALG];

static const char *slot_name(int op)
{
    return op < NOPS ? agx_op_name((agx_op)op) : op == FWRITE ? "file_write_all" : "file_read_all";
}
static const char *const left_why[AGX_LEFT_N] = {
    [AGX_LEFT_ENABLE] = "AGX_ENABLE leaves it out",
    [AGX_LEFT_THREAD] = "non-blocking or persistent, and agx's progress thread does not run",
    [AGX_LEFT_INTER] = "persistent on an inter-communicator",
    [AGX_LEFT_RANK] = "persistent, and a rank could not take it",
    [AGX_LEFT_TIMED] = "persistent inits whose starts, or non-blocking calls, the library's own ran faster, "
                       "timed (AGX_ADAPT)",
    [AGX_LEFT_BITS] = "calls or persistent inits whose reduction's bits depend on the order: the library's own, "
                      "untimed (AGX_ADAPT=1)",
};

int agx_preload_set(const char *name)
{
    const char *v = getenv(name);
    return v && *v && strcmp(v, "0");
}

static void read_enable(void)
{
    const char *e = getenv("AGX_ENABLE");
    report = agx_preload_set("AGX_STATS") || agx_preload_set("AGX_VERBOSE");
    fp_lib = getenv("AGX_ADAPT") && !strcmp(getenv("AGX_ADAPT"), "1") && !agx_preload_set("AGX_TUNING_FILE") &&
             !agx_preload_set("AGX_ALLREDUCE_ALGORITHM");
    for (int op = 0; op < NSLOT; op++) { /* each flag stored once: two threads' first calls
                                           * may both get here, and neither sees a passing 0 */
        int v = !e || !*e || !strcmp(e, "1");
        if (!v && strcmp(e, "0")) { /* a list of operation names: whole words only */
            const char *name = slot_name(op), *s = e;
            size_t len = strlen(name);
            for (; (s = strstr(s, name)); s += len)
                v |= (s == e || s[-1] == ',') && (s[len] == ',' || s[len] == '\0');
        }
        on[op] = v && !agx_preload_foreign(); /* built for another MPI than the program's: step aside */
    }
    __atomic_store_n(&read_done, 1, __ATOMIC_RELEASE); /* after on[] and report */
}

int agx_preload_enabled(int op)
{
    if (!__atomic_load_n(&read_done, __ATOMIC_ACQUIRE))
        read_enable();
    return on[op];
}

/* The drop-in learns on the run by default: a call of the default rule's choice times its
 * candidates, the library's own among them, over its first calls (AGX_ADAPT; unset only). */
__attribute__((constructor)) static void adapt_by_default(void) { setenv("AGX_ADAPT", "1", 0); }

/* In this file's entries: the flag's load, and the count's call only for a report. */
#define enabled(op) (__atomic_load_n(&read_done, __ATOMIC_ACQUIRE) ? on[op] : agx_preload_enabled(op))
#define count(op, comm, nbytes) (report ? agx_preload_count(op, comm, nbytes) : (void)0)

/* What a call delivers to this rank's receive buffer (or writes to a file), for the
 * report: n elements of t, times each peer's when all, or counts[] over the peers (the
 * remote group of an inter-communicator). 0 without a report: no cost per call then. */
long long agx_preload_bytes(MPI_Comm comm, int n, int all, const int *counts, MPI_Datatype t)
{
    int size = 0, peers = 1, inter = 0;
    if (!report || PMPI_Type_size(t, &size) != MPI_SUCCESS)
        return 0;
    if ((all || counts) && comm != MPI_COMM_NULL && PMPI_Comm_test_inter(comm, &inter) == MPI_SUCCESS)
        (inter ? PMPI_Comm_remote_size : PMPI_Comm_size)(comm, &peers);
    long long e = counts ? 0 : all ? (long long)n * peers : n;
    for (int i = 0; counts && i < peers; i++)
        e += counts[i];
    return e * size;
}

/* The algorithm agx ran, counted by name for the report at MPI_Finalize. */
void agx_preload_count(int op, MPI_Comm comm, long long nbytes)
{
    const char *name = NULL;
    if (!report) /* the report is all the counts are for: no cost per call without it */
        return;
    if (agx_comm_last_algorithm(comm, (agx_op)op, &name) != MPI_SUCCESS)
        name = NULL;
    agx_preload_count_name(op, name, nbytes);
}

/* A call left to the library, and why (the report's "left to the library" line). */
void agx_preload_left(int op, int why)
{
    if (report)
        left[op][why]++;
}

void agx_preload_count_name(int op, const char *name, long long nbytes)
{
    if (!report)
        return;
    calls[op]++;
    bytes[op] += nbytes;
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
    if (!enabled(AGX_OP_ALLGATHER) && (agx_preload_left(AGX_OP_ALLGATHER, AGX_LEFT_ENABLE), 1))
        return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    int rc = agx_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    if (rc == MPI_SUCCESS)
        count(AGX_OP_ALLGATHER, comm, agx_preload_bytes(comm, recvcount, 1, NULL, recvtype));
    return rc;
}

AGX_EXPORT int MPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                   const int displs[], MPI_Datatype recvtype, MPI_Comm comm)
{
    if (!enabled(AGX_OP_ALLGATHERV) && (agx_preload_left(AGX_OP_ALLGATHERV, AGX_LEFT_ENABLE), 1))
        return PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
    int rc = agx_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
    if (rc == MPI_SUCCESS)
        count(AGX_OP_ALLGATHERV, comm, agx_preload_bytes(comm, 0, 0, recvcounts, recvtype));
    return rc;
}

AGX_EXPORT int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                  void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    if (!enabled(AGX_OP_ALLTOALLV) && (agx_preload_left(AGX_OP_ALLTOALLV, AGX_LEFT_ENABLE), 1))
        return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
    int rc = agx_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
    if (rc == MPI_SUCCESS)
        count(AGX_OP_ALLTOALLV, comm, agx_preload_bytes(comm, 0, 0, recvcounts, recvtype));
    return rc;
}

/* A reduction of a named type whose bits depend on the order (floating point) under
 * AGX_ADAPT=1, with no forced algorithm nor rules file: the library's own call on the
 * program's communicator, as the non-blocking ones (agx's choice would be that call too,
 * after its context). A derived type goes to agx, which decides the same: its analysis
 * (64 ns a call; 2 for a named type, kept; the envelope 3.7) is not repeated here. */
static int named(MPI_Datatype t)
{
    int ni, na, nd, comb;
    return PMPI_Type_get_envelope(t, &ni, &na, &nd, &comb) == MPI_SUCCESS && comb == MPI_COMBINER_NAMED;
}

AGX_EXPORT int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count_, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    if ((!enabled(AGX_OP_ALLREDUCE) && (agx_preload_left(AGX_OP_ALLREDUCE, AGX_LEFT_ENABLE), 1)) ||
        (fp_lib && named(datatype) && !agx_allreduce_exact(datatype, op) &&
         (agx_preload_left(AGX_OP_ALLREDUCE, AGX_LEFT_BITS), 1)))
        return PMPI_Allreduce(sendbuf, recvbuf, count_, datatype, op, comm);
    int rc = agx_allreduce(sendbuf, recvbuf, count_, datatype, op, comm);
    if (rc == MPI_SUCCESS)
        count(AGX_OP_ALLREDUCE, comm, agx_preload_bytes(comm, count_, 0, NULL, datatype));
    return rc;
}

#define async_ok agx_preload_async_ok

/* A call the timing gave to the library (verdict 1), or whose bits only the library's
 * gives (2): AGX_STATS, AGX_ADAPT, preload_nbtune.c. */
static int timed(int op, int verdict)
{
    if (verdict)
        agx_preload_left(op, verdict == 2 ? AGX_LEFT_BITS : AGX_LEFT_TIMED);
    return verdict;
}

/* agx's request r (made with code rc) as the program's MPI request. */
static int hand_over(int rc, agx_request *r, MPI_Request *request, agx_op op, MPI_Comm comm, long long nbytes)
{
    if (rc == MPI_SUCCESS && (rc = agx_request_mpi(r, request)) == MPI_SUCCESS)
        count(op, comm, nbytes);
    return rc;
}

AGX_EXPORT int MPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                              MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    agx_request r;
    if (!async_ok(AGX_OP_ALLGATHER) ||
        timed(AGX_OP_ALLGATHER, agx_nbtune_allgather(sendbuf, sendcount, sendtype, recvcount, recvtype, comm)))
        return PMPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
    return hand_over(agx_iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, &r), &r,
                     request, AGX_OP_ALLGATHER, comm, agx_preload_bytes(comm, recvcount, 1, NULL, recvtype));
}

AGX_EXPORT int MPI_Iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                               const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                               MPI_Request *request)
{
    agx_request r;
    if (!async_ok(AGX_OP_ALLGATHERV) ||
        timed(AGX_OP_ALLGATHERV,
              agx_nbtune_allgatherv(sendbuf, sendcount, sendtype, recvcounts, displs, recvtype, comm)))
        return PMPI_Iallgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, request);
    return hand_over(agx_iallgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, &r),
                     &r, request, AGX_OP_ALLGATHERV, comm, agx_preload_bytes(comm, 0, 0, recvcounts, recvtype));
}

AGX_EXPORT int MPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                              MPI_Comm comm, MPI_Request *request)
{
    agx_request r;
    if (!async_ok(AGX_OP_ALLREDUCE) || timed(AGX_OP_ALLREDUCE, agx_nbtune_allreduce(sendbuf, count, datatype, op, comm)))
        return PMPI_Iallreduce(sendbuf, recvbuf, count, datatype, op, comm, request);
    return hand_over(agx_iallreduce(sendbuf, recvbuf, count, datatype, op, comm, &r), &r, request, AGX_OP_ALLREDUCE,
                     comm, agx_preload_bytes(comm, count, 0, NULL, datatype));
}

/* MPI-IO: a file opened while file writes or reads are enabled is agx's to watch; the
 * others (and every file when AGX_ENABLE leaves both file_write_all and file_read_all
 * out) are the library's alone. */
#define FILES (enabled(FWRITE) || enabled(FREAD))

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

/* A collective write's (read's: slot FREAD) outcome for the report: agx's two-phase
 * engine, or the library's own call and why (agreed over the file's ranks, so rank 0's
 * count is every rank's). */
static int moved(int slot, int rc, MPI_File fh, int count, MPI_Datatype datatype)
{
    static char engine[NALG][64]; /* "two_phase/<data kernel>": static names for the counts */
    static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    const char *why = NULL, *name;
    if (rc != MPI_SUCCESS || !report)
        return rc;
    if ((slot == FREAD ? agx_mpi_file_last_read : agx_mpi_file_last)(fh, &why)) {
        char want[64];
        snprintf(want, sizeof want, "two_phase/%s", why ? why : "none");
        pthread_mutex_lock(&mu);
        int i = 0;
        while (i < NALG - 1 && engine[i][0] && strcmp(engine[i], want))
            i++;
        if (!engine[i][0])
            strcpy(engine[i], want);
        name = engine[i];
        pthread_mutex_unlock(&mu);
    } else
        name = why;
    agx_preload_count_name(slot, name, agx_preload_bytes(MPI_COMM_NULL, count, 0, NULL, datatype));
    return rc;
}

AGX_EXPORT int MPI_File_write_all(MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    if (!enabled(FWRITE) && (agx_preload_left(FWRITE, AGX_LEFT_ENABLE), 1))
        return PMPI_File_write_all(fh, buf, count, datatype, status);
    return moved(FWRITE, agx_mpi_file_write_all(fh, buf, count, datatype, status), fh, count, datatype);
}

AGX_EXPORT int MPI_File_write_at_all(MPI_File fh, MPI_Offset offset, const void *buf, int count,
                                     MPI_Datatype datatype, MPI_Status *status)
{
    if (!enabled(FWRITE) && (agx_preload_left(FWRITE, AGX_LEFT_ENABLE), 1))
        return PMPI_File_write_at_all(fh, offset, buf, count, datatype, status);
    return moved(FWRITE, agx_mpi_file_write_at_all(fh, offset, buf, count, datatype, status), fh, count, datatype);
}

AGX_EXPORT int MPI_File_read_all(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    if (!enabled(FREAD) && (agx_preload_left(FREAD, AGX_LEFT_ENABLE), 1))
        return PMPI_File_read_all(fh, buf, count, datatype, status);
    return moved(FREAD, agx_mpi_file_read_all(fh, buf, count, datatype, status), fh, count, datatype);
}

AGX_EXPORT int MPI_File_read_at_all(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype,
                                    MPI_Status *status)
{
    if (!enabled(FREAD) && (agx_preload_left(FREAD, AGX_LEFT_ENABLE), 1))
        return PMPI_File_read_at_all(fh, offset, buf, count, datatype, status);
    return moved(FREAD, agx_mpi_file_read_at_all(fh, offset, buf, count, datatype, status), fh, count, datatype);
}

AGX_EXPORT int MPI_File_close(MPI_File *fh)
{
    return FILES ? agx_mpi_file_close(fh) : PMPI_File_close(fh);
}

/* The report, on MPI_COMM_WORLD's rank 0: one line per operation it called through agx
 * ("agx-preload: rank 0: allgather 12 calls through agx (768 B received): bruck 8, ring 4";
 * file writes: "file_write_all 3 calls through agx (3072 B written): two_phase/tam 2, the
 * library's own (atomic mode) 1"), then what the preload left to the library and why. */
static void print_report(int rank)
{
    char line[1024];
    for (int op = 0; op < NSLOT; op++) {
        if (!calls[op])
            continue;
        int n = snprintf(line, sizeof line, "agx-preload: rank %d: %s %lld calls through agx (%lld B %s):", rank,
                         slot_name(op), calls[op], bytes[op], op < NOPS || op == FREAD ? "received" : "written");
        for (int i = 0; i < NALG && used[op][i].name && n < (int)sizeof line; i++) {
            const char *name = used[op][i].name;
            int lib = op >= NOPS && strncmp(name, "two_phase/", 10);
            n += snprintf(line + n, sizeof line - (size_t)n, "%s %s%s%s %lld", i ? "," : "",
                          lib ? "the library's own (" : "", name, lib ? ")" : "", used[op][i].n);
        }
        fprintf(stderr, "%s\n", line);
    }
    for (int op = 0; op < NSLOT; op++)
        for (int w = 0; w < AGX_LEFT_N; w++)
            if (left[op][w])
                fprintf(stderr, "agx-preload: rank %d: left to the library: %s %lld calls (%s)\n", rank,
                        slot_name(op), left[op][w], left_why[w]);
    agx_print_windows("agx-preload: rank 0: ", stderr);
}

AGX_EXPORT int MPI_Finalize(void)
{
    if (agx_preload_set("AGX_STATS") || agx_preload_set("AGX_VERBOSE")) {
        int rank = 0;
        PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
        if (rank == 0)
            print_report(rank);
    }
    agx_nbtune_finalize();
    return PMPI_Finalize();
}
