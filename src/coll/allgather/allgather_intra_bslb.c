/*
 * Background Sorted Linear synchronized tree with Broadcast (Proficz21, Listing 3): the
 * PAP-aware gather BSLS to rank 0, then the MPI library's broadcast.
 *
 * Steps: the monitor thread (src/pat) exchanges the predicted arrivals during the compute
 * phase; plan() orders the non-roots by predicted arrival; rank 0's background() then
 * gathers one process at a time, the first ready one in that order: a non-root that
 * reaches the call sends the first AGX_PAT_SHORT_BYTES of its block (the ready signal),
 * waits for rank 0's GO, and sends the rest (a three-round schedule). Rank 0 receives
 * straight into its receive buffer once it is in the call itself, into staging before.
 * Finally MPI_Bcast of the p blocks from rank 0 on the session's communicator.
 * Cost: gather (p-1).(2.alpha + n/p.beta) + GO signals, serialised at rank 0 but
 * overlapped with rank 0's computation; then the library's bcast of n bytes. A wrong
 * prediction only reorders ready processes (this implementation serves whoever is ready
 * first among the predicted order; the paper's strict order could wait for a late one).
 * Without a prepared epoch it is gather_bcast. Without the thread, agx_pat_predict plans
 * the epoch and post() replaces the handshake by pre-posted receives (see there).
 * Counters: the short and rest messages are counted; the GO signals (0 bytes) and the
 * library's bcast are not visible to agx.
 * Memory requirements: rank 0 stages blocks that arrive before its own call.
 */
#include "bdr.h"
#include "coll_allgather.h"
#include "pat.h"

#include <stdlib.h>
#include <string.h>

/* BSLB: bytes of the first (ready-signal) segment. */
#define SHORT_BYTES 256

/* The non-roots by predicted arrival. */
static int plan(agx_pat *s, const double *arrival, double tau)
{
    (void)tau;
    int *order = malloc(sizeof(int) * (size_t)s->p);
    if (!order || agx_order_by_arrival(s->p - 1, arrival + 1, 0, order)) {
        free(order);
        return MPI_ERR_NO_MEM;
    }
    for (int k = 0; k < s->p - 1; k++)
        order[k] += 1;
    s->state = order;
    return MPI_SUCCESS;
}

/* The first ready non-root in predicted order (-1: cancelled), its short message probed. */
static int next_ready(agx_pat *s, const char *served, MPI_Message *msg, MPI_Status *st, int *rc)
{
    const int *order = s->state;
    int flag = 0, us = 10;
    for (;;) {
        for (int k = 0; k < s->p - 1 && *rc == MPI_SUCCESS; k++) {
            if (served[order[k]])
                continue;
            *rc = MPI_Improbe(order[k], AGX_PAT_TAG_SHORT, s->data, &flag, msg, st);
            if (flag)
                return order[k];
        }
        if (*rc != MPI_SUCCESS || atomic_load(&s->cancel))
            return -1;
        agx_pat_backoff(s, &us);
    }
}

/* The rest of q's block after its short part: into the target when known, else staged. */
static int recv_rest(agx_pat *s, int q, const char *shortbuf, int ns)
{
    MPI_Message m2;
    MPI_Status st2;
    int nr = 0, rc = MPI_Mprobe(q, AGX_PAT_TAG_REST, s->data, &m2, &st2);
    MPI_Get_count(&st2, MPI_BYTE, &nr);
    pthread_mutex_lock(&s->mu);
    char *d = s->target && (long long)ns + nr == s->blk ? s->target + (long long)q * s->blk : NULL;
    pthread_mutex_unlock(&s->mu);
    if (rc == MPI_SUCCESS && !d) {
        d = s->stage[q] = malloc((size_t)ns + (size_t)nr + 1);
        s->stage_len[q] = (long long)ns + nr;
        if (!d) {
            char sink;
            MPI_Mrecv(&sink, 0, MPI_BYTE, &m2, MPI_STATUS_IGNORE);
            return MPI_ERR_NO_MEM;
        }
    }
    if (rc == MPI_SUCCESS) {
        memcpy(d, shortbuf, (size_t)ns);
        rc = MPI_Mrecv(d + ns, nr, MPI_BYTE, &m2, MPI_STATUS_IGNORE);
    }
    s->bg_recvs++;
    return rc;
}

/* Rank 0: serve the non-roots one at a time, the first ready one in predicted order: its
 * short segment says it is ready, the root answers GO and receives the rest. One large
 * transfer at a time (the "synchronized" linear tree of BSLS). */
static int background(agx_pat *s)
{
    int left = s->p - 1, rc = MPI_SUCCESS;
    if (s->rank != 0)
        return MPI_SUCCESS;
    char *served = calloc((size_t)s->p, 1);
    if (!served)
        return MPI_ERR_NO_MEM;
    while (left > 0 && rc == MPI_SUCCESS && !atomic_load(&s->cancel)) {
        MPI_Message msg;
        MPI_Status st;
        int ns, q = next_ready(s, served, &msg, &st, &rc);
        if (q < 0)
            break;
        MPI_Get_count(&st, MPI_BYTE, &ns);
        char *shortbuf = malloc((size_t)ns + 1);
        if (!shortbuf) {
            rc = MPI_ERR_NO_MEM;
            break;
        }
        rc = MPI_Mrecv(shortbuf, ns, MPI_BYTE, &msg, MPI_STATUS_IGNORE);
        if (rc == MPI_SUCCESS)
            rc = MPI_Send(NULL, 0, MPI_BYTE, q, AGX_PAT_TAG_GO, s->data);
        if (rc == MPI_SUCCESS)
            rc = recv_rest(s, q, shortbuf, ns);
        free(shortbuf);
        served[q] = 1;
        left--;
    }
    free(served);
    return rc;
}

static void clear(agx_pat *s) { free(s->state); }

/* Without the thread (agx_pat_predict) the root cannot answer ready signals while it
 * computes: it posts one receive per non-root's whole block instead, and each non-root
 * sends its block in one message when it arrives (no GO: the blocks share the root's
 * link instead of taking turns). */
static int post(agx_pat *s)
{
    int rc = MPI_SUCCESS;
    for (int q = 1; q < s->p && s->rank == 0 && rc == MPI_SUCCESS; q++)
        rc = agx_pat_post_recv(s, q, AGX_PAT_TAG_REST, q);
    return rc;
}

const struct agx_pat_alg agx_bslb_pat = {plan, background, clear, post};

/* A non-root's part: short segment, GO, rest (rounds 0-2 over the pieces of its block);
 * without the thread, the whole block in one message. */
static int nonroot(const agx_args *a, agx_pat_call *c)
{
    long long ns = c->blk < SHORT_BYTES ? c->blk : SHORT_BYTES;
    MPI_Aint counts[3] = {ns, c->blk - ns, 0}, displs[3] = {0, ns, 0};
    agx_blocks own;
    agx_sched s;
    agx_blocks_bytes(&own, c->target + (long long)c->rank * c->blk, 3, counts, displs);
    agx_sched_init(&s);
    agx_blockset b0, b1, b2;
    agx_set_clear(&b0), agx_set_clear(&b1), agx_set_clear(&b2);
    agx_set_add(&b0, 0, 1), agx_set_add(&b1, 1, 1), agx_set_add(&b2, 2, 1);
    if (c->s->threaded) {
        agx_sched_add_ex(&s, 0, AGX_SOP_SEND, 0, AGX_PAT_TAG_SHORT, 0, 0, &b0);
        agx_sched_add_ex(&s, 1, AGX_SOP_RECV, 0, AGX_PAT_TAG_GO, 0, 0, &b2);
        agx_sched_add_ex(&s, 2, AGX_SOP_SEND, 0, AGX_PAT_TAG_REST, 0, 0, &b1);
    } else { /* the root posted a receive of the whole block (post) */
        agx_set_add(&b0, 1, 1);
        agx_sched_add_ex(&s, 0, AGX_SOP_SEND, 0, AGX_PAT_TAG_REST, 0, 0, &b0);
    }
    agx_exec x = {.comm = c->data, .bufs = &own, .nbufs = 1,
                  .node_of = a->ctx->reg ? a->ctx->reg->region_of : NULL, .me = a->rank};
    int rc = s.bad ? agx_error(MPI_ERR_NO_MEM, "bslb: out of memory") : agx_sched_run(&x, &s);
    agx_sched_free(&s);
    return rc;
}

int agx_allgather_intra_bslb(const agx_args *a)
{
    agx_pat_call c;
    int rc = agx_pat_call_begin(a, a->rank == 0, &c);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!c.s)
        return agx_allgather_intra_gather_bcast(a);
    if (c.rank != 0)
        rc = nonroot(a, &c);
    if (rc == MPI_SUCCESS && c.blk > 0) {
        MPI_Datatype block;
        rc = MPI_Type_contiguous((int)c.blk, MPI_BYTE, &block);
        if (rc == MPI_SUCCESS && (rc = MPI_Type_commit(&block)) == MPI_SUCCESS) {
            rc = MPI_Bcast(c.target, c.p, block, 0, c.data);
            MPI_Type_free(&block);
        }
    }
    return agx_pat_call_end(a, &c, 0, rc);
}
