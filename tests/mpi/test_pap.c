/*
 * PAP-aware allgathers (Proficz21) against PMPI_Allgather, with the monitor thread.
 *
 *   test_pap            MPI_THREAD_MULTIPLE (launch with tools/agxrun --threads)
 *   test_pap --single   MPI_Init only: agx_pat_init must say so and bdr / bslb must
 *                       run as ring / gather_bcast, still correct
 *   test_pap --quick    fewer shapes and 100 iterations (for valgrind)
 *
 * Part 1, differential: bdr and bslb over arrival patterns (none, random up to 6 ms,
 * one late rank, rank 0 late, the slowest predicted fastest, one rank that never calls
 * progress, progress marks that differ between ranks), counts {0, 1, 7, 1001}, the five
 * datatype cases of mpitest.h, and in-place; every result compared with PMPI_Allgather.
 * Part 2, the background really works: with one rank 60 ms late, bdr's late rank and
 * bslb's root receive blocks before they arrive (after the first epoch measured tau);
 * and the counters are exact: bdr sends p(p-1) messages of one block whatever its
 * schedule, bslb 2(p-1) (short + rest) carrying (p-1) blocks.
 * Part 3, lifecycle: an epoch never consumed (compute_begin twice), agx_pat_finalize
 * with an epoch open, re-init, errors (bad fraction, double init, bdr on allgatherv, bdr
 * on another communicator falls back to ring), 1000 back-to-back iterations (a result
 * check each); and the
 * program ends with MPI_Finalize while the monitor still runs (its shutdown hook).
 */
#include "agx.h"
#include "mpitest.h"

#include <string.h>
#include <unistd.h>

static int rank, np, fails, checks, quick;
static unsigned seed;

#undef CHECK /* this test checks per rank (threads), not collectively */
#define CHECK(c, ...)                                                                  \
    do {                                                                               \
        checks++;                                                                      \
        if (!(c)) {                                                                    \
            fails++;                                                                   \
            fprintf(stderr, "rank %d FAIL %s:%d: ", rank, __FILE__, __LINE__);         \
            fprintf(stderr, __VA_ARGS__);                                              \
            fprintf(stderr, " (seed %u)\n", seed);                                     \
        }                                                                              \
    } while (0)

enum { PAT_NONE, PAT_RANDOM, PAT_LAST_LATE, PAT_ROOT_LATE, PAT_LIAR, PAT_NO_PROGRESS,
       PAT_MIXED_MARKS, PAT_COUNT };
static const char *pat_names[] = {"none", "random", "last-late", "root-late", "liar",
                                  "no-progress", "mixed-marks"};

/* One compute phase of pattern pat: this rank's delay in microseconds, and its marks. */
static void compute(int pat, unsigned *rs)
{
    int us = 0, marks = 1;
    switch (pat) {
    case PAT_RANDOM: us = (int)(mt_rand(rs) % 6000); break;
    case PAT_LAST_LATE: us = rank == np - 1 ? 5000 : 0; break;
    case PAT_ROOT_LATE: us = rank == 0 ? 5000 : 0; break;
    case PAT_LIAR: us = rank == np - 1 ? 5000 : 500; break;
    case PAT_NO_PROGRESS: us = 300 * rank; marks = rank != 1; break;
    case PAT_MIXED_MARKS: us = 400 * (np - rank); marks = rank % 2; break;
    }
    agx_pat_compute_begin();
    if (pat == PAT_LIAR && rank == np - 1) {
        agx_pat_progress(0.99); /* predicts itself first, arrives last */
        usleep((unsigned)us);
    } else if (marks) {
        usleep((unsigned)us / 2);
        agx_pat_progress(0.5);
        usleep((unsigned)us - (unsigned)us / 2);
    } else {
        usleep((unsigned)us);
    }
    agx_pat_compute_end();
}

static void fill(char *b, size_t n, int salt)
{
    for (size_t i = 0; i < n; i++)
        b[i] = (char)(i * 31 + (size_t)salt * 7 + 3);
}

/* One allgather with algorithm alg after a compute phase of pattern pat, checked. */
static void one(const char *alg, int pat, int count, const mt_dtcase *dt, int inplace,
                unsigned *rs, int expect_pap)
{
    int scount = count * dt->smult;
    size_t rspan = mt_span(dt->rtype, (long long)count * np);
    size_t sspan = mt_span(dt->stype, scount);
    MPI_Aint lb, rext;
    MPI_Type_get_extent(dt->rtype, &lb, &rext);
    char *sbuf = malloc(sspan + 1), *rbuf = malloc(rspan + 1), *ref = malloc(rspan + 1);
    fill(sbuf, sspan, rank + 1);
    memset(ref, 0x5a, rspan + 1);
    memset(rbuf, 0x5a, rspan + 1);
    PMPI_Allgather(sbuf, scount, dt->stype, ref, count, dt->rtype, MPI_COMM_WORLD);
    if (inplace) /* own block in place, from the reference (same bytes as sendbuf) */
        memcpy(rbuf + (size_t)rank * count * rext, ref + (size_t)rank * count * rext,
               mt_span(dt->rtype, count));
    compute(pat, rs);
    int rc = agx_allgather(inplace ? MPI_IN_PLACE : sbuf, scount, dt->stype, rbuf, count,
                           dt->rtype, MPI_COMM_WORLD);
    CHECK(rc == MPI_SUCCESS, "%s rc %d", alg, rc);
    CHECK(!memcmp(rbuf, ref, rspan + 1), "%s pattern %s count %d %s%s differs from PMPI", alg,
          pat_names[pat], count, dt->name, inplace ? " in-place" : "");
    const char *ran;
    agx_comm_last_algorithm(MPI_COMM_WORLD, AGX_OP_ALLGATHER, &ran);
    const char *want = expect_pap ? alg : !strcmp(alg, "bdr") ? "ring" : "gather_bcast";
    CHECK(!strcmp(ran, want), "%s ran as %s, expected %s", alg, ran, want);
    free(sbuf), free(rbuf), free(ref);
}

static void differential(int pap)
{
    static const char *algs[] = {"bdr", "bslb"};
    static const int counts[] = {0, 1, 7, 1001};
    mt_dtcase dts[MT_NDTCASES];
    mt_dtcases(dts);
    unsigned rs = seed + (unsigned)rank * 7919u;
    int n = 0;
    for (int a = 0; a < 2; a++) {
        agx_comm_set_algorithm(MPI_COMM_WORLD, AGX_OP_ALLGATHER, algs[a]);
        for (int pat = 0; pat < PAT_COUNT; pat++)
            for (int c = 0; c < 4; c++)
                for (int d = 0; d < MT_NDTCASES; d++)
                    for (int ip = 0; ip < 2; ip++) {
                        if (ip && (pat + c + d) % 3) /* in-place on a third of the shapes */
                            continue;
                        if (quick && (d > 1 || c == 0 || c == 2 || pat % 2))
                            continue;
                        one(algs[a], pat, counts[c], &dts[d], ip, &rs, pap);
                        n++;
                    }
    }
    mt_dtcases_free(dts);
    if (rank == 0)
        printf("differential: %d calls\n", n);
}

/* One rank 60 ms late, several epochs: the late process (bdr) or the root (bslb, root
 * late) must have received blocks before it arrived. */
static void background_works(void)
{
    if (np < 2)
        return;
    float *s = malloc(sizeof(float) * 4096), *r = malloc(sizeof(float) * 4096 * (size_t)np);
    for (int i = 0; i < 4096; i++)
        s[i] = (float)(rank * 4096 + i);
    for (int a = 0; a < 2; a++) {
        const char *alg = a ? "bslb" : "bdr";
        int late = a ? 0 : np - 1;
        agx_comm_set_algorithm(MPI_COMM_WORLD, AGX_OP_ALLGATHER, alg);
        agx_pat_info info = {0};
        for (int e = 0; e < 4; e++) {
            agx_pat_compute_begin();
            usleep(rank == late ? 30000 : 0);
            agx_pat_progress(0.5);
            usleep(rank == late ? 30000 : 0);
            agx_pat_compute_end();
            agx_stats_reset();
            agx_stats_enable(1);
            agx_allgather(s, 4096, MPI_FLOAT, r, 4096, MPI_FLOAT, MPI_COMM_WORLD);
            agx_stats_enable(0);
            agx_pat_get_info(MPI_COMM_WORLD, &info);
            /* exact counts, whatever the schedule: bdr moves each block p-1 times, one
             * message each; bslb's non-roots send a short and a rest message each */
            agx_stats st;
            agx_stats_get(&st);
            unsigned long long mine[2] = {st.msgs_local + st.msgs_nonlocal, st.bytes_local + st.bytes_nonlocal},
                               sum[2];
            MPI_Allreduce(mine, sum, 2, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
            unsigned long long blk = 4096 * sizeof(float), pp = (unsigned long long)np;
            unsigned long long want_m = a ? 2 * (pp - 1) : pp * (pp - 1);
            unsigned long long want_b = a ? (pp - 1) * blk : pp * (pp - 1) * blk;
            CHECK(sum[0] == want_m && sum[1] == want_b, "%s epoch %d: %llu messages, %llu bytes; "
                  "expected %llu and %llu", alg, e, sum[0], sum[1], want_m, want_b);
            int ok = 1;
            for (int i = 0; i < 4096 * np; i++)
                ok &= r[i] == (float)i;
            CHECK(ok, "%s epoch %d wrong result", alg, e);
        }
        if (rank == late) {
            CHECK(info.active && info.background_recvs >= 1,
                  "%s: the late rank received %d blocks in the background (tau %g, omega %g)",
                  alg, info.background_recvs, info.tau, info.omega);
            printf("%s: late rank %d got %d of %d blocks in the background; tau %.1f us, "
                   "predicted omega %.1f ms, prediction error %.2f ms\n", alg, rank,
                   info.background_recvs, np - 1, info.tau * 1e6, info.omega * 1e3,
                   info.arrival_error * 1e3);
        }
        if (!a)
            CHECK(info.tau > 0, "bdr: tau was not measured");
    }
    free(s), free(r);
}

static void lifecycle(void)
{
    int v[4] = {rank, rank, rank, rank}, *out = malloc(sizeof(int) * 4 * (size_t)np);
    char msg[MPI_MAX_ERROR_STRING];
    int len, rc;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    /* an epoch never consumed: begin twice, then a call */
    agx_comm_set_algorithm(MPI_COMM_WORLD, AGX_OP_ALLGATHER, "bdr");
    agx_pat_compute_begin();
    agx_pat_progress(0.5);
    agx_pat_compute_begin();
    agx_pat_compute_end();
    rc = agx_allgather(v, 4, MPI_INT, out, 4, MPI_INT, MPI_COMM_WORLD);
    int ok = rc == MPI_SUCCESS;
    for (int i = 0; i < 4 * np; i++)
        ok &= out[i] == i / 4;
    CHECK(ok, "allgather after an abandoned epoch");
    /* bad input */
    rc = agx_pat_progress(1.5);
    agx_error_string(rc, msg, &len);
    CHECK(rc != MPI_SUCCESS && strstr(msg, "fraction"), "progress(1.5) gave '%s'", msg);
    rc = agx_pat_init(MPI_COMM_WORLD);
    CHECK(rc != MPI_SUCCESS, "double agx_pat_init accepted");
    rc = agx_pat_init(MPI_COMM_NULL);
    CHECK(rc != MPI_SUCCESS, "agx_pat_init(MPI_COMM_NULL) accepted");
    rc = agx_comm_set_algorithm(MPI_COMM_WORLD, AGX_OP_ALLGATHERV, "bdr");
    CHECK(rc != MPI_SUCCESS, "bdr accepted for allgatherv");
    /* another communicator: falls back to ring */
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
    agx_comm_set_algorithm(dup, AGX_OP_ALLGATHER, "bdr");
    rc = agx_allgather(v, 4, MPI_INT, out, 4, MPI_INT, dup);
    const char *ran;
    agx_comm_last_algorithm(dup, AGX_OP_ALLGATHER, &ran);
    CHECK(rc == MPI_SUCCESS && !strcmp(ran, "ring"), "bdr on another communicator ran as %s", ran);
    /* a session of its own on the other communicator: both serve bdr, epoch by epoch */
    rc = agx_pat_init(dup);
    CHECK(rc == MPI_SUCCESS, "agx_pat_init on a second communicator");
    for (int e = 0; e < 6; e++) {
        MPI_Comm c = e % 2 ? dup : MPI_COMM_WORLD;
        agx_pat_compute_begin();
        usleep(rank == e % np ? 2000 : 0);
        agx_pat_progress(0.5);
        agx_pat_compute_end();
        v[0] = v[1] = v[2] = v[3] = rank + 100 * e;
        rc = agx_allgather(v, 4, MPI_INT, out, 4, MPI_INT, c);
        agx_comm_last_algorithm(c, AGX_OP_ALLGATHER, &ran);
        int good = rc == MPI_SUCCESS && !strcmp(ran, "bdr");
        for (int i = 0; i < 4 * np; i++)
            good &= out[i] == i / 4 + 100 * e;
        CHECK(good, "epoch %d on %s: rc %d, ran %s", e, e % 2 ? "the second communicator" : "MPI_COMM_WORLD", rc, ran);
    }
    agx_pat_info dinfo;
    agx_pat_get_info(dup, &dinfo);
    CHECK(dinfo.active && dinfo.epochs >= 6, "second session: active %d, %lld epochs", dinfo.active, dinfo.epochs);
    MPI_Comm_free(&dup); /* ends its session */
    /* finalize with an epoch open, then init again */
    agx_pat_compute_begin();
    agx_pat_progress(0.25);
    rc = agx_pat_finalize(MPI_COMM_WORLD);
    CHECK(rc == MPI_SUCCESS, "finalize with an open epoch");
    rc = agx_pat_init(MPI_COMM_WORLD);
    CHECK(rc == MPI_SUCCESS, "re-init");
    /* 1000 back-to-back iterations, both algorithms, random small delays */
    unsigned rs = seed ^ (unsigned)rank;
    int bad = 0;
    int iters = quick ? 100 : 1000;
    for (int it = 0; it < iters; it++) {
        if (it % (iters / 4) == 0)
            agx_comm_set_algorithm(MPI_COMM_WORLD, AGX_OP_ALLGATHER, (it / (iters / 4)) % 2 ? "bslb" : "bdr");
        agx_pat_compute_begin();
        if (mt_rand(&rs) % 8 == 0)
            usleep(mt_rand(&rs) % 300);
        if (it % 3)
            agx_pat_progress(0.5);
        agx_pat_compute_end();
        v[0] = v[1] = v[2] = v[3] = rank + it;
        rc = agx_allgather(v, 4, MPI_INT, out, 4, MPI_INT, MPI_COMM_WORLD);
        for (int i = 0; i < 4 * np; i++)
            bad += rc != MPI_SUCCESS || out[i] != i / 4 + it;
    }
    CHECK(bad == 0, "%d iterations: %d wrong elements", iters, bad);
    agx_pat_info info;
    agx_pat_get_info(MPI_COMM_WORLD, &info);
    CHECK(info.epochs >= iters, "epochs %lld", info.epochs);
    free(out);
}

int main(int argc, char **argv)
{
    int single = 0, provided = MPI_THREAD_SINGLE;
    for (int i = 1; i < argc; i++) {
        single |= !strcmp(argv[i], "--single");
        quick |= !strcmp(argv[i], "--quick");
    }
    if (single)
        MPI_Init(&argc, &argv);
    else
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    seed = mt_seed_from_env();
    MPI_Bcast(&seed, 1, MPI_UNSIGNED, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("test_pap: np %d, %s, seed %u (AGX_TEST_SEED=%u reproduces)\n", np,
               single ? "MPI_Init" : "MPI_THREAD_MULTIPLE", seed, seed);
    int pap = !single && provided == MPI_THREAD_MULTIPLE;
    CHECK(agx_pat_init(MPI_COMM_WORLD) == MPI_SUCCESS, "agx_pat_init");
    agx_pat_info info;
    agx_pat_get_info(MPI_COMM_WORLD, &info);
    CHECK(info.active == pap, "monitor active %d, expected %d", info.active, pap);
    differential(pap);
    if (pap) {
        background_works();
        lifecycle();
    }
    int all;
    MPI_Allreduce(&fails, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s: %d checks on rank 0, %d failures in all\n", all ? "FAIL" : "PASS", checks, all);
    /* no agx_pat_finalize: MPI_Finalize must stop the monitor itself */
    MPI_Finalize();
    return all != 0;
}
