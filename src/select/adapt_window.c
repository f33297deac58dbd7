/*
 * The on-line choice's window (docs/algorithms.md "On-line choice"; the classes and their
 * candidates: adapt.c): its phases, each call of a window timed (agx_learn_run), and at a
 * phase's last call the one reduction that gives every rank the slowest rank's figures,
 * then the next phase's candidates or the winner (decide).
 */
#include "adapt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AGX_LEARN_MARGIN 0.03
#define AGX_LEARN_CUT 1.5 /* a first look, or the final's first half, this many times the fastest's
                           * ends a candidate's window */
#define AGX_LEARN_HALF (AGX_LEARN_ROUNDS / 2) /* the final's first half, rounds */
#define AGX_LEARN_CLEAR 2.0 /* a winner this many times faster than native: no rematch */

void agx_learn_phase(agx_learn *e, int phase, const signed char *order, int n)
{
    e->phase = (signed char)phase;
    e->nrun = (signed char)n;
    e->calls = 0;
    for (int i = 0; i < n; i++)
        e->run[i] = order ? order[i] : (signed char)i;
}

int agx_learn_rounds(const agx_learn *e)
{
    return e->phase == PH_LOOK     ? 1
         : e->phase == PH_SCREEN   ? AGX_LEARN_SCREEN - 1
         : e->phase == PH_FINAL    ? AGX_LEARN_HALF
         : e->phase == PH_FINAL2   ? AGX_LEARN_ROUNDS - AGX_LEARN_HALF
                                   : AGX_LEARN_ROUNDS; /* rematch */
}

/* The number of the phase's first round: the final's second half goes on from its first
 * (its figures are the medians of both halves' rounds). */
static int round0(const agx_learn *e)
{
    return e->phase == PH_FINAL2 ? AGX_LEARN_HALF : 0;
}

/* After the final's first half (figures already agreed: each one's mean of its 2, native's
 * best of its 2): the candidates within AGX_LEARN_CUT
 * of the fastest go on to its second half, their times moved along with them; the count of
 * them (1: that one is the winner's candidate, e->run[0]). */
static int half_cut(agx_learn *e)
{
    double best = e->mean[e->run[0]];
    for (int k = 1; k < e->nrun; k++)
        best = e->mean[e->run[k]] < best ? e->mean[e->run[k]] : best;
    signed char keep[AGX_LEARN_CANDS];
    int n = 0;
    for (int k = 0; k < e->nrun; k++) {
        if (e->mean[e->run[k]] > AGX_LEARN_CUT * best)
            continue; /* far slower over half the final: no more calls */
        for (int r = 0; r < AGX_LEARN_HALF; r++) /* n <= k: moved down, never over a row still to move */
            e->t[n][r] = e->t[k][r], e->ta[n * AGX_LEARN_ROUNDS + r] = e->ta[k * AGX_LEARN_ROUNDS + r];
        keep[n++] = e->run[k];
    }
    if (n > 1)
        agx_learn_phase(e, PH_FINAL2, keep, n);
    else
        e->run[0] = keep[0], e->nrun = 1;
    return n;
}

static double median(double *v, int n)
{
    for (int i = 1; i < n; i++) /* insertion sort: n is the rounds */
        for (int j = i; j > 0 && v[j] < v[j - 1]; j--) {
            double x = v[j];
            v[j] = v[j - 1], v[j - 1] = x;
        }
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* AGX_TEST_LEARN_SKEW=RANK:FACTOR[:NAME[:flip|look]] (tests only): that rank's times of
 * the default's choice (with NAME: of every candidate but the algorithm NAME) are multiplied
 * by FACTOR, a clock that disagrees with the others' (native's best first call too); with
 * flip, in a rematch those of NAME alone are; with look, at the first look those of NAME
 * alone are (a descheduled call: not its best first call). */
static double skew(const agx_args *a, int alg, int cand, int phase)
{
    static int rank = -2, flip;
    static double factor;
    static char name[32], how[8];
    if (rank == -2 && (!getenv("AGX_TEST_LEARN_SKEW") ||
                       sscanf(getenv("AGX_TEST_LEARN_SKEW"), "%d:%lf:%31[^:]:%7s", &rank, &factor, name, how) < 2))
        rank = -1;
    flip = (!strcmp(how, "flip") && phase == PH_REMATCH) || (!strcmp(how, "look") && phase == PH_LOOK);
    int me = -1, other = name[0] && strcmp(agx_call_alg(a, alg)->name, name) != 0;
    if (rank >= 0 && (name[0] ? other != flip : cand == 0))
        MPI_Comm_rank(MPI_COMM_WORLD, &me);
    return me == rank && rank >= 0 ? factor : 1.0;
}

/* AGX_LEARN_CLEAR, or AGX_TEST_LEARN_CLEAR=X (tests only, the same on every rank). */
static double clear(void)
{
    static double x = -1;
    if (x < 0)
        x = getenv("AGX_TEST_LEARN_CLEAR") ? atof(getenv("AGX_TEST_LEARN_CLEAR")) : AGX_LEARN_CLEAR;
    return x;
}

/* The agreement a timed alltoallv call charges agx's candidates, which native skips once
 * the communicator settles on it (api_alltoallv.c): each rank's median agreement time, the
 * most over the ranks, as every figure of the reduction (the least, the agreement's bare
 * latency, was 0.5-0.75 us on 4 ranks of this VM where the agreement added 9-24 us to a
 * call); s; AGX_TEST_LEARN_AGREE=S (tests only): S on every rank, where one was measured. */
static float agreement(const agx_args *a)
{
    static double test = -2;
    if (test == -2)
        test = getenv("AGX_TEST_LEARN_AGREE") ? atof(getenv("AGX_TEST_LEARN_AGREE")) : -1;
    if (a->op != AGX_OP_ALLTOALLV || a->u.a2a.agree_s <= 0)
        return 0.0f;
    return (float)(test >= 0 ? test : a->u.a2a.agree_s);
}

/* The phase's last call: every rank's figures (the first look's one time, the screening's
 * best, the final's median), their maximum over the ranks (the screening's: the better of
 * it and the first look's), then the next phase's candidates or the winner, the same on
 * every rank whatever each one's clock said. */
static int decide(agx_args *a, agx_learn *e)
{
    double med[AGX_LEARN_CANDS + 1], worst[AGX_LEARN_CANDS + 1], ta[AGX_LEARN_CANDS * AGX_LEARN_ROUNDS];
    int nta = 0, native = agx_rule_alg(a->op, a->kind, -1);
    for (int k = 0; k < e->nrun; k++) {
        double v[AGX_LEARN_ROUNDS];
        int n = 0;
        for (int r = 0; r < round0(e) + agx_learn_rounds(e); r++) {
            v[n++] = e->t[k][r];
            ta[nta++] = e->ta[k * AGX_LEARN_ROUNDS + r];
        }
        double m = median(v, n); /* sorts v */
        int lib = e->cand[e->run[k]] == native;
        /* native's at the first look: the better of its one call and its best of the class's
         * first calls (but the first); at the final's half: its best of 2. One call
         * descheduled on a busy node must not end the library's window. */
        double cold = lib && e->phase == PH_LOOK ? e->cold_s * skew(a, e->cand[e->run[k]], e->run[k], PH_SCREEN) : 0;
        if (cold > 0 && cold < v[0]) /* cold: as the window's clock reads */
            v[0] = cold;
        med[k] = e->phase > PH_FINAL || (e->phase == PH_FINAL && !lib) ? m : v[0];
    }
    med[e->nrun] = median(ta, nta); /* the agreement's: the slowest rank's too */
    int rc = PMPI_Allreduce(med, worst, e->nrun + 1, MPI_DOUBLE, MPI_MAX, a->comm);
    if (rc != MPI_SUCCESS) {
        e->state = AGX_LEARN_DONE, e->winner = 0;
        return rc;
    }
    for (int k = 0; k < e->nrun; k++) { /* the slowest rank's: when the call is done everywhere */
        double *m = &e->mean[e->run[k]];
        if (e->cand[e->run[k]] != native)
            worst[k] += worst[e->nrun]; /* charged the agreement that native, settled, skips */
        *m = e->phase == PH_SCREEN && *m < worst[k] ? *m : worst[k];
    }
    if (e->phase < PH_FINAL) {
        signed char order[AGX_LEARN_CANDS];
        int n = e->nrun;
        for (int k = 0; k < n; k++)
            order[k] = e->run[k];
        for (int i = 1; i < n; i++) /* insertion sort by mean, stable */
            for (int j = i; j > 0 && e->mean[order[j]] < e->mean[order[j - 1]]; j--) {
                signed char x = order[j];
                order[j] = order[j - 1], order[j - 1] = x;
            }
        while (e->phase == PH_LOOK && n > 1 && e->mean[order[n - 1]] > AGX_LEARN_CUT * e->mean[order[0]])
            n--; /* far slower at its first look: no more calls */
        if (n > 1) {
            int next = e->phase == PH_LOOK && n > AGX_LEARN_FINAL ? PH_SCREEN : PH_FINAL;
            agx_learn_phase(e, next, order, next == PH_FINAL && n > AGX_LEARN_FINAL ? AGX_LEARN_FINAL : n);
            return MPI_SUCCESS;
        }
        e->run[0] = order[0], e->nrun = 1; /* the one left wins */
    } else if (e->phase == PH_FINAL && half_cut(e) > 1) {
        return MPI_SUCCESS;
    }
    int best = e->run[0], lib = -1, has_default = 0;
    for (int k = 0; k < e->nrun; k++) {
        best = e->mean[e->run[k]] < e->mean[best] ? e->run[k] : best;
        has_default |= e->run[k] == 0;
        lib = e->cand[e->run[k]] == native ? e->run[k] : lib;
    }
    /* the library's call, then the default's choice, stays unless another is
     * AGX_LEARN_MARGIN faster: a tie is the library's */
    if (lib >= 0 && e->mean[best] >= e->mean[lib] * (1 - AGX_LEARN_MARGIN))
        best = lib;
    else if (has_default && e->mean[best] >= e->mean[0] * (1 - AGX_LEARN_MARGIN))
        best = 0;
    int nat = -1;
    for (int k = 0; k < e->ncand; k++)
        nat = e->cand[k] == native ? k : nat;
    /* beat the library again, or lose; not where it won by more than AGX_LEARN_CLEAR (the
     * noise bursts that crowned a kernel on this VM made the library's figure 1.5-1.9x the
     * winner's; a rematch of allreduce's 2-3x winners at 256 KiB cost 1.5% of 1000 calls) */
    if (e->phase != PH_REMATCH && nat >= 0 && best != nat && e->mean[nat] < clear() * e->mean[best]) {
        signed char pair[2] = {(signed char)best, (signed char)nat};
        agx_learn_phase(e, PH_REMATCH, pair, 2);
        return MPI_SUCCESS;
    }
    e->winner = (signed char)best;
    e->state = AGX_LEARN_DONE;
    return MPI_SUCCESS;
}

int agx_learn_run(agx_args *a)
{
    agx_learn *e = a->learn;
    if (e->state == AGX_LEARN_NEW) { /* one of the class's first calls (cold) */
        double t0 = PMPI_Wtime();
        int rc = a->alg->fn(a);
        double dt = PMPI_Wtime() - t0;
        e->window_s += dt;
        if (e->cold++ > 0) /* the first made the call's set-ups */
            e->cold_s = e->cold_s > 0 && e->cold_s < dt ? e->cold_s : dt;
        e->total++;
        return rc;
    }
    int turn = e->calls / AGX_LEARN_TURN, k = turn % e->nrun, round = round0(e) + turn / e->nrun;
    int last = e->calls % AGX_LEARN_TURN == AGX_LEARN_TURN - 1, timed = e->cand[e->run[k]] == agx_alg_index(a);
    /* every turn starts together: its timed call holds the skew its first call, the same
     * candidate, left, as in a program's loop, not another candidate's nor a barrier's */
    int rb = e->calls % AGX_LEARN_TURN ? MPI_SUCCESS : PMPI_Barrier(a->comm);
    if (rb != MPI_SUCCESS) {
        e->state = AGX_LEARN_DONE, e->winner = 0;
        return rb;
    }
    double t0 = PMPI_Wtime();
    int rc = a->alg->fn(a);
    double dt = PMPI_Wtime() - t0;
    if (last) {
        e->t[k][round] = timed ? dt * skew(a, e->cand[e->run[k]], e->run[k], e->phase) : 1e30;
        e->ta[k * AGX_LEARN_ROUNDS + round] = agreement(a);
    }
    e->window_s += dt;
    e->total++;
    if (++e->calls < e->nrun * agx_learn_rounds(e) * AGX_LEARN_TURN)
        return rc;
    int rc2 = decide(a, e);
    if (e->state == AGX_LEARN_DONE)
        agx_learn_report(a, e);
    return rc != MPI_SUCCESS ? rc : rc2;
}

