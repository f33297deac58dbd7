/*
 * An unmodified MPI program (built with mpicc alone: no agx header, no agx library), in the
 * style of MPICH's collective tests: MPI_Allgather / MPI_Allgatherv on MPI_COMM_WORLD, on a
 * split communicator and on an inter-communicator, with MPI_IN_PLACE and zero counts, plus
 * MPI_Allreduce and MPI_Alltoallv; every result checked against values computed here. With
 * --nonblocking: MPI_Iallgather(v) and MPI_Iallreduce beside point-to-point requests, and on
 * a communicator per step, under MPI_THREAD_MULTIPLE; with --persistent: MPI-4's
 * MPI_Allgather_init & co. (Open MPI 4.1: MPIX_..._init), started many times beside
 * persistent point-to-point requests, then an allreduce made again per step.
 * tests/preload_check.sh runs it with and without libagx-preload.so. Exit 0 when every
 * check held; prints the failing checks otherwise.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../mpi/mpi4init.h"

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
        MPI_Request q[5];
        MPI_Status st[5]; /* not MPI_STATUSES_IGNORE: MPICH's access attributes make GCC warn */
        int isum = 0, ione = rank + it;
        for (int i = 0; i < n; i++)
            sb[i] = val(rank, i + it);
        MPI_Iallgather(sb, n, MPI_INT, rb, n, MPI_INT, MPI_COMM_WORLD, &q[0]);
        MPI_Iallgatherv(sb, rank % 3, MPI_INT, vb, cnt, dsp, MPI_INT, MPI_COMM_WORLD, &q[1]);
        MPI_Irecv(&got, 1, MPI_INT, (rank + size - 1) % size, 5, MPI_COMM_WORLD, &q[2]);
        MPI_Isend(&token, 1, MPI_INT, (rank + 1) % size, 5, MPI_COMM_WORLD, &q[3]);
        MPI_Iallreduce(&ione, &isum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &q[4]);
        MPI_Waitall(5, q, st);
        for (int r = 0; r < size; r++)
            for (int i = 0; i < n; i++)
                bad += rb[r * n + i] != val(r, i + it);
        for (int r = 0; r < size; r++)
            for (int i = 0; i < cnt[r]; i++)
                bad += vb[dsp[r] + i] != val(r, i + it);
        bad += got != (rank + size - 1) % size;
        bad += isum != size * (size - 1) / 2 + size * it;
    }
    EXPECT(!bad, "MPI_Iallgather / MPI_Iallgatherv / MPI_Iallreduce with a point-to-point exchange in one "
           "MPI_Waitall: %d wrong", bad);
    /* a communicator per step: a freed one's handle may come back as the next one's, whose
     * state the preload must not take for the old one's; the last step's ranks are the
     * world's reversed, which takes no verdict of the others' */
    for (int it = 0; it < 5; it++) {
        MPI_Comm c;
        if (it < 4)
            MPI_Comm_dup(MPI_COMM_WORLD, &c);
        else
            MPI_Comm_split(MPI_COMM_WORLD, 0, -rank, &c);
        for (int k = 0; k < 2; k++) { /* the second call finds what the first left on c */
            MPI_Request q;
            int isum = 0, ione = rank + it + k;
            MPI_Iallreduce(&ione, &isum, 1, MPI_INT, MPI_SUM, c, &q);
            MPI_Wait(&q, MPI_STATUS_IGNORE);
            EXPECT(isum == size * (size - 1) / 2 + size * (it + k), "MPI_Iallreduce on a new communicator, step %d, "
                   "call %d: %d", it, k, isum);
        }
        MPI_Comm_free(&c);
    }
    /* negative displacements on rank 0 alone (legal: its buffer's start moved), on a new
     * communicator, whose first allgatherv is timed: a layout one rank cannot copy is
     * agreed, never a rank left waiting */
    MPI_Comm c;
    MPI_Request q;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    int shift = rank == 0 ? tot + 1 : 0, *big = calloc((size_t)(tot + shift + 1), sizeof(int));
    for (int i = 0; i < size; i++)
        dsp[i] -= shift;
    for (int i = 0; i < n; i++)
        sb[i] = val(rank, i + 7);
    MPI_Iallgatherv(sb, rank % 3, MPI_INT, big + shift, cnt, dsp, MPI_INT, c, &q);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    int wrong = 0;
    for (int r = 0; r < size; r++)
        for (int i = 0; i < cnt[r]; i++)
            wrong += big[shift + dsp[r] + i] != val(r, i + 7);
    EXPECT(!wrong, "MPI_Iallgatherv with negative displacements on rank 0: %d wrong", wrong);
    MPI_Comm_free(&c);
    /* a floating-point sum, whose bits depend on the order: the library's own call under
     * AGX_ADAPT=1 (the sums here are exact whatever the order) */
    for (int k = 0; k < 3; k++) {
        double d = rank + 0.25 * k, dsum = -1;
        MPI_Iallreduce(&d, &dsum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &q);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
        EXPECT(dsum == size * (size - 1) / 2 + 0.25 * k * size, "MPI_Iallreduce of a double, call %d: %g", k, dsum);
    }
    free(big);
    free(sb), free(rb), free(cnt), free(dsp), free(vb);
}

#ifdef INIT
/* --persistent: an allgather (on MPI_COMM_WORLD and on the reversed split), an uneven
 * allgatherv, allreduces of ints (sum) and doubles (max) and an uneven alltoallv, each
 * made once and started 6 times with new data, beside a persistent point-to-point ring:
 * MPI_Startall of all of them (agx's and the program's mixed in one array) and MPI_Waitall,
 * or MPI_Request_get_status, MPI_Testsome and MPI_Waitsome in turn and MPI_Testany, or
 * MPI_Start one by one completed by MPI_Test, MPI_Wait and MPI_Waitany; then
 * MPI_Request_free. */
static void persistent(MPI_Comm odd)
{
    enum { N = 3, NR = 8 };
    int op_, np_;
    MPI_Comm_rank(odd, &op_);
    MPI_Comm_size(odd, &np_);
    int *sb = malloc(sizeof(int) * N), *rb = malloc(sizeof(int) * (size_t)(N * size)), bad = 0, part[9] = {0};
    int *ob = malloc(sizeof(int) * (size_t)(N * np_));
    int *cnt = malloc(sizeof(int) * (size_t)size), *dsp = malloc(sizeof(int) * (size_t)size), tot = 0;
    for (int i = 0; i < size; i++)
        cnt[i] = i % 3, dsp[i] = tot, tot += cnt[i];
    int *vb = malloc(sizeof(int) * (size_t)(tot + 1)), isum[4], iin[4], token = 0, got = -1;
    double dmax[2], din[2];
    /* alltoallv: rank r sends (r + j) % 3 ints to j */
    int *sc = malloc(sizeof(int) * (size_t)size), *sd = malloc(sizeof(int) * (size_t)size);
    int *rc = malloc(sizeof(int) * (size_t)size), *rd = malloc(sizeof(int) * (size_t)size), st = 0, rt = 0;
    for (int j = 0; j < size; j++) {
        sc[j] = (rank + j) % 3, sd[j] = st, st += sc[j];
        rc[j] = (j + rank) % 3, rd[j] = rt, rt += rc[j];
    }
    int *ab = malloc(sizeof(int) * (size_t)(st + 1)), *arb = malloc(sizeof(int) * (size_t)(rt + 1));
    MPI_Request q[NR];
    MPI_Status sts[NR];
    INIT(Allgather)(sb, N, MPI_INT, rb, N, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, &q[0]);
    INIT(Allgatherv)(sb, rank % 3, MPI_INT, vb, cnt, dsp, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, &q[1]);
    INIT(Allreduce)(iin, isum, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &q[2]);
    INIT(Allreduce)(din, dmax, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD, MPI_INFO_NULL, &q[3]);
    INIT(Alltoallv)(ab, sc, sd, MPI_INT, arb, rc, rd, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, &q[4]);
    INIT(Allgather)(sb, N, MPI_INT, ob, N, MPI_INT, odd, MPI_INFO_NULL, &q[5]);
    MPI_Recv_init(&got, 1, MPI_INT, (rank + size - 1) % size, 5, MPI_COMM_WORLD, &q[6]);
    MPI_Send_init(&token, 1, MPI_INT, (rank + 1) % size, 5, MPI_COMM_WORLD, &q[7]);
    for (int it = 0; it < 6; it++) {
        for (int i = 0; i < N; i++)
            sb[i] = val(rank, i + it);
        for (int i = 0; i < 4; i++)
            iin[i] = rank * (i + 1) + it;
        din[0] = rank + 0.25 * it, din[1] = -rank - 0.5 * it;
        for (int j = 0, k = 0; j < size; j++)
            for (int i = 0; i < sc[j]; i++)
                ab[k++] = val(rank, j * 10 + i + it);
        token = rank + it;
        if (it % 3 == 0) {
            MPI_Startall(NR, q); /* agx's requests and the program's, mixed */
            MPI_Waitall(NR, q, sts);
        } else if (it % 3 == 2) { /* MPI_Request_get_status, then MPI_Testsome / _Waitsome in turn */
            MPI_Startall(NR, q);
            int flag = 0, outc = 0, idx[NR], seen[NR] = {0}, done = 0;
            while (!flag)
                MPI_Request_get_status(q[1], &flag, MPI_STATUS_IGNORE);
            for (int turn = 0; done < NR; turn++) {
                if (turn % 2 == 0)
                    MPI_Testsome(NR, q, &outc, idx, sts);
                else
                    MPI_Waitsome(NR, q, &outc, idx, sts);
                if (outc == MPI_UNDEFINED)
                    break;
                for (int k = 0; k < outc; k++)
                    part[8] += seen[idx[k]]++ != 0; /* each completes once */
                done += outc;
            }
            int any = 0;
            MPI_Testany(NR, q, &idx[0], &any, MPI_STATUS_IGNORE); /* all inactive: flag, MPI_UNDEFINED */
            part[8] += done != NR || !any || idx[0] != MPI_UNDEFINED;
        } else {
            for (int k = NR - 1; k >= 0; k--)
                MPI_Start(&q[k]);
            int flag = 0, idx = -1;
            while (!flag)
                MPI_Test(&q[0], &flag, &sts[0]);
            MPI_Wait(&q[4], &sts[4]);
            MPI_Waitany(1, &q[5], &idx, &sts[5]);
            MPI_Waitall(NR, q, sts); /* q[0], q[4], q[5] are inactive: complete at once */
        }
        for (int r = 0; r < size; r++)
            for (int i = 0; i < N; i++)
                part[0] += rb[r * N + i] != val(r, i + it);
        for (int r = 0; r < size; r++)
            for (int i = 0; i < cnt[r]; i++)
                part[1] += vb[dsp[r] + i] != val(r, i + it);
        for (int i = 0; i < 4; i++)
            part[2] += isum[i] != (i + 1) * size * (size - 1) / 2 + size * it;
        part[3] += dmax[0] != size - 1 + 0.25 * it || dmax[1] != -0.5 * it;
        for (int j = 0, k = 0; j < size; j++)
            for (int i = 0; i < rc[j]; i++)
                part[4] += arb[k++] != val(j, rank * 10 + i + it);
        for (int r = 0; r < np_; r++) /* odd's rank r is world rank base - 2r, rank order reversed */
            for (int i = 0; i < N; i++)
                part[5] += ob[r * N + i] != val(rank % 2 + 2 * (np_ - 1 - r), i + it);
        part[6] += got != (rank + size - 1) % size + it;
    }
    for (int k = 0; k < NR; k++)
        MPI_Request_free(&q[k]);
    for (int k = 0; k < NR; k++)
        part[7] += q[k] != MPI_REQUEST_NULL;
    /* an init per step, its buffers new each time: the integer sum and the alltoallv made
     * again on the world, started once and freed (their classes timed at the first init
     * only: kept on the world) */
    for (int it = 0; it < 2; it++) {
        int in4[4], out4[4] = {0};
        MPI_Request r, r2;
        for (int i = 0; i < 4; i++)
            in4[i] = rank * (i + 1) + it;
        for (int j = 0, k = 0; j < size; j++)
            for (int i = 0; i < sc[j]; i++)
                ab[k++] = val(rank, j * 10 + i + it + 50);
        INIT(Allreduce)(in4, out4, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
        INIT(Alltoallv)(ab, sc, sd, MPI_INT, arb, rc, rd, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, &r2);
        MPI_Start(&r);
        MPI_Start(&r2);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        MPI_Wait(&r2, MPI_STATUS_IGNORE);
        for (int i = 0; i < 4; i++)
            part[2] += out4[i] != (i + 1) * size * (size - 1) / 2 + size * it;
        for (int j = 0, k = 0; j < size; j++)
            for (int i = 0; i < rc[j]; i++)
                part[4] += arb[k++] != val(j, rank * 10 + i + it + 50);
        MPI_Request_free(&r);
        MPI_Request_free(&r2);
    }
    for (int k = 0; k < 9; k++)
        bad += part[k];
    EXPECT(!bad, "persistent allgather(v), allreduce and alltoallv beside persistent point-to-point: %d wrong "
           "(allgather %d, allgatherv %d, int sum %d, double max %d, alltoallv %d, split allgather %d, "
           "point-to-point %d, not freed %d, completions %d)", bad, part[0], part[1], part[2], part[3], part[4],
           part[5], part[6], part[7], part[8]);
    free(sb), free(rb), free(ob), free(cnt), free(dsp), free(vb), free(sc), free(sd), free(rc), free(rd), free(ab);
    free(arb);
}
#else
static void persistent(MPI_Comm odd)
{
    (void)odd;
    if (rank == 0)
        printf("preload_app --persistent: this MPI has no persistent collectives\n");
}
#endif

int main(int argc, char **argv)
{
    int provided, nb = argc > 1 && !strcmp(argv[1], "--nonblocking"), pe = argc > 1 && !strcmp(argv[1], "--persistent");
    if (nb || pe) /* a program that asks for threads, as agx's progress thread needs */
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    else
        MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (nb || pe) {
        MPI_Comm odd;
        MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &odd); /* reversed order */
        if (nb)
            nonblocking();
        else
            persistent(odd);
        MPI_Comm_free(&odd);
        int all;
        MPI_Allreduce(&fails, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        if (rank == 0)
            printf("preload_app %s: p = %d, %d failed in all\n", argv[1], size, all);
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
