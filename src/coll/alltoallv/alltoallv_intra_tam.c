/*
 * tam: two-layer aggregation (KangRoss20 Sec. II-B and V, after Kang et al.'s TAM, their
 * ref. [13]). Regions as for loc_bruck (AGX_REGION_SIZE / AGX_REGIONS or shared-memory
 * nodes), one local aggregator per region: its lowest rank.
 *   0. every member sends its aggregator a header: how many non-empty messages it sends,
 *      their bytes, and from how many regions it receives;
 *   1. then one message: its (destination, bytes) list, its (source region, bytes) list
 *      and its data packed in destination order;
 *   2. aggregator a sends aggregator b, for every other region b with data, everything
 *      from region a to region b, ordered by receiver then sender (one message, an
 *      hindexed view of what it gathered: no copy);
 *   3. aggregator b sends each member everything for it, ordered by source region then
 *      sender, which the member unpacks.
 * The own block is a local copy; the aggregator's own part moves by copies. Phases 0, 1
 * and 3 stay inside a region; only aggregators talk across regions, at most r (r - 1)
 * messages (TAM's implicit throttling), posted all at once and synchronous unless
 * AGX_ALLTOALLV_SYNC=isend (the paper: TAM's kernel is ROMIO's).
 * Cost: intra-region 2 (p_l - 1) + p_l messages; across regions r - 1 per aggregator, with
 * the region's whole volume: (r - 1) ts + (bytes region a sends out) tw at aggregator a.
 */
#include "coll_alltoallv.h"

#include <stdlib.h>
#include <string.h>

typedef long long ll;

typedef struct {          /* one message of what the aggregator gathered */
    ll k, j, off, len;    /* sender (local index), destination rank, bytes at off */
    ll key;               /* region of j * p + j: sorts by region, then destination */
} piece;

typedef struct {
    const agx_args *a;
    const agx_regions *R;
    int me, reg, agg, nloc, first; /* my rank, region, its aggregator, size, first member */
    char *up;             /* header (3 ll: messages, bytes, source regions), lists, data */
    ll uplen;             /* bytes after the header */
    char *A;              /* aggregator: everything gathered, then everything received */
    ll *hd;               /* aggregator: member k's header at hd + 3 k */
    ll *upoff, gsize;     /* aggregator: member k's part at A + upoff[k]; parts end at gsize */
    piece *pc;            /* aggregator: gathered messages by (region, destination, sender) */
    ll npc;
} tam;

#define HDR(base) ((ll *)(base))
#define LISTS(h) (16 * ((h)[0] + (h)[2]))

/* Run one phase over the byte layouts (n0 blocks at cnt/dsp, then optionally n1 more). */
static int run_phase(tam *t, agx_sched *s, char *base, int n0, const MPI_Aint *c0, const MPI_Aint *d0, int n1,
                     const MPI_Aint *c1, const MPI_Aint *d1)
{
    agx_blocks b[2];
    agx_exec x;
    agx_blocks_bytes(&b[0], base, n0, c0, d0);
    agx_blocks_bytes(&b[1], base, n1, c1, d1);
    agx_exec_of(t->a, b, &x);
    x.nbufs = 2;
    int rc = agx_sched_finish(s) ? agx_error(MPI_ERR_NO_MEM, "agx_alltoallv tam: out of memory")
                                 : agx_sched_run(&x, s);
    agx_sched_free(s);
    agx_sched_init(s);
    return rc;
}

/* My header, (destination, bytes) list, (source region, bytes) list and packed data. */
static int pack_mine(tam *t)
{
    const agx_a2a_args *g = &t->a->u.a2a;
    const agx_regions *R = t->R;
    ll h[3] = {0, 0, 0}, *rreg = calloc((size_t)R->r, sizeof(ll));
    if (!rreg)
        return MPI_ERR_NO_MEM;
    for (int j = 0; j < R->p; j++) {
        if (j == t->me)
            continue;
        if (g->snz[j])
            h[0]++, h[1] += agx_blk_count(&g->sblk, j) * g->sblk.type_size;
        if (g->rnz[j])
            rreg[R->region_of[j]] += agx_blk_count(&g->rblk, j) * g->rblk.type_size;
    }
    for (int x = 0; x < R->r; x++)
        h[2] += rreg[x] > 0;
    t->uplen = LISTS(h) + h[1];
    int rc = (t->up = malloc((size_t)(24 + t->uplen))) ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    if (rc == MPI_SUCCESS) {
        memcpy(t->up, h, sizeof h);
        ll *l = HDR(t->up) + 3, *rl = l + 2 * h[0];
        char *d = t->up + 24 + LISTS(h);
        for (int j = 0, n = 0; j < R->p && rc == MPI_SUCCESS; j++)
            if (j != t->me && g->snz[j]) {
                l[2 * n] = j, l[2 * n + 1] = agx_blk_count(&g->sblk, j) * g->sblk.type_size;
                rc = agx_pack(g->sblk.buf + agx_blk_displ(&g->sblk, j) * g->sblk.extent,
                              agx_blk_count(&g->sblk, j), g->sblk.type, d, 0);
                d += l[2 * n++ + 1];
            }
        for (int x = 0, n = 0; x < R->r; x++)
            if (rreg[x] > 0)
                rl[2 * n] = x, rl[2 * n + 1] = rreg[x], n++;
    }
    free(rreg);
    return rc;
}

/* Everything for me, in (source region, sender) order, into the receive buffer. */
static int unpack_mine(tam *t, const char *d)
{
    const agx_a2a_args *g = &t->a->u.a2a;
    const agx_regions *R = t->R;
    int rc = MPI_SUCCESS;
    for (int m = 0; m < R->p && rc == MPI_SUCCESS; m++) {
        int s = R->members[m];
        if (s == t->me || !g->rnz[s])
            continue;
        rc = agx_pack(g->rblk.buf + agx_blk_displ(&g->rblk, s) * g->rblk.extent, agx_blk_count(&g->rblk, s),
                      g->rblk.type, (char *)d, 1);
        d += agx_blk_count(&g->rblk, s) * g->rblk.type_size;
    }
    return rc;
}

/* A member: phases 0-1 up to the aggregator, phase 3 down from it. */
static int member(tam *t, agx_sched *s)
{
    const agx_a2a_args *g = &t->a->u.a2a;
    MPI_Aint cnt[2] = {24, (MPI_Aint)t->uplen}, dsp[2] = {0, 24};
    ll in = 0;
    int rc;
    agx_sched_add_range_ex(s, 0, AGX_SOP_SEND, t->agg, 0, 0, 0, 1);
    if (t->uplen > 0)
        agx_sched_add_range_ex(s, 0, AGX_SOP_SEND, t->agg, g->send_flags, 0, 1, 1);
    if ((rc = run_phase(t, s, t->up, 2, cnt, dsp, 0, NULL, NULL)) != MPI_SUCCESS)
        return rc;
    for (int j = 0; j < t->R->p; j++)
        if (j != t->me && g->rnz[j])
            in += agx_blk_count(&g->rblk, j) * g->rblk.type_size;
    if (in == 0)
        return MPI_SUCCESS;
    char *buf = malloc((size_t)in);
    if (!buf)
        return MPI_ERR_NO_MEM;
    cnt[0] = (MPI_Aint)in, dsp[0] = 0;
    agx_sched_add_range_ex(s, 0, AGX_SOP_RECV, t->agg, 0, 0, 0, 1);
    if ((rc = run_phase(t, s, buf, 1, cnt, dsp, 0, NULL, NULL)) == MPI_SUCCESS)
        rc = unpack_mine(t, buf);
    free(buf);
    return rc;
}

/* Aggregator, phases 0-1: every member's header, then its lists and data, into A. */
static int gather(tam *t, agx_sched *s)
{
    int n = t->nloc, rc;
    ll *hd = t->hd = malloc(sizeof(ll) * 3 * (size_t)n);
    MPI_Aint *c = malloc(sizeof(MPI_Aint) * 2 * (size_t)n);
    t->upoff = malloc(sizeof(ll) * (size_t)n);
    if (!hd || !c || !t->upoff) {
        free(c);
        return MPI_ERR_NO_MEM;
    }
    MPI_Aint *d = c + n;
    memcpy(hd, t->up, 24);
    for (int k = 0; k < n; k++)
        c[k] = 24, d[k] = 24 * k;
    for (int k = 1; k < n; k++)
        agx_sched_add_range_ex(s, 0, AGX_SOP_RECV, t->R->members[t->first + k], 0, 0, k, 1);
    rc = run_phase(t, s, (char *)hd, n, c, d, 0, NULL, NULL);
    t->gsize = 0;
    for (int k = 0; k < n; k++) {
        t->upoff[k] = t->gsize;
        c[k] = (MPI_Aint)(LISTS(hd + 3 * k) + hd[3 * k + 1]), d[k] = (MPI_Aint)t->gsize;
        t->gsize += c[k];
    }
    if (rc == MPI_SUCCESS && !(t->A = malloc((size_t)t->gsize + 1)))
        rc = MPI_ERR_NO_MEM;
    if (rc == MPI_SUCCESS) {
        memcpy(t->A, t->up + 24, (size_t)t->uplen);
        for (int k = 1; k < n; k++)
            if (c[k] > 0)
                agx_sched_add_range_ex(s, 0, AGX_SOP_RECV, t->R->members[t->first + k], 0, 0, k, 1);
        rc = run_phase(t, s, t->A, n, c, d, 0, NULL, NULL);
    }
    free(c);
    return rc;
}

static int by_key(const void *x, const void *y)
{
    const piece *a = x, *b = y;
    return a->key != b->key ? (a->key < b->key ? -1 : 1) : (a->k > b->k) - (a->k < b->k);
}

/* The gathered messages, sorted by (destination region, destination, sender). */
static int sort_pieces(tam *t)
{
    t->npc = 0;
    for (int k = 0; k < t->nloc; k++)
        t->npc += t->hd[3 * k];
    if (!(t->pc = malloc(sizeof(piece) * (size_t)(t->npc + 1))))
        return MPI_ERR_NO_MEM;
    for (int k = 0, n = 0; k < t->nloc; k++) {
        const ll *h = t->hd + 3 * k, *l = (const ll *)(t->A + t->upoff[k]);
        ll off = t->upoff[k] + LISTS(h);
        for (ll e = 0; e < h[0]; off += l[2 * e + 1], e++)
            t->pc[n++] = (piece){.k = k, .j = l[2 * e], .off = off, .len = l[2 * e + 1],
                                 .key = (ll)t->R->region_of[l[2 * e]] * t->R->p + l[2 * e]};
    }
    qsort(t->pc, (size_t)t->npc, sizeof(piece), by_key);
    return MPI_SUCCESS;
}

/* Phase 2: to every other aggregator what my region sends its region; from every other
 * aggregator what its region sends mine (sizes from my members' source-region lists),
 * into A + gsize + inoff[a]. */
static int exchange(tam *t, agx_sched *s, ll *inoff)
{
    const agx_regions *R = t->R;
    int r = R->r, rc;
    ll isize = 0;
    MPI_Aint *c = malloc(sizeof(MPI_Aint) * 2 * (size_t)(t->npc + r + 1));
    if (!c)
        return MPI_ERR_NO_MEM;
    MPI_Aint *d = c + t->npc, *ci = d + t->npc, *di = ci + r;
    for (int a = 0; a < r; a++)
        ci[a] = 0;
    for (int k = 0; k < t->nloc; k++) {
        const ll *h = t->hd + 3 * k, *rl = (const ll *)(t->A + t->upoff[k]) + 2 * h[0];
        for (ll e = 0; e < h[2]; e++)
            if (rl[2 * e] != t->reg)
                ci[rl[2 * e]] += (MPI_Aint)rl[2 * e + 1];
    }
    for (int a = 0; a < r; a++)
        inoff[a] = isize, di[a] = (MPI_Aint)(t->gsize + isize), isize += ci[a];
    char *A = realloc(t->A, (size_t)(t->gsize + isize + 1));
    if (!A) {
        free(c);
        return MPI_ERR_NO_MEM;
    }
    t->A = A;
    for (ll i = 0, f = 0; i < t->npc; i++) {
        c[i] = (MPI_Aint)t->pc[i].len, d[i] = (MPI_Aint)t->pc[i].off;
        int b = R->region_of[t->pc[i].j];
        if (i + 1 < t->npc && R->region_of[t->pc[i + 1].j] == b)
            continue;
        if (b != t->reg)
            agx_sched_add_range_ex(s, 0, AGX_SOP_SEND, R->members[R->start[b]], t->a->u.a2a.send_flags, 0, (int)f,
                                   (int)(i + 1 - f));
        f = i + 1;
    }
    for (int a = 0; a < r; a++)
        if (a != t->reg && ci[a] > 0)
            agx_sched_add_range_ex(s, 0, AGX_SOP_RECV, R->members[R->start[a]], 0, 1, a, 1);
    rc = run_phase(t, s, t->A, (int)t->npc, c, d, r, ci, di);
    free(c);
    return rc;
}

/* The pieces for member k in its order (source region, sender): my region's from the
 * gathered messages (pc from *q on), the others' from the received regions. */
static void member_pieces(tam *t, int k, ll *q, ll *cursor, const ll *inoff, MPI_Aint *c, MPI_Aint *d, int *nd)
{
    int j = t->R->members[t->first + k];
    const ll *h = t->hd + 3 * k, *rl = (const ll *)(t->A + t->upoff[k]) + 2 * h[0];
    for (ll e = 0; e < h[2]; e++) {
        ll a = rl[2 * e], bytes = rl[2 * e + 1];
        if (a != t->reg) {
            c[*nd] = (MPI_Aint)bytes, d[*nd] = (MPI_Aint)(t->gsize + inoff[a] + cursor[a]), (*nd)++;
            cursor[a] += bytes;
            continue;
        }
        for (; *q < t->npc && t->pc[*q].j == j; (*q)++)
            c[*nd] = (MPI_Aint)t->pc[*q].len, d[*nd] = (MPI_Aint)t->pc[*q].off, (*nd)++;
    }
}

/* Phase 3: every member's messages to it; mine unpacked from A. */
static int down(tam *t, agx_sched *s, const ll *inoff)
{
    const agx_regions *R = t->R;
    ll cap = t->npc + 1, q = 0, mine = 0;
    for (int k = 0; k < t->nloc; k++)
        cap += t->hd[3 * k + 2];
    MPI_Aint *c = malloc(sizeof(MPI_Aint) * 2 * (size_t)cap);
    ll *cursor = calloc((size_t)R->r, sizeof(ll));
    int rc = c && cursor ? MPI_SUCCESS : MPI_ERR_NO_MEM, nd = 0, mine_n = 0;
    MPI_Aint *d = c ? c + cap : NULL;
    while (q < t->npc && R->region_of[t->pc[q].j] != t->reg)
        q++;
    for (int k = 0; k < t->nloc && rc == MPI_SUCCESS; k++) {
        int f = nd;
        member_pieces(t, k, &q, cursor, inoff, c, d, &nd);
        if (k == 0)
            mine_n = nd;
        else if (nd > f)
            agx_sched_add_range_ex(s, 0, AGX_SOP_SEND, R->members[t->first + k], t->a->u.a2a.send_flags, 0, f, nd - f);
    }
    if (rc == MPI_SUCCESS)
        rc = run_phase(t, s, t->A, nd, c, d, 0, NULL, NULL);
    for (int i = 0; i < mine_n; i++)
        mine += c[i];
    char *buf = rc == MPI_SUCCESS ? malloc((size_t)mine + 1) : NULL;
    if (rc == MPI_SUCCESS && !buf)
        rc = MPI_ERR_NO_MEM;
    for (ll i = 0, o = 0; rc == MPI_SUCCESS && i < mine_n; o += c[i], i++)
        memcpy(buf + o, t->A + d[i], (size_t)c[i]);
    if (rc == MPI_SUCCESS)
        rc = unpack_mine(t, buf);
    free(buf);
    free(c);
    free(cursor);
    return rc;
}

static int aggregator(tam *t, agx_sched *s)
{
    ll *inoff = malloc(sizeof(ll) * (size_t)t->R->r);
    int rc = inoff ? gather(t, s) : MPI_ERR_NO_MEM;
    if (rc == MPI_SUCCESS)
        rc = sort_pieces(t);
    if (rc == MPI_SUCCESS)
        rc = exchange(t, s, inoff);
    if (rc == MPI_SUCCESS)
        rc = down(t, s, inoff);
    free(inoff);
    return rc;
}

int agx_alltoallv_intra_tam(const agx_args *a)
{
    const agx_a2a_args *g = &a->u.a2a;
    tam t = {.a = a, .me = a->rank};
    agx_sched s;
    int rc = agx_ctx_regions(a->ctx, &t.R);
    if (rc != MPI_SUCCESS)
        return rc;
    t.reg = t.R->region_of[t.me];
    t.first = t.R->start[t.reg];
    t.nloc = t.R->size[t.reg];
    t.agg = t.R->members[t.first];
    agx_sched_init(&s);
    if (g->snz[t.me] || g->rnz[t.me])
        rc = agx_localcopy(g->sblk.buf + agx_blk_displ(&g->sblk, t.me) * g->sblk.extent,
                           agx_blk_count(&g->sblk, t.me), g->sblk.type,
                           g->rblk.buf + agx_blk_displ(&g->rblk, t.me) * g->rblk.extent,
                           agx_blk_count(&g->rblk, t.me), g->rblk.type);
    if (rc == MPI_SUCCESS)
        rc = pack_mine(&t);
    if (rc == MPI_SUCCESS)
        rc = t.me == t.agg ? aggregator(&t, &s) : member(&t, &s);
    agx_sched_free(&s);
    free(t.up), free(t.A), free(t.hd), free(t.upoff), free(t.pc);
    if (rc == MPI_ERR_NO_MEM)
        rc = agx_error(MPI_ERR_NO_MEM, "agx_alltoallv tam: out of memory");
    return rc;
}
