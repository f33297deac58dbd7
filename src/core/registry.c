/*
 * Registry look-ups over the operations' tables (src/coll/coll_table.c lists them; each
 * operation family has its own table file, src/coll/<op>/<op>_table.c).
 */
#include "agx_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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

/* The i-th algorithm serving op, as the public listing counts them. */
static const agx_alg *nth(agx_op op, agx_kind kind, int i)
{
    const agx_table *t = agx_table_of(op, kind);
    for (int j = 0; t && j < t->n; j++)
        if (serves(&t->algs[j], op) && i-- == 0)
            return &t->algs[j];
    return NULL;
}

const char *agx_op_name(agx_op op)
{
    const agx_op_desc *d = agx_op_get(op);
    return d ? d->name : NULL;
}

int agx_algorithm_count(agx_op op, agx_kind kind)
{
    int c = 0;
    while (nth(op, kind, c))
        c++;
    return c;
}

int agx_algorithm_info(agx_op op, agx_kind kind, int i, const char **name, const char **desc)
{
    const agx_alg *a = nth(op, kind, i);
    if (!a)
        return MPI_ERR_ARG;
    if (name)
        *name = a->name;
    if (desc)
        *desc = a->desc;
    return MPI_SUCCESS;
}

int agx_algorithm_details(agx_op op, agx_kind kind, int i, const char **cost, const char **cite)
{
    const agx_alg *a = nth(op, kind, i);
    if (!a)
        return MPI_ERR_ARG;
    if (cost)
        *cost = a->cost;
    if (cite)
        *cite = a->cite;
    return MPI_SUCCESS;
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

int agx_alg_param(const agx_args *a, const char *name, int *value)
{
    for (int i = 0; i < AGX_MAX_PARAMS && a->alg->params[i].name; i++) {
        const agx_param *pm = &a->alg->params[i];
        long long v = pm->def;
        if (strcmp(pm->name, name))
            continue;
        for (int j = 0; a->rule && j < a->rule->nparams; j++) /* the rules file's row sets it */
            if (!strcmp(a->rule->pname[j], name))
                v = a->rule->pval[j];
        if (agx_env_int(pm->env, pm->min, pm->max, &v) < 0) /* the environment overrides */
            return agx_error(MPI_ERR_ARG, "%s=%s: expected an integer in [%d, %d] (%s)", pm->env,
                             getenv(pm->env), pm->min, pm->max, pm->desc);
        *value = (int)v;
        return MPI_SUCCESS;
    }
    return agx_error(MPI_ERR_INTERN, "algorithm '%s' has no parameter '%s'", a->alg->name, name);
}
