/*
 * Algorithm selection for one call, the first that speaks choosing:
 *   1. the communicator's forced choice (agx_comm_set_algorithm);
 *   2. the environment (AGX_<OP>_ALGORITHM): one name, or the first item of its
 *      size-ranged form whose range holds (bruck:0-8K,ring);
 *   3. the rules file's row for the call's shape (AGX_TUNING_FILE, rules_file.c);
 *   4. the built-in default: each table's `rules` (src/coll/<op>/<op>_table.c), the first
 *      row whose conditions hold choosing.
 * A forced algorithm (1, 2) that cannot run on this call falls back to its declared
 * fallback (or the default) under the communicator's AGX_FALLBACK policy; a rules-file
 * row that cannot run gives way to the default. docs/algorithms.md gives the rules.
 */
#include "select.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int agx_select_rule(const agx_args *a)
{
    const agx_table *t = a->table;
    for (int i = 0; i < t->nrules; i++) {
        const agx_rule *r = &t->rules[i];
        if (agx_rule_holds(r, a)) {
            int idx = agx_rule_alg(a->op, a->kind, i);
            if (idx >= 0 && (!a->request || t->algs[idx].plans) && !agx_alg_violation(&t->algs[idx], a, NULL))
                return idx;
        }
    }
    return agx_rule_alg(a->op, a->kind, -1);
}

/* AGX_VERBOSE=1: each distinct (operation, communicator, size class, choice) once, on
 * the communicator's rank 0, with why it was chosen. */
static int verbose_on(void)
{
    static int on = -1; /* once per process */
    if (on < 0)
        on = agx_env_flag("AGX_VERBOSE");
    return on;
}

static void verbose(const agx_args *a, int idx, const char *why, const char *detail)
{
    if (!verbose_on() || a->rank != 0)
        return;
    agx_ctx *ctx = a->ctx;
    agx_sel *sel = a->sel;
    int cls = 0;
    while (cls < 62 && (1LL << cls) <= a->msg_bytes)
        cls++; /* msg_bytes in [2^(cls-1), 2^cls) */
    long long key = ((((long long)a->op * AGX_KIND_LAST + a->kind) * 64 + cls) << 16) + idx;
    for (int i = 0; i < sel->nvseen; i++)
        if (sel->vseen[i] == key)
            return;
    if (sel->nvseen == (int)(sizeof sel->vseen / sizeof sel->vseen[0]))
        return; /* enough said about this communicator */
    sel->vseen[sel->nvseen++] = key;
    char name[MPI_MAX_OBJECT_NAME] = "";
    int len = 0;
    MPI_Comm_get_name(ctx->user, name, &len);
    const agx_alg *alg = agx_alg_at(a->op, a->kind, idx);
    fprintf(stderr, "agx: %s on %s%s%d ranks (%s), %lld B (class < %lld B): %s (%s%s)\n", agx_op_get(a->op)->name,
            len ? name : "a communicator", len ? ", " : " of ", a->p, a->kind == AGX_KIND_INTER ? "inter" : "intra",
            a->msg_bytes, 1LL << cls, alg ? alg->name : "?", why, detail ? detail : "");
}

/* The environment's choice for the call: its one name, else the first item of the
 * size-ranged form whose range holds and whose name this table has; -1: none. */
static int env_choice(const agx_args *a)
{
    const agx_sel *sel = a->sel;
    if (sel->env_forced[a->kind][a->op] >= 0)
        return sel->env_forced[a->kind][a->op];
    for (int i = 0; i < sel->env_n[a->op]; i++) {
        const agx_rule *r = &sel->env_rules[a->op][i];
        if (r->kidx[a->kind] >= 0 && agx_span_holds(r->bytes, a->msg_bytes))
            return r->kidx[a->kind];
    }
    return -1;
}

/* The rules file's first row that holds for the call, NULL: none. The answer depends only
 * on the size, the group and the communicator (fixed), so it is kept for the next call of
 * the same size; a call with a pattern (alltoallv) is matched afresh. */
static const agx_rule *file_row(const agx_args *a)
{
    agx_file_memo *m = &a->sel->file_memo[a->kind][a->op];
    if (m->valid && m->bytes == a->msg_bytes && m->p == a->p && !a->pattern)
        return m->row;
    int n = 0;
    const agx_rule *rows = agx_rules_file(a->op, a->kind, &n), *row = NULL;
    for (int i = 0; i < n && !row; i++)
        if (agx_rule_holds(&rows[i], a))
            row = &rows[i];
    if (!a->pattern) {
        m->bytes = a->msg_bytes, m->p = a->p, m->row = row;
        m->valid = 1;
    }
    return row;
}

/* On two ranks an allgather(v) or alltoallv is one exchange of the two ranks' blocks
 * whatever the algorithm: agx's add their own cost to it and nothing else (the fastest of
 * them 0.80-5.1x the library's time, median 1.44, over 180 shape-runs 8 B-256 KiB;
 * docs/RESULTS.md "Two ranks: the library's call"), and a window of their first looks
 * cost up to 14% of 1000 calls of 0.5 us: such a class runs native, untimed; so does an
 * allreduce under AGX_LEARN_PAIR_AR bytes that learns at all (exact, or AGX_ADAPT=any):
 * agx's took 1.0-4x the library's time up to 2 KiB, 1.2-1.6x in a loop at 2-3 KiB, and
 * the 2 KiB class's window cost 10% of 1000 calls (RESULTS "Two ranks: small allreduces",
 * "What the window costs, measured without printing"). */
#define AGX_LEARN_PAIR_AR 4096
int agx_learn_pair(const agx_args *a)
{
    if (a->p != 2)
        return 0;
    return a->op != AGX_OP_ALLREDUCE ||
           (a->msg_bytes < AGX_LEARN_PAIR_AR && (a->u.ar.exact || a->sel->adapt >= 2));
}

/* A reduction whose bits depend on the order (floating point) under AGX_ADAPT=1: no other
 * candidate may run, so none is timed; the library's own call (adapt.c, candidates). */
int agx_learn_inexact(const agx_args *a)
{
    return a->op == AGX_OP_ALLREDUCE && !a->u.ar.exact && a->sel->adapt < 2;
}

/* A call that the default decides and the on-line choice gives the library's call untimed
 * whatever the rules say (agx_learn_pair, agx_learn_inexact: a floating-point allreduce
 * under AGX_ADAPT=1, a 2-rank one under 4 KiB, any 2-rank allgather(v) or alltoallv): no
 * rule is read, so its communicator's first call makes no node map (the first
 * MPI_Comm_split_type, 47-63 us of a 2-rank first call's 170-190 here). Alike on every
 * rank of a correct call (size, type, op, environment), so the regions a later call needs
 * are made at the same call everywhere. */
static int untimed_native(const agx_args *a, int forced)
{
    const agx_sel *sel = a->sel;
    return forced < 0 && !sel->rules_on && !sel->rules_bad && agx_learn_on(a) &&
           (agx_learn_pair(a) || agx_learn_inexact(a) || agx_learn_cold(a));
}

/* The rules file's row for the call, when its algorithm can run here; else the default
 * (lazy: not read where the call takes the library's call untimed, untimed_native). */
static int file_or_default(agx_args *a, int *index, int lazy)
{
    const agx_rule *row = a->sel->rules_on ? file_row(a) : NULL;
    if (!row) {
        *index = lazy ? -1 : agx_select_rule(a);
        if (a->sel->adapt < 0)
            return agx_error(MPI_ERR_ARG, "AGX_ADAPT='%s' in the environment is none of 0, 1, any",
                             getenv("AGX_ADAPT"));
        if (a->sel->adapt > 0 && a->sel->adapt_after < 0)
            return agx_error(MPI_ERR_ARG, "AGX_ADAPT_AFTER='%s' in the environment is not a count of calls "
                             "(0 to 1000000)", getenv("AGX_ADAPT_AFTER"));
        int rule = *index;
        *index = agx_learn_pick(a, rule); /* AGX_ADAPT: the class's winner, or its window's candidate */
        /* no class entry (out of memory on this rank): the library's call all the same,
         * with no collective that the other ranks would not make */
        if (*index < 0 && (*index = agx_rule_alg(a->op, a->kind, -1)) < 0)
            *index = rule = agx_select_rule(a);
        /* the reason's tests only for the report, not on every call; of a window, its first
         * call's only: a line per candidate made the forwarding of stderr a part of the
         * window's time (its 'learned' line names them all, with their times) */
        if (verbose_on() && (!a->learn || a->learn->total == 0 ||
                             (a->learn->state != AGX_LEARN_NEW && a->learn->total == a->learn->cold)))
            verbose(a, *index,
                    a->learn && a->learn->state == AGX_LEARN_NEW
                                        ? "AGX_ADAPT: a class's first calls, the library's, untimed; then learning"
                    : a->learn          ? "learning on the run"
                    : *index == rule    ? "default rule"
                    : agx_learn_pair(a) ? "AGX_ADAPT: on 2 ranks one exchange, untimed"
                    : agx_learn_inexact(a) ? "AGX_ADAPT: a reduction whose bits depend on the order: the "
                                             "library's own, untimed (AGX_ADAPT=any times agx's)"
                                        : "AGX_ADAPT: learned on the run",
                    NULL);
        return MPI_SUCCESS;
    }
    const agx_alg *alg = agx_call_alg(a, row->kidx[a->kind]);
    const char *no = agx_alg_violation(alg, a, NULL);
    char why[512], detail[256];
    why[0] = detail[0] = '\0';
    if (verbose_on()) {
        int at = snprintf(why, sizeof why, "rules file %s:%d", agx_rules_path(), row->line);
        for (int j = 0; j < row->nparams && at > 0 && at < (int)sizeof why; j++)
            at += snprintf(why + at, sizeof why - (size_t)at, ", %s=%d", row->pname[j], row->pval[j]);
        if (no)
            snprintf(detail, sizeof detail, " chose '%s', which cannot run here: %s; the default rule runs",
                     alg->name, no);
    }
    if (!no) {
        a->rule = row;
        *index = row->kidx[a->kind];
    } else {
        *index = agx_select_rule(a);
    }
    verbose(a, *index, why, no ? detail : NULL);
    return MPI_SUCCESS;
}

int agx_select(agx_args *a, int *index)
{
    agx_ctx *ctx = a->ctx;
    agx_sel *sel = a->sel;
    agx_op op = a->op;
    agx_kind kind = a->kind;

    a->rule = NULL;
    a->learn = NULL;
    /* The regions (a collective derivation, once per communicator) at the first choice on
     * every rank: a rule that asks for them only after a size test would derive them on
     * the ranks whose sizes pass it, and leave the others (alltoallv's sizes are each
     * rank's own) waiting. */
    const agx_regions *R;
    int forced = sel->forced[kind][op] >= 0 ? sel->forced[kind][op] : env_choice(a), lazy = untimed_native(a, forced);
    if (kind == AGX_KIND_INTRA && !ctx->reg && ctx->p > 1 && !lazy)
        (void)agx_ctx_regions(ctx, &R); /* a failure: the rules that need them do not hold */
    if (sel->env_bad[op] && sel->forced[kind][op] < 0)
        return agx_error(MPI_ERR_ARG, "%s", sel->env_bad[op]);
    if (sel->fallback < 0)
        return agx_error(MPI_ERR_ARG, "AGX_FALLBACK='%s' in the environment is none of error, warn, "
                         "silent", sel->fallback_text);
    if (sel->rules_bad && forced < 0) /* the file would decide this call */
        return agx_error(MPI_ERR_ARG, "%s", sel->rules_bad);
    if (forced < 0)
        return file_or_default(a, index, lazy);
    const char *how = sel->forced[kind][op] >= 0 ? "agx_comm_set_algorithm" : agx_op_get(op)->env;
    const agx_alg *alg = agx_call_alg(a, forced);
    int told;
    const char *why = agx_alg_violation(alg, a, &told);
    if (!why) {
        *index = forced;
        verbose(a, *index, how, NULL);
        return MPI_SUCCESS;
    }
    if (sel->fallback == AGX_FALLBACK_ERROR)
        return agx_error(MPI_ERR_ARG, "%s algorithm '%s' cannot run here (%s) and AGX_FALLBACK=error",
                         agx_op_get(op)->name, alg->name, why);
    int fb = agx_fallback_of(op, kind, forced);
    if (fb < 0 || agx_alg_violation(agx_alg_at(op, kind, fb), a, NULL))
        fb = agx_select_rule(a);
    /* a restriction that was already explained once is not repeated */
    if (sel->fallback == AGX_FALLBACK_WARN && !sel->warned[kind][op] && a->rank == 0 && !told)
        fprintf(stderr, "agx: %s algorithm '%s' cannot run here (%s); using '%s'\n",
                agx_op_get(op)->name, alg->name, why, agx_alg_at(op, kind, fb)->name);
    sel->warned[kind][op] = 1;
    *index = fb;
    char detail[256];
    if (verbose_on())
        snprintf(detail, sizeof detail, " chose '%s', which cannot run here: %s; the fallback runs", alg->name, why);
    verbose(a, *index, how, detail);
    return MPI_SUCCESS;
}
