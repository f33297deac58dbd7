/*
 * The communicator's public functions: the algorithm forced on it (agx_comm_set_algorithm),
 * the one that ran last (agx_comm_last_algorithm), and its regions (agx_comm_regions); the
 * repeated calls' memo slot and run, which keep the last algorithm too (api.h).
 */
#include "api.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

int agx_comm_set_algorithm(MPI_Comm comm, agx_op op, const char *name)
{
    agx_ctx *ctx;
    agx_sel *sel;
    char names[512], inter_names[256];
    int rc, idx[AGX_KIND_LAST];
    agx_coll_install();
    if (comm == MPI_COMM_NULL)
        return agx_raise(comm, agx_error(MPI_ERR_COMM, "agx_comm_set_algorithm: MPI_COMM_NULL"));
    if (!agx_op_name(op))
        return agx_raise(comm, agx_error(MPI_ERR_ARG, "agx_comm_set_algorithm: invalid op %d", (int)op));
    if ((rc = agx_ctx_get(comm, &ctx)) != MPI_SUCCESS || (rc = agx_sel_get(ctx, &sel)) != MPI_SUCCESS)
        return agx_raise(comm, rc);
    sel->gen++;
    if (!name || !strcasecmp(name, "auto")) {
        for (int k = 0; k < AGX_KIND_LAST; k++)
            sel->forced[k][op] = -1;
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
            sel->forced[k][op] = idx[k];
    return MPI_SUCCESS;
}

int agx_comm_last_algorithm(MPI_Comm comm, agx_op op, const char **name)
{
    agx_ctx *ctx;
    agx_sel *sel;
    int rc;
    agx_coll_install();
    if (comm == MPI_COMM_NULL)
        return agx_raise(comm, agx_error(MPI_ERR_COMM, "agx_comm_last_algorithm: MPI_COMM_NULL"));
    if (!agx_op_name(op) || !name)
        return agx_raise(comm, agx_error(MPI_ERR_ARG, "agx_comm_last_algorithm: invalid argument"));
    if ((rc = agx_ctx_get(comm, &ctx)) != MPI_SUCCESS || (rc = agx_sel_get(ctx, &sel)) != MPI_SUCCESS)
        return agx_raise(comm, rc);
    const agx_alg *alg = agx_alg_at(op, sel->last_kind[op], sel->last[op]);
    *name = alg ? alg->name : "none";
    return MPI_SUCCESS;
}

int agx_comm_regions(MPI_Comm comm, int *region_of)
{
    agx_ctx *ctx;
    agx_sel *sel;
    const agx_regions *R;
    int rc;
    agx_coll_install();
    if (comm == MPI_COMM_NULL)
        return agx_raise(comm, agx_error(MPI_ERR_COMM, "agx_comm_regions: MPI_COMM_NULL"));
    if (!region_of)
        return agx_raise(comm, agx_error(MPI_ERR_BUFFER, "agx_comm_regions: region_of is NULL"));
    if ((rc = agx_ctx_ready(comm, &ctx, &sel)) != MPI_SUCCESS)
        return agx_raise(comm, rc);
    if (ctx->kind != AGX_KIND_INTRA)
        return agx_raise(comm, agx_error(MPI_ERR_COMM, "agx_comm_regions: needs an intra-communicator"));
    if ((rc = agx_ctx_regions(ctx, &R)) != MPI_SUCCESS)
        return agx_raise(comm, rc);
    memcpy(region_of, R->region_of, sizeof(int) * (size_t)R->p);
    return MPI_SUCCESS;
}

void *agx_memo_slot(agx_ctx *ctx, int slot, size_t size)
{
    void *m = agx_ctx_slot(ctx, slot);
    if (!m && (m = calloc(1, size)))
        agx_ctx_attach(ctx, slot, m, free);
    return m;
}

int agx_repeat_run(agx_ctx *ctx, agx_args *a)
{
    agx_repeat_note(ctx, a);
    return a->alg->fn(a);
}

int agx_repeat_native(const agx_args *a)
{
    return a->p > 1 && a->msg_bytes > 0 && agx_alg_index(a) == agx_rule_alg(a->op, a->kind, -1);
}
