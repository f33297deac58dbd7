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
#include "agx_internal.h"

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
            int idx = agx_alg_find(a->op, a->kind, r->alg);
            if (idx >= 0 && !agx_alg_violation(&t->algs[idx], a, NULL))
                return idx;
        }
    }
    return agx_alg_find(a->op, a->kind, "native");
}

/* AGX_VERBOSE=1: each distinct (operation, communicator, size class, choice) once, on
 * the communicator's rank 0, with why it was chosen. */
static int verbose_on(void)
{
    static int on = -1;
    if (on < 0) {
        const char *e = getenv("AGX_VERBOSE");
        on = e && *e && strcmp(e, "0");
    }
    return on;
}

static void verbose(const agx_args *a, int idx, const char *why, const char *detail)
{
    if (!verbose_on() || a->rank != 0)
        return;
    agx_ctx *ctx = a->ctx;
    int cls = 0;
    while (cls < 62 && (1LL << cls) <= a->msg_bytes)
        cls++; /* msg_bytes in [2^(cls-1), 2^cls) */
    long long key = ((((long long)a->op * AGX_KIND_LAST + a->kind) * 64 + cls) << 16) + idx;
    for (int i = 0; i < ctx->nvseen; i++)
        if (ctx->vseen[i] == key)
            return;
    if (ctx->nvseen == (int)(sizeof ctx->vseen / sizeof ctx->vseen[0]))
        return; /* enough said about this communicator */
    ctx->vseen[ctx->nvseen++] = key;
    char name[MPI_MAX_OBJECT_NAME] = "";
    int len = 0;
    MPI_Comm_get_name(ctx->user, name, &len);
    const agx_alg *alg = agx_alg_at(a->op, a->kind, idx);
    fprintf(stderr, "agx: %s on %s%s%d ranks (%s), %lld B (class < %lld B): %s (%s%s)\n", agx_op_name(a->op),
            len ? name : "a communicator", len ? ", " : " of ", a->p, a->kind == AGX_KIND_INTER ? "inter" : "intra",
            a->msg_bytes, 1LL << cls, alg ? alg->name : "?", why, detail ? detail : "");
}

/* The environment's choice for the call: its one name, else the first item of the
 * size-ranged form whose range holds and whose name this table has; -1: none. */
static int env_choice(const agx_args *a)
{
    const agx_ctx *ctx = a->ctx;
    if (ctx->env_forced[a->kind][a->op] >= 0)
        return ctx->env_forced[a->kind][a->op];
    for (int i = 0; i < ctx->env_n[a->op]; i++) {
        const agx_rule *r = &ctx->env_rules[a->op][i];
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
    agx_ctx *ctx = a->ctx;
    agx_file_memo *m = &ctx->file_memo[a->kind][a->op];
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

/* The rules file's row for the call, when its algorithm can run here; else the default. */
static int file_or_default(agx_args *a, int *index)
{
    const agx_rule *row = a->ctx->rules_on ? file_row(a) : NULL;
    if (!row) {
        *index = agx_select_rule(a);
        verbose(a, *index, "default rule", NULL);
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
    agx_op op = a->op;
    agx_kind kind = a->kind;

    a->rule = NULL;
    /* The regions (a collective derivation, once per communicator) at the first choice on
     * every rank: a rule that asks for them only after a size test would derive them on
     * the ranks whose sizes pass it, and leave the others (alltoallv's sizes are each
     * rank's own) waiting. */
    const agx_regions *R;
    if (kind == AGX_KIND_INTRA && !ctx->reg && ctx->p > 1)
        (void)agx_ctx_regions(ctx, &R); /* a failure: the rules that need them do not hold */
    if (ctx->env_bad[op] && ctx->forced[kind][op] < 0)
        return agx_error(MPI_ERR_ARG, "%s", ctx->env_bad[op]);
    if (ctx->fallback_policy < 0)
        return agx_error(MPI_ERR_ARG, "AGX_FALLBACK='%s' in the environment is none of error, warn, "
                         "silent", getenv("AGX_FALLBACK") ? getenv("AGX_FALLBACK") : "");
    int forced = ctx->forced[kind][op] >= 0 ? ctx->forced[kind][op] : env_choice(a);
    if (ctx->rules_bad && forced < 0) /* the file would decide this call */
        return agx_error(MPI_ERR_ARG, "%s", ctx->rules_bad);
    if (forced < 0)
        return file_or_default(a, index);
    const char *how = ctx->forced[kind][op] >= 0 ? "agx_comm_set_algorithm" : agx_op_get(op)->env;
    const agx_alg *alg = agx_call_alg(a, forced);
    int told;
    const char *why = agx_alg_violation(alg, a, &told);
    if (!why) {
        *index = forced;
        verbose(a, *index, how, NULL);
        return MPI_SUCCESS;
    }
    if (ctx->fallback_policy == AGX_FALLBACK_ERROR)
        return agx_error(MPI_ERR_ARG, "%s algorithm '%s' cannot run here (%s) and AGX_FALLBACK=error",
                         agx_op_name(op), alg->name, why);
    int fb = alg->fallback ? agx_alg_find(op, kind, alg->fallback) : -1;
    if (fb < 0 || agx_alg_violation(agx_alg_at(op, kind, fb), a, NULL))
        fb = agx_select_rule(a);
    /* a restriction that was already explained once is not repeated */
    if (ctx->fallback_policy == AGX_FALLBACK_WARN && !ctx->warned[kind][op] && a->rank == 0 && !told)
        fprintf(stderr, "agx: %s algorithm '%s' cannot run here (%s); using '%s'\n",
                agx_op_name(op), alg->name, why, agx_alg_at(op, kind, fb)->name);
    ctx->warned[kind][op] = 1;
    *index = fb;
    char detail[256];
    if (verbose_on())
        snprintf(detail, sizeof detail, " chose '%s', which cannot run here: %s; the fallback runs", alg->name, why);
    verbose(a, *index, how, detail);
    return MPI_SUCCESS;
}

int agx_comm_set_algorithm(MPI_Comm comm, agx_op op, const char *name)
{
    agx_ctx *ctx;
    char names[512], inter_names[256];
    int rc, idx[AGX_KIND_LAST];
    if (comm == MPI_COMM_NULL)
        return agx_raise(comm, agx_error(MPI_ERR_COMM, "agx_comm_set_algorithm: MPI_COMM_NULL"));
    if (!agx_op_name(op))
        return agx_raise(comm, agx_error(MPI_ERR_ARG, "agx_comm_set_algorithm: invalid op %d", (int)op));
    if ((rc = agx_ctx_get(comm, &ctx)) != MPI_SUCCESS)
        return agx_raise(comm, rc);
    ctx->select_gen++;
    if (!name || !strcasecmp(name, "auto")) {
        for (int k = 0; k < AGX_KIND_LAST; k++)
            ctx->forced[k][op] = -1;
        return MPI_SUCCESS;
    }
    /* The name applies to every table that has it (agx_ctx_resolve). */
    if (!agx_ctx_resolve(ctx, op, name, idx)) {
        agx_alg_names(op, AGX_KIND_INTRA, names, sizeof names);
        agx_alg_names(op, AGX_KIND_INTER, inter_names, sizeof inter_names);
        if (ctx->kind == AGX_KIND_INTER)
            rc = agx_error(MPI_ERR_ARG, "unknown inter-communicator %s algorithm '%s'; valid: %s",
                           agx_op_name(op), name, inter_names);
        else
            rc = agx_error(MPI_ERR_ARG, "unknown %s algorithm '%s'; valid: %s (intergroup: %s)",
                           agx_op_name(op), name, names, inter_names);
        return agx_raise(comm, rc);
    }
    for (int k = 0; k < AGX_KIND_LAST; k++)
        if (idx[k] >= 0)
            ctx->forced[k][op] = idx[k];
    return MPI_SUCCESS;
}

int agx_comm_last_algorithm(MPI_Comm comm, agx_op op, const char **name)
{
    agx_ctx *ctx;
    int rc;
    if (comm == MPI_COMM_NULL)
        return agx_raise(comm, agx_error(MPI_ERR_COMM, "agx_comm_last_algorithm: MPI_COMM_NULL"));
    if (!agx_op_name(op) || !name)
        return agx_raise(comm, agx_error(MPI_ERR_ARG, "agx_comm_last_algorithm: invalid argument"));
    if ((rc = agx_ctx_get(comm, &ctx)) != MPI_SUCCESS)
        return agx_raise(comm, rc);
    const agx_alg *alg = agx_alg_at(op, ctx->last_kind[op], ctx->last[op]);
    *name = alg ? alg->name : "none";
    return MPI_SUCCESS;
}
