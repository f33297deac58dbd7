/*
 * dsum: an unmodified MPI program's commonest collective, MPI_Allreduce of N doubles under
 * MPI_SUM on MPI_COMM_WORLD, timed as a program runs it (mpicc only): 300 calls of
 * warm-up, then 200 blocks of 200 calls, each block after a barrier; rank 0 prints the
 * median block's time per call. Run it plain and preloaded, in turn (docs/RESULTS.md,
 * "Floating-point allreduce: the library's call").
 *   tools/agxrun -n P [--preload build/lib/libagx-preload.so] build/bin/dsum [N]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "steps.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, n = argc > 1 ? atoi(argv[1]) : 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (n < 1)
        n = 1;
    double *s = malloc(sizeof(double) * (size_t)n), *r = malloc(sizeof(double) * (size_t)n), t[200];
    for (int i = 0; i < n; i++)
        s[i] = rank + 0.5 * i;
    for (int i = 0; i < 300; i++)
        MPI_Allreduce(s, r, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    for (int b = 0; b < 200; b++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int i = 0; i < 200; i++)
            MPI_Allreduce(s, r, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        t[b] = (MPI_Wtime() - t0) / 200;
    }
    if (!rank)
        printf("%d doubles: %.3f us\n", n, steps_median(t, 200) * 1e6);
    free(s), free(r);
    MPI_Finalize();
    return 0;
}
