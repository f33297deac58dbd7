/*
 * dsum: an unmodified MPI program's commonest collective, MPI_Allreduce of N doubles under
 * MPI_SUM on MPI_COMM_WORLD, timed as a program runs it (mpicc only): 300 calls of
 * warm-up, then 200 blocks of 200 calls, each block after a barrier; rank 0 prints the
 * median block's time per call. Run it plain and preloaded, in turn (docs/RESULTS.md,
 * "Floating-point allreduce: the library's call"). FORM: b, MPI_Allreduce; i,
 * MPI_Iallreduce and MPI_Wait; p, one MPI_Allreduce_init, then MPI_Start and MPI_Wait
 * (these two initialise with MPI_THREAD_MULTIPLE, as agx's progress thread needs).
 *   tools/agxrun -n P [--preload build/lib/libagx-preload.so] build/bin/dsum [N [FORM]]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "steps.h"

static char form = 'b';
static MPI_Request pers = MPI_REQUEST_NULL;

static void sum(const double *s, double *r, int n)
{
    MPI_Request q;
    if (form == 'i')
        MPI_Iallreduce(s, r, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &q), MPI_Wait(&q, MPI_STATUS_IGNORE);
    else if (form == 'p')
        MPI_Start(&pers), MPI_Wait(&pers, MPI_STATUS_IGNORE);
    else
        MPI_Allreduce(s, r, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    int rank, n = argc > 1 ? atoi(argv[1]) : 1, level;
    if (argc > 2 && strchr("ip", argv[2][0]))
        form = argv[2][0];
    if (form != 'b')
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &level);
    else
        MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (n < 1)
        n = 1;
    double *s = malloc(sizeof(double) * (size_t)n), *r = malloc(sizeof(double) * (size_t)n), t[200];
    for (int i = 0; i < n; i++)
        s[i] = rank + 0.5 * i;
#ifdef INIT_AR
    if (form == 'p')
        INIT_AR(s, r, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &pers);
#else
    if (form == 'p') {
        fprintf(stderr, "dsum: this MPI has no persistent allreduce\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
#endif
    for (int i = 0; i < 300; i++)
        sum(s, r, n);
    for (int b = 0; b < 200; b++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int i = 0; i < 200; i++)
            sum(s, r, n);
        t[b] = (MPI_Wtime() - t0) / 200;
    }
    if (!rank)
        printf("%d doubles (%c): %.3f us\n", n, form, steps_median(t, 200) * 1e6);
    if (form == 'p')
        MPI_Request_free(&pers);
    free(s), free(r);
    MPI_Finalize();
    return 0;
}
