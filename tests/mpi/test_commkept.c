/*
 * Contexts kept from a freed communicator for the next congruent one (src/core/ctx_kept.c):
 * communicators made one per step (MPI_Comm_dup of the world), a forced algorithm on one
 * (not carried), two alive at once (one takes the kept context, one duplicates), a
 * non-blocking call still pending when its communicator is freed (it completes on the
 * private communicator, kept; Open MPI 4.1's own MPI_Iallreduce crashes there), a rank that offers nothing (AGX_TEST_KEPT_SKIP: every rank duplicates anew),
 * the same ranks reversed (not congruent: never takes the world's), halves, and more alive
 * at once than are kept. Each communicator: CALLS agx_allreduce (long, sum) of three size
 * classes, agx_allgather and agx_alltoallv, every element checked against its formula.
 * AGX_VERBOSE (set here; world rank 0's stderr read back between phases, on 3 or more
 * ranks): the communicators that take a kept context, exactly as many as each phase
 * allows; under AGX_ADAPT=1, each allreduce class's learning window ends once over the
 * one-per-step communicators (CALLS is shorter than a window, so without the learned
 * state carried no window would end). With MPI_THREAD_MULTIPLE (AGX_PROGRESS_THREAD=1),
 * two threads then make communicators per step at once, each from its own copy of the
 * world (each kept context's id must name one private communicator on every rank).
 *   [AGX_ADAPT=1] [AGX_PROGRESS_THREAD=1] test_commkept [--seed S]
 */
#include "agx.h"
#include "mpitest.h"


enum { CALLS = 8, STEPS = 12, MANY = 6, THREADS = 2, THREAD_STEPS = 6 };
static int rank, size;
static _Atomic int passed, failed;
static unsigned seed;
static const int counts[3] = {1, 512, 5120}; /* longs: 8 B, 4 KiB, 40 KiB */

/* CALLS of each class on c, every result checked. */
static void calls(MPI_Comm c, int step)
{
    int me, q, bad = 0;
    MPI_Comm_rank(c, &me), MPI_Comm_size(c, &q);
    long *in = malloc(sizeof(long) * 5120), *out = malloc(sizeof(long) * 5120 * (size_t)q);
    int *sc = malloc(sizeof(int) * (size_t)q * 4), *sd = sc + q, *rc = sc + 2 * q, *rd = sc + 3 * q;
    for (int k = 0; k < CALLS; k++)
        for (int s = 0; s < 3; s++) {
            long salt = (long)seed % 1000 + step * 7 + k + s, n = counts[s];
            for (long i = 0; i < n; i++)
                in[i] = me * 1000003L + i + salt;
            bad += agx_allreduce(in, out, (int)n, MPI_LONG, MPI_SUM, c) != MPI_SUCCESS;
            for (long i = 0; i < n; i++)
                bad += out[i] != (long)q * (q - 1) / 2 * 1000003L + q * (i + salt);
        }
    for (int k = 0; k < CALLS; k++) {
        long salt = (long)seed % 1000 + step * 5 + k;
        for (long i = 0; i < 128; i++)
            in[i] = me * 1000003L + i + salt;
        bad += agx_allgather(in, 128, MPI_LONG, out, 128, MPI_LONG, c) != MPI_SUCCESS;
        for (int r = 0; r < q; r++)
            for (long i = 0; i < 128; i++)
                bad += out[r * 128 + i] != r * 1000003L + i + salt;
        for (int r = 0; r < q; r++)
            sc[r] = rc[r] = 3, sd[r] = rd[r] = 3 * r, in[3 * r] = in[3 * r + 1] = in[3 * r + 2] = me * 1000L + r + salt;
        bad += agx_alltoallv(in, sc, sd, MPI_LONG, out, rc, rd, MPI_LONG, c) != MPI_SUCCESS;
        for (int r = 0; r < q; r++)
            for (int i = 0; i < 3; i++)
                bad += out[3 * r + i] != r * 1000L + me + salt;
    }
    CHECK_ON(c, bad == 0, "step %d: %d wrong elements or failed calls", step, bad);
    free(in), free(out), free(sc);
}

/* n communicators alive at once, each a duplicate of from, their calls interleaved. */
static void steps(MPI_Comm from, int n, int step)
{
    MPI_Comm c[MANY];
    for (int i = 0; i < n; i++)
        MPI_Comm_dup(from, &c[i]);
    for (int i = 0; i < n; i++)
        calls(c[i], step + i);
    for (int i = 0; i < n; i++)
        MPI_Comm_free(&c[i]);
}

/* world rank 0's stderr, read back: the lines since the last look that say a communicator
 * took a kept context, and that an allreduce class learned */
static mt_log log_;
static void look(int *took, int *learned)
{
    *took = *learned = 0;
    if (!log_.f)
        return;
    fflush(stderr);
    char line[2048];
    clearerr(log_.f);
    while (fgets(line, sizeof line, log_.f)) {
        *took += strstr(line, "takes what agx kept") != NULL, *learned += strstr(line, "allreduce learned on") != NULL;
        if (!strncmp(line, "FAIL", 4)) /* rank 0's own failures: shown, not only read */
            fputs(line, stdout);
    }
}

static MPI_Comm thread_world[THREADS];
static void *thread_steps(void *arg)
{
    int t = (int)(long)arg;
    for (int i = 0; i < THREAD_STEPS; i++)
        steps(thread_world[t], 1, 100 * (t + 1) + i);
    return NULL;
}

int main(int argc, char **argv)
{
    setenv("AGX_VERBOSE", "1", 1);
    mt_run r;
    mt_start(&argc, &argv, &r);
    rank = r.rank, size = r.size, seed = r.seed;
    if (!rank)
        printf("test_commkept: seed %u, %d ranks\n", seed, size);
    mt_log_start(&log_, rank, "commkept");
    int exact = size >= 3, adapt = getenv("AGX_ADAPT") && !strcmp(getenv("AGX_ADAPT"), "1");
    int took, learned, step = 0;
    for (int i = 0; i < STEPS; i++) /* one at a time: each takes the last one's */
        steps(MPI_COMM_WORLD, 1, step++);
    look(&took, &learned);
    CHECK(rank || took == STEPS - 1, "one per step: %d took a kept context, not %d", took, STEPS - 1);
    CHECK(rank || !adapt || !exact || learned == 3, "AGX_ADAPT=1: %d allreduce classes learned over the steps, "
          "not 3", learned);

    MPI_Comm c; /* a forced algorithm stays with its communicator */
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    agx_comm_set_algorithm(c, AGX_OP_ALLREDUCE, "ring"); /* before its first call: taken with the kept one */
    calls(c, step++);
    const char *last = "none";
    agx_comm_last_algorithm(c, AGX_OP_ALLREDUCE, &last);
    CHECK(size < 2 || !strcmp(last, "ring"), "the forced communicator ran %s", last);
    MPI_Comm_free(&c);
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    long x = 1, y = 0;
    last = "none";
    agx_allreduce(&x, &y, 1, MPI_LONG, MPI_SUM, c);
    agx_comm_last_algorithm(c, AGX_OP_ALLREDUCE, &last);
    CHECK(y == size && (size < 2 || strcmp(last, "ring") != 0), "the next communicator ran %s (sum %ld)", last, y);
    MPI_Comm_free(&c);
    steps(MPI_COMM_WORLD, 2, step), step += 2; /* two at once: one takes it, one duplicates */
    look(&took, &learned);
    CHECK(rank || took == 3, "forced, next, pair: %d took a kept context, not 3", took);

    MPI_Comm_dup(MPI_COMM_WORLD, &c); /* a request pending at MPI_Comm_free */
    long big[512], sum[512];
    for (int i = 0; i < 512; i++)
        big[i] = rank + i;
    agx_request q = AGX_REQUEST_NULL;
    int rq = agx_iallreduce(big, sum, 512, MPI_LONG, MPI_SUM, c, &q);
    MPI_Comm_free(&c);
    rq = rq == MPI_SUCCESS ? agx_wait(&q) : rq;
    int bad = rq != MPI_SUCCESS;
    for (int i = 0; i < 512; i++)
        bad += sum[i] != (long)size * (size - 1) / 2 + (long)size * i;
    CHECK(bad == 0, "the request pending at MPI_Comm_free: %d wrong", bad);
    steps(MPI_COMM_WORLD, 1, step++); /* the one with the request, kept */
    steps(MPI_COMM_WORLD, 1, step++); /* and again */
    look(&took, &learned);
    CHECK(rank || took == 3, "pending, after: %d took a kept context, not 3", took);

    setenv("AGX_TEST_KEPT_SKIP", "1", 1); /* world rank 1 offers none: every rank duplicates */
    steps(MPI_COMM_WORLD, 1, step++);
    unsetenv("AGX_TEST_KEPT_SKIP");
    steps(MPI_COMM_WORLD, 1, step++);
    look(&took, &learned);
    CHECK(rank || !exact || took == 1, "a rank offering none, then all: %d took a kept context, not 1", took);

    MPI_Comm rev, half;
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &rev); /* the same ranks, reversed */
    steps(rev, 1, step++);
    steps(rev, 1, step++);
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    for (int i = 0; i < 3; i++)
        steps(half, 1, step++);
    look(&took, &learned);
    /* at least 2: with regions (AGX_REGION_SIZE) agx's own lane communicators of a
     * region's first ranks are kept too, and a half may be congruent with one */
    CHECK(rank || !exact || took >= 2, "reversed, halves: %d took a kept context here, not at least 2", took);
    steps(MPI_COMM_WORLD, MANY, step), step += MANY; /* more than are kept */
    steps(MPI_COMM_WORLD, 1, step++);
    MPI_Comm_free(&rev);
    MPI_Comm_free(&half);

    int threaded = mt_threads(THREADS, thread_world, thread_steps);
    look(&took, &learned);
    mt_log_end(&log_);
    if (!rank)
        printf("test_commkept: %d steps%s; %d checks passed, %d failed\n", step,
               threaded ? ", two threads' communicators at once" : "", (int)passed, (int)failed);
    MPI_Finalize();
    return failed != 0;
}
