/*
 * agx-bench pap: the mini-benchmark of Proficz21 (Listing 4).
 *
 * Per iteration, on every rank: new data (N/P floats), a random delay d in [0, max
 * delay] (uniform, per rank; the same sequence of delays for every algorithm of a case,
 * so algorithms are compared on identical arrival patterns, not on different draws), a double barrier, then the compute phase mocked by two
 * sleeps of compute/2 + d/2 with a progress mark at 50% between them, the allgather
 * timed with the common clock of the PAT monitor (a_i, f_i), and the result checked.
 * Reported per (N, max delay, algorithm):
 *   Elapsed  average elapsed time, mean over processes and iterations of f_i - a_i (Eq. 2)
 *   Run      run time max f_i - min a_i (Eq. 3), mean over iterations
 *   Omega    the measured worst-case imbalance max a_i - min a_i (Eq. 1), mean
 *   Absorb   absorption time r' - r + omega (Eq. 4), r' = the algorithm's run time with
 *            a flat arrival pattern (max delay 0, always measured first)
 *   Speedup  for bdr / bslb: best regular Elapsed / this Elapsed (Tables 3-4)
 * and a grid like Tables 3-4: the fastest algorithm per (N, max delay), with its speedup
 * over the best regular one when it is PAP-aware.
 * The paper's compute phase is 200 ms (2 x 100 ms); --compute shortens it.
 */
#include "agx.h"
#include "bench.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PAP_MAX 16

typedef struct {
    long long n[PAP_MAX];
    int nn;
    double delay[PAP_MAX]; /* seconds */
    int nd;
    char *alg[PAP_MAX];
    int na;
    int iters, warmup;
    double compute;        /* seconds */
    const char *csv;
} pap_opts;

typedef struct {
    double elapsed, run, omega, absorb;
    double tau;            /* bdr: tau of the last schedule (s) */
    double presteps;       /* bdr: pre-step transfers per schedule, mean */
    int ok;
} pap_res;

static void pap_usage(FILE *f)
{
    fprintf(f,
            "usage: agx-bench pap [options]   (launch with tools/agxrun --threads)\n"
            "  -N LIST            total floats gathered, comma-separated, K/M suffixes\n"
            "                     (default 128K,256K,512K,1M,2M)\n"
            "  --iterations N     measured iterations per case (default 256)\n"
            "  --warmup N         unmeasured iterations first (default 3; bdr measures tau there)\n"
            "  --max-delay LIST   maximum arrival delays, us/ms/s suffixes, plain = ms\n"
            "                     (default 0,1ms,5ms,10ms,50ms,100ms,500ms; 0 is always run)\n"
            "  --compute T        compute phase without delay (default 200ms, the paper's)\n"
            "  -a LIST            algorithms (default ring,neighbor_exchange,gather_bcast,bdr,bslb)\n"
            "  --csv FILE         one record per (N, max delay, algorithm)\n");
}

/* "5ms", "250us", "0.5s", "10" (ms) -> seconds; < 0 on error */
static double parse_time(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || v < 0)
        return -1;
    if (!strcmp(end, "us"))
        return v * 1e-6;
    if (!strcmp(end, "ms") || !*end)
        return v * 1e-3;
    if (!strcmp(end, "s"))
        return v;
    return -1;
}

static int cmp_d(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static int parse(int argc, char **argv, pap_opts *o)
{
    memset(o, 0, sizeof *o);
    o->iters = 256;
    o->warmup = 3;
    o->compute = 0.2;
    const char *ns = "128K,256K,512K,1M,2M", *ds = "0,1ms,5ms,10ms,50ms,100ms,500ms";
    const char *as = "ring,neighbor_exchange,gather_bcast,bdr,bslb";
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v)
            return -1;
        if (!strcmp(a, "-N"))
            ns = v;
        else if (!strcmp(a, "--iterations"))
            o->iters = atoi(v);
        else if (!strcmp(a, "--warmup"))
            o->warmup = atoi(v);
        else if (!strcmp(a, "--max-delay"))
            ds = v;
        else if (!strcmp(a, "--compute"))
            o->compute = parse_time(v);
        else if (!strcmp(a, "-a"))
            as = v;
        else if (!strcmp(a, "--csv"))
            o->csv = v;
        else
            return -1;
        i++;
    }
    char *tok[PAP_MAX];
    int nt = bench_split(ns, tok, PAP_MAX), bad = nt < 1;
    for (int k = 0; k < nt; k++) {
        bad |= (o->n[o->nn++] = parse_size(tok[k])) < 0;
        free(tok[k]);
    }
    o->delay[o->nd++] = 0; /* the flat pattern: r' of Eq. 4 */
    nt = bench_split(ds, tok, PAP_MAX - 1);
    bad |= nt < 0;
    for (int k = 0; k < nt; k++) {
        double d = parse_time(tok[k]);
        bad |= d < 0;
        if (d > 0)
            o->delay[o->nd++] = d;
        free(tok[k]);
    }
    qsort(o->delay, (size_t)o->nd, sizeof(double), cmp_d);
    o->na = bench_split(as, o->alg, PAP_MAX);
    if (bad || o->na < 0)
        return -1;
    return o->iters >= 1 && o->warmup >= 0 && o->compute >= 0 && o->na > 0 ? 0 : -1;
}

static int is_pap(const char *alg) { return !strcmp(alg, "bdr") || !strcmp(alg, "bslb"); }

static float value(int src, long long j, int it) { return (float)((src * 7 + it * 3 + j) % 4093); }

static void sleep_s(double s)
{
    if (s > 0)
        usleep((useconds_t)(s * 1e6));
}

/* One (N, max delay, algorithm) case on MPI_COMM_WORLD. */
static int run_case(const pap_opts *o, long long count, double md, const char *alg, double off,
                    unsigned seed, float *sbuf, float *rbuf, pap_res *res)
{
    unsigned state = seed, *rs = &state;
    int rank, p, rc = agx_comm_set_algorithm(MPI_COMM_WORLD, AGX_OP_ALLGATHER, alg);
    if (rc != MPI_SUCCESS)
        return rc;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    double sum_e = 0, sum_r = 0, sum_w = 0, sum_pre = 0;
    agx_pat_info info;
    int bad = 0;
    for (int it = -o->warmup; it < o->iters; it++) {
        *rs = *rs * 1103515245u + 12345u;
        double d = md * (double)((*rs >> 8) & 0xffffff) / 16777215.0;
        double half = o->compute / 2 + d / 2;
        for (long long j = 0; j < count; j++)
            sbuf[j] = value(rank, j, it);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
        agx_pat_compute_begin();
        sleep_s(half);
        agx_pat_progress(0.5);
        sleep_s(half);
        agx_pat_compute_end();
        double a = MPI_Wtime() + off;
        rc = agx_allgather(sbuf, (int)count, MPI_FLOAT, rbuf, (int)count, MPI_FLOAT, MPI_COMM_WORLD);
        double f = MPI_Wtime() + off;
        if (rc != MPI_SUCCESS)
            return rc;
        for (int src = 0; src < p; src++)
            for (long long j = 0; j < count; j++)
                bad += rbuf[src * count + j] != value(src, j, it);
        double mx[3] = {f, a, -a}, mxg[3], e = f - a, eg;
        MPI_Allreduce(mx, mxg, 3, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        MPI_Allreduce(&e, &eg, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        agx_pat_get_info(MPI_COMM_WORLD, &info);
        if (it >= 0) {
            sum_pre += info.presteps;
            sum_e += eg;
            sum_r += mxg[0] + mxg[2]; /* max f - min a */
            sum_w += mxg[1] + mxg[2]; /* max a - min a */
        }
    }
    int badg;
    MPI_Allreduce(&bad, &badg, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    res->elapsed = sum_e / ((double)p * o->iters);
    res->run = sum_r / o->iters;
    res->omega = sum_w / o->iters;
    res->tau = info.tau;
    res->presteps = sum_pre / o->iters;
    res->ok = badg == 0;
    return MPI_SUCCESS;
}

int agx_bench_pap(int argc, char **argv)
{
    pap_opts o;
    if (argc >= 3 && (!strcmp(argv[2], "-h") || !strcmp(argv[2], "--help"))) {
        pap_usage(stdout);
        return 0;
    }
    if (parse(argc, argv, &o)) {
        pap_usage(stderr);
        return 2;
    }
    int provided, rank, p;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    agx_pat_init(MPI_COMM_WORLD);
    agx_pat_info info;
    agx_pat_get_info(MPI_COMM_WORLD, &info);
    double off = info.clock_offset;
    long long maxc = 0;
    for (int i = 0; i < o.nn; i++)
        maxc = o.n[i] / p > maxc ? o.n[i] / p : maxc;
    float *sbuf = malloc(sizeof(float) * (size_t)(maxc ? maxc : 1));
    float *rbuf = malloc(sizeof(float) * (size_t)(maxc ? maxc * p : 1));
    pap_res *res = calloc((size_t)(o.nn * o.nd * o.na), sizeof(pap_res));
    FILE *csv = NULL;
    int failed = 0;
    if (rank == 0) {
        char ver[MPI_MAX_LIBRARY_VERSION_STRING];
        int len;
        MPI_Get_library_version(ver, &len);
        char *nl = strchr(ver, '\n');
        if (nl)
            *nl = '\0';
        printf("# agx-bench pap  nprocs=%d  iterations=%d (+%d warm-up)  compute=%.1f ms + U(0, max delay)"
               "  monitor=%s  validate=every iteration\n", p, o.iters, o.warmup, o.compute * 1e3,
               info.active ? "on" : "OFF (no MPI_THREAD_MULTIPLE: bdr/bslb run as ring/gather_bcast)");
        printf("# MPI: %s\n", ver);
        printf("# times in ms: Elapsed = Eq. 2, Run = Eq. 3, Omega = measured Eq. 1, Absorb = Eq. 4 "
               "(r' at max delay 0); Speedup = best regular Elapsed / Elapsed\n");
        printf("# Tau(us) and Pre: bdr's measured tau and pre-step transfers per schedule (mean)\n");
        printf("%-8s %9s %-18s %9s %9s %9s %9s %8s %6s %8s %6s\n", "# N", "MaxDelay", "Algorithm", "Elapsed",
               "Run", "Omega", "Absorb", "Speedup", "Check", "Tau(us)", "Pre");
        if (o.csv && !(csv = fopen(o.csv, "w")))
            fprintf(stderr, "agx-bench: cannot write %s\n", o.csv);
        if (csv)
            fprintf(csv, "nprocs,n_floats,max_delay_ms,algorithm,elapsed_ms,run_ms,omega_ms,absorb_ms,"
                    "speedup,check,tau_us,presteps\n");
        fflush(stdout);
    }
    for (int i = 0; i < o.nn && !failed; i++) {
        long long count = o.n[i] / p;
        for (int d = 0; d < o.nd && !failed; d++) {
            double best_reg = INFINITY;
            for (int a = 0; a < o.na && !failed; a++) {
                pap_res *r = &res[(i * o.nd + d) * o.na + a];
                /* the same delays for every algorithm of a case: paired comparisons */
                unsigned seed = 2654435761u * (unsigned)(rank + 1) + 40503u * (unsigned)(i * PAP_MAX + d);
                int rc = run_case(&o, count, o.delay[d], o.alg[a], off, seed, sbuf, rbuf, r);
                if (rc != MPI_SUCCESS) {
                    char msg[MPI_MAX_ERROR_STRING];
                    int len;
                    agx_error_string(rc, msg, &len);
                    if (rank == 0)
                        fprintf(stderr, "agx-bench pap: %s failed: %s\n", o.alg[a], msg);
                    failed = 1;
                    break;
                }
                r->absorb = res[(i * o.nd + 0) * o.na + a].run - r->run + r->omega;
                failed |= !r->ok;
                if (!is_pap(o.alg[a]))
                    best_reg = fmin(best_reg, r->elapsed);
            }
            for (int a = 0; a < o.na && rank == 0; a++) {
                pap_res *r = &res[(i * o.nd + d) * o.na + a];
                char sp[16] = "-";
                if (is_pap(o.alg[a]) && isfinite(best_reg))
                    snprintf(sp, sizeof sp, "%.2f", best_reg / r->elapsed);
                char tau[16] = "-", pre[16] = "-";
                if (!strcmp(o.alg[a], "bdr")) {
                    snprintf(tau, sizeof tau, "%.1f", r->tau * 1e6);
                    snprintf(pre, sizeof pre, "%.1f", r->presteps);
                }
                printf("%-8lld %7.1fms %-18s %9.3f %9.3f %9.3f %9.3f %8s %6s %8s %6s\n", count * p,
                       o.delay[d] * 1e3, o.alg[a], r->elapsed * 1e3, r->run * 1e3, r->omega * 1e3,
                       r->absorb * 1e3, sp, r->ok ? "ok" : "FAIL", tau, pre);
                if (csv)
                    fprintf(csv, "%d,%lld,%g,%s,%.6f,%.6f,%.6f,%.6f,%s,%s,%s,%s\n", p, count * p,
                            o.delay[d] * 1e3, o.alg[a], r->elapsed * 1e3, r->run * 1e3, r->omega * 1e3,
                            r->absorb * 1e3, strcmp(sp, "-") ? sp : "", r->ok ? "ok" : "FAIL",
                            strcmp(tau, "-") ? tau : "", strcmp(pre, "-") ? pre : "");
            }
            if (rank == 0)
                fflush(stdout);
        }
    }
    if (rank == 0 && !failed) {
        printf("# Table 3 style (nprocs=%d): fastest by Elapsed; a PAP-aware winner shows its speedup over "
               "the best regular algorithm\n%-8s", p, "# N\\MD");
        for (int d = 0; d < o.nd; d++)
            printf(" %12.4gms", o.delay[d] * 1e3);
        printf("\n");
        for (int i = 0; i < o.nn; i++) {
            printf("%-8lld", o.n[i] / p * p);
            for (int d = 0; d < o.nd; d++) {
                pap_res *r = &res[(i * o.nd + d) * o.na];
                int best = 0;
                double best_reg = INFINITY;
                for (int a = 0; a < o.na; a++) {
                    if (r[a].elapsed < r[best].elapsed)
                        best = a;
                    if (!is_pap(o.alg[a]))
                        best_reg = fmin(best_reg, r[a].elapsed);
                }
                char cell[40];
                if (is_pap(o.alg[best]) && isfinite(best_reg))
                    snprintf(cell, sizeof cell, "%s%.2f", o.alg[best], best_reg / r[best].elapsed);
                else
                    snprintf(cell, sizeof cell, "%s", o.alg[best]);
                printf(" %14s", cell);
            }
            printf("\n");
        }
    }
    if (csv)
        fclose(csv);
    free(sbuf), free(rbuf), free(res);
    for (int a = 0; a < o.na; a++)
        free(o.alg[a]);
    agx_pat_finalize(MPI_COMM_WORLD);
    MPI_Finalize();
    return failed;
}
