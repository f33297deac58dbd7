/*
 * agx_file_write_all / agx_file_read_all (two-phase collective I/O, KangRoss20) against
 * MPI_File_write_all:
 *  - random patterns (AGX_TP_PATTERNS per launch, default 200) cut from one random
 *    partition of the file (holes, empty and unsorted requests, sometimes a huge one),
 *    random hints (even / striped domains, 0..p+2 aggregators, stripes, cb_buffer_size
 *    down to a few bytes, every kernel, throttles): agx's file byte for byte the
 *    library's (bench/bench_io.c's reference), and agx_file_read_all of the same requests
 *    with the same hints gives the bytes back (read-only handles too);
 *  - agx-bench twophase's workloads read back by the library and by agx; exact counts;
 *    large rows received in place; records that need 16 bytes on one rank only
 *    (twophase_cases.c);
 *  - errors on every rank, once through fh's handler, never a hang: overlap (between
 *    ranks; on one rank, also reading), a read-only file, a write failing on one
 *    aggregator only (RLIMIT_FSIZE of 1 byte on one process: EFBIG), and on one rank of a
 *    call that goes each rank its own (that rank's error only), bad and differing
 *    hints, a file view, a negative count on one rank (also reading), a read past the end.
 *   test_twophase [--quick] [--seed S]     (or AGX_TEST_SEED=S); files in $AGX_TP_DIR or /tmp
 */
#include "agx.h"
#include "mpitest.h"
#include "../../bench/bench.h"

#include <limits.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include "twophase_test.h"

int rank, size, passed, failed;
char path_a[512], path_b[512];

static const char *kernels[] = {"auto", "hybrid", "native", "issend_all", "isend_all", "spread_out",
                                "balanced", "pairwise", "tam"};
#define NKERNELS (int)(sizeof kernels / sizeof kernels[0])

static int handler_calls;
static void count_handler(MPI_File *f, int *code, ...) { (void)f, (void)code, handler_calls++; }

/* Open path on every rank; with prefill >= 0, rank 0 first makes it `prefill` bytes of
 * 0xA5 (holes then keep that background: MPI_File_write_all's read-modify-write reads it,
 * and agx must not touch it). fh's handler counts its calls. */
MPI_File open_file(const char *path, int amode, long long prefill)
{
    MPI_File fh;
    MPI_Errhandler eh;
    if (prefill >= 0) {
        if (rank == 0) {
            FILE *f = fopen(path, "wb");
            for (long long i = 0; f && i < prefill; i++)
                putc(0xA5, f);
            if (f)
                fclose(f);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    if (MPI_File_open(MPI_COMM_WORLD, path, amode, MPI_INFO_NULL, &fh) != MPI_SUCCESS) {
        fprintf(stderr, "rank %d: cannot open %s\n", rank, path);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_File_create_errhandler(count_handler, &eh);
    MPI_File_set_errhandler(fh, eh);
    MPI_Errhandler_free(&eh);
    return fh;
}

/* One random pattern: the file [0, S) cut into segments, each a hole or a request of a
 * random rank (a rank's request may be cut in two adjacent ones), plus empty requests;
 * each rank's list shuffled. Every rank draws the same partition. */
static void random_pattern(unsigned seed, bio_reqs *q)
{
    unsigned rs = seed;
    int huge = mt_rand(&rs) % 16 == 0;
    long long S = huge ? 1 + mt_rand(&rs) % (2 << 20) : 1 + mt_rand(&rs) % (mt_rand(&rs) % 2 ? 600 : 65536);
    int cap = 64;
    *q = (bio_reqs){0};
    q->off = malloc(sizeof *q->off * (size_t)cap);
    q->len = malloc(sizeof *q->len * (size_t)cap);
    long long at = mt_rand(&rs) % 3 == 0 ? mt_rand(&rs) % 5000 : 0, end = at + S;
    while (at < end) {
        long long seg = huge && mt_rand(&rs) % 2 ? end - at : 1 + mt_rand(&rs) % (S / 8 + 1);
        seg = seg > end - at ? end - at : seg;
        int owner = (int)(mt_rand(&rs) % (unsigned)(size + 1)); /* size: a hole */
        int cut = mt_rand(&rs) % 4 == 0 && seg > 1;
        unsigned r1 = mt_rand(&rs), r2 = mt_rand(&rs), r3 = mt_rand(&rs); /* drawn on every rank */
        if (owner == rank && q->n + 3 < cap) {
            long long first = cut ? 1 + (long long)(r1 % (unsigned)(seg - 1)) : seg;
            q->off[q->n] = at, q->len[q->n++] = (int)first;
            if (cut)
                q->off[q->n] = at + first, q->len[q->n++] = (int)(seg - first);
            if (r2 % 5 == 0)
                q->off[q->n] = r3 % (unsigned)(end + 7), q->len[q->n++] = 0;
        }
        at += seg;
    }
    for (int i = q->n - 1; i > 0; i--) {
        int j = (int)(mt_rand(&rs) % (unsigned)(i + 1));
        MPI_Offset o = q->off[i];
        int l = q->len[i];
        q->off[i] = q->off[j], q->len[i] = q->len[j], q->off[j] = o, q->len[j] = l;
    }
    for (int i = 0; i < q->n; i++)
        q->bytes += q->len[i];
}

static void random_hints(unsigned seed, long long span, agx_io_hints *h)
{
    unsigned rs = seed * 2654435761u + 17;
    agx_io_hints_init(h);
    h->layout = mt_rand(&rs) % 2 ? AGX_IO_STRIPED : AGX_IO_EVEN;
    h->aggregators = mt_rand(&rs) % 3 == 0 ? 0 : 1 + (int)(mt_rand(&rs) % (unsigned)(size + 2));
    static const long long ss[] = {1, 7, 64, 512, 4096, 65536};
    h->stripe_size = ss[mt_rand(&rs) % 6];
    h->stripe_count = mt_rand(&rs) % 2 ? 0 : 1 + (int)(mt_rand(&rs) % 5);
    long long floor_cb = span / 48 + 1; /* at most ~48 rounds per domain */
    if (h->layout == AGX_IO_STRIPED && h->stripe_size * 48 < span)
        h->stripe_size = span / 48 + 1;
    h->cb_buffer_size = mt_rand(&rs) % 4 == 0 ? 0 : floor_cb + mt_rand(&rs) % (unsigned)(floor_cb * 4);
    h->meta_kernel = kernels[mt_rand(&rs) % NKERNELS];
    h->data_kernel = kernels[mt_rand(&rs) % NKERNELS];
    h->throttle = (int)(mt_rand(&rs) % 4) - 1;
    h->no_sieve = mt_rand(&rs) % 4 == 0;
    h->node_aggr = mt_rand(&rs) % 3 == 0; /* each node's requests merged at its first rank */
    if (seed % 3 == 0) /* agx's choices: large requests are written by their ranks (own) */
        h->aggregators = 0, h->meta_kernel = h->data_kernel = NULL;
}

/* q's requests written by agx_file_write_all with hints h into path_a (opened in amode)
 * and by MPI_File_write_all into path_b, both first filled with bg bytes of background:
 * the bytes that differ between the files; the calls' codes in *rc, *rc2. */
long long write_both(const bio_reqs *q, const agx_io_hints *h, agx_io_stats *st, int amode, long long bg,
                            int *rc, int *rc2)
{
    MPI_File fa = open_file(path_a, amode, bg);
    *rc = agx_file_write_all(fa, MPI_COMM_WORLD, q->n, q->off, q->len, q->buf, h, st);
    MPI_File_close(&fa);
    MPI_File fb = open_file(path_b, MPI_MODE_RDWR, bg);
    *rc2 = bio_reference_write(fb, q);
    MPI_File_close(&fb);
    return mt_compare_files(rank, path_a, path_b);
}

/* q's requests read by agx_file_read_all with hints h from fh (or path, opened in amode
 * and closed): the bytes that differ from q's (-1: the read failed), stats in *st. */
long long read_back(const char *path, int amode, MPI_File fh, const bio_reqs *q, const agx_io_hints *h,
                           agx_io_stats *st)
{
    char *rb = malloc((size_t)(q->bytes ? q->bytes : 1));
    long long bad = 0;
    MPI_File f = path ? open_file(path, amode, -1) : fh;
    int rr = agx_file_read_all(f, MPI_COMM_WORLD, q->n, q->off, q->len, rb, h, st);
    for (long long i = 0; i < q->bytes && rr == MPI_SUCCESS; i++)
        bad += rb[i] != q->buf[i];
    if (path)
        MPI_File_close(&f);
    free(rb);
    return rr == MPI_SUCCESS ? bad : -1;
}

static int one_pattern(unsigned seed, int k)
{
    bio_reqs q;
    agx_io_hints h;
    agx_io_stats st;
    random_pattern(seed, &q);
    long long span = 0, tot = 0, wrote;
    for (int i = 0; i < q.n; i++)
        span = q.off[i] + q.len[i] > span ? q.off[i] + q.len[i] : span;
    MPI_Allreduce(MPI_IN_PLACE, &span, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    random_hints(seed, span, &h);
    bio_fill(&q, seed);
    long long bg = span + 100 + (long long)(seed % 3000); /* background past the end too */
    /* write-only now and then: data sieving cannot read, so agx writes run by run */
    int rc, rc2;
    long long diff = write_both(&q, &h, &st, seed % 5 ? MPI_MODE_RDWR : MPI_MODE_WRONLY, bg, &rc, &rc2);
    if (diff) { /* which file is wrong: each rank reads its own requests back from both */
        long long bad[2] = {-1, -1};
        for (int f = 0; f < 2; f++) {
            MPI_File fh = open_file(f ? path_b : path_a, MPI_MODE_RDONLY, -1);
            bio_check(fh, MPI_COMM_WORLD, &q, seed, &bad[f]);
            MPI_File_close(&fh);
        }
        fprintf(stderr, "  rank %d: pattern %d: %lld wrong bytes in agx's file, %lld in the reference\n", rank, k,
                bad[0], bad[1]);
    }
    /* the same requests read back by agx_file_read_all with the same hints: the bytes written */
    agx_io_stats rs;
    long long rbad = !diff && rc == MPI_SUCCESS ? read_back(path_a, seed % 7 ? MPI_MODE_RDONLY : MPI_MODE_RDWR,
                                                            MPI_FILE_NULL, &q, &h, &rs) : -1;
    CHECK(rbad == 0 || diff || rc != MPI_SUCCESS, "pattern %d (seed %u): read back, %lld wrong bytes (-1: failed)",
          k, seed, rbad);
    wrote = rc == MPI_SUCCESS ? st.bytes_written : -1;
    MPI_Allreduce(&q.bytes, &tot, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &wrote, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    int ok = rc == MPI_SUCCESS && rc2 == MPI_SUCCESS && diff == 0 && wrote == tot;
    CHECK(ok, "pattern %d (seed %u): rc %d ref %d, %lld bytes differ, wrote %lld of %lld; hints: %s "
          "aggregators %d stripe %lld x %d cb %lld kernels %s/%s throttle %d; %d requests", k, seed, rc, rc2, diff,
          wrote, tot, h.layout ? "striped" : "even", h.aggregators, h.stripe_size, h.stripe_count,
          h.cb_buffer_size, h.meta_kernel, h.data_kernel, h.throttle, q.n);
    bio_free(&q);
    return ok;
}

/* A call that must fail on every rank with `cls`, the handler running once per rank. */
static int reading; /* expect_error: through agx_file_read_all */
static void expect_error(const char *what, MPI_File fh, int n, const MPI_Offset *off, const int *len,
                         char *buf, const agx_io_hints *h, int cls)
{
    handler_calls = 0;
    int rc = reading ? agx_file_read_all(fh, MPI_COMM_WORLD, n, off, len, buf, h, NULL)
                     : agx_file_write_all(fh, MPI_COMM_WORLD, n, off, len, buf, h, NULL), got = MPI_SUCCESS;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &got);
    if (rank == 0 && rc != MPI_SUCCESS) {
        char msg[MPI_MAX_ERROR_STRING];
        int l;
        agx_error_string(rc, msg, &l);
        printf("  %s: %s\n", what, msg);
    }
    CHECK(got == cls && handler_calls == 1, "%s: class %d (want %d), handler ran %d times", what, got, cls,
          handler_calls);
}

/* Each rank its own (a 32 KiB block each, no two spans interleaved): the last rank's write
 * fails (the file size limit `one`, set there already), the others' succeed. The path
 * agrees no errors after the file calls (as ROMIO's independent path): the error is the
 * last rank's, once through the handler; the next call runs everywhere. */
static void own_fails(MPI_File fh, const agx_io_hints *h, const struct rlimit *one)
{
    enum { BLK = 32768 };
    static char blk[BLK];
    MPI_Offset off = (MPI_Offset)rank * BLK;
    int len = BLK, rc, got = MPI_SUCCESS;
    agx_io_stats st = {0};
    handler_calls = 0;
    rc = agx_file_write_all(fh, MPI_COMM_WORLD, 1, &off, &len, blk, h, &st);
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &got);
    int last = rank == size - 1;
    CHECK(last ? got == MPI_ERR_IO && handler_calls == 1 : rc == MPI_SUCCESS && handler_calls == 0,
          "each rank its own, the last rank's write failing: class %d, handler ran %d times on rank %d", got,
          handler_calls, rank);
    struct rlimit big = *one;
    big.rlim_cur = big.rlim_max;
    if (last)
        setrlimit(RLIMIT_FSIZE, &big);
    rc = agx_file_write_all(fh, MPI_COMM_WORLD, 1, &off, &len, blk, h, &st);
    CHECK(rc == MPI_SUCCESS && st.meta_kernel && !strcmp(st.meta_kernel, "own"),
          "each rank its own, the call after: rc %d, kernel %s", rc, st.meta_kernel ? st.meta_kernel : "-");
    if (last)
        setrlimit(RLIMIT_FSIZE, one);
}

static void errors(void)
{
    char buf[4096];
    memset(buf, 'x', sizeof buf);
    MPI_Offset off[2] = {100 * rank, 0};
    int len[2] = {100, 0};
    agx_io_hints h;
    agx_io_hints_init(&h);
    MPI_File fh = open_file(path_a, MPI_MODE_CREATE | MPI_MODE_RDWR, 0);
    if (size > 1) {
        off[0] = rank == 1 ? 50 : 100 * rank; /* ranks 0 and 1 share [50, 100) */
        expect_error("overlap between ranks", fh, 1, off, len, buf, &h, MPI_ERR_ARG);
        h.node_aggr = 1; /* found by the node's leader, or by the leaders' engine */
        expect_error("overlap between ranks, node aggregation", fh, 1, off, len, buf, &h, MPI_ERR_ARG);
        h.node_aggr = 0;
        off[0] = 100 * rank;
    }
    for (reading = 0; reading < 2; reading++) { /* writes, then reads */
        off[1] = 100 * rank + 10, len[1] = 5;
        expect_error("overlap on one rank", fh, 2, off, len, buf, &h, MPI_ERR_ARG);
        MPI_Offset roff[2] = {off[1], off[0]}; /* out of order: found after the sort */
        int rlen[2] = {len[1], len[0]};
        expect_error("overlap on one rank, out of order", fh, 2, roff, rlen, buf, &h, MPI_ERR_ARG);
        len[1] = 0;
        expect_error("negative count on the last rank", fh, rank == size - 1 ? -1 : 1, off, len, buf, &h,
                     MPI_ERR_COUNT);
    }
    reading = 0;
    agx_io_hints bad = h;
    bad.data_kernel = rank == 0 ? "no_such_kernel" : NULL;
    expect_error("unknown kernel on rank 0", fh, 1, off, len, buf, &bad, MPI_ERR_ARG);
    bad = h;
    bad.cb_buffer_size = rank == size - 1 ? 4096 : 0;
    if (size > 1)
        expect_error("hints differ", fh, 1, off, len, buf, &bad, MPI_ERR_ARG);
    MPI_File_set_view(fh, 8, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
    expect_error("a file view", fh, 1, off, len, buf, &h, MPI_ERR_ARG);
    MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
    /* a write failing on one aggregator: the last rank may not grow a file past 1 byte */
    struct rlimit old, one = {1, 0};
    getrlimit(RLIMIT_FSIZE, &old);
    one.rlim_max = old.rlim_max;
    signal(SIGXFSZ, SIG_IGN);
    h.aggregators = size;
    if (rank == size - 1)
        setrlimit(RLIMIT_FSIZE, &one);
    expect_error("write fails on the last aggregator (RLIMIT_FSIZE)", fh, 1, off, len, buf, &h, MPI_ERR_IO);
    h.aggregators = 0;
    own_fails(fh, &h, &one);
    if (rank == size - 1)
        setrlimit(RLIMIT_FSIZE, &old);
    h.aggregators = size;
    /* offsets at the edge of MPI_Offset: the file system's refusal (EFBIG) comes back as
     * an error on every rank; the span's 2^38 empty rounds are skipped, not walked */
    off[0] = LLONG_MAX - 10, len[0] = rank == 0 ? 10 : 0;
    expect_error("10 bytes at LLONG_MAX - 10 on rank 0", fh, 1, off, len, buf, &h, MPI_ERR_IO);
    off[0] = rank == size - 1 ? 1LL << 62 : 0, len[0] = rank == 0 || rank == size - 1 ? 10 : 0;
    expect_error("10 bytes at 0 and at 2^62", fh, 1, off, len, buf, &h, MPI_ERR_IO);
    /* 10 bytes at 0 and at 1 TiB (a sparse file): a few rounds visited (each piece's, one
     * more where a piece crosses a round's end) of the thousands the span holds */
    agx_io_stats st;
    off[0] = rank == size - 1 ? 1LL << 40 : 0;
    int rc = agx_file_write_all(fh, MPI_COMM_WORLD, 1, off, len, buf, &h, &st);
    MPI_Offset fsize = 0;
    MPI_File_get_size(fh, &fsize);
    CHECK(rc == MPI_SUCCESS && st.rounds_visited <= (size > 1 ? 4 : 1) && (size == 1 || st.rounds > 1000) && fsize == (1LL << 40) + 10,
          "10 bytes at 0 and at 1 TiB: rc %d, %lld rounds visited of %d, file size %lld", rc, st.rounds_visited,
          st.rounds, (long long)fsize);
    MPI_File_set_size(fh, 0);
    reading = 1, len[0] = 100; /* now empty */
    expect_error("read past the end of the file", fh, 1, off, len, buf, &h, MPI_ERR_IO);
    reading = 0;
    MPI_File_close(&fh);
    /* a file opened on MPI_COMM_SELF given with MPI_COMM_WORLD: refused on every rank;
     * then the same file with its own communicator works */
    MPI_Errhandler eh;
    MPI_File_create_errhandler(count_handler, &eh);
    MPI_File_open(MPI_COMM_SELF, path_b, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
    MPI_File_set_errhandler(fh, eh);
    MPI_Errhandler_free(&eh);
    if (size > 1)
        expect_error("a file of MPI_COMM_SELF with MPI_COMM_WORLD", fh, 1, off, len, buf, &h, MPI_ERR_COMM);
    off[0] = 0, len[0] = 10, h.aggregators = 0;
    rc = agx_file_write_all(fh, MPI_COMM_SELF, 1, off, len, buf, &h, NULL);
    CHECK(rc == MPI_SUCCESS, "then on MPI_COMM_SELF: rc %d", rc);
    MPI_File_close(&fh);
    fh = open_file(path_a, MPI_MODE_RDONLY, -1);
    handler_calls = 0;
    rc = agx_file_write_all(fh, MPI_COMM_WORLD, 1, off, len, buf, &h, NULL);
    CHECK(rc != MPI_SUCCESS && handler_calls == 1, "read-only file: rc %d, handler ran %d times", rc, handler_calls);
    MPI_File_close(&fh);
}

int main(int argc, char **argv)
{
    mt_run run;
    mt_start(&argc, &argv, &run);
    rank = run.rank, size = run.size;
    mt_file_pair(&run, "tp", path_a, path_b, sizeof path_a);
    int npat = getenv("AGX_TP_PATTERNS") ? atoi(getenv("AGX_TP_PATTERNS")) : run.quick ? 12 : 200;
    if (rank == 0)
        printf("test_twophase: p = %d, seed %u, %d patterns\n", size, run.seed, npat);
    int good = 0;
    for (int k = 0; k < npat; k++)
        good += one_pattern(run.seed + 7919u * (unsigned)k, k);
    if (rank == 0)
        printf("  %d of %d random patterns byte-exact against MPI_File_write_all, and read back\n", good, npat);
    workloads(run.seed);
    in_place(run.seed);
    wide_records(run.seed);
    errors();
    if (rank == 0) {
        unlink(path_a);
        unlink(path_b);
        printf("%s: %d passed, %d failed\n", failed ? "FAIL" : "PASS", passed, failed);
    }
    MPI_Finalize();
    return failed ? 1 : 0;
}
