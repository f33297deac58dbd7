/*
 * Differential test of agx_alltoallv: every registered algorithm (and "auto") against
 * PMPI_Alltoallv, over patterns {random with many zeros, all-to-many with |R| = 1, 2, p/4,
 * p/2, p-1, p receivers, many-to-few, one-to-all, all empty}, datatypes {INT, strided
 * vector, BYTE, DOUBLE, 4 x INT received as contiguous(4, INT)}, displacements shuffled
 * with gaps on both sides, and in place (symmetric counts). Whole receive buffers are
 * compared byte for byte. Also: throttle 1, 2, 32, 0 and AGX_ALLTOALLV_SYNC=isend for the
 * throttled kernels; the exact number of messages each kernel sends (none for an empty
 * pair; tam's from its phases); the pattern-aware choice; bad input on one rank (negative
 * count, NULL array, mismatched type size, a pair one side calls empty) failing on every
 * rank with one error through the handler.
 *
 *   test_alltoallv [--quick] [--seed S] [--algs a,b,...]     (or AGX_TEST_SEED=S)
 */
#include "agx.h"
#include "mpitest.h"

#include <stdlib.h>
#include <string.h>

static int rank, p, passed, failed;
static const int *region_of;

enum { PAT_RANDOM, PAT_TO_MANY, PAT_MANY_TO_FEW, PAT_ONE_TO_ALL, PAT_EMPTY };
typedef struct {
    int kind, nrecv;
    const char *name;
} pattern;

/* The count matrix C[s * p + j] (elements of the receive type) of a pattern, the same on
 * every rank; symmetric when `sym` (in place needs recvcounts = sendcounts). */
static void make_counts(const pattern *pt, int count, unsigned seed, int sym, int *C)
{
    unsigned rs = seed;
    int *recv = calloc((size_t)p, sizeof(int)), *send = calloc((size_t)p, sizeof(int));
    for (int n = 0; n < pt->nrecv && n < p; n++) { /* a random receiver subset of size nrecv */
        int j = (int)(mt_rand(&rs) % (unsigned)p);
        while (recv[j])
            j = (j + 1) % p;
        recv[j] = 1;
    }
    for (int s = 0; s < p; s++)
        send[s] = pt->kind != PAT_MANY_TO_FEW || mt_rand(&rs) % 3 == 0;
    for (int s = 0; s < p; s++)
        for (int j = 0; j < p; j++) {
            int c = 1 + (int)(mt_rand(&rs) % (unsigned)(2 * count + 1));
            switch (pt->kind) {
            case PAT_RANDOM: c = mt_rand(&rs) % 2 ? 0 : c - 1; break;
            case PAT_TO_MANY: c = recv[j] ? c : 0; break;
            case PAT_MANY_TO_FEW: c = recv[j] && send[s] ? c : 0; break;
            case PAT_ONE_TO_ALL: c = s == 0 ? c : 0; break;
            default: c = 0;
            }
            C[s * p + j] = c;
        }
    for (int s = 0; sym && s < p; s++)
        for (int j = 0; j < s; j++)
            C[s * p + j] = C[j * p + s];
    free(recv);
    free(send);
}

/* Messages agx sends from this rank for C under alg (tam: its four phases). */
static long long expected_msgs(const char *alg, const int *C)
{
    long long n = 0;
    if (strcmp(alg, "tam")) {
        for (int j = 0; j < p; j++)
            n += j != rank && C[rank * p + j] > 0;
        return n;
    }
    int agg = 0, nreg = 0;
    while (region_of[agg] != region_of[rank])
        agg++;
    for (int r = 0; r < p; r++)
        nreg = region_of[r] + 1 > nreg ? region_of[r] + 1 : nreg;
    if (agg != rank) {
        int any = 0;
        for (int j = 0; j < p; j++)
            any |= j != rank && (C[rank * p + j] > 0 || C[j * p + rank] > 0);
        return 1 + any;
    }
    for (int b = 0; b < nreg; b++) { /* to every other region with data: one message */
        int any = 0;
        for (int s = 0; s < p; s++)
            for (int j = 0; j < p; j++)
                any |= region_of[s] == region_of[rank] && region_of[j] == b && C[s * p + j] > 0;
        n += any && b != region_of[rank];
    }
    for (int j = 0; j < p; j++) {
        int any = 0;
        for (int s = 0; s < p; s++)
            any |= s != j && C[s * p + j] > 0;
        n += j != rank && region_of[j] == region_of[rank] && any;
    }
    return n;
}

static void fill(unsigned char *b, size_t n, unsigned *s)
{
    for (size_t i = 0; i < n; i++)
        b[i] = (unsigned char)mt_rand(s);
}

/* The communicator the cases run on (MPI_COMM_WORLD, or a fresh one for environment
 * settings, which a communicator reads at its first alltoallv). */
static MPI_Comm tcomm;

/* One call of alg against the reference; returns 1 when equal (and counts match). */
static int run_case(const char *alg, const int *C, const mt_dtcase *dt, int inplace, unsigned seed)
{
    int *sc = malloc(sizeof(int) * 4 * (size_t)p), *sd = sc + p, *rc = sd + p, *rd = rc + p;
    unsigned rs = seed ^ 0x5bd1e995u;
    for (int j = 0; j < p; j++)
        sc[j] = C[rank * p + j] * dt->smult, rc[j] = C[j * p + rank];
    long long send = mt_shuffled_displs(p, sc, sd, &rs), rend = mt_shuffled_displs(p, rc, rd, &rs);
    size_t sb = mt_span(dt->stype, send) + 8, rb = mt_span(dt->rtype, rend) + 8;
    unsigned char *sbuf = malloc(sb), *rbuf = malloc(rb), *ref = malloc(rb);
    unsigned ds = seed * 2654435761u + (unsigned)rank;
    fill(sbuf, sb, &ds);
    fill(rbuf, rb, &ds);
    memcpy(ref, rbuf, rb);
    agx_stats_reset();
    int e1 = PMPI_Alltoallv(inplace ? MPI_IN_PLACE : sbuf, sc, sd, dt->stype, ref, rc, rd, dt->rtype,
                            tcomm);
    int e2 = agx_alltoallv(inplace ? MPI_IN_PLACE : sbuf, sc, sd, dt->stype, rbuf, rc, rd, dt->rtype,
                           tcomm);
    agx_stats st;
    agx_stats_get(&st);
    long long msgs = (long long)(st.msgs_local + st.msgs_nonlocal);
    const char *ran;
    agx_comm_last_algorithm(tcomm, AGX_OP_ALLTOALLV, &ran);
    int ok = e1 == MPI_SUCCESS && e2 == MPI_SUCCESS && !memcmp(rbuf, ref, rb);
    int cnt_ok = !strcmp(ran, "native") || msgs == expected_msgs(ran, C);
    if (!ok || !cnt_ok)
        fprintf(stderr, "rank %d: %s (ran %s) dt %s inplace %d: %s, %lld messages (expected %lld)\n", rank,
                alg, ran, dt->name, inplace, ok ? "data ok" : "DATA DIFFERS", msgs, expected_msgs(ran, C));
    free(sc), free(sbuf), free(rbuf), free(ref);
    return ok && cnt_ok;
}

/* One rank's arguments spoiled in each way; every rank must get `cls` once. */
static int handler_calls;
static void count_handler(MPI_Comm *c, int *code, ...)
{
    (void)c;
    (void)code;
    handler_calls++;
}

static void bad_input(void)
{
    int *c = malloc(sizeof(int) * 2 * (size_t)p), *d = c + p, buf[64], rbuf[64];
    MPI_Errhandler eh;
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_create_errhandler(count_handler, &eh);
    MPI_Comm_set_errhandler(comm, eh);
    const char *what[] = {"negative count", "NULL recvcounts", "type size mismatch", "one side empty",
                          "valid again"};
    int want[] = {MPI_ERR_COUNT, MPI_ERR_ARG, MPI_ERR_TRUNCATE, MPI_ERR_TRUNCATE, MPI_SUCCESS};
    for (int k = 0; k < 5; k++) {
        int bad = k < 4 && rank == p - 1, *sc = c, *rcounts = c;
        MPI_Datatype st = MPI_INT;
        for (int j = 0; j < p; j++)
            c[j] = 1, d[j] = j;
        int *scopy = malloc(sizeof(int) * (size_t)p);
        memcpy(scopy, c, sizeof(int) * (size_t)p);
        if (bad && k == 0)
            scopy[0] = -1;
        if (bad && k == 1)
            rcounts = NULL;
        if (bad && k == 2)
            st = MPI_SHORT;
        if (k == 3 && p > 1 && rank == p - 1)
            scopy[0] = 0;  /* rank 0 still expects one element from p - 1 */
        if (k == 3 && p == 1)
            scopy[0] = 0, st = MPI_INT;
        sc = scopy;
        handler_calls = 0;
        int rc = agx_alltoallv(buf, sc, d, st, rbuf, rcounts, d, MPI_INT, comm), cls = MPI_SUCCESS;
        MPI_Error_class(rc, &cls);
        int w = k == 3 && p == 1 ? MPI_ERR_TRUNCATE : want[k];
        CHECK(cls == w && handler_calls == (w != MPI_SUCCESS), "%s: class %d (want %d), handler ran %d times",
              what[k], cls, w, handler_calls);
        free(scopy);
    }
    MPI_Comm_free(&comm);
    MPI_Errhandler_free(&eh);
    free(c);
}

static int wanted(const char *only, const char *name)
{
    if (!only)
        return 1;
    size_t n = strlen(name);
    for (const char *s = only; (s = strstr(s, name)); s += n)
        if ((s == only || s[-1] == ',') && (s[n] == ',' || !s[n]))
            return 1;
    return 0;
}

int main(int argc, char **argv)
{
    mt_run run;
    setenv("AGX_REGION_SIZE", "3", 0); /* tam over several regions on one node */
    mt_start(&argc, &argv, &run);
    rank = run.rank, p = run.size;
    tcomm = MPI_COMM_WORLD;
    agx_stats_enable(1);
    int *reg = malloc(sizeof(int) * (size_t)p), *C = malloc(sizeof(int) * (size_t)p * p);
    agx_comm_regions(MPI_COMM_WORLD, reg);
    region_of = reg;
    if (rank == 0)
        printf("test_alltoallv: p = %d, seed %u\n", p, run.seed);
    pattern pats[16] = {{PAT_RANDOM, 0, "random"}, {PAT_MANY_TO_FEW, 2, "many-to-few"},
                        {PAT_ONE_TO_ALL, 0, "one-to-all"}, {PAT_EMPTY, 0, "empty"}};
    int npat = 4, nr[] = {1, 2, p / 4, p / 2, p - 1, p};
    for (int i = 0; i < 6; i++) {
        int dup = nr[i] < 1 || nr[i] > p;
        for (int k = 4; k < npat; k++)
            dup |= pats[k].nrecv == nr[i];
        if (!dup)
            pats[npat++] = (pattern){PAT_TO_MANY, nr[i], "all-to-many"};
    }
    mt_dtcase dts[MT_NDTCASES];
    mt_dtcases(dts);
    int nalg = agx_algorithm_count(AGX_OP_ALLTOALLV, AGX_KIND_INTRA);
    unsigned seed = run.seed;
    for (int a = -1; a < nalg; a++) {
        const char *name = "auto", *desc;
        if (a >= 0)
            agx_algorithm_info(AGX_OP_ALLTOALLV, AGX_KIND_INTRA, a, &name, &desc);
        if (!wanted(run.only, name))
            continue;
        agx_comm_set_algorithm(MPI_COMM_WORLD, AGX_OP_ALLTOALLV, name);
        int f0 = failed;
        for (int k = 0; k < npat; k++)
            for (int t = 0; t < MT_NDTCASES; t++)
                for (int inplace = 0; inplace < 2; inplace++) {
                    if (inplace && (dts[t].smult != 1 || run.quick))
                        continue;
                    int count = (int)(++seed % 3 == 0 ? 300 : 5);
                    make_counts(&pats[k], count, seed, inplace, C);
                    int ok = run_case(name, C, &dts[t], inplace, seed);
                    CHECK(ok, "%s %s |R|=%d dt %s inplace %d seed %u", name, pats[k].name, pats[k].nrecv,
                          dts[t].name, inplace, seed);
                }
        if (rank == 0)
            printf("%-12s %s\n", name, failed == f0 ? "ok" : "FAIL");
    }
    /* throttle and send mode: every value on every pattern, for the throttled kernels */
    const char *thr[] = {"1", "2", "32", "0"}, *thk[] = {"spread_out", "balanced", "tam"};
    for (int a = 0; a < 3; a++)
        for (int t = 0; t < 4; t++) {
            setenv("AGX_ALLTOALLV_THROTTLE", thr[t], 1);
            setenv("AGX_ALLTOALLV_SYNC", t % 2 ? "isend" : "issend", 1);
            MPI_Comm_dup(MPI_COMM_WORLD, &tcomm); /* reads them at its first call */
            agx_comm_set_algorithm(tcomm, AGX_OP_ALLTOALLV, thk[a]);
            for (int k = 0; k < npat; k++) {
                make_counts(&pats[k], 7, ++seed, 0, C);
                CHECK(run_case(thk[a], C, &dts[0], 0, seed), "%s throttle %s %s |R|=%d seed %u", thk[a], thr[t],
                      pats[k].name, pats[k].nrecv, seed);
            }
            MPI_Comm_free(&tcomm);
            tcomm = MPI_COMM_WORLD;
        }
    unsetenv("AGX_ALLTOALLV_THROTTLE");
    unsetenv("AGX_ALLTOALLV_SYNC");
    /* the pattern-aware choice */
    agx_comm_set_algorithm(MPI_COMM_WORLD, AGX_OP_ALLTOALLV, "auto");
    for (int k = 0; k < npat; k++) {
        make_counts(&pats[k], 3, ++seed, 0, C);
        run_case("auto", C, &dts[0], 0, seed);
        int nrecv = 0, smax = 0;
        for (int j = 0; j < p; j++) {
            int ns = 0;
            for (int s = 0; s < p; s++)
                ns += C[s * p + j] > 0;
            nrecv += ns > 0;
            smax = ns > smax ? ns : smax;
        }
        const char *ran, *want = 2 * nrecv <= p && 2 * smax >= p ? "balanced"
                                 : 4 * smax < p                  ? "issend_all"
                                                                 : "spread_out";
        agx_comm_last_algorithm(MPI_COMM_WORLD, AGX_OP_ALLTOALLV, &ran);
        CHECK(!strcmp(ran, want), "%s |R|=%d: auto chose %s, want %s", pats[k].name, nrecv, ran, want);
    }
    bad_input();
    mt_dtcases_free(dts);
    free(reg);
    free(C);
    if (rank == 0)
        printf("%d passed, %d failed\n", passed, failed);
    MPI_Finalize();
    return failed ? 1 : 0;
}
