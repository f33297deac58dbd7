/*
 * msg_overhead: the processor's cost of one small message in the MPI library, the o of
 * LogGP (Alexandrov et al. 1995; measured as Culler et al. 1996 do: the time a process
 * spends inside the call, not the time the message travels). Two ranks; rank 0 sends
 * BLOCK messages of BYTES (4 by default) back to back, rank 1 receives them after they
 * have all arrived:
 *   o_s   MPI_Send (eager: the receive is not posted yet), per call
 *   o_is  MPI_Isend, per call (the MPI_Waitall after the block is not counted)
 *   o_r   MPI_Recv of a message that has already arrived, per call
 * A block's time has a fixed part (the first receive after the sleep pays about 10 us
 * here), so each overhead is the slope: (median block time of BLOCK messages - that of
 * BLOCK / 2) / (BLOCK / 2), medians over BLOCKS blocks. BLOCK stays small (64 at 4 B here) so that
 * eager sends never wait for the sleeping receiver. sim/platform.py's calibrated model
 * charges these as SMPI's smpi/os, smpi/ois and smpi/or (docs/RESULTS.md, "Cost model").
 *   tools/agxrun -n 2 build/bin/msg_overhead [BYTES] [BLOCKS] [BLOCK]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int rank;

/* med[0..3): the median time of a block of `block` sends, isends, receives (rank 1's
 * receives broadcast), in us */
static void measure(int bytes, int blocks, int block, double *med)
{
    char *buf = calloc((size_t)block, (size_t)bytes + 1);
    MPI_Request *rq = malloc(sizeof(MPI_Request) * (size_t)block);
    double *t[3];
    for (int k = 0; k < 3; k++)
        t[k] = malloc(sizeof(double) * (size_t)blocks);
    for (int b = -2; b < blocks; b++) { /* two warm-up blocks */
        for (int kind = 0; kind < 2; kind++) { /* 0: MPI_Send, 1: MPI_Isend */
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            if (rank == 0) {
                for (int i = 0; i < block; i++) {
                    if (kind == 0)
                        MPI_Send(buf + (size_t)i * bytes, bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
                    else
                        MPI_Isend(buf + (size_t)i * bytes, bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD, &rq[i]);
                }
                double dt = (MPI_Wtime() - t0) / block;
                if (kind == 1)
                    MPI_Waitall(block, rq, MPI_STATUSES_IGNORE);
                if (b >= 0)
                    t[kind][b] = dt * block;
            } else if (kind == 0) { /* everything has arrived: only the receive's cost */
                usleep(20000);
                t0 = MPI_Wtime();
                for (int i = 0; i < block; i++)
                    MPI_Recv(buf + (size_t)i * bytes, bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                if (b >= 0)
                    t[2][b] = MPI_Wtime() - t0;
            } else
                for (int i = 0; i < block; i++)
                    MPI_Recv(buf + (size_t)i * bytes, bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    }
    for (int k = rank ? 2 : 0; k < (rank ? 3 : 2); k++) { /* what this rank timed */
        qsort(t[k], (size_t)blocks, sizeof(double), cmp);
        med[k] = t[k][blocks / 2] * 1e6;
    }
    MPI_Bcast(&med[2], 1, MPI_DOUBLE, 1, MPI_COMM_WORLD);
    for (int k = 0; k < 3; k++)
        free(t[k]);
    free(rq);
    free(buf);
}

int main(int argc, char **argv)
{
    int size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int bytes = argc > 1 ? atoi(argv[1]) : 4, blocks = argc > 2 ? atoi(argv[2]) : 201;
    int block = argc > 3 ? atoi(argv[3]) : 64;
    if (size != 2 || bytes < 0 || blocks < 1 || block < 2) {
        if (rank == 0)
            fprintf(stderr, "usage: (2 ranks) msg_overhead [BYTES] [BLOCKS] [BLOCK >= 2]\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    double full[3], half[3];
    measure(bytes, blocks, block, full);
    measure(bytes, blocks, block / 2, half);
    if (rank == 0)
        printf("msg_overhead: %d B, slope of blocks of %d and %d, medians of %d: o_s %.3f us o_is %.3f us "
               "o_r %.3f us\n", bytes, block, block / 2, blocks, (full[0] - half[0]) / (block - block / 2),
               (full[1] - half[1]) / (block - block / 2), (full[2] - half[2]) / (block - block / 2));
    MPI_Finalize();
    return 0;
}
