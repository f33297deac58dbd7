/*
 * The schedule engine: the one place where agx's messages are made (their making is
 * message.c's; plan.c runs the same schedules from messages built once). It runs a
 * schedule (src/patterns/patterns.h) round by round over the call's buffers: all receives
 * and sends of a round are posted together and waited for (ASYNC ones only at the end),
 * then the round's local copies and reductions run. Every message goes through here or a
 * plan, so the counters see all of agx's traffic.
 */
#include "message.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void agx_cancel_all(int n, MPI_Request *req)
{
    for (int i = 0; i < n; i++) {
        if (req[i] == MPI_REQUEST_NULL)
            continue;
        MPI_Cancel(&req[i]);
        PMPI_Request_free(&req[i]);
    }
}

/* Copy or reduce block by block from buffer op->src into op->buf. */
int agx_local_op(const agx_exec *x, const agx_sched *s, const agx_sop *op)
{
    const agx_blocks *d = &x->bufs[op->buf], *f = &x->bufs[op->src];
    int rc = MPI_SUCCESS;
    for (int i = 0; i < op->nr && rc == MPI_SUCCESS; i++)
        for (int b = s->ranges[op->r0 + i].first; b < s->ranges[op->r0 + i].first + s->ranges[op->r0 + i].len &&
                                                   rc == MPI_SUCCESS; b++) {
            char *dst = d->buf + agx_blk_displ(d, b) * d->extent;
            const char *src = f->buf + agx_blk_displ(f, b) * f->extent;
            if (op->kind == AGX_SOP_COPY)
                rc = agx_localcopy(src, agx_blk_count(f, b), f->type, dst, agx_blk_count(d, b), d->type);
            else
                for (MPI_Aint o = 0, n = agx_blk_count(d, b); o < n && rc == MPI_SUCCESS; o += AGX_MAX_PIECE)
                    rc = MPI_Reduce_local(src + o * f->extent, dst + o * d->extent,
                                          (int)(n - o < AGX_MAX_PIECE ? n - o : AGX_MAX_PIECE), d->type, x->op);
        }
    return rc;
}

/* Wait for request k and check it (a send: its completion only). */
static int wait_one(agx_reqs *v, int k, MPI_Status *st, agx_mismatch *bad)
{
    int err = PMPI_Wait(&v->req[k], st);
    if (v->msg[k].recv)
        err = agx_arrived(err, &v->msg[k], st, bad);
    return err;
}

/* Wait for the posted requests (or, on an earlier error, cancel them), check each
 * arrival's size and release the messages' types. A failed request in MPI_Waitall may
 * leave others pending (MPI_ERR_PENDING): those are waited for one by one. */
static int complete(int rc, agx_reqs *v, agx_mismatch *bad)
{
    int n = v->n, tracing = agx_stats_tracing();
    MPI_Status *st = malloc(sizeof(MPI_Status) * (size_t)(n > 0 ? n : 1));
    if (!st && rc == MPI_SUCCESS)
        rc = MPI_ERR_NO_MEM;
    if (rc != MPI_SUCCESS)
        agx_cancel_all(n, v->req);
    else if (!tracing) {
        int wrc, flag = 0;
        if (agx_req_any_active()) /* the progress rule: active requests advance meanwhile */
            while ((wrc = PMPI_Testall(n, v->req, &flag, st)) == MPI_SUCCESS && !flag)
                agx_req_progress();
        else
            wrc = PMPI_Waitall(n, v->req, st);
        for (int k = 0; k < n; k++) {
            int err = wrc == MPI_ERR_IN_STATUS ? st[k].MPI_ERROR : wrc;
            if (err == MPI_ERR_PENDING)
                err = wait_one(v, k, &st[k], bad);
            else if (v->msg[k].recv)
                err = agx_arrived(err, &v->msg[k], &st[k], bad);
            rc = rc == MPI_SUCCESS ? err : rc; /* the first error; every request still completes */
        }
    }
    for (int k = 0, idx; k < n && tracing && rc == MPI_SUCCESS; k++) {
        int err = PMPI_Waitany(n, v->req, &idx, &st[0]);
        if (idx == MPI_UNDEFINED)
            rc = err;
        else if (v->msg[idx].recv) {
            agx_stats_arrival(PMPI_Wtime());
            rc = agx_arrived(err, &v->msg[idx], &st[0], bad);
        } else
            rc = err;
    }
    if (tracing && rc != MPI_SUCCESS)
        agx_cancel_all(n, v->req);
    free(st);
    for (int k = 0; k < n; k++)
        agx_msg_release(&v->msg[k]);
    v->n = 0;
    return rc;
}

int agx_sched_run(const agx_exec *x, const agx_sched *s)
{
    int rc = MPI_SUCCESS, i = 0;
    agx_reqs rq = {0}, aq = {0}; /* a round's requests, and the ASYNC ones (waited at the end) */
    agx_mismatch bad = {0};
    if (agx_reqs_grow(&rq, s->n > 0 ? s->n : 1) != MPI_SUCCESS || agx_reqs_grow(&aq, 1) != MPI_SUCCESS) {
        agx_reqs_free(&rq), agx_reqs_free(&aq);
        return agx_error(MPI_ERR_NO_MEM, "out of memory running a schedule of %d operations", s->n);
    }
    while (i < s->n && rc == MPI_SUCCESS) {
        int j = i;
        while (j < s->n && s->ops[j].round == s->ops[i].round)
            j++;
        /* receives first, then sends, so an eager send finds its receive posted */
        for (int pass = 0; pass < 2 && rc == MPI_SUCCESS; pass++)
            for (int k = i; k < j && rc == MPI_SUCCESS; k++) {
                const agx_sop *op = &s->ops[k];
                if (op->kind == (pass ? AGX_SOP_SEND : AGX_SOP_RECV))
                    rc = agx_post(x, s, op, op->flags & AGX_SOP_ASYNC ? &aq : &rq, AGX_POST_NOW);
            }
        rc = complete(rc, &rq, &bad);
        for (int k = i; k < j && rc == MPI_SUCCESS; k++)
            if (s->ops[k].kind == AGX_SOP_COPY || s->ops[k].kind == AGX_SOP_REDUCE)
                rc = agx_local_op(x, s, &s->ops[k]);
        i = j;
    }
    rc = complete(rc, &aq, &bad);
    agx_reqs_free(&rq), agx_reqs_free(&aq);
    if (rc == MPI_SUCCESS && bad.n)
        rc = agx_mismatch_error(&bad);
    return rc;
}

void agx_blocks_bytes(agx_blocks *b, void *buf, int n, const MPI_Aint *counts, const MPI_Aint *displs)
{
    *b = (agx_blocks){.buf = buf, .type = MPI_BYTE, .extent = 1, .type_size = 1, .p = n,
                      .lcounts = counts, .ldispls = displs};
}
