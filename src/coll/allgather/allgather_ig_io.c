/*
 * The byte view of an intergroup call and its messages (coll_allgather.h): packing the own
 * contribution, the remote receive space and the final unpack; the exchange of
 * KangTraff19 shared by Algorithms 1 and 2; the root swap; the local collectives over
 * one group. Every message is a schedule run by the engine over 64-bit byte layouts, so
 * no size limit applies below what MPI_Allgather(v) itself accepts.
 *
 * Everything a call needs is allocated by agx_ig_io_begin, before the agreement
 * (intergroup.c), so an allocation or packing failure on one process is seen by all.
 */
#include "coll_allgather.h"

#include <stdlib.h>
#include <string.h>

#define AGX_TAG_INTER (AGX_TAG + 2)

/* The local allgather switches from Bruck to the ring at this many bytes (MPICH's
 * allgather threshold for short results). */
#define LOCAL_RING_BYTES (80 * 1024)

int agx_ig_local_scheds(agx_intergroup *ig)
{
    static const agx_build_fn build[AGX_IG_NSCHED] = {agx_build_bruck, agx_build_ring, agx_build_linear_gather,
                                                      agx_build_binomial_bcast};
    for (int i = 0; i < AGX_IG_NSCHED; i++) {
        agx_sched_init(&ig->lsched[i]);
        if (build[i](&ig->lsched[i], 0, ig->lrank, ig->lsize, 0) < 0 || agx_sched_finish(&ig->lsched[i]))
            return MPI_ERR_NO_MEM;
    }
    return MPI_SUCCESS;
}

int agx_ig_local_run(const agx_args *a, int which, char *base, const MPI_Aint *cnt, const MPI_Aint *dsp)
{
    const agx_intergroup *ig = a->ig;
    agx_blocks b;
    agx_blocks_bytes(&b, base, ig->lsize, cnt, dsp);
    if (which == AGX_IG_ALLGATHER)
        which = dsp[ig->lsize - 1] + cnt[ig->lsize - 1] < LOCAL_RING_BYTES ? AGX_IG_BRUCK : AGX_IG_RING;
    agx_exec x = {.comm = ig->local, .tag = AGX_TAG_INTER + 2, .bufs = &b, .nbufs = 1, .node_of = ig->lnode_of,
                  .me = ig->lrank};
    return agx_sched_run(&x, &ig->lsched[which]);
}

static int send_bytes(const agx_args *a, agx_ig_io *io)
{
    const agx_ag_args *g = &a->u.ag;
    MPI_Count size;
    MPI_Type_size_x(g->sendtype, &size);
    io->k = (long long)size * g->sendcount;
    if (agx_type_is_dense(g->sendtype) || io->k == 0) {
        io->bytes = g->sendbuf;
        return MPI_SUCCESS;
    }
    io->stmp = malloc((size_t)io->k);
    if (!io->stmp)
        return agx_error(MPI_ERR_NO_MEM, "out of memory packing %lld bytes", io->k);
    io->bytes = io->stmp;
    return agx_pack((void *)g->sendbuf, g->sendcount, g->sendtype, io->stmp, 0);
}

static int recv_space(const agx_args *a, agx_ig_io *io)
{
    const agx_blocks *b = &a->u.ag.blk;
    long long *pre = io->rpre, elems = 0;
    int packed = agx_type_is_dense(b->type);
    for (int h = 0; h < a->p; h++) {
        pre[h] = elems * b->type_size;
        packed = packed && agx_blk_displ(b, h) == elems;
        elems += agx_blk_count(b, h);
    }
    pre[a->p] = elems * b->type_size;
    io->direct = packed;
    if (packed) {
        io->full = b->buf;
        return MPI_SUCCESS;
    }
    io->full = malloc(pre[a->p] > 0 ? (size_t)pre[a->p] : 1);
    return io->full ? MPI_SUCCESS : agx_error(MPI_ERR_NO_MEM, "out of memory for %lld received bytes", pre[a->p]);
}

int agx_ig_io_begin(const agx_args *a, agx_ig_io *io)
{
    const agx_intergroup *ig = a->ig;
    int n = ig->lsize + ig->rsize + 2;
    memset(io, 0, sizeof *io);
    io->direct = 1;
    io->began = 1;
    /* prefix sums, partitions, plans and layouts: every array of the call at once */
    size_t ll = (size_t)(ig->rsize + 1) + (size_t)n, pc = 2 * (size_t)n, ai = 4 * (size_t)n;
    char *mem = malloc(ll * sizeof(long long) + pc * sizeof(agx_piece) + ai * sizeof(MPI_Aint));
    if (!mem)
        return agx_error(MPI_ERR_NO_MEM, "out of memory for an intergroup call of %d + %d processes",
                         ig->lsize, ig->rsize);
    io->rpre = (long long *)mem;
    io->bnd = io->rpre + ig->rsize + 1;
    io->pieces = (agx_piece *)(io->rpre + ll);
    io->lay = (MPI_Aint *)(io->pieces + pc);
    int rc = send_bytes(a, io);
    return rc == MPI_SUCCESS ? recv_space(a, io) : rc;
}

int agx_ig_io_end(const agx_args *a, agx_ig_io *io, int rc)
{
    const agx_blocks *b = &a->u.ag.blk;
    if (!io->began)
        return rc;
    for (int h = 0; h < a->p && rc == MPI_SUCCESS && !io->direct; h++)
        rc = agx_pack(b->buf + agx_blk_displ(b, h) * b->extent, agx_blk_count(b, h), b->type,
                      io->full + io->rpre[h], 1);
    if (!io->direct)
        free(io->full);
    free(io->stmp);
    free(io->rpre);
    memset(io, 0, sizeof *io);
    return rc;
}

/* The exchange as a schedule over two byte layouts: buffer 0 holds my send pieces (in
 * `bytes`), buffer 1 my receive pieces (in my segment of `full`). Sends go out in round 0
 * asynchronously, in ascending receiver order; receives are taken one per round in
 * Section 4.1's order, so a receiver's link carries one sender at a time: no incast, and
 * rendezvous-size messages start flowing only when their turn comes. The pending sends
 * progress while a receive waits, so this cannot deadlock. */
static int exchange_sched(const agx_intergroup *ig, const agx_piece *sp, int ns, const agx_piece *rp,
                          int nr, agx_sched *s)
{
    for (int i = 0; i < ns; i++) {
        agx_blockset set;
        agx_set_clear(&set);
        agx_set_add(&set, i, 1);
        if (agx_sched_add_ex(s, 0, AGX_SOP_SEND, ig->remote_x[sp[i].peer], 0, AGX_SOP_ASYNC, 0, &set))
            return -1;
    }
    for (int i = 0; i < nr; i++) {
        agx_blockset set;
        agx_set_clear(&set);
        agx_set_add(&set, i, 1);
        if (agx_sched_add_ex(s, i, AGX_SOP_RECV, ig->remote_x[rp[i].peer], 0, 0, 1, &set))
            return -1;
    }
    return agx_sched_finish(s);
}

/* Byte layout of pieces. */
static void piece_layout(agx_blocks *b, char *base, const agx_piece *pc, int n, MPI_Aint *cnt, MPI_Aint *dsp)
{
    for (int i = 0; i < n; i++) {
        cnt[i] = pc[i].len;
        dsp[i] = pc[i].off;
    }
    agx_blocks_bytes(b, base, n, cnt, dsp);
}

int agx_ig_exchange(const agx_args *a, long long R, const long long *sbnd, const long long *rbnd)
{
    const agx_intergroup *ig = a->ig;
    agx_ig_io *io = a->u.ag.io;
    agx_piece *sp = io->pieces, *rp = io->pieces + ig->rsize + 1;
    MPI_Aint *lay = io->lay;
    agx_blocks bufs[2];
    agx_sched s;
    int ns = agx_plan_sends(R, io->k, sbnd, ig->rsize, sp);
    int nr = agx_plan_recvs(ig->lrank, rbnd, io->rpre, ig->rsize, rp);
    agx_sched_init(&s);
    if (exchange_sched(ig, sp, ns, rp, nr, &s)) {
        agx_sched_free(&s);
        return agx_error(MPI_ERR_NO_MEM, "intergroup exchange: out of memory");
    }
    piece_layout(&bufs[0], (char *)io->bytes, sp, ns, lay, lay + ns);
    piece_layout(&bufs[1], io->full + rbnd[ig->lrank], rp, nr, lay + 2 * ns, lay + 2 * ns + nr);
    agx_exec x = {.comm = ig->xcomm, .tag = AGX_TAG_INTER, .bufs = bufs, .nbufs = 2,
                  .node_of = ig->node_of, .me = ig->xrank, .intergroup = 1};
    int rc = agx_sched_run(&x, &s);
    agx_sched_free(&s);
    /* each process now holds its segment of the remote message; collect them in order */
    if (rc == MPI_SUCCESS) {
        for (int i = 0; i < ig->lsize; i++) {
            lay[i] = rbnd[i + 1] - rbnd[i];
            lay[ig->lsize + i] = rbnd[i];
        }
        rc = agx_ig_local_run(a, AGX_IG_ALLGATHER, io->full, lay, lay + ig->lsize);
    }
    return rc;
}

int agx_ig_swap(const agx_args *a, int peer, const void *sbuf, long long sn, void *rbuf, long long rn)
{
    const agx_intergroup *ig = a->ig;
    MPI_Aint cnt[2] = {sn, rn}, dsp[2] = {0, 0};
    agx_blocks bufs[2];
    agx_sched s;
    agx_blocks_bytes(&bufs[0], (void *)sbuf, 1, cnt, dsp);
    agx_blocks_bytes(&bufs[1], rbuf, 1, cnt + 1, dsp + 1);
    agx_sched_init(&s);
    agx_blockset one;
    agx_set_clear(&one);
    agx_set_add(&one, 0, 1);
    agx_sched_add_ex(&s, 0, AGX_SOP_SEND, peer, 0, 0, 0, &one);
    agx_sched_add_ex(&s, 0, AGX_SOP_RECV, peer, 0, 0, 1, &one);
    agx_exec x = {.comm = ig->xcomm, .tag = AGX_TAG_INTER + 1, .bufs = bufs, .nbufs = 2,
                  .node_of = ig->node_of, .me = ig->xrank, .intergroup = 1};
    int rc = s.bad ? agx_error(MPI_ERR_NO_MEM, "intergroup: out of memory") : agx_sched_run(&x, &s);
    agx_sched_free(&s);
    return rc;
}
