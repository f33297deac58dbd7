/*
 * PAP-aware allgathers planned by agx_pat_predict, in sessions without the monitor thread
 * (MPI_Init, as in SimGrid SMPI; or AGX_PAT_MONITOR=0), against PMPI_Allgather.
 *
 * Every rank draws the whole arrival pattern of an epoch from the common seed, sleeps its
 * own delay and gives agx_pat_predict everyone's: the predictions a simulator can make.
 * Part 1, differential: bdr and bslb over patterns (flat, random up to 4 ms, the last
 * rank late, the root late, and wrong predictions: the reverse of the true order), counts
 * {0, 1, 7, 1001}, the datatype cases of mpitest.h and in-place; each ran as itself.
 * Part 2, the pre-posted receives work: with one rank 20 ms late, bdr's late rank and
 * bslb's root hold blocks before they arrive, and the counters are exact: bdr sends
 * p(p-1) messages of one block, bslb without its thread p-1 (one per non-root).
 * Part 3, the rules: an epoch without predictions and a call whose block differs from
 * the predicted one run the regular counterpart, correctly; an epoch predicted and
 * abandoned, then finalized while predicted; bad calls (outside a compute phase, tau < 0,
 * NULL arrivals, twice in one epoch).
 */
#include "agx.h"
#include "mpitest.h"

#include <math.h>
#include <unistd.h>

static int rank, np, passed, failed, quick;
static unsigned seed;

enum { P_FLAT, P_RANDOM, P_LAST_LATE, P_ROOT_LATE, P_WRONG, P_COUNT };
static const char *pat_names[] = {"flat", "random", "last-late", "root-late", "wrong"};

/* The epoch's delays of every rank in us (the same on every rank), this rank's sleep,
 * and the predictions given to agx (P_WRONG predicts the reverse order). */
static void compute(int pat, int epoch, long long block_bytes)
{
    double *arr = malloc(sizeof(double) * (size_t)np);
    unsigned rs = seed * 2654435761u + (unsigned)epoch * 40503u;
    int mine = 0;
    for (int q = 0; q < np; q++) {
        int us = pat == P_RANDOM    ? (int)(mt_rand(&rs) % 4000)
                 : pat == P_LAST_LATE ? (q == np - 1) * 5000
                 : pat == P_ROOT_LATE ? (q == 0) * 5000
                 : pat == P_WRONG     ? 700 * q
                                      : 0;
        if (q == rank)
            mine = us;
        arr[q] = (pat == P_WRONG ? 700.0 * (np - 1 - q) : us) * 1e-6;
    }
    agx_pat_compute_begin();
    /* tau given, or (odd epochs) measured by agx from the last bdr calls */
    int rc = agx_pat_predict(MPI_COMM_WORLD, arr, epoch % 2 ? 0 : 100e-6, block_bytes);
    CHECK(rc == MPI_SUCCESS, "agx_pat_predict rc %d", rc);
    usleep((unsigned)mine);
    agx_pat_compute_end();
    free(arr);
}

static void fill(char *b, size_t n, int salt)
{
    for (size_t i = 0; i < n; i++)
        b[i] = (char)(i * 31 + (size_t)salt * 7 + 3);
}

static void one(const char *alg, int pat, int epoch, int count, const mt_dtcase *dt, int inplace)
{
    int scount = count * dt->smult, tsize;
    MPI_Type_size(dt->rtype, &tsize);
    size_t rspan = mt_span(dt->rtype, (long long)count * np), sspan = mt_span(dt->stype, scount);
    MPI_Aint lb, rext;
    MPI_Type_get_extent(dt->rtype, &lb, &rext);
    char *sbuf = malloc(sspan + 1), *rbuf = malloc(rspan + 1), *ref = malloc(rspan + 1);
    fill(sbuf, sspan, rank + 1 + epoch);
    memset(ref, 0x5a, rspan + 1);
    memset(rbuf, 0x5a, rspan + 1);
    PMPI_Allgather(sbuf, scount, dt->stype, ref, count, dt->rtype, MPI_COMM_WORLD);
    if (inplace)
        memcpy(rbuf + (size_t)rank * count * rext, ref + (size_t)rank * count * rext, mt_span(dt->rtype, count));
    compute(pat, epoch, (long long)count * tsize);
    int rc = agx_allgather(inplace ? MPI_IN_PLACE : sbuf, scount, dt->stype, rbuf, count, dt->rtype, MPI_COMM_WORLD);
    const char *ran = "";
    agx_comm_last_algorithm(MPI_COMM_WORLD, AGX_OP_ALLGATHER, &ran);
    /* every rank planned with the same tau (ring and pre-step samples differ per rank) */
    agx_pat_info info;
    agx_pat_get_info(MPI_COMM_WORLD, &info);
    double tr[2] = {info.tau, -info.tau}, tg[2];
    PMPI_Allreduce(tr, tg, 2, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
    CHECK(tg[0] == -tg[1], "%s epoch %d: ranks planned with tau %g .. %g (seed %u)", alg, epoch, tg[0], -tg[1], seed);
    CHECK(rc == MPI_SUCCESS && !memcmp(rbuf, ref, rspan + 1) && !strcmp(ran, alg),
          "%s pattern %s count %d %s%s: rc %d, ran %s, %s (seed %u)", alg, pat_names[pat], count, dt->name,
          inplace ? " in-place" : "", rc, ran, memcmp(rbuf, ref, rspan + 1) ? "differs from PMPI" : "same", seed);
    free(sbuf), free(rbuf), free(ref);
}

static void differential(void)
{
    static const char *algs[] = {"bdr", "bslb"};
    static const int counts[] = {0, 1, 7, 1001};
    mt_dtcase dts[MT_NDTCASES];
    mt_dtcases(dts);
    int n = 0;
    for (int a = 0; a < 2; a++) {
        agx_comm_set_algorithm(MPI_COMM_WORLD, AGX_OP_ALLGATHER, algs[a]);
        for (int pat = 0; pat < P_COUNT; pat++)
            for (int c = 0; c < 4; c++)
                for (int d = 0; d < MT_NDTCASES; d++)
                    for (int ip = 0; ip < 2; ip++) {
                        if ((ip && (pat + c + d) % 3) || (quick && (d > 1 || c == 0 || pat % 2)))
                            continue;
                        one(algs[a], pat, n, counts[c], &dts[d], ip);
                        n++;
                    }
    }
    mt_dtcases_free(dts);
    if (rank == 0)
        printf("differential: %d calls\n", n);
}

/* 4096 floats a process, `late` 20 ms behind; counters summed over ranks. */
static void late_epoch(const char *alg, int late, agx_pat_info *info, unsigned long long sum[2], int *ok)
{
    float *s = malloc(sizeof(float) * 4096), *r = malloc(sizeof(float) * 4096 * (size_t)np);
    double *arr = calloc((size_t)np, sizeof(double));
    for (int i = 0; i < 4096; i++)
        s[i] = (float)(rank * 4096 + i);
    arr[late] = 0.02;
    agx_comm_set_algorithm(MPI_COMM_WORLD, AGX_OP_ALLGATHER, alg);
    agx_pat_compute_begin();
    agx_pat_predict(MPI_COMM_WORLD, arr, 50e-6, 4096 * sizeof(float));
    usleep(rank == late ? 20000 : 0);
    agx_pat_compute_end();
    agx_stats_reset();
    agx_stats_enable(1);
    agx_allgather(s, 4096, MPI_FLOAT, r, 4096, MPI_FLOAT, MPI_COMM_WORLD);
    agx_stats_enable(0);
    agx_pat_get_info(MPI_COMM_WORLD, info);
    agx_stats st;
    agx_stats_get(&st);
    unsigned long long mine[2] = {st.msgs_local + st.msgs_nonlocal, st.bytes_local + st.bytes_nonlocal};
    MPI_Allreduce(mine, sum, 2, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    *ok = 1;
    for (int i = 0; i < 4096 * np; i++)
        *ok &= r[i] == (float)i;
    free(s), free(r), free(arr);
}

static void background_works(void)
{
    if (np < 2)
        return;
    unsigned long long blk = 4096 * sizeof(float), pp = (unsigned long long)np, sum[2];
    agx_pat_info info;
    int ok;
    late_epoch("bdr", np - 1, &info, sum, &ok);
    CHECK(ok && sum[0] == pp * (pp - 1) && sum[1] == pp * (pp - 1) * blk, "bdr: ok %d, %llu messages, %llu bytes",
          ok, sum[0], sum[1]);
    CHECK(rank != np - 1 || (!info.active && info.background_recvs >= 1 && info.presteps >= 1),
          "bdr: the late rank got %d blocks before it arrived (active %d, %d pre-steps)", info.background_recvs,
          info.active, info.presteps);
    if (rank == np - 1)
        printf("bdr: late rank got %d of %d blocks before it arrived, %d pre-step transfers\n",
               info.background_recvs, np - 1, info.presteps);
    late_epoch("bslb", 0, &info, sum, &ok);
    CHECK(ok && sum[0] == pp - 1 && sum[1] == (pp - 1) * blk, "bslb: ok %d, %llu messages, %llu bytes", ok, sum[0],
          sum[1]);
    CHECK(rank != 0 || info.background_recvs == np - 1, "bslb: the root got %d blocks posted", info.background_recvs);
}

static void rules(void)
{
    int v[4], *out = malloc(sizeof(int) * 4 * (size_t)np), rc, good;
    double *arr = calloc((size_t)np, sizeof(double));
    const char *ran;
    char msg[MPI_MAX_ERROR_STRING];
    int len;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    agx_comm_set_algorithm(MPI_COMM_WORLD, AGX_OP_ALLGATHER, "bdr");
    for (int k = 0; k < 4; k++) { /* 0: no predict; 1: other block size; 2: abandoned; 3: fine */
        agx_pat_compute_begin();
        if (k)
            agx_pat_predict(MPI_COMM_WORLD, arr, 50e-6, k == 1 ? 8 : 16);
        if (k == 2) { /* abandoned: a new compute phase; its receives must be withdrawn */
            agx_pat_compute_begin();
            agx_pat_predict(MPI_COMM_WORLD, arr, 50e-6, 16);
        }
        agx_pat_compute_end();
        v[0] = v[1] = v[2] = v[3] = rank + 10 * k;
        rc = agx_allgather(v, 4, MPI_INT, out, 4, MPI_INT, MPI_COMM_WORLD);
        agx_comm_last_algorithm(MPI_COMM_WORLD, AGX_OP_ALLGATHER, &ran);
        good = rc == MPI_SUCCESS && !strcmp(ran, k < 2 ? "ring" : "bdr");
        for (int i = 0; i < 4 * np; i++)
            good &= out[i] == i / 4 + 10 * k;
        CHECK(good, "case %d: rc %d, ran %s", k, rc, ran);
    }
    rc = agx_pat_predict(MPI_COMM_WORLD, arr, 50e-6, 16);
    agx_error_string(rc, msg, &len);
    CHECK(rc != MPI_SUCCESS && strstr(msg, "compute_begin"), "predict outside a compute phase gave '%s'", msg);
    agx_pat_compute_begin();
    rc = agx_pat_predict(MPI_COMM_WORLD, arr, -1e-6, 16);
    CHECK(rc != MPI_SUCCESS, "a negative tau accepted");
    rc = agx_pat_predict(MPI_COMM_WORLD, NULL, 1e-4, 16);
    CHECK(rc != MPI_SUCCESS, "NULL arrivals accepted");
    arr[0] = NAN;
    rc = agx_pat_predict(MPI_COMM_WORLD, arr, 1e-4, 16);
    CHECK(rc != MPI_SUCCESS, "a NaN arrival accepted");
    arr[0] = 0;
    rc = agx_pat_predict(MPI_COMM_WORLD, arr, 1e-4, 16);
    CHECK(rc == MPI_SUCCESS, "predict rc %d", rc);
    rc = agx_pat_predict(MPI_COMM_WORLD, arr, 1e-4, 16);
    CHECK(rc != MPI_SUCCESS, "a second predict in one epoch accepted");
    /* finalize with a predicted epoch open (receives posted), then a new session */
    CHECK(agx_pat_finalize(MPI_COMM_WORLD) == MPI_SUCCESS, "finalize with posted receives");
    CHECK(agx_pat_init(MPI_COMM_WORLD) == MPI_SUCCESS, "re-init");
    free(out), free(arr);
}

int main(int argc, char **argv)
{
    int provided;
    for (int i = 1; i < argc; i++)
        quick |= !strcmp(argv[i], "--quick");
    /* with threads, AGX_PAT_MONITOR=0 must still give a session without one */
    MPI_Init_thread(&argc, &argv, getenv("AGX_PAT_MONITOR") ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    seed = mt_seed_from_env();
    MPI_Bcast(&seed, 1, MPI_UNSIGNED, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("test_pap_predict: np %d, thread level %d, seed %u (AGX_TEST_SEED=%u reproduces)\n", np, provided,
               seed, seed);
    CHECK(agx_pat_init(MPI_COMM_WORLD) == MPI_SUCCESS, "agx_pat_init");
    differential();
    background_works();
    rules();
    if (rank == 0)
        printf("%s: %d checks passed, %d failed\n", failed ? "FAIL" : "PASS", passed, failed);
    MPI_Finalize();
    return failed != 0;
}
