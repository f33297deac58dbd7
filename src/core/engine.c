/*
 * The schedule engine: turns block sets into MPI messages on the receive layout and
 * runs the steps of a schedule from src/patterns (the LibNBC split: algorithms build
 * schedules, one engine executes them). Every message goes through here, so the
 * counters see all of agx's traffic.
 *
 * A block set becomes (address, count, type): the receive type itself when the blocks
 * are adjacent in memory (always so for a non-wrapping range of allgather), otherwise
 * an hindexed type over the blocks, created for the message and freed after it.
 */
#include "agx_internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    void *addr;
    int count;
    MPI_Datatype type;
    int owned;           /* type was created here */
    long long bytes;
} agx_msg;

static int msg_build(const agx_blocks *b, const agx_blockset *s, agx_msg *m)
{
    int nseg = 0, cap = 0, rc = MPI_SUCCESS;
    int *lens = NULL;
    MPI_Aint *disp = NULL;
    long long elems = 0;

    m->owned = 0;
    m->type = b->type;
    m->addr = b->buf;
    for (int i = 0; i < s->n; i++) {
        if (b->counts)
            cap += s->r[i].len;
        else
            cap += 1;
    }
    if (cap > 0) {
        lens = malloc(sizeof(int) * (size_t)cap);
        disp = malloc(sizeof(MPI_Aint) * (size_t)cap);
        if (!lens || !disp) {
            rc = MPI_ERR_NO_MEM;
            goto fn_exit;
        }
    }
    /* Segments in element units of b->type, adjacent ones merged. */
    for (int i = 0; i < s->n; i++) {
        int first = s->r[i].first, len = s->r[i].len;
        int step = b->counts ? 1 : len;
        for (int j = first; j < first + len; j += step) {
            MPI_Aint d = agx_blk_displ(b, j);
            long long c = b->counts ? b->counts[j] : (long long)b->ucount * len;
            if (c == 0)
                continue;
            elems += c;
            if (nseg > 0 && disp[nseg - 1] + lens[nseg - 1] == d)
                lens[nseg - 1] += (int)c;
            else {
                disp[nseg] = d;
                lens[nseg] = (int)c;
                nseg++;
            }
        }
    }
    m->bytes = elems * b->type_size;
    if (nseg == 0) {
        m->count = 0;
    } else if (nseg == 1) {
        m->addr = b->buf + disp[0] * b->extent;
        m->count = lens[0];
    } else {
        for (int i = 0; i < nseg; i++)
            disp[i] *= b->extent;
        rc = MPI_Type_create_hindexed(nseg, lens, disp, b->type, &m->type);
        if (rc == MPI_SUCCESS)
            rc = MPI_Type_commit(&m->type);
        if (rc != MPI_SUCCESS)
            goto fn_exit;
        m->owned = 1;
        m->count = 1;
    }
fn_exit:
    free(lens);
    free(disp);
    return rc;
}

static void msg_release(agx_msg *m)
{
    if (m->owned)
        MPI_Type_free(&m->type);
    m->owned = 0;
}

int agx_send_set(const agx_args *a, const agx_blockset *s, int peer)
{
    agx_msg m;
    int rc = msg_build(&a->blk, s, &m);
    if (rc != MPI_SUCCESS)
        return rc;
    agx_stats_count(a->ctx, peer, m.bytes);
    rc = MPI_Send(m.addr, m.count, m.type, peer, AGX_TAG, a->comm);
    msg_release(&m);
    return rc;
}

int agx_recv_set(const agx_args *a, const agx_blockset *s, int peer)
{
    agx_msg m;
    int rc = msg_build(&a->blk, s, &m);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = MPI_Recv(m.addr, m.count, m.type, peer, AGX_TAG, a->comm, MPI_STATUS_IGNORE);
    msg_release(&m);
    return rc;
}

int agx_irecv_set(const agx_args *a, const agx_blockset *s, int peer, MPI_Request *req,
                  MPI_Datatype *owned)
{
    agx_msg m;
    int rc = msg_build(&a->blk, s, &m);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = MPI_Irecv(m.addr, m.count, m.type, peer, AGX_TAG, a->comm, req);
    if (rc != MPI_SUCCESS) {
        msg_release(&m);
        return rc;
    }
    /* The caller frees a created type once the request completes. */
    *owned = m.owned ? m.type : MPI_DATATYPE_NULL;
    return rc;
}

int agx_waitall(int n, MPI_Request *req)
{
    /* real statuses: MPICH's access attributes make GCC warn on MPI_STATUSES_IGNORE */
    MPI_Status *st = malloc(sizeof(MPI_Status) * (size_t)(n > 0 ? n : 1));
    if (!st)
        return MPI_ERR_NO_MEM;
    int rc = MPI_Waitall(n, req, st);
    free(st);
    return rc;
}

void agx_cancel_all(int n, MPI_Request *req)
{
    for (int i = 0; i < n; i++) {
        MPI_Cancel(&req[i]);
        MPI_Request_free(&req[i]);
    }
}

int agx_run_plan(const agx_args *a, const agx_blocks *blk, const agx_plan *pl)
{
    int rc = MPI_SUCCESS, i = 0;
    MPI_Request *req = malloc(sizeof(MPI_Request) * (size_t)(pl->n > 0 ? pl->n : 1));
    agx_msg *msg = malloc(sizeof(agx_msg) * (size_t)(pl->n > 0 ? pl->n : 1));
    if (!req || !msg) {
        free(req);
        free(msg);
        return MPI_ERR_NO_MEM;
    }
    /* one step at a time: post its receives and sends together, then wait */
    while (i < pl->n && rc == MPI_SUCCESS) {
        int j = i, nreq = 0;
        while (j < pl->n && pl->ops[j].step == pl->ops[i].step)
            j++;
        for (int k = i; k < j && rc == MPI_SUCCESS; k++) {
            const agx_pop *op = &pl->ops[k];
            if ((rc = msg_build(blk, &op->set, &msg[nreq])) != MPI_SUCCESS)
                break;
            if (op->send) {
                agx_stats_count(a->ctx, op->peer, msg[nreq].bytes);
                rc = MPI_Isend(msg[nreq].addr, msg[nreq].count, msg[nreq].type, op->peer, AGX_TAG,
                               a->comm, &req[nreq]);
            } else {
                rc = MPI_Irecv(msg[nreq].addr, msg[nreq].count, msg[nreq].type, op->peer, AGX_TAG,
                               a->comm, &req[nreq]);
            }
            if (rc != MPI_SUCCESS)
                msg_release(&msg[nreq]);
            else
                nreq++;
        }
        if (rc == MPI_SUCCESS)
            rc = agx_waitall(nreq, req);
        else
            agx_cancel_all(nreq, req);
        for (int k = 0; k < nreq; k++)
            msg_release(&msg[k]);
        i = j;
    }
    free(req);
    free(msg);
    return rc;
}

static int sendrecv_sets(const agx_args *a, const agx_xfer *snd, const agx_xfer *rcv)
{
    agx_msg ms, mr;
    int rc = msg_build(&a->blk, &snd->set, &ms);
    if (rc != MPI_SUCCESS)
        return rc;
    if ((rc = msg_build(&a->blk, &rcv->set, &mr)) != MPI_SUCCESS) {
        msg_release(&ms);
        return rc;
    }
    agx_stats_count(a->ctx, snd->peer, ms.bytes);
    rc = MPI_Sendrecv(ms.addr, ms.count, ms.type, snd->peer, AGX_TAG, mr.addr, mr.count,
                      mr.type, rcv->peer, AGX_TAG, a->comm, MPI_STATUS_IGNORE);
    msg_release(&ms);
    msg_release(&mr);
    return rc;
}

int agx_run_schedule(const agx_args *a, agx_nsteps_fn nsteps, agx_step_fn step)
{
    int rc = MPI_SUCCESS, n = nsteps(a->p);
    for (int s = 0; s < n && rc == MPI_SUCCESS; s++) {
        agx_step st;
        step(a->rank, a->p, s, &st);
        if (st.send.peer >= 0 && st.recv.peer >= 0)
            rc = sendrecv_sets(a, &st.send, &st.recv);
        else if (st.send.peer >= 0)
            rc = agx_send_set(a, &st.send.set, st.send.peer);
        else if (st.recv.peer >= 0)
            rc = agx_recv_set(a, &st.recv.set, st.recv.peer);
    }
    return rc;
}

/* ---- local copies ---- */

static int is_named(MPI_Datatype t)
{
    int ni, na, nd, comb;
    MPI_Type_get_envelope(t, &ni, &na, &nd, &comb);
    return comb == MPI_COMBINER_NAMED;
}

static MPI_Comm self_comm = MPI_COMM_NULL;
static pthread_mutex_t self_lock = PTHREAD_MUTEX_INITIALIZER;

static int self_comm_free(MPI_Comm c, int k, void *v, void *e)
{
    (void)c; (void)v; (void)e;
    if (self_comm != MPI_COMM_NULL)
        MPI_Comm_free(&self_comm);
    MPI_Comm_free_keyval(&k);
    return MPI_SUCCESS;
}

/* A private MPI_COMM_SELF duplicate, so local copies never match user messages. */
static int get_self_comm(MPI_Comm *out)
{
    int rc = MPI_SUCCESS;
    pthread_mutex_lock(&self_lock);
    if (self_comm == MPI_COMM_NULL) {
        int kv;
        rc = MPI_Comm_dup(MPI_COMM_SELF, &self_comm);
        if (rc == MPI_SUCCESS) {
            MPI_Comm_set_errhandler(self_comm, MPI_ERRORS_RETURN);
            MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, self_comm_free, &kv, NULL);
            MPI_Comm_set_attr(MPI_COMM_SELF, kv, NULL);
        }
    }
    *out = self_comm;
    pthread_mutex_unlock(&self_lock);
    return rc;
}

int agx_localcopy(const void *src, int scount, MPI_Datatype stype, void *dst, int dcount,
                  MPI_Datatype dtype)
{
    int ssize, dsize;
    MPI_Type_size(stype, &ssize);
    MPI_Type_size(dtype, &dsize);
    if ((long long)ssize * scount == 0)
        return MPI_SUCCESS;
    if (is_named(stype) && is_named(dtype)) {
        memcpy(dst, src, (size_t)ssize * (size_t)scount);
        return MPI_SUCCESS;
    }
    MPI_Comm self;
    int rc = get_self_comm(&self);
    if (rc != MPI_SUCCESS)
        return rc;
    return MPI_Sendrecv(src, scount, stype, 0, AGX_TAG, dst, dcount, dtype, 0, AGX_TAG, self,
                        MPI_STATUS_IGNORE);
}

int agx_copy_own_block(const agx_args *a)
{
    if (a->sendbuf == MPI_IN_PLACE)
        return MPI_SUCCESS;
    const agx_blocks *b = &a->blk;
    return agx_localcopy(a->sendbuf, a->sendcount, a->sendtype,
                         b->buf + agx_blk_displ(b, a->rank) * b->extent,
                         agx_blk_count(b, a->rank), b->type);
}
