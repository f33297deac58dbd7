/*
 * One order per communicator (docs/algorithms.md "Requests"): the collectives agx's
 * requests post on a context's private communicator (pcomm), queued in call order.
 *
 * MPI matches the collectives of one communicator by the order each process posts them.
 * A request posts two kinds on pcomm: its agreement (agx_req_gate: an MPI_Iallreduce of
 * "every rank made it") and, when its algorithm is not one schedule, the library's own
 * non-blocking call (MPI_Iallreduce, MPI_Iallgather(v), MPI_Ialltoallv), which may be
 * posted only once the agreement has completed. Agreements complete at different times on
 * different processes, so calls posted "when the agreement completes", from whichever
 * thread advanced the request, were posted in different orders on different processes
 * (two outstanding requests' calls, or one call and a later request's agreement), and the
 * library matched the wrong ones: MPI_ERR_TRUNCATE inside Open MPI's schedule, hangs and
 * errors under MPICH (issue 55). So each context keeps a queue of its requests in call
 * order (the program's, the same on every process: MPI requires collective calls in the
 * same order), and only its head posts: its agreement at once, its library call once the
 * agreement has completed; a request whose rounds are agx's own point-to-point messages (a
 * plan, with the request's own tag) leaves the queue once its agreement is posted. Every
 * process therefore posts a communicator's collectives in call order, whatever the
 * arrival times and whichever thread drives. Blocking collectives agx posts on pcomm
 * (agreements of blocking calls and inits, set-ups) come after agx_req_flush has emptied
 * the queue: waiting there for earlier requests' agreements waits for every process to
 * have made those earlier calls, which the blocking collective needs anyway.
 * A failed agreement completes its request with the error without posting its call (on
 * every rank: the agreement's result is the same everywhere). Callers hold request.c's
 * lock.
 */
#include "request.h"

/* The head's agreement posted, if not yet; its code (an MPI error ends the request). */
static int post_gate(agx_req *h)
{
    if (!h->gate_post)
        return MPI_SUCCESS;
    h->gate_post = 0;
    return PMPI_Iallreduce(&h->gate_mine, &h->gate_any, 1, MPI_INT, MPI_MAX, h->ctx->pcomm, &h->gate);
}

static void pop(agx_ctx *ctx, agx_req *h)
{
    ctx->lq_head = h->lq_next;
    if (!ctx->lq_head)
        ctx->lq_tail = NULL;
    h->queued = 0;
    h->lq_next = NULL;
}

void agx_lib_pump(agx_ctx *ctx)
{
    int pending;
    while (ctx->lq_head) {
        agx_req *h = ctx->lq_head;
        int rc = post_gate(h);
        if (rc == MPI_SUCCESS && h->plan) { /* its rounds are its own: round 0 when the gate opens */
            pop(ctx, h);
            continue;
        }
        if (rc == MPI_SUCCESS && h->gate != MPI_REQUEST_NULL &&
            ((rc = agx_req_gate_open(h, 0, &pending)) == MPI_SUCCESS && pending))
            return;
        pop(ctx, h);
        if (rc == MPI_SUCCESS)
            rc = h->lib_start(h->lib_arg, h->ctx->pcomm, &h->lib);
        if (rc != MPI_SUCCESS)
            agx_req_finish(h, rc);
    }
}

void agx_lib_enqueue(agx_req *r)
{
    agx_ctx *ctx = r->ctx;
    r->queued = 1;
    r->lq_next = NULL;
    if (ctx->lq_tail)
        ctx->lq_tail->lq_next = r;
    else
        __atomic_store_n(&ctx->lq_head, r, __ATOMIC_RELEASE);
    ctx->lq_tail = r;
}
