/*
 * A timing shim for bench/hpcc/fft_probe.sh (LD_PRELOAD before libagx-preload.so): every
 * rank writes its MPI_Wtime calls, MPI_Allreduce's entries and exits (the call passed on
 * to the next library loaded: agx's drop-in, or the MPI library) and MPI_Alltoall's
 * entries to FFT_TRACE_DIR/RANK.txt, with the host's clock (CLOCK_MONOTONIC, one for
 * every process of the host; Open MPI's MPI_Wtime counts from each process's start).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static FILE *out;

static void note(char what, int bytes)
{
    if (!out) {
        int me;
        char name[4096];
        PMPI_Comm_rank(MPI_COMM_WORLD, &me);
        snprintf(name, sizeof name, "%s/%d.txt", getenv("FFT_TRACE_DIR") ? getenv("FFT_TRACE_DIR") : ".", me);
        if (!(out = fopen(name, "w")))
            return;
    }
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    fprintf(out, "%c %d %.9f\n", what, bytes, (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec);
}

double MPI_Wtime(void)
{
    note('W', 0);
    return PMPI_Wtime();
}

int MPI_Allreduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm comm)
{
    static int (*next)(const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm);
    if (!next)
        *(void **)&next = dlsym(RTLD_NEXT, "MPI_Allreduce");
    int size;
    PMPI_Type_size(t, &size);
    note('A', n * size);
    int rc = next(s, r, n, t, op, comm);
    note('a', 0);
    return rc;
}

int MPI_Alltoall(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt, MPI_Comm comm)
{
    note('T', sn);
    return PMPI_Alltoall(s, sn, st, r, rn, rt, comm);
}

int MPI_Finalize(void) /* passed on too: the drop-in's own finalize (AGX_STATS) */
{
    static int (*next)(void);
    *(void **)&next = dlsym(RTLD_NEXT, "MPI_Finalize");
    if (out)
        fclose(out);
    out = NULL;
    return next();
}
