/*
 * preload_overhead: what going through libagx-preload.so costs per call. An unmodified
 * MPI program (mpicc only): blocks of MPI_Allgather (interposed by the preload library
 * when it is loaded) and PMPI_Allgather (always the MPI library's), interleaved, 8 B per
 * rank by default. Prints, on rank 0, the median over blocks of the per-call time of each
 * and their difference.
 *   tools/agxrun -n 2 --preload build/lib/libagx-preload.so \
 *       env AGX_ALLGATHER_ALGORITHM=native build/bin/preload_overhead [BYTES] [BLOCKS] [CALLS]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double block(int interposed, char *s, char *r, int n, int calls)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < calls; i++)
        if (interposed)
            MPI_Allgather(s, n, MPI_BYTE, r, n, MPI_BYTE, MPI_COMM_WORLD);
        else
            PMPI_Allgather(s, n, MPI_BYTE, r, n, MPI_BYTE, MPI_COMM_WORLD);
    double t = (MPI_Wtime() - t0) / calls, tmax;
    PMPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return tmax;
}

int main(int argc, char **argv)
{
    int rank, p;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    int n = argc > 1 ? atoi(argv[1]) : 8, blocks = argc > 2 ? atoi(argv[2]) : 200,
        calls = argc > 3 ? atoi(argv[3]) : 200;
    char *s = calloc((size_t)n + 1, 1), *r = calloc((size_t)n * p + 1, 1);
    double *t[2] = {malloc(sizeof(double) * blocks), malloc(sizeof(double) * blocks)}, d[2];
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
        printf("preload_overhead: %d ranks, %d B: MPI_Allgather %.3f us, PMPI_Allgather %.3f us, "
               "difference %.3f us per call (median of %d blocks of %d calls, interleaved)\n",
               p, n, d[1] * 1e6, d[0] * 1e6, (d[1] - d[0]) * 1e6, blocks, calls);
    free(s), free(r), free(t[0]), free(t[1]);
    MPI_Finalize();
    return 0;
}
