/*
 * Messages of the schedule engine and of plans (message.h): a block set becomes (address,
 * count, type): the layout's type itself when the blocks are adjacent in memory (always so
 * for a non-wrapping range of allgather) and number at most AGX_MAX_PIECE elements,
 * otherwise an hindexed type over the blocks (cut into pieces of at most AGX_MAX_PIECE
 * elements), created for the message and freed after it. So message sizes are 64-bit end
 * to end: MPI sees int counts only. SMPI builds send the pieces as separate messages
 * instead where both sides cut alike (agx_post).
 */
#include "message.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Segments of ranges r[0..nr) of layout b, in element units, adjacent ones merged. */
static int msg_segments(const agx_blocks *b, const agx_range *r, int nr, MPI_Aint *disp, MPI_Aint *lens,
                        long long *elems)
{
    int nseg = 0, listed = agx_blk_listed(b);
    for (int i = 0; i < nr; i++) {
        int step = listed ? 1 : r[i].len;
        for (int j = r[i].first; j < r[i].first + r[i].len; j += step) {
            MPI_Aint d = agx_blk_displ(b, j);
            MPI_Aint c = listed ? agx_blk_count(b, j) : (MPI_Aint)b->ucount * r[i].len;
            if (c == 0)
                continue;
            *elems += c;
            if (nseg > 0 && disp[nseg - 1] + lens[nseg - 1] == d)
                lens[nseg - 1] += c;
            else {
                disp[nseg] = d;
                lens[nseg] = c;
                nseg++;
            }
        }
    }
    return nseg;
}

/* An hindexed type over the segments, each cut into pieces of at most AGX_MAX_PIECE
 * elements, so no block length exceeds an int whatever the message size. */
static int msg_type(const agx_blocks *b, const MPI_Aint *disp, const MPI_Aint *lens, int nseg, MPI_Datatype *t)
{
    int npc = 0, rc;
    for (int i = 0; i < nseg; i++)
        npc += (int)((lens[i] + AGX_MAX_PIECE - 1) / AGX_MAX_PIECE);
    int *bl = malloc(sizeof(int) * (size_t)npc);
    MPI_Aint *bd = malloc(sizeof(MPI_Aint) * (size_t)npc);
    if (!bl || !bd) {
        free(bl);
        free(bd);
        return MPI_ERR_NO_MEM;
    }
    npc = 0;
    for (int i = 0; i < nseg; i++)
        for (MPI_Aint o = 0; o < lens[i]; o += AGX_MAX_PIECE, npc++) {
            bl[npc] = (int)(lens[i] - o < AGX_MAX_PIECE ? lens[i] - o : AGX_MAX_PIECE);
            bd[npc] = (disp[i] + o) * b->extent;
        }
    rc = MPI_Type_create_hindexed(npc, bl, bd, b->type, t);
    if (rc == MPI_SUCCESS && (rc = MPI_Type_commit(t)) != MPI_SUCCESS)
        MPI_Type_free(t);
    free(bl);
    free(bd);
    return rc;
}

/* SMPI builds split a message into its pieces only where the pieces average this many
 * bytes: below it SMPI's private copy is small, and one message per small piece would
 * multiply the simulator's work (the final local phase of multilane at 1024 ranks, 4 B
 * per rank: 15 x 64 messages per rank instead of 15) and the simulated latencies. */
#define AGX_SMPI_PIECE_MIN 4096

static int pieces_fit(const MPI_Aint *lens, int n, long long bytes)
{
    if (bytes < (long long)n * AGX_SMPI_PIECE_MIN)
        return 0;
    for (int i = 0; i < n; i++)
        if (lens[i] > AGX_MAX_PIECE)
            return 0;
    return 1;
}

/* The message of ranges r[0..nr) of layout b: one (address, count, type). With `pieces`
 * (SMPI builds, a layout of the same shape on every rank) a message of several segments
 * of AGX_SMPI_PIECE_MIN bytes or more on average (the same test on both sides: the bytes
 * agree) is left as its segments instead (*nseg > 1, disp/lens in *pieces, the caller frees). */
static int msg_build(const agx_blocks *b, const agx_range *r, int nr, agx_msg *m, MPI_Aint **pieces, int *nseg)
{
    int cap = 0, rc = MPI_SUCCESS, listed = agx_blk_listed(b);
    long long elems = 0;
    m->owned = 0;
    m->type = b->type;
    m->addr = b->buf;
    for (int i = 0; i < nr; i++)
        cap += listed ? r[i].len : 1;
    cap = cap > 0 ? cap : 1;
    MPI_Aint *mem = malloc(sizeof(MPI_Aint) * 2 * (size_t)cap);
    if (!mem)
        return MPI_ERR_NO_MEM;
    MPI_Aint *disp = mem, *lens = mem + cap;
    int n = msg_segments(b, r, nr, disp, lens, &elems);
    m->bytes = elems * b->type_size;
    *nseg = 1;
    if (n == 0) {
        m->count = 0;
    } else if (n == 1 && lens[0] <= AGX_MAX_PIECE) {
        m->addr = b->buf + disp[0] * b->extent;
        m->count = (int)lens[0];
    } else if (pieces && pieces_fit(lens, n, m->bytes)) {
        memmove(mem + n, lens, sizeof(MPI_Aint) * (size_t)n); /* disp[0..n), lens[n..2n) */
        *pieces = mem;
        *nseg = n;
        return MPI_SUCCESS;
    } else {
        rc = msg_type(b, disp, lens, n, &m->type);
        m->owned = rc == MPI_SUCCESS;
        m->count = 1;
    }
    free(mem);
    return rc;
}

void agx_msg_release(agx_msg *m)
{
    if (m->owned)
        MPI_Type_free(&m->type);
    m->owned = 0;
}

int agx_reqs_grow(agx_reqs *v, int more)
{
    if (v->n + more <= v->cap)
        return MPI_SUCCESS;
    int cap = v->cap * 2 > v->n + more ? v->cap * 2 : v->n + more;
    MPI_Request *r = realloc(v->req, sizeof(MPI_Request) * (size_t)cap);
    if (r)
        v->req = r;
    agx_msg *m = r ? realloc(v->msg, sizeof(agx_msg) * (size_t)cap) : NULL;
    if (!m)
        return MPI_ERR_NO_MEM;
    v->msg = m;
    v->cap = cap;
    return MPI_SUCCESS;
}

/* Post one send or receive, appended to v; counted once, at the sender (and, intergroup,
 * at the receiver; a plan counts at each start instead). SMPI copies every derived-datatype message into a private buffer of
 * its size (folded buffers or not: 16 x 16 ranks at 1 MiB each ran out of 24 GB), so SMPI
 * builds send a message of several pieces as one message per piece where every rank's
 * layout has the same shape, so that both sides cut it alike (MPI keeps their order). */
int agx_post(const agx_exec *x, const agx_sched *s, const agx_sop *op, agx_reqs *v, int mode)
{
    const agx_blocks *b = &x->bufs[op->buf];
    MPI_Aint *pc = NULL;
    int nseg = 1, send = op->kind == AGX_SOP_SEND, tag = op->tag ? op->tag : x->tag;
#ifdef AGX_SMPI
    int split = !agx_blk_listed(b) || b->same_shape;
#else
    int split = 0;
#endif
    agx_msg m;
    int rc = msg_build(b, &s->ranges[op->r0], op->nr, &m, split ? &pc : NULL, &nseg);
    if (rc == MPI_SUCCESS && (rc = agx_reqs_grow(v, nseg)) != MPI_SUCCESS)
        agx_msg_release(&m);
    if (rc != MPI_SUCCESS) {
        free(pc);
        return rc;
    }
    m.recv = !send;
    m.peer = op->peer;
    m.tag = tag;
    m.sync = (op->flags & AGX_SOP_SYNC) != 0;
    if (send && mode == AGX_POST_NOW)
        agx_stats_count_map(x->node_of, x->me, op->peer, m.bytes);
    if (x->intergroup && mode == AGX_POST_NOW)
        send ? agx_stats_intergroup(m.bytes, 0) : agx_stats_intergroup(-1, m.bytes);
    for (int i = 0; i < nseg && rc == MPI_SUCCESS; i++) {
        agx_msg *mm = &v->msg[v->n];
        *mm = m;
        if (pc) {
            mm->addr = b->buf + pc[i] * b->extent;
            mm->count = (int)pc[nseg + i];
            mm->bytes = (long long)mm->count * b->type_size;
        }
        MPI_Request *rq = &v->req[v->n];
        *rq = MPI_REQUEST_NULL;
        if (mode == AGX_POST_LATER)
            rc = MPI_SUCCESS; /* the plan posts it at each start */
        else if (mode == AGX_POST_PERSISTENT)
            rc = send ? (op->flags & AGX_SOP_SYNC ? MPI_Ssend_init : MPI_Send_init)(mm->addr, mm->count, mm->type,
                                                                                   op->peer, tag, x->comm, rq)
                      : MPI_Recv_init(mm->addr, mm->count, mm->type, op->peer, tag, x->comm, rq);
        else
            rc = send ? (op->flags & AGX_SOP_SYNC ? MPI_Issend : MPI_Isend)(mm->addr, mm->count, mm->type, op->peer,
                                                                           tag, x->comm, rq)
                      : MPI_Irecv(mm->addr, mm->count, mm->type, op->peer, tag, x->comm, rq);
        if (rc == MPI_SUCCESS)
            v->n++;
    }
    if (rc != MPI_SUCCESS && !pc)
        agx_msg_release(&m);
    free(pc);
    return rc;
}

void agx_reqs_free(agx_reqs *v)
{
    free(v->req);
    free(v->msg);
    *v = (agx_reqs){0};
}

/* The bytes a receive brought: MPI_Get_count's int says MPI_UNDEFINED for a message over
 * 2 GiB, which a right one can be, so those are read as a 64-bit count (SimGrid 3.32 has
 * no MPI_Get_elements_x; its messages stay under 2 GiB). */
static int bytes_of(MPI_Status *st, long long expect, MPI_Count *got)
{
    int n = 0, rc;
    if (expect > INT_MAX)
        return MPI_Get_elements_x(st, MPI_BYTE, got);
    rc = MPI_Get_count(st, MPI_BYTE, &n);
    *got = n;
    return rc;
}

/* Whether a receive (its completion code err) arrived with the size its schedule
 * expects: a shorter message, or a longer one (MPI_ERR_TRUNCATE), means the ranks
 * disagree on the call's arguments (count, datatype, op; an erroneous program). Noted in
 * *bad, not raised at once: this rank finishes the schedule, so that no peer waits for
 * its later messages. Returns err otherwise. */
int agx_arrived(int err, const agx_msg *m, MPI_Status *st, agx_mismatch *bad)
{
    int cls = MPI_SUCCESS;
    MPI_Count got = 0;
    if (err != MPI_SUCCESS)
        MPI_Error_class(err, &cls);
    if (cls == MPI_ERR_TRUNCATE || (cls == MPI_SUCCESS && (bytes_of(st, m->bytes, &got) != MPI_SUCCESS ||
                                                           got == MPI_UNDEFINED || got != m->bytes))) {
        if (!bad->n++)
            bad->got = cls == MPI_ERR_TRUNCATE ? -1 : got, bad->want = m->bytes, bad->from = st->MPI_SOURCE;
        return MPI_SUCCESS;
    }
    return err;
}

int agx_mismatch_error(const agx_mismatch *bad)
{
    char got[48];
    snprintf(got, sizeof got, bad->got < 0 ? "more" : "%lld", bad->got);
    return agx_error(MPI_ERR_TRUNCATE, "%d message(s) arrived with another size than this rank expects (the "
                     "first from rank %d: %s bytes, not %lld): the ranks passed different counts, datatypes "
                     "or ops (AGX_CHECK_ARGS=1 agrees on them first)", bad->n, bad->from, got, bad->want);
}
