/*
 * comm_steps: what a communicator costs through libagx-preload.so when a program makes
 * one per step (MPI_Comm_dup, or MPI_Comm_split of MPI_COMM_WORLD in halves), as codes do
 * per phase and PnetCDF per file. An unmodified MPI program (mpicc only): STEPS times, a
 * new communicator, CALLS MPI_Allreduce (MPI_LONG, MPI_SUM), MPI_Allgather or
 * MPI_Alltoallv (BYTES to every rank) of BYTES per rank on it, dallreduce: MPI_Allreduce
 * of doubles (MPI_SUM; the library's own call under AGX_ADAPT=1), or MPI_Iallreduce then
 * MPI_Wait, or allreduce_init / alltoallv_init: one persistent MPI_Allreduce_init or
 * MPI_Alltoallv_init (Open MPI 4.1: MPIX_...) started CALLS times and freed (these initialise with
 * MPI_THREAD_MULTIPLE, as agx's progress thread needs: AGX_PROGRESS_THREAD=1),
 * MPI_Comm_free. Checks every result. Prints, on rank 0, the median over
 * steps of the calls' time (the first call to the last; the communicator made before,
 * the same plain or preloaded) in us. Run it plain and preloaded, in turn.
 *   tools/agxrun -n P [--preload build/lib/libagx-preload.so] build/bin/comm_steps
 *       [STEPS] [CALLS] [BYTES] [allreduce|dallreduce|allgather|alltoallv|iallreduce|allreduce_init|alltoallv_init]
 *       [dup|split]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "steps.h"

int main(int argc, char **argv)
{
    int rank, p, nb = argc > 4 && !strcmp(argv[4], "iallreduce"), level;
    int pers = argc > 4 && (!strcmp(argv[4], "allreduce_init") || !strcmp(argv[4], "alltoallv_init"));
    if (nb || pers)
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &level);
    else
        MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    int steps = argc > 1 ? atoi(argv[1]) : 100, calls = argc > 2 ? atoi(argv[2]) : 20;
    long bytes = argc > 3 ? atol(argv[3]) : 8;
    int gather = argc > 4 && !strcmp(argv[4], "allgather"), a2a = argc > 4 && !strncmp(argv[4], "alltoallv", 9);
    int split = argc > 5 && !strcmp(argv[5], "split"), dbl = argc > 4 && !strcmp(argv[4], "dallreduce");
    long n = bytes / (long)sizeof(long);
#ifndef INIT_AR
    if (pers) {
        if (!rank)
            fprintf(stderr, "comm_steps: this MPI has no persistent collectives\n");
        MPI_Finalize();
        return 2;
    }
#endif
    if (steps < 1 || calls < 1 || n < 1) {
        if (!rank)
            fprintf(stderr, "usage: comm_steps [STEPS >= 1] [CALLS >= 1] [BYTES >= 8] [allreduce|dallreduce|allgather|"
                            "alltoallv|iallreduce|allreduce_init|alltoallv_init] [dup|split]\n");
        MPI_Finalize();
        return 2;
    }
    long *in = malloc(sizeof(long) * (size_t)n * (size_t)p), *out = malloc(sizeof(long) * (size_t)n * (size_t)p);
    double *din = malloc(sizeof(double) * (size_t)n), *dout = malloc(sizeof(double) * (size_t)n);
    int *cnt = malloc(sizeof(int) * (size_t)p * 2), *dis = cnt + p;
    double *t = malloc(sizeof(double) * (size_t)steps);
    int bad = 0;
    MPI_Request pq = MPI_REQUEST_NULL; /* allreduce_init's */
    for (int s = 0; s < steps; s++) {
        MPI_Comm c;
        if (split)
            MPI_Comm_split(MPI_COMM_WORLD, rank < p / 2, rank, &c);
        else
            MPI_Comm_dup(MPI_COMM_WORLD, &c);
        int me, q;
        MPI_Comm_rank(c, &me);
        MPI_Comm_size(c, &q);
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int k = 0; k < calls; k++) {
            for (long i = 0; i < n * (a2a ? q : 1); i++) /* alltoallv: block j to rank j */
                in[i] = (long)me * 1000003 + i + k + s;
            for (int j = 0; j < q; j++)
                cnt[j] = (int)n, dis[j] = j * (int)n;
            if (a2a && !pers)
                MPI_Alltoallv(in, cnt, dis, MPI_LONG, out, cnt, dis, MPI_LONG, c);
            else if (gather)
                MPI_Allgather(in, (int)n, MPI_LONG, out, (int)n, MPI_LONG, c);
            else if (nb) {
                MPI_Request q;
                MPI_Iallreduce(in, out, (int)n, MPI_LONG, MPI_SUM, c, &q);
                MPI_Wait(&q, MPI_STATUS_IGNORE);
            } else if (pers) {
#ifdef INIT_AR
                if (k == 0 && a2a)
                    INIT_A2A(in, cnt, dis, MPI_LONG, out, cnt, dis, MPI_LONG, c, MPI_INFO_NULL, &pq);
                else if (k == 0)
                    INIT_AR(in, out, (int)n, MPI_LONG, MPI_SUM, c, MPI_INFO_NULL, &pq);
                MPI_Start(&pq);
                MPI_Wait(&pq, MPI_STATUS_IGNORE);
                if (k == calls - 1)
                    MPI_Request_free(&pq);
#endif
            }
            else if (dbl) { /* exact: the sums stay under 2^53 */
                for (long i = 0; i < n; i++)
                    din[i] = (double)in[i];
                MPI_Allreduce(din, dout, (int)n, MPI_DOUBLE, MPI_SUM, c);
                out[k % n] = (long)dout[k % n];
            } else
                MPI_Allreduce(in, out, (int)n, MPI_LONG, MPI_SUM, c);
            long i = k % n, want = (long)q * (q - 1) / 2 * 1000003 + (long)q * (i + k + s);
            int r = k % q;
            if (a2a) /* rank r's block me */
                bad += out[r * n + i] != (long)r * 1000003 + me * n + i + k + s;
            else
                bad += gather ? out[r * n + i] != (long)r * 1000003 + i + k + s : out[i] != want;
        }
        t[s] = MPI_Wtime() - t0;
        MPI_Comm_free(&c);
    }
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    double med = steps_median(t, steps);
    const char *what = pers ? (a2a ? "persistent alltoallv starts" : "persistent allreduce starts")
                       : a2a ? "alltoallvs" : gather ? "allgathers" : nb ? "iallreduces" : dbl ? "double allreduces" : "allreduces";
    if (!rank)
        printf("comm_steps: %d ranks, %d %s communicators, %d %s of %ld B each: %.1f us (median)%s\n", p, steps,
               split ? "split" : "dup", calls, what, n * (long)sizeof(long), med * 1e6, bad ? " WRONG RESULTS" : "");
    free(in), free(out), free(t), free(cnt), free(din), free(dout);
    MPI_Finalize();
    return bad != 0;
}
