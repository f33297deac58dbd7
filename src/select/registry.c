/*
 * Registry look-ups over the operations' tables (src/coll/coll_table.c lists them and
 * installs them here before any call; each operation family has its own table file,
 * src/coll/<op>/<op>_table.c). At the install every name a table holds as text (its
 * default rules' algorithms, the fallbacks) is resolved to an index, so a call compares
 * no strings.
 */
#include "select.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const agx_op_desc *ops;
#define AGX_MAX_RULES 32
/* resolved at the install: the default rules' algorithms (row AGX_MAX_RULES: `native`,
 * the last resort) and each algorithm's fallback; -1 where the table has none */
static int rule_idx[AGX_OP_LAST][AGX_KIND_LAST][AGX_MAX_RULES + 1];
static int fallback_idx[AGX_OP_LAST][AGX_KIND_LAST][AGX_MAX_ALGS];

void agx_registry_install(const agx_op_desc *table)
{
    ops = table;
    for (int op = 0; op < AGX_OP_LAST; op++)
        for (int k = 0; k < AGX_KIND_LAST; k++) {
            const agx_table *t = agx_table_of((agx_op)op, (agx_kind)k);
            if (t && (t->n > AGX_MAX_ALGS || t->nrules > AGX_MAX_RULES)) /* a table outgrew them */
                fprintf(stderr, "agx: the %s %s table has %d rows and %d rules; AGX_MAX_ALGS (%d) and "
                        "AGX_MAX_RULES (%d) must grow with it\n", ops[op].name, k ? "inter" : "intra", t->n,
                        t->nrules, AGX_MAX_ALGS, AGX_MAX_RULES);
            for (int i = 0; i < AGX_MAX_RULES; i++)
                rule_idx[op][k][i] = t && i < t->nrules ? agx_alg_find((agx_op)op, (agx_kind)k, t->rules[i].alg) : -1;
            rule_idx[op][k][AGX_MAX_RULES] = agx_alg_find((agx_op)op, (agx_kind)k, "native");
            for (int i = 0; i < AGX_MAX_ALGS; i++)
                fallback_idx[op][k][i] = t && i < t->n && t->algs[i].fallback
                                             ? agx_alg_find((agx_op)op, (agx_kind)k, t->algs[i].fallback)
                                             : -1;
        }
}

const agx_op_desc *agx_op_get(agx_op op)
{
    return ops && op >= 0 && op < AGX_OP_LAST ? &ops[op] : NULL;
}

int agx_rule_alg(agx_op op, agx_kind kind, int i)
{
    return rule_idx[op][kind][i < 0 || i >= AGX_MAX_RULES ? AGX_MAX_RULES : i];
}

int agx_fallback_of(agx_op op, agx_kind kind, int alg)
{
    return alg >= 0 && alg < AGX_MAX_ALGS ? fallback_idx[op][kind][alg] : -1;
}

const agx_table *agx_table_of(agx_op op, agx_kind kind)
{
    const agx_op_desc *d = agx_op_get(op);
    return d && kind >= 0 && kind < AGX_KIND_LAST ? d->table[kind] : NULL;
}

static int serves(const agx_alg *alg, agx_op op) { return (alg->ops >> op) & 1u; }

const agx_alg *agx_alg_at(agx_op op, agx_kind kind, int index)
{
    const agx_table *t = agx_table_of(op, kind);
    return t && index >= 0 && index < t->n && serves(&t->algs[index], op) ? &t->algs[index] : NULL;
}

int agx_alg_find(agx_op op, agx_kind kind, const char *name)
{
    const agx_table *t = agx_table_of(op, kind);
    for (int i = 0; t && name && i < t->n; i++)
        if (serves(&t->algs[i], op) && !strcasecmp(t->algs[i].name, name))
            return i;
    return -1;
}

void agx_alg_names(agx_op op, agx_kind kind, char *buf, int len)
{
    const agx_table *t = agx_table_of(op, kind);
    int used = 0;
    buf[0] = '\0';
    for (int i = 0; t && i < t->n && used < len; i++)
        if (serves(&t->algs[i], op))
            used += snprintf(buf + used, (size_t)(len - used), "%s%s", used ? ", " : "", t->algs[i].name);
}

const char *agx_alg_violation(const agx_alg *alg, const agx_args *a, int *told)
{
    int dummy;
    told = told ? told : &dummy;
    *told = 0;
    if ((alg->restrictions & AGX_R_EVEN_P) && a->p % 2)
        return "needs an even number of processes";
    return alg->check ? alg->check(a, told) : NULL;
}

int agx_alg_param(const agx_args *a, int i, int *value)
{
    const agx_param *pm = &a->alg->params[i];
    int alg = (int)(a->alg - a->table->algs);
    if (i < 0 || i >= AGX_MAX_PARAMS || !pm->name || alg >= AGX_MAX_ALGS)
        return agx_error(MPI_ERR_INTERN, "algorithm '%s' has no parameter %d", a->alg->name, i);
    int set = a->sel->pset[a->op][a->kind][alg][i];
    if (set < 0) /* (the error path alone reads the variable again, for the message) */
        return agx_error(MPI_ERR_ARG, "%s=%s: expected an integer in [%d, %d] (%s)", pm->env,
                         getenv(pm->env) ? getenv(pm->env) : "", pm->min, pm->max, pm->desc);
    int v = pm->def;
    for (int j = 0; a->rule && j < a->rule->nparams; j++) /* the rules file's row sets it */
        if (a->rule->pidx[j] == i)
            v = a->rule->pval[j];
    *value = set ? a->sel->pval[a->op][a->kind][alg][i] : v; /* the environment overrides */
    return MPI_SUCCESS;
}
