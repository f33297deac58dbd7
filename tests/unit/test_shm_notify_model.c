/*
 * shm_notify's protocol (src/coll/allgather/allgather_intra_shm_notify.c over the notified
 * layer src/core/notify.c, the zero-copy agx_allgatherv_shared included) explored through
 * every interleaving of 2-3 nodes' ranks over consecutive calls whose block counts and
 * sizes grow and shrink (tests/unit/interleave.h). The block numbers are the code's
 * (src/patterns/shm_blocks.c), the segment's layout too (agx_ntf_data_offset); the steps
 * are the code's, one model step each:
 *   begin   grow the segment if the call does not fit (src/core/shm.c): a region barrier,
 *           the node's segment replaced and zeroed by its first rank, then every rank of
 *           the communicator meets (the growth is agreed); the segment is fresh
 *   open    (not fresh) node barrier; the node's first rank clears this call's
 *           notification slots, then writes the last seq into the previous node's ready
 *           word (agx_ntf_open); seq++
 *   store   the rank's contribution into its node's data          (line 5)
 *   sync    node barrier                                          (line 6)
 *   ready   (not fresh) wait until the node's ready word holds the last seq
 *   put     each block of its share to its target on the next node (MPI_Put, landing at
 *           once: the earliest it can), the origin read from its node's segment
 *   notify  each block's slot on the next node := seq (after all puts are flushed)
 *   poll    the lowest pending block whose slot shows seq or -seq: claim it (seq -> -seq,
 *           atomic) or see it claimed; the winner forwards it (put, notify) unless the
 *           next node is where it came from; blocks until one arrives
 *   copy    read every rank's contribution from the node's data (the copy out, or the
 *           caller's reads of an agx_allgatherv_shared result before its next call)
 * Each 4-byte cell holds a value (slots and the ready word are read for control) and the
 * write that stored it. A data word's value is the next call's seq, the worst a stale
 * word can be (it would pass for a notification if the slots were not cleared). Checked
 * at every read: the data is the write of this call's owner; a slot acted on was written
 * by this call's notification (or claim); no slot is notified twice in a call; and no
 * rank waits forever. Mutants (no ready word, no clearing, no barrier at the start of a
 * call) must be caught.
 */
#include "interleave.h"
#include "shm_blocks.h"
#include "shm_layout.h"
#include "unit.h"

enum { MAXP = 4, MAXR = 3, MAXC = 3, NCELL = 96, MAXB = 64 };
enum { M_NONE, M_NO_READY, M_NO_CLEAR, M_NO_OPEN_SYNC };
enum { W_CLEAR = 1, W_READY, W_NOTE, W_CLAIM, W_DATA }; /* provenance kinds */
enum { B_BEGIN, B_GROW1, B_GROWW, B_OPEN, B_OPENW, B_CLEAR, B_READY, B_STORE, B_SYNC, B_SYNCW, B_WAITRDY, B_PUT, B_NOTE,
       B_POLL, B_FPUT, B_FNOTE, B_COPY };

typedef struct {
    int r, p, calls, mutant, at_displ;
    int label[MAXP];
    long long len[MAXC][MAXP], B;
    /* derived per call */
    agx_regions R;
    agx_snb s[MAXC];
    long long mem[MAXC][2 * MAXP + 2 * MAXR + 4], off[MAXC][MAXP];
    size_t doff[MAXC], need[MAXC];
} nt_params;

typedef struct {
    signed char val[MAXR][NCELL];
    unsigned char prov[MAXR][NCELL];
    unsigned short size[MAXR];
    unsigned char garr[MAXC + 1], narr[MAXR][3 * MAXC];
    struct {
        unsigned char call, pc, bar, gbar, fresh, seq, w, fwd;
        unsigned long long pend;
    } pr[MAXP];
} nt_state;

static unsigned char pv(int kind, int call, int i) { return (unsigned char)((kind * MAXC + call) * MAXP + i + 1); }

static int bad(xmodel *m, const nt_state *s, int p, const char *fmt, long long a, long long b)
{
    int n = snprintf(m->why, sizeof m->why, "rank %d, call %d: ", p, s->pr[p].call);
    snprintf(m->why + n, sizeof m->why - (size_t)n, fmt, a, b);
    return XS_BAD;
}

/* The cells [at, at + bytes) of node k's data hold block `id`'s owner's write of call c. */
static int check_data(xmodel *m, const nt_state *s, int p, int k, size_t at, long long bytes, int owner)
{
    int c = s->pr[p].call;
    for (size_t x = at / 4; x < (at + (size_t)bytes) / 4; x++)
        if (s->prov[k][x] != pv(W_DATA, c, owner))
            return bad(m, s, p, "byte %lld of its node's data holds write %lld, not the owner's of this call",
                       (long long)x * 4, s->prov[k][x]);
    return XS_OK;
}

static int target_of(const nt_params *q, int me)
{
    int k = q->R.region_of[me], k1 = (k + 1) % q->r;
    return q->R.members[q->R.start[k1] + q->R.local[me] % q->R.size[k1]];
}

/* Put block id from this rank's node to its target's node (the origin checked). */
static int put(xmodel *m, nt_state *s, int p, long long id)
{
    const nt_params *q = m->params;
    int c = s->pr[p].call, k = q->R.region_of[p], owner, k1 = q->R.region_of[target_of(q, p)];
    long long off, bytes;
    agx_snb_locate(&q->s[c], id, &owner, &off, &bytes);
    size_t at = q->doff[c] + (size_t)(q->off[c][owner] + off);
    if (check_data(m, s, p, k, at, bytes, owner) != XS_OK)
        return XS_BAD;
    for (size_t x = at / 4; x < (at + (size_t)bytes) / 4; x++)
        s->val[k1][x] = s->val[k][x], s->prov[k1][x] = s->prov[k][x];
    return XS_OK;
}

static int notify(xmodel *m, nt_state *s, int p, long long id)
{
    const nt_params *q = m->params;
    int c = s->pr[p].call, k1 = q->R.region_of[target_of(q, p)];
    size_t x = AGX_NTF_HDR / 4 + (size_t)id;
    if (s->prov[k1][x] == pv(W_NOTE, c, 0) || s->prov[k1][x] == pv(W_CLAIM, c, 0))
        return bad(m, s, p, "block %lld notified twice in one call (node %lld)", id, k1);
    s->val[k1][x] = (signed char)s->pr[p].seq, s->prov[k1][x] = pv(W_NOTE, c, 0);
    return XS_OK;
}

static int node_barrier(nt_state *s, const nt_params *q, int p, int arrive)
{
    int k = q->R.region_of[p];
    if (arrive) {
        s->narr[k][s->pr[p].bar]++;
        return XS_OK;
    }
    if (s->narr[k][s->pr[p].bar] < q->R.size[k])
        return XS_BLOCKED;
    s->pr[p].bar++;
    return XS_OK;
}

static int nt_step(xmodel *m, void *v, int p)
{
    const nt_params *q = m->params;
    nt_state *s = v;
    int c = s->pr[p].call, k = q->R.region_of[p], j = q->R.local[p], prev = (k - 1 + q->r) % q->r;
    if (c == q->calls)
        return XS_DONE;
    const agx_snb *sb = &q->s[c];
    long long first, n = agx_snb_work(sb, &q->R, k, j, &first);
    switch (s->pr[p].pc) {
    case B_BEGIN: /* growth: a region barrier, the node's segment replaced (zeroed by its
                   * first rank), then every rank of the communicator agrees */
        if (q->need[c] <= s->size[k]) {
            s->pr[p].pc = B_OPEN;
            return XS_OK;
        }
        s->pr[p].pc = B_GROW1;
        return node_barrier(s, q, p, 1);
    case B_GROW1:
        if (node_barrier(s, q, p, 0) != XS_OK)
            return XS_BLOCKED;
        if (j == 0) {
            size_t want = q->need[c] < 2u * s->size[k] ? 2u * s->size[k] : q->need[c];
            if (want / 4 > NCELL)
                return bad(m, s, p, "model: a segment of %lld bytes exceeds %lld cells", (long long)want, NCELL);
            memset(s->val[k], 0, sizeof s->val[k]), memset(s->prov[k], 0, sizeof s->prov[k]);
            s->size[k] = (unsigned short)want;
        }
        s->garr[s->pr[p].gbar]++;
        s->pr[p].pc = B_GROWW;
        return XS_OK;
    case B_GROWW:
        if (s->garr[s->pr[p].gbar] < q->p)
            return XS_BLOCKED;
        s->pr[p].gbar++, s->pr[p].fresh = 1, s->pr[p].pc = B_OPEN;
        return XS_OK;
    case B_OPEN:
        if (s->pr[p].fresh) {
            s->pr[p].seq++, s->pr[p].pc = B_STORE;
            return XS_OK;
        }
        if (q->mutant == M_NO_OPEN_SYNC) {
            s->pr[p].pc = j == 0 ? B_CLEAR : B_STORE;
            s->pr[p].seq += j != 0;
            return XS_OK;
        }
        s->pr[p].pc = B_OPENW;
        return node_barrier(s, q, p, 1);
    case B_OPENW:
        if (node_barrier(s, q, p, 0) != XS_OK)
            return XS_BLOCKED;
        s->pr[p].pc = j == 0 ? B_CLEAR : B_STORE;
        s->pr[p].seq += j != 0;
        return XS_OK;
    case B_CLEAR:
        if (q->mutant != M_NO_CLEAR)
            for (long long id = 0; id < sb->total; id++)
                s->val[k][AGX_NTF_HDR / 4 + id] = 0, s->prov[k][AGX_NTF_HDR / 4 + id] = pv(W_CLEAR, c, 0);
        s->pr[p].pc = B_READY;
        return XS_OK;
    case B_READY: /* the last seq into the previous node's ready word */
        s->val[prev][0] = (signed char)s->pr[p].seq, s->prov[prev][0] = pv(W_READY, c, 0);
        s->pr[p].seq++, s->pr[p].pc = B_STORE;
        return XS_OK;
    case B_STORE: {
        size_t at = q->doff[c] + (size_t)q->off[c][p];
        for (size_t x = at / 4; x < (at + (size_t)q->len[c][p]) / 4; x++)
            s->val[k][x] = (signed char)(s->pr[p].seq + 1), s->prov[k][x] = pv(W_DATA, c, p);
        s->pr[p].pc = B_SYNC;
        return XS_OK;
    }
    case B_SYNC:
        s->pr[p].pc = B_SYNCW;
        return node_barrier(s, q, p, 1);
    case B_SYNCW:
        if (node_barrier(s, q, p, 0) != XS_OK)
            return XS_BLOCKED;
        s->pr[p].pc = B_WAITRDY;
        return XS_OK;
    case B_WAITRDY:
        if (s->pr[p].fresh) {
            s->pr[p].fresh = 0;
        } else if (q->mutant != M_NO_READY && s->val[k][0] < s->pr[p].seq - 1) {
            return XS_BLOCKED;
        }
        s->pr[p].pend = 0;
        for (long long id = 0; id < sb->total; id++)
            if (id < sb->node_first[k] || id >= sb->node_first[k + 1])
                s->pr[p].pend |= 1ull << id;
        s->pr[p].w = 0, s->pr[p].pc = n > 0 ? B_PUT : B_POLL;
        return XS_OK;
    case B_PUT:
        if (put(m, s, p, first + s->pr[p].w) != XS_OK)
            return XS_BAD;
        if (++s->pr[p].w == n)
            s->pr[p].w = 0, s->pr[p].pc = B_NOTE;
        return XS_OK;
    case B_NOTE:
        if (notify(m, s, p, first + s->pr[p].w) != XS_OK)
            return XS_BAD;
        if (++s->pr[p].w == n)
            s->pr[p].pc = B_POLL;
        return XS_OK;
    case B_POLL: {
        int seq = s->pr[p].seq;
        if (!s->pr[p].pend) {
            s->pr[p].pc = B_COPY;
            return XS_OK;
        }
        for (long long id = 0; id < sb->total; id++) {
            size_t x = AGX_NTF_HDR / 4 + (size_t)id;
            if (!(s->pr[p].pend >> id & 1) || (s->val[k][x] != seq && s->val[k][x] != -seq))
                continue;
            s->pr[p].pend &= ~(1ull << id);
            if (s->val[k][x] == -seq) {
                if (s->prov[k][x] != pv(W_CLAIM, c, 0))
                    return bad(m, s, p, "block %lld's slot shows -seq from write %lld, not this call's claim", id,
                               s->prov[k][x]);
                return XS_OK;
            }
            if (s->prov[k][x] != pv(W_NOTE, c, 0))
                return bad(m, s, p, "block %lld's slot shows seq from write %lld, not this call's notification", id,
                           s->prov[k][x]);
            s->val[k][x] = (signed char)-seq, s->prov[k][x] = pv(W_CLAIM, c, 0);
            if (agx_snb_region(sb, id) != (k + 1) % q->r)
                s->pr[p].fwd = (unsigned char)id, s->pr[p].pc = B_FPUT;
            return XS_OK;
        }
        return XS_BLOCKED;
    }
    case B_FPUT:
        s->pr[p].pc = B_FNOTE;
        return put(m, s, p, s->pr[p].fwd);
    case B_FNOTE:
        s->pr[p].pc = B_POLL;
        return notify(m, s, p, s->pr[p].fwd);
    case B_COPY:
        for (int i = 0; i < q->p; i++)
            if (check_data(m, s, p, k, q->doff[c] + (size_t)q->off[c][i], q->len[c][i], i) != XS_OK)
                return XS_BAD;
        s->pr[p].call++, s->pr[p].pc = B_BEGIN;
        return XS_OK;
    }
    return XS_BAD;
}

/* Derive the per-call tables; the layout is packed in rank order (allgatherv), or the
 * receive layout with a gap after each block (allgather, agx_allgatherv_shared). */
static int setup(nt_params *q)
{
    if (agx_regions_init(&q->R, q->p, q->label))
        return -1;
    for (int c = 0; c < q->calls; c++) {
        long long end = 0, packed = 0, maxlen = 0;
        for (int i = 0; i < q->p; i++)
            maxlen = q->len[c][i] > maxlen ? q->len[c][i] : maxlen;
        for (int i = 0; i < q->p; i++) {
            q->off[c][i] = q->at_displ ? i * (maxlen + 4) : packed;
            packed += q->len[c][i];
            end = q->off[c][i] + q->len[c][i] > end ? q->off[c][i] + q->len[c][i] : end;
        }
        agx_snb_init(&q->s[c], &q->R, q->len[c], q->B, q->mem[c]);
        if (q->s[c].total > MAXB)
            return -1;
        q->doff[c] = agx_ntf_data_offset(q->s[c].total);
        q->need[c] = q->doff[c] + (size_t)end;
    }
    return 0;
}

static xresult explore(nt_params *q, int quiet)
{
    static nt_state init;
    memset(&init, 0, sizeof init);
    xresult r = {.bad = 1};
    if (setup(q)) {
        fprintf(stderr, "model: bad shape\n");
        return r;
    }
    xmodel m = {.nproc = q->p, .size = sizeof init, .step = nt_step, .params = q};
    r = xexplore(&m, &init, quiet);
    if (!quiet || !r.bad) {
        printf("  %d nodes (", q->r);
        for (int i = 0; i < q->p; i++)
            printf("%s%d", i ? "," : "", q->label[i]);
        printf(") B=%lld %s, blocks", q->B, q->at_displ ? "receive layout" : "packed");
        for (int c = 0; c < q->calls; c++)
            printf(" %lld", q->s[c].total);
        printf("%s: %lld states, %lld transitions%s\n",
               q->mutant == M_NO_READY ? " (no ready word)" : q->mutant == M_NO_CLEAR ? " (no clearing)"
               : q->mutant == M_NO_OPEN_SYNC ? " (no barrier at the start)" : "",
               r.states, r.transitions, r.bad ? " VIOLATION" : "");
    }
    agx_regions_free(&q->R);
    return r;
}

/* Contribution sizes (bytes) per call for up to 4 ranks: the block count grows, shrinks
 * and grows again, with empty contributions, one rank's alone and blocks of several sizes. */
static const long long lens[][MAXC][MAXP] = {
    {{8, 4, 8, 0}, {16, 8, 4, 4}, {4, 0, 4, 8}},
    {{16, 16, 8, 8}, {4, 4, 0, 0}, {8, 12, 16, 4}},
    {{0, 12, 0, 0}, {8, 8, 8, 8}, {12, 0, 4, 0}},
};

TEST(every_interleaving_is_exact)
{
    static const int shapes[][MAXP + 1] = {{2, 0, 1}, {3, 0, 0, 1}, {3, 0, 1, 1}, {3, 0, 1, 2}, {4, 0, 0, 1, 1}};
    long long states = 0, runs = 0;
    for (size_t h = 0; h < sizeof shapes / sizeof shapes[0]; h++)
        for (size_t l = 0; l < sizeof lens / sizeof lens[0]; l++)
            for (int disp = 0; disp < 2; disp++)
                for (long long B = 4; B <= 8; B += 4) {
                    nt_params q = {.p = shapes[h][0], .calls = MAXC, .at_displ = disp, .B = B};
                    for (int i = 0; i < q.p; i++)
                        q.label[i] = shapes[h][1 + i], q.r = q.label[i] + 1;
                    for (int c = 0; c < MAXC; c++)
                        for (int i = 0; i < q.p; i++)
                            q.len[c][i] = lens[l][c][i];
                    xresult r = explore(&q, 0);
                    ASSERT(!r.bad);
                    states += r.states, runs++;
                }
    printf("  %lld shapes, %lld states in all, no violation\n", runs, states);
}

TEST(mutants_are_caught)
{
    nt_params q = {.p = 3, .r = 2, .calls = MAXC, .B = 4, .label = {0, 0, 1}};
    for (int c = 0; c < MAXC; c++)
        for (int i = 0; i < q.p; i++)
            q.len[c][i] = lens[0][c][i];
    q.mutant = M_NO_READY;
    ASSERT(explore(&q, 1).bad);
    q.mutant = M_NO_OPEN_SYNC;
    ASSERT(explore(&q, 1).bad);
    /* a stale data word equal to the next seq in a slot: needs a call whose slots reach
     * past the previous call's data start without the segment growing in between */
    static const long long grow[MAXC][MAXP] = {{40, 40, 0, 0}, {4, 4, 0, 0}, {40, 40, 0, 0}};
    memcpy(q.len, grow, sizeof grow);
    q.mutant = M_NO_CLEAR;
    ASSERT(explore(&q, 1).bad);
    q.mutant = M_NONE;
    ASSERT(!explore(&q, 1).bad);
}

UNIT_MAIN()
