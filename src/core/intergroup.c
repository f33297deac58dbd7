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
 * the exchange of seed 000 shared by Algorithms 1 and 2.
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

static int is_named(MPI_Datatype t)
{
    int ni, na, nd, comb;
    MPI_Type_get_envelope(t, &ni, &na, &nd, &comb);
    return comb == MPI_COMBINER_NAMED;
}

static int send_bytes(const agx_args *a, agx_ig_io *io)
{
    int size;
    MPI_Type_size(a->sendtype, &size);
    io->k = (long long)size * a->sendcount;
    if (is_named(a->sendtype) || io->k == 0) {
        io->bytes = a->sendbuf;
        return MPI_SUCCESS;
    }
    if (io->k > INT_MAX)
        return MPI_ERR_COUNT;
    io->stmp = malloc((size_t)io->k);
    if (!io->stmp)
        return MPI_ERR_NO_MEM;
    int pos = 0;
    io->bytes = io->stmp;
    return MPI_Pack(a->sendbuf, a->sendcount, a->sendtype, io->stmp, (int)io->k, &pos, MPI_COMM_SELF);
}

static int recv_space(const agx_args *a, agx_ig_io *io)
{
    const agx_blocks *b = &a->blk;
    long long *pre = io->rpre, elems = 0;
    int packed = is_named(b->type);
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
    const agx_blocks *b = &a->blk;
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

int agx_ig_exchange(const agx_args *a, const char *bytes, long long R, long long k,
                    const long long *sbnd, const long long *rbnd, const long long *rpre, char *full)
{
    const agx_intergroup *ig = a->ig;
    int rc = MPI_SUCCESS, nreq = 0;
    int maxp = (ig->rsize > ig->lsize ? ig->rsize : ig->lsize) + 2;
    agx_piece *sp = malloc(sizeof(agx_piece) * (size_t)ig->rsize);
    agx_piece *rp = malloc(sizeof(agx_piece) * (size_t)maxp);
    MPI_Request *req = malloc(sizeof(MPI_Request) * (size_t)(ig->rsize + maxp));
    int *counts = malloc(sizeof(int) * (size_t)ig->lsize), *displs = malloc(sizeof(int) * (size_t)ig->lsize);
    if (!sp || !rp || !req || !counts || !displs) {
        rc = MPI_ERR_NO_MEM;
        goto fn_exit;
    }
    if (rbnd[ig->lsize] > INT_MAX) {
        rc = MPI_ERR_COUNT; /* the local allgatherv counts in int bytes */
        goto fn_exit;
    }
    /* Sends go out non-blocking, in ascending receiver order. Receives are taken one at a
     * time in Section 4.1's order, so a receiver's link carries one sender at a time; this
     * avoids incast, and rendezvous-size messages start flowing only when their turn
     * comes. The pending sends progress while a receive waits, so this cannot deadlock. */
    int ns = agx_plan_sends(R, k, sbnd, ig->rsize, sp);
    for (int i = 0; i < ns && rc == MPI_SUCCESS; i++) {
        int peer = ig->remote_x[sp[i].peer];
        agx_stats_count_map(ig->node_of, ig->xrank, peer, sp[i].len);
        agx_stats_intergroup(sp[i].len, 0);
        if ((rc = MPI_Isend(bytes + sp[i].off, (int)sp[i].len, MPI_BYTE, peer, AGX_TAG_INTER,
                            ig->xcomm, &req[nreq])) == MPI_SUCCESS)
            nreq++;
    }
    int nr = agx_plan_recvs(ig->lrank, rbnd, rpre, ig->rsize, rp);
    for (int i = 0; i < nr && rc == MPI_SUCCESS; i++) {
        agx_stats_intergroup(-1, rp[i].len);
        rc = MPI_Recv(full + rbnd[ig->lrank] + rp[i].off, (int)rp[i].len, MPI_BYTE,
                      ig->remote_x[rp[i].peer], AGX_TAG_INTER, ig->xcomm, MPI_STATUS_IGNORE);
    }
    if (rc == MPI_SUCCESS)
        rc = agx_waitall(nreq, req);
    else
        agx_cancel_all(nreq, req);
    /* each process now holds its segment of the remote message; collect them in order */
    if (rc == MPI_SUCCESS) {
        for (int i = 0; i < ig->lsize; i++) {
            displs[i] = (int)rbnd[i];
            counts[i] = (int)(rbnd[i + 1] - rbnd[i]);
        }
        rc = agx_allgatherv(MPI_IN_PLACE, 0, MPI_BYTE, full, counts, displs, MPI_BYTE, ig->local);
    }
fn_exit:
    free(sp); free(rp); free(req); free(counts); free(displs);
    return rc;
}
