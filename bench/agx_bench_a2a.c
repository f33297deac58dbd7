/*
 * agx-bench alltoallv: the all-to-many kernels of KangRoss20 against each other and the
 * MPI library's MPI_Alltoallv, OSU-style.
 *
 *   agx-bench alltoallv [--pattern all-to-many|many-to-many|uniform] [--receivers N]
 *             [--senders S] [--bytes LIST] [-a LIST] [-i N] [-x N] [-c] [--csv F] [--json F]
 *             [-q] [--regions NxM]
 *
 * Patterns (bytes per non-empty pair from --bytes, MPI_BYTE data):
 *   all-to-many   every rank sends to N receivers, ranks floor(i p / N) (default N = p/16,
 *                 at least 1: one per 16-rank node, KangRoss20's E3SM-IO case);
 *   many-to-many  N receivers (default p), each hearing from S senders (default
 *                 ceil(sqrt p): BTIO's data phase on Lustre), ranks j + 1 + k floor(p/S);
 *   uniform       every pair (MPI_Alltoallv's classic case).
 * --stride S puts the receivers at ranks i S instead (KangRoss20's Lustre placement, ranks
 * 64 i: with S below p / N they crowd the low ranks, the straggler case of Figure 1a).
 * Timing as in the other modes (barrier, max over ranks per iteration, avg/min/max/p50/
 * p99). After the timed iterations one untimed pass runs with agx's arrival trace on
 * (agx_stats_trace): First = mean over receivers of the time their first message from
 * another rank arrived, Last = the latest last arrival over receivers, both from the start
 * of the call: the straggler effect (Sec. III-B) shows as a late First at receivers that
 * wait for senders busy elsewhere. '-' for native (invisible to agx).
 * AGX_ALLTOALLV_THROTTLE / AGX_ALLTOALLV_SYNC apply as in any agx program.
 */
#include "agx.h"
#include "bench.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef struct {
    char alg[64];
    long long bytes;
    double t[5];                /* avg, min, max, p50, p99 (us) */
    double first, last;         /* arrival trace (us), < 0: not visible */
    unsigned long long ml, mn;  /* messages of the busiest rank, local / non-local */
    int counted, validated;
} a2a_rec;

static int rank, nprocs;

/* j is one of n receivers: ranks i * stride (--stride), else floor(i p / n), i < n. */
static int is_receiver(int j, int n, int stride)
{
    if (stride)
        return j % stride == 0 && j / stride < n;
    long long i = ((long long)j * n + nprocs - 1) / nprocs;
    return i < n && i * nprocs / n == j;
}

/* Bytes rank s sends rank j (0: none). */
static int pair(const a2a_opts *o, int s, int j, long long bytes)
{
    int p = nprocs;
    if (o->pattern == P_UNIFORM)
        return (int)bytes;
    if (!is_receiver(j, o->nrecv, o->stride))
        return 0;
    if (o->pattern == P_TO_MANY)
        return (int)bytes;
    int S = o->nsend, stride = p / S > 0 ? p / S : 1, d = (s - j - 1 + 2 * p) % p; /* s = j + 1 + k stride */
    return d % stride == 0 && d / stride < S ? (int)bytes : 0;
}

static unsigned char val(int src, int dst, long long k) { return (unsigned char)(src * 31 + dst * 7 + k + 1); }

typedef struct {
    int *sc, *sd, *rc, *rd;
    unsigned char *sbuf, *rbuf;
    long long sn, rn;
} a2a_bufs;

static int bufs_make(const a2a_opts *o, long long bytes, a2a_bufs *b)
{
    int p = nprocs, have, all;
    *b = (a2a_bufs){0};
    b->sc = malloc(sizeof(int) * 4 * (size_t)p);
    b->sn = b->rn = 0;
    if (b->sc) {
        b->sd = b->sc + p, b->rc = b->sd + p, b->rd = b->rc + p;
        for (int j = 0; j < p; j++) {
            b->sc[j] = pair(o, rank, j, bytes), b->sd[j] = (int)b->sn, b->sn += b->sc[j];
            b->rc[j] = pair(o, j, rank, bytes), b->rd[j] = (int)b->rn, b->rn += b->rc[j];
        }
    }
    b->sbuf = bench_alloc((size_t)b->sn + 1); /* written */
    b->rbuf = bench_alloc((size_t)b->rn + 1);
    have = b->sc && b->sbuf && b->rbuf && b->sn < (1LL << 31) && b->rn < (1LL << 31);
    MPI_Allreduce(&have, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD); /* none waits alone */
    if (!have)
        fprintf(stderr, "agx-bench: rank %d cannot allocate %lld + %lld bytes\n", rank, b->sn, b->rn);
    return all;
}

static void bufs_free(a2a_bufs *b)
{
    bench_free(b->sbuf, (size_t)b->sn + 1), bench_free(b->rbuf, (size_t)b->rn + 1);
    free(b->sc);
}

/* One call (a start of q when it is set; lib: the MPI library's own MPI_Alltoallv, algorithm
 * mpi); with check, fresh data first and the result compared after. */
static int call(const a2a_opts *o, a2a_bufs *b, MPI_Comm comm, agx_request *q, int lib, int it, int *ok, double *t)
{
    if (o->check)
        for (int j = 0; j < nprocs; j++)
            for (int k = 0; k < b->sc[j]; k++)
                b->sbuf[b->sd[j] + k] = val(rank, j, k + it);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    t0 += bench_skew_wait(&o->skew, it, rank, nprocs, t0); /* --skew, --noise: from the latest arrival */
    int rc = *q    ? agx_start(q)
             : lib ? MPI_Alltoallv(b->sbuf, b->sc, b->sd, MPI_BYTE, b->rbuf, b->rc, b->rd, MPI_BYTE, comm)
                   : agx_alltoallv(b->sbuf, b->sc, b->sd, MPI_BYTE, b->rbuf, b->rc, b->rd, MPI_BYTE, comm);
    if (*q && rc == MPI_SUCCESS)
        rc = agx_wait(q);
    *t = MPI_Wtime() - t0;
    for (int s = 0; o->check && rc == MPI_SUCCESS && s < nprocs; s++)
        for (int k = 0; k < b->rc[s] && *ok; k++)
            *ok = b->rbuf[b->rd[s] + k] == val(s, rank, k + it);
    return rc;
}

static int run_one(const a2a_opts *o, const char *alg, long long bytes, MPI_Comm comm, a2a_rec *r, double *times)
{
    a2a_bufs b;
    int ok = 1, okall, rc = MPI_SUCCESS;
    double t, first, last;
    if (!bufs_make(o, bytes, &b)) {
        bufs_free(&b);
        return MPI_ERR_NO_MEM;
    }
    agx_request q = AGX_REQUEST_NULL;
    const char *ran;
    int lib = !strcmp(alg, "mpi");
    if (lib && o->persistent) {
        if (rank == 0)
            fprintf(stderr, "agx-bench alltoallv: algorithm mpi is the library's blocking call\n");
        rc = MPI_ERR_ARG;
        goto out;
    }
    if ((rc = agx_comm_set_algorithm(comm, AGX_OP_ALLTOALLV, strcasecmp(alg, "auto") && !lib ? alg : NULL)) !=
        MPI_SUCCESS)
        goto out;
    if (o->persistent && (rc = agx_alltoallv_init(b.sbuf, b.sc, b.sd, MPI_BYTE, b.rbuf, b.rc, b.rd, MPI_BYTE, comm,
                                                  MPI_INFO_NULL, &q)) != MPI_SUCCESS)
        goto out;
    agx_comm_last_algorithm(comm, AGX_OP_ALLTOALLV, &ran); /* a request that plans nothing: native */
    ran = lib ? "mpi" : ran;
    snprintf(r->alg, sizeof r->alg, "%s", ran);
    for (int it = -o->warmup; it < o->iters && rc == MPI_SUCCESS; it++) {
        if (it == 0)
            agx_stats_reset();
        rc = call(o, &b, comm, &q, lib, it, &ok, &t);
        if (it >= 0)
            times[it] = t;
    }
    agx_stats st;
    agx_stats_get(&st);
    unsigned long long c[2] = {st.msgs_local / o->iters, st.msgs_nonlocal / o->iters}, cm[2];
    agx_stats_reset(); /* the traced pass */
    agx_stats_trace(1);
    if (rc == MPI_SUCCESS) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        rc = agx_alltoallv(b.sbuf, b.sc, b.sd, MPI_BYTE, b.rbuf, b.rc, b.rd, MPI_BYTE, comm);
        agx_stats_get(&st);
        first = st.arrivals ? (st.first_arrival - t0) * 1e6 : 0;
        last = st.arrivals ? (st.last_arrival - t0) * 1e6 : 0;
    }
    agx_stats_trace(0);
    if (rc != MPI_SUCCESS)
        goto out;
    double sums[2] = {first, st.arrivals > 0}, sumall[2], lastmax, *tmax = times + o->iters;
    MPI_Reduce(sums, sumall, 2, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&last, &lastmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(c, cm, 2, MPI_UNSIGNED_LONG_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(times, tmax, o->iters, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Allreduce(&ok, &okall, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!o->persistent && !lib) { /* the default's row says what it ran: auto(name), as the other modes */
        agx_comm_last_algorithm(comm, AGX_OP_ALLTOALLV, &ran);
        snprintf(r->alg, sizeof r->alg, strcasecmp(alg, "auto") ? "%s" : "auto(%s)", ran);
    }
    r->bytes = bytes;
    r->counted = strcmp(ran, "native") != 0 && !lib;
    r->validated = o->check && okall;
    r->ml = cm[0], r->mn = cm[1];
    r->first = r->counted && sumall[1] > 0 ? sumall[0] / sumall[1] : -1;
    r->last = r->counted && sumall[1] > 0 ? lastmax : -1;
    if (rank == 0)
        bench_summary(tmax, o->iters, r->t);
    if (o->check && !okall)
        rc = MPI_ERR_OTHER;
out:
    agx_request_free(&q);
    bufs_free(&b);
    return rc;
}

static int write_files(const a2a_opts *o, const a2a_rec *r, int n)
{
    FILE *c = o->csv ? fopen(o->csv, "w") : NULL, *j = o->json ? fopen(o->json, "w") : NULL;
    char *ctx = j ? bench_context_json(nprocs, o->warmup) : NULL;
    if ((o->csv && !c) || (o->json && !j))
        perror("agx-bench: output file");
    if (c)
        fprintf(c, "op,pattern,receivers,senders,algorithm,nprocs,bytes,iterations,avg_us,min_us,max_us,p50_us,"
                   "p99_us,validated,msgs_local,msgs_nonlocal,first_arrival_us,last_arrival_us\n");
    if (j)
        fprintf(j, "[\n");
    for (int i = 0; i < n; i++) {
        const a2a_rec *x = &r[i];
        if (c) {
            fprintf(c, "alltoallv,%s,%d,%d,%s,%d,%lld,%d,%.3f,%.3f,%.3f,%.3f,%.3f,%s,", bench_a2a_patterns[o->pattern], o->nrecv,
                    o->nsend, x->alg, nprocs, x->bytes, o->iters, x->t[0], x->t[1], x->t[2], x->t[3], x->t[4],
                    x->validated ? "true" : "false");
            if (x->counted)
                fprintf(c, "%llu,%llu,%.3f,%.3f\n", x->ml, x->mn, x->first, x->last);
            else
                fprintf(c, ",,,\n");
        }
        if (j) {
            fprintf(j, "  {\"op\": \"alltoallv\", \"pattern\": \"%s\", \"receivers\": %d, \"senders\": %d, "
                       "\"algorithm\": \"%s\", \"nprocs\": %d, \"bytes\": %lld, \"iterations\": %d, \"avg_us\": %.3f, "
                       "\"min_us\": %.3f, \"max_us\": %.3f, \"p50_us\": %.3f, \"p99_us\": %.3f, \"validated\": %s, ",
                    bench_a2a_patterns[o->pattern], o->nrecv, o->nsend, x->alg, nprocs, x->bytes, o->iters, x->t[0], x->t[1],
                    x->t[2], x->t[3], x->t[4], x->validated ? "true" : "false");
            if (x->counted)
                fprintf(j, "\"msgs_local\": %llu, \"msgs_nonlocal\": %llu, \"first_arrival_us\": %.3f, "
                           "\"last_arrival_us\": %.3f", x->ml, x->mn, x->first, x->last);
            else
                fprintf(j, "\"msgs_local\": null, \"msgs_nonlocal\": null, \"first_arrival_us\": null, "
                           "\"last_arrival_us\": null");
            fprintf(j, ", \"context\": %s}%s\n", ctx ? ctx : "null", i + 1 < n ? "," : "");
        }
    }
    free(ctx);
    int bad = (o->csv && !c) || (o->json && !j);
    if (j)
        fprintf(j, "]\n"), bad |= bench_close(j, o->json);
    if (c)
        bad |= bench_close(c, o->csv);
    return bad;
}

static void header(const a2a_opts *o)
{
    const char *ver = bench_mpi_library();
    const char *thr = getenv("AGX_ALLTOALLV_THROTTLE"), *sync = getenv("AGX_ALLTOALLV_SYNC");
    printf("# agx-bench alltoallv  pattern=%s  receivers=%d", bench_a2a_patterns[o->pattern], o->nrecv);
    if (o->stride)
        printf(" (stride %d)", o->stride);
    if (o->pattern == P_MANY)
        printf("  senders/receiver=%d", o->nsend);
    char skew[128];
    bench_skew_text(&o->skew, skew, sizeof skew);
    printf("  nprocs=%d  iterations=%d  warmup=%d  validate=%s  throttle=%s  sync=%s  %s\n", nprocs, o->iters,
           o->warmup, o->check ? "yes" : "no", thr ? thr : "32", sync ? sync : "issend", skew);
    printf("# MPI: %s\n# time per call in us (max over ranks); Size = bytes per non-empty pair; Msgs = "
           "messages sent by the busiest rank, local/non-local;\n# First/Last = receivers' mean first and latest "
           "last arrival (us after the call began, one traced pass)\n", ver);
    printf("%-10s %-12s", "# Size", "Algorithm");
    bench_time_header(o->full);
    printf(" %8s %14s %10s %10s %6s\n", "Speedup", "Msgs(l/nl)", "First(us)", "Last(us)", "Check");
    fflush(stdout);
}

int agx_bench_a2a(int argc, char **argv)
{
    a2a_opts o;
    char err[256] = "";
    if (bench_a2a_args(argc, argv, &o, err, sizeof err))
        return bench_arg_error(argc, argv, err);
    bench_set_regions(o.region_size);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (bench_outputs_writable(o.csv, o.json)) { /* before the run, not after it */
        MPI_Finalize();
        return 2;
    }
    if (!o.nrecv)
        o.nrecv = o.pattern == P_TO_MANY ? (nprocs / 16 > 0 ? nprocs / 16 : 1) : nprocs;
    o.nrecv = o.nrecv > nprocs ? nprocs : o.nrecv;
    if (o.stride && (long long)o.stride * (o.nrecv - 1) >= nprocs)
        o.nrecv = (nprocs - 1) / o.stride + 1;
    if (!o.nsend)
        o.nsend = (int)ceil(sqrt((double)nprocs));
    o.nsend = o.nsend > nprocs ? nprocs : o.nsend;
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    agx_stats_enable(1);
    a2a_rec *recs = calloc((size_t)(o.nbytes * o.nalgs), sizeof(a2a_rec));
    double *times = malloc(sizeof(double) * 2 * (size_t)o.iters);
    int nrec = 0, failed = 0;
    if (rank == 0)
        header(&o);
    for (int s = 0; s < o.nbytes && !failed; s++)
        for (int a = 0; a < o.nalgs && !failed; a++) {
            a2a_rec *r = &recs[nrec];
            int rc = run_one(&o, o.algs[a], o.bytes[s], comm, r, times);
            if (rc != MPI_SUCCESS) {
                char msg[MPI_MAX_ERROR_STRING];
                int len;
                agx_error_string(rc, msg, &len);
                if (rank == 0)
                    fprintf(stderr, "agx-bench: alltoallv %s %lld B failed: %s\n", o.algs[a], o.bytes[s], msg);
                failed = 1;
                break;
            }
            nrec++;
            if (rank != 0)
                continue;
            char ms[40], f[24] = "-", l[24] = "-";
            snprintf(ms, sizeof ms, r->counted ? "%llu/%llu" : "-", r->ml, r->mn);
            if (r->first >= 0)
                snprintf(f, sizeof f, "%.2f", r->first), snprintf(l, sizeof l, "%.2f", r->last);
            printf("%-10lld %-12s", r->bytes, r->alg);
            bench_time_cols(o.full, r->t, o.iters);
            printf(" %8.2f %14s %10s %10s %6s\n", r->t[0] > 0 ? recs[nrec - 1 - a].t[0] / r->t[0] : 0.0, ms, f, l,
                   o.check ? (r->validated ? "ok" : "FAIL") : "-");
            fflush(stdout);
        }
    if (rank == 0)
        failed |= write_files(&o, recs, nrec);
    free(recs);
    free(times);
    for (int a = 0; a < o.nalgs; a++)
        free(o.algs[a]);
    MPI_Comm_free(&comm);
    MPI_Finalize();
    return failed ? 1 : 0;
}
