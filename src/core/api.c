/*
 * Public entry points of the allgather family: validate the arguments, describe the
 * receive buffer as a block layout, select an algorithm and run it. Internal functions
 * return error codes (agx_error); the entry point raises a failing call's code through
 * the communicator's error handler exactly once (agx_raise).
 *
 * The checks are local and O(1) (O(p) for allgatherv's counts, which the algorithms
 * read anyway). Like MPI's own, they cannot see an error made on some ranks only.
 */
#include "agx_internal.h"

#include <stdlib.h>

static int check_type(MPI_Datatype t, const char *what)
{
    if (t == MPI_DATATYPE_NULL)
        return agx_error(MPI_ERR_TYPE, "%s is MPI_DATATYPE_NULL", what);
    return MPI_SUCCESS;
}

/* A NULL buffer is an error when it would be read or written, unless the datatype
 * addresses memory absolutely (MPI_BOTTOM with a true lower bound). */
static int check_buffer(const void *buf, long long count, MPI_Datatype t, const char *what)
{
    int size;
    MPI_Aint lb, extent;
    if (buf || count == 0)
        return MPI_SUCCESS;
    MPI_Type_size(t, &size);
    MPI_Type_get_true_extent(t, &lb, &extent);
    if (size > 0 && lb == 0)
        return agx_error(MPI_ERR_BUFFER, "%s is NULL with %lld elements to transfer", what, count);
    return MPI_SUCCESS;
}

static int check_common(agx_args *a, const char *fn)
{
    const agx_ag_args *g = &a->u.ag;
    int rc, inter_comm = 0;
    if (a->user_comm == MPI_COMM_NULL)
        return agx_error(MPI_ERR_COMM, "%s: communicator is MPI_COMM_NULL", fn);
    MPI_Comm_test_inter(a->user_comm, &inter_comm);
    a->inter = a->inter || inter_comm; /* a->inter preset: colour split */
    a->kind = a->inter ? AGX_KIND_INTER : AGX_KIND_INTRA;
    a->table = agx_table_of(a->op, a->kind);
    if (g->sendbuf == MPI_IN_PLACE) {
        if (a->inter)
            return agx_error(MPI_ERR_ARG, "%s: MPI_IN_PLACE is not allowed in an intergroup "
                             "collective (inter-communicator or colour split)", fn);
    } else {
        if (g->sendcount < 0)
            return agx_error(MPI_ERR_COUNT, "%s: negative sendcount %d", fn, g->sendcount);
        if ((rc = check_type(g->sendtype, "sendtype")) != MPI_SUCCESS)
            return rc;
        if ((rc = check_buffer(g->sendbuf, g->sendcount, g->sendtype, "sendbuf")) != MPI_SUCCESS)
            return rc;
    }
    return check_type(g->recvtype, "recvtype");
}

/* Context, intergroup and rank / group size of the call (collective on first use). */
static int resolve_groups(agx_args *a, int color, const char *fn)
{
    agx_ctx *ctx;
    int rc;
    if ((rc = agx_ctx_get(a->user_comm, &ctx)) != MPI_SUCCESS || (rc = agx_ctx_setup(ctx)) != MPI_SUCCESS)
        return rc;
    a->ctx = ctx;
    a->comm = ctx->pcomm;
    a->rank = ctx->rank;
    a->p = ctx->p;
    if (a->kind == AGX_KIND_INTER) {
        agx_intergroup *ig;
        if ((rc = agx_ig_get(ctx, ctx->kind == AGX_KIND_INTER ? -1 : color, &ig)) != MPI_SUCCESS)
            return rc;
        if (ig->rsize == 0)
            return agx_error(MPI_ERR_ARG, "%s: every rank has the same colour; both groups must be "
                             "non-empty", fn);
        a->ig = ig;
        a->rank = ig->lrank;
        a->p = ig->rsize;
    }
    return MPI_SUCCESS;
}

/* Fill the layout and the totals; for intra calls the send signature must match the own
 * block. */
static int layout(agx_args *a, const char *fn)
{
    agx_ag_args *g = &a->u.ag;
    agx_blocks *b = &g->blk;
    MPI_Aint lb;
    *b = (agx_blocks){.buf = g->recvbuf, .type = g->recvtype, .p = a->p, .ucount = g->recvcount,
                      .counts = g->recvcounts, .displs = g->displs};
    MPI_Type_get_extent(g->recvtype, &lb, &b->extent);
    MPI_Type_size(g->recvtype, &b->type_size);
    long long elems = 0;
    for (int i = 0; i < a->p; i++) {
        if (g->recvcounts && g->recvcounts[i] < 0)
            return agx_error(MPI_ERR_COUNT, "%s: recvcounts[%d] = %d is negative", fn, i, g->recvcounts[i]);
        elems += agx_blk_count(b, i);
    }
    a->msg_bytes = elems * b->type_size;
    int rc = check_buffer(g->recvbuf, elems, g->recvtype, "recvbuf");
    if (rc != MPI_SUCCESS)
        return rc;
    if (g->sendbuf != MPI_IN_PLACE && !a->inter) {
        int ssize;
        MPI_Type_size(g->sendtype, &ssize);
        long long sbytes = (long long)ssize * g->sendcount;
        long long rbytes = (long long)b->type_size * agx_blk_count(b, a->rank);
        if (sbytes != rbytes)
            return agx_error(MPI_ERR_TRUNCATE, "%s: rank %d sends %lld bytes but its receive block "
                             "holds %lld", fn, a->rank, sbytes, rbytes);
    }
    return MPI_SUCCESS;
}

static int run(agx_args *a)
{
    int rc, index;
    if ((rc = agx_select(a, &index)) != MPI_SUCCESS)
        return rc;
    a->ctx->last[a->op] = index;
    a->ctx->last_kind[a->op] = a->kind;
    a->alg = agx_alg_at(a->op, a->kind, index);
    return a->alg->fn(a);
}

/* The whole call; returns the code to raise (once, by the entry point). */
static int allgather_family(agx_args *a, int color, const char *fn)
{
    const agx_ag_args *g = &a->u.ag;
    int rc;
    if ((rc = check_common(a, fn)) != MPI_SUCCESS)
        return rc;
    if (a->op == AGX_OP_ALLGATHER && g->recvcount < 0)
        return agx_error(MPI_ERR_COUNT, "%s: negative recvcount %d", fn, g->recvcount);
    if (a->op == AGX_OP_ALLGATHERV && (!g->recvcounts || !g->displs))
        return agx_error(MPI_ERR_ARG, "%s: recvcounts or displs is NULL", fn);
    if ((rc = resolve_groups(a, color, fn)) != MPI_SUCCESS)
        return rc;
    if ((rc = layout(a, fn)) != MPI_SUCCESS)
        return rc;
    return run(a);
}

int agx_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    agx_args a = {.op = AGX_OP_ALLGATHER, .user_comm = comm,
                  .u.ag = {.sendbuf = sendbuf, .sendcount = sendcount, .sendtype = sendtype,
                           .recvbuf = recvbuf, .recvcount = recvcount, .recvtype = recvtype}};
    return agx_raise(comm, allgather_family(&a, -1, "agx_allgather"));
}

int agx_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                   MPI_Comm comm)
{
    agx_args a = {.op = AGX_OP_ALLGATHERV, .user_comm = comm,
                  .u.ag = {.sendbuf = sendbuf, .sendcount = sendcount, .sendtype = sendtype,
                           .recvbuf = recvbuf, .recvcounts = recvcounts, .displs = displs,
                           .recvtype = recvtype}};
    return agx_raise(comm, allgather_family(&a, -1, "agx_allgatherv"));
}

static int check_split(MPI_Comm comm, int color, const char *fn)
{
    int inter = 0;
    if (comm != MPI_COMM_NULL)
        MPI_Comm_test_inter(comm, &inter);
    if (inter)
        return agx_error(MPI_ERR_COMM, "%s: needs an intra-communicator (use agx_allgather on an "
                         "inter-communicator)", fn);
    if (color < 0)
        return agx_error(MPI_ERR_ARG, "%s: negative colour %d (0: group A, > 0: group B)", fn, color);
    return MPI_SUCCESS;
}

int agx_intergroup_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                             int color)
{
    agx_args a = {.op = AGX_OP_ALLGATHER, .user_comm = comm, .inter = 1,
                  .u.ag = {.sendbuf = sendbuf, .sendcount = sendcount, .sendtype = sendtype,
                           .recvbuf = recvbuf, .recvcount = recvcount, .recvtype = recvtype}};
    int rc = check_split(comm, color, "agx_intergroup_allgather");
    if (rc == MPI_SUCCESS)
        rc = allgather_family(&a, color, "agx_intergroup_allgather");
    return agx_raise(comm, rc);
}

int agx_intergroup_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                              void *recvbuf, const int recvcounts[], const int displs[],
                              MPI_Datatype recvtype, MPI_Comm comm, int color)
{
    agx_args a = {.op = AGX_OP_ALLGATHERV, .user_comm = comm, .inter = 1,
                  .u.ag = {.sendbuf = sendbuf, .sendcount = sendcount, .sendtype = sendtype,
                           .recvbuf = recvbuf, .recvcounts = recvcounts, .displs = displs,
                           .recvtype = recvtype}};
    int rc = check_split(comm, color, "agx_intergroup_allgatherv");
    if (rc == MPI_SUCCESS)
        rc = allgather_family(&a, color, "agx_intergroup_allgatherv");
    return agx_raise(comm, rc);
}
