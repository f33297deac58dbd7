/*
 * agx-bench's options: for each mode its usage text and its strict parser (getopt_long;
 * every value whole and in range, every flag known, a message naming the flag otherwise).
 * The collective modes (allgather, allgatherv, allreduce, inter-allgather: agx_bench.c),
 * and pap (agx_bench_pap.c); alltoallv's are in agx_bench_a2a_args.c. getopt's state is reset with
 * optind = 0 before each parse (SMPI runs every rank in one process), and argv + 1 is
 * given to it, the mode's name standing for the program's.
 */
#include "bench.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void bench_coll_usage(FILE *f)
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
            "                which honours AGX_<OP>_ALGORITHM; mpi = the MPI library's own\n"
            "                blocking call, nothing of agx in between)\n"
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
            "  --persistent  time agx_start + agx_wait of a request made once (agx_<op>_init;\n"
            "                algorithm mpi_init: the MPI library's MPI-4 MPI_<Op>_init)\n"
            "  --nonblocking time agx_i<op> + agx_wait\n"
            "  --overlap     then OSU's overlap %% of the call with as much computation\n"
            "                (AGX_PROGRESS_THREAD=1 lets agx progress meanwhile)\n"
            "  --setting N   inter-allgather: KangTraff19 setting 1-8 (default 1)\n"
            "  --comm C      inter-allgather on an inter-communicator (inter, default) or on\n"
            "                the colour split of MPI_COMM_WORLD (color)\n"
            "  --list        every registered algorithm with its description\n"
            "  --version     agx's version\n");
    bench_skew_usage(f);
}

/* The options, strictly: every value whole and in range, every flag known; on an error,
 * a message naming the flag in `err` (printed by rank 0 after MPI_Init) and -1. */
int bench_coll_args(int argc, char **argv, options *o, char *err, size_t errlen)
{
    static const struct option lo[] = {{"dist", 1, 0, 'D'},    {"regions", 1, 0, 'G'}, {"setting", 1, 0, 'S'},
                                       {"comm", 1, 0, 'K'},    {"csv", 1, 0, 'C'},     {"json", 1, 0, 'J'},
                                       {"help", 0, 0, 'h'},    {"zero-copy", 0, 0, 'Z'}, {"distribution", 1, 0, 'D'},
                                       {"sync", 1, 0, 'W'},    {"factor", 1, 0, 'F'},  {"full", 0, 0, 'f'},
                                       {"progress", 0, 0, 'P'}, {"skew", 1, 0, 'k'},   {"noise", 1, 0, 'n'},
                                       {"persistent", 0, 0, 'p'}, {"nonblocking", 0, 0, 'b'}, {"overlap", 0, 0, 'o'},
                                       {0, 0, 0, 0}};
    memset(o, 0, sizeof *o);
    o->skew.seed = 1;
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
        case 'k': case 'n':
            if (bench_skew_opt(c == 'n', optarg, &o->skew, err, errlen))
                return -1;
            break;
        case 'p': o->req = BENCH_PERSISTENT; break;
        case 'b': o->req = o->req ? o->req : BENCH_NONBLOCKING; break;
        case 'o': o->overlap = 1; o->req = o->req ? o->req : BENCH_NONBLOCKING; break;
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
        case 'h': bench_coll_usage(stdout); exit(0);
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
    if (o->req && (inter || o->zero_copy))
        return snprintf(err, errlen, "--persistent, --nonblocking and --overlap are for allgather, allgatherv "
                        "and allreduce"), -1;
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

/* ---- pap ---- */

void bench_pap_usage(FILE *f)
{
    fprintf(f,
            "usage: agx-bench pap [options]   (launch with tools/agxrun --threads)\n"
            "  -m LIST            bytes per process, comma-separated, K/M/G suffixes (floats:\n"
            "                     bytes / 4 each)\n"
            "  -N LIST            or the paper's N: total floats gathered, comma-separated\n"
            "                     (default 128K,256K,512K,1M,2M)\n"
            "  -i, --iterations N measured iterations per case (default 256)\n"
            "  -x, --warmup N     unmeasured iterations first (default 3; bdr measures tau there)\n"
            "  --max-delay LIST   maximum arrival delays, us/ms/s suffixes, plain = ms\n"
            "                     (default 0,1ms,5ms,10ms,50ms,100ms,500ms; 0 is always run)\n"
            "  --compute T        compute phase without delay (default 200ms, the paper's)\n"
            "  -a LIST            algorithms (default ring,neighbor_exchange,gather_bcast,bdr,bslb)\n"
            "  --csv FILE         one record per (N, max delay, algorithm)\n"
            "  --json FILE        the same records as a JSON array, with the run's context\n"
            "  --predict          give bdr / bslb every rank's true arrival (agx_pat_predict)\n"
            "                     instead of the monitor's predictions: for SimGrid SMPI (no\n"
            "                     threads) or AGX_PAT_MONITOR=0; tau measured by agx as the\n"
            "                     monitor does (the warm-up measures it; AGX_PAT_TAU fixes it)\n"
            "  -q                 no progress line (stderr, on a terminal only: mpirun pipes it)\n"
            "  --progress         progress lines on stderr even when it is not a terminal\n");
}

/* "5ms", "250us", "0.5s", "10" (ms) -> seconds; < 0 on error */
static double parse_time(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || v < 0 || !isfinite(v))
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

/* A comma-separated list of sizes (-m, -N) into v[0..*n); 0, or -1 with a message. */
static int size_list(const char *flag, const char *list, long long *v, int *n, char *err, size_t errlen)
{
    char *tok[PAP_MAX];
    int nt = bench_split(list, tok, PAP_MAX), bad = nt < 1;
    for (int k = 0; k < nt; k++) {
        if (!bad && ((v[k] = parse_size(tok[k])) <= 0 || v[k] > (1LL << 40)))
            bad = 1, snprintf(err, errlen, "%s: '%s' is not a size in [1, 1T] (K, M, G suffixes)", flag, tok[k]);
        free(tok[k]);
    }
    if (nt < 1)
        snprintf(err, errlen, "%s %s: 1 to %d sizes", flag, list, PAP_MAX);
    *n = bad ? 0 : nt;
    return bad ? -1 : 0;
}

int bench_pap_args(int argc, char **argv, pap_opts *o, char *err, size_t errlen)
{
    static const struct option lo[] = {{"iterations", 1, 0, 'i'}, {"warmup", 1, 0, 'x'}, {"max-delay", 1, 0, 'D'},
                                       {"compute", 1, 0, 'T'},    {"csv", 1, 0, 'C'},    {"json", 1, 0, 'J'},
                                       {"help", 0, 0, 'h'},       {"progress", 0, 0, 'P'},
                                       {"predict", 0, 0, 'R'},    {0, 0, 0, 0}};
    memset(o, 0, sizeof *o);
    o->iters = 256;
    o->warmup = 3;
    o->compute = 0.2;
    const char *ns = "128K,256K,512K,1M,2M", *ds = "0,1ms,5ms,10ms,50ms,100ms,500ms";
    const char *as = "ring,neighbor_exchange,gather_bcast,bdr,bslb", *ms = NULL;
    int c;
    optind = 0; /* the file's head says why */
    opterr = 0;
    argc--, argv++;
    while ((c = getopt_long(argc, argv, "+:N:m:i:x:a:qh", lo, NULL)) != -1) {
        switch (c) {
        case 'N': ns = optarg, ms = NULL; break;
        case 'm': ms = optarg; break;
        case 'i': case 'x':
            if (bench_int(c == 'i' ? "-i" : "-x", optarg, c == 'i', 1 << 24, c == 'i' ? &o->iters : &o->warmup, err,
                          errlen))
                return -1;
            break;
        case 'D': ds = optarg; break;
        case 'T':
            if ((o->compute = parse_time(optarg)) < 0)
                return snprintf(err, errlen, "--compute %s: a time like 200ms, 250us or 0.5s", optarg), -1;
            break;
        case 'a': as = optarg; break;
        case 'C': o->csv = optarg; break;
        case 'J': o->json = optarg; break;
        case 'q': o->quiet = 1; break;
        case 'P': o->progress = 1; break;
        case 'R': o->predict = 1; break;
        case 'h': bench_pap_usage(stdout); exit(0);
        default: return bench_bad_option(c, argv, err, errlen);
        }
    }
    if (optind < argc)
        return snprintf(err, errlen, "unexpected argument '%s'", argv[optind]), -1;
    o->per_process = ms != NULL;
    if (size_list(ms ? "-m" : "-N", ms ? ms : ns, o->n, &o->nn, err, errlen))
        return -1;
    o->delay[o->nd++] = 0; /* the flat pattern: r' of Eq. 4 */
    char *tok[PAP_MAX];
    int nt = bench_split(ds, tok, PAP_MAX - 1), bad = nt < 1;
    for (int k = 0; k < nt; k++) {
        double d = parse_time(tok[k]);
        if (!bad && d < 0)
            bad = 1, snprintf(err, errlen, "--max-delay: '%s' is not a time like 5ms, 250us or 0.5s", tok[k]);
        if (d > 0)
            o->delay[o->nd++] = d;
        free(tok[k]);
    }
    if (nt < 1)
        snprintf(err, errlen, "--max-delay %s: 1 to %d delays", ds, PAP_MAX - 1);
    if (bad)
        return -1;
    qsort(o->delay, (size_t)o->nd, sizeof(double), cmp_d);
    if ((o->na = bench_split(as, o->alg, PAP_MAX)) <= 0)
        return snprintf(err, errlen, "-a %s: 1 to %d algorithms", as, PAP_MAX), -1;
    return 0;
}
