/*
 * The engine's communicator of a file (src/io/file_comm.c): files opened through
 * agx_mpi_file_open on a new duplicate of the world each (PnetCDF's way), two open at
 * once on congruent communicators, the same ranks in the reverse order, halves, and more
 * files open at once than duplicates are kept. Each file: two collective writes through
 * agx (each rank's block, every byte made of its world rank, the seed and the write),
 * interleaved with the other open files' writes; rank 0 of the file's communicator
 * checks it byte for byte; then STEPS files one after another on new duplicates (a file
 * per step). AGX_VERBOSE (set here; world rank 0's stderr read back): at least the files
 * after the first on the world's ranks, one at a time, take a kept duplicate (4 of them
 * on rank 0, and the step files); under AGX_ADAPT=1, the files' writes settle (8
 * decided calls in a row, src/select/adapt_file.c; 2 writes a file) and the step files
 * after that settle again at their first write, from what the earlier ones left with the
 * kept duplicate, their decided class among it. Where MPI gives MPI_THREAD_MULTIPLE (AGX_PROGRESS_THREAD=1), two threads
 * then open files at once, each a file per step on new duplicates of its own copy of the
 * world: both offer the same kept duplicates and make new ones at the same time (each
 * kept one's id must name one communicator on every rank), every file checked.
 *   [AGX_ADAPT=1] [AGX_PROGRESS_THREAD=1] test_filecomm [--seed S]
 */
#include "agx.h"
#include "mpitest.h"

#include <unistd.h>

enum { BLK = 3000, NW = 2, MANY = 6, STEPS = 10 };
static int rank, size;
static _Atomic int passed, failed; /* CHECK's counters: the thread phase's two threads count too */
static unsigned seed, job; /* job: rank 0's process id (mt_run), in the files' names */

static unsigned char byte_of(int world, int w, int i) { return (unsigned char)(world * 7 + seed + w * 3 + i % 5); }

static void open_file(MPI_Comm c, const char *kind, int n, char *path, size_t len, MPI_File *fh)
{
    const char *dir = getenv("AGX_TP_DIR") ? getenv("AGX_TP_DIR") : "/tmp";
    int cr;
    MPI_Comm_rank(c, &cr);
    snprintf(path, len, "%s/agx_filecomm_%u_%u_%d_%s%d.dat", dir, seed, job, size, kind, n);
    int rc = agx_mpi_file_open(c, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, fh);
    CHECK_ON(c, rc == MPI_SUCCESS, "%s: open %d", path, rc);
}

/* Write w: this rank's block at (w * ranks + its rank) * BLK. */
static void write_block(MPI_Comm c, MPI_File fh, int w)
{
    int cr, cp;
    MPI_Comm_rank(c, &cr), MPI_Comm_size(c, &cp);
    unsigned char buf[BLK];
    for (int i = 0; i < BLK; i++)
        buf[i] = byte_of(rank, w, i);
    int rc = agx_mpi_file_write_at_all(fh, ((MPI_Offset)w * cp + cr) * BLK, buf, BLK, MPI_BYTE, MPI_STATUS_IGNORE);
    CHECK_ON(c, rc == MPI_SUCCESS, "write %d: %d", w, rc);
}

/* Closed, checked by rank 0 of c (its ranks' world ranks gathered), removed. */
static void close_check(MPI_Comm c, MPI_File *fh, const char *path, const char *what)
{
    int cr, cp, bad = 0;
    MPI_Comm_rank(c, &cr), MPI_Comm_size(c, &cp);
    CHECK_ON(c, agx_mpi_file_close(fh) == MPI_SUCCESS, "%s: close", what);
    int *world = malloc(sizeof(int) * (size_t)cp);
    MPI_Gather(&rank, 1, MPI_INT, world, 1, MPI_INT, 0, c);
    if (!cr) {
        FILE *f = fopen(path, "rb");
        for (int w = 0; w < NW && f; w++)
            for (int r = 0; r < cp; r++)
                for (int i = 0; i < BLK; i++)
                    bad += getc(f) != byte_of(world[r], w, i);
        bad += !f || getc(f) != EOF;
        if (f)
            fclose(f);
        unlink(path);
    }
    free(world);
    MPI_Bcast(&bad, 1, MPI_INT, 0, c);
    CHECK_ON(c, bad == 0, "%s: %d bytes wrong", what, bad);
}

/* n files on the communicators c[0..n), open at once, their writes interleaved. */
static void files(MPI_Comm *c, int n, const char *kind)
{
    MPI_File fh[MANY];
    char path[MANY][512];
    for (int i = 0; i < n; i++)
        open_file(c[i], kind, i, path[i], sizeof path[i], &fh[i]);
    for (int w = 0; w < NW; w++)
        for (int i = 0; i < n; i++)
            write_block(c[i], fh[i], w);
    for (int i = n - 1; i >= 0; i--)
        close_check(c[i], &fh[i], path[i], kind);
}

static void dups(MPI_Comm from, int n, const char *kind)
{
    MPI_Comm c[MANY];
    for (int i = 0; i < n; i++)
        MPI_Comm_dup(from, &c[i]);
    files(c, n, kind);
    for (int i = 0; i < n; i++)
        MPI_Comm_free(&c[i]);
}

enum { THREADS = 2, THREAD_STEPS = 6 };
static MPI_Comm thread_world[THREADS];

static void *thread_steps(void *arg)
{
    int t = (int)(long)arg;
    for (int i = 0; i < THREAD_STEPS; i++)
        dups(thread_world[t], 1, t ? "thread1_" : "thread0_");
    return NULL;
}

int main(int argc, char **argv)
{
    setenv("AGX_VERBOSE", "1", 1);
    mt_run r;
    mt_start(&argc, &argv, &r);
    rank = r.rank, size = r.size, seed = r.seed, job = r.job;
    if (!rank)
        printf("test_filecomm: seed %u, %d ranks\n", seed, size);
    mt_log log;
    mt_log_start(&log, rank, "filecomm");
    for (int i = 0; i < 3; i++) /* one at a time: a new duplicate each, as PnetCDF opens */
        dups(MPI_COMM_WORLD, 1, "seq");
    dups(MPI_COMM_WORLD, 2, "pair"); /* two at once: one takes the kept, one duplicates */
    MPI_Comm rev, half;
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &rev); /* the same ranks, reversed */
    dups(rev, 1, "rev");
    dups(rev, 1, "rev");
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    dups(half, 1, rank % 2 ? "half_odd" : "half_even"); /* files of their own */
    dups(half, 1, rank % 2 ? "half_odd" : "half_even"); /* files of their own */
    dups(MPI_COMM_WORLD, MANY, "many"); /* more than are kept */
    dups(MPI_COMM_WORLD, 1, "last");
    for (int i = 0; i < STEPS; i++)
        dups(MPI_COMM_WORLD, 1, "step");
    MPI_Comm_free(&rev);
    MPI_Comm_free(&half);
    int threaded = mt_threads(THREADS, thread_world, thread_steps);
    int kept = 0, settled = 0, carried = 0;
    fflush(stderr);
    char line[1024];
    while (log.f && fgets(line, sizeof line, log.f))
        kept += strstr(line, "a duplicate kept from an earlier file") != NULL,
            settled += strstr(line, "collective writes settled on") != NULL ||
                       strstr(line, "collective writes: the choice rides on") != NULL,
            carried += strstr(line, "collective writes: 1 decided class from the last file") != NULL;
    mt_log_end(&log);
    CHECK(rank || kept >= 4 + STEPS, "%d files on a kept duplicate, not at least %d", kept, 4 + STEPS);
    int adapt = getenv("AGX_ADAPT") && !strcmp(getenv("AGX_ADAPT"), "1");
    CHECK(rank || !adapt || settled >= STEPS / 2, "AGX_ADAPT=1: %d files settled, not at least %d", settled,
          STEPS / 2);
    CHECK(rank || !adapt || carried >= STEPS / 2, "AGX_ADAPT=1: %d files started with the last one's decided class, "
          "not at least %d", carried, STEPS / 2);
    if (!rank)
        printf("test_filecomm: %d files on a kept duplicate, %d settled%s; %d checks passed, %d failed\n", kept,
               settled, threaded ? ", two threads' files at once" : "", (int)passed, (int)failed);
    MPI_Finalize();
    return failed != 0;
}
