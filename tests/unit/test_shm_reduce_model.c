/*
 * dissemination_shm's node-shared protocol (src/coll/allreduce/allreduce_intra_dissemination_shm.c)
 * explored through every interleaving of one region's ranks over consecutive calls of
 * growing and shrinking sizes (tests/unit/interleave.h). The layout is the code's own
 * (agx_shmar_layout_of, agx_ar_lanes); the steps are the code's, one model step each:
 *   begin    layout from the last call's result size (held); grow if it does not fit:
 *            a region barrier, then the segment replaced, zeroed (src/core/shm.c)
 *   count    bytes[j] = this call's bytes            (step 1)
 *   slot     the vector into slot j                  (step 1)
 *   sync1    arrive; leave when every rank arrived   (agx_shm_sync)
 *   counts   read every rank's count                 (the mismatch check)
 *   reduce   lane j: read block j of every slot, write block j of the result (step 2)
 *   lane     lane j: the dissemination among the nodes, in place on its block (step 3)
 *   sync2    arrive; leave                           (agx_shm_sync)
 *   copy     read the whole result                   (step 4)
 * Every cell of the segment (4 bytes) remembers which write stored it; each read checks
 * that it sees the write the protocol means (this call's count or slot of rank i, this
 * call's result block of lane j). Mutants of the protocol (the layout before issue 50,
 * a missing sync) must be caught, which shows the exploration can see such races.
 */
#include "allreduce.h"
#include "interleave.h"
#include "shm_layout.h"
#include "unit.h"

enum { MAXP = 5, MAXC = 4, CELLS = 640 };
enum { M_NONE, M_OLD_LAYOUT, M_NO_SYNC2 };
enum { K_COUNT, K_SLOT, K_RES };
enum { S_BEGIN, S_GROWW, S_COUNT, S_SLOT, S_SYNC1, S_SYNC1W, S_COUNTS, S_REDUCE, S_LANE, S_SYNC2, S_SYNC2W, S_COPY };

typedef struct {
    int L, maxL, minL, calls, elem, lane_bytes, mutant;
    int span[MAXC];
} ar_params;

typedef struct {
    unsigned char mem[CELLS];      /* provenance of each 4-byte cell, 0: zeroed */
    unsigned short size;           /* segment bytes, 0: none yet */
    unsigned char arrived[3 * MAXC];
    struct {
        unsigned char call, pc, bar;
        unsigned short held;       /* agx_shm.held: each process's own */
        unsigned short slots, slot, res; /* this call's layout */
    } pr[MAXP];
} ar_state;

static unsigned char prov(int call, int kind, int i) { return (unsigned char)(1 + (call * 3 + kind) * MAXP + i); }

static void layout(const ar_params *q, int held, int span, agx_shmar_layout *l)
{
    agx_shmar_layout_of(q->maxL, (size_t)span, (size_t)held, l);
    if (q->mutant == M_OLD_LAYOUT) { /* before the fix: slots first, the result after this call's slots */
        l->slots = l->hdr;
        l->res = l->hdr + (size_t)q->L * l->slot;
        l->bytes = l->hdr + l->slot * (size_t)(q->maxL + 1);
    }
}

static int write_cells(ar_state *s, size_t off, size_t bytes, unsigned char v)
{
    for (size_t c = off / 4; c < (off + bytes + 3) / 4; c++)
        s->mem[c] = v;
    return XS_OK;
}

static int read_cells(xmodel *m, const ar_state *s, size_t off, size_t bytes, unsigned char want, int p,
                      const char *what)
{
    for (size_t c = off / 4; c < (off + bytes + 3) / 4; c++)
        if (s->mem[c] != want) {
            snprintf(m->why, sizeof m->why, "rank %d, call %d, %s: byte %zu holds write %d, not %d", p,
                     s->pr[p].call, what, c * 4, s->mem[c], want);
            return XS_BAD;
        }
    return XS_OK;
}

/* This call's lanes and lane j's elements [lo, hi). */
static long long lanes(const ar_params *q, int call)
{
    long long n = q->span[call] / q->elem;
    return agx_ar_lanes(n, q->span[call], q->lane_bytes, q->minL);
}

static void block(const ar_params *q, int call, int j, long long *lo, long long *hi)
{
    long long n = q->span[call] / q->elem, nl = lanes(q, call);
    *lo = n * j / nl, *hi = n * (j + 1) / nl;
}

static int barrier(ar_state *s, int p, int wait, int next)
{
    if (!wait) {
        s->arrived[s->pr[p].bar]++;
        s->pr[p].pc = (unsigned char)(next);
        return XS_OK;
    }
    return XS_BLOCKED;
}

static int ar_step(xmodel *m, void *v, int p)
{
    const ar_params *q = m->params;
    ar_state *s = v;
    int c = s->pr[p].call, span = c < q->calls ? q->span[c] : 0, j = p;
    long long lo, hi;
    if (c == q->calls)
        return XS_DONE;
    switch (s->pr[p].pc) {
    case S_BEGIN: {
        agx_shmar_layout l;
        layout(q, s->pr[p].held, span, &l);
        s->pr[p].slots = (unsigned short)l.slots, s->pr[p].slot = (unsigned short)l.slot;
        s->pr[p].res = (unsigned short)l.res;
        if (l.bytes <= s->size) {
            s->pr[p].pc = S_COUNT;
            return XS_OK;
        }
        if (++s->arrived[s->pr[p].bar] == q->L) { /* the last to arrive: the segment is replaced */
            size_t want = l.bytes < 2u * s->size ? 2u * s->size : l.bytes;
            if (want / 4 > CELLS) {
                snprintf(m->why, sizeof m->why, "model: segment of %zu bytes exceeds %d cells", want, CELLS);
                return XS_BAD;
            }
            memset(s->mem, 0, sizeof s->mem);
            s->size = (unsigned short)want;
        }
        s->pr[p].pc = S_GROWW;
        return XS_OK;
    }
    case S_GROWW:
    case S_SYNC1W:
    case S_SYNC2W:
        if (s->arrived[s->pr[p].bar] < q->L)
            return XS_BLOCKED;
        s->pr[p].bar++;
        if (s->pr[p].pc == S_GROWW) {
            s->pr[p].held = 0;
            s->pr[p].pc = S_COUNT;
        } else {
            s->pr[p].pc = s->pr[p].pc == S_SYNC1W ? S_COUNTS : S_COPY;
        }
        return XS_OK;
    case S_COUNT:
        s->pr[p].held = (unsigned short)span;
        s->pr[p].pc = S_SLOT;
        return write_cells(s, (size_t)j * 8, 8, prov(c, K_COUNT, j));
    case S_SLOT:
        s->pr[p].pc = S_SYNC1;
        return write_cells(s, s->pr[p].slots + (size_t)j * s->pr[p].slot, (size_t)span, prov(c, K_SLOT, j));
    case S_SYNC1:
        return barrier(s, p, 0, S_SYNC1W);
    case S_COUNTS:
        for (int i = 0; i < q->L; i++)
            if (read_cells(m, s, (size_t)i * 8, 8, prov(c, K_COUNT, i), p, "reading the counts") != XS_OK)
                return XS_BAD;
        block(q, c, j, &lo, &hi);
        s->pr[p].pc = j < lanes(q, c) && hi > lo ? S_REDUCE : S_SYNC2;
        return XS_OK;
    case S_REDUCE:
        block(q, c, j, &lo, &hi);
        for (int i = 0; i < q->L; i++)
            if (read_cells(m, s, s->pr[p].slots + (size_t)i * s->pr[p].slot + (size_t)(lo * q->elem),
                           (size_t)((hi - lo) * q->elem), prov(c, K_SLOT, i), p, "reducing a slot") != XS_OK)
                return XS_BAD;
        s->pr[p].pc = S_LANE;
        return write_cells(s, s->pr[p].res + (size_t)(lo * q->elem), (size_t)((hi - lo) * q->elem),
                           prov(c, K_RES, j));
    case S_LANE:
        block(q, c, j, &lo, &hi);
        if (read_cells(m, s, s->pr[p].res + (size_t)(lo * q->elem), (size_t)((hi - lo) * q->elem), prov(c, K_RES, j),
                       p, "the lane's block") != XS_OK)
            return XS_BAD;
        s->pr[p].pc = S_SYNC2;
        return XS_OK; /* written in place with the same provenance */
    case S_SYNC2:
        if (q->mutant == M_NO_SYNC2) {
            s->pr[p].pc = S_COPY;
            return XS_OK;
        }
        return barrier(s, p, 0, S_SYNC2W);
    case S_COPY:
        for (int i = 0; i < lanes(q, c); i++) {
            block(q, c, i, &lo, &hi);
            if (read_cells(m, s, s->pr[p].res + (size_t)(lo * q->elem), (size_t)((hi - lo) * q->elem),
                           prov(c, K_RES, i), p, "copying the result out") != XS_OK)
                return XS_BAD;
        }
        s->pr[p].call++;
        s->pr[p].pc = S_BEGIN;
        return XS_OK;
    }
    return XS_BAD;
}

/* Explore one shape; returns the result (quiet for the mutants). */
static xresult explore(const ar_params *q, int quiet)
{
    static ar_state init; /* large: not on the stack */
    memset(&init, 0, sizeof init);
    xmodel m = {.nproc = q->L, .size = sizeof(ar_state), .step = ar_step, .params = q};
    xresult r = xexplore(&m, &init, quiet);
    if (!quiet || !r.bad)
        printf("  L=%d maxL=%d minL=%d elem=%d lane_bytes=%d spans=%d,%d,%d,%d%s: %lld states, %lld transitions%s\n",
               q->L, q->maxL, q->minL, q->elem, q->lane_bytes, q->span[0], q->span[1], q->span[2], q->span[3],
               q->mutant == M_OLD_LAYOUT ? " (old layout)" : q->mutant == M_NO_SYNC2 ? " (no second sync)" : "",
               r.states, r.transitions, r.bad ? " VIOLATION" : "");
    return r;
}

/* The call sequences: growing, shrinking, both, repeated, with a size that fits in the
 * previous call's slot and one that does not, with and without the segment growing in
 * between (a call that grows it is preceded by a region barrier). Bytes, multiples of 8. */
static const int seqs[][MAXC] = {{40, 80, 8, 80},  {80, 40, 80, 8},    {8, 160, 40, 160},
                                 {48, 48, 16, 48}, {16, 136, 136, 16}, {160, 8, 80, 40}};

TEST(every_interleaving_is_exact)
{
    long long states = 0, shapes = 0;
    for (int L = 2; L <= 4; L++)
        for (int extra = 0; extra <= 1; extra++)
            for (int lb = 0; lb < 2; lb++)
                for (int e = 0; e < 2; e++)
                    for (size_t k = 0; k < sizeof seqs / sizeof seqs[0]; k++) {
                        if (L == 4 && (extra || e)) /* the largest shapes: one element size, regions of 4 */
                            continue;
                        ar_params q = {.L = L, .maxL = L + extra, .minL = extra ? L - 1 : L, .calls = MAXC,
                                       .elem = e ? 8 : 4, .lane_bytes = lb ? 8 : 4096};
                        memcpy(q.span, seqs[k], sizeof seqs[k]);
                        xresult r = explore(&q, 0);
                        ASSERT(!r.bad);
                        states += r.states, shapes++;
                    }
    printf("  %lld shapes, %lld states in all, no violation\n", shapes, states);
}

/* The checker sees the race issue 50 reported (a larger call's slot over the last result
 * a slower rank still copies), and a missing sync; else a passing run would prove nothing. */
TEST(mutants_are_caught)
{
    ar_params q = {.L = 2, .maxL = 2, .minL = 2, .calls = MAXC, .elem = 4, .lane_bytes = 4096,
                   .mutant = M_OLD_LAYOUT, .span = {80, 40, 80, 8}};
    ASSERT(explore(&q, 0).bad); /* printed: the interleaving of issue 50 */
    q.L = q.maxL = q.minL = 4;
    ASSERT(explore(&q, 1).bad);
    q.mutant = M_NO_SYNC2;
    q.L = q.maxL = q.minL = 2;
    memcpy(q.span, seqs[3], sizeof seqs[3]);
    ASSERT(explore(&q, 1).bad);
    /* and the fixed protocol passes the shapes the mutants fail on */
    q.mutant = M_NONE;
    ASSERT(!explore(&q, 1).bad);
}

UNIT_MAIN()
