/*
 * On-line choice of collective writes and reads (AGX_ADAPT; docs/algorithms.md "On-line
 * choice", collective writes): per file handle and direction, agx's two-phase engine
 * against the MPI library's own MPI_File_write_all (read_all), by measured time over the
 * file's first calls of each class; the bytes are the same either way. Below, "write"
 * stands for either.
 *
 * A class: the largest rank's bytes in [2^(c-1), 2^c), and its mean piece (bytes over file
 * pieces) within a power of 4. Its turns: engine, library, library, engine (drift and a
 * first write's costs fall on both); the decision when each has 2 samples, or after 1 each
 * when one is twice the other (a file of a few writes learns too). A sample: each rank's
 * time from the choice to the write's end, the slowest rank's (MAX) per byte of the
 * largest rank's share. The times and the votes ride on one MPI_Allreduce at the next
 * write (or at close), which every write of a learning file makes: a few microseconds
 * against writes of milliseconds. A class decided in one file starts decided in the
 * later files of the run on the same number of ranks, when every rank of the file knows
 * it (one more reduction, once per class and file). A handle whose last AGX_FLEARN_SETTLE
 * decided calls all had one winner settles on it: its later calls make no reduction (a
 * FLASH-shaped file's 24 reads of a few KB each paid one per call, 0.1-0.5 ms on a busy
 * node). Every rank counts the same agreed winners, so every rank settles at the same call.
 */
#include "select.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define RATIO_EARLY 2.0
#define AGX_FLEARN_SETTLE 8

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct { int p, cls, winner; } mem[64]; /* the classes this process decided (a read's
                                                 * class: + AGX_FLEARN_READS) */
#define AGX_FLEARN_READS (1 << 20)
static int nmem;

static int remembered(int p, int cls)
{
    int w = -1;
    pthread_mutex_lock(&mu);
    for (int i = 0; i < nmem && w < 0; i++)
        if (mem[i].p == p && mem[i].cls == cls)
            w = mem[i].winner;
    pthread_mutex_unlock(&mu);
    return w;
}

static void remember(int p, int cls, int winner)
{
    pthread_mutex_lock(&mu);
    int i = 0;
    while (i < nmem && !(mem[i].p == p && mem[i].cls == cls))
        i++;
    if (i < 64) {
        mem[i].p = p, mem[i].cls = cls, mem[i].winner = winner;
        nmem += i == nmem;
    }
    pthread_mutex_unlock(&mu);
}

void agx_flearn_init(agx_flearn *L, int p, int reads)
{
    int m = agx_adapt_from_env();
    L->mode = m > 0 ? m : 0, L->p = p, L->nclass = 0, L->pend = L->pend_cand = -1, L->reads = reads, L->turn = 0;
    L->t0 = L->dt = L->bytes = 0;
    L->last = -1, L->streak = 0, L->settled_how = NULL;
}

/* One more decided call won by w; settled after AGX_FLEARN_SETTLE in a row. */
static void streak(agx_flearn *L, int w, const char *how, MPI_Comm comm, const char *name)
{
    L->streak = w == L->last ? L->streak + 1 : 1, L->last = w;
    if (L->streak < AGX_FLEARN_SETTLE)
        return;
    L->settled_how = how;
    int rank = 1;
    if (agx_env_flag("AGX_VERBOSE") && PMPI_Comm_rank(comm, &rank) == MPI_SUCCESS && !rank)
        fprintf(stderr, "agx: %s (rank 0): collective %s settled on %s after %d decided calls in a row: no "
                "agreement per call from now on (AGX_ADAPT)\n", name ? name : "a file", L->reads ? "reads" : "writes",
                w == AGX_FLEARN_LIBRARY ? "the library's own" : "agx's two-phase", AGX_FLEARN_SETTLE);
}

static void decide(agx_flearn *L, agx_flearn_class *c, MPI_Comm comm, const char *name)
{
    if (c->k[0] < 1 || c->k[1] < 1)
        return;
    double r = c->best[0] / c->best[1];
    if ((c->k[0] < 2 || c->k[1] < 2) && r < RATIO_EARLY && r > 1 / RATIO_EARLY)
        return;
    c->decided = 1, c->winner = c->best[1] < c->best[0] ? AGX_FLEARN_LIBRARY : AGX_FLEARN_ENGINE;
    remember(L->p, c->cls + L->reads * AGX_FLEARN_READS, c->winner);
    char note[160];
    snprintf(note, sizeof note, "learned on the run: two_phase %.3g, native %.3g s per MB (the fastest of %d and %d)",
             c->best[0] * 1e6, c->best[1] * 1e6, c->k[0], c->k[1]);
    agx_flearn_keep(L->p, L->reads, c->cls, c->winner, note);
    int rank = 1;
    if (!agx_env_flag("AGX_VERBOSE") || PMPI_Comm_rank(comm, &rank) != MPI_SUCCESS || rank)
        return;
    int bc = c->cls / 64, pc = c->cls % 64;
    fprintf(stderr,
            "agx: %s (rank 0): collective %s of under %lld B per rank, pieces under %lld B: agx's two-phase "
            "%.3g, the library's own %.3g s per MB (the fastest of %d and %d %s): %s from now on (AGX_ADAPT)\n",
            name ? name : "a file", L->reads ? "reads" : "writes", bc < 62 ? 1LL << bc : -1LL, pc < 31 ? 1LL << (2 * pc) : -1LL, c->best[0] * 1e6,
            c->best[1] * 1e6, c->k[0], c->k[1], L->reads ? "reads" : "writes", c->winner ? "the library's own" : "agx's two-phase");
}

/* The last write's sample, when every rank timed it (v: the slowest rank's ns, and minus
 * the fewest ranks that timed it). */
static void record(agx_flearn *L, const long long *v, MPI_Comm comm, const char *name)
{
    int i = L->pend, cand = L->pend_cand;
    L->pend = -1;
    if (i < 0 || v[1] != -1 || v[0] < 0)
        return;
    agx_flearn_class *c = &L->c[i];
    double t = (double)v[0] * 1e-9 / (L->bytes > 0 ? L->bytes : 1);
    c->best[cand] = c->k[cand] && c->best[cand] < t ? c->best[cand] : t;
    c->k[cand]++;
    if (!c->decided)
        decide(L, c, comm, name);
}

/* The class's entry in the file; a new one starts from what the run learned, or else
 * from the rules file's row (AGX_TUNING_FILE) for the call's bytes and pieces, when every
 * rank knows the same winner. NULL: no room (the engine runs, untimed). */
static agx_flearn_class *entry(agx_flearn *L, int cls, long long bytes, long long piece, MPI_Comm comm, int *rc)
{
    for (int i = 0; i < L->nclass; i++)
        if (L->c[i].cls == cls)
            return &L->c[i];
    if (L->nclass == AGX_FLEARN_CLASSES)
        return NULL;
    int w = remembered(L->p, cls + L->reads * AGX_FLEARN_READS), ruled = w < 0;
    if (ruled)
        w = agx_rules_file_io(L->reads, L->p, bytes, piece);
    int v[2] = {w, -w};
    if ((*rc = PMPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_INT, MPI_MAX, comm)) != MPI_SUCCESS)
        return NULL;
    agx_flearn_class *c = &L->c[L->nclass++];
    *c = (agx_flearn_class){.cls = cls};
    if (v[0] >= 0 && v[0] == -v[1])
        c->decided = 1 + ruled, c->winner = (signed char)v[0]; /* ruled: alike everywhere (the file is) */
    return c;
}

int agx_flearn_pick(agx_flearn *L, MPI_Comm comm, const char *name, int vote, long long nbytes, long long pieces,
                    int *cand, const char **how)
{
    static const signed char order[4] = {AGX_FLEARN_ENGINE, AGX_FLEARN_LIBRARY, AGX_FLEARN_LIBRARY,
                                         AGX_FLEARN_ENGINE};
    *cand = AGX_FLEARN_ENGINE, *how = NULL;
    L->turn = 0;
    if (!L->mode)
        return MPI_SUCCESS;
    if (L->streak >= AGX_FLEARN_SETTLE) { /* settled */
        *cand = L->last, *how = L->settled_how;
        return MPI_SUCCESS;
    }
    int timed = L->pend >= 0, rc = MPI_SUCCESS;
    long long v[5] = {vote, nbytes, pieces > 0 ? nbytes / pieces : 0, timed ? (long long)(L->dt * 1e9) : -1,
                      -timed};
    if ((rc = PMPI_Allreduce(MPI_IN_PLACE, v, 5, MPI_LONG_LONG, MPI_MAX, comm)) != MPI_SUCCESS)
        return rc;
    record(L, v + 3, comm, name);
    if (v[0]) {
        *cand = AGX_FLEARN_VOTED;
        return MPI_SUCCESS;
    }
    agx_flearn_class *c = entry(L, agx_size_class(v[1]) * 64 + agx_size_class(v[2]) / 2, v[1], v[2], comm, &rc);
    if (!c)
        return rc;
    if (c->decided) {
        *cand = c->winner;
        *how = c->winner != AGX_FLEARN_LIBRARY ? NULL
               : c->decided == 2 ? "AGX_TUNING_FILE: faster than agx's, by the rules file's row"
                                 : "AGX_ADAPT: faster than agx's, measured on this run";
        streak(L, c->winner, *how, comm, name);
        return MPI_SUCCESS;
    }
    *cand = order[c->turns % 4];
    L->streak = 0; /* a class still learning: not settled yet */
    *how = *cand == AGX_FLEARN_LIBRARY ? "AGX_ADAPT: timed against agx's" : NULL;
    L->pend_cand = *cand, L->pend = -2 - (int)(c - L->c), L->turn = 1; /* running: done() makes it a sample */
    L->bytes = (double)v[1];
    L->t0 = MPI_Wtime();
    return MPI_SUCCESS;
}

/* AGX_TEST_FLEARN_SKEW=RANK:CAND:FACTOR (tests only): that rank's times of candidate CAND
 * (0 the engine, 1 the library) are multiplied by FACTOR, a clock that disagrees. */
static double skew(int cand)
{
    static int rank = -2, which;
    static double factor;
    const char *e = getenv("AGX_TEST_FLEARN_SKEW");
    if (rank == -2 && (!e || sscanf(e, "%d:%d:%lf", &rank, &which, &factor) != 3))
        rank = -1;
    int me = -1;
    if (rank >= 0 && cand == which)
        PMPI_Comm_rank(MPI_COMM_WORLD, &me);
    return me == rank && rank >= 0 ? factor : 1.0;
}

void agx_flearn_skip(agx_flearn *L, double seconds)
{
    if (L->mode && L->pend < -1) /* a call running */
        L->t0 += seconds;
}

void agx_flearn_done(agx_flearn *L, int valid)
{
    if (!L->mode || L->pend >= -1)
        return;
    int i = -2 - L->pend;
    L->pend = -1;
    if (valid) {
        L->dt = (MPI_Wtime() - L->t0) * skew(L->pend_cand), L->pend = i;
        L->c[i].turns++;
    }
}

void agx_flearn_close(agx_flearn *const L[2], MPI_Comm comm, const char *name)
{
    if (!L[0]->mode || comm == MPI_COMM_NULL || (!L[0]->turn && !L[1]->turn)) /* the same mode; nothing */
        return;                                                                 /* left to time */
    long long v[4];
    for (int d = 0; d < 2; d++) {
        int timed = L[d]->pend >= 0;
        v[2 * d] = timed ? (long long)(L[d]->dt * 1e9) : -1, v[2 * d + 1] = -timed;
    }
    if (PMPI_Allreduce(MPI_IN_PLACE, v, 4, MPI_LONG_LONG, MPI_MAX, comm) == MPI_SUCCESS)
        for (int d = 0; d < 2; d++)
            record(L[d], v + 2 * d, comm, name);
}
