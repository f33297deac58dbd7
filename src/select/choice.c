/*
 * Each communicator's choice state (agx_sel), kept in its context's AGX_SLOT_SELECT: the
 * choices forced on it (agx_comm_set_algorithm), what the environment says (the
 * AGX_<OP>_ALGORITHM names and size-ranged forms resolved to table indices, AGX_FALLBACK,
 * every algorithm's parameter variable), the rules file's verdict and the last choice.
 * Everything is read and resolved here, once, when the state is made at the
 * communicator's first call; the selection (select.c) then compares indices only.
 */
#include "select.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static void sel_free(void *p)
{
    agx_sel *sel = p;
    for (int op = 0; op < AGX_OP_LAST; op++) {
        free(sel->env_bad[op]);
        agx_env_rules_free(sel->env_rules[op], sel->env_n[op]);
    }
    free(sel->rules_bad);
    free(sel->learn);
    free(sel);
}

/* The AGX_FALLBACK policy; -1 for a value that is none of the three (reported by the
 * first collective call, as an unknown algorithm name is). */
static int fallback_from_env(agx_sel *sel)
{
    const char *s = getenv("AGX_FALLBACK");
    snprintf(sel->fallback_text, sizeof sel->fallback_text, "%s", s ? s : "");
    if (!s || !*s || !strcasecmp(s, "warn"))
        return AGX_FALLBACK_WARN;
    if (!strcasecmp(s, "error"))
        return AGX_FALLBACK_ERROR;
    if (!strcasecmp(s, "silent"))
        return AGX_FALLBACK_SILENT;
    return -1;
}

/* Every parameter variable of every algorithm the communicator may run. */
static void params_from_env(agx_sel *sel)
{
    const char *env[256];
    int nenv = agx_env_list(env, 256);
    for (int op = 0; op < AGX_OP_LAST; op++)
        for (int k = 0; k < AGX_KIND_LAST; k++) {
            const agx_table *t = agx_table_of((agx_op)op, (agx_kind)k);
            for (int i = 0; t && i < t->n && i < AGX_MAX_ALGS; i++)
                for (int j = 0; j < AGX_MAX_PARAMS && t->algs[i].params[j].name; j++) {
                    const agx_param *pm = &t->algs[i].params[j];
                    long long v;
                    int got = agx_env_parse_int(agx_env_in(env, nenv, pm->env), pm->min, pm->max, &v);
                    sel->pset[op][k][i][j] = got == 0 ? 1 : got < 0 ? -1 : 0;
                    sel->pval[op][k][i][j] = got == 0 ? (int)v : 0;
                }
        }
}

/* The environment's AGX_<OP>_ALGORITHM: one name (forced) or a size-ranged list. */
static int choices_from_env(agx_ctx *ctx, agx_sel *sel)
{
    for (int op = 0; op < AGX_OP_LAST; op++) {
        const char *e = getenv(agx_op_get((agx_op)op)->env);
        if (!e || !*e || !strcasecmp(e, "auto"))
            continue;
        /* the environment speaks to every communicator: a name of the other kind's table
         * leaves this one to its default; only a name no table has is an error */
        agx_rule *r;
        int n, rc;
        if ((rc = agx_env_rules(ctx, (agx_op)op, e, &r, &n, &sel->env_bad[op])) != MPI_SUCCESS)
            return rc;
        if (n == 1 && r[0].bytes.lo == 0 && r[0].bytes.end == 0) { /* one name: forced */
            for (int k = 0; k < AGX_KIND_LAST; k++)
                sel->env_forced[k][op] = r[0].kidx[k];
            agx_env_rules_free(r, n);
        } else {
            sel->env_rules[op] = r;
            sel->env_n[op] = n;
        }
    }
    return MPI_SUCCESS;
}

int agx_sel_get(agx_ctx *ctx, agx_sel **out)
{
    agx_sel *sel = agx_ctx_slot(ctx, AGX_SLOT_SELECT);
    if (sel) {
        *out = sel;
        return MPI_SUCCESS;
    }
    if ((sel = ctx->carried.p)) { /* a kept context's, made under the same environment */
        ctx->carried.p = NULL, ctx->carried.release = NULL;
        for (int op = 0; op < AGX_OP_LAST; op++) { /* what a program set on the freed communicator */
            sel->last[op] = -1, sel->last_kind[op] = AGX_KIND_INTRA;
            for (int k = 0; k < AGX_KIND_LAST; k++)
                sel->forced[k][op] = -1, sel->warned[k][op] = 0;
        }
        memset(sel->file_memo, 0, sizeof sel->file_memo);
        sel->gen++, sel->nvseen = 0;
        agx_ctx_attach(ctx, AGX_SLOT_SELECT, sel, sel_free);
        *out = sel;
        return MPI_SUCCESS;
    }
    if (!(sel = calloc(1, sizeof *sel)))
        return agx_error(MPI_ERR_NO_MEM, "out of memory for a communicator's choice state");
    for (int op = 0; op < AGX_OP_LAST; op++) {
        sel->last[op] = -1;
        for (int k = 0; k < AGX_KIND_LAST; k++)
            sel->forced[k][op] = sel->env_forced[k][op] = -1;
    }
    sel->fallback = fallback_from_env(sel);
    sel->adapt = agx_adapt_from_env();
    sel->adapt_after = agx_adapt_after_from_env();
    params_from_env(sel);
    int rc = choices_from_env(ctx, sel);
    if (rc != MPI_SUCCESS) {
        sel_free(sel);
        return rc;
    }
    agx_ctx_attach(ctx, AGX_SLOT_SELECT, sel, sel_free);
    *out = sel;
    return MPI_SUCCESS;
}

int agx_sel_take(agx_ctx *ctx, agx_sel *sel)
{
    agx_sel *old = ctx->carried.p;
    if (!old)
        return -1;
    /* agreed state of the same ranks: the learned classes, the rules file's agreement; sel
     * keeps what the program set on this communicator (agx_comm_set_algorithm) */
    agx_learn *l = sel->learn;
    int n = sel->nlearn, cap = sel->caplearn;
    sel->learn = old->learn, sel->nlearn = old->nlearn, sel->caplearn = old->caplearn;
    old->learn = l, old->nlearn = n, old->caplearn = cap;
    char *bad = sel->rules_bad;
    sel->rules_agreed = old->rules_agreed, sel->rules_on = old->rules_on, sel->rules_bad = old->rules_bad;
    old->rules_bad = bad;
    ctx->carried.release(old);
    ctx->carried.p = NULL, ctx->carried.release = NULL;
    return sel->nlearn;
}

int agx_sel_forced(const agx_sel *sel, agx_op op, agx_kind kind)
{
    return sel->forced[kind][op] >= 0 ? sel->forced[kind][op] : sel->env_forced[kind][op];
}

int agx_ctx_resolve(const agx_ctx *ctx, agx_op op, const char *name, int idx[AGX_KIND_LAST])
{
    /* an intra-communicator serves the intra table and, through colour splits, the inter
     * table; an inter-communicator only the inter table */
    int any = 0;
    for (int k = 0; k < AGX_KIND_LAST; k++) {
        int usable = !(ctx->kind == AGX_KIND_INTER && k == AGX_KIND_INTRA);
        idx[k] = usable ? agx_alg_find(op, (agx_kind)k, name) : -1;
        any += idx[k] >= 0;
    }
    return any;
}
