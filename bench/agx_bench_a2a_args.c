/*
 * agx-bench alltoallv's options: its usage text and its strict parser (getopt_long, as
 * agx_bench_args.c's for the other modes: optind = 0 before the parse, argv + 1).
 */
#include "bench.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const bench_a2a_patterns[3] = {"all-to-many", "many-to-many", "uniform"};

static void a2a_usage(FILE *f)
{
    fprintf(f, "usage: agx-bench alltoallv [--pattern all-to-many|many-to-many|uniform] [--receivers N]\n"
               "         [--senders S] [--bytes LIST] [-a LIST] [-i N] [-x N] [-c] [-f] [--csv F] [--json F] [-q]\n"
               "         [--regions NxM] [--skew D:MAX] [--noise R:US] [--persistent]\n"
               "  --bytes LIST  bytes per non-empty pair, comma-separated (K, M suffixes; default 64,1K,16K)\n"
               "  --receivers N receivers (all-to-many: default p/16; many-to-many: default p)\n"
               "  --senders S   many-to-many: senders per receiver (default ceil(sqrt(p)))\n"
               "  --stride S    receivers are ranks 0, S, 2S, ... (default: spread over all ranks)\n"
               "  -a LIST       algorithms (default: auto; mpi: the MPI library's own MPI_Alltoallv,\n"
               "                nothing of agx in between); AGX_ALLTOALLV_THROTTLE, _SYNC apply\n"
               "  --persistent  time agx_start + agx_wait of a request made once (agx_alltoallv_init)\n"
               "  -i N, -x N    measured and warm-up iterations (default 20, 3); -c validates\n"
               "  -f            full statistics: also min, max, p50, p99 and iterations (OSU)\n");
    bench_skew_usage(f);
}

int bench_a2a_args(int argc, char **argv, a2a_opts *o, char *err, size_t errlen)
{
    static const struct option lo[] = {{"pattern", 1, 0, 'P'}, {"receivers", 1, 0, 'R'}, {"senders", 1, 0, 'S'}, {"stride", 1, 0, 'T'},
                                       {"bytes", 1, 0, 'B'},   {"csv", 1, 0, 'C'},       {"json", 1, 0, 'J'},
                                       {"regions", 1, 0, 'G'}, {"help", 0, 0, 'h'},      {"full", 0, 0, 'f'},
                                       {"skew", 1, 0, 'k'},    {"noise", 1, 0, 'n'},     {"persistent", 0, 0, 'p'},
                                       {0, 0, 0, 0}};
    char *items[64];
    int c, n;
    *o = (a2a_opts){.iters = 20, .warmup = 3, .nbytes = 3, .bytes = {64, 1024, 16384}, .skew.seed = 1};
    /* optind = 0: a full reset of getopt's state (SMPI runs every rank in one process);
     * argv + 1: "alltoallv" is the program name to getopt; '+': no permutation */
    optind = 0;
    opterr = 0; /* the message is ours, printed once */
    argc--, argv++;
    while ((c = getopt_long(argc, argv, "+:a:i:x:cfqh", lo, NULL)) != -1) {
        switch (c) {
        case 'P':
            for (o->pattern = 0; o->pattern < 3 && strcmp(optarg, bench_a2a_patterns[o->pattern]); o->pattern++)
                ;
            if (o->pattern == 3)
                return snprintf(err, errlen, "--pattern %s: all-to-many, many-to-many or uniform", optarg), -1;
            break;
        case 'R': case 'S': case 'T': case 'i': case 'x': {
            int *v = c == 'R' ? &o->nrecv : c == 'S' ? &o->nsend : c == 'T' ? &o->stride : c == 'i' ? &o->iters
                                                                                        : &o->warmup;
            const char *flag = c == 'R' ? "--receivers" : c == 'S' ? "--senders" : c == 'T' ? "--stride"
                             : c == 'i' ? "-i" : "-x";
            if (bench_int(flag, optarg, c == 'x' ? 0 : 1, 1 << 30, v, err, errlen))
                return -1;
            break;
        }
        case 'B':
            if ((n = bench_split(optarg, items, 64)) <= 0)
                return snprintf(err, errlen, "--bytes %s: at most 64 sizes", optarg), -1;
            o->nbytes = n;
            for (int k = 0; k < n; k++) {
                o->bytes[k] = parse_size(items[k]);
                if (o->bytes[k] < 0 || o->bytes[k] > 1 << 30)
                    c = -2, snprintf(err, errlen, "--bytes: '%s' is not a size up to 1G", items[k]);
                free(items[k]);
            }
            if (c == -2)
                return -1;
            break;
        case 'a':
            if ((o->nalgs = bench_split(optarg, o->algs, MAX_ALGS)) <= 0)
                return snprintf(err, errlen, "-a %s: 1 to %d algorithms", optarg, MAX_ALGS), -1;
            break;
        case 'G':
            if (bench_regions(optarg, &o->region_size, err, errlen))
                return -1;
            break;
        case 'k': case 'n':
            if (bench_skew_opt(c == 'n', optarg, &o->skew, err, errlen))
                return -1;
            break;
        case 'c': o->check = 1; break;
        case 'p': o->persistent = 1; break;
        case 'f': o->full = 1; break;
        case 'q': o->quiet = 1; break;
        case 'C': o->csv = optarg; break;
        case 'J': o->json = optarg; break;
        case 'h': a2a_usage(stdout); exit(0);
        default: return bench_bad_option(c, argv, err, errlen);
        }
    }
    if (optind < argc)
        return snprintf(err, errlen, "unexpected argument '%s'", argv[optind]), -1;
    if (o->nalgs == 0)
        o->algs[o->nalgs++] = strdup("auto");
    return 0;
}
