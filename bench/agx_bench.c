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
 * skew), or the latest end minus a broadcast common start time (--sync window); the report
 * gives avg, min, max, p50 and p99 of those iteration times. -c fills new data before
 * every iteration and checks every result (outside the timed region).
 * Counters (messages and bytes sent, local / non-local) are per call, maximum over ranks;
 * the `native` algorithm's traffic is invisible to agx and reported as "-" (JSON null).
 */
#include "agx.h"
#include "bench.h"
#include "model.h"    /* KangTraff19 Eq. 5, Bienz Eq. 3/4 counts */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <getopt.h>
#include <strings.h>


static int rank, nprocs;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: agx-bench allgather|allgatherv|allreduce [options]\n"
            "       (allreduce: MPI_UNSIGNED sums of -m bytes per process)\n"
            "       agx-bench inter-allgather --setting N [--comm inter|color] [options]\n"
            "       agx-bench pap [-N LIST] [--iterations N] [--max-delay LIST] [-a LIST]\n"
            "                 (Proficz21's mini-benchmark; agx-bench pap -h)\n"
            "       agx-bench alltoallv [--pattern P] [--receivers N] [--bytes LIST] [-a LIST]\n"
            "                 (KangRoss20's all-to-many kernels; agx-bench alltoallv -h)\n"
            "       agx-bench twophase --workload e3sm|flash|btio --file PATH [-k LIST]\n"
            "                 (two-phase collective write vs MPI_File_write_all; agx-bench twophase -h)\n"
            "       agx-bench --list | --version\n"
            "  -a LIST       algorithms, comma-separated (default: auto = agx's selection,\n"
            "                which honours AGX_<OP>_ALGORITHM)\n"
            "  -m MIN:MAX    bytes per process, doubling (K and M suffixes; default 8:1M)\n"
            "  --factor F    grow sizes by a factor F instead of 2\n"
            "  -f            full statistics: also min, max, p50, p99 and iterations (OSU)\n"
            "  -i N          measured iterations per size (default 100)\n"
            "  -x N          warm-up iterations per size (default 10)\n"
            "  -c            validate every result\n"
            "  -M SIZE       buffers per process at most SIZE: larger sizes are left out (OSU)\n"
            "  --dist D      allgatherv counts (also --distribution D): uniform (= regular,\n"
            "                default), linear (rank i gets 2(i+1)/(p+1) of the size), and\n"
            "                SharedNotify's decreasing\n"
            "                (2(p-1-i)/(p-1)), broadcast (rank 0 sends p times the size, the\n"
            "                others nothing), random (0..2x the size, a quarter empty; seeded)\n"
            "  --zero-copy   allgather(v): also time agx_allgatherv_shared (row zero_copy: the\n"
            "                result read in the node-shared segment; with -c copied out)\n"
            "  --csv FILE    one CSV record per (op, algorithm, bytes, nprocs)\n"
            "  --json FILE   the same records as a JSON array, each with the run's context\n"
            "                (command, host, date, MPI library, warm-up)\n"
            "  --sync S      barrier (default: time = max local time after MPI_Barrier) or\n"
            "                window (time = latest end - a broadcast common start; one host, SMPI)\n"
            "  -q            no progress line (stderr, on a terminal only: mpirun pipes it)\n"
            "  --progress    progress lines on stderr even when it is not a terminal\n"
            "  --regions NxM N regions of M consecutive ranks (sets AGX_REGION_SIZE=M); the\n"
            "                Model column gives Bienz's non-local messages/bytes\n"
            "  --setting N   inter-allgather: KangTraff19 setting 1-8 (default 1)\n"
            "  --comm C      inter-allgather on an inter-communicator (inter, default) or on\n"
            "                the colour split of MPI_COMM_WORLD (color)\n"
            "  --list        every registered algorithm with its description\n"
            "  --version     agx's version\n");
}

/* The options, strictly: every value whole and in range, every flag known; on an error,
 * a message naming the flag in `err` (printed by rank 0 after MPI_Init) and -1. */
static int parse_args(int argc, char **argv, options *o, char *err, size_t errlen)
{
    static const struct option lo[] = {{"dist", 1, 0, 'D'},    {"regions", 1, 0, 'G'}, {"setting", 1, 0, 'S'},
                                       {"comm", 1, 0, 'K'},    {"csv", 1, 0, 'C'},     {"json", 1, 0, 'J'},
                                       {"help", 0, 0, 'h'},    {"zero-copy", 0, 0, 'Z'}, {"distribution", 1, 0, 'D'},
                                       {"sync", 1, 0, 'W'},    {"factor", 1, 0, 'F'},  {"full", 0, 0, 'f'},
                                       {"progress", 0, 0, 'P'},
                                       {0, 0, 0, 0}};
    memset(o, 0, sizeof *o);
    o->min_bytes = 8;
    o->max_bytes = 1 << 20;
    o->iters = 100;
    o->warmup = 10;
    o->mult = 2;
    if (!strcmp(argv[1], "allgather"))
        o->op = AGX_OP_ALLGATHER;
    else if (!strcmp(argv[1], "allgatherv"))
        o->op = AGX_OP_ALLGATHERV;
    else if (!strcmp(argv[1], "allreduce"))
        o->op = AGX_OP_ALLREDUCE;
    else if (!strcmp(argv[1], "inter-allgather"))
        o->setting = -1;
    else
        return snprintf(err, errlen, "unknown mode '%s' (allgather, allgatherv, allreduce, inter-allgather, "
                        "alltoallv, twophase, pap, --list)", argv[1]), -1;
    int sized = 0, c, v, inter = o->setting == -1;
    optind = 0; /* a full reset (SMPI runs every rank in one process); argv[1] is the name */
    opterr = 0; /* the message is ours, printed once */
    while ((c = getopt_long(argc - 1, argv + 1, "+:a:m:i:x:M:cfqh", lo, NULL)) != -1) {
        switch (c) {
        case 'a':
            if ((o->nalgs = bench_split(optarg, o->algs, MAX_ALGS)) <= 0)
                return snprintf(err, errlen, "-a %s: 1 to %d algorithms", optarg, MAX_ALGS), -1;
            break;
        case 'm':
            if (bench_range("-m", optarg, 1LL << 30, &o->min_bytes, &o->max_bytes, err, errlen))
                return -1;
            sized = 1;
            break;
        case 'F': case 'i': case 'x': case 'S':
            if (bench_int(c == 'S' ? "--setting" : c == 'F' ? "--factor" : c == 'i' ? "-i" : "-x", optarg,
                          c == 'x' ? 0 : c == 'F' ? 2 : 1, c == 'S' ? 8 : 1 << 24, &v, err, errlen))
                return -1;
            *(c == 'F' ? &o->mult : c == 'i' ? &o->iters : c == 'x' ? &o->warmup : &o->setting) = v;
            break;
        case 'D':
            for (o->dist = 0; o->dist < BENCH_NDIST && strcmp(optarg, bench_dist_names[o->dist]); o->dist++)
                ;
            if (o->dist == BENCH_NDIST)
                return snprintf(err, errlen, "--dist %s: uniform, linear, regular, decreasing, broadcast or random",
                                optarg), -1;
            break;
        case 'K': /* --comm inter|color: 0 or 1 */
            if (bench_choice("--comm", optarg, "inter", "color", &o->color_split, err, errlen))
                return -1;
            break;
        case 'Z': o->zero_copy = 1; break;
        case 'W': /* --sync barrier|window: 0 or 1 */
            if (bench_choice("--sync", optarg, "barrier", "window", &o->window, err, errlen))
                return -1;
            break;
        case 'G':
            if (bench_regions(optarg, &o->region_size, err, errlen))
                return -1;
            break;
        case 'M': /* OSU's --mem-limit: buffers per process */
            if ((o->mem_limit = parse_size(optarg)) <= 0)
                return snprintf(err, errlen, "-M %s: a size (K, M, G suffixes) above 0", optarg), -1;
            break;
        case 'c': o->check = 1; break;
        case 'f': o->full = 1; break;
        case 'q': o->quiet = 1; break;
        case 'P': o->progress = 1; break;
        case 'C': o->csv = optarg; break;
        case 'J': o->json = optarg; break;
        case 'h': usage(stdout); exit(0);
        case ':': return snprintf(err, errlen, "%s needs a value", argv[optind]), -1;
        default: return snprintf(err, errlen, "unknown option '%s' (agx-bench -h)", argv[optind]), -1;
        }
    }
    if (optind < argc - 1 && !strcmp(argv[optind], "-f")) /* the old -f F (then the factor) */
        return snprintf(err, errlen, "unexpected argument '%s': -f is OSU's full statistics, the size "
                        "factor is --factor %s", argv[optind + 1], argv[optind + 1]), -1;
    if (optind < argc - 1)
        return snprintf(err, errlen, "unexpected argument '%s'", argv[optind + 1]), -1;
    if (!inter && (o->setting || o->color_split))
        return snprintf(err, errlen, "--setting and --comm are inter-allgather's options"), -1;
    if (o->setting == -1) /* inter-allgather without --setting: setting 1 */
        o->setting = 1;
    if (o->setting) {
        o->op = o->setting <= 4 ? AGX_OP_ALLGATHER : AGX_OP_ALLGATHERV;
        if (!sized) { /* the paper's sweep starts at 64 KiB; 1 MiB keeps it short here */
            o->min_bytes = 64 * 1024;
            o->max_bytes = 1 << 20;
        }
        if (o->nalgs == 0) {
            o->algs[o->nalgs++] = strdup("root_gather");
            o->algs[o->nalgs++] = strdup(o->setting <= 4 ? "segmented" : "segmented_v");
            o->algs[o->nalgs++] = strdup("native");
        }
    }
    if (o->nalgs == 0)
        o->algs[o->nalgs++] = strdup("auto");
    if (o->zero_copy) {
        if (o->op != AGX_OP_ALLGATHERV && o->op != AGX_OP_ALLGATHER)
            return snprintf(err, errlen, "--zero-copy is allgather(v)'s option"), -1;
        if (o->nalgs < MAX_ALGS)
            o->algs[o->nalgs++] = strdup("zero_copy");
    }
    return 0;
}

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

static int do_call(const options *o, const shape *sh, const void *sbuf, void *rbuf, MPI_Comm comm, int shared)
{
    if (shared)
        return shared_call(o, sh, sbuf, rbuf, comm);
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
    unsigned char *sbuf = malloc(sb ? sb : 1), *rbuf = malloc(rb ? rb : 1);
    int ok = 1, rc = MPI_SUCCESS, have = sbuf && rbuf, all = 0;

    /* every rank learns whether any could not allocate, so none waits in the collective */
    MPI_Allreduce(&have, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all) {
        if (!have)
            fprintf(stderr, "agx-bench: rank %d cannot allocate %lld + %lld bytes\n", rank, sb, rb);
        free(sbuf);
        free(rbuf);
        free_shape(&sh);
        return MPI_ERR_NO_MEM;
    }

    int shared = !strcmp(alg, "zero_copy");
    rc = agx_comm_set_algorithm(comm, o->op, strcasecmp(alg, "auto") && !shared ? alg : NULL);
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
        rc = do_call(o, &sh, sbuf, rbuf, comm, shared);
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
    snprintf(rec->alg, sizeof rec->alg, shared ? "zero_copy(%s)" : strcasecmp(alg, "auto") ? "%s" : "auto(%s)", ran);
    rec->bytes = bytes;
    rec->validated = o->check && okall;
    rec->counted = strcmp(ran, "native") != 0;
    rec->ml = cm[0] / o->iters;
    rec->mn = cm[1] / o->iters;
    rec->bl = cm[2] / o->iters;
    rec->bn = cm[3] / o->iters;
    rec->setting = o->setting;
    rec->p = sh.p;
    rec->q = sh.q;
    rec->eq5 = o->setting ? agx_model_ig_eq5_ratio(sh.KA, sh.KB) : 0;
    rec->volume = o->setting ? agx_model_ig_volume_ratio(sh.p, sh.q, sh.KA, sh.KB, sh.kA0, sh.kB0) : 0;
    if (o->setting || o->op != AGX_OP_ALLGATHER)
        rec->model_msgs = rec->model_bytes = -1;
    else
        model_counts(ran, g_labels, nprocs, bytes, &rec->model_msgs, &rec->model_bytes);
    if (rank == 0) {
        double t[5];
        bench_summary(tmax, o->iters, t);
        rec->avg = t[0], rec->min = t[1], rec->max = t[2], rec->p50 = t[3], rec->p99 = t[4];
    }
    if (o->check && !okall)
        rc = MPI_ERR_OTHER;
fn_exit:
    free(sbuf);
    free(rbuf);
    free_shape(&sh);
    return rc;
}

int agx_bench_pap(int argc, char **argv);
int agx_bench_a2a(int argc, char **argv);
int agx_bench_io(int argc, char **argv);

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
        usage(stdout);
        return 0;
    }
    char err[256] = "";
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (parse_args(argc, argv, &o, err, sizeof err) != 0) /* every rank fails alike; rank 0 says why */
        return bench_arg_error(argc, argv, err);
    bench_set_regions(o.region_size);
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
