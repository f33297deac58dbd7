/*
 * On-line choice (AGX_ADAPT; docs/algorithms.md "On-line choice"): a communicator's calls
 * of one shape class measure their candidates on the run, the ranks agree on the winner
 * with one small reduction, and later calls of the class run it. STAR-MPI's idea (timing
 * the candidates of each call site over its first calls) with agx's candidates: the
 * default rule's choice, up to two runners-up (the table's next rules that hold), and the
 * MPI library's own call.
 *
 * A class: (operation, table kind, msg_bytes in [2^(c-1), 2^c), and the call's kind of
 * reduction (exact or not, commutative, proven) or alltoallv's pattern class). Its window:
 * AGX_LEARN_ROUNDS rounds over the candidates in turn (call j runs candidate j mod n), the
 * first round unmeasured (schedules, segments and scratch are made there); each rank
 * keeps its own times. At the window's last call every rank adds its per-candidate medians
 * into one MPI_Allreduce (SUM, n doubles, on the private communicator): the means over
 * the ranks decide, the same on every rank whatever each one's clock said. The default's
 * choice stays unless another is at least AGX_LEARN_MARGIN faster. Every rank counts the
 * same calls of a class (the calls of a correct program match, and alltoallv's size is
 * agreed), so the window ends at the same call everywhere.
 * Exactness: a candidate must give the bits the default's choice gives. Data movement
 * (allgather(v), alltoallv) and exact reductions (integers, logicals: any order gives the
 * same bits) learn freely; other reductions (floating point) keep the default's choice
 * unless AGX_ADAPT=any.
 */
#include "select.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AGX_LEARN_MARGIN 0.03

static int class_of(long long bytes)
{
    int c = 0;
    while (c < 62 && (1LL << c) <= bytes)
        c++;
    return c; /* bytes in [2^(c-1), 2^c) */
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
    return 1u + (unsigned)(((a->op * AGX_KIND_LAST + a->kind) * 64 + class_of(a->msg_bytes)) * 8 + sub_of(a));
}

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

static int has(const agx_learn *e, int idx)
{
    for (int i = 0; i < e->ncand; i++)
        if (e->cand[i] == idx)
            return 1;
    return 0;
}

/* The candidates for a's class: the default's choice, runners-up, native. */
static void candidates(const agx_args *a, agx_learn *e, int chosen)
{
    const agx_table *t = a->table;
    e->cand[0] = (short)chosen;
    e->ncand = 1;
    if (a->op == AGX_OP_ALLREDUCE && !a->u.ar.exact && a->sel->adapt < 2)
        return; /* another candidate would give other bits */
    for (int i = 0; i < t->nrules && e->ncand < AGX_LEARN_CANDS - 1; i++) {
        int idx = agx_rule_alg(a->op, a->kind, i);
        if (idx >= 0 && !has(e, idx) && agx_rule_holds(&t->rules[i], a) && !agx_alg_violation(&t->algs[idx], a, NULL))
            e->cand[e->ncand++] = (short)idx;
    }
    int native = agx_alg_find(a->op, a->kind, "native");
    if (native >= 0 && !has(e, native) && !agx_alg_violation(&t->algs[native], a, NULL))
        e->cand[e->ncand++] = (short)native;
}

int agx_learn_pick(agx_args *a, int chosen)
{
    agx_sel *sel = a->sel;
    a->learn = NULL;
    if (!sel->adapt || a->request || a->kind != AGX_KIND_INTRA || a->p < 2 || a->msg_bytes < 0)
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
    }
    if (e->state == AGX_LEARN_DONE)
        return e->cand[e->winner];
    int c = e->cand[e->calls % e->ncand];
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

/* AGX_TEST_LEARN_SKEW=RANK:FACTOR (tests only): that rank's times of the default's
 * choice are multiplied by FACTOR, a clock that disagrees with the others'. */
static double skew(int cand)
{
    static int rank = -2;
    static double factor;
    if (rank == -2 && (!getenv("AGX_TEST_LEARN_SKEW") ||
                       sscanf(getenv("AGX_TEST_LEARN_SKEW"), "%d:%lf", &rank, &factor) != 2))
        rank = -1;
    int me = -1;
    if (rank >= 0 && cand == 0)
        MPI_Comm_rank(MPI_COMM_WORLD, &me);
    return me == rank && rank >= 0 ? factor : 1.0;
}

/* The window's last call: every rank's medians added, the winner chosen. */
static int decide(agx_args *a, agx_learn *e)
{
    double med[AGX_LEARN_CANDS], sum[AGX_LEARN_CANDS];
    for (int i = 0; i < e->ncand; i++) {
        double v[AGX_LEARN_ROUNDS];
        int n = 0;
        for (int r = 1; r < AGX_LEARN_ROUNDS; r++)
            v[n++] = e->t[i][r];
        med[i] = median(v, n);
    }
    int rc = PMPI_Allreduce(med, sum, e->ncand, MPI_DOUBLE, MPI_SUM, a->comm);
    e->state = AGX_LEARN_DONE;
    e->winner = 0;
    if (rc != MPI_SUCCESS)
        return rc;
    for (int i = 0; i < e->ncand; i++) {
        e->mean[i] = sum[i] / a->p;
        if (e->mean[i] < e->mean[e->winner] && e->mean[i] < e->mean[0] * (1 - AGX_LEARN_MARGIN))
            e->winner = (signed char)i;
    }
    return MPI_SUCCESS;
}

int agx_learn_run(agx_args *a)
{
    agx_learn *e = a->learn;
    int cand = e->calls % e->ncand, round = e->calls / e->ncand, timed = e->cand[cand] == agx_alg_index(a);
    double t0 = MPI_Wtime();
    int rc = a->alg->fn(a);
    double dt = MPI_Wtime() - t0;
    e->t[cand][round] = timed ? dt * skew(cand) : 1e30;
    e->window_s += dt;
    if (++e->calls < e->ncand * AGX_LEARN_ROUNDS)
        return rc;
    int rc2 = decide(a, e);
    agx_learn_report(a, e);
    return rc != MPI_SUCCESS ? rc : rc2;
}
