/*
 * shm_notify: Allgather(V) through notified one-sided writes into node-shared windows
 * (SharedNotify Sec. II-A, Algorithm 1), on MPI-3 RMA (src/core/notify.c).
 *
 * Steps (Algorithm 1's line numbers):
 *  1-3. the node's segment: notifications, then the result laid out like the receive
 *       buffer (allgather with a contiguous receive type, agx_allgatherv_shared) or
 *       packed in rank order (allgatherv, whose displs may differ between ranks; other
 *       types);
 *  4, 7, 9. blocks of at most AGX_SHM_BLOCK bytes numbered continuously across the nodes,
 *       and each node's blocks split evenly over its processes (Eq. 3-4, Listing 1, 3:
 *       src/patterns/shm_blocks.c);
 *  5-6. local allgatherv: each process stores its contribution into the segment; node
 *       barrier;
 *  8. (agx) wait until the next node has released the last call's result;
 *  10-12. each process write_notifies its share of the node's blocks to the process with
 *       its local rank (modulo the next node's size) on the next node of the ring (Eq. 1);
 *  13-19. every process of the node polls the node's shared notifications, and whichever
 *       claims an arrived block forwards it to its own target on the next node, unless
 *       that node is where the block came from, until every block of the other nodes is
 *       in the segment;
 *  then the copy into recvbuf that MPI's signature needs (the paper avoids it; the
 *  zero-copy entry agx_allgatherv_shared does too).
 * Cost: every block crosses r - 1 links, one write_notify (a put, a flush, an accumulate)
 * per hop; a node's link carries every byte except its successor's; with blocks of B
 * bytes the ring is pipelined: about (r - 1 + n_node / (L B)) (alpha + B beta) for n_node
 * bytes per node and L processes per node; 2 node barriers. Messages: (r - 1) per block,
 * all non-local (counted under AGX_STATS: a write_notify as one message of its block).
 * Needs more than one region and regions whose ranks share memory with RMA between them
 * (agx_shm_notify_violation); otherwise the default rule runs.
 */
#include "coll_allgather.h"
#include "notify.h"
#include "shm_blocks.h"

#include <stdlib.h>
#include <string.h>

const char *agx_shm_notify_violation(const agx_args *a, int *told)
{
    const agx_regions *R;
    agx_shm *m;
    (void)told;
    if (agx_ctx_regions(a->ctx, &R) != MPI_SUCCESS)
        return "the regions could not be determined";
    if (R->r < 2)
        return "one node: no notified writes between nodes";
    if (agx_ntf_get(a->ctx, R, 0, &m, "agx_allgather") != MPI_SUCCESS)
        return "the node-shared segment could not be set up";
    return m ? NULL : a->ctx->shm[AGX_SHM_NOTIFY]->why;
}

/* Where block i lives in the segment's data (the same on every rank), and whether the
 * receive type's bytes are contiguous (dense: copied out with memcpy, else unpacked). */
typedef struct {
    long long *len, *off;
    int dense;
    size_t span;
} layout;

static void make_layout(const agx_args *a, layout *l, long long *mem)
{
    const agx_blocks *b = &a->u.ag.blk;
    MPI_Aint tlb, text;
    MPI_Type_get_true_extent(b->type, &tlb, &text);
    l->len = mem;
    l->off = mem + a->p;
    l->dense = tlb == 0 && text == b->extent && b->type_size == b->extent;
    for (int i = 0; i < a->p && l->dense; i++)
        l->dense = agx_blk_displ(b, i) >= 0;
    /* Every rank must find block i at the same offset, and allgatherv's displs are each
     * rank's own (MPI lets them differ): the receive layout only for allgather (displs
     * i x count everywhere) and agx_allgatherv_shared (whose displs must be the same on
     * every process, agx.h); else packed in rank order, from the counts every rank shares. */
    int at_displ = l->dense && (a->op == AGX_OP_ALLGATHER || a->u.ag.shared);
    long long packed = 0, end = 0;
    for (int i = 0; i < a->p; i++) {
        l->len[i] = (long long)agx_blk_count(b, i) * b->type_size;
        l->off[i] = at_displ ? (long long)agx_blk_displ(b, i) * b->extent : packed;
        packed += l->len[i];
        if (l->len[i] && l->off[i] + l->len[i] > end)
            end = l->off[i] + l->len[i];
    }
    l->span = (size_t)end;
}

/* One process's side of the ring: where it writes, and what it needs to find blocks. */
typedef struct {
    agx_shm *m;
    const agx_regions *R;
    const agx_snb *s;
    const layout *l;
    size_t doff;
    int me, k1, target, ld1; /* next region, my target there, its first rank */
    const int *node_of;      /* counters: rank -> region, NULL when off */
} ring_state;

/* write_notify of the blocks [first, first + n) to the target on the next node: every
 * put, one flush, every notification, one flush (lines 11 and 17). */
static int write_notify(const ring_state *w, long long first, long long n)
{
    int rc = MPI_SUCCESS, rank;
    long long off, bytes;
    for (long long id = first; id < first + n && rc == MPI_SUCCESS; id++) {
        agx_snb_locate(w->s, id, &rank, &off, &bytes);
        size_t at = w->doff + (size_t)(w->l->off[rank] + off);
        rc = agx_ntf_put(w->m, w->target, at, w->m->base + at, (size_t)bytes);
        if (w->node_of)
            agx_stats_count_map(w->node_of, w->me, w->target, bytes);
    }
    if (rc == MPI_SUCCESS && n > 0)
        rc = agx_ntf_flush(w->m, w->target);
    for (long long id = first; id < first + n && rc == MPI_SUCCESS; id++)
        rc = agx_ntf_notify(w->m, w->R, w->k1, id);
    if (rc == MPI_SUCCESS && n > 0)
        rc = agx_ntf_flush(w->m, w->ld1);
    return rc;
}

/* Lines 10-12 and 13-19: the ring of nodes. */
static int ring(const agx_args *a, const agx_regions *R, agx_shm *m, const agx_snb *s, const layout *l,
                size_t doff, long long *pend)
{
    int me = a->rank, k = R->region_of[me], j = R->local[me], k1 = (k + 1) % R->r;
    ring_state w = {.m = m, .R = R, .s = s, .l = l, .doff = doff, .me = me, .k1 = k1,
                    .target = R->members[R->start[k1] + j % R->size[k1]], .ld1 = R->members[R->start[k1]],
                    .node_of = agx_stats_enabled() ? R->region_of : NULL};
    long long first, n = agx_snb_work(s, R, k, j, &first);
    int rc = write_notify(&w, first, n);
    /* the blocks of the other nodes, until each has arrived */
    long long np = s->total - (s->node_first[k + 1] - s->node_first[k]);
    for (long long id = 0, i = 0; id < s->total; id++)
        if (id < s->node_first[k] || id >= s->node_first[k + 1])
            pend[i++] = id;
    while (np > 0 && rc == MPI_SUCCESS) {
        int moved = 0;
        rc = MPI_Win_sync(m->iwin);
        for (long long i = 0; i < np && rc == MPI_SUCCESS;) {
            long long id = pend[i];
            int v = agx_ntf_slot(m, id), won = 0;
            if (v != m->seq && v != -m->seq) {
                i++;
                continue;
            }
            if (v == m->seq && (rc = agx_ntf_claim(m, id, &won)) == MPI_SUCCESS && won &&
                agx_snb_region(s, id) != k1) /* forward (line 17) */
                rc = write_notify(&w, id, 1);
            pend[i] = pend[--np];
            moved = 1;
        }
        if (!moved && np > 0 && rc == MPI_SUCCESS)
            rc = agx_ntf_idle(m);
    }
    return rc;
}

/* The copy out of the segment into recvbuf (every block but an in-place own one). */
static int copy_out(const agx_args *a, const layout *l, const char *data)
{
    const agx_ag_args *g = &a->u.ag;
    const agx_blocks *b = &g->blk;
    int rc = MPI_SUCCESS;
    for (int i = 0; i < a->p && rc == MPI_SUCCESS; i++) {
        if (!l->len[i] || (i == a->rank && g->sendbuf == MPI_IN_PLACE))
            continue;
        char *dst = b->buf + agx_blk_displ(b, i) * b->extent;
        if (l->dense)
            memcpy(dst, data + l->off[i], (size_t)l->len[i]);
        else
            rc = agx_pack(dst, agx_blk_count(b, i), b->type, (char *)data + l->off[i], 1);
    }
    return rc;
}

/* The per-call tables (layout, block numbers, pending blocks) in the communicator's
 * scratch: their sizes follow from the counts, the same on every rank, so growing it is
 * agreed at the same call everywhere and no rank is left in the ring by a failed malloc. */
static int tables(const agx_args *a, const agx_regions *R, int B, layout *l, agx_snb *s, long long **pend)
{
    const agx_blocks *b = &a->u.ag.blk;
    long long total = 0, bb = B > 0 ? B : 1;
    for (int i = 0; i < a->p; i++)
        total += agx_snb_blocks((long long)agx_blk_count(b, i) * b->type_size, bb);
    size_t nt = agx_snb_tables(R->p, R->r), n = 2 * (size_t)a->p + nt + (size_t)total;
    void *data;
    long long *mem;
    int rc = agx_ctx_scratch(a->ctx, a->comm, 0, sizeof(long long) * n, &data, (void **)&mem, "agx_allgather");
    if (rc != MPI_SUCCESS)
        return rc;
    make_layout(a, l, mem);
    agx_snb_init(s, R, l->len, B, mem + 2 * a->p);
    *pend = mem + 2 * a->p + nt;
    return MPI_SUCCESS;
}

int agx_allgather_intra_shm_notify(const agx_args *a)
{
    const agx_ag_args *g = &a->u.ag;
    const agx_blocks *b = &g->blk;
    const agx_regions *R;
    agx_shm *m = NULL;
    agx_snb s;
    layout l;
    long long *pend;
    int B, rc;
    if ((rc = agx_alg_param(a, 0 /* block */, &B)) != MPI_SUCCESS || (rc = agx_ctx_regions(a->ctx, &R)) != MPI_SUCCESS ||
        (rc = tables(a, R, B, &l, &s, &pend)) != MPI_SUCCESS)
        return rc;
    size_t doff = agx_ntf_data_offset(s.total);
    if ((rc = agx_ntf_get(a->ctx, R, doff + l.span, &m, "agx_allgather")) != MPI_SUCCESS)
        return rc;
    if (!m) /* agx_shm_notify_violation let it run: cannot happen */
        return agx_error(MPI_ERR_INTERN, "agx_allgather (shm_notify): no notified segment");
    int held = m->hold != NULL;
    if (held) { /* overwritten: its release only frees the token */
        m->hold->m = NULL;
        m->hold = NULL;
    }
    char *data = m->base + doff;
    const void *src = g->sendbuf == MPI_IN_PLACE ? b->buf + agx_blk_displ(b, a->rank) * b->extent : g->sendbuf;
    MPI_Datatype st = g->sendbuf == MPI_IN_PLACE ? b->type : g->sendtype;
    MPI_Aint sc = g->sendbuf == MPI_IN_PLACE ? agx_blk_count(b, a->rank) : g->sendcount;
    if ((rc = agx_ntf_open(m, R, a->rank, s.total)) == MPI_SUCCESS && l.len[a->rank] > 0)
        rc = agx_pack((void *)src, sc, st, data + l.off[a->rank], 0); /* line 5 */
    int rc2 = agx_shm_sync(m); /* line 6: reached whatever failed, no local rank waits */
    if (rc == MPI_SUCCESS && (rc = rc2) == MPI_SUCCESS && (rc = agx_ntf_wait_ready(m)) == MPI_SUCCESS)
        rc = ring(a, R, m, &s, &l, doff, pend);
    if (rc == MPI_SUCCESS)
        rc = MPI_Win_sync(m->iwin);
    if (rc != MPI_SUCCESS) /* no other rank may wait for this one's blocks */
        return agx_ntf_fail(m, rc);
    if (g->shared) {
        *g->shared = data; /* agx_allgatherv_shared gives it a hold */
    } else if ((rc = copy_out(a, &l, data)) != MPI_SUCCESS) {
        return rc;
    }
    if (held)
        rc = agx_error(MPI_ERR_OTHER, "agx_allgatherv_shared: the previous result on this communicator was not "
                       "released (agx_shared_release) before this call; it was overwritten");
    return rc;
}
