/*
 * file_steps: what a file costs through libagx-preload.so when a program opens one per
 * step, as PnetCDF does (a new duplicate of the communicator at every open). An
 * unmodified MPI program (mpicc only): FILES times, on a new duplicate of MPI_COMM_WORLD,
 * MPI_File_open, CALLS collective reads (MPI_File_read_at_all; `write`: writes) of BLOCK
 * bytes per rank, each rank its own block, MPI_File_close. Prints, on rank 0, the median
 * over files of open-to-close and of the open alone (us). Run it plain and preloaded, in
 * turn.
 *   tools/agxrun -n P [--preload build/lib/libagx-preload.so] build/bin/file_steps PATH
 *       [FILES] [CALLS] [BLOCK] [read|write]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "steps.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, p;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    if (argc < 2) {
        if (!rank)
            fprintf(stderr, "usage: file_steps PATH [FILES] [CALLS] [BLOCK] [read|write]\n");
        MPI_Finalize();
        return 2;
    }
    int files = argc > 2 ? atoi(argv[2]) : 40, calls = argc > 3 ? atoi(argv[3]) : 6;
    int block = argc > 4 ? atoi(argv[4]) : 65536, writing = argc > 5 && !strcmp(argv[5], "write");
    if (files < 1 || calls < 0 || block < 1) {
        if (!rank)
            fprintf(stderr, "file_steps: FILES >= 1, CALLS >= 0, BLOCK >= 1\n");
        MPI_Finalize();
        return 2;
    }
    char *buf = malloc((size_t)block);
    double *total = malloc(sizeof(double) * (size_t)files), *open = malloc(sizeof(double) * (size_t)files);
    memset(buf, rank, (size_t)block);
    MPI_File fh; /* the file the reads read: every call's blocks, written once */
    MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
    for (int c = 0; c < calls; c++)
        MPI_File_write_at(fh, ((MPI_Offset)c * p + rank) * block, buf, block, MPI_BYTE, MPI_STATUS_IGNORE);
    MPI_File_close(&fh);
    for (int i = 0; i < files; i++) {
        MPI_Comm comm;
        MPI_Comm_dup(MPI_COMM_WORLD, &comm);
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        MPI_File_open(comm, argv[1], writing ? MPI_MODE_WRONLY : MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
        double t1 = MPI_Wtime();
        for (int c = 0; c < calls; c++) {
            MPI_Offset at = ((MPI_Offset)c * p + rank) * block;
            if (writing)
                MPI_File_write_at_all(fh, at, buf, block, MPI_BYTE, MPI_STATUS_IGNORE);
            else
                MPI_File_read_at_all(fh, at, buf, block, MPI_BYTE, MPI_STATUS_IGNORE);
        }
        MPI_File_close(&fh);
        total[i] = MPI_Wtime() - t0, open[i] = t1 - t0;
        MPI_Comm_free(&comm);
    }
    double mt = steps_median(total, files), mo = steps_median(open, files);
    if (!rank)
        printf("file_steps: %d ranks, %d files of %d %s of %d B per rank: open-to-close %.1f us, open %.1f us "
               "(median)\n", p, files, calls, writing ? "writes" : "reads", block, mt * 1e6, mo * 1e6);
    free(buf), free(total), free(open);
    MPI_Finalize();
    return 0;
}
