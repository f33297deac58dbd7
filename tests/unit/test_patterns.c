/*
 * Schedule simulation without MPI: for every p in 1..PMAX, run each pattern as
 * synchronous rounds over per-rank "holds block b" tables and check
 *   - a rank only sends blocks it holds, and sends and receives match pairwise;
 *   - (exchange schedules) a rank never receives a block it already holds;
 *   - at the end every rank holds all p blocks;
 *   - messages sent per rank and blocks sent per rank equal the closed forms.
 */
#include "patterns.h"
#include "unit.h"

#include <stdlib.h>
#include <string.h>

#define PMAX 70

typedef struct {
    const char *name;
    agx_nsteps_fn nsteps;
    agx_step_fn step;
    int exact_once;      /* no block is ever received twice */
    int even_only;
} sched;

typedef struct {
    int msgs_max, blocks_max;   /* over ranks */
    int msgs_total;
} sim_result;

/* Simulate; blocks are initially held only by their owner. Returns 0 on success. */
static int simulate(const sched *S, int p, sim_result *res)
{
    unsigned char *has = calloc((size_t)p * p, 1), *next = malloc((size_t)p * p);
    int *msgs = calloc(p, sizeof(int)), *blocks = calloc(p, sizeof(int));
    int ok = 1;
    for (int r = 0; r < p; r++)
        has[r * p + r] = 1;
    int n = S->nsteps(p);
    for (int s = 0; s < n && ok; s++) {
        memcpy(next, has, (size_t)p * p);
        for (int r = 0; r < p && ok; r++) {
            agx_step st, pst;
            S->step(r, p, s, &st);
            if (st.send.peer >= 0) {
                int d = st.send.peer;
                CHECKF(d >= 0 && d < p && d != r, ok, "%s p=%d s=%d r=%d bad peer %d", S->name, p, s, r, d);
                if (!ok)
                    break;
                S->step(d, p, s, &pst);
                CHECKF(pst.recv.peer == r, ok, "%s p=%d s=%d: %d sends to %d, which receives from %d",
                       S->name, p, s, r, d, pst.recv.peer);
                CHECKF(agx_set_size(&pst.recv.set) == agx_set_size(&st.send.set), ok,
                       "%s p=%d s=%d: sizes differ %d->%d", S->name, p, s, r, d);
                msgs[r]++;
                blocks[r] += agx_set_size(&st.send.set);
                for (int b = 0; b < p && ok; b++) {
                    int in = agx_set_contains(&st.send.set, b);
                    CHECKF(in == agx_set_contains(&pst.recv.set, b), ok,
                           "%s p=%d s=%d: block %d send/recv sets differ", S->name, p, s, b);
                    if (!in)
                        continue;
                    CHECKF(has[r * p + b], ok, "%s p=%d s=%d: rank %d sends block %d it lacks",
                           S->name, p, s, r, b);
                    if (S->exact_once)
                        CHECKF(!has[d * p + b] && !next[d * p + b], ok,
                               "%s p=%d s=%d: rank %d gets block %d twice", S->name, p, s, d, b);
                    next[d * p + b] = 1;
                }
            }
            if (st.recv.peer >= 0) {
                S->step(st.recv.peer, p, s, &pst);
                CHECKF(pst.send.peer == r, ok, "%s p=%d s=%d: %d receives from %d, which sends to %d",
                       S->name, p, s, r, st.recv.peer, pst.send.peer);
            }
        }
        memcpy(has, next, (size_t)p * p);
    }
    for (int i = 0; i < p * p && ok; i++)
        CHECKF(has[i], ok, "%s p=%d: rank %d misses block %d at the end", S->name, p, i / p, i % p);
    res->msgs_max = res->blocks_max = res->msgs_total = 0;
    for (int r = 0; r < p; r++) {
        if (msgs[r] > res->msgs_max) res->msgs_max = msgs[r];
        if (blocks[r] > res->blocks_max) res->blocks_max = blocks[r];
        res->msgs_total += msgs[r];
    }
    free(has); free(next); free(msgs); free(blocks);
    return ok ? 0 : 1;
}

/* The linear gather's root side: rank 0 receives from everyone in one step. Model it
 * here as sequential single receives so the simulator can match peers. */
static int lin_nsteps(int p) { return p > 1 ? p - 1 : 0; }
static void lin_step(int r, int p, int s, agx_step *st)
{
    agx_step_idle(st);
    (void)p;
    if (r == 0) {
        st->recv.peer = s + 1;
        agx_set_add(&st->recv.set, s + 1, 1);
    } else if (r == s + 1) {
        agx_linear_gather_step(r, p, 0, st);
    }
}
static int lbc_nsteps(int p) { return lin_nsteps(p) + agx_binomial_bcast_nsteps(p); }
static void lbc_step(int r, int p, int s, agx_step *st)
{
    if (s < lin_nsteps(p))
        lin_step(r, p, s, st);
    else
        agx_binomial_bcast_step(r, p, s - lin_nsteps(p), st);
}

TEST(blockset)
{
    agx_blockset s;
    agx_set_clear(&s);
    agx_set_add_circular(&s, 6, 4, 8);
    ASSERT_EQ(s.n, 2);
    ASSERT_EQ(agx_set_size(&s), 4);
    ASSERT(agx_set_contains(&s, 7) && agx_set_contains(&s, 0) && agx_set_contains(&s, 1));
    ASSERT(!agx_set_contains(&s, 2) && !agx_set_contains(&s, 5));
    agx_set_clear(&s);
    agx_set_add(&s, 0, 3);
    agx_set_add(&s, 3, 2);
    ASSERT_EQ(s.n, 1);      /* adjacent ranges merge */
    agx_set_add(&s, 9, 0);
    ASSERT_EQ(s.n, 1);      /* empty ranges are dropped */
    ASSERT_EQ(agx_ceil_log2(1), 0);
    ASSERT_EQ(agx_ceil_log2(5), 3);
    ASSERT_EQ(agx_floor_pow2(7), 4);
    ASSERT_EQ(agx_mod(-1, 5), 4);
}

TEST(ring)
{
    sched S = {"ring", agx_ring_nsteps, agx_ring_step, 1, 0};
    for (int p = 1; p <= PMAX; p++) {
        sim_result r;
        ASSERT_EQ(simulate(&S, p, &r), 0);
        ASSERT_EQ(r.msgs_max, p - 1);
        ASSERT_EQ(r.blocks_max, p - 1);
    }
}

TEST(bruck)
{
    sched S = {"bruck", agx_bruck_nsteps, agx_bruck_step, 1, 0};
    for (int p = 1; p <= PMAX; p++) {
        sim_result r;
        ASSERT_EQ(simulate(&S, p, &r), 0);
        ASSERT_EQ(r.msgs_max, agx_ceil_log2(p));   /* seed 002: log2(p) messages */
        ASSERT_EQ(r.blocks_max, p - 1);            /* and m(p-1)/p values */
    }
}

TEST(recursive_doubling)
{
    sched S = {"recursive_doubling", agx_rd_nsteps, agx_rd_step, 1, 0};
    for (int p = 1; p <= PMAX; p++) {
        sim_result r;
        ASSERT_EQ(simulate(&S, p, &r), 0);
        int p2 = agx_floor_pow2(p), e = p - p2, L = agx_ceil_log2(p2);
        /* rank 0 sends L doubling messages plus, with extras, the result to rank p2 */
        ASSERT_EQ(r.msgs_max, p > 1 ? L + (e > 0) : 0);
        ASSERT_EQ(r.msgs_total, p2 * L + 2 * e);
        if (e == 0)
            ASSERT_EQ(r.blocks_max, p - 1);
    }
}

TEST(neighbor_exchange)
{
    sched S = {"neighbor_exchange", agx_nex_nsteps, agx_nex_step, 1, 1};
    for (int p = 2; p <= PMAX; p += 2) {
        sim_result r;
        ASSERT_EQ(simulate(&S, p, &r), 0);
        ASSERT_EQ(r.msgs_max, p / 2);
        /* 1 block at step 0, then a pair per step */
        ASSERT_EQ(r.blocks_max, 1 + 2 * (p / 2 - 1));
    }
}

TEST(gather_bcast)
{
    sched S = {"gather_bcast", lbc_nsteps, lbc_step, 0, 0};
    for (int p = 1; p <= PMAX; p++) {
        sim_result r;
        ASSERT_EQ(simulate(&S, p, &r), 0);
        /* every non-root sends once to the root; the broadcast adds p-1 messages */
        ASSERT_EQ(r.msgs_total, 2 * (p - 1));
        ASSERT_EQ(r.msgs_max, agx_ceil_log2(p));   /* the root's broadcast sends */
    }
}

UNIT_MAIN()
