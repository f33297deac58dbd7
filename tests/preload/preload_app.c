/*
 * An unmodified MPI program (built with mpicc alone: no agx header, no agx library), in the
 * style of MPICH's collective tests: MPI_Allgather / MPI_Allgatherv on MPI_COMM_WORLD, on a
 * split communicator and on an inter-communicator, with MPI_IN_PLACE and zero counts, plus
 * MPI_Allreduce and MPI_Alltoallv; every result checked against values computed here. With
 * --nonblocking: MPI_Iallgather(v) beside point-to-point requests, under MPI_THREAD_MULTIPLE.
 * tests/preload_check.sh runs it with and without libagx-preload.so. Exit 0 when every
 * check held; prints the failing checks otherwise.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size, fails, checks;

#define EXPECT(cond, ...)                                                                  \
    do {                                                                                   \
        checks++;                                                                          \
        if (!(cond)) {                                                                     \
            fails++;                                                                       \
            fprintf(stderr, "preload_app: rank %d: ", rank);                               \
            fprintf(stderr, __VA_ARGS__);                                                  \
            fprintf(stderr, "\n");                                                         \
        }                                                                                  \
    } while (0)

static int val(int r, int i) { return r * 1000 + i; }

/* Allgather of n ints from every rank of c (in place or not), rank numbers of c. */
static void allgather(MPI_Comm c, int n, int inplace, const char *what)
{
    int me, p;
    MPI_Comm_rank(c, &me);
    MPI_Comm_size(c, &p);
    int *sb = malloc(sizeof(int) * (size_t)(n + 1)), *rb = malloc(sizeof(int) * (size_t)(n * p + 1));
    for (int i = 0; i < n; i++)
        sb[i] = val(me, i);
    for (int i = 0; i < n * p; i++)
        rb[i] = inplace && i / n == me ? val(me, i % n) : -1;
    MPI_Allgather(inplace ? MPI_IN_PLACE : sb, n, MPI_INT, rb, n, MPI_INT, c);
    int bad = 0;
    for (int i = 0; i < n * p; i++)
        bad += rb[i] != val(i / n, i % n);
    EXPECT(!bad, "%s allgather n=%d%s: %d wrong", what, n, inplace ? " in place" : "", bad);
    free(sb), free(rb);
}

/* Allgatherv: rank r sends (r * 7 + shift) % 5 ints (zeros included), reversed displs. */
static void allgatherv(MPI_Comm c, int shift, int inplace, const char *what)
{
    int me, p;
    MPI_Comm_rank(c, &me);
    MPI_Comm_size(c, &p);
    int *cnt = malloc(sizeof(int) * (size_t)p), *dsp = malloc(sizeof(int) * (size_t)p), tot = 0;
    for (int r = 0; r < p; r++)
        cnt[r] = (r * 7 + shift) % 5;
    for (int r = p - 1; r >= 0; r--)
        dsp[r] = tot, tot += cnt[r];
    int *sb = malloc(sizeof(int) * 8), *rb = malloc(sizeof(int) * (size_t)(tot + 1));
    for (int i = 0; i < cnt[me]; i++)
        sb[i] = val(me, i);
    for (int i = 0; i < tot; i++)
        rb[i] = -1;
    if (inplace)
        for (int i = 0; i < cnt[me]; i++)
            rb[dsp[me] + i] = val(me, i);
    MPI_Allgatherv(inplace ? MPI_IN_PLACE : sb, cnt[me], MPI_INT, rb, cnt, dsp, MPI_INT, c);
    int bad = 0;
    for (int r = 0; r < p; r++)
        for (int i = 0; i < cnt[r]; i++)
            bad += rb[dsp[r] + i] != val(r, i);
    EXPECT(!bad, "%s allgatherv shift=%d%s: %d wrong", what, shift, inplace ? " in place" : "", bad);
    free(cnt), free(dsp), free(sb), free(rb);
}

/* Intergroup: each side receives the other group's blocks (k ints per rank of it). */
static void intergroup(void)
{
    if (size < 2)
        return;
    MPI_Comm half, inter;
    int color = rank % 2, lr, rs;
    MPI_Comm_split(MPI_COMM_WORLD, color, rank, &half);
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, !color, 7, &inter);
    MPI_Comm_rank(inter, &lr);
    MPI_Comm_remote_size(inter, &rs);
    int k = 3, sb[3], *rb = malloc(sizeof(int) * (size_t)(k * rs)), *cnt = malloc(sizeof(int) * (size_t)rs);
    int *dsp = malloc(sizeof(int) * (size_t)rs), bad = 0;
    for (int i = 0; i < k; i++)
        sb[i] = val(color * 100 + lr, i);
    MPI_Allgather(sb, k, MPI_INT, rb, k, MPI_INT, inter);
    for (int i = 0; i < k * rs; i++)
        bad += rb[i] != val(!color * 100 + i / k, i % k);
    EXPECT(!bad, "inter-communicator allgather: %d wrong", bad);
    /* allgatherv: remote rank j sent j % 3 ints (zeros included) */
    int tot = 0;
    for (int j = 0; j < rs; j++)
        cnt[j] = j % 3, dsp[j] = tot, tot += cnt[j];
    for (int i = 0; i < tot; i++)
        rb[i] = -1;
    MPI_Allgatherv(sb, lr % 3, MPI_INT, rb, cnt, dsp, MPI_INT, inter);
    bad = 0;
    for (int j = 0; j < rs; j++)
        for (int i = 0; i < cnt[j]; i++)
            bad += rb[dsp[j] + i] != val(!color * 100 + j, i);
    EXPECT(!bad, "inter-communicator allgatherv: %d wrong", bad);
    free(rb), free(cnt), free(dsp);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&half);
}

static void allreduce(void)
{
    int n = 1000, *a = malloc(sizeof(int) * (size_t)n), *b = malloc(sizeof(int) * (size_t)n), bad = 0;
    for (int i = 0; i < n; i++)
        a[i] = rank + i;
    MPI_Allreduce(a, b, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    for (int i = 0; i < n; i++)
        bad += b[i] != size * (size - 1) / 2 + size * i;
    EXPECT(!bad, "allreduce sum: %d wrong", bad);
    MPI_Allreduce(MPI_IN_PLACE, a, n, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    bad = 0;
    for (int i = 0; i < n; i++)
        bad += a[i] != size - 1 + i;
    EXPECT(!bad, "allreduce max in place: %d wrong", bad);
    free(a), free(b);
}

/* Alltoallv: rank r sends (r + d) % 4 ints to rank d (zeros included). */
static void alltoallv(void)
{
    int *sc = malloc(sizeof(int) * (size_t)size), *sd = malloc(sizeof(int) * (size_t)size);
    int *rc = malloc(sizeof(int) * (size_t)size), *rd = malloc(sizeof(int) * (size_t)size), st = 0, rt = 0;
    for (int d = 0; d < size; d++) {
        sc[d] = (rank + d) % 4, sd[d] = st, st += sc[d];
        rc[d] = (d + rank) % 4, rd[d] = rt, rt += rc[d];
    }
    int *sb = malloc(sizeof(int) * (size_t)(st + 1)), *rb = malloc(sizeof(int) * (size_t)(rt + 1)), bad = 0;
    for (int d = 0; d < size; d++)
        for (int i = 0; i < sc[d]; i++)
            sb[sd[d] + i] = val(rank, d * 10 + i);
    MPI_Alltoallv(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, MPI_COMM_WORLD);
    for (int s = 0; s < size; s++)
        for (int i = 0; i < rc[s]; i++)
            bad += rb[rd[s] + i] != val(s, rank * 10 + i);
    EXPECT(!bad, "alltoallv: %d wrong", bad);
    free(sc), free(sd), free(rc), free(rd), free(sb), free(rb);
}

/* --nonblocking: MPI_Iallgather and MPI_Iallgatherv outstanding together with a
 * point-to-point exchange, completed by one MPI_Waitall, several times with new data. */
static void nonblocking(void)
{
    int n = 3, *sb = malloc(sizeof(int) * (size_t)n), *rb = malloc(sizeof(int) * (size_t)(n * size)), bad = 0;
    int *cnt = malloc(sizeof(int) * (size_t)size), *dsp = malloc(sizeof(int) * (size_t)size), tot = 0;
    for (int i = 0; i < size; i++)
        cnt[i] = i % 3, dsp[i] = tot, tot += cnt[i];
    int *vb = malloc(sizeof(int) * (size_t)(tot + 1)), token = rank, got = -1;
    for (int it = 0; it < 4; it++) {
        MPI_Request q[4];
        MPI_Status st[4]; /* not MPI_STATUSES_IGNORE: MPICH's access attributes make GCC warn */
        for (int i = 0; i < n; i++)
            sb[i] = val(rank, i + it);
        MPI_Iallgather(sb, n, MPI_INT, rb, n, MPI_INT, MPI_COMM_WORLD, &q[0]);
        MPI_Iallgatherv(sb, rank % 3, MPI_INT, vb, cnt, dsp, MPI_INT, MPI_COMM_WORLD, &q[1]);
        MPI_Irecv(&got, 1, MPI_INT, (rank + size - 1) % size, 5, MPI_COMM_WORLD, &q[2]);
        MPI_Isend(&token, 1, MPI_INT, (rank + 1) % size, 5, MPI_COMM_WORLD, &q[3]);
        MPI_Waitall(4, q, st);
        for (int r = 0; r < size; r++)
            for (int i = 0; i < n; i++)
                bad += rb[r * n + i] != val(r, i + it);
        for (int r = 0; r < size; r++)
            for (int i = 0; i < cnt[r]; i++)
                bad += vb[dsp[r] + i] != val(r, i + it);
        bad += got != (rank + size - 1) % size;
    }
    EXPECT(!bad, "MPI_Iallgather / MPI_Iallgatherv with a point-to-point exchange in one MPI_Waitall: %d wrong", bad);
    free(sb), free(rb), free(cnt), free(dsp), free(vb);
}

int main(int argc, char **argv)
{
    int provided, nb = argc > 1 && !strcmp(argv[1], "--nonblocking");
    if (nb) /* a program that asks for threads, as agx's progress thread needs */
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    else
        MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (nb) {
        nonblocking();
        int all;
        MPI_Allreduce(&fails, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        if (rank == 0)
            printf("preload_app --nonblocking: p = %d, %d failed in all\n", size, all);
        MPI_Finalize();
        return all ? 1 : 0;
    }
    int reps = argc > 1 ? atoi(argv[1]) : 1;
    MPI_Comm odd;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &odd); /* reversed order */
    for (int r = 0; r < reps; r++)
        for (int n = 0; n <= 600; n = n ? n * 5 : 1) { /* 0, 1, 5, 25, 125 */
            allgather(MPI_COMM_WORLD, n, r % 2, "world");
            allgather(odd, n, !(r % 2), "split");
        }
    for (int shift = 0; shift < 5; shift++) {
        allgatherv(MPI_COMM_WORLD, shift, shift % 2, "world");
        allgatherv(odd, shift, !(shift % 2), "split");
    }
    intergroup();
    allreduce();
    alltoallv();
    MPI_Comm_free(&odd);
    int all;
    MPI_Allreduce(&fails, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("preload_app: p = %d, %d checks per rank, %d failed in all\n", size, checks, all);
    MPI_Finalize();
    return all ? 1 : 0;
}
