/*
 * Flat schedules simulated without MPI (tests/unit/simsched.h): for every p in 1..PMAX
 * every block reaches every rank (exactly once for the exchange schedules), sends and
 * receives pair up, and the messages and blocks sent per rank equal the closed forms.
 */
#include "patterns.h"
#include "simsched.h"
#include "unit.h"

#define PMAX 70

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
    ASSERT_EQ(agx_ceil_logk(16, 4), 2);
    ASSERT_EQ(agx_ceil_logk(17, 4), 3);
    ASSERT_EQ(agx_ceil_logk(1, 4), 0);
    ASSERT_EQ(agx_floor_pow2(7), 4);
    ASSERT_EQ(agx_mod(-1, 5), 4);
    ASSERT_EQ(agx_bruck_count(4, 6), 2);
}

TEST(sched_container)
{
    agx_sched s;
    int blocks[] = {5, 6, 7, 2, 9};
    agx_sched_init(&s);
    ASSERT_EQ(agx_sched_add_range(&s, 3, AGX_SOP_SEND, 1, 0, 2), 0);
    ASSERT_EQ(agx_sched_add_blocks(&s, 1, AGX_SOP_RECV, 2, blocks, 5), 0);
    ASSERT_EQ(agx_sched_add_range(&s, 0, AGX_SOP_SEND, 1, 4, 0), 0); /* empty: skipped */
    ASSERT_EQ(agx_sched_finish(&s), 0);
    ASSERT_EQ(s.n, 2);
    ASSERT_EQ(s.nrounds, 4);
    ASSERT_EQ(s.ops[0].round, 1);               /* sorted by round */
    ASSERT_EQ(s.ops[0].nr, 3);                  /* 5-7 merged, 2, 9 */
    ASSERT_EQ(agx_sop_nblocks(&s, &s.ops[0]), 5);
    ASSERT(agx_sop_has(&s, &s.ops[0], 9) && !agx_sop_has(&s, &s.ops[0], 8));
    agx_sched_free(&s);
}

TEST(ring)
{
    for (int p = 1; p <= PMAX; p++) {
        sim_counts c;
        ASSERT(sim_flat("ring", agx_build_ring, 0, p, 1, &c));
        ASSERT_EQ(c.msgs_max, p - 1);
        ASSERT_EQ(c.blocks_max, p - 1);
    }
}

TEST(bruck)
{
    for (int p = 1; p <= PMAX; p++) {
        sim_counts c;
        ASSERT(sim_flat("bruck", agx_build_bruck, 0, p, 1, &c));
        ASSERT_EQ(c.msgs_max, agx_ceil_log2(p));   /* Bienz: log2(p) messages */
        ASSERT_EQ(c.blocks_max, p - 1);            /* and m(p-1)/p values */
    }
}

/* kbruck: round i (D = k^i) sends one message per digit j < k with j D < p. */
static int kbruck_msgs(int p, int k)
{
    int n = 0;
    for (long long D = 1; D < p; D *= k)
        for (int j = 1; j < k && j * D < p; j++)
            n++;
    return n;
}

TEST(kbruck)
{
    for (int k = 2; k <= 9; k++)
        for (int p = 1; p <= PMAX; p++) {
            sim_counts c;
            ASSERT(sim_flat("kbruck", agx_build_kbruck, k, p, 1, &c));
            ASSERT_EQ(c.rounds, agx_ceil_logk(p, k));
            ASSERT_EQ(c.msgs_max, kbruck_msgs(p, k));
            ASSERT_EQ(c.msgs_total, p * kbruck_msgs(p, k));
            ASSERT_EQ(c.blocks_max, p - 1);
        }
}

/* sparbit: ceil(log2 p) rounds, one message per round that transfers anything. */
static int sparbit_msgs(int p)
{
    int L = agx_ceil_log2(p), z = 0, n = 1, msgs = 0;
    if (p <= 1)
        return 0;
    while (!((p >> z) & 1))
        z++;
    unsigned skip = (~((unsigned)p >> z) | 1u) << z;
    for (int i = 0; i < L; i++) {
        int d = 1 << (L - 1 - i), x = (d & skip) == (unsigned)d;
        msgs += n - x > 0;
        n = 2 * n - x;
    }
    return msgs;
}

TEST(sparbit)
{
    for (int p = 1; p <= PMAX; p++) {
        sim_counts c;
        ASSERT(sim_flat("sparbit", agx_build_sparbit, 0, p, 1, &c));
        ASSERT_EQ(c.rounds, agx_ceil_log2(p));
        ASSERT_EQ(c.msgs_max, sparbit_msgs(p));
        ASSERT(c.msgs_max <= agx_ceil_log2(p));
        ASSERT_EQ(c.blocks_max, p - 1);
    }
    /* larger and odd shapes: 255, 256, 257, 1000 */
    int big[] = {255, 256, 257, 1000};
    for (int i = 0; i < 4; i++) {
        sim_counts c;
        ASSERT(sim_flat("sparbit", agx_build_sparbit, 0, big[i], 1, &c));
        ASSERT_EQ(c.blocks_max, big[i] - 1);
    }
}

TEST(recursive_doubling)
{
    for (int p = 1; p <= PMAX; p++) {
        sim_counts c;
        ASSERT(sim_flat("recursive_doubling", agx_build_recursive_doubling, 0, p, 1, &c));
        int p2 = agx_floor_pow2(p), e = p - p2, L = agx_ceil_log2(p2);
        /* rank 0 sends L doubling messages plus, with extras, the result to rank p2 */
        ASSERT_EQ(c.msgs_max, p > 1 ? L + (e > 0) : 0);
        ASSERT_EQ(c.msgs_total, p2 * L + 2 * e);
        if (e == 0)
            ASSERT_EQ(c.blocks_max, p - 1);
    }
}

TEST(neighbor_exchange)
{
    for (int p = 2; p <= PMAX; p += 2) {
        sim_counts c;
        ASSERT(sim_flat("neighbor_exchange", agx_build_neighbor_exchange, 0, p, 1, &c));
        ASSERT_EQ(c.msgs_max, p / 2);
        /* 1 block at round 0, then a pair per round */
        ASSERT_EQ(c.blocks_max, 1 + 2 * (p / 2 - 1));
    }
}

TEST(gather_bcast)
{
    for (int p = 1; p <= PMAX; p++) {
        sim_counts c;
        ASSERT(sim_flat("gather_bcast", agx_build_gather_bcast, 0, p, 0, &c));
        /* every non-root sends once to the root; the broadcast adds p-1 messages */
        ASSERT_EQ(c.msgs_total, 2 * (p - 1));
        ASSERT_EQ(c.msgs_max, agx_ceil_log2(p));   /* the root's broadcast sends */
        ASSERT_EQ(c.rounds, (p > 1) + agx_ceil_log2(p));
    }
}

UNIT_MAIN()
