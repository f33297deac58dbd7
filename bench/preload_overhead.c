/*
 * preload_overhead: what going through libagx-preload.so costs per call. An unmodified
 * MPI program (mpicc only): blocks of MPI_Allgather (interposed by the preload library
 * when it is loaded) and PMPI_Allgather (always the MPI library's), interleaved, 8 B per
 * rank by default. Prints, on rank 0, the median over blocks of the per-call time of each
 * and their difference. OP (allgather, the default; allreduce: BYTES of MPI_INT under
 * MPI_SUM; alltoallv: BYTES to each rank) picks the collective: allgather's repeated calls
 * take agx's repeat path, the other two go through the selection on every call;
 * persistent: an allgather made once with MPI-4's MPI_Allgather_init (Open MPI 4.1:
 * MPIX_Allgather_init; agx's plan under the preload, with AGX_PROGRESS_THREAD=1) and once
 * with PMPI_ (the library's own persistent allgather), each block MPI_Start + MPI_Wait
 * CALLS times (the program initialises with MPI_THREAD_MULTIPLE, which agx's requests need);
 * persistent_allreduce: the same with MPI_Allreduce_init (BYTES of MPI_INT under MPI_SUM),
 * persistent_alltoallv with MPI_Alltoallv_init (BYTES to each rank); iallgather and
 * iallreduce: MPI_Iallgather / MPI_Iallreduce then MPI_Wait against the PMPI_ pair (agx's
 * request under the preload only with AGX_PROGRESS_THREAD=1; MPI_THREAD_MULTIPLE), with
 * COMPUTE microseconds of busy work between the start and the wait (OSU's overlap).
 *   tools/agxrun -n 2 --preload build/lib/libagx-preload.so \
 *       env AGX_ALLGATHER_ALGORITHM=native build/bin/preload_overhead [BYTES] [BLOCKS] [CALLS] [OP] [COMPUTE]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(OPEN_MPI) && MPI_VERSION < 4
#include <mpi-ext.h>
#endif
#if MPI_VERSION >= 4
#define INIT MPI_Allgather_init
#define PINIT PMPI_Allgather_init
#define INIT_AR MPI_Allreduce_init
#define PINIT_AR PMPI_Allreduce_init
#define INIT_A2A MPI_Alltoallv_init
#define PINIT_A2A PMPI_Alltoallv_init
#elif defined(OMPI_HAVE_MPI_EXT_PCOLLREQ)
#define INIT MPIX_Allgather_init
#define PINIT PMPIX_Allgather_init
#define INIT_AR MPIX_Allreduce_init
#define PINIT_AR PMPIX_Allreduce_init
#define INIT_A2A MPIX_Alltoallv_init
#define PINIT_A2A PMPIX_Alltoallv_init
#endif

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

enum { ALLGATHER, ALLREDUCE, ALLTOALLV, IALLGATHER, IALLREDUCE, PERSISTENT, PERSISTENT_AR, PERSISTENT_A2A };
static int op, *cnt, *dsp;
static double compute_s; /* i-calls: busy work between the start and the wait */

static void compute(void)
{
    double t0 = MPI_Wtime();
    while (MPI_Wtime() - t0 < compute_s)
        ;
}
static MPI_Request preq[2]; /* persistent: [1] made through MPI_ (the preload's), [0] through PMPI_ */

static void one(int interposed, char *s, char *r, int n)
{
    switch (op) {
    case ALLGATHER:
        if (interposed)
            MPI_Allgather(s, n, MPI_BYTE, r, n, MPI_BYTE, MPI_COMM_WORLD);
        else
            PMPI_Allgather(s, n, MPI_BYTE, r, n, MPI_BYTE, MPI_COMM_WORLD);
        break;
    case ALLREDUCE:
        if (interposed)
            MPI_Allreduce(s, r, n / (int)sizeof(int), MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        else
            PMPI_Allreduce(s, r, n / (int)sizeof(int), MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        break;
    case IALLGATHER:
    case IALLREDUCE: {
        MPI_Request q;
        if (op == IALLGATHER)
            (interposed ? MPI_Iallgather : PMPI_Iallgather)(s, n, MPI_BYTE, r, n, MPI_BYTE, MPI_COMM_WORLD, &q);
        else
            (interposed ? MPI_Iallreduce : PMPI_Iallreduce)(s, r, n / (int)sizeof(int), MPI_INT, MPI_SUM,
                                                            MPI_COMM_WORLD, &q);
        compute();
        (interposed ? MPI_Wait : PMPI_Wait)(&q, MPI_STATUS_IGNORE);
        break;
    }
    case PERSISTENT:
    case PERSISTENT_AR:
    case PERSISTENT_A2A:
        MPI_Start(&preq[interposed]);
        MPI_Wait(&preq[interposed], MPI_STATUS_IGNORE);
        break;
    default:
        if (interposed)
            MPI_Alltoallv(s, cnt, dsp, MPI_BYTE, r, cnt, dsp, MPI_BYTE, MPI_COMM_WORLD);
        else
            PMPI_Alltoallv(s, cnt, dsp, MPI_BYTE, r, cnt, dsp, MPI_BYTE, MPI_COMM_WORLD);
    }
}

static double block(int interposed, char *s, char *r, int n, int calls)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < calls; i++)
        one(interposed, s, r, n);
    double t = (MPI_Wtime() - t0) / calls, tmax;
    PMPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return tmax;
}

int main(int argc, char **argv)
{
    int rank, p, provided;
    int persistent = argc > 4 && !strncmp(argv[4], "persistent", 10);
    if (persistent || (argc > 4 && argv[4][0] == 'i'))
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    else
        MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    int n = argc > 1 ? atoi(argv[1]) : 8, blocks = argc > 2 ? atoi(argv[2]) : 200,
        calls = argc > 3 ? atoi(argv[3]) : 200;
    const char *opname = argc > 4 ? argv[4] : "allgather";
    compute_s = argc > 5 ? atof(argv[5]) * 1e-6 : 0;
    static const char *names[] = {"Allgather", "Allreduce", "Alltoallv", "Iallgather + Wait", "Iallreduce + Wait",
                                  "Allgather_init start", "Allreduce_init start", "Alltoallv_init start"};
    op = !strcmp(opname, "allreduce") ? ALLREDUCE : !strcmp(opname, "alltoallv") ? ALLTOALLV
       : !strcmp(opname, "iallgather") ? IALLGATHER : !strcmp(opname, "iallreduce") ? IALLREDUCE
       : !strcmp(opname, "persistent_allreduce") ? PERSISTENT_AR
       : !strcmp(opname, "persistent_alltoallv") ? PERSISTENT_A2A
       : persistent                   ? PERSISTENT : ALLGATHER;
#ifndef INIT
    persistent = persistent && (rank == 0 && fprintf(stderr, "this MPI has no persistent collectives\n"), 0);
#endif
    if (n < 0 || blocks < 1 || calls < 1 || (op == ALLGATHER && strcmp(opname, "allgather")) ||
        (op >= PERSISTENT && !persistent) ||
        (op == PERSISTENT && strcmp(opname, "persistent"))) {
        if (rank == 0)
            fprintf(stderr, "usage: preload_overhead [BYTES >= 0] [BLOCKS >= 1] [CALLS >= 1] "
                    "[allgather|allreduce|alltoallv|iallgather|iallreduce|persistent|persistent_allreduce|"
                    "persistent_alltoallv]\n");
        MPI_Finalize();
        return 1;
    }
    cnt = malloc(sizeof(int) * (size_t)p), dsp = malloc(sizeof(int) * (size_t)p);
    for (int i = 0; i < p; i++)
        cnt[i] = n, dsp[i] = i * n;
    char *s = calloc((size_t)n * p + 1, 1), *r = calloc((size_t)n * p + 1, 1);
    double *t[2] = {malloc(sizeof(double) * blocks), malloc(sizeof(double) * blocks)}, d[2];
#ifdef INIT
    if (op == PERSISTENT) {
        INIT(s, n, MPI_BYTE, r, n, MPI_BYTE, MPI_COMM_WORLD, MPI_INFO_NULL, &preq[1]);
        PINIT(s, n, MPI_BYTE, r, n, MPI_BYTE, MPI_COMM_WORLD, MPI_INFO_NULL, &preq[0]);
    }
    if (op == PERSISTENT_A2A) { /* BYTES to each rank, as alltoallv */
        INIT_A2A(s, cnt, dsp, MPI_BYTE, r, cnt, dsp, MPI_BYTE, MPI_COMM_WORLD, MPI_INFO_NULL, &preq[1]);
        PINIT_A2A(s, cnt, dsp, MPI_BYTE, r, cnt, dsp, MPI_BYTE, MPI_COMM_WORLD, MPI_INFO_NULL, &preq[0]);
    }
    if (op == PERSISTENT_AR) { /* BYTES of MPI_INT under MPI_SUM, as allreduce */
        INIT_AR(s, r, n / (int)sizeof(int), MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &preq[1]);
        PINIT_AR(s, r, n / (int)sizeof(int), MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &preq[0]);
    }
#endif
    for (int w = 0; w < 2; w++) /* warm up both paths */
        block(w, s, r, n, calls);
    for (int b = 0; b < blocks; b++)
        for (int w = 0; w < 2; w++) {
            int which = (b & 1) ? w : 1 - w; /* alternate which goes first */
            t[which][b] = block(which, s, r, n, calls);
        }
    for (int w = 0; w < 2; w++) {
        qsort(t[w], (size_t)blocks, sizeof(double), cmp);
        d[w] = t[w][blocks / 2];
    }
    if (rank == 0)
        printf("preload_overhead: %d ranks, %d B: MPI_%s %.3f us, PMPI_%s %.3f us, "
               "difference %.3f us per call (median of %d blocks of %d calls, interleaved)\n",
               p, n, names[op], d[1] * 1e6, names[op], d[0] * 1e6, (d[1] - d[0]) * 1e6, blocks, calls);
    for (int w = 0; w < 2 && op >= PERSISTENT; w++)
        MPI_Request_free(&preq[w]);
    free(s), free(r), free(t[0]), free(t[1]), free(cnt), free(dsp);
    MPI_Finalize();
    return 0;
}
