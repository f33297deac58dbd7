/*
 * Algorithm selection for one call: the communicator's forced choice, else the
 * environment's, else the default rule. A forced algorithm that cannot run on this
 * call falls back to its declared fallback (or the default rule) under the
 * communicator's AGX_FALLBACK policy.
 *
 * Default rule (intra-communicators; the thresholds are MPICH's allgather defaults):
 *   total result < 80 KiB            -> bruck (ceil(log2 p) messages, any p)
 *   total < 512 KiB and p power of 2 -> recursive_doubling
 *   otherwise                        -> ring (bandwidth-optimal, neighbours only)
 * Inter calls (inter-communicators and colour splits): segmented for allgather,
 * segmented_v for allgatherv, at every size. The two groups see different message sizes
 * (each receives the other's), so a size rule could pick different algorithms in the two
 * groups and deadlock; agreeing would cost an extra exchange on every call.
 */
#include "agx_internal.h"
#include "pat.h"

#include <stdio.h>
#include <strings.h>

#define AGX_SHORT_BYTES (80 * 1024)
#define AGX_MEDIUM_BYTES (512 * 1024)

static int default_rule(const agx_args *a)
{
    const char *name;
    if (a->kind == AGX_KIND_INTER)
        name = a->op == AGX_OP_ALLGATHER ? "segmented" : "segmented_v";
    else if (a->total_bytes < AGX_SHORT_BYTES)
        name = "bruck";
    else if (a->total_bytes < AGX_MEDIUM_BYTES && agx_is_pow2(a->p))
        name = "recursive_doubling";
    else
        name = "ring";
    return agx_alg_find(a->op, a->kind, name);
}

int agx_select(agx_args *a, int *index)
{
    agx_ctx *ctx = a->ctx;
    agx_op op = a->op;
    agx_kind kind = a->kind;
    char names[512];

    if (ctx->env_bad[op] && ctx->forced[kind][op] < 0) {
        agx_alg_names(op, kind, names, sizeof names);
        return agx_raise(ctx->user, MPI_ERR_ARG,
                         "unknown %s algorithm '%s' in the environment; valid: %s",
                         agx_op_name(op), ctx->env_bad[op], names);
    }
    int forced = ctx->forced[kind][op] >= 0 ? ctx->forced[kind][op] : ctx->env_forced[kind][op];
    if (forced < 0) {
        *index = default_rule(a);
        return MPI_SUCCESS;
    }
    const agx_alg *alg = agx_alg_get(kind, forced);
    const char *why = agx_alg_violation(alg, a);
    if (!why) {
        *index = forced;
        return MPI_SUCCESS;
    }
    if (ctx->fallback_policy == AGX_FALLBACK_ERROR)
        return agx_raise(ctx->user, MPI_ERR_ARG,
                         "%s algorithm '%s' cannot run here (%s) and AGX_FALLBACK=error",
                         agx_op_name(op), alg->name, why);
    int fb = alg->fallback ? agx_alg_find(op, kind, alg->fallback) : -1;
    if (fb < 0 || agx_alg_violation(agx_alg_get(kind, fb), a))
        fb = default_rule(a);
    /* agx_pat_init has already said once that the PAT monitor cannot run */
    int said = (alg->restrictions & AGX_R_PAT) && agx_pat_told();
    if (ctx->fallback_policy == AGX_FALLBACK_WARN && !ctx->warned[kind][op] && a->rank == 0 && !said)
        fprintf(stderr, "agx: %s algorithm '%s' cannot run here (%s); using '%s'\n",
                agx_op_name(op), alg->name, why, agx_alg_get(kind, fb)->name);
    ctx->warned[kind][op] = 1;
    *index = fb;
    return MPI_SUCCESS;
}

int agx_comm_set_algorithm(MPI_Comm comm, agx_op op, const char *name)
{
    agx_ctx *ctx;
    char names[512];
    int rc;
    if (comm == MPI_COMM_NULL)
        return agx_raise(comm, MPI_ERR_COMM, "agx_comm_set_algorithm: MPI_COMM_NULL");
    if (!agx_op_name(op))
        return agx_raise(comm, MPI_ERR_ARG, "agx_comm_set_algorithm: invalid op %d", (int)op);
    if ((rc = agx_ctx_get(comm, &ctx)) != MPI_SUCCESS)
        return agx_raise_code(comm, rc);
    if (!name || !strcasecmp(name, "auto")) {
        for (int k = 0; k < AGX_KIND_LAST; k++)
            ctx->forced[k][op] = -1;
        return MPI_SUCCESS;
    }
    /* The name applies to every table that has it: an intra-communicator serves the intra
     * table and, through agx_intergroup_*, the inter table; an inter-communicator only
     * the inter table. */
    int idx[AGX_KIND_LAST], any = 0;
    for (int k = 0; k < AGX_KIND_LAST; k++) {
        int usable = !(ctx->kind == AGX_KIND_INTER && k == AGX_KIND_INTRA);
        idx[k] = usable ? agx_alg_find(op, (agx_kind)k, name) : -1;
        any |= idx[k] >= 0;
    }
    if (!any) {
        if (ctx->kind == AGX_KIND_INTER) {
            agx_alg_names(op, AGX_KIND_INTER, names, sizeof names);
            return agx_raise(comm, MPI_ERR_ARG,
                             "unknown inter-communicator %s algorithm '%s'; valid: %s",
                             agx_op_name(op), name, names);
        }
        char inter_names[256];
        agx_alg_names(op, AGX_KIND_INTRA, names, sizeof names);
        agx_alg_names(op, AGX_KIND_INTER, inter_names, sizeof inter_names);
        return agx_raise(comm, MPI_ERR_ARG,
                         "unknown %s algorithm '%s'; valid: %s (intergroup: %s)",
                         agx_op_name(op), name, names, inter_names);
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
        return agx_raise(comm, MPI_ERR_COMM, "agx_comm_last_algorithm: MPI_COMM_NULL");
    if (!agx_op_name(op) || !name)
        return agx_raise(comm, MPI_ERR_ARG, "agx_comm_last_algorithm: invalid argument");
    if ((rc = agx_ctx_get(comm, &ctx)) != MPI_SUCCESS)
        return agx_raise_code(comm, rc);
    const agx_alg *alg = agx_alg_get(ctx->last_kind[op], ctx->last[op]);
    *name = alg ? alg->name : "none";
    return MPI_SUCCESS;
}
