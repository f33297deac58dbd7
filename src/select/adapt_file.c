/*
 * On-line choice of collective writes and reads (AGX_ADAPT; docs/algorithms.md "On-line
 * choice", collective writes): per file handle and direction, agx's two-phase engine
 * against the MPI library's own MPI_File_write_all (read_all), by measured time over the
 * file's first calls of each class; the bytes are the same either way. Below, "write"
 * stands for either.
 *
 * A class: the largest rank's bytes in [2^(c-1), 2^c), and its mean piece (bytes over file
 * pieces) within a power of 4. Its turns: engine, engine, library, library (the library's
 * first turn at the class's third call: a class of a call or two, as BTIO's files have,
 * has no later call that a library found faster could serve, and BTIO's files took up to
 * 1.5x as long with its turn; a run's later files of the class go on with the window);
 * where the file's ranks span more than one node with more than one rank on some node and
 * no hint set it, the engine with intra-node aggregation is a third candidate: engine,
 * engine, library, node, node, library. Once
 * each has a sample, one that took at least 4 times the fastest's time on its one sample,
 * twice on two, is out (its turns skipped; a first write of the run may pay the run's
 * first-write costs, up to 3 times a later one's); the decision when each one left has 2
 * samples, at once when one is left (a file of a few writes learns too). A sample: each rank's
 * time from the choice to the write's end, the slowest rank's (MAX) per byte of the
 * largest rank's share. The times and the votes ride on one MPI_Allreduce at the next
 * write (or at close), which every write of a learning file makes: a few microseconds
 * against writes of milliseconds. A class decided in one file starts decided in the
 * later files of the run on the same number of ranks, and one whose window a file closed
 * before it ended goes on with that window's samples in the next (a file per step, one
 * write each, decides by its fourth), when every rank of the file knows the same (one
 * more reduction, once per class and file). Where the last decided call went to the engine
 * (and nothing else is decided, nothing timed waits), the reduction rides on the engine's
 * first agreement (agx_flearn_fold, agx_flearn_gate). A handle whose last AGX_FLEARN_SETTLE
 * decided calls all had one winner other than the engine alone settles on it: its later
 * calls make no reduction (a FLASH-shaped file's 24 reads of a few KB each paid one per
 * call, 0.1-0.5 ms on a busy node). Every rank counts the same agreed winners, so every rank settles at the same call;
 * the count goes on in the next file that takes the same kept communicator
 * (agx_flearn_carry, src/io/file_comm.c), one short of settled at most: a file per step
 * makes one reduction, at its first call, where its class is decided with that winner.
 */
#include "adapt_file.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RATIO_EARLY 2.0       /* out on two samples or more, or the library on its one sample (its
                               * turn follows the engine's; its first write took 0.98-1.89x its
                               * second in the PnetCDF programs' classes, docs/RESULTS.md): at
                               * least this many times the fastest */
#define RATIO_EARLY_FIRST 4.0 /* agx's engine out on one sample (alone, or with node aggregation,
                               * whose first write makes its node's set-up): a first write may carry
                               * the run's first-write costs (BTIO's shape, 9 ranks: its first write
                               * 10-15 ms, later ones 4-5); alone, it has two samples by the
                               * library's first turn unless one was lost */
void agx_flearn_init(agx_flearn *L, int p, int reads)
{
    int m = agx_adapt_from_env();
    L->mode = m > 0 ? m : 0, L->p = p, L->nclass = 0, L->pend = L->pend_cand = -1, L->reads = reads, L->turn = 0;
    L->ncand = 2;
    L->t0 = L->dt = L->bytes = 0;
    L->last = -1, L->streak = 0, L->settled_how = NULL, L->riding = 0;
}

/* One more decided call won by w; settled after AGX_FLEARN_SETTLE in a row. */
static void streak(agx_flearn *L, int w, const char *how, MPI_Comm comm, const char *name)
{
    L->streak = w == L->last ? L->streak + 1 : 1, L->last = w;
    if (w == AGX_FLEARN_ENGINE && L->streak >= AGX_FLEARN_SETTLE) /* never settled: its choice rides */
        L->streak = AGX_FLEARN_SETTLE - 1;                         /* on its agreement (agx_flearn_fold) */
    if (L->streak < AGX_FLEARN_SETTLE)
        return;
    L->settled_how = how;
    int rank = 1;
    if (agx_env_flag("AGX_VERBOSE") && PMPI_Comm_rank(comm, &rank) == MPI_SUCCESS && !rank)
        fprintf(stderr, "agx: %s (rank 0): collective %s settled on %s after %d decided calls in a row: no "
                "agreement per call from now on (AGX_ADAPT)\n", name ? name : "a file", L->reads ? "reads" : "writes",
                agx_flearn_name(w, 1), AGX_FLEARN_SETTLE);
}

const char *agx_flearn_name(int cand, int words)
{
    static const char *const name[2][3] = {{"two_phase", "native", "two_phase_node"},
                                           {"agx's two-phase", "the library's own",
                                            "agx's two-phase with intra-node aggregation"}};
    return cand >= 0 && cand < 3 ? name[words != 0][cand] : "?";
}

/* The fastest candidate of the class once each has a sample, else -1. */
static int fastest(const agx_flearn *L, const agx_flearn_class *c)
{
    int w = 0;
    for (int i = 0; i < L->ncand; i++) {
        if (c->k[i] < 1)
            return -1;
        w = c->best[i] < c->best[w] ? i : w;
    }
    return w;
}

/* Candidate i is out of the class's window: each has a sample, and i's best took at least
 * RATIO_EARLY times the fastest's, RATIO_EARLY_FIRST while agx's engine (alone or with node
 * aggregation) has one sample (the fastest's own: never). */
static int out(const agx_flearn *L, const agx_flearn_class *c, int i)
{
    int w = fastest(L, c);
    double r = c->k[i] < 2 && i != AGX_FLEARN_LIBRARY ? RATIO_EARLY_FIRST : RATIO_EARLY;
    return w >= 0 && i != w && c->best[i] >= r * c->best[w];
}

static void decide(agx_flearn *L, agx_flearn_class *c, MPI_Comm comm, const char *name)
{
    int n = L->ncand, w = fastest(L, c);
    if (w < 0)
        return;
    int left = 0;
    for (int i = 0; i < n; i++)
        left += !out(L, c, i);
    for (int i = 0; i < n && left > 1; i++) /* each one left in: 2 samples (one left: it wins) */
        if (!out(L, c, i) && c->k[i] < 2)
            return;
    c->decided = 1, c->winner = (signed char)w;
    char note[256], times[128];
    int at = 0;
    for (int i = 0; i < n; i++)
        at += snprintf(times + at, sizeof times - (size_t)at, "%s%s %.3g", i ? ", " : "", agx_flearn_name(i, 0),
                       c->best[i] * 1e6);
    snprintf(note, sizeof note, "learned on the run: %s s per MB (the fastest of %d, %d%s%.0d)", times, c->k[0],
             c->k[1], n > 2 ? " and " : "", n > 2 ? c->k[2] : 0);
    agx_flearn_keep(L->p, L->reads, c->cls, c->winner, note);
    int rank = 1;
    if (!agx_env_flag("AGX_VERBOSE") || PMPI_Comm_rank(comm, &rank) != MPI_SUCCESS || rank)
        return;
    int bc = c->cls / 64, pc = c->cls % 64;
    fprintf(stderr, "agx: %s (rank 0): collective %s of under %lld B per rank, pieces under %lld B: %s s per MB "
            "(the fastest of each one's %s): %s from now on (AGX_ADAPT)\n", name ? name : "a file",
            L->reads ? "reads" : "writes", bc < 62 ? 1LL << bc : -1LL, pc < 31 ? 1LL << (2 * pc) : -1LL, times,
            L->reads ? "reads" : "writes", agx_flearn_name(c->winner, 1));
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
    agx_flearn_remember(L, c); /* the next file of this class goes on from here */
}

/* The class's entry in the file. A new one starts where the run's earlier files of the
 * class left it (a decided winner, or the samples and turns of a window still open: a
 * program that writes one file per step, a write or two each, finishes the window over
 * its files), or else from the rules file's row (AGX_TUNING_FILE) for the call's bytes
 * and pieces; either only when every rank knows the same (one reduction). NULL: no room
 * (the engine runs, untimed). */
static agx_flearn_class *entry(agx_flearn *L, int cls, long long bytes, long long piece, MPI_Comm comm, int *rc)
{
    for (int i = 0; i < L->nclass; i++)
        if (L->c[i].cls == cls)
            return &L->c[i];
    if (L->nclass == AGX_FLEARN_CLASSES)
        return NULL;
    agx_flearn_class m = agx_flearn_recall(L->p, cls + L->reads * AGX_FLEARN_READS);
    int w = m.decided ? m.winner : -1, ruled = w < 0 || m.decided == 2; /* 2: a rules row's, still */
    if (w < 0)
        w = agx_rules_file_io(L->reads, L->p, bytes, piece);
    if (w == AGX_FLEARN_NODE && L->ncand < 3) /* all ranks on one node, or a hint said */
        w = AGX_FLEARN_ENGINE;
    enum { NV = 8 };
    long long v[2 * NV] = {w, m.turns, m.k[0], m.k[1], m.k[2]};
    for (int i = 0; i < 3; i++)
        memcpy(&v[5 + i], &m.best[i], sizeof m.best[i]); /* a time's bits: >= 0, compared exactly */
    for (int i = 0; i < NV; i++)
        v[NV + i] = -v[i];
    if ((*rc = PMPI_Allreduce(MPI_IN_PLACE, v, 2 * NV, MPI_LONG_LONG, MPI_MAX, comm)) != MPI_SUCCESS)
        return NULL;
    int alike = 1;
    for (int i = 0; i < NV; i++)
        alike &= v[i] == -v[NV + i];
    agx_flearn_class *c = &L->c[L->nclass++];
    *c = (agx_flearn_class){.cls = cls};
    if (v[0] >= 0 && v[0] == -v[NV])
        c->decided = 1 + ruled, c->winner = (signed char)v[0]; /* ruled: alike everywhere (the file is) */
    else if (alike) { /* the window of the earlier files, alike on every rank (no rank's
                       * decided: a decided memory's winner would have been agreed above) */
        c->turns = m.turns;
        for (int i = 0; i < 3; i++)
            c->k[i] = m.k[i], c->best[i] = m.best[i];
    }
    return c;
}

/* The pick from its agreed values v: the votes, the largest rank's bytes, its mean piece,
 * the last call's time, minus whether every rank timed it, minus whether every rank
 * offers the node candidate. */
static int pick_agreed(agx_flearn *L, MPI_Comm comm, const char *name, const long long *v, int *cand, const char **how)
{
    static const signed char order[2][6] = {
        {AGX_FLEARN_ENGINE, AGX_FLEARN_ENGINE, AGX_FLEARN_LIBRARY, AGX_FLEARN_LIBRARY},
        {AGX_FLEARN_ENGINE, AGX_FLEARN_ENGINE, AGX_FLEARN_LIBRARY, AGX_FLEARN_NODE, AGX_FLEARN_NODE,
         AGX_FLEARN_LIBRARY}};
    int rc = MPI_SUCCESS;
    L->ncand = v[5] == -1 ? 3 : 2; /* offered where every rank offers it */
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
    const signed char *turn = order[L->ncand > 2];
    int nt = L->ncand > 2 ? 6 : 4;
    for (int s = 0; s < nt && out(L, c, turn[c->turns % nt]); s++) /* a candidate out: its turns skipped */
        c->turns++;
    *cand = turn[c->turns % nt];
    L->streak = 0; /* a class still learning: not settled yet */
    *how = *cand == AGX_FLEARN_LIBRARY ? "AGX_ADAPT: timed against agx's" : NULL;
    L->pend_cand = *cand, L->pend = -2 - (int)(c - L->c), L->turn = 1; /* running: done() makes it a sample */
    L->bytes = (double)v[1];
    L->t0 = PMPI_Wtime();
    return MPI_SUCCESS;
}

int agx_flearn_pick(agx_flearn *L, MPI_Comm comm, const char *name, int vote, long long nbytes, long long pieces,
                    int *cand, const char **how)
{
    *cand = AGX_FLEARN_ENGINE, *how = NULL;
    L->turn = 0;
    if (!L->mode)
        return MPI_SUCCESS;
    if (L->streak >= AGX_FLEARN_SETTLE) { /* settled */
        *cand = L->last, *how = L->settled_how;
        return MPI_SUCCESS;
    }
    int timed = L->pend >= 0, rc;
    long long v[6] = {vote, nbytes, pieces > 0 ? nbytes / pieces : 0, timed ? (long long)(L->dt * 1e9) : -1,
                      -timed, -(L->ncand > 2)};
    if ((rc = PMPI_Allreduce(MPI_IN_PLACE, v, 6, MPI_LONG_LONG, MPI_MAX, comm)) != MPI_SUCCESS)
        return rc;
    return pick_agreed(L, comm, name, v, cand, how);
}

int agx_flearn_fold(const agx_flearn *L)
{
    int fresh = L->last == -1 && !L->nclass; /* a handle's first call: the engine's turn comes first */
    if (!L->mode || L->pend >= 0 || !(fresh || (L->streak >= 1 && L->last == AGX_FLEARN_ENGINE)))
        return 0;
    for (int i = 0; i < L->nclass; i++)
        if (L->c[i].decided && L->c[i].winner != AGX_FLEARN_ENGINE)
            return 0;
    return 1;
}

int agx_flearn_gate(agx_flearn *L, MPI_Comm comm, const char *name, const long long *v, double t_call, int *go,
                    int *cand, const char **how)
{
    double g0 = PMPI_Wtime();
    long long all[6] = {0, v[0], v[1], -1, 0, v[2]}; /* no vote (the engine's agreement had
                                                      * none), nothing timed (agx_flearn_fold) */
    *cand = AGX_FLEARN_ENGINE, *how = NULL;
    L->turn = 0;
    int rc = pick_agreed(L, comm, name, all, cand, how);
    int turn = L->pend < -1; /* a learning turn: the engine's goes on, timed from the call's start
                              * less this look-up (the pick's reduction is not timed either) */
    *go = rc == MPI_SUCCESS && *cand == AGX_FLEARN_ENGINE;
    if (*go && turn)
        L->t0 = t_call + (PMPI_Wtime() - g0);
    int rank = 1, first = *go && !turn && !L->riding;
    L->riding |= first;
    if (first && agx_env_flag("AGX_VERBOSE") && PMPI_Comm_rank(comm, &rank) == MPI_SUCCESS && !rank)
        fprintf(stderr, "agx: %s (rank 0): collective %s: the choice rides on agx's engine's first agreement from "
                "now on, no reduction of its own (AGX_ADAPT)\n", name ? name : "a file", L->reads ? "reads" : "writes");
    return rc;
}

/* AGX_TEST_FLEARN_SKEW=RANK:CANDS:FACTOR (tests only): that rank's times of the candidates
 * CANDS (digits: 0 the engine, 1 the library, 2 the engine with node aggregation) are
 * multiplied by FACTOR, a clock that disagrees. */
static double skew(int cand)
{
    static int rank = -2;
    static char which[8];
    static double factor;
    const char *e = getenv("AGX_TEST_FLEARN_SKEW");
    if (rank == -2 && (!e || sscanf(e, "%d:%7[0-9]:%lf", &rank, which, &factor) != 3))
        rank = -1;
    int me = -1;
    if (rank >= 0 && strchr(which, '0' + cand))
        PMPI_Comm_rank(MPI_COMM_WORLD, &me);
    return me == rank && rank >= 0 ? factor : 1.0;
}

/* AGX_TEST_FLEARN_TIMES=T0,T1[,T2] (tests only): every rank's time of each write of
 * candidate i is Ti seconds, whatever the clock says (a window whose turns are known). */
static double fixed(int cand)
{
    static int n = -1;
    static double t[3];
    const char *e = getenv("AGX_TEST_FLEARN_TIMES");
    if (n < 0 && (n = e ? sscanf(e, "%lf,%lf,%lf", &t[0], &t[1], &t[2]) : 0) < 0)
        n = 0; /* set but empty */
    return cand >= 0 && cand < n ? t[cand] : -1;
}

void agx_flearn_skip(agx_flearn *L, double seconds)
{
    if (L->mode && L->pend < -1) /* a call running */
        L->t0 += seconds;
}

void agx_flearn_done(agx_flearn *L, int valid, int own, MPI_Comm comm, const char *name)
{
    if (!L->mode || L->pend >= -1)
        return;
    int i = -2 - L->pend;
    agx_flearn_class *c = &L->c[i];
    L->pend = -1;
    c->turns++; /* on every rank, as the call ran (a call the library failed on one
                 * rank only: its sample is dropped at the next reduction, its turn
                 * is not, so the ranks' next turns stay alike) */
    if (valid) {
        double t = fixed(L->pend_cand);
        L->dt = (t >= 0 ? t : PMPI_Wtime() - L->t0) * skew(L->pend_cand), L->pend = i;
    }
    if (!own || L->pend_cand == AGX_FLEARN_LIBRARY || c->decided) /* own: agreed, whatever valid says */
        return;
    /* the engine's call went each rank its own (agreed): the library's can do no less */
    c->decided = 1, c->winner = AGX_FLEARN_ENGINE, L->pend = -1; /* its time: of no use now */
    streak(L, AGX_FLEARN_ENGINE, NULL, comm, name); /* a decided call, as the next ones */
    agx_flearn_keep(L->p, L->reads, c->cls, c->winner, "each rank its own requests, no exchange");
    agx_flearn_remember(L, c);
    int rank = 1;
    if (agx_env_flag("AGX_VERBOSE") && PMPI_Comm_rank(comm, &rank) == MPI_SUCCESS && !rank)
        fprintf(stderr, "agx: %s (rank 0): collective %s of this class: agx's engine from now on, untimed: each rank "
                "%s its own requests, with no exchange, where the library's call has nothing to gain (AGX_ADAPT)\n",
                name ? name : "a file", L->reads ? "reads" : "writes", L->reads ? "read" : "wrote");
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
