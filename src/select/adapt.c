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
 * final of the AGX_LEARN_FINAL fastest (each one's median; after its first half, those
 * AGX_LEARN_CUT times the fastest's have no more calls), each of rounds over its
 * candidates in turn, a turn two calls in a row, the second timed (adapt_window.c). Every
 * turn starts after a barrier, its timed call right after its first (the skew a loop of
 * the same candidate leaves), and each rank keeps its own times; at a phase's last call
 * one MPI_Allreduce (MAX, n doubles, on the private communicator) gives the slowest
 * rank's figure, a benchmark's time of a collective, the same on every rank whatever each
 * one's clock said. The library's call (native), then the default's choice, stays unless
 * another is at least AGX_LEARN_MARGIN faster. Every rank counts the same calls of a
 * class (the calls of a correct program match, and alltoallv's size is agreed), so the
 * window ends at the same call everywhere (alltoallv's agreement: agreement()). A class's
 * first AGX_ADAPT_AFTER calls run the library's call, untimed, before its window (cold()).
 * Exactness: data movement and exact reductions (integers, logicals: any order gives the
 * same bits) learn freely; other reductions (floating point) take the library's own call,
 * untimed, unless AGX_ADAPT=any.
 */
#include "adapt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* The class's entry, NULL when absent. */
static agx_learn *find(const agx_sel *sel, unsigned key)
{
    for (int i = 0; i < sel->nlearn; i++)
        if (sel->learn[i].key == key)
            return &sel->learn[i];
    return NULL;
}

/* The class's entry (made when absent), or NULL when out of memory. */
static agx_learn *entry(agx_sel *sel, unsigned key)
{
    agx_learn *found = find(sel, key);
    if (found)
        return found;
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

/* Whether the on-line choice may time alg at a's size (agx_alg.online_below). */
static int below(const agx_alg *alg, const agx_args *a)
{
    return !alg->online_below || a->msg_bytes < alg->online_below;
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
        if (idx >= 0 && !has(a, e, idx) && below(&t->algs[idx], a) && !agx_alg_violation(&t->algs[idx], a, NULL))
            e->cand[e->ncand++] = (short)idx;
    }
    for (int i = 0; !t->online && i < t->nrules && e->ncand < AGX_LEARN_CANDS - 1; i++) {
        int idx = agx_rule_alg(a->op, a->kind, i);
        if (idx >= 0 && !has(a, e, idx) && below(&t->algs[idx], a) && agx_rule_holds(&t->rules[i], a) &&
            !agx_alg_violation(&t->algs[idx], a, NULL))
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

int agx_learn_on(const agx_args *a)
{
    return a->sel->adapt > 0 && !a->request && a->kind == AGX_KIND_INTRA && a->p > 1 && a->msg_bytes >= 0;
}

/* A class's first AGX_ADAPT_AFTER calls (where it would time candidates) run the library's
 * call, untimed, and its window starts after them: a program that makes only a few calls
 * of a class (PnetCDF's integer allreduces: 11 in 2 classes through a whole E3SM-shaped
 * run) paid the window's barriers and its candidates' first calls, node-shared segments
 * among them, for nothing (docs/RESULTS.md, "A class's first calls: the library's").
 * Every rank counts the same calls of a class, so the window starts at the same call
 * everywhere. The library's call index, or -1 where it is not a class's first calls. */
static int cold(const agx_args *a, const agx_learn *e)
{
    int native = agx_rule_alg(a->op, a->kind, -1);
    if ((e && (e->state != AGX_LEARN_NEW || e->cold >= a->sel->adapt_after)) || a->sel->adapt_after <= 0 ||
        agx_learn_pair(a) || agx_learn_inexact(a) || native < 0 || agx_alg_violation(agx_call_alg(a, native), a, NULL))
        return -1;
    return native;
}

int agx_learn_cold(const agx_args *a)
{
    return agx_learn_on(a) && cold(a, find(a->sel, key_of(a))) >= 0;
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
    int lib = cold(a, e);
    if (lib >= 0) { /* counted in agx_learn_run; a->learn: no repeat memo of it */
        a->learn = e;
        return lib;
    }
    if (e->state == AGX_LEARN_NEW) {
        candidates(a, e, chosen);
        e->state = e->ncand > 1 ? AGX_LEARN_RUNNING : AGX_LEARN_DONE;
        e->winner = 0;
        e->lo = e->hi = a->msg_bytes;
        e->p = a->p;
        agx_learn_phase(e, e->ncand > AGX_LEARN_FINAL ? PH_LOOK : PH_FINAL, NULL, e->ncand);
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
