/*
 * agx-bench: OSU-style micro-benchmark of agx's algorithms against each other and the
 * MPI library's own collective.
 *
 *   agx-bench allgather|allgatherv [-a ALG[,ALG...]] [-m MIN:MAX] [-i ITERS] [-x WARMUP]
 *             [-c] [--dist|--distribution D] [--zero-copy] [--csv FILE] [--json FILE] [-q]
 *   agx-bench inter-allgather --setting N [--comm inter|color] [same options]
 *   agx-bench allgather --regions NxM ...   (N regions of M ranks, i.e. AGX_REGION_SIZE=M)
 *   agx-bench --list
 *
 * Size is the bytes each process contributes (OSU's convention), MPI_BYTE data.
 * inter-allgather runs KangTraff19's settings 1-8 (1-4 allgather, 5-8 allgatherv) on two
 * groups A (the first p ranks) and B, scaled to the ranks given: p:q = 1 (settings 1, 5,
 * 6) or 25:7 (the others); Size is the largest block of any process (the paper's
 * "maximum message size per node"), MPI_INT data as in the paper; block sizes: equal
 * (1, 2, 5, 7), A four times B (3), B four times A (4), rank i of a group of n sends
 * Size * i / (n-1) (6, 8). It prints T_root_gather / T_segmented(_v) next to Eq. 5.
 * Timing (ReproMPI's definitions, bench_start): after MPI_Barrier, an iteration's time is
 * the maximum over ranks of the call's local time (--sync barrier, with the barrier's exit
 * skew), or the latest end minus a broadcast common start time (--sync window); with
 * --skew / --noise each rank first computes its drawn delay and the time runs from the
 * latest arrival (start + the iteration's largest delay, known to every rank); the report
 * gives avg, min, max, p50 and p99 of those iteration times. -c fills new data before
 * every iteration and checks every result (outside the timed region).
 * Counters (messages and bytes sent, local / non-local) are per call, maximum over ranks;
 * the `native` algorithm's traffic is invisible to agx and reported as "-" (JSON null).
 */
#include "agx.h"
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>


static int rank, nprocs;

/* The communicator a run uses: MPI_COMM_WORLD's duplicate, or for inter-allgather an
 * inter-communicator between the two groups (or the duplicate, for a colour split). */
static MPI_Comm bench_comm(const options *o, MPI_Comm world, int p)
{
    MPI_Comm local, inter;
    if (!o->setting || o->color_split)
        return world;
    int isB = rank >= p;
    MPI_Comm_split(world, isB, rank, &local);
    MPI_Intercomm_create(local, 0, world, isB ? 0 : p, 7, &inter);
    MPI_Comm_free(&local);
    MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
    return inter;
}

/* agx_allgatherv_shared: the result stays in the node's segment; with -c it is copied
 * out for the check (inside the timed call). */
static int shared_call(const options *o, const shape *sh, const void *sbuf, void *rbuf, MPI_Comm comm)
{
    const void *res;
    agx_shared_handle h;
    int rc = agx_allgatherv_shared(sbuf, sh->mine, sh->type, sh->counts, sh->displs, sh->type, comm, &res, &h);
    for (int i = 0; rc == MPI_SUCCESS && o->check && i < sh->n; i++)
        memcpy((char *)rbuf + (size_t)sh->displs[i] * sh->unit, (const char *)res + (size_t)sh->displs[i] * sh->unit,
               (size_t)sh->counts[i] * sh->unit);
    agx_shared_release(&h);
    return rc;
}

static int do_call(const options *o, const shape *sh, const void *sbuf, void *rbuf, MPI_Comm comm, int shared,
                   int lib)
{
    if (shared)
        return shared_call(o, sh, sbuf, rbuf, comm);
    if (lib) /* algorithm mpi: the MPI library's own call, nothing of agx in between */
        return o->op == AGX_OP_ALLREDUCE   ? MPI_Allreduce(sbuf, rbuf, sh->mine, sh->type, MPI_SUM, comm)
               : o->op == AGX_OP_ALLGATHER ? MPI_Allgather(sbuf, sh->mine, sh->type, rbuf, sh->counts[0], sh->type, comm)
                                           : MPI_Allgatherv(sbuf, sh->mine, sh->type, rbuf, sh->counts, sh->displs,
                                                            sh->type, comm);
    int isB = rank >= sh->p;
    if (o->setting && o->color_split)
        return o->op == AGX_OP_ALLGATHER
                   ? agx_intergroup_allgather(sbuf, sh->mine, sh->type, rbuf, sh->counts[0], sh->type, comm, isB)
                   : agx_intergroup_allgatherv(sbuf, sh->mine, sh->type, rbuf, sh->counts, sh->displs, sh->type,
                                               comm, isB);
    if (o->op == AGX_OP_ALLREDUCE)
        return agx_allreduce(sbuf, rbuf, sh->mine, sh->type, MPI_SUM, comm);
    if (o->op == AGX_OP_ALLGATHER)
        return agx_allgather(sbuf, sh->mine, sh->type, rbuf, sh->counts[0], sh->type, comm);
    return agx_allgatherv(sbuf, sh->mine, sh->type, rbuf, sh->counts, sh->displs, sh->type, comm);
}

/* The regions agx uses for this run (labels for the model column). */
static int *region_labels(void)
{
    int *label = malloc(sizeof(int) * nprocs);
    if (agx_comm_regions(MPI_COMM_WORLD, label) != MPI_SUCCESS) {
        free(label);
        return NULL;
    }
    return label;
}

static int *g_labels; /* this run's region labels (intra ops) */

static int run_one(MPI_Comm comm, const options *o, const char *alg, long long bytes, record *rec,
                   double *times, double *tmax)
{
    shape sh;
    make_shape(o, rank, nprocs, bytes, &sh);
    long long sb = (long long)sh.mine * sh.unit, rb = sh.total * sh.unit;
    unsigned char *sbuf = bench_alloc((size_t)sb), *rbuf = bench_alloc((size_t)rb); /* written */
    int ok = 1, rc = MPI_SUCCESS, have = sbuf && rbuf, all = 0;

    /* every rank learns whether any could not allocate, so none waits in the collective */
    MPI_Allreduce(&have, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all) {
        if (!have)
            fprintf(stderr, "agx-bench: rank %d cannot allocate %lld + %lld bytes\n", rank, sb, rb);
        bench_free(sbuf, (size_t)sb);
        bench_free(rbuf, (size_t)rb);
        free_shape(&sh);
        return MPI_ERR_NO_MEM;
    }

    int shared = !strcmp(alg, "zero_copy"), mpi = !strcmp(alg, "mpi_init"), lib = !strcmp(alg, "mpi");
    bench_req q = {.r = AGX_REQUEST_NULL, .m = MPI_REQUEST_NULL};
    if (lib && (o->req || o->setting)) {
        if (rank == 0)
            fprintf(stderr, "agx-bench: algorithm mpi is the library's blocking intra call (persistent: mpi_init)\n");
        rc = MPI_ERR_ARG;
        goto fn_exit;
    }
    rc = agx_comm_set_algorithm(comm, o->op, strcasecmp(alg, "auto") && !shared && !mpi && !lib ? alg : NULL);
    if (rc == MPI_SUCCESS) /* --persistent: the request, once (with the algorithm set) */
        rc = bench_req_open(o, &sh, sbuf, rbuf, comm, alg, &q);
    if (rc != MPI_SUCCESS)
        goto fn_exit;
    int late = 0;
    double slack = o->window ? bench_window_slack() : 0;
    for (int it = -o->warmup; it < o->iters; it++) {
        if (it == 0)
            agx_stats_reset();
        if (o->check) {
            bench_fill(o, &sh, sbuf, rank, it);
            memset(rbuf, 0xEE, rb);
        }
        double t0 = bench_start(o->window, slack, &late);
        t0 += bench_skew_wait(&o->skew, it, rank, nprocs, t0); /* timed from the latest arrival */
        double tc;
        rc = o->req ? bench_req_call(o, &q, &sh, sbuf, rbuf, comm, 0, &tc) : do_call(o, &sh, sbuf, rbuf, comm, shared, lib);
        double t = MPI_Wtime() - t0;
        if (rc != MPI_SUCCESS)
            break;
        if (it >= 0)
            times[it] = t;
        if (o->check && ok)
            ok = bench_check(o, &sh, rbuf, rank, nprocs, it, alg, bytes);
    }
    if (rc != MPI_SUCCESS)
        goto fn_exit;

    bench_late_report(late, alg, bytes);
    agx_stats st;
    agx_stats_get(&st);
    unsigned long long c[4] = {st.msgs_local, st.msgs_nonlocal, st.bytes_local, st.bytes_nonlocal}, cm[4];
    MPI_Reduce(c, cm, 4, MPI_UNSIGNED_LONG_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(times, tmax, o->iters, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    int okall;
    MPI_Allreduce(&ok, &okall, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    const char *ran;
    agx_comm_last_algorithm(comm, o->op, &ran);
    snprintf(rec->alg, sizeof rec->alg, shared ? "zero_copy(%s)" : strcasecmp(alg, "auto") ? "%s" : "auto(%s)",
             mpi || lib ? alg : ran);
    rec->bytes = bytes;
    rec->validated = o->check && okall;
    rec->counted = !mpi && !lib && strcmp(ran, "native") != 0;
    rec->ml = cm[0] / o->iters;
    rec->mn = cm[1] / o->iters;
    rec->bl = cm[2] / o->iters;
    rec->bn = cm[3] / o->iters;
    rec->setting = o->setting;
    rec->p = sh.p;
    rec->q = sh.q;
    rec->eq5 = o->setting ? agx_model_intergroup_eq5(sh.KA, sh.KB) : 0;
    rec->volume = o->setting ? agx_model_intergroup_volume(sh.p, sh.q, sh.KA, sh.KB, sh.kA0, sh.kB0) : 0;
    if (o->setting || o->op != AGX_OP_ALLGATHER)
        rec->model_msgs = rec->model_bytes = -1;
    else if (g_labels)
        agx_model_allgather_nonlocal(ran, nprocs, g_labels, bytes, bench_leaders(), &rec->model_msgs,
                                     &rec->model_bytes);
    if (rank == 0) {
        double t[5];
        bench_summary(tmax, o->iters, t);
        rec->avg = t[0], rec->min = t[1], rec->max = t[2], rec->p50 = t[3], rec->p99 = t[4];
    }
    rec->overlap = -1;
    if (o->overlap) { /* OSU: as much computation as the call took (its mean, max over ranks) */
        double t_pure = rank == 0 ? rec->avg * 1e-6 : 0;
        MPI_Bcast(&t_pure, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        rec->overlap = bench_req_overlap(o, &q, &sh, sbuf, rbuf, comm, t_pure, &rc);
    }
    if (o->check && !okall && rc == MPI_SUCCESS)
        rc = MPI_ERR_OTHER;
fn_exit:
    bench_req_close(&q);
    bench_free(sbuf, (size_t)sb);
    bench_free(rbuf, (size_t)rb);
    free_shape(&sh);
    return rc;
}


int main(int argc, char **argv)
{
    options o;
    bench_note_command(argc, argv);
    if (argc >= 2 && !strcmp(argv[1], "--version")) {
        printf("agx-bench (agx %d.%d.%d)\n", AGX_VERSION_MAJOR, AGX_VERSION_MINOR, AGX_VERSION_PATCH);
        return 0;
    }
    if (argc >= 2 && !strcmp(argv[1], "pap"))
        return agx_bench_pap(argc, argv);
    if (argc >= 2 && !strcmp(argv[1], "alltoallv"))
        return agx_bench_a2a(argc, argv);
    if (argc >= 2 && !strcmp(argv[1], "twophase"))
        return agx_bench_io(argc, argv);
    if (argc >= 2 && !strcmp(argv[1], "--list")) {
        bench_list_algorithms();
        return 0;
    }
    if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        bench_coll_usage(stdout);
        return 0;
    }
    char err[256] = "";
    if (argc < 2) {
        bench_coll_usage(stderr);
        return 2;
    }
    if (bench_coll_args(argc, argv, &o, err, sizeof err) != 0) /* every rank fails alike; rank 0 says why */
        return bench_arg_error(argc, argv, err);
    bench_set_regions(o.region_size);
    int level;
    if (getenv("AGX_PROGRESS_THREAD")) /* agx's progress thread needs MPI_THREAD_MULTIPLE */
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &level);
    else
        MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (!o.setting)
        g_labels = region_labels();
    if (bench_mem_limit(&o, nprocs) || bench_outputs_writable(o.csv, o.json)) { /* before the run */
        MPI_Finalize();
        return 2;
    }
    MPI_Comm world;
    MPI_Comm_dup(MPI_COMM_WORLD, &world);
    MPI_Comm_set_errhandler(world, MPI_ERRORS_RETURN);
    agx_stats_enable(1);
    int gp = 0, gq = 0;
    if (o.setting) {
        if (nprocs < 2) {
            if (rank == 0)
                fprintf(stderr, "agx-bench: inter-allgather needs at least 2 ranks\n");
            MPI_Finalize();
            return 2;
        }
        setting_groups(o.setting, nprocs, &gp, &gq);
    }
    MPI_Comm comm = bench_comm(&o, world, gp);

    int nsizes = 0;
    for (long long b = o.min_bytes; b <= o.max_bytes; b = b ? b * o.mult : 1)
        nsizes++;
    int nrec = 0, failed = 0, total = nsizes * o.nalgs;
    record *recs = calloc((size_t)total, sizeof(record));
    double *times = malloc(sizeof(double) * o.iters), *tmax = malloc(sizeof(double) * o.iters);
    bench_progress_init(o.quiet, o.progress, 3.0);
    if (rank == 0)
        report_header(&o, nprocs, g_labels, gp, gq);
    for (long long b = o.min_bytes; b <= o.max_bytes; b = b ? b * o.mult : 1) {
        double first = 0, t_root = 0, t_seg = 0, eq5 = 0, volume = 0;
        for (int a = 0; a < o.nalgs; a++) {
            record *r = &recs[nrec];
            int rc = run_one(comm, &o, o.algs[a], b, r, times, tmax);
            if (rc != MPI_SUCCESS) {
                if (rank == 0) {
                    char msg[MPI_MAX_ERROR_STRING];
                    int len;
                    agx_error_string(rc, msg, &len);
                    bench_progress_clear();
                    fprintf(stderr, "agx-bench: %s %s %lld B failed: %s\n", agx_op_name(o.op),
                            o.algs[a], b, msg);
                }
                failed = 1;
                if (!o.check || rc != MPI_ERR_OTHER)
                    goto done;
            }
            nrec++;
            if (rank == 0) {
                if (a == 0)
                    first = r->avg;
                if (!strcmp(r->alg, "root_gather"))
                    t_root = r->avg;
                if (!strcmp(r->alg, "segmented") || !strcmp(r->alg, "segmented_v"))
                    t_seg = r->avg;
                eq5 = r->eq5;
                volume = r->volume;
                bench_progress_clear();
                report_row(&o, r, first);
                bench_progress("%d/%d done (%lld B, %s)", nrec, total, b, r->alg);
            }
        }
        if (rank == 0 && o.setting && t_root > 0 && t_seg > 0) {
            bench_progress_clear();
            printf("# %lld B: T_root_gather / T_segmented = %.2f   (Eq. 5 predicts %.2f as messages grow; "
                   "the copy-volume model of one shared node %.2f)\n", b, t_root / t_seg, eq5, volume);
            fflush(stdout);
        }
    }
done:
    if (rank == 0) {
        bench_progress_clear();
        if (o.csv)
            failed |= report_csv(o.csv, &o, nprocs, recs, nrec);
        if (o.json)
            failed |= report_json(o.json, &o, nprocs, recs, nrec);
    }
    free(recs);
    free(g_labels);
    free(times);
    free(tmax);
    for (int a = 0; a < o.nalgs; a++)
        free(o.algs[a]);
    if (comm != world)
        MPI_Comm_free(&comm);
    MPI_Comm_free(&world);
    MPI_Finalize();
    return failed ? 1 : 0;
}
