/*
 * Public entry points of the allgather family: validate the arguments, describe the
 * receive buffer as a block layout, select an algorithm and run it. Internal functions
 * return error codes (agx_error); the entry point raises a failing call's code through
 * the communicator's error handler exactly once (agx_raise).
 *
 * The checks are local and O(1) (O(p) for allgatherv's counts, which the algorithms
 * read anyway). On an intra-communicator, like MPI's own, they cannot see an error made
 * on some ranks only; an intergroup call agrees on them first (agx_ig_call), so every
 * process fails together (docs/ARCHITECTURE.md, "No hang").
 */
#include "agx_internal.h"

#include <stdio.h>
#include <stdlib.h>

/* A NULL buffer is an error when it would be read or written, unless the datatype
 * addresses memory absolutely (MPI_BOTTOM with a true lower bound). */
int agx_check_buffer(const void *buf, long long count, MPI_Datatype t, const char *what)
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

/* The arguments this process can check alone (agreed on in an intergroup call). */
static int check_args(agx_args *a, int color, const char *fn)
{
    const agx_ag_args *g = &a->u.ag;
    int rc;
    if (color < -1 || (a->inter && color < 0 && a->ctx->kind == AGX_KIND_INTRA))
        return agx_error(MPI_ERR_ARG, "%s: negative colour %d (0: group A, > 0: group B)", fn, color);
    if (g->sendbuf == MPI_IN_PLACE) {
        if (a->inter)
            return agx_error(MPI_ERR_ARG, "%s: MPI_IN_PLACE is not allowed in an intergroup "
                             "collective (inter-communicator or colour split)", fn);
    } else {
        if (g->sendcount < 0)
            return agx_error(MPI_ERR_COUNT, "%s: negative sendcount %d", fn, g->sendcount);
        if ((rc = agx_type_check(g->sendtype, fn, "sendtype")) != MPI_SUCCESS)
            return rc;
        if ((rc = agx_check_buffer(g->sendbuf, g->sendcount, g->sendtype, "sendbuf")) != MPI_SUCCESS)
            return rc;
    }
    if ((rc = agx_type_check(g->recvtype, fn, "recvtype")) != MPI_SUCCESS)
        return rc;
    if (a->op == AGX_OP_ALLGATHER && g->recvcount < 0)
        return agx_error(MPI_ERR_COUNT, "%s: negative recvcount %d", fn, g->recvcount);
    if (a->op == AGX_OP_ALLGATHERV && (!g->recvcounts || !g->displs))
        return agx_error(MPI_ERR_ARG, "%s: recvcounts or displs is NULL", fn);
    return MPI_SUCCESS;
}

/* Fill the layout and the totals; for intra calls the send signature must match the own
 * block. */
static int layout(agx_args *a, const char *fn)
{
    agx_ag_args *g = &a->u.ag;
    agx_blocks *b = &g->blk;
    *b = (agx_blocks){.buf = g->recvbuf, .type = g->recvtype, .p = a->p, .ucount = g->recvcount,
                      .counts = g->recvcounts, .displs = g->displs};
    long long tsize;
    agx_type_layout(g->recvtype, &tsize, &b->extent);
    b->type_size = tsize;
    long long elems = 0;
    for (int i = 0; i < a->p; i++) {
        if (g->recvcounts && g->recvcounts[i] < 0)
            return agx_error(MPI_ERR_COUNT, "%s: recvcounts[%d] = %d is negative", fn, i, g->recvcounts[i]);
        elems += agx_blk_count(b, i);
    }
    a->msg_bytes = elems * b->type_size;
    int rc = g->shared ? MPI_SUCCESS : agx_check_buffer(g->recvbuf, elems, g->recvtype, "recvbuf");
    if (rc != MPI_SUCCESS)
        return rc;
    if (g->sendbuf != MPI_IN_PLACE && !a->inter) {
        long long ssize;
        agx_type_layout(g->sendtype, &ssize, NULL);
        long long sbytes = ssize * g->sendcount;
        long long rbytes = b->type_size * agx_blk_count(b, a->rank);
        if (sbytes != rbytes)
            return agx_error(MPI_ERR_TRUNCATE, "%s: rank %d sends %lld bytes but its receive block "
                             "holds %lld", fn, a->rank, sbytes, rbytes);
    }
    return MPI_SUCCESS;
}

int agx_ag_prepare_intra(agx_args *a, const char *fn)
{
    int rc;
    if ((rc = agx_call_begin(a, fn)) != MPI_SUCCESS || (rc = check_args(a, -1, fn)) != MPI_SUCCESS)
        return rc;
    return layout(a, fn);
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
    if ((rc = check_comm(a, fn)) != MPI_SUCCESS || (rc = agx_ctx_setup(ctx)) != MPI_SUCCESS)
        return rc;
    a->comm = ctx->pcomm;
    a->rank = ctx->rank;
    a->p = ctx->p;
    return MPI_SUCCESS;
}

int agx_agree(MPI_Comm comm, int rank, int mine, long long *vals, int n, const char *fn, const char *why)
{
    long long in[1 + AGX_AGREE_MAX], out[1 + AGX_AGREE_MAX];
    int cls = 0, rc;
    if (n > AGX_AGREE_MAX)
        return agx_error(MPI_ERR_INTERN, "%s: agx_agree of %d values", fn, n);
    if (mine != MPI_SUCCESS)
        MPI_Error_class(mine, &cls);
    in[0] = mine != MPI_SUCCESS ? ((long long)cls << 32) | rank : -1;
    for (int i = 0; i < n; i++)
        in[1 + i] = vals[i];
    if ((rc = PMPI_Allreduce(in, out, 1 + n, MPI_LONG_LONG, MPI_MAX, comm)) != MPI_SUCCESS)
        return rc;
    for (int i = 0; i < n; i++)
        vals[i] = out[1 + i];
    if (out[0] < 0 || mine != MPI_SUCCESS)
        return mine;
    return agx_error((int)(out[0] >> 32), "%s: rank %d %s (its own error says why)", fn,
                     (int)(out[0] & 0xffffffff), why);
}

int agx_choose(agx_args *a)
{
    int rc, index;
    if ((rc = agx_select(a, &index)) != MPI_SUCCESS)
        return rc;
    a->ctx->last[a->op] = index;
    a->ctx->last_kind[a->op] = a->kind;
    a->alg = agx_call_alg(a, index);
    return MPI_SUCCESS;
}

/* An intergroup call's side, once the groups are known: layout, choice and byte view
 * (run inside the agreement, so any failure here is seen by every process). */
static int inter_prepare(agx_args *a, const char *fn)
{
    agx_ig_io *io = a->u.ag.io;
    int rc;
    agx_ig_io_end(a, io, MPI_ERR_OTHER); /* an earlier pass's, before a rebuild: freed */
    if ((rc = layout(a, fn)) != MPI_SUCCESS || (rc = agx_choose(a)) != MPI_SUCCESS)
        return rc;
    return a->alg->raw ? MPI_SUCCESS : agx_ig_io_begin(a, io);
}

/* A repeat of the communicator's last intra allgather (ctx->ag_memo): the same counts,
 * common predefined types, in-place-ness, forced choices and PAT session. Its checks,
 * layout and selection would come out as before; only the buffers are new (and checked). */
static int allgather_repeat(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                            int recvcount, MPI_Datatype recvtype, agx_ctx *ctx)
{
    agx_ag_memo *m = &ctx->ag_memo;
    return m->valid && m->scount == sendcount && m->rcount == recvcount && m->stype == sendtype &&
           m->rtype == recvtype && m->inplace == (sendbuf == MPI_IN_PLACE) && m->gen == ctx->select_gen &&
           m->pat == (const void *)ctx->pat && (recvbuf || !m->a.msg_bytes) && (sendbuf || !sendcount);
}

static void allgather_remember(const agx_args *a)
{
    const agx_ag_args *g = &a->u.ag;
    agx_ag_memo *m = &a->ctx->ag_memo;
    m->valid = a->op == AGX_OP_ALLGATHER && a->kind == AGX_KIND_INTRA && !g->shared &&
               agx_type_common_size(g->recvtype) && (g->sendbuf == MPI_IN_PLACE || agx_type_common_size(g->sendtype));
    if (!m->valid)
        return;
    m->inplace = g->sendbuf == MPI_IN_PLACE;
    m->scount = g->sendcount, m->rcount = g->recvcount;
    m->stype = g->sendtype, m->rtype = g->recvtype;
    m->gen = a->ctx->select_gen;
    m->pat = a->ctx->pat;
    m->a = *a;
}

/* The whole call; returns the code to raise (once, by the entry point). Intra calls
 * check locally, like the MPI library; intergroup calls agree first (agx_ig_call). */
static int allgather_family(agx_args *a, int color, const char *fn)
{
    agx_ig_io io = {0};
    int rc;
    if ((rc = agx_call_begin(a, fn)) != MPI_SUCCESS)
        return rc;
    agx_ctx *ctx = a->ctx;
    int local = check_args(a, color, fn);
    if (a->kind == AGX_KIND_INTRA) {
        if (local != MPI_SUCCESS || (rc = layout(a, fn)) != MPI_SUCCESS || (rc = agx_choose(a)) != MPI_SUCCESS)
            return local != MPI_SUCCESS ? local : rc;
        allgather_remember(a);
        return a->alg->fn(a);
    }
    a->u.ag.io = &io;
    rc = agx_ig_call(a, ctx->kind == AGX_KIND_INTER ? -1 : color > 0, local, inter_prepare, fn);
    if (rc == MPI_SUCCESS)
        rc = a->alg->fn(a);
    return agx_ig_io_end(a, &io, rc);
}

int agx_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    agx_ctx *ctx;
    if (comm != MPI_COMM_NULL && agx_ctx_get(comm, &ctx) == MPI_SUCCESS &&
        allgather_repeat(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, ctx)) {
        agx_args a = ctx->ag_memo.a;
        a.u.ag.sendbuf = sendbuf;
        a.u.ag.recvbuf = recvbuf;
        a.u.ag.blk.buf = recvbuf;
        ctx->last[AGX_OP_ALLGATHER] = (int)(a.alg - a.table->algs);
        ctx->last_kind[AGX_OP_ALLGATHER] = AGX_KIND_INTRA;
        return agx_raise(comm, a.alg->fn(&a));
    }
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

int agx_intergroup_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                             int color)
{
    agx_args a = {.op = AGX_OP_ALLGATHER, .user_comm = comm, .inter = 1,
                  .u.ag = {.sendbuf = sendbuf, .sendcount = sendcount, .sendtype = sendtype,
                           .recvbuf = recvbuf, .recvcount = recvcount, .recvtype = recvtype}};
    return agx_raise(comm, allgather_family(&a, color, "agx_intergroup_allgather"));
}

int agx_intergroup_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                              void *recvbuf, const int recvcounts[], const int displs[],
                              MPI_Datatype recvtype, MPI_Comm comm, int color)
{
    agx_args a = {.op = AGX_OP_ALLGATHERV, .user_comm = comm, .inter = 1,
                  .u.ag = {.sendbuf = sendbuf, .sendcount = sendcount, .sendtype = sendtype,
                           .recvbuf = recvbuf, .recvcounts = recvcounts, .displs = displs,
                           .recvtype = recvtype}};
    return agx_raise(comm, allgather_family(&a, color, "agx_intergroup_allgatherv"));
}
