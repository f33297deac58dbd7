/* Helpers shared by the MPI tests: a seeded generator and check macros. */
#ifndef AGX_MPITEST_H
#define AGX_MPITEST_H
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <mpi.h>

/* xorshift32: small, deterministic across platforms */
static inline unsigned mt_rand(unsigned *s)
{
    unsigned x = *s ? *s : 0x9E3779B9u;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return *s = x;
}

/* AGX_TEST_SEED if set, else a fresh seed (rank 0's is broadcast by the caller). */
static inline unsigned mt_seed_from_env(void)
{
    const char *s = getenv("AGX_TEST_SEED");
    return s ? (unsigned)strtoul(s, NULL, 0) : (unsigned)time(NULL);
}
/* The start of every differential test: MPI_Init (MPI_Init_thread with
 * MPI_THREAD_MULTIPLE when AGX_PROGRESS_THREAD is set), the options --quick, --seed N and
 * --algs LIST, rank 0's seed broadcast (AGX_TEST_SEED, else the time). */
typedef struct {
    int quick, rank, size;
    unsigned seed;
    unsigned job;       /* rank 0's process id: tests started in the same second (the same
                         * seed) name different scratch files (mt_file_pair) */
    const char *only;   /* --algs: comma-separated names to test, NULL: all */
} mt_run;

static inline void mt_start(int *argc, char ***argv, mt_run *r)
{
    memset(r, 0, sizeof *r);
    r->seed = mt_seed_from_env();
    int provided;
    if (getenv("AGX_PROGRESS_THREAD")) /* the progress thread needs MPI_THREAD_MULTIPLE */
        MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
    else
        MPI_Init(argc, argv);
    for (int i = 1; i < *argc; i++) {
        if (!strcmp((*argv)[i], "--quick"))
            r->quick = 1;
        else if (!strcmp((*argv)[i], "--seed") && i + 1 < *argc)
            r->seed = (unsigned)strtoul((*argv)[++i], NULL, 0);
        else if (!strcmp((*argv)[i], "--algs") && i + 1 < *argc)
            r->only = (*argv)[++i];
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &r->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &r->size);
    unsigned v[2] = {r->seed, (unsigned)getpid()};
    MPI_Bcast(v, 2, MPI_UNSIGNED, 0, MPI_COMM_WORLD);
    r->seed = v[0], r->job = v[1];
}

/* Two scratch file names, the same on every rank: $AGX_TP_DIR (or /tmp)
 * /agx_<kind>_<seed>_<job>_<size>_{a,b}.dat. */
static inline void mt_file_pair(const mt_run *r, const char *kind, char *a, char *b, size_t n)
{
    const char *dir = getenv("AGX_TP_DIR") ? getenv("AGX_TP_DIR") : "/tmp";
    snprintf(a, n, "%s/agx_%s_%u_%u_%d_a.dat", dir, kind, r->seed, r->job, r->size);
    snprintf(b, n, "%s/agx_%s_%u_%u_%d_b.dat", dir, kind, r->seed, r->job, r->size);
}

/* Rank 0 compares files a (agx's) and b (the reference) byte for byte, the first 4
 * differences on stderr; every rank gets the number of differing bytes (a length
 * difference counts), -1 when one cannot be read. Collective. */
static inline long long mt_compare_files(int rank, const char *path_a, const char *path_b)
{
    long long diff = 0;
    if (rank == 0) {
        FILE *a = fopen(path_a, "rb"), *b = fopen(path_b, "rb");
        int ca, cb;
        if (!a || !b)
            diff = -1;
        while (a && b && diff >= 0) {
            ca = getc(a), cb = getc(b);
            if (ca != cb && diff++ < 4)
                fprintf(stderr, "  byte %ld: agx %d, reference %d\n", ftell(a) - 1, ca, cb);
            if (ca == EOF || cb == EOF)
                break;
        }
        if (a)
            fclose(a);
        if (b)
            fclose(b);
    }
    MPI_Bcast(&diff, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
    return diff;
}

/* A check every rank makes: it passes when it holds on all ranks (of comm, for
 * CHECK_ON); the failing ranks say why. Needs `int rank, passed, failed` in the test. */
#define CHECK(cond, ...) CHECK_ON(MPI_COMM_WORLD, cond, __VA_ARGS__)
#define CHECK_ON(comm, cond, ...)                                                          \
    do {                                                                                   \
        int ok_ = (cond), all_;                                                            \
        MPI_Allreduce(&ok_, &all_, 1, MPI_INT, MPI_MIN, (comm));                           \
        if (all_)                                                                          \
            passed++;                                                                      \
        else {                                                                             \
            failed++;                                                                      \
            if (!ok_) {                                                                    \
                fprintf(stderr, "FAIL rank %d %s:%d: %s: ", rank, __FILE__, __LINE__, #cond); \
                fprintf(stderr, __VA_ARGS__);                                              \
                fprintf(stderr, "\n");                                                     \
            }                                                                              \
        }                                                                                  \
    } while (0)

/* Bytes a buffer of `elems` elements of t needs from its start. */
static inline size_t mt_span(MPI_Datatype t, long long elems)
{
    MPI_Aint lb, ext, tlb, text;
    MPI_Type_get_extent(t, &lb, &ext);
    MPI_Type_get_true_extent(t, &tlb, &text);
    return elems > 0 ? (size_t)((elems - 1) * ext + tlb + text) : 0;
}

/* Displacements placing n blocks of counts[] in a random order with random gaps (0..3
 * elements, and 0..2 before the first); returns the end of the layout in elements. */
static inline long long mt_shuffled_displs(int n, const int *counts, int *displs, unsigned *rs)
{
    int *order = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
    long long off = mt_rand(rs) % 3, end = 0;
    for (int i = 0; i < n; i++)
        order[i] = i;
    for (int i = n - 1; i > 0; i--) {
        int j = (int)(mt_rand(rs) % (unsigned)(i + 1)), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    for (int k = 0; k < n; k++) {
        displs[order[k]] = (int)off;
        off += counts[order[k]] + mt_rand(rs) % 4;
    }
    for (int i = 0; i < n; i++)
        if (displs[i] + counts[i] > end)
            end = displs[i] + counts[i];
    free(order);
    return end;
}

/* The datatype cases of the differential tests: send type, send count multiplier and
 * receive type. Order matters to test_inter, which runs only the first two on its larger
 * group pairs. Free the derived types with mt_dtcases_free. */
typedef struct {
    const char *name;
    MPI_Datatype stype; /* sendcount = count * smult */
    int smult;
    MPI_Datatype rtype; /* count elements per block */
} mt_dtcase;
#define MT_NDTCASES 8

/* The cases: the common types first (test_inter runs only the first two on its larger
 * group pairs), a strided vector with holes, 4 INT sent as one contiguous-of-4, and
 * (issue 34) the padded pair MPI_DOUBLE_INT (12 data bytes in 16), contiguous(2, INT)
 * sent and MPI_2INT received (other types, equal signatures), and MPI_SHORT_INT resized
 * to a negative lower bound and a larger extent (lb -4, extent 12: data at 0-1 and 4-7). */
static inline void mt_dtcases(mt_dtcase *dts)
{
    MPI_Datatype vec, int4, int2, rs;
    MPI_Type_vector(3, 1, 2, MPI_INT, &vec); /* 3 ints with holes, extent 5 ints */
    MPI_Type_commit(&vec);
    MPI_Type_contiguous(4, MPI_INT, &int4);
    MPI_Type_commit(&int4);
    MPI_Type_contiguous(2, MPI_INT, &int2);
    MPI_Type_commit(&int2);
    MPI_Type_create_resized(MPI_SHORT_INT, -4, 12, &rs);
    MPI_Type_commit(&rs);
    mt_dtcase all[MT_NDTCASES] = {
        {"MPI_INT", MPI_INT, 1, MPI_INT},
        {"vector(3,1,2,INT)", vec, 1, vec},
        {"MPI_BYTE", MPI_BYTE, 1, MPI_BYTE},
        {"MPI_DOUBLE", MPI_DOUBLE, 1, MPI_DOUBLE},
        {"4xINT->contig(4,INT)", MPI_INT, 4, int4},
        {"MPI_DOUBLE_INT", MPI_DOUBLE_INT, 1, MPI_DOUBLE_INT},
        {"contig(2,INT)->MPI_2INT", int2, 1, MPI_2INT},
        {"resized(SHORT_INT,lb=-4,ext=12)", rs, 1, rs},
    };
    for (int i = 0; i < MT_NDTCASES; i++)
        dts[i] = all[i];
}

static inline void mt_dtcases_free(mt_dtcase *dts)
{
    MPI_Type_free(&dts[1].rtype);
    MPI_Type_free(&dts[4].rtype);
    MPI_Type_free(&dts[6].stype);
    MPI_Type_free(&dts[7].rtype);
}

/* Regular displacements i * count; returns the end in elements. */
static inline long long mt_regular_displs(int n, const int *counts, int *displs)
{
    for (int i = 0; i < n; i++)
        displs[i] = i * counts[0];
    return (long long)n * counts[0];
}
/* World rank 0's stderr (AGX_VERBOSE's lines) into a temporary file the test reads back
 * (mt_log.f, from any offset), until mt_log_end puts stderr back and removes the file.
 * Other ranks: nothing (f stays NULL). */
typedef struct {
    char path[64];
    int fd, saved;
    FILE *f;
} mt_log;

static inline void mt_log_start(mt_log *l, int rank, const char *name)
{
    memset(l, 0, sizeof *l);
    l->fd = l->saved = -1;
    if (rank)
        return;
    snprintf(l->path, sizeof l->path, "/tmp/agx_%s_log_XXXXXX", name);
    fflush(stdout);
    fflush(stderr);
    if ((l->fd = mkstemp(l->path)) >= 0)
        l->saved = dup(2), dup2(l->fd, 2), l->f = fopen(l->path, "r");
}

static inline void mt_log_end(mt_log *l)
{
    if (l->fd < 0)
        return;
    fflush(stderr);
    dup2(l->saved, 2), close(l->saved), close(l->fd), unlink(l->path);
    if (l->f)
        fclose(l->f);
    l->fd = -1, l->f = NULL;
}
/* Where MPI gives MPI_THREAD_MULTIPLE (AGX_PROGRESS_THREAD=1 asks for it): n threads (at
 * most 8) at once, thread t running fn((void *)t) with worlds[t] its own duplicate of
 * MPI_COMM_WORLD, freed after; 1 when they ran, 0 when MPI gives less. */
static inline int mt_threads(int n, MPI_Comm *worlds, void *(*fn)(void *))
{
    int level = MPI_THREAD_SINGLE;
    pthread_t th[8];
    MPI_Query_thread(&level);
    if (level != MPI_THREAD_MULTIPLE || n > 8)
        return 0;
    for (int t = 0; t < n; t++)
        MPI_Comm_dup(MPI_COMM_WORLD, &worlds[t]);
    for (int t = 0; t < n; t++)
        pthread_create(&th[t], NULL, fn, (void *)(long)t);
    for (int t = 0; t < n; t++)
        pthread_join(th[t], NULL);
    for (int t = 0; t < n; t++)
        MPI_Comm_free(&worlds[t]);
    return 1;
}
#endif
