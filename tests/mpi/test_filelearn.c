/*
 * The on-line choice of collective writes (AGX_ADAPT, src/select/adapt_file.c): file B is
 * written through agx_mpi_file_write_at_all / _write_all, file A through the library, the
 * same writes (uneven sizes per rank, one size class); then
 *  - after every write of B, every rank reports the same way (agx_mpi_file_last: the
 *    engine, or the library's own and why), also when one rank's clock disagrees
 *    (AGX_TEST_FLEARN_SKEW);
 *  - the window times both (the library's own at least once among the first 4 writes) and
 *    the writes after it all go the expected way (--expect engine | library | node: the
 *    engine with intra-node aggregation, offered where the ranks span regions,
 *    AGX_REGION_SIZE), or every write runs the engine (--expect off: AGX_ADAPT=0);
 *  - a second file of the same class starts decided (no write timed again); with
 *    --decided, the first too (the class's row of a rules file, AGX_TUNING_FILE);
 *  - A and B are equal byte for byte.
 * --cb opens B with romio_cb_write=enable: every write through the aggregators (each
 * rank's share is one large run, which the engine would otherwise have each rank write
 * itself, where node aggregation changes nothing).
 *   AGX_ADAPT=1 [AGX_TEST_FLEARN_SKEW=R:C:F] test_filelearn --expect WAY [--decided] [--cb] [--seed S]
 */
#include "agx.h"
#include "mpitest.h"

#include <unistd.h>

enum { NW = 10, BASE = 4096 }; /* writes per file; ints per rank and write, at least */
static int rank, size, passed, failed;

static unsigned hash(const char *s)
{
    unsigned h = 5381;
    while (s && *s)
        h = h * 33 + (unsigned char)*s++;
    return h;
}

/* One file: NW writes (even: write_at_all, odd: seek + write_all) of this rank's share
 * after the lower ranks', through the library (fa) and agx (fb). way[w]: 1 the
 * engine, 0 the library's own; learned[w]: the library's own as the learned winner. */
static void write_file(MPI_File fa, MPI_File fb, unsigned *seed, int way[NW], int learned[NW], int node[NW])
{
    MPI_Offset at = 0;
    for (int w = 0; w < NW; w++) {
        int n = BASE + (int)(mt_rand(seed) % (BASE / 4)) * (rank % 3 != 1); /* max in [4096, 5120) ints */
        int *buf = malloc(sizeof(int) * (size_t)n);
        for (int i = 0; i < n; i++)
            buf[i] = (int)mt_rand(seed);
        long long mine = n, before = 0, total = 0;
        MPI_Exscan(&mine, &before, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
        MPI_Allreduce(&mine, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
        MPI_Offset off = at + (rank ? before : 0) * (MPI_Offset)sizeof(int);
        MPI_Status sa, sb;
        int ra, rb, cnt = -1;
        if (w % 2 == 0) {
            ra = MPI_File_write_at_all(fa, off, buf, n, MPI_INT, &sa);
            rb = agx_mpi_file_write_at_all(fb, off, buf, n, MPI_INT, &sb);
        } else {
            MPI_File_seek(fa, off, MPI_SEEK_SET);
            MPI_File_seek(fb, off, MPI_SEEK_SET);
            ra = MPI_File_write_all(fa, buf, n, MPI_INT, &sa);
            rb = agx_mpi_file_write_all(fb, buf, n, MPI_INT, &sb);
        }
        CHECK(ra == MPI_SUCCESS && rb == MPI_SUCCESS, "write %d: %d / %d", w, ra, rb);
        MPI_Get_count(&sb, MPI_INT, &cnt);
        CHECK(cnt == n, "write %d: count %d, not %d", w, cnt, n);
        const char *why = NULL;
        way[w] = agx_mpi_file_last(fb, &why);
        learned[w] = !way[w] && why && strstr(why, "faster");
        node[w] = way[w] && why && !strcmp(why, "node");
        int v[4] = {way[w], -way[w], (int)(hash(why) & 0x7fffffff), -(int)(hash(why) & 0x7fffffff)};
        MPI_Allreduce(MPI_IN_PLACE, v, 4, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        CHECK(v[0] == -v[1] && v[2] == -v[3], "write %d went different ways on the ranks (here %s)", w,
               way[w] ? "the engine" : why);
        at += total * (MPI_Offset)sizeof(int);
        free(buf);
    }
}

int main(int argc, char **argv)
{
    mt_run r;
    mt_start(&argc, &argv, &r);
    rank = r.rank, size = r.size;
    const char *expect = "engine";
    int decided = 0, cb = 0; /* --decided: a rules file (AGX_TUNING_FILE) chose: no write is timed */
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--expect") && i + 1 < argc)
            expect = argv[i + 1];
        else if (!strcmp(argv[i], "--decided"))
            decided = 1;
        else if (!strcmp(argv[i], "--cb"))
            cb = 1;
    int off = !strcmp(expect, "off"), lib = !strcmp(expect, "library"), nd = !strcmp(expect, "node");
    if (!rank)
        printf("test_filelearn: %d ranks, seed %u, expect %s\n", size, r.seed, expect);
    unsigned seed = r.seed + 7919u * (unsigned)rank;
    for (int file = 0; file < 2; file++) {
        char a[512], b[512];
        mt_file_pair(&r, file ? "flearn2" : "flearn", a, b, sizeof a);
        MPI_File fa, fb;
        int mode = MPI_MODE_CREATE | MPI_MODE_WRONLY;
        if (!rank)
            unlink(a), unlink(b);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_File_open(MPI_COMM_WORLD, a, mode, MPI_INFO_NULL, &fa);
        MPI_Info info = MPI_INFO_NULL;
        if (cb) {
            MPI_Info_create(&info);
            MPI_Info_set(info, "romio_cb_write", "enable");
        }
        agx_mpi_file_open(MPI_COMM_WORLD, b, mode, info, &fb);
        if (cb)
            MPI_Info_free(&info);
        int way[NW], learned[NW], node[NW], nlib = 0, nnode = 0;
        write_file(fa, fb, &seed, way, learned, node);
        MPI_File_close(&fa);
        agx_mpi_file_close(&fb);
        for (int w = 0; w < 4; w++)
            nlib += !way[w], nnode += node[w];
        if (off)
            for (int w = 0; w < NW; w++)
                CHECK(way[w], "file %d write %d: AGX_ADAPT=0, yet the library's own", file, w);
        else if (file == 0 && !decided)
            CHECK(nlib >= 1, "file 0: the library's own was never timed in the first 4 writes");
        for (int w = file || decided ? 0 : 4; w < NW && !off; w++)
            CHECK(lib ? learned[w] : nd ? node[w] : way[w] && !node[w], "file %d write %d: not the expected %s", file,
                  w, expect);
        if (file == 0 && !decided && !off && getenv("AGX_REGION_SIZE"))
            CHECK(nnode >= 1, "file 0: the ranks span regions, yet node aggregation was not timed in the first 4 "
                  "writes");
        long long diff = mt_compare_files(rank, b, a);
        CHECK(diff == 0, "file %d: %lld bytes differ from the library's file", file, diff);
        MPI_Barrier(MPI_COMM_WORLD);
        if (!rank)
            unlink(a), unlink(b);
    }
    if (!rank)
        printf("test_filelearn: %d checks passed, %d failed\n", passed, failed);
    MPI_Finalize();
    return failed != 0;
}
