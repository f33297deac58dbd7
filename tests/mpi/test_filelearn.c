/*
 * The on-line choice of collective writes (AGX_ADAPT, src/select/adapt_file.c): file B is
 * written through agx_mpi_file_write_at_all / _write_all, file A through the library, the
 * same writes (uneven sizes per rank, one size class); then
 *  - after every write of B, every rank reports the same way (agx_mpi_file_last: the
 *    engine, or the library's own and why), also when one rank's clock disagrees
 *    (AGX_TEST_FLEARN_SKEW);
 *  - the window times both (the engine alone the first 2 writes, the library's own at
 *    least once among the first 4) and
 *    the writes after it all go the expected way (--expect engine | library | node: the
 *    engine with intra-node aggregation, offered where the ranks span regions,
 *    AGX_REGION_SIZE), or every write runs the engine (--expect off: AGX_ADAPT=0);
 *  - a second file of the same class starts decided (no write timed again); with
 *    --decided, the first too (the class's row of a rules file, AGX_TUNING_FILE);
 *  - six files of one write each (a file per step), of another class: the window goes on
 *    from file to file, the other candidates timed among the first four files, and from
 *    the fifth the writes go the expected way (with --decided, from the first);
 *  - A and B are equal byte for byte;
 *  - with --engine-turns N, the engine ran N of file 0's first 4 writes (a window whose
 *    times are fixed, AGX_TEST_FLEARN_TIMES; turns engine, engine, library, library: the
 *    engine's two samples put it out at 2 times the library's first, and the library's one
 *    sample puts it out at 2 times the engine's);
 *  - --expect own (without --cb): every write the engine's, none the library's, whatever
 *    the clocks say: its first write of a class went each rank its own, which decides the
 *    class for the engine; each later write of the file makes one collective (the
 *    engine's agreement, which carries the choice: agx_flearn_fold), counted by the
 *    PMPI_ collectives this program puts in front of the library's; a class whose first
 *    write fails on one rank only (a file size limit there) is the engine's all the same,
 *    the error that rank's alone.
 * --cb opens B with romio_cb_write=enable: every write through the aggregators (each
 * rank's share is one large run, which the engine would otherwise have each rank write
 * itself, where node aggregation changes nothing, and which would decide every class at
 * its first write).
 *   AGX_ADAPT=1 [AGX_TEST_FLEARN_SKEW=R:C:F] [AGX_TEST_FLEARN_TIMES=T0,T1] test_filelearn --expect WAY
 *       [--decided] [--cb] [--engine-turns N] [--seed S]
 */
#include "agx.h"
#include "mpitest.h"

#include <dlfcn.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

enum { NW = 10, BASE = 4096 }; /* writes per file; ints per rank and write, at least */
enum { NS = 6, SMULT = 16 };   /* a file per step: files, and their writes' size (another class) */
static int rank, size, passed, failed;
static MPI_Comm cw; /* the files' communicator: MPI_COMM_WORLD, or a part of it */

static unsigned hash(const char *s)
{
    unsigned h = 5381;
    while (s && *s)
        h = h * 33 + (unsigned char)*s++;
    return h;
}

static int change_at = NW; /* write_file's writes from this one on: 4 times the size (another class) */

/* The collectives agx makes (it calls the PMPI_ names): counted here, then the library's. */
static long long ncoll;
#define REAL(name, ...) \
    static int (*real)(__VA_ARGS__); \
    if (!real) \
        *(void **)&real = dlsym(RTLD_NEXT, #name); \
    ncoll++
int PMPI_Allreduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op o, MPI_Comm c)
{
    REAL(PMPI_Allreduce, const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm);
    return real(s, r, n, t, o, c);
}
int PMPI_Allgather(const void *s, int n, MPI_Datatype t, void *r, int m, MPI_Datatype u, MPI_Comm c)
{
    REAL(PMPI_Allgather, const void *, int, MPI_Datatype, void *, int, MPI_Datatype, MPI_Comm);
    return real(s, n, t, r, m, u, c);
}
int PMPI_Bcast(void *b, int n, MPI_Datatype t, int root, MPI_Comm c)
{
    REAL(PMPI_Bcast, void *, int, MPI_Datatype, int, MPI_Comm);
    return real(b, n, t, root, c);
}
int PMPI_Barrier(MPI_Comm c)
{
    REAL(PMPI_Barrier, MPI_Comm);
    return real(c);
}

/* One file: nw writes (even: write_at_all, odd: seek + write_all) of this rank's share
 * (mult x [4096, 5120) ints on the largest) after the lower ranks', through the library
 * (fa) and agx (fb). way[w]: 1 the engine, 0 the library's own; learned[w]: the
 * library's own as the learned winner. */
static void write_file(MPI_File fa, MPI_File fb, unsigned *seed, int nw, int mult, int *way, int *learned, int *node,
                       long long *colls)
{
    MPI_Offset at = 0;
    for (int w = 0; w < nw; w++) {
        int n = (w >= change_at ? 4 * mult : mult) * (BASE + (int)(mt_rand(seed) % (BASE / 4)) * (rank % 3 != 1));
        int *buf = malloc(sizeof(int) * (size_t)n);
        for (int i = 0; i < n; i++)
            buf[i] = (int)mt_rand(seed);
        long long mine = n, before = 0, total = 0;
        int cr;
        MPI_Comm_rank(cw, &cr);
        MPI_Exscan(&mine, &before, 1, MPI_LONG_LONG, MPI_SUM, cw);
        MPI_Allreduce(&mine, &total, 1, MPI_LONG_LONG, MPI_SUM, cw);
        MPI_Offset off = at + (cr ? before : 0) * (MPI_Offset)sizeof(int);
        MPI_Status sa, sb;
        int ra, rb, cnt = -1;
        long long c0;
        if (w % 2 == 0) {
            ra = MPI_File_write_at_all(fa, off, buf, n, MPI_INT, &sa);
            c0 = ncoll;
            rb = agx_mpi_file_write_at_all(fb, off, buf, n, MPI_INT, &sb);
        } else {
            MPI_File_seek(fa, off, MPI_SEEK_SET);
            MPI_File_seek(fb, off, MPI_SEEK_SET);
            ra = MPI_File_write_all(fa, buf, n, MPI_INT, &sa);
            c0 = ncoll;
            rb = agx_mpi_file_write_all(fb, buf, n, MPI_INT, &sb);
        }
        if (colls)
            colls[w] = ncoll - c0;
        CHECK_ON(cw, ra == MPI_SUCCESS && rb == MPI_SUCCESS, "write %d: %d / %d", w, ra, rb);
        MPI_Get_count(&sb, MPI_INT, &cnt);
        CHECK_ON(cw, cnt == n, "write %d: count %d, not %d", w, cnt, n);
        const char *why = NULL;
        way[w] = agx_mpi_file_last(fb, &why);
        learned[w] = !way[w] && why && strstr(why, "faster");
        node[w] = way[w] && why && !strcmp(why, "node");
        int v[4] = {way[w], -way[w], (int)(hash(why) & 0x7fffffff), -(int)(hash(why) & 0x7fffffff)};
        MPI_Allreduce(MPI_IN_PLACE, v, 4, MPI_INT, MPI_MAX, cw);
        CHECK_ON(cw, v[0] == -v[1] && v[2] == -v[3], "write %d went different ways on the ranks (here %s)", w,
               way[w] ? "the engine" : why);
        at += total * (MPI_Offset)sizeof(int);
        free(buf);
    }
}

static void open_pair(mt_run *r, const char *stem, int cb, MPI_File *fa, MPI_File *fb, char *a, char *b, size_t cap)
{
    mt_file_pair(r, stem, a, b, cap);
    int mode = MPI_MODE_CREATE | MPI_MODE_WRONLY, cr;
    MPI_Comm_rank(cw, &cr);
    if (!cr)
        unlink(a), unlink(b);
    MPI_Barrier(cw);
    MPI_File_open(cw, a, mode, MPI_INFO_NULL, fa);
    MPI_Info info = MPI_INFO_NULL;
    if (cb) {
        MPI_Info_create(&info);
        MPI_Info_set(info, "romio_cb_write", "enable");
    }
    agx_mpi_file_open(cw, b, mode, info, fb);
    if (cb)
        MPI_Info_free(&info);
}

/* agx's file b against the library's a, then both removed; collective over MPI_COMM_WORLD. */
static void compare_pair(const char *a, const char *b, const char *what)
{
    long long diff = mt_compare_files(rank, b, a);
    CHECK(diff == 0, "%s: %lld bytes differ from the library's file", what, diff);
    MPI_Barrier(MPI_COMM_WORLD);
    if (!rank)
        unlink(a), unlink(b);
}

static void close_pair(MPI_File *fa, MPI_File *fb, const char *a, const char *b, const char *what)
{
    MPI_File_close(fa);
    agx_mpi_file_close(fb);
    compare_pair(a, b, what);
}

/* A class's first write, each rank its own (a 32 KiB block each), fails on the last rank
 * only (a file size limit there): the class is the engine's on every rank all the same,
 * the error the last rank's alone, and the later writes go the same way everywhere, with
 * the choice on the engine's agreement (one collective each). */
static void own_fails(mt_run *r)
{
    enum { BLK = 32768, NF = 4 };
    static char blk[BLK];
    char a[512], b[512];
    mt_file_pair(r, "flearn_fail", a, b, sizeof a);
    if (!rank)
        unlink(b);
    MPI_Barrier(cw);
    MPI_File fb;
    agx_mpi_file_open(cw, b, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fb);
    MPI_File_set_errhandler(fb, MPI_ERRORS_RETURN);
    struct rlimit old, one;
    getrlimit(RLIMIT_FSIZE, &old);
    one = old, one.rlim_cur = 1;
    signal(SIGXFSZ, SIG_IGN);
    for (int w = 0; w < NF; w++) {
        if (rank == size - 1)
            setrlimit(RLIMIT_FSIZE, w ? &old : &one);
        long long c0 = ncoll;
        int rc = agx_mpi_file_write_at_all(fb, (MPI_Offset)rank * BLK, blk, BLK, MPI_BYTE, MPI_STATUS_IGNORE), cls = 0;
        long long colls = ncoll - c0;
        if (rc != MPI_SUCCESS)
            MPI_Error_class(rc, &cls);
        const char *why = NULL;
        int way = agx_mpi_file_last(fb, &why), v[2] = {way, -way};
        MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_INT, MPI_MAX, cw);
        CHECK(w || (rank == size - 1 ? cls == MPI_ERR_IO : rc == MPI_SUCCESS), "own, failing on the last rank: "
              "class %d on rank %d", cls, rank);
        CHECK(!w || rc == MPI_SUCCESS, "own, write %d after the failed one: rc %d", w, rc);
        CHECK(!w || (way && v[0] == -v[1]), "own, write %d: %s here, not the engine on every rank", w,
              way ? "the engine" : why); /* the failed call: no way reported there */
        CHECK(!w || colls == 1, "own, write %d after the failed one: %lld collectives, not 1", w, colls);
    }
    agx_mpi_file_close(&fb);
    MPI_Barrier(cw);
    if (!rank)
        unlink(b);
}

/* Ranks whose memories of a class differ: the even ranks write 2 step files of it on
 * their half of the ranks, the odd ones 3 (their windows stop at different turns, and one
 * rank's skewed clock, AGX_TEST_FLEARN_SKEW, is in one half only), then each pair (2k,
 * 2k + 1; the last rank alone where p is odd) writes one: its ranks must agree to start
 * the window afresh, the same way on both (write_file checks every write). */
static void mixed_memories(mt_run *r, int cb)
{
    char a[512], b[512], stem[64];
    unsigned seed = r->seed + 104729u * (unsigned)rank;
    int way, learned, node;
    for (int phase = 0; phase < 2; phase++) {
        int group = phase ? rank / 2 : rank % 2;
        MPI_Comm_split(MPI_COMM_WORLD, group, rank, &cw);
        for (int f = 0; f < (phase ? 1 : 2 + rank % 2); f++) {
            snprintf(stem, sizeof stem, "flearn_mix%d_%d_%d", phase, group, f);
            MPI_File fa, fb;
            open_pair(r, stem, cb, &fa, &fb, a, b, sizeof a);
            write_file(fa, fb, &seed, 1, 2 * SMULT, &way, &learned, &node, NULL);
            MPI_File_close(&fa), agx_mpi_file_close(&fb);
        }
        MPI_Comm_free(&cw);
        cw = MPI_COMM_WORLD;
        for (int g = 0; g < (phase ? (size + 1) / 2 : 2); g++) /* every group's files, by world rank 0 */
            for (int f = 0; f < (phase ? 1 : 2 + g); f++) {
                snprintf(stem, sizeof stem, "flearn_mix%d_%d_%d", phase, g, f);
                mt_file_pair(r, stem, a, b, sizeof a);
                compare_pair(a, b, stem);
            }
    }
}

int main(int argc, char **argv)
{
    mt_run r;
    mt_start(&argc, &argv, &r);
    rank = r.rank, size = r.size;
    const char *expect = "engine";
    int decided = 0, cb = 0; /* --decided: a rules file (AGX_TUNING_FILE) chose: no write is timed */
    int eturns = -1;         /* --engine-turns N: the engine ran N of file 0's first 4 writes */
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--expect") && i + 1 < argc)
            expect = argv[i + 1];
        else if (!strcmp(argv[i], "--decided"))
            decided = 1;
        else if (!strcmp(argv[i], "--cb"))
            cb = 1;
        else if (!strcmp(argv[i], "--engine-turns") && i + 1 < argc)
            eturns = atoi(argv[i + 1]);
    int own = !strcmp(expect, "own"), off = own || !strcmp(expect, "off"), lib = !strcmp(expect, "library"),
        nd = !strcmp(expect, "node");
    if (!rank)
        printf("test_filelearn: %d ranks, seed %u, expect %s\n", size, r.seed, expect);
    unsigned seed = r.seed + 7919u * (unsigned)rank;
    cw = MPI_COMM_WORLD;
    char a[512], b[512], what[64];
    for (int file = 0; file < 2; file++) {
        MPI_File fa, fb;
        open_pair(&r, file ? "flearn2" : "flearn", cb, &fa, &fb, a, b, sizeof a);
        int way[NW], learned[NW], node[NW], nlib = 0, nnode = 0;
        long long colls[NW];
        write_file(fa, fb, &seed, NW, 1, way, learned, node, colls);
        snprintf(what, sizeof what, "file %d", file);
        close_pair(&fa, &fb, a, b, what);
        int neng = 0;
        for (int w = 0; w < 4; w++)
            nlib += !way[w], nnode += node[w], neng += way[w];
        if (file == 0 && eturns >= 0)
            CHECK(neng == eturns, "file 0: the engine ran %d of the first 4 writes, not %d", neng, eturns);
        for (int w = 1; w < NW && own; w++)
            CHECK(colls[w] == 1, "file %d write %d: %lld collectives, not 1 (the engine's agreement, with the choice "
                  "on it)", file, w, colls[w]);
        if (off)
            for (int w = 0; w < NW; w++)
                CHECK(way[w] && !node[w], "file %d write %d: %s, yet the library's own or node aggregation", file, w,
                      own ? "each rank its own" : "AGX_ADAPT=0");
        else if (file == 0 && !decided) {
            CHECK(nlib >= 1, "file 0: the library's own was never timed in the first 4 writes");
            CHECK(way[0] && way[1] && !node[0] && !node[1], "file 0: the first two writes not both agx's engine "
                  "alone (the library's first turn is a class's third call)");
        }
        for (int w = file || decided ? 0 : 4; w < NW && !off; w++)
            CHECK(lib ? learned[w] : nd ? node[w] : way[w] && !node[w], "file %d write %d: not the expected %s", file,
                  w, expect);
        if (file == 0 && !decided && !off && getenv("AGX_REGION_SIZE"))
            CHECK(nnode >= 1, "file 0: the ranks span regions, yet node aggregation was not timed in the first 4 "
                  "writes");
    }
    /* A file whose class changes after the engine's: the choice riding on the engine's
     * agreement (agx_flearn_fold) finds a class to learn, and every rank runs it instead */
    MPI_File fa, fb;
    open_pair(&r, "flearn_change", cb, &fa, &fb, a, b, sizeof a);
    int cway[NW], clearned[NW], cnode[NW];
    long long colls[NW];
    change_at = NW / 2;
    write_file(fa, fb, &seed, NW, 1, cway, clearned, cnode, colls);
    change_at = NW;
    close_pair(&fa, &fb, a, b, "a file whose class changes");
    if (own) /* the new class's first write: the agreement, then the class's own; its turn is the engine's */
        for (int w = 1; w < NW; w++)
            CHECK(colls[w] == (w == NW / 2 ? 2 : 1), "class change: write %d: %lld collectives, not %d", w, colls[w],
                  w == NW / 2 ? 2 : 1);
    /* A file per step, one write each, of another class: the window goes on from one file
     * to the next, times each candidate within the first four and decides by the fifth. */
    int way[NS], learned[NS], node[NS], nlib = 0, nnode = 0;
    for (int f = 0; f < NS; f++) {
        MPI_File fa, fb;
        open_pair(&r, "flearn_step", cb, &fa, &fb, a, b, sizeof a);
        write_file(fa, fb, &seed, 1, SMULT, &way[f], &learned[f], &node[f], NULL);
        snprintf(what, sizeof what, "step file %d", f);
        close_pair(&fa, &fb, a, b, what);
        nlib += f < 4 && !way[f], nnode += f < 4 && node[f];
        CHECK(!off || way[f], "step file %d: %s, yet the library's own", f, own ? "each rank its own" : "AGX_ADAPT=0");
    }
    if (!off && !decided)
        CHECK(nlib >= 1 && (nnode >= 1 || !getenv("AGX_REGION_SIZE")),
              "step files: the library's own (%d) or node aggregation (%d) never timed in the first 4", nlib, nnode);
    for (int f = decided ? 0 : 4; f < NS && !off; f++)
        CHECK(lib ? learned[f] : nd ? node[f] : way[f] && !node[f], "step file %d: not the expected %s", f, expect);
    if (own)
        own_fails(&r);
    if (size >= 3)
        mixed_memories(&r, cb);
    if (!rank)
        printf("test_filelearn: %d checks passed, %d failed\n", passed, failed);
    MPI_Finalize();
    return failed != 0;
}
