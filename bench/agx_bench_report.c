/*
 * agx-bench's report for the allgather(v), allreduce and inter-allgather modes: the table
 * on stdout (rank 0; OSU's columns, with -f its full statistics) and the --csv / --json
 * files. The CSV and JSON always carry every statistic; the JSON records also carry the
 * run's context (bench_context_json).
 */
#include "agx.h"
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>

void report_header(const options *o, int nprocs, const int *labels, int gp, int gq)
{
    const char *ver = bench_mpi_library();
    if (o->setting)
        printf("# agx-bench inter-allgather  setting=%d (%s)  p=%d q=%d  on %s  nprocs=%d  iterations=%d  "
               "warmup=%d  validate=%s\n", o->setting, agx_op_name(o->op), gp, gq,
               o->color_split ? "a colour split" : "an inter-communicator", nprocs, o->iters, o->warmup,
               o->check ? "yes" : "no");
    else
        printf("# agx-bench %s  nprocs=%d  iterations=%d  warmup=%d  validate=%s%s%s\n",
               agx_op_name(o->op), nprocs, o->iters, o->warmup, o->check ? "yes" : "no",
               o->op == AGX_OP_ALLGATHERV ? "  dist=" : "", o->op == AGX_OP_ALLGATHERV ? bench_dist_names[o->dist] : "");
    printf("# MPI: %s\n", ver);
    if (o->req)
        printf("# mode: %s%s\n", o->req == BENCH_PERSISTENT ? "persistent (each iteration agx_start + agx_wait of a "
               "request made once)" : "non-blocking (each iteration agx_i<op> + agx_wait)",
               o->overlap ? "; Overlap(%) = OSU's 100 (1 - (t_total - t_compute) / t_pure), computing t_pure" : "");
    if (o->skew.dist || o->skew.noise_rate > 0) {
        char skew[128];
        bench_skew_text(&o->skew, skew, sizeof skew);
        printf("# %s: each rank computes its drawn delay first; times are from the latest arrival\n", skew);
    }
    printf("# time per call in us: %s; Size = %s%s\n",
           o->window ? "latest end - a common start time (--sync window)"
                     : "max over ranks of the local time, barrier before each iteration",
           o->setting ? "largest block of any process, bytes (MPI_INT)" : "bytes per process",
           o->full ? "" : "; -f: min, max, p50, p99");
    printf("# Msgs and Bytes: sent per call by the busiest rank, local/non-local "
           "(same node / other node); '-' = not visible (native)\n");
    if (labels) {
        int nr = 0, lo = 0, hi = 0;
        agx_model_regions(nprocs, labels, &nr, &lo, &hi);
        printf("# regions: %d, sizes %d..%d%s; Model = Bienz's non-local messages/bytes of the "
               "busiest rank (Eq. 3/4 counts)\n", nr, lo, hi,
               getenv("AGX_REGION_SIZE") ? " (AGX_REGION_SIZE)" : getenv("AGX_REGIONS") ? " (AGX_REGIONS)"
                                                                 : " (shared-memory nodes)");
    }
    printf("%-10s %-20s", "# Size", "Algorithm");
    bench_time_header(o->full);
    printf(" %8s %10s %16s %6s %14s%s\n", "Speedup", "Msgs(l/nl)", "Bytes(l/nl)", "Check", "Model(nl)",
           o->overlap ? "  Overlap(%)" : "");
    fflush(stdout);
}

static void fmt_counts(char *buf, size_t n, const record *r, int bytes)
{
    if (!r->counted)
        snprintf(buf, n, "-");
    else if (bytes)
        snprintf(buf, n, "%llu/%llu", r->bl, r->bn);
    else
        snprintf(buf, n, "%llu/%llu", r->ml, r->mn);
}

static const char *const mode_names[] = {"blocking", "persistent", "nonblocking"};

void report_row(const options *o, const record *r, double first)
{
    char ms[32], bs[48], model[40] = "-";
    fmt_counts(ms, sizeof ms, r, 0);
    fmt_counts(bs, sizeof bs, r, 1);
    if (r->model_msgs >= 0)
        snprintf(model, sizeof model, "%lld/%lld", r->model_msgs, r->model_bytes);
    printf("%-10lld %-20s", r->bytes, r->alg);
    bench_time_cols(o->full, (const double[5]){r->avg, r->min, r->max, r->p50, r->p99}, o->iters);
    printf(" %8.2f %10s %16s %6s %14s", r->avg > 0 ? first / r->avg : 0.0, ms, bs,
           o->check ? (r->validated ? "ok" : "FAIL") : "-", model);
    if (o->overlap)
        printf(" %10.1f", r->overlap);
    printf("\n");
    fflush(stdout);
}

int report_csv(const char *path, const options *o, int nprocs, const record *r, int n)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        return 1;
    }
    fprintf(f, "op,algorithm,nprocs,bytes,iterations,avg_us,min_us,max_us,p50_us,p99_us,validated,"
               "msgs_local,msgs_nonlocal,bytes_local,bytes_nonlocal,setting,p,q,eq5_ratio,volume_ratio,"
               "model_msgs_nonlocal,model_bytes_nonlocal,mode,overlap_pct\n");
    for (int i = 0; i < n; i++) {
        fprintf(f, "%s,%s,%d,%lld,%d,%.3f,%.3f,%.3f,%.3f,%.3f,%s,", agx_op_name(o->op), r[i].alg,
                nprocs, r[i].bytes, o->iters, r[i].avg, r[i].min, r[i].max, r[i].p50, r[i].p99,
                r[i].validated ? "true" : "false");
        if (r[i].counted)
            fprintf(f, "%llu,%llu,%llu,%llu,", r[i].ml, r[i].mn, r[i].bl, r[i].bn);
        else
            fprintf(f, ",,,,");
        if (r[i].setting)
            fprintf(f, "%d,%d,%d,%.3f,%.3f,", r[i].setting, r[i].p, r[i].q, r[i].eq5, r[i].volume);
        else
            fprintf(f, ",,,,,");
        if (r[i].model_msgs >= 0)
            fprintf(f, "%lld,%lld,", r[i].model_msgs, r[i].model_bytes);
        else
            fprintf(f, ",,");
        fprintf(f, "%s,", mode_names[o->req]);
        if (r[i].overlap >= 0)
            fprintf(f, "%.1f\n", r[i].overlap);
        else
            fprintf(f, "\n");
    }
    return bench_close(f, path);
}

int report_json(const char *path, const options *o, int nprocs, const record *r, int n)
{
    char *ctx = bench_context_json(nprocs, o->warmup);
    FILE *f = ctx ? fopen(path, "w") : NULL;
    if (!f) {
        perror(path);
        free(ctx);
        return 1;
    }
    fprintf(f, "[\n");
    for (int i = 0; i < n; i++) {
        fprintf(f, "  {\"op\": \"%s\", \"algorithm\": \"%s\", \"nprocs\": %d, \"bytes\": %lld, "
                   "\"iterations\": %d, \"avg_us\": %.3f, \"min_us\": %.3f, \"max_us\": %.3f, "
                   "\"p50_us\": %.3f, \"p99_us\": %.3f, \"validated\": %s, ",
                agx_op_name(o->op), r[i].alg, nprocs, r[i].bytes, o->iters, r[i].avg, r[i].min,
                r[i].max, r[i].p50, r[i].p99, r[i].validated ? "true" : "false");
        if (r[i].counted)
            fprintf(f, "\"msgs_local\": %llu, \"msgs_nonlocal\": %llu, \"bytes_local\": %llu, "
                       "\"bytes_nonlocal\": %llu", r[i].ml, r[i].mn, r[i].bl, r[i].bn);
        else
            fprintf(f, "\"msgs_local\": null, \"msgs_nonlocal\": null, \"bytes_local\": null, "
                       "\"bytes_nonlocal\": null");
        if (r[i].setting)
            fprintf(f, ", \"setting\": %d, \"p\": %d, \"q\": %d, \"eq5_ratio\": %.3f, \"volume_ratio\": %.3f",
                    r[i].setting, r[i].p, r[i].q, r[i].eq5, r[i].volume);
        if (r[i].model_msgs >= 0)
            fprintf(f, ", \"model_msgs_nonlocal\": %lld, \"model_bytes_nonlocal\": %lld", r[i].model_msgs,
                    r[i].model_bytes);
        fprintf(f, ", \"mode\": \"%s\"", mode_names[o->req]);
        if (r[i].overlap >= 0)
            fprintf(f, ", \"overlap_pct\": %.1f", r[i].overlap);
        fprintf(f, ", \"context\": %s}%s\n", ctx, i + 1 < n ? "," : "");
    }
    fprintf(f, "]\n");
    free(ctx);
    return bench_close(f, path);
}
