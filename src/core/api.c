/*
 * Public entry points: validate the arguments (each error raised with its MPI class
 * through the communicator's error handler), describe the receive buffer as a block
 * layout, select an algorithm and run it.
 *
 * The checks are local and O(1) (O(p) for allgatherv's counts, which the algorithms
 * read anyway). Like MPI's own, they cannot see an error made on some ranks only.
 */
#include "agx_internal.h"

#include <stdlib.h>

static int check_type(MPI_Comm comm, MPI_Datatype t, const char *what)
{
    if (t == MPI_DATATYPE_NULL)
        return agx_raise(comm, MPI_ERR_TYPE, "%s is MPI_DATATYPE_NULL", what);
    return MPI_SUCCESS;
}

/* A NULL buffer is an error when it would be read or written, unless the datatype
 * addresses memory absolutely (MPI_BOTTOM with a true lower bound). */
static int check_buffer(MPI_Comm comm, const void *buf, long long count, MPI_Datatype t,
                        const char *what)
{
    int size;
    MPI_Aint lb, extent;
    if (buf || count == 0)
        return MPI_SUCCESS;
    MPI_Type_size(t, &size);
    MPI_Type_get_true_extent(t, &lb, &extent);
    if (size > 0 && lb == 0)
        return agx_raise(comm, MPI_ERR_BUFFER, "%s is NULL with %lld elements to transfer",
                         what, count);
    return MPI_SUCCESS;
}

static int check_common(agx_args *a, const char *fn)
{
    MPI_Comm comm = a->user_comm;
    int rc;
    if (comm == MPI_COMM_NULL)
        return agx_raise(comm, MPI_ERR_COMM, "%s: communicator is MPI_COMM_NULL", fn);
    MPI_Comm_test_inter(comm, &a->inter);
    if (a->inter)
        MPI_Comm_remote_size(comm, &a->p);
    else
        MPI_Comm_size(comm, &a->p);
    if (a->sendbuf == MPI_IN_PLACE) {
        if (a->inter)
            return agx_raise(comm, MPI_ERR_ARG,
                             "%s: MPI_IN_PLACE is not allowed on an inter-communicator", fn);
    } else {
        if (a->sendcount < 0)
            return agx_raise(comm, MPI_ERR_COUNT, "%s: negative sendcount %d", fn, a->sendcount);
        if ((rc = check_type(comm, a->sendtype, "sendtype")) != MPI_SUCCESS)
            return rc;
        if ((rc = check_buffer(comm, a->sendbuf, a->sendcount, a->sendtype, "sendbuf")) != MPI_SUCCESS)
            return rc;
    }
    return check_type(comm, a->recvtype, "recvtype");
}

/* Fill the layout and the totals; the send signature must match the own block. */
static int layout(agx_args *a, const char *fn)
{
    MPI_Comm comm = a->user_comm;
    MPI_Aint lb;
    agx_blocks *b = &a->blk;
    MPI_Comm_rank(comm, &a->rank);
    b->buf = a->recvbuf;
    b->type = a->recvtype;
    MPI_Type_get_extent(a->recvtype, &lb, &b->extent);
    MPI_Type_size(a->recvtype, &b->type_size);
    b->p = a->p;
    b->ucount = a->recvcount;
    b->counts = a->recvcounts;
    b->displs = a->displs;

    long long elems = 0;
    for (int i = 0; i < a->p; i++)
        elems += agx_blk_count(b, i);
    a->total_bytes = elems * b->type_size;
    int rc = check_buffer(comm, a->recvbuf, elems, a->recvtype, "recvbuf");
    if (rc != MPI_SUCCESS)
        return rc;
    if (a->sendbuf != MPI_IN_PLACE && !a->inter) {
        int ssize;
        MPI_Type_size(a->sendtype, &ssize);
        long long sbytes = (long long)ssize * a->sendcount;
        long long rbytes = (long long)b->type_size * agx_blk_count(b, a->rank);
        if (sbytes != rbytes)
            return agx_raise(comm, MPI_ERR_TRUNCATE,
                             "%s: rank %d sends %lld bytes but its receive block holds %lld",
                             fn, a->rank, sbytes, rbytes);
    }
    return MPI_SUCCESS;
}

static int dispatch(agx_args *a)
{
    agx_ctx *ctx;
    int rc, index;
    if ((rc = agx_ctx_get(a->user_comm, &ctx)) != MPI_SUCCESS)
        return agx_raise_code(a->user_comm, rc);
    a->ctx = ctx;
    if ((rc = agx_ctx_setup(ctx)) != MPI_SUCCESS)
        return agx_raise_code(a->user_comm, rc);
    a->comm = ctx->pcomm;
    if ((rc = agx_select(a, &index)) != MPI_SUCCESS)
        return rc; /* already raised */
    ctx->last[a->op] = index;
    rc = agx_alg_get(ctx->kind, index)->fn[a->op](a);
    return rc == MPI_SUCCESS ? rc : agx_raise_code(a->user_comm, rc);
}

int agx_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    agx_args a = {.op = AGX_OP_ALLGATHER, .user_comm = comm, .sendbuf = sendbuf,
                  .sendcount = sendcount, .sendtype = sendtype, .recvbuf = recvbuf,
                  .recvcount = recvcount, .recvtype = recvtype};
    int rc;
    if ((rc = check_common(&a, "agx_allgather")) != MPI_SUCCESS)
        return rc;
    if (recvcount < 0)
        return agx_raise(comm, MPI_ERR_COUNT, "agx_allgather: negative recvcount %d", recvcount);
    if ((rc = layout(&a, "agx_allgather")) != MPI_SUCCESS)
        return rc;
    return dispatch(&a);
}

int agx_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                   MPI_Comm comm)
{
    agx_args a = {.op = AGX_OP_ALLGATHERV, .user_comm = comm, .sendbuf = sendbuf,
                  .sendcount = sendcount, .sendtype = sendtype, .recvbuf = recvbuf,
                  .recvcounts = recvcounts, .displs = displs, .recvtype = recvtype};
    int rc;
    if ((rc = check_common(&a, "agx_allgatherv")) != MPI_SUCCESS)
        return rc;
    if (!recvcounts || !displs)
        return agx_raise(comm, MPI_ERR_ARG, "agx_allgatherv: recvcounts or displs is NULL");
    for (int i = 0; i < a.p; i++)
        if (recvcounts[i] < 0)
            return agx_raise(comm, MPI_ERR_COUNT, "agx_allgatherv: recvcounts[%d] = %d is negative",
                             i, recvcounts[i]);
    if ((rc = layout(&a, "agx_allgatherv")) != MPI_SUCCESS)
        return rc;
    return dispatch(&a);
}
