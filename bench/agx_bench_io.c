/*
 * agx-bench twophase: KangRoss20's end-to-end experiment (Sec. V, Fig. 5): a collective
 * write of the E3SM-, FLASH-IO- or BTIO-like pattern (bench/bench_io.c) through agx's
 * two-phase engine with each pair of exchange kernels, and through the MPI library's
 * MPI_File_write_all on the same requests (Open MPI: OMPIO, or ROMIO with
 * OMPI_MCA_io=romio321; MPICH: ROMIO). Time per call broken down as Figure 5 (metadata
 * exchange, data exchange, I/O, other), max over ranks, mean over iterations; every
 * configuration's file read back and checked byte for byte. --read: collective reads of
 * the same requests instead (agx_file_read_all, MPI_File_read_all), from a file the
 * library wrote once, each buffer checked against the bytes written.
 *
 *   agx-bench twophase --workload e3sm|flash|btio [-k LIST] [--kernel-meta K] [--kernel-data K]
 *                      [--aggregators N] [--cb-buffer-size B] [--layout even|striped]
 *                      [--stripe-size B] [--stripe-count N] [--file PATH | --no-write]
 *                      [--vars N] [--cells N] [--block N] [-i N] [--read] [--csv F] [--json F]
 */
#include "bench.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum { W_E3SM, W_FLASH, W_BTIO };
static const char *wnames[] = {"e3sm", "flash", "btio"};

typedef struct {
    int workload, iters, no_write, read, one_file;
    agx_io_hints h;
    bio_params bp;
    char *runs[MAX_ALGS]; /* "meta/data", "mpi" */
    int nruns;
    const char *file, *csv, *json;
} io_opts;

typedef struct {
    char name[64];
    double t[5]; /* total, meta, data, io, other: ms, max over ranks, mean over iterations */
    double ref[3]; /* mpi: bio_ref_times's parts, ms, the same way */
    int rounds, verified;
    const char *meta, *data;
} io_rec;

static int rank, nprocs;

static void usage(FILE *f)
{
    fprintf(f, "usage: agx-bench twophase --workload e3sm|flash|btio [-k LIST] [--kernel-meta K] [--kernel-data K]\n"
               "         [--aggregators N] [--cb-buffer-size B] [--layout even|striped] [--stripe-size B]\n"
               "         [--stripe-count N] [--file PATH | --no-write] [--vars N] [--cells N] [--block N]\n"
               "         [--node-aggr on|off|auto] [-i N] [--read] [--one-file] [--csv F] [--json F]\n"
               "  -k LIST   runs: K (K for both exchanges), META/DATA, hybrid, auto, mpi (MPI_File_write_all);\n"
               "  --read    collective reads of the file written once (agx_file_read_all, mpi: MPI_File_read_all)\n"
               "  --node-aggr  each node's requests merged at its first rank first (agx_io_hints.node_aggr;\n"
               "            mpi: the info key agx_node_aggregation, which the MPI-IO drop-in reads)\n"
               "  --one-file  every call of a run on one open file (the drop-in's per-file choice learns)\n"
               "            default issend_all,spread_out,balanced,pairwise,tam,hybrid,auto,mpi\n"
               "  --no-write  exchanges only, no file (SMPI); --cells: e3sm cells per process and variable\n"
               "            (default 4096), btio grid edge N (default 64); --block: flash block edge (8)\n");
}

static int num(const char *flag, const char *s, long long lo, long long hi, long long *v, int size, char *err,
               size_t errlen)
{
    char *end;
    *v = size ? parse_size(s) : strtoll(s, &end, 10);
    if ((!size && (*end || !*s)) || *v < lo || *v > hi)
        return snprintf(err, errlen, "%s %s: expected %s in [%lld, %lld]", flag, s,
                        size ? "a size (K, M, G)" : "an integer", lo, hi), -1;
    return 0;
}

static int parse(int argc, char **argv, io_opts *o, char *err, size_t errlen)
{
    static const struct option lo[] = {
        {"workload", 1, 0, 'W'}, {"kernel-meta", 1, 0, 'M'}, {"kernel-data", 1, 0, 'D'}, {"aggregators", 1, 0, 'A'},
        {"cb-buffer-size", 1, 0, 'B'}, {"layout", 1, 0, 'L'}, {"stripe-size", 1, 0, 'S'}, {"stripe-count", 1, 0, 'N'},
        {"file", 1, 0, 'F'}, {"no-write", 0, 0, 'n'}, {"vars", 1, 0, 'V'}, {"cells", 1, 0, 'E'}, {"block", 1, 0, 'K'},
        {"csv", 1, 0, 'C'}, {"json", 1, 0, 'J'}, {"read", 0, 0, 'R'}, {"node-aggr", 1, 0, 'G'}, {"help", 0, 0, 'h'},
        {"one-file", 0, 0, 'O'},
        {0, 0, 0, 0}};
    const char *meta = NULL, *data = NULL;
    long long v;
    int c;
    *o = (io_opts){.iters = 3, .workload = -1};
    agx_io_hints_init(&o->h);
    optind = 0; /* see agx_bench_a2a.c */
    opterr = 0;
    argc--, argv++;
    while ((c = getopt_long(argc, argv, "+:k:i:qh", lo, NULL)) != -1) {
        switch (c) {
        case 'W':
            for (o->workload = 0; o->workload < 3 && strcmp(optarg, wnames[o->workload]); o->workload++)
                ;
            if (o->workload == 3)
                return snprintf(err, errlen, "unknown workload '%s' (e3sm, flash, btio)", optarg), -1;
            break;
        case 'M': meta = optarg; break;
        case 'D': data = optarg; break;
        case 'k':
            if ((o->nruns = bench_split(optarg, o->runs, MAX_ALGS)) <= 0)
                return snprintf(err, errlen, "-k %s: 1 to %d runs", optarg, MAX_ALGS), -1;
            break;
        case 'L':
            if (strcmp(optarg, "even") && strcmp(optarg, "striped"))
                return snprintf(err, errlen, "--layout %s: even or striped", optarg), -1;
            o->h.layout = strcmp(optarg, "even") ? AGX_IO_STRIPED : AGX_IO_EVEN;
            break;
        case 'A': case 'N': case 'V': case 'E': case 'K': case 'i':
            if (num(c == 'A' ? "--aggregators" : c == 'N' ? "--stripe-count" : c == 'V' ? "--vars" : c == 'E' ? "--cells"
                    : c == 'K' ? "--block" : "-i", optarg, c == 'V' || c == 'K' || c == 'E' || c == 'i' ? 1 : 0, 1 << 30,
                    &v, 0, err, errlen))
                return -1;
            if (c == 'E')
                o->bp.cells = v;
            else
                *(c == 'A' ? &o->h.aggregators : c == 'N' ? &o->h.stripe_count : c == 'V' ? &o->bp.vars
                  : c == 'K' ? &o->bp.block : &o->iters) = (int)v;
            break;
        case 'B': case 'S':
            if (num(c == 'B' ? "--cb-buffer-size" : "--stripe-size", optarg, 1, 1LL << 30, &v, 1, err, errlen))
                return -1;
            *(c == 'B' ? &o->h.cb_buffer_size : &o->h.stripe_size) = v;
            break;
        case 'G':
            if (strcmp(optarg, "on") && strcmp(optarg, "off") && strcmp(optarg, "auto"))
                return snprintf(err, errlen, "--node-aggr %s: on, off or auto", optarg), -1;
            o->h.node_aggr = !strcmp(optarg, "on") ? 1 : !strcmp(optarg, "off") ? -1 : 0;
            break;
        case 'F': o->file = optarg; break;
        case 'n': o->no_write = 1; break;
        case 'R': o->read = 1; break;
        case 'O': o->one_file = 1; break;
        case 'C': o->csv = optarg; break;
        case 'J': o->json = optarg; break;
        case 'q': break; /* quiet: accepted for agx-sim (the table is short) */
        case 'h': usage(stdout); exit(0);
        default: return bench_bad_option(c, argv, err, errlen);
        }
    }
    if (optind < argc)
        return snprintf(err, errlen, "unexpected argument '%s'", argv[optind]), -1;
    if (o->workload < 0 || (!o->file && !o->no_write))
        return snprintf(err, errlen, "twophase: --workload and --file (or --no-write) are required"), -1;
    if (meta || data) {
        char run[160];
        snprintf(run, sizeof run, "%s/%s", meta ? meta : "auto", data ? data : "auto");
        o->runs[o->nruns++] = strdup(run);
    }
    if (o->nruns == 0)
        o->nruns = bench_split("issend_all,spread_out,balanced,pairwise,tam,hybrid,auto,mpi", o->runs, MAX_ALGS);
    for (int i = 0; i < o->nruns; i++)
        if (o->no_write && !strcmp(o->runs[i], "mpi"))
            return snprintf(err, errlen, "'mpi' (MPI_File_write_all) needs a file, not --no-write"), -1;
    return 0;
}

static int make_requests(const io_opts *o, bio_reqs *q)
{
    int rc = o->workload == W_E3SM ? bio_e3sm(nprocs, rank, &o->bp, 1, q)
           : o->workload == W_FLASH ? bio_flash(nprocs, rank, &o->bp, q) : bio_btio(nprocs, rank, &o->bp, q);
    if (rc == MPI_ERR_ARG && rank == 0)
        fprintf(stderr, "agx-bench: btio needs a square number of processes (and --cells >= its root)\n");
    return rc != MPI_SUCCESS ? rc : bio_fill(q, 1);
}

static int open_file(const io_opts *o, int amode, MPI_File *fh)
{
    *fh = MPI_FILE_NULL;
    if (o->no_write)
        return MPI_SUCCESS;
    MPI_Info info = MPI_INFO_NULL;
    if (o->h.node_aggr) { /* for the MPI-IO drop-in */
        MPI_Info_create(&info);
        MPI_Info_set(info, "agx_node_aggregation", o->h.node_aggr > 0 ? "enable" : "disable");
    }
    int rc = MPI_File_open(MPI_COMM_WORLD, o->file, amode, info, fh);
    if (info != MPI_INFO_NULL)
        MPI_Info_free(&info);
    if (rc == MPI_SUCCESS && (amode & MPI_MODE_CREATE))
        rc = MPI_File_set_size(*fh, 0);
    return rc;
}

/* One configuration: iters timed calls, then the file read back. */
static int run_one(const io_opts *o, const char *run, const bio_reqs *q, io_rec *r)
{
    agx_io_hints h = o->h;
    agx_io_stats st = {0};
    char meta[64], data[64];
    int mpi = !strcmp(run, "mpi"), rc = MPI_SUCCESS;
    char *got = o->read ? calloc(1, (size_t)(q->bytes ? q->bytes : 1)) : NULL;
    if (o->read && !got)
        return MPI_ERR_NO_MEM;
    if (sscanf(run, "%63[^/]/%63s", meta, data) != 2)
        snprintf(meta, sizeof meta, "%s", run), snprintf(data, sizeof data, "%s", run);
    h.meta_kernel = meta, h.data_kernel = data, h.no_write = o->no_write;
    *r = (io_rec){.verified = -1};
    snprintf(r->name, sizeof r->name, "%s", !mpi ? run : o->read ? "MPI_File_read_all" : "MPI_File_write_all");
    MPI_File fh = MPI_FILE_NULL;
    for (int it = -1; it < o->iters && rc == MPI_SUCCESS; it++) { /* it = -1: one untimed warm-up */
        if ((it == -1 || !o->one_file) &&
            (rc = open_file(o, o->read ? MPI_MODE_RDONLY : MPI_MODE_CREATE | MPI_MODE_RDWR, &fh)) != MPI_SUCCESS)
            break;
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime(), mine[5], max[5];
        if (o->read)
            rc = mpi ? bio_reference_read(fh, q, got)
                     : agx_file_read_all(fh, MPI_COMM_WORLD, q->n, q->off, q->len, got, &h, &st);
        else if (mpi)
            rc = bio_reference_write(fh, q);
        else
            rc = agx_file_write_all(fh, MPI_COMM_WORLD, q->n, q->off, q->len, q->buf, &h, &st);
        double t = MPI_Wtime() - t0;
        if (!o->no_write && (!o->one_file || it == o->iters - 1))
            MPI_File_close(&fh);
        mine[0] = t, mine[1] = st.meta_time, mine[2] = st.data_time, mine[3] = st.io_time, mine[4] = st.other_time;
        MPI_Allreduce(mine, max, 5, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        for (int k = 0; k < 5 && it >= 0; k++)
            r->t[k] += max[k] * 1e3 / o->iters;
        double ref[3];
        if (mpi)
            MPI_Allreduce(bio_ref_times, ref, 3, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        for (int k = 0; k < 3 && mpi && it >= 0; k++)
            r->ref[k] += ref[k] * 1e3 / o->iters;
    }
    if (fh != MPI_FILE_NULL) /* a failed call's */
        MPI_File_close(&fh);
    long long wrong = 0, all;
    for (long long i = 0; o->read && rc == MPI_SUCCESS && !o->no_write && i < q->bytes; i++)
        wrong += got[i] != q->buf[i];
    free(got);
    if (rc != MPI_SUCCESS)
        return rc;
    r->rounds = mpi ? -1 : st.rounds;
    r->meta = mpi ? "-" : st.meta_kernel, r->data = mpi ? "-" : st.data_kernel;
    if (o->read) { /* the buffer read against the bytes written */
        MPI_Allreduce(&wrong, &all, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
        r->verified = o->no_write ? -1 : all == 0;
        return MPI_SUCCESS;
    }
    if (!o->no_write) {
        MPI_File fh;
        long long bad = 0, all;
        if ((rc = open_file(o, MPI_MODE_RDONLY, &fh)) != MPI_SUCCESS || (rc = bio_check(fh, MPI_COMM_WORLD, q, 1, &bad)))
            return rc;
        MPI_File_close(&fh);
        MPI_Allreduce(&bad, &all, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
        r->verified = all == 0;
    }
    return MPI_SUCCESS;
}

static int write_files(const io_opts *o, const io_rec *r, int n, const bio_reqs *q)
{
    FILE *c = o->csv ? fopen(o->csv, "w") : NULL, *j = o->json ? fopen(o->json, "w") : NULL;
    static const char *ver[] = {"unverified", "FAIL", "ok"};
    const char *op = o->read ? "twophase_read" : "twophase";
    char *ctx = j ? bench_context_json(nprocs, 0) : NULL;
    if ((o->csv && !c) || (o->json && !j))
        perror("agx-bench: output file");
    if (c)
        fprintf(c, "op,workload,nprocs,aggregators,layout,cb_buffer_size,run,meta_kernel,data_kernel,iterations,"
                   "total_ms,meta_ms,data_ms,io_ms,other_ms,rounds,requests_rank0,bytes_rank0,verified\n");
    for (int i = 0; c && i < n; i++)
        fprintf(c, "%s,%s,%d,%d,%s,%lld,%s,%s,%s,%d,%.3f,%.3f,%.3f,%.3f,%.3f,%d,%d,%lld,%s\n", op, wnames[o->workload],
                nprocs, o->h.aggregators, o->h.layout ? "striped" : "even", o->h.cb_buffer_size, r[i].name, r[i].meta,
                r[i].data, o->iters, r[i].t[0], r[i].t[1], r[i].t[2], r[i].t[3], r[i].t[4], r[i].rounds, q->n, q->bytes,
                ver[r[i].verified + 1]);
    if (j)
        fprintf(j, "[\n");
    for (int i = 0; j && i < n; i++)
        fprintf(j, "  {\"op\": \"%s\", \"workload\": \"%s\", \"nprocs\": %d, \"run\": \"%s\", \"meta_kernel\": "
                   "\"%s\", \"data_kernel\": \"%s\", \"iterations\": %d, \"total_ms\": %.3f, \"meta_ms\": %.3f, "
                   "\"data_ms\": %.3f, \"io_ms\": %.3f, \"other_ms\": %.3f, \"rounds\": %d, \"verified\": \"%s\", \"context\": %s}%s\n",
                op, wnames[o->workload], nprocs, r[i].name, r[i].meta, r[i].data, o->iters, r[i].t[0], r[i].t[1],
                r[i].t[2], r[i].t[3], r[i].t[4], r[i].rounds, ver[r[i].verified + 1], ctx ? ctx : "null", i + 1 < n ? "," : "");
    free(ctx);
    int bad = (o->csv && !c) || (o->json && !j);
    if (j)
        fprintf(j, "]\n"), bad |= bench_close(j, o->json);
    if (c)
        bad |= bench_close(c, o->csv);
    return bad;
}

int agx_bench_io(int argc, char **argv)
{
    io_opts o;
    bio_reqs q = {0};
    io_rec recs[MAX_ALGS];
    int len, rc, nrec = 0;
    char err[256] = "";
    if (parse(argc, argv, &o, err, sizeof err))
        return bench_arg_error(argc, argv, err);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (bench_outputs_writable(o.csv, o.json)) { /* before the run, not after it */
        MPI_Finalize();
        return 2;
    }
    if ((rc = make_requests(&o, &q)) != MPI_SUCCESS) {
        MPI_Finalize();
        return 1;
    }
    if (o.read && !o.no_write) { /* the file the reads read: written once by the library */
        MPI_File fh;
        if ((rc = open_file(&o, MPI_MODE_CREATE | MPI_MODE_RDWR, &fh)) == MPI_SUCCESS) {
            rc = bio_reference_write(fh, &q);
            MPI_File_close(&fh);
        }
        if (rc != MPI_SUCCESS) {
            if (rank == 0)
                fprintf(stderr, "agx-bench twophase: the file to read could not be written\n");
            MPI_Finalize();
            return 1;
        }
    }
    long long bytes = q.bytes, reqs = q.n;
    MPI_Allreduce(MPI_IN_PLACE, &bytes, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &reqs, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    const char *ver = bench_mpi_library();
    if (rank == 0)
        printf("# agx-bench twophase  workload=%s  nprocs=%d  requests=%lld  bytes=%lld  layout=%s  aggregators=%d"
               "  cb=%lld  iterations=%d (+1 warm-up)%s\n# MPI: %s\n# ms per call, max over ranks (KangRoss20 Fig. 5: meta = "
               "offset/length exchange, data = data exchanges, io = file calls, other = the rest)%s\n"
               "%-24s %10s %10s %10s %10s %10s %7s %-11s %-11s %s\n", wnames[o.workload], nprocs, reqs, bytes,
               o.h.layout ? "striped" : "even", o.h.aggregators, o.h.cb_buffer_size, o.iters,
               o.no_write ? "  (no write: exchanges only)" : "", ver, o.read ? "; collective reads" : "", "run", "total", "meta", "data", "io", "other",
               "rounds", "meta_kern", "data_kern", "check");
    fflush(stdout);
    for (int i = 0; i < o.nruns && rc == MPI_SUCCESS; i++) {
        io_rec *r = &recs[nrec];
        if ((rc = run_one(&o, o.runs[i], &q, r)) != MPI_SUCCESS)
            break;
        nrec++;
        if (rank == 0) {
            printf("%-24s %10.3f ", r->name, r->t[0]);
            if (r->rounds < 0)
                printf("%10s %10s %10s %10s %7s %-11s %-11s", "-", "-", "-", "-", "-", "-", "-");
            else
                printf("%10.3f %10.3f %10.3f %10.3f %7d %-11s %-11s", r->t[1], r->t[2], r->t[3], r->t[4], r->rounds,
                       r->meta, r->data);
            printf(" %s\n", r->verified < 0 ? "-" : r->verified ? "ok" : "FAIL");
            if (r->rounds < 0)
                printf("#   of which: the hindexed types built %.3f, MPI_File_set_view (twice) %.3f, %s %.3f "
                       "(ms, max over ranks)\n", r->ref[0], r->ref[1], r->name, r->ref[2]);
            fflush(stdout);
        }
    }
    if (rc != MPI_SUCCESS && rank == 0) {
        char msg[MPI_MAX_ERROR_STRING];
        agx_error_string(rc, msg, &len);
        fprintf(stderr, "agx-bench twophase: %s\n", msg);
    }
    int out_bad = rank == 0 && write_files(&o, recs, nrec, &q), bad = 0;
    for (int i = 0; i < nrec; i++)
        bad |= recs[i].verified == 0;
    for (int i = 0; i < o.nruns; i++)
        free(o.runs[i]);
    bio_free(&q);
    MPI_Finalize();
    return rc != MPI_SUCCESS ? 1 : bad ? 3 : out_bad;
}
