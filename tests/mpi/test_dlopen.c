/*
 * libagx loaded at run time, as a plugin host or an interpreter's foreign-function module
 * loads it (the program links MPI only): dlopen must succeed, which puts libagx's
 * per-thread state (its context cache, initial-exec TLS: src/core/context.c) in the
 * static TLS block's surplus, and its calls must give the library's answers. Rank 0 says
 * the seed; a few hundred agx_allreduce and agx_allgather calls of random sizes, on two
 * communicators in turn (the cache switching between them), each against PMPI_.
 *   test_dlopen PATH/libagx.so [--seed S]
 */
#include "agx.h"
#include "mpitest.h"

#include <dlfcn.h>

int main(int argc, char **argv)
{
    mt_run r;
    mt_start(&argc, &argv, &r);
    int failed = 0, checks = 0;
    void *h = argc > 1 ? dlopen(argv[1], RTLD_NOW | RTLD_LOCAL) : NULL;
    if (!h) {
        fprintf(stderr, "test_dlopen: rank %d: dlopen(%s): %s\n", r.rank, argc > 1 ? argv[1] : "(no path)",
                dlerror());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    __typeof__(agx_allreduce) *ar = (__typeof__(agx_allreduce) *)dlsym(h, "agx_allreduce");
    __typeof__(agx_allgather) *ag = (__typeof__(agx_allgather) *)dlsym(h, "agx_allgather");
    if (!ar || !ag) {
        fprintf(stderr, "test_dlopen: rank %d: agx_allreduce or agx_allgather not found\n", r.rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Comm comm[2];
    MPI_Comm_dup(MPI_COMM_WORLD, &comm[0]);
    MPI_Comm_split(MPI_COMM_WORLD, r.rank % 2, r.rank, &comm[1]);
    unsigned seed = r.seed; /* the same on every rank: the same sizes everywhere */
    enum { MAXN = 4096 };
    int *in = malloc(sizeof(int) * MAXN), *got = malloc(sizeof(int) * MAXN * r.size),
        *want = malloc(sizeof(int) * MAXN * r.size);
    for (int i = 0; i < 400; i++) {
        MPI_Comm c = comm[i % 2];
        int n = (int)(mt_rand(&seed) % MAXN), p;
        MPI_Comm_size(c, &p);
        for (int j = 0; j < n; j++)
            in[j] = (int)(mt_rand(&seed) % 1000) + r.rank * j;
        int rc = i % 4 < 2 ? ar(in, got, n, MPI_INT, MPI_SUM, c) : ag(in, n, MPI_INT, got, n, MPI_INT, c);
        if (i % 4 < 2)
            PMPI_Allreduce(in, want, n, MPI_INT, MPI_SUM, c);
        else
            PMPI_Allgather(in, n, MPI_INT, want, n, MPI_INT, c);
        size_t bytes = sizeof(int) * (size_t)n * (i % 4 < 2 ? 1 : (size_t)p);
        checks++;
        if (rc != MPI_SUCCESS || memcmp(got, want, bytes)) {
            failed++;
            fprintf(stderr, "test_dlopen: rank %d call %d (%s, %d ints): %s\n", r.rank, i,
                    i % 4 < 2 ? "allreduce" : "allgather", n, rc != MPI_SUCCESS ? "an error" : "a wrong answer");
        }
    }
    free(in), free(got), free(want);
    MPI_Comm_free(&comm[0]);
    MPI_Comm_free(&comm[1]);
    int all = 0;
    MPI_Allreduce(&failed, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (r.rank == 0)
        printf("test_dlopen: %d ranks, seed %u: %d checks per rank, %d failed\n", r.size, r.seed, checks, all);
    MPI_Finalize(); /* libagx stays loaded: its finalize hooks run here */
    return all != 0;
}
