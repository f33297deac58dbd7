/*
 * On-line choice (AGX_ADAPT; docs/algorithms.md "On-line choice"): a communicator's calls
 * of one shape class measure their candidates on the run, the ranks agree on the winner
 * with one small reduction, and later calls of the class run it. STAR-MPI's idea (timing
 * the candidates of each call site over its first calls) with agx's candidates: the
 * default rule's choice, the table's on-line candidates, and the MPI library's own call.
 *
 * A class: (operation, table kind, msg_bytes in [2^(c-1), 2^c), and the call's kind of
 * reduction (exact or not, commutative, proven) or alltoallv's pattern class). Its window
 * (more than AGX_LEARN_FINAL candidates): a first look at each (one timed call), a
 * screening of those within AGX_LEARN_CUT of the fastest (each one's best time), and a
 * final of the AGX_LEARN_FINAL fastest (each one's median), each of rounds over its
 * candidates in turn, a turn two calls in a row, the second timed (phase_start). Every
 * turn starts after a barrier, its timed call right after its first (the skew a loop of
 * the same candidate leaves), and each rank keeps its own times; at a phase's last call
 * one MPI_Allreduce (MAX, n doubles, on the private communicator) gives the slowest
 * rank's figure, a benchmark's time of a collective, the same on every rank whatever each
 * one's clock said. The library's call (native), then the default's choice, stays unless
 * another is at least AGX_LEARN_MARGIN faster. Every rank counts the same calls of a
 * class (the calls of a correct program match, and alltoallv's size is agreed), so the
 * window ends at the same call everywhere (alltoallv's agreement: agreement()).
 * Exactness: data movement and exact reductions (integers, logicals: any order gives the
 * same bits) learn freely; other reductions (floating point) take the library's own call,
 * untimed, unless AGX_ADAPT=any.
 */
#include "select.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AGX_LEARN_MARGIN 0.03
#define AGX_LEARN_CUT 1.5 /* a first look this many times the fastest's ends a candidate's window */
#define AGX_LEARN_CLEAR 2.0 /* a winner this many times faster than native: no rematch */
#define AGX_LEARN_CARRY 4.0 /* this many times a near class's winner: no look (far_slower) */
#define AGX_LEARN_NEAR 3    /* size classes (factors of 2) a class's findings carry over */

int agx_size_class(long long bytes)
{
    int c = 0;
    while (c < 62 && (1LL << c) <= bytes)
        c++;
    return c;
}

/* The part of a call's shape beyond its size that can change its candidates or winner. */
static int sub_of(const agx_args *a)
{
    if (a->op == AGX_OP_ALLREDUCE)
        return (a->u.ar.exact ? 1 : 0) | (a->u.ar.commutative ? 2 : 0) | (a->u.ar.unproven ? 4 : 0);
    if (a->op == AGX_OP_ALLTOALLV && a->pattern) {
        const agx_a2a_pattern *pt = a->pattern;
        return (100 * pt->nrecv <= 50 * pt->p) | (100 * pt->smax >= 50 * pt->p) << 1 | (100 * pt->smax < 25 * pt->p) << 2;
    }
    return 0;
}

static unsigned key_of(const agx_args *a)
{
    return 1u + (unsigned)(((a->op * AGX_KIND_LAST + a->kind) * 64 + agx_size_class(a->msg_bytes)) * 8 + sub_of(a));
}
#define KEY_FAMILY(key) (((key) - 1u) / (64u * 8u)) /* a key's op * AGX_KIND_LAST + kind */

/* The class's entry (made when absent), or NULL when out of memory. */
static agx_learn *entry(agx_sel *sel, unsigned key)
{
    for (int i = 0; i < sel->nlearn; i++)
        if (sel->learn[i].key == key)
            return &sel->learn[i];
    if (sel->nlearn == sel->caplearn) {
        int cap = sel->caplearn ? 2 * sel->caplearn : 16;
        agx_learn *l = realloc(sel->learn, sizeof *l * (size_t)cap);
        if (!l)
            return NULL;
        sel->learn = l, sel->caplearn = cap;
    }
    agx_learn *e = &sel->learn[sel->nlearn++];
    memset(e, 0, sizeof *e);
    e->key = key;
    return e;
}

/* idx, or on 2 ranks the algorithm it sends the same messages as (same_on_two, one name). */
static int twin(const agx_args *a, int idx)
{
    const char *as = a->p == 2 ? a->table->algs[idx].same_on_two : NULL;
    int j = as && !strchr(as, '|') ? agx_alg_find(a->op, a->kind, as) : -1;
    return j >= 0 ? j : idx;
}

/* idx is a candidate already, or (2 ranks) one that sends the same messages is; or its
 * same_on_two is a list ("a|b|c": it sends what one of them sends, by the regions and the
 * size) and every one of them is. */
static int has(const agx_args *a, const agx_learn *e, int idx)
{
    const char *s = a->p == 2 ? a->table->algs[idx].same_on_two : NULL;
    int all = s && strchr(s, '|'), i = 0;
    for (size_t n; all && *s; s += n + (s[n] == '|')) {
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)(n = strcspn(s, "|")), s);
        int j = agx_alg_find(a->op, a->kind, name);
        all = j >= 0 && has(a, e, j);
    }
    while (i < e->ncand && twin(a, e->cand[i]) != twin(a, idx))
        i++;
    return all || i < e->ncand;
}

/* Whether the learned class nearest to key's size (same operation, kind and sub-class,
 * within AGX_LEARN_NEAR size classes, either side) that ran table index idx found it more
 * than AGX_LEARN_CARRY times that class's winner: not worth a look in this class. On 8
 * ranks of this VM the 256 KiB allreduce window spent 31 of its 37 ms on first looks at
 * candidates the 32 KiB class had found 4.8-16x slower than its winner (and found them
 * 2.8-18x slower again). Learned state is agreed, so every rank drops the same ones. */
static int far_slower(const agx_sel *sel, unsigned key, int idx)
{
    const agx_learn *near = NULL;
    int cls = (int)((key - 1u) / 8u % 64u), dnear = AGX_LEARN_NEAR + 1, at = -1;
    for (int i = 0; i < sel->nlearn; i++) {
        const agx_learn *o = &sel->learn[i];
        int d = (int)((o->key - 1u) / 8u % 64u) - cls, j = 0;
        d = d < 0 ? -d : d;
        if (o->state != AGX_LEARN_DONE || KEY_FAMILY(o->key) != KEY_FAMILY(key) || (o->key - 1u) % 8u != (key - 1u) % 8u ||
            d == 0 || d >= dnear)
            continue;
        while (j < o->ncand && o->cand[j] != idx)
            j++;
        if (j < o->ncand)
            near = o, dnear = d, at = j;
    }
    return near && near->mean[at] > AGX_LEARN_CARRY * near->mean[near->winner];
}

/* The candidates for a's class: the default's choice, the table's on-line candidates
 * (else the algorithms of its later rules) that can run this call, native; native alone
 * for a pair (agx_learn_pair) and for a reduction whose bits depend on the order (floating
 * point) under AGX_ADAPT=1: none timed, the library's own bits (the default rule's ran
 * 1.3-2.6x its time there, RESULTS "Floating-point allreduce: the library's call"). */
static void candidates(const agx_args *a, agx_learn *e, int chosen)
{
    const agx_table *t = a->table;
    int native = agx_rule_alg(a->op, a->kind, -1); /* resolved at install: no name compared per call */
    int alone = agx_learn_pair(a) || agx_learn_inexact(a);
    e->cand[0] = (short)chosen;
    e->ncand = 1;
    if (alone && native >= 0 && !agx_alg_violation(&t->algs[native], a, NULL))
        e->cand[0] = (short)native;
    if (alone)
        return;
    for (int i = 0; t->online && t->online[i] && e->ncand < AGX_LEARN_CANDS - 1; i++) {
        int idx = agx_alg_find(a->op, a->kind, t->online[i]);
        if (idx >= 0 && !has(a, e, idx) && !agx_alg_violation(&t->algs[idx], a, NULL))
            e->cand[e->ncand++] = (short)idx;
    }
    for (int i = 0; !t->online && i < t->nrules && e->ncand < AGX_LEARN_CANDS - 1; i++) {
        int idx = agx_rule_alg(a->op, a->kind, i);
        if (idx >= 0 && !has(a, e, idx) && agx_rule_holds(&t->rules[i], a) && !agx_alg_violation(&t->algs[idx], a, NULL))
            e->cand[e->ncand++] = (short)idx;
    }
    if (native >= 0 && !has(a, e, native) && !agx_alg_violation(&t->algs[native], a, NULL))
        e->cand[e->ncand++] = (short)native;
    int n = 1;
    for (int i = 1; i < e->ncand; i++) /* the default's choice and native always stay */
        if (e->cand[i] == native || !far_slower(a->sel, e->key, e->cand[i]))
            e->cand[n++] = e->cand[i];
    e->ncand = (signed char)n;
}

/* The phases: with more candidates than AGX_LEARN_FINAL, a first look at every one (one
 * round), then a screening (AGX_LEARN_SCREEN - 1 more rounds) of those within
 * AGX_LEARN_CUT of the fastest, then the final of the AGX_LEARN_FINAL fastest
 * (AGX_LEARN_ROUNDS rounds); with fewer, the final alone. A round gives each candidate in
 * turn AGX_LEARN_TURN calls in a row, the last one timed: the untimed ones make its
 * schedules, scratch and segments, and leave the buffers and the ranks as a program
 * repeating the call leaves them, not as the previous candidate did. */
enum { PH_LOOK, PH_SCREEN, PH_FINAL, PH_REMATCH };

static void phase_start(agx_learn *e, int phase, const signed char *order, int n)
{
    e->phase = (signed char)phase;
    e->nrun = (signed char)n;
    e->calls = 0;
    for (int i = 0; i < n; i++)
        e->run[i] = order ? order[i] : (signed char)i;
}

static int rounds(const agx_learn *e)
{
    return e->phase == PH_LOOK ? 1 : e->phase == PH_SCREEN ? AGX_LEARN_SCREEN - 1 : AGX_LEARN_ROUNDS; /* final, rematch */
}

int agx_learn_on(const agx_args *a)
{
    return a->sel->adapt > 0 && !a->request && a->kind == AGX_KIND_INTRA && a->p > 1 && a->msg_bytes >= 0;
}

int agx_learn_pick(agx_args *a, int chosen)
{
    agx_sel *sel = a->sel;
    a->learn = NULL;
    if (!agx_learn_on(a))
        return chosen; /* inter calls (their own agreement, an inter-communicator) keep the default's */
    agx_learn *e = entry(sel, key_of(a));
    if (!e)
        return chosen;
    if (e->state == AGX_LEARN_NEW) {
        candidates(a, e, chosen);
        e->state = e->ncand > 1 ? AGX_LEARN_RUNNING : AGX_LEARN_DONE;
        e->winner = 0;
        e->lo = e->hi = a->msg_bytes;
        e->p = a->p;
        phase_start(e, e->ncand > AGX_LEARN_FINAL ? PH_LOOK : PH_FINAL, NULL, e->ncand);
    }
    if (e->state == AGX_LEARN_DONE)
        return e->cand[e->winner];
    int c = e->cand[e->run[e->calls / AGX_LEARN_TURN % e->nrun]];
    if (agx_alg_violation(agx_call_alg(a, c), a, NULL))
        c = chosen; /* this call only: counted, not timed */
    a->learn = e;
    e->lo = a->msg_bytes < e->lo ? a->msg_bytes : e->lo;
    e->hi = a->msg_bytes > e->hi ? a->msg_bytes : e->hi;
    return c;
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

/* AGX_TEST_LEARN_SKEW=RANK:FACTOR[:NAME[:flip]] (tests only): that rank's times of the
 * default's choice (with NAME: of every candidate but the algorithm NAME) are multiplied by
 * FACTOR, a clock that disagrees with the others'; with flip, in a rematch those of NAME
 * alone are. */
static double skew(const agx_args *a, int alg, int cand, int phase)
{
    static int rank = -2, flip;
    static double factor;
    static char name[32], how[8];
    if (rank == -2 && (!getenv("AGX_TEST_LEARN_SKEW") ||
                       sscanf(getenv("AGX_TEST_LEARN_SKEW"), "%d:%lf:%31[^:]:%7s", &rank, &factor, name, how) < 2))
        rank = -1;
    flip = !strcmp(how, "flip") && phase == PH_REMATCH;
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
    int nta = 0;
    for (int k = 0; k < e->nrun; k++) {
        double v[AGX_LEARN_ROUNDS];
        int n = 0;
        for (int r = 0; r < rounds(e); r++) {
            v[n++] = e->t[k][r];
            ta[nta++] = e->ta[k * AGX_LEARN_ROUNDS + r];
        }
        double m = median(v, n); /* sorts v */
        med[k] = e->phase >= PH_FINAL ? m : v[0];
    }
    med[e->nrun] = median(ta, nta); /* the agreement's: the slowest rank's too */
    int rc = PMPI_Allreduce(med, worst, e->nrun + 1, MPI_DOUBLE, MPI_MAX, a->comm);
    if (rc != MPI_SUCCESS) {
        e->state = AGX_LEARN_DONE, e->winner = 0;
        return rc;
    }
    int native = agx_rule_alg(a->op, a->kind, -1);
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
            phase_start(e, next, order, next == PH_FINAL && n > AGX_LEARN_FINAL ? AGX_LEARN_FINAL : n);
            return MPI_SUCCESS;
        }
        e->run[0] = order[0], e->nrun = 1; /* the one left wins */
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
        phase_start(e, PH_REMATCH, pair, 2);
        return MPI_SUCCESS;
    }
    e->winner = (signed char)best;
    e->state = AGX_LEARN_DONE;
    return MPI_SUCCESS;
}

int agx_learn_run(agx_args *a)
{
    agx_learn *e = a->learn;
    int turn = e->calls / AGX_LEARN_TURN, k = turn % e->nrun, round = turn / e->nrun;
    int last = e->calls % AGX_LEARN_TURN == AGX_LEARN_TURN - 1, timed = e->cand[e->run[k]] == agx_alg_index(a);
    /* every turn starts together: its timed call holds the skew its first call, the same
     * candidate, left, as in a program's loop, not another candidate's nor a barrier's */
    int rb = e->calls % AGX_LEARN_TURN ? MPI_SUCCESS : PMPI_Barrier(a->comm);
    if (rb != MPI_SUCCESS) {
        e->state = AGX_LEARN_DONE, e->winner = 0;
        return rb;
    }
    double t0 = MPI_Wtime();
    int rc = a->alg->fn(a);
    double dt = MPI_Wtime() - t0;
    if (last) {
        e->t[k][round] = timed ? dt * skew(a, e->cand[e->run[k]], e->run[k], e->phase) : 1e30;
        e->ta[k * AGX_LEARN_ROUNDS + round] = agreement(a);
    }
    e->window_s += dt;
    e->total++;
    if (++e->calls < e->nrun * rounds(e) * AGX_LEARN_TURN)
        return rc;
    int rc2 = decide(a, e);
    if (e->state == AGX_LEARN_DONE)
        agx_learn_report(a, e);
    return rc != MPI_SUCCESS ? rc : rc2;
}

int agx_learn_settled(const agx_args *a)
{
    const agx_sel *sel = a->sel;
    int native = agx_alg_find(a->op, a->kind, "native");
    if (sel->adapt < 1 || a->ctx->check_args || a->request || a->learn || native < 0 || agx_alg_index(a) != native)
        return 0;
    unsigned family = (unsigned)(a->op * AGX_KIND_LAST + a->kind);
    for (int i = 0; i < sel->nlearn; i++) { /* every class of the operation seen here */
        const agx_learn *e = &sel->learn[i];
        if (KEY_FAMILY(e->key) == family && (e->state != AGX_LEARN_DONE || e->cand[e->winner] != native))
            return 0;
    }
    return 1;
}
