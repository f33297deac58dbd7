/* Results beyond 2 GiB through agx's algorithms, each forced in turn, every result checked
 * by formula (no second copy for the library's result): allgather / allgatherv of B bytes
 * per rank (allgatherv: one B-byte contiguous element per rank), allreduce of N unsigneds
 * summed in place, alltoallv of N 16-byte elements to every rank. Memory per rank: about
 * (p + 1) B, 4 N plus the algorithm's scratch, 32 p N; docs/RESULTS.md "Results over 2 GiB".
 *   bigcount allgather|allgatherv|allreduce|alltoallv SIZE ALGORITHM... */
#include "agx.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned char pat(long long r, long long i) { return (unsigned char)(r * 131 + i * 7 + (i >> 20)); }

static long long gather(const char *op, long long n, int p, int me, const char *alg, int *rc, const char **ran)
{
    int v = !strcmp(op, "allgatherv");
    agx_op o = v ? AGX_OP_ALLGATHERV : AGX_OP_ALLGATHER;
    unsigned char *s = malloc((size_t)n), *r = malloc((size_t)n * (size_t)p);
    long long bad = 0;
    if (!s || !r) {
        free(s), free(r);
        *rc = MPI_ERR_NO_MEM;
        return 0;
    }
    for (long long i = 0; i < n; i++)
        s[i] = pat(me, i);
    memset(r, 0xee, (size_t)n * (size_t)p);
    agx_comm_set_algorithm(MPI_COMM_WORLD, o, alg);
    if (v) {
        int *c = malloc(p * sizeof *c), *d = malloc(p * sizeof *d);
        MPI_Datatype blk;
        MPI_Type_contiguous((int)n, MPI_BYTE, &blk), MPI_Type_commit(&blk);
        for (int k = 0; k < p; k++)
            c[k] = 1, d[k] = k;
        *rc = agx_allgatherv(s, 1, blk, r, c, d, blk, MPI_COMM_WORLD);
        MPI_Type_free(&blk), free(c), free(d);
    } else {
        *rc = agx_allgather(s, (int)n, MPI_BYTE, r, (int)n, MPI_BYTE, MPI_COMM_WORLD);
    }
    agx_comm_last_algorithm(MPI_COMM_WORLD, o, ran);
    for (long long k = 0; k < p; k++)
        for (long long i = 0; i < n; i++)
            bad += r[k * n + i] != pat(k, i);
    free(s), free(r);
    return bad;
}

static long long reduce(long long n, int p, int me, const char *alg, int *rc, const char **ran)
{
    unsigned *x = malloc((size_t)n * sizeof *x);
    long long bad = 0;
    if (!x) {
        *rc = MPI_ERR_NO_MEM;
        return 0;
    }
    for (long long i = 0; i < n; i++)
        x[i] = (unsigned)(i * 3 + me);
    agx_comm_set_algorithm(MPI_COMM_WORLD, AGX_OP_ALLREDUCE, alg);
    *rc = agx_allreduce(MPI_IN_PLACE, x, (int)n, MPI_UNSIGNED, MPI_SUM, MPI_COMM_WORLD);
    agx_comm_last_algorithm(MPI_COMM_WORLD, AGX_OP_ALLREDUCE, ran);
    unsigned long long q = (unsigned long long)p;
    for (long long i = 0; i < n; i++)
        bad += x[i] != (unsigned)(q * (unsigned long long)i * 3 + q * (q - 1) / 2);
    free(x);
    return bad;
}

static long long exchange(long long n, int p, int me, const char *alg, int *rc, const char **ran)
{
    MPI_Datatype e;
    MPI_Type_contiguous(16, MPI_BYTE, &e), MPI_Type_commit(&e);
    long long by = n * 16, bad = 0;
    unsigned char *s = malloc((size_t)(by * p)), *r = malloc((size_t)(by * p));
    int *c = malloc(p * sizeof *c), *d = malloc(p * sizeof *d);
    if (!s || !r || !c || !d) {
        *rc = MPI_ERR_NO_MEM;
    } else {
        for (int k = 0; k < p; k++) {
            c[k] = (int)n, d[k] = (int)(n * k);
            for (long long i = 0; i < by; i++)
                s[k * by + i] = pat(me * p + k, i);
        }
        memset(r, 0xee, (size_t)(by * p));
        agx_comm_set_algorithm(MPI_COMM_WORLD, AGX_OP_ALLTOALLV, alg);
        *rc = agx_alltoallv(s, c, d, e, r, c, d, e, MPI_COMM_WORLD);
        agx_comm_last_algorithm(MPI_COMM_WORLD, AGX_OP_ALLTOALLV, ran);
        for (long long k = 0; k < p; k++)
            for (long long i = 0; i < by; i++)
                bad += r[k * by + i] != pat(k * p + me, i);
    }
    free(s), free(r), free(c), free(d), MPI_Type_free(&e);
    return bad;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int p, me, failed = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &p), MPI_Comm_rank(MPI_COMM_WORLD, &me);
    if (argc < 4) {
        if (!me)
            fprintf(stderr, "usage: bigcount allgather|allgatherv|allreduce|alltoallv SIZE ALGORITHM...\n");
        MPI_Finalize();
        return 2;
    }
    const char *op = argv[1];
    long long n = atoll(argv[2]);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    for (int a = 3; a < argc; a++) {
        double t = MPI_Wtime();
        const char *ran = "?";
        int rc = MPI_SUCCESS;
        long long bad = !strcmp(op, "allreduce")   ? reduce(n, p, me, argv[a], &rc, &ran)
                        : !strcmp(op, "alltoallv") ? exchange(n, p, me, argv[a], &rc, &ran)
                                                   : gather(op, n, p, me, argv[a], &rc, &ran);
        long long v[2] = {bad, rc != MPI_SUCCESS}, all[2];
        MPI_Allreduce(v, all, 2, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
        if (!me)
            printf("bigcount: %s %s (ran %s): %lld ranks failed, %lld wrong, %.1f s\n", op, argv[a], ran, all[1],
                   all[0], MPI_Wtime() - t);
        fflush(stdout);
        failed |= all[0] || all[1];
    }
    MPI_Finalize();
    return failed;
}
