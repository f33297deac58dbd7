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

static int is_pap(const char *alg) { return !strcmp(alg, "bdr") || !strcmp(alg, "bslb"); }

static float value(int src, long long j, int it) { return (float)((src * 7 + it * 3 + j) % 4093); }

static void sleep_s(double s)
{
    if (s > 0)
        usleep((useconds_t)(s * 1e6));
}

/* One (N, max delay, algorithm) case on MPI_COMM_WORLD. Rank q's delays come from the
 * seed 2654435761 (q + 1) + salt; every rank draws all of them (--predict gives them to
 * agx: arrival_q = compute + d_q after the common start). */
static int run_case(const pap_opts *o, long long count, double md, const char *alg, double off,
                    unsigned salt, float *sbuf, float *rbuf, unsigned *rs, double *arrival, pap_res *res)
{
    int rank, p, rc;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    int predict = o->predict && is_pap(alg);
    if ((rc = agx_comm_set_algorithm(MPI_COMM_WORLD, AGX_OP_ALLGATHER, alg)) != MPI_SUCCESS)
        return rc;
    for (int q = 0; q < p; q++)
        rs[q] = 2654435761u * (unsigned)(q + 1) + salt;
    double sum_e = 0, sum_r = 0, sum_w = 0, sum_pre = 0;
    agx_pat_info info;
    int bad = 0;
    for (int it = -o->warmup; it < o->iters; it++) {
        for (int q = 0; q < p; q++) {
            rs[q] = rs[q] * 1103515245u + 12345u;
            arrival[q] = o->compute + md * (double)((rs[q] >> 8) & 0xffffff) / 16777215.0;
        }
        double half = arrival[rank] / 2;
        for (long long j = 0; j < count; j++)
            sbuf[j] = value(rank, j, it);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
        agx_pat_compute_begin();
        /* tau 0: agx measures it from bdr's last calls, as the monitor does */
        if (predict && (rc = agx_pat_predict(MPI_COMM_WORLD, arrival, 0, count * (long long)sizeof(float))))
            break;
        sleep_s(half);
        agx_pat_progress(0.5);
        sleep_s(half);
        agx_pat_compute_end();
        double a = MPI_Wtime() + off;
        rc = agx_allgather(sbuf, (int)count, MPI_FLOAT, rbuf, (int)count, MPI_FLOAT, MPI_COMM_WORLD);
        double f = MPI_Wtime() + off;
        if (rc != MPI_SUCCESS)
            break;
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
    if (rc != MPI_SUCCESS)
        return rc;
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

/* The best Elapsed among the regular (not PAP-aware) algorithms of one case r[0..na). */
static double best_regular(const pap_opts *o, const pap_res *r)
{
    double best = INFINITY;
    for (int a = 0; a < o->na; a++)
        if (!is_pap(o->alg[a]))
            best = fmin(best, r[a].elapsed);
    return best;
}

/* The grid of Tables 3-4: the fastest algorithm per (N, max delay), with its speedup over
 * the best regular one when it is PAP-aware. */
static void print_grid(const pap_opts *o, const pap_res *res, int p)
{
    printf("# Table 3 style (nprocs=%d): fastest by Elapsed; a PAP-aware winner shows its speedup over "
           "the best regular algorithm\n%-8s", p, "# N\\MD");
    for (int d = 0; d < o->nd; d++)
        printf(" %12.4gms", o->delay[d] * 1e3);
    printf("\n");
    for (int i = 0; i < o->nn; i++) {
        printf("%-8lld", o->n[i] / p * p);
        for (int d = 0; d < o->nd; d++) {
            const pap_res *r = &res[(i * o->nd + d) * o->na];
            int best = 0;
            double best_reg = best_regular(o, r);
            for (int a = 0; a < o->na; a++)
                if (r[a].elapsed < r[best].elapsed)
                    best = a;
            char cell[40];
            if (is_pap(o->alg[best]) && isfinite(best_reg))
                snprintf(cell, sizeof cell, "%s%.2f", o->alg[best], best_reg / r[best].elapsed);
            else
                snprintf(cell, sizeof cell, "%s", o->alg[best]);
            printf(" %14s", cell);
        }
        printf("\n");
    }
}

/* --json: one record per (N, max delay, algorithm), each with the run's context. */
static int write_json(const pap_opts *o, const pap_res *res, int p)
{
    char *ctx = bench_context_json(p, o->warmup);
    FILE *f = ctx ? fopen(o->json, "w") : NULL;
    if (!f) {
        fprintf(stderr, "agx-bench: cannot write %s\n", o->json);
        free(ctx);
        return 1;
    }
    fprintf(f, "[\n");
    for (int i = 0, k = 0; i < o->nn; i++)
        for (int d = 0; d < o->nd; d++) {
            const pap_res *r = &res[(i * o->nd + d) * o->na];
            double best_reg = best_regular(o, r);
            for (int a = 0; a < o->na; a++, k++) {
                fprintf(f, "%s  {\"op\": \"pap\", \"algorithm\": \"%s\", \"nprocs\": %d, \"n_floats\": %lld, "
                        "\"bytes\": %lld, \"iterations\": %d, \"max_delay_ms\": %g, \"elapsed_ms\": %.6f, "
                        "\"run_ms\": %.6f, \"omega_ms\": %.6f, \"absorb_ms\": %.6f, \"speedup\": ",
                        k ? ",\n" : "", o->alg[a], p, o->n[i] / p * p, o->n[i] / p * (long long)sizeof(float),
                        o->iters, o->delay[d] * 1e3, r[a].elapsed * 1e3, r[a].run * 1e3, r[a].omega * 1e3,
                        r[a].absorb * 1e3);
                if (is_pap(o->alg[a]) && isfinite(best_reg))
                    fprintf(f, "%.4f", best_reg / r[a].elapsed);
                else
                    fprintf(f, "null");
                fprintf(f, ", \"validated\": %s, \"context\": %s}", r[a].ok ? "true" : "false", ctx);
            }
        }
    fprintf(f, "\n]\n");
    free(ctx);
    return bench_close(f, o->json);
}

int agx_bench_pap(int argc, char **argv)
{
    pap_opts o;
    if (argc >= 3 && (!strcmp(argv[2], "-h") || !strcmp(argv[2], "--help"))) {
        bench_pap_usage(stdout);
        return 0;
    }
    char err[256] = "";
    if (bench_pap_args(argc, argv, &o, err, sizeof err))
        return bench_arg_error(argc, argv, err);
    int provided, rank, p;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (o.predict) /* the arrivals come from here: a session without the monitor thread */
        setenv("AGX_PAT_MONITOR", "0", 1);
    agx_pat_init(MPI_COMM_WORLD);
    agx_pat_info info;
    agx_pat_get_info(MPI_COMM_WORLD, &info);
    double off = info.clock_offset;
    long long maxc = 0;
    for (int i = 0; i < o.nn; i++) {
        if (o.per_process) /* -m: bytes per process -> the paper's N, total floats */
            o.n[i] = o.n[i] / (long long)sizeof(float) * p;
        maxc = o.n[i] / p > maxc ? o.n[i] / p : maxc;
    }
    float *sbuf = malloc(sizeof(float) * (size_t)(maxc ? maxc : 1));
    float *rbuf = malloc(sizeof(float) * (size_t)(maxc ? maxc * p : 1));
    pap_res *res = calloc((size_t)(o.nn * o.nd * o.na), sizeof(pap_res));
    unsigned *rs = malloc(sizeof(unsigned) * (size_t)p); /* every rank's delay stream */
    double *arrival = malloc(sizeof(double) * (size_t)p);
    int nomem = !sbuf || !rbuf || !res || !rs || !arrival, anynomem; /* agreed: no rank left waiting in a collective */
    MPI_Allreduce(&nomem, &anynomem, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (anynomem || bench_outputs_writable(o.csv, o.json)) {
        if (anynomem && rank == 0)
            fprintf(stderr, "agx-bench: pap: cannot allocate %lld floats per process\n", maxc * (p + 1));
        free(sbuf), free(rbuf), free(res), free(rs), free(arrival);
        agx_pat_finalize(MPI_COMM_WORLD);
        MPI_Finalize();
        return anynomem ? 1 : 2;
    }
    FILE *csv = NULL;
    int failed = 0, out_bad = 0;
    if (rank == 0) {
        const char *ver = bench_mpi_library();
        printf("# agx-bench pap  nprocs=%d  iterations=%d (+%d warm-up)  compute=%.1f ms + U(0, max delay)"
               "  monitor=%s  validate=every iteration\n", p, o.iters, o.warmup, o.compute * 1e3,
               o.predict && !info.active ? "none: --predict gives bdr/bslb the true arrivals (agx_pat_predict)"
               : info.active             ? "on"
                                         : "OFF (no thread: bdr/bslb run as ring/gather_bcast; --predict)");
        printf("# MPI: %s\n", ver);
        printf("# times in ms: Elapsed = Eq. 2, Run = Eq. 3, Omega = measured Eq. 1, Absorb = Eq. 4 "
               "(r' at max delay 0); Speedup = best regular Elapsed / Elapsed\n");
        printf("# Tau(us) and Pre: bdr's measured tau and pre-step transfers per schedule (mean)\n");
        printf("%-8s %9s %-18s %9s %9s %9s %9s %8s %6s %8s %6s\n", "# N", "MaxDelay", "Algorithm", "Elapsed",
               "Run", "Omega", "Absorb", "Speedup", "Check", "Tau(us)", "Pre");
        if (o.csv && !(csv = fopen(o.csv, "w")))
            fprintf(stderr, "agx-bench: cannot write %s\n", o.csv), out_bad = 1; /* rank 0's: no hang */
        if (csv)
            fprintf(csv, "nprocs,n_floats,max_delay_ms,algorithm,elapsed_ms,run_ms,omega_ms,absorb_ms,"
                    "speedup,check,tau_us,presteps\n");
        fflush(stdout);
    }
    bench_progress_init(o.quiet, o.progress, 0);
    for (int i = 0; i < o.nn && !failed; i++) {
        long long count = o.n[i] / p;
        for (int d = 0; d < o.nd && !failed; d++) {
            double best_reg = INFINITY;
            for (int a = 0; a < o.na && !failed; a++) {
                pap_res *r = &res[(i * o.nd + d) * o.na + a];
                if (rank == 0)
                    bench_progress("pap N=%lld, max delay %g ms, %s ...", count * p, o.delay[d] * 1e3, o.alg[a]);
                /* the same delays for every algorithm of a case: paired comparisons */
                unsigned salt = 40503u * (unsigned)(i * PAP_MAX + d);
                int rc = run_case(&o, count, o.delay[d], o.alg[a], off, salt, sbuf, rbuf, rs, arrival, r);
                if (rc != MPI_SUCCESS) {
                    char msg[MPI_MAX_ERROR_STRING];
                    int len;
                    agx_error_string(rc, msg, &len);
                    if (rank == 0) {
                        bench_progress_clear();
                        fprintf(stderr, "agx-bench pap: %s failed: %s\n", o.alg[a], msg);
                    }
                    failed = 1;
                    break;
                }
                r->absorb = res[(i * o.nd + 0) * o.na + a].run - r->run + r->omega;
                failed |= !r->ok;
                if (!is_pap(o.alg[a]))
                    best_reg = fmin(best_reg, r->elapsed);
            }
            if (rank == 0)
                bench_progress_clear();
            for (int a = 0; a < o.na && rank == 0 && !failed; a++) {
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
    if (rank == 0 && !failed)
        print_grid(&o, res, p);
    if (rank == 0 && o.json && !failed)
        out_bad |= write_json(&o, res, p);
    if (csv)
        out_bad |= bench_close(csv, o.csv);
    free(sbuf), free(rbuf), free(res), free(rs), free(arrival);
    for (int a = 0; a < o.na; a++)
        free(o.alg[a]);
    agx_pat_finalize(MPI_COMM_WORLD);
    MPI_Finalize();
    return failed || out_bad;
}
