/* Registry look-ups over the algorithm tables of src/coll/coll_table.c. */
#include "agx_internal.h"
#include "pat.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

static const char *op_names[AGX_OP_LAST] = {
    [AGX_OP_ALLGATHER] = "allgather",
    [AGX_OP_ALLGATHERV] = "allgatherv",
};

const char *agx_op_name(agx_op op)
{
    return (op >= 0 && op < AGX_OP_LAST) ? op_names[op] : NULL;
}

static int valid(agx_op op, agx_kind kind)
{
    return op >= 0 && op < AGX_OP_LAST && kind >= 0 && kind < AGX_KIND_LAST;
}

const agx_alg *agx_alg_get(agx_kind kind, int index)
{
    int n;
    const agx_alg *t = agx_table(kind, &n);
    return (index >= 0 && index < n) ? &t[index] : NULL;
}

int agx_alg_find(agx_op op, agx_kind kind, const char *name)
{
    int n;
    if (!valid(op, kind) || !name)
        return -1;
    const agx_alg *t = agx_table(kind, &n);
    for (int i = 0; i < n; i++)
        if (t[i].fn[op] && !strcasecmp(t[i].name, name))
            return i;
    return -1;
}

void agx_alg_names(agx_op op, agx_kind kind, char *buf, int len)
{
    int n, used = 0;
    buf[0] = '\0';
    if (!valid(op, kind))
        return;
    const agx_alg *t = agx_table(kind, &n);
    for (int i = 0; i < n && used < len; i++)
        if (t[i].fn[op])
            used += snprintf(buf + used, (size_t)(len - used), "%s%s", used ? ", " : "", t[i].name);
}

/* The i-th algorithm serving op, as the public listing counts them. */
static const agx_alg *nth(agx_op op, agx_kind kind, int i)
{
    int n;
    const agx_alg *t = agx_table(kind, &n);
    for (int j = 0; j < n; j++)
        if (t[j].fn[op] && i-- == 0)
            return &t[j];
    return NULL;
}

int agx_algorithm_count(agx_op op, agx_kind kind)
{
    int n, c = 0;
    if (!valid(op, kind))
        return 0;
    const agx_alg *t = agx_table(kind, &n);
    for (int j = 0; j < n; j++)
        c += t[j].fn[op] != NULL;
    return c;
}

int agx_algorithm_info(agx_op op, agx_kind kind, int i, const char **name, const char **desc)
{
    const agx_alg *a = valid(op, kind) ? nth(op, kind, i) : NULL;
    if (!a)
        return MPI_ERR_ARG;
    if (name)
        *name = a->name;
    if (desc)
        *desc = a->desc;
    return MPI_SUCCESS;
}

const char *agx_alg_violation(const agx_alg *alg, const agx_args *a)
{
    if ((alg->restrictions & AGX_R_EVEN_P) && a->p % 2)
        return "needs an even number of processes";
    if ((alg->restrictions & AGX_R_POW2) && !agx_is_pow2(a->p))
        return "needs a power-of-two number of processes";
    if (alg->restrictions & AGX_R_PAT)
        return agx_pat_violation(a);
    return NULL;
}
