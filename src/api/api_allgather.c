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
#include "api.h"
#include "coll_allgather.h"
#include "pat.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    agx_coll_install();
    if ((rc = agx_call_begin(a, fn)) != MPI_SUCCESS || (rc = check_args(a, -1, fn)) != MPI_SUCCESS)
        return rc;
    return layout(a, fn);
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

/* The last intra allgather or allgatherv whose types are common predefined ones, ready to
 * run again: its key and its arguments after the checks, layout and selection (the
 * context's AGX_SLOT_API, made at the first such call, with room for an allgatherv's
 * counts and displacements). */
typedef struct {
    int valid, inplace, scount, rcount, native; /* native: agx_repeat_native */
    agx_op op;
    MPI_Datatype stype, rtype;
    unsigned gen;            /* sel->gen when it was made */
    const void *pat;         /* the PAT session when it was made */
    agx_args a;
    int cd[];                /* allgatherv: recvcounts, then displs (p each) */
} agx_ag_memo;

/* A repeat of the communicator's last intra allgather (agx_ag_memo): the same counts,
 * common predefined types, in-place-ness, forced choices and PAT session. Its checks,
 * layout and selection would come out as before; only the buffers are new (and checked). */
static const agx_ag_memo *allgather_repeat(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                           void *recvbuf, int recvcount, MPI_Datatype recvtype, agx_ctx *ctx)
{
    const agx_ag_memo *m = agx_ctx_slot(ctx, AGX_SLOT_API);
    return m && m->valid && m->op == AGX_OP_ALLGATHER && m->scount == sendcount && m->rcount == recvcount &&
                   m->stype == sendtype &&
                   m->rtype == recvtype && m->inplace == (sendbuf == MPI_IN_PLACE) && m->gen == m->a.sel->gen &&
                   m->pat == agx_ctx_slot(ctx, AGX_SLOT_PAT) && (recvbuf || !m->a.msg_bytes) &&
                   (sendbuf || !sendcount)
               ? m
               : NULL;
}

/* A repeat of the last intra allgatherv: the same as allgather_repeat's, and the same
 * recvcounts and displs (their contents, compared: O(p), as the checks' own pass is). */
static const agx_ag_memo *allgatherv_repeat(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                            void *recvbuf, const int *recvcounts, const int *displs,
                                            MPI_Datatype recvtype, agx_ctx *ctx)
{
    const agx_ag_memo *m = agx_ctx_slot(ctx, AGX_SLOT_API);
    size_t n = (size_t)ctx->p * sizeof(int);
    return m && m->valid && m->op == AGX_OP_ALLGATHERV && m->scount == sendcount && m->stype == sendtype &&
                   m->rtype == recvtype && m->inplace == (sendbuf == MPI_IN_PLACE) && m->gen == m->a.sel->gen &&
                   m->pat == agx_ctx_slot(ctx, AGX_SLOT_PAT) && (recvbuf || !m->a.msg_bytes) &&
                   (sendbuf || !sendcount) && recvcounts && displs && !memcmp(m->cd, recvcounts, n) &&
                   !memcmp(m->cd + ctx->p, displs, n)
               ? m
               : NULL;
}

static void allgather_remember(const agx_args *a)
{
    const agx_ag_args *g = &a->u.ag;
    agx_ag_memo *m = agx_memo_slot(a->ctx, AGX_SLOT_API, sizeof *m + 2 * (size_t)a->ctx->p * sizeof(int));
    if (!m)
        return;
    const agx_pat *pat = agx_ctx_slot(a->ctx, AGX_SLOT_PAT);
    /* a PAT session without its thread decides per epoch (agx_pat_predict): no memo */
    m->valid = (a->op == AGX_OP_ALLGATHER || (a->op == AGX_OP_ALLGATHERV && g->recvcounts && g->displs)) &&
               a->kind == AGX_KIND_INTRA && !g->shared && !(pat && !pat->threaded) &&
               !a->learn && /* a learning window's candidate changes from call to call */
               agx_type_common_size(g->recvtype) && (g->sendbuf == MPI_IN_PLACE || agx_type_common_size(g->sendtype));
    if (!m->valid)
        return;
    m->op = a->op;
    m->inplace = g->sendbuf == MPI_IN_PLACE;
    m->scount = g->sendcount, m->rcount = g->recvcount;
    if (a->op == AGX_OP_ALLGATHERV) {
        memcpy(m->cd, g->recvcounts, (size_t)a->ctx->p * sizeof(int));
        memcpy(m->cd + a->ctx->p, g->displs, (size_t)a->ctx->p * sizeof(int));
    }
    m->stype = g->sendtype, m->rtype = g->recvtype;
    m->gen = a->sel->gen;
    m->pat = agx_ctx_slot(a->ctx, AGX_SLOT_PAT);
    m->native = agx_repeat_native(a);
    m->a = *a;
}

/* The whole call; returns the code to raise (once, by the entry point). Intra calls
 * check locally, like the MPI library; intergroup calls agree first (agx_ig_call). */
static int allgather_family(agx_args *a, int color, const char *fn)
{
    agx_ig_io io = {0};
    int rc;
    agx_coll_install();
    if ((rc = agx_call_begin(a, fn)) != MPI_SUCCESS)
        return rc;
    agx_ctx *ctx = a->ctx;
    int local = check_args(a, color, fn);
    if (a->kind == AGX_KIND_INTRA) {
        if (local != MPI_SUCCESS || (rc = layout(a, fn)) != MPI_SUCCESS || (rc = agx_choose(a)) != MPI_SUCCESS)
            return local != MPI_SUCCESS ? local : rc;
        allgather_remember(a);
        return agx_run(a);
    }
    a->u.ag.io = &io;
    rc = agx_ig_call(a, ctx->kind == AGX_KIND_INTER ? -1 : color > 0, local, inter_prepare, fn);
    if (rc == MPI_SUCCESS)
        rc = agx_run(a);
    return agx_ig_io_end(a, &io, rc);
}

/* Every allgather but a repeat that goes to the library's call: out of line, so that
 * one's path keeps a small frame (as agx_allreduce's). */
static __attribute__((noinline)) int allgather_other(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                                    void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                                    MPI_Comm comm, agx_ctx *ctx, const agx_ag_memo *m)
{
    if (m) {
        agx_args a = m->a;
        a.u.ag.sendbuf = sendbuf;
        a.u.ag.recvbuf = recvbuf;
        a.u.ag.blk.buf = recvbuf;
        return agx_raise(comm, agx_repeat_run(ctx, &a));
    }
    agx_args a = {.op = AGX_OP_ALLGATHER, .user_comm = comm,
                  .u.ag = {.sendbuf = sendbuf, .sendcount = sendcount, .sendtype = sendtype,
                           .recvbuf = recvbuf, .recvcount = recvcount, .recvtype = recvtype}};
    return agx_raise(comm, allgather_family(&a, -1, "agx_allgather"));
}

int agx_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    agx_ctx *ctx = NULL;
    const agx_ag_memo *m = NULL;
    if (comm != MPI_COMM_NULL && agx_ctx_get(comm, &ctx) == MPI_SUCCESS &&
        (m = allgather_repeat(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, ctx)) && m->native) {
        agx_repeat_note(ctx, &m->a);
        return agx_raise(comm, PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, m->a.comm));
    }
    return allgather_other(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, ctx, m);
}

static __attribute__((noinline)) int allgatherv_other(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                                     void *recvbuf, const int recvcounts[], const int displs[],
                                                     MPI_Datatype recvtype, MPI_Comm comm, agx_ctx *ctx,
                                                     const agx_ag_memo *m)
{
    if (m) {
        agx_args a = m->a; /* the memo's arguments, on this call's buffers and arrays */
        a.u.ag.sendbuf = sendbuf;
        a.u.ag.recvbuf = recvbuf;
        a.u.ag.recvcounts = recvcounts, a.u.ag.displs = displs;
        a.u.ag.blk.buf = recvbuf;
        a.u.ag.blk.counts = recvcounts, a.u.ag.blk.displs = displs;
        return agx_raise(comm, agx_repeat_run(ctx, &a));
    }
    agx_args a = {.op = AGX_OP_ALLGATHERV, .user_comm = comm,
                  .u.ag = {.sendbuf = sendbuf, .sendcount = sendcount, .sendtype = sendtype,
                           .recvbuf = recvbuf, .recvcounts = recvcounts, .displs = displs,
                           .recvtype = recvtype}};
    return agx_raise(comm, allgather_family(&a, -1, "agx_allgatherv"));
}

int agx_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                   MPI_Comm comm)
{
    agx_ctx *ctx = NULL;
    const agx_ag_memo *m = NULL;
    if (comm != MPI_COMM_NULL && agx_ctx_get(comm, &ctx) == MPI_SUCCESS &&
        (m = allgatherv_repeat(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, ctx)) &&
        m->native) {
        agx_repeat_note(ctx, &m->a);
        return agx_raise(comm, PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                               recvtype, m->a.comm));
    }
    return allgatherv_other(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, ctx, m);
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

/* ---- requests: agx_allgather(v)_init, agx_iallgather(v) ---- */
/* The library's own call of a request (MPI_Iallgather(v) on agx's duplicate). */
typedef struct {
    agx_ag_args g;
    agx_op op;
    int rank, p;
    long long bytes;
} ag_lib;

static int ag_lib_start(void *arg, MPI_Comm comm, MPI_Request *r)
{
    const ag_lib *l = arg;
    const agx_ag_args *g = &l->g;
    *r = MPI_REQUEST_NULL; /* complete at once: nothing to move, or (as native) one process */
    if (l->bytes == 0)
        return MPI_SUCCESS;
    if (l->op == AGX_OP_ALLGATHER)
        return PMPI_Iallgather(g->sendbuf, g->sendcount, g->sendtype, g->recvbuf, g->recvcount, g->recvtype,
                               comm, r);
    if (l->p == 1 && l->bytes > 0 && g->sendbuf != MPI_IN_PLACE) /* intra (bytes known) */
        return agx_localcopy(g->sendbuf, g->sendcount, g->sendtype,
                             (char *)g->recvbuf + (MPI_Aint)g->displs[0] * g->blk.extent, g->recvcounts[0],
                             g->recvtype);
    return PMPI_Iallgatherv(g->sendbuf, g->sendcount, g->sendtype, g->recvbuf, g->recvcounts, g->displs,
                            g->recvtype, comm, r);
}

static int allgather_request(agx_args *a, int persistent, const char *fn, agx_request *req)
{
    int rc = agx_request_begin(a, persistent, fn, req);
    if (!a->ctx)
        return rc;
    a->msg_bytes = -1; /* an inter-communicator: the library's call, whatever the sizes */
    if (rc == MPI_SUCCESS && a->kind == AGX_KIND_INTRA && (rc = check_args(a, -1, fn)) == MPI_SUCCESS &&
        (rc = layout(a, fn)) == MPI_SUCCESS)
        rc = agx_choose(a);
    ag_lib l0 = {.g = a->u.ag, .op = a->op, .rank = a->rank, .p = a->p, .bytes = a->msg_bytes};
    ag_lib *l = agx_lib_arg(&l0, sizeof l0, &rc, fn);
    return agx_api_request(a, persistent, rc, ag_lib_start, l, fn, req);
}

int agx_allgather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                       MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, agx_request *req)
{
    (void)info;
    agx_args a = {.op = AGX_OP_ALLGATHER, .user_comm = comm,
                  .u.ag = {.sendbuf = sendbuf, .sendcount = sendcount, .sendtype = sendtype,
                           .recvbuf = recvbuf, .recvcount = recvcount, .recvtype = recvtype}};
    return agx_raise(comm, allgather_request(&a, 1, "agx_allgather_init", req));
}

int agx_allgatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                        const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                        MPI_Info info, agx_request *req)
{
    (void)info;
    agx_args a = {.op = AGX_OP_ALLGATHERV, .user_comm = comm,
                  .u.ag = {.sendbuf = sendbuf, .sendcount = sendcount, .sendtype = sendtype, .recvbuf = recvbuf,
                           .recvcounts = recvcounts, .displs = displs, .recvtype = recvtype}};
    return agx_raise(comm, allgather_request(&a, 1, "agx_allgatherv_init", req));
}

int agx_iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                   MPI_Datatype recvtype, MPI_Comm comm, agx_request *req)
{
    agx_args a = {.op = AGX_OP_ALLGATHER, .user_comm = comm,
                  .u.ag = {.sendbuf = sendbuf, .sendcount = sendcount, .sendtype = sendtype,
                           .recvbuf = recvbuf, .recvcount = recvcount, .recvtype = recvtype}};
    return agx_raise(comm, allgather_request(&a, 0, "agx_iallgather", req));
}

int agx_iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                    agx_request *req)
{
    agx_args a = {.op = AGX_OP_ALLGATHERV, .user_comm = comm,
                  .u.ag = {.sendbuf = sendbuf, .sendcount = sendcount, .sendtype = sendtype, .recvbuf = recvbuf,
                           .recvcounts = recvcounts, .displs = displs, .recvtype = recvtype}};
    return agx_raise(comm, allgather_request(&a, 0, "agx_iallgatherv", req));
}
