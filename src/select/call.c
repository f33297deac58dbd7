/*
 * The opening of every call, below the entry points (src/api, src/io) and the algorithms
 * that run sub-calls: the communicator checked, its context and choice state made, the
 * first collective call's set-up (private communicator, rules file agreed), and the
 * choice of the algorithm.
 */
#include "select.h"

#include <stdio.h>

/* The collective set-up of the first call: the private communicator (core: a kept
 * context's, or a new duplicate), the choice state (the kept context's whole where none
 * was made yet; its learned classes into the one agx_comm_set_algorithm made), then the
 * agreement on the rules file. */
static int setup(agx_ctx *ctx, agx_sel **sel)
{
    int fresh, rc = agx_ctx_setup(ctx, &fresh);
    if (rc != MPI_SUCCESS || (rc = agx_sel_get(ctx, sel)) != MPI_SUCCESS)
        return rc;
    if (ctx->carried.p) /* a kept context's state, into the one made before (rare: not per call) */
        agx_sel_take(ctx, *sel);
    if (fresh == 2 && ctx->rank == 0 && agx_env_flag("AGX_VERBOSE")) {
        char name[MPI_MAX_OBJECT_NAME] = "";
        int len = 0;
        MPI_Comm_get_name(ctx->user, name, &len);
        fprintf(stderr, "agx: %s, %d ranks: takes what agx kept from a freed communicator of the same ranks "
                "(its private communicator, %d learned classes): no MPI_Comm_dup, nothing learned again\n",
                len ? name : "a communicator", ctx->p, (*sel)->nlearn);
    }
    if (!(*sel)->rules_agreed) {
        (*sel)->rules_agreed = 1;
        rc = agx_rules_agree(ctx, *sel);
    }
    return rc;
}

int agx_ctx_ready(MPI_Comm comm, agx_ctx **ctx, agx_sel **sel)
{
    int rc = agx_ctx_get(comm, ctx);
    return rc != MPI_SUCCESS ? rc : setup(*ctx, sel);
}

/* The communicator: checked at once (there is nothing to agree over without one); its
 * kind comes from the context (agx_call_begin), not from a call into MPI per call. Sets
 * a->inter, a->kind, a->table. */
static int check_comm(agx_args *a, const char *fn)
{
    int inter_comm = a->ctx->kind == AGX_KIND_INTER;
    if (a->inter && inter_comm)
        return agx_error(MPI_ERR_COMM, "%s: needs an intra-communicator (use agx_allgather on an "
                         "inter-communicator)", fn);
    a->inter = a->inter || inter_comm; /* a->inter preset: colour split */
    a->kind = a->inter ? AGX_KIND_INTER : AGX_KIND_INTRA;
    a->table = agx_table_of(a->op, a->kind);
    return MPI_SUCCESS;
}

int agx_call_begin(agx_args *a, const char *fn)
{
    agx_ctx *ctx;
    int rc;
    if (a->user_comm == MPI_COMM_NULL)
        return agx_error(MPI_ERR_COMM, "%s: communicator is MPI_COMM_NULL", fn);
    if ((rc = agx_ctx_get(a->user_comm, &ctx)) != MPI_SUCCESS)
        return rc;
    a->ctx = ctx;
    if ((rc = check_comm(a, fn)) != MPI_SUCCESS || (rc = setup(ctx, &a->sel)) != MPI_SUCCESS)
        return rc;
    a->comm = ctx->pcomm;
    a->rank = ctx->rank;
    a->p = ctx->p;
    if (!a->request) /* a blocking call posts on pcomm in program order: the queued requests' first */
        agx_req_flush(ctx);
    return MPI_SUCCESS;
}

int agx_choose(agx_args *a)
{
    int rc, index;
    if ((rc = agx_select(a, &index)) != MPI_SUCCESS)
        return rc;
    a->sel->last[a->op] = index;
    a->sel->last_kind[a->op] = a->kind;
    a->alg = agx_call_alg(a, index);
    return MPI_SUCCESS;
}

int agx_run_instead(const agx_args *a, agx_coll_fn fn)
{
    const agx_table *t = a->table;
    for (int i = 0; i < t->n; i++)
        if (t->algs[i].fn == fn && ((t->algs[i].ops >> a->op) & 1u)) {
            agx_args b = *a;
            b.alg = &t->algs[i];
            a->sel->last[a->op] = i;
            a->sel->last_kind[a->op] = a->kind;
            return fn(&b);
        }
    return agx_error(MPI_ERR_INTERN, "%s: the algorithm to run instead of '%s' is not in its table",
                     agx_op_get(a->op)->name, a->alg->name);
}
