/*
 * agx_allreduce: check, select, run.
 *
 * The checks are local, like the library's own MPI_Allreduce: a correct program gives
 * every rank the same count, datatype and op, so every rank makes the same choice. The
 * one condition a rank sees alone, failing to allocate scratch, is agreed on by the
 * runner before any message (allreduce_run.c); small vectors use scratch on the stack
 * and need no agreement.
 */
#include "api.h"
#include "coll_allreduce.h"

#include <stdio.h>
#include <stdlib.h>

static int check_args(agx_args *a, const char *fn)
{
    agx_ar_args *g = &a->u.ar;
    int rc, size;
    if (g->count < 0)
        return agx_error(MPI_ERR_COUNT, "%s: count %d is negative", fn, g->count);
    if ((rc = agx_type_check(g->type, fn, "datatype")) != MPI_SUCCESS)
        return rc;
    if (g->op == MPI_OP_NULL)
        return agx_error(MPI_ERR_OP, "%s: op is MPI_OP_NULL", fn);
    if ((rc = agx_check_buffer(g->recvbuf, g->count, g->type, "recvbuf")) != MPI_SUCCESS ||
        (g->sendbuf != MPI_IN_PLACE && (rc = agx_check_buffer(g->sendbuf, g->count, g->type, "sendbuf"))))
        return rc;
    if (g->sendbuf == g->recvbuf && g->count > 0)
        return agx_error(MPI_ERR_BUFFER, "%s: sendbuf and recvbuf are the same buffer (use MPI_IN_PLACE)", fn);
    if ((rc = MPI_Op_commutative(g->op, &g->commutative)) != MPI_SUCCESS)
        return rc;
    if ((rc = agx_ar_type(g)) != MPI_SUCCESS)
        return rc;
    MPI_Type_size(g->type, &size);
    a->msg_bytes = (long long)g->count * size;
    return MPI_SUCCESS;
}

/* AGX_CHECK_ARGS=1: the ranks agree on the call's signature (count x type size, the
 * element type's class and size, the op) and on local errors before any message, so a
 * mismatch is one error on every rank instead of a wrong answer, a truncation on some
 * ranks or a wait that never ends. One 3-value allreduce per call (docs/algorithms.md). */
static int agree_args(agx_args *a, int local, const char *fn)
{
    long long v[2] = {0, 0};
    if (local == MPI_SUCCESS) {
        v[0] = agx_ar_signature(&a->u.ar);
        v[1] = -v[0];
    }
    int rc = agx_agree(a->comm, a->rank, local, v, 2, fn, "found its arguments wrong");
    if (rc != MPI_SUCCESS)
        return rc;
    if (v[0] != -v[1])
        return agx_error(MPI_ERR_ARG, "%s: the ranks passed different counts, datatypes or ops "
                         "(AGX_CHECK_ARGS found their signatures differ)", fn);
    return MPI_SUCCESS;
}

/* The communicator's last blocking intra allreduce with a common predefined type and a
 * predefined op (the context's AGX_SLOT_API_AR), its arguments after the checks, the type's
 * analysis and the selection: a repeat (the same count, type, op, in-place-ness and forced
 * choices) would come out the same, so it runs the algorithm with the new buffers. Not
 * made in a learning window (the candidate changes from call to call) nor under
 * AGX_CHECK_ARGS (each call agrees). The whole path costs about 1000 instructions more. */
typedef struct {
    int valid, inplace, count, native; /* native: agx_repeat_native */
    MPI_Datatype type;
    MPI_Op op;
    unsigned gen;  /* sel->gen when it was made */
    agx_args a;
} ar_memo;

static const ar_memo *repeat(const void *sendbuf, const void *recvbuf, int count, MPI_Datatype type, MPI_Op op,
                             agx_ctx *ctx)
{
    const ar_memo *m = agx_ctx_slot(ctx, AGX_SLOT_API_AR);
    return m && m->valid && m->count == count && m->type == type && m->op == op &&
                   m->inplace == (sendbuf == MPI_IN_PLACE) && m->gen == m->a.sel->gen &&
                   (count == 0 || (recvbuf && sendbuf && sendbuf != recvbuf))
               ? m
               : NULL;
}

static void remember(const agx_args *a)
{
    const agx_ar_args *g = &a->u.ar;
    ar_memo *m = agx_ctx_slot(a->ctx, AGX_SLOT_API_AR);
    if (a->kind != AGX_KIND_INTRA || a->learn || a->ctx->check_args || !g->predef || !agx_type_common_size(g->type)) {
        if (m)
            m->valid = 0;
        return;
    }
    if (!(m = agx_memo_slot(a->ctx, AGX_SLOT_API_AR, sizeof *m)))
        return;
    *m = (ar_memo){.valid = 1, .inplace = g->sendbuf == MPI_IN_PLACE, .count = g->count, .type = g->type,
                   .op = g->op, .gen = a->sel->gen, .native = agx_repeat_native(a), .a = *a};
}

static int allreduce(agx_args *a, const char *fn)
{
    int rc;
    agx_coll_install();
    if ((rc = agx_call_begin(a, fn)) != MPI_SUCCESS)
        return rc;
    rc = check_args(a, fn);
    if (a->ctx->check_args && a->kind == AGX_KIND_INTRA && a->p > 1)
        rc = agree_args(a, rc, fn);
    if (rc != MPI_SUCCESS || (rc = agx_choose(a)) != MPI_SUCCESS)
        return rc;
    remember(a);
    return agx_run(a);
}

/* Kept for the thread's last named type and predefined op (neither is ever freed): the
 * preload asks at every non-blocking call, and the analysis costs 57 ns. */
static AGX_HOT_STORAGE struct {
    MPI_Datatype type;
    MPI_Op op;
    int valid, exact;
} last_exact;

int agx_allreduce_exact(MPI_Datatype datatype, MPI_Op op)
{
    agx_ar_args g = {.type = datatype, .op = op};
    if (last_exact.valid && last_exact.type == datatype && last_exact.op == op)
        return last_exact.exact;
    if (datatype == MPI_DATATYPE_NULL || op == MPI_OP_NULL || agx_ar_type(&g) != MPI_SUCCESS)
        return 0;
    int e = g.exact && !g.unproven;
    if (g.predef && g.base == datatype)
        last_exact.type = datatype, last_exact.op = op, last_exact.exact = e, last_exact.valid = 1;
    return e;
}

/* Every call but a repeat that goes to the library's call: out of line, so that one's
 * path keeps a small frame. */
static __attribute__((noinline)) int allreduce_other(const void *sendbuf, void *recvbuf, int count,
                                                    MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                                    agx_ctx *ctx, const ar_memo *m)
{
    if (m) {
        agx_args a = m->a;
        a.u.ar.sendbuf = sendbuf;
        a.u.ar.recvbuf = recvbuf;
        return agx_raise(comm, agx_repeat_run(ctx, &a));
    }
    agx_args a = {.op = AGX_OP_ALLREDUCE, .user_comm = comm,
                  .u.ar = {.sendbuf = sendbuf, .recvbuf = recvbuf, .count = count, .type = datatype, .op = op}};
    return agx_raise(comm, allreduce(&a, "agx_allreduce"));
}

int agx_allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                  MPI_Comm comm)
{
    agx_ctx *ctx = NULL;
    const ar_memo *m = NULL;
    if (comm != MPI_COMM_NULL && agx_ctx_get(comm, &ctx) == MPI_SUCCESS &&
        (m = repeat(sendbuf, recvbuf, count, datatype, op, ctx)) && m->native) {
        agx_repeat_note(ctx, &m->a);
        return agx_raise(comm, PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, m->a.comm));
    }
    return allreduce_other(sendbuf, recvbuf, count, datatype, op, comm, ctx, m);
}

/* ---- requests: agx_allreduce_init, agx_iallreduce: a plan of the chosen algorithm where
 * it is one schedule (.plans), else the library's MPI_Iallreduce at each start ---- */
typedef struct {
    agx_ar_args g;
} ar_lib;

static int ar_lib_start(void *arg, MPI_Comm comm, MPI_Request *r)
{
    const ar_lib *l = arg;
    return PMPI_Iallreduce(l->g.sendbuf, l->g.recvbuf, l->g.count, l->g.type, l->g.op, comm, r);
}

static int allreduce_request(agx_args *a, int persistent, const char *fn, agx_request *req)
{
    int rc = agx_request_begin(a, persistent, fn, req);
    if (!a->ctx)
        return rc;
    if (rc == MPI_SUCCESS && a->kind == AGX_KIND_INTRA && (rc = check_args(a, fn)) == MPI_SUCCESS)
        rc = agx_choose(a);
    ar_lib l0 = {.g = a->u.ar};
    ar_lib *l = agx_lib_arg(&l0, sizeof l0, &rc, fn);
    return agx_api_request(a, persistent, rc, ar_lib_start, l, fn, req);
}

int agx_allreduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                       MPI_Comm comm, MPI_Info info, agx_request *req)
{
    (void)info;
    agx_args a = {.op = AGX_OP_ALLREDUCE, .user_comm = comm,
                  .u.ar = {.sendbuf = sendbuf, .recvbuf = recvbuf, .count = count, .type = datatype, .op = op}};
    return agx_raise(comm, allreduce_request(&a, 1, "agx_allreduce_init", req));
}

int agx_iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                   MPI_Comm comm, agx_request *req)
{
    agx_args a = {.op = AGX_OP_ALLREDUCE, .user_comm = comm,
                  .u.ar = {.sendbuf = sendbuf, .recvbuf = recvbuf, .count = count, .type = datatype, .op = op}};
    return agx_raise(comm, allreduce_request(&a, 0, "agx_iallreduce", req));
}
