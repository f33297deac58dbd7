/*
 * The two groups of an intergroup collective, behind one interface (agx_internal.h):
 *  - inter-communicator: merged into an intra-communicator (MPI_Intercomm_merge); the
 *    group members' ranks in it come from MPI_Group_translate_ranks, so no assumption on
 *    the merge order is needed; the local group is split off the merge;
 *  - colour split of an intra-communicator: colour 0 is group A, anything else group B;
 *    the cross communicator is agx's private duplicate of the parent.
 * The algorithms (src/coll/allgather/allgather_inter_*.c) see only xcomm, local and
 * remote_x, so one implementation serves both, and SMPI (no inter-communicators) runs
 * the colour split.
 *
 * Also here: packing a contribution to bytes, the remote receive space, unpacking, and
 * the exchange of KangTraff19 shared by Algorithms 1 and 2 (a schedule run by the engine).
 */
#include "agx_internal.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define AGX_TAG_INTER (AGX_TAG + 1)

void agx_ig_free(agx_intergroup *ig)
{
    if (!ig)
        return;
    if (ig->local != MPI_COMM_NULL)
        MPI_Comm_free(&ig->local);
    if (ig->owns_xcomm && ig->xcomm != MPI_COMM_NULL)
        MPI_Comm_free(&ig->xcomm);
    if (ig->owns_inter && ig->inter != MPI_COMM_NULL)
        MPI_Comm_free(&ig->inter);
    free(ig->remote_x);
    free(ig->node_of);
    free(ig);
}

static int build_from_inter(agx_ctx *ctx, agx_intergroup *ig)
{
    MPI_Group lg = MPI_GROUP_NULL, rg = MPI_GROUP_NULL, mg = MPI_GROUP_NULL;
    int *seq = NULL, *lx = NULL, rc;
    MPI_Comm_size(ctx->pcomm, &ig->lsize);
    MPI_Comm_remote_size(ctx->pcomm, &ig->rsize);
    MPI_Comm_rank(ctx->pcomm, &ig->lrank);
    ig->inter = ctx->user;
    ig->color = -1;
    rc = MPI_Intercomm_merge(ctx->pcomm, 0, &ig->xcomm);
    if (rc != MPI_SUCCESS)
        return rc;
    ig->owns_xcomm = 1;
    int n = ig->lsize > ig->rsize ? ig->lsize : ig->rsize;
    seq = malloc(sizeof(int) * (size_t)n);
    lx = malloc(sizeof(int) * (size_t)ig->lsize);
    ig->remote_x = malloc(sizeof(int) * (size_t)ig->rsize);
    if (!seq || !lx || !ig->remote_x) {
        rc = MPI_ERR_NO_MEM;
        goto fn_exit;
    }
    for (int i = 0; i < n; i++)
        seq[i] = i;
    MPI_Comm_group(ctx->pcomm, &lg);
    MPI_Comm_remote_group(ctx->pcomm, &rg);
    MPI_Comm_group(ig->xcomm, &mg);
    MPI_Group_translate_ranks(lg, ig->lsize, seq, mg, lx);
    MPI_Group_translate_ranks(rg, ig->rsize, seq, mg, ig->remote_x);
    /* lx[0] (my group's first member in the merge) differs between the two groups */
    rc = MPI_Comm_split(ig->xcomm, lx[0], ig->lrank, &ig->local);
fn_exit:
    if (lg != MPI_GROUP_NULL) MPI_Group_free(&lg);
    if (rg != MPI_GROUP_NULL) MPI_Group_free(&rg);
    if (mg != MPI_GROUP_NULL) MPI_Group_free(&mg);
    free(seq);
    free(lx);
    return rc;
}

static int build_from_split(agx_ctx *ctx, int color, agx_intergroup *ig)
{
    int rc, *colors = malloc(sizeof(int) * (size_t)ctx->p);
    if (!colors)
        return MPI_ERR_NO_MEM;
    ig->color = color;
    ig->xcomm = ctx->pcomm;
    ig->inter = MPI_COMM_NULL;
    rc = PMPI_Allgather(&color, 1, MPI_INT, colors, 1, MPI_INT, ctx->pcomm);
    if (rc == MPI_SUCCESS)
        rc = MPI_Comm_split(ctx->pcomm, color, ctx->rank, &ig->local);
    if (rc == MPI_SUCCESS) {
        ig->remote_x = malloc(sizeof(int) * (size_t)ctx->p);
        if (!ig->remote_x)
            rc = MPI_ERR_NO_MEM;
    }
    if (rc == MPI_SUCCESS) {
        for (int r = 0; r < ctx->p; r++)
            if (colors[r] != color)
                ig->remote_x[ig->rsize++] = r;
        MPI_Comm_rank(ig->local, &ig->lrank);
        MPI_Comm_size(ig->local, &ig->lsize);
    }
    free(colors);
    return rc;
}

int agx_ig_get(agx_ctx *ctx, int color, agx_intergroup **out)
{
    int rc;
    if (color >= 0)
        color = color ? 1 : 0;
    if (ctx->ig && ctx->ig->color == color) {
        *out = ctx->ig;
        return MPI_SUCCESS;
    }
    /* first call, or the split changed (it must change on every rank at the same call) */
    agx_ig_free(ctx->ig);
    ctx->ig = NULL;
    agx_intergroup *ig = calloc(1, sizeof *ig);
    if (!ig)
        return MPI_ERR_NO_MEM;
    ig->local = ig->xcomm = ig->inter = MPI_COMM_NULL;
    rc = color < 0 ? build_from_inter(ctx, ig) : build_from_split(ctx, color, ig);
    if (rc == MPI_SUCCESS) {
        MPI_Comm_set_errhandler(ig->local, MPI_ERRORS_RETURN);
        MPI_Comm_set_errhandler(ig->xcomm, MPI_ERRORS_RETURN);
        MPI_Comm_rank(ig->xcomm, &ig->xrank);
        if (agx_stats_enabled())
            rc = agx_node_map(ig->xcomm, &ig->node_of);
    }
    if (rc != MPI_SUCCESS) {
        agx_ig_free(ig);
        return rc;
    }
    ctx->ig = ig;
    *out = ig;
    return MPI_SUCCESS;
}

int agx_ig_inter_comm(agx_intergroup *ig, MPI_Comm *out)
{
    int rc = MPI_SUCCESS;
    if (ig->inter == MPI_COMM_NULL) {
        rc = MPI_Intercomm_create(ig->local, 0, ig->xcomm, ig->remote_x[0], AGX_TAG_INTER, &ig->inter);
        if (rc == MPI_SUCCESS)
            ig->owns_inter = 1;
    }
    *out = ig->inter;
    return rc;
}

static int send_bytes(const agx_args *a, agx_ig_io *io)
{
    int size;
    MPI_Type_size(a->u.ag.sendtype, &size);
    io->k = (long long)size * a->u.ag.sendcount;
    if (agx_type_is_named(a->u.ag.sendtype) || io->k == 0) {
        io->bytes = a->u.ag.sendbuf;
        return MPI_SUCCESS;
    }
    if (io->k > INT_MAX)
        return MPI_ERR_COUNT;
    io->stmp = malloc((size_t)io->k);
    if (!io->stmp)
        return MPI_ERR_NO_MEM;
    int pos = 0;
    io->bytes = io->stmp;
    return MPI_Pack(a->u.ag.sendbuf, a->u.ag.sendcount, a->u.ag.sendtype, io->stmp, (int)io->k, &pos, MPI_COMM_SELF);
}

static int recv_space(const agx_args *a, agx_ig_io *io)
{
    const agx_blocks *b = &a->u.ag.blk;
    long long *pre = io->rpre, elems = 0;
    int packed = agx_type_is_named(b->type);
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
    return io->full ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}

int agx_ig_io_begin(const agx_args *a, agx_ig_io *io)
{
    int rc;
    memset(io, 0, sizeof *io);
    io->direct = 1;
    io->rpre = malloc(sizeof(long long) * (size_t)(a->p + 1));
    if (!io->rpre)
        return MPI_ERR_NO_MEM;
    if ((rc = send_bytes(a, io)) != MPI_SUCCESS)
        return rc;
    return recv_space(a, io);
}

int agx_ig_io_end(const agx_args *a, agx_ig_io *io, int rc)
{
    const agx_blocks *b = &a->u.ag.blk;
    for (int h = 0; h < a->p && rc == MPI_SUCCESS && !io->direct; h++) {
        int n = agx_blk_count(b, h), pos = 0;
        if (n == 0)
            continue;
        rc = MPI_Unpack(io->full + io->rpre[h], (int)(io->rpre[h + 1] - io->rpre[h]), &pos,
                        b->buf + agx_blk_displ(b, h) * b->extent, n, b->type, MPI_COMM_SELF);
    }
    if (!io->direct)
        free(io->full);
    free(io->stmp);
    free(io->rpre);
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

/* Byte layouts of pieces: counts and displacements (int: the caller checked the sizes). */
static void piece_layout(agx_blocks *b, char *base, const agx_piece *pc, int n, int *cnt, int *dsp)
{
    for (int i = 0; i < n; i++) {
        cnt[i] = (int)pc[i].len;
        dsp[i] = (int)pc[i].off;
    }
    agx_blocks_bytes(b, base, n, cnt, dsp);
}

static int run_exchange(const agx_args *a, const char *bytes, const agx_piece *sp, int ns, const agx_piece *rp,
                        int nr, char *seg)
{
    const agx_intergroup *ig = a->ig;
    int *lay = malloc(sizeof(int) * 2 * (size_t)(ns + nr + 1)), rc;
    agx_blocks bufs[2];
    agx_sched s;
    agx_sched_init(&s);
    if (!lay || exchange_sched(ig, sp, ns, rp, nr, &s)) {
        free(lay);
        agx_sched_free(&s);
        return agx_error(MPI_ERR_NO_MEM, "intergroup exchange: out of memory");
    }
    piece_layout(&bufs[0], (char *)bytes, sp, ns, lay, lay + ns);
    piece_layout(&bufs[1], seg, rp, nr, lay + 2 * ns, lay + 2 * ns + nr);
    agx_exec x = {.comm = ig->xcomm, .tag = AGX_TAG_INTER, .bufs = bufs, .nbufs = 2,
                  .node_of = ig->node_of, .me = ig->xrank, .intergroup = 1};
    rc = agx_sched_run(&x, &s);
    agx_sched_free(&s);
    free(lay);
    return rc;
}

int agx_ig_exchange(const agx_args *a, const char *bytes, long long R, long long k,
                    const long long *sbnd, const long long *rbnd, const long long *rpre, char *full)
{
    const agx_intergroup *ig = a->ig;
    int rc = MPI_SUCCESS;
    int maxp = (ig->rsize > ig->lsize ? ig->rsize : ig->lsize) + 2;
    agx_piece *sp = malloc(sizeof(agx_piece) * (size_t)ig->rsize);
    agx_piece *rp = malloc(sizeof(agx_piece) * (size_t)maxp);
    int *counts = malloc(sizeof(int) * (size_t)ig->lsize), *displs = malloc(sizeof(int) * (size_t)ig->lsize);
    if (!sp || !rp || !counts || !displs) {
        rc = agx_error(MPI_ERR_NO_MEM, "intergroup exchange: out of memory");
        goto fn_exit;
    }
    if (rbnd[ig->lsize] > INT_MAX || k > INT_MAX) {
        rc = agx_error(MPI_ERR_COUNT, "intergroup exchange: more than INT_MAX bytes");
        goto fn_exit;
    }
    int ns = agx_plan_sends(R, k, sbnd, ig->rsize, sp);
    int nr = agx_plan_recvs(ig->lrank, rbnd, rpre, ig->rsize, rp);
    rc = run_exchange(a, bytes, sp, ns, rp, nr, full + rbnd[ig->lrank]);
    /* each process now holds its segment of the remote message; collect them in order */
    if (rc == MPI_SUCCESS) {
        for (int i = 0; i < ig->lsize; i++) {
            displs[i] = (int)rbnd[i];
            counts[i] = (int)(rbnd[i + 1] - rbnd[i]);
        }
        rc = agx_allgatherv(MPI_IN_PLACE, 0, MPI_BYTE, full, counts, displs, MPI_BYTE, ig->local);
    }
fn_exit:
    free(sp); free(rp); free(counts); free(displs);
    return rc;
}

int agx_ig_swap(const agx_args *a, int peer, const void *sbuf, long long sn, void *rbuf, long long rn)
{
    const agx_intergroup *ig = a->ig;
    int cnt[2] = {(int)sn, (int)rn}, dsp[2] = {0, 0}, rc;
    agx_blocks bufs[2];
    agx_sched s;
    if (sn > INT_MAX || rn > INT_MAX)
        return agx_error(MPI_ERR_COUNT, "intergroup: a message of more than INT_MAX bytes");
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
    rc = s.bad ? agx_error(MPI_ERR_NO_MEM, "intergroup: out of memory") : agx_sched_run(&x, &s);
    agx_sched_free(&s);
    return rc;
}
