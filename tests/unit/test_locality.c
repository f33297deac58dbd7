/*
 * Locality-aware schedules (Bienz) simulated without MPI for every rank: region layouts
 * of consecutive blocks (uneven last region included), round-robin and random labels,
 * p = 1..40. Checked: sends and receives pair up in the same step with the same blocks,
 * a rank sends only blocks it holds, loc_bruck never delivers a block twice, every rank
 * ends with all p blocks, no block set overflows; and the paper's counts (Example 2.1,
 * Fig. 5/6, Eq. 3/4) for non-local messages and values, derived from its formulas.
 */
#include "locality.h"
#include "model.h"
#include "patterns.h"
#include "simsched.h"
#include "unit.h"

#include <stdlib.h>
#include <string.h>

enum { LOC_BRUCK, HIER, MULTI, LANES };
static const char *names[] = {"loc_bruck", "hierarchical", "multileader", "multilane"};

typedef struct {
    int max_nl_msgs, max_nl_blocks, max_l_msgs, total_nl_msgs;
} counts;

/* Simulate algorithm alg on regions R (nl: leaders for multileader, fanout for
 * multilane). 0 = ok. */
static int simulate(int alg, const agx_regions *R, int nl, counts *c)
{
    static const agx_locbuild_fn build[] = {agx_build_loc_bruck, agx_build_hierarchical, agx_build_multileader,
                                                agx_build_multilane};
    int p = R->p, bad = 0;
    int *order = malloc(sizeof(int) * p), *vidx = malloc(sizeof(int) * p), *vlabel = malloc(sizeof(int) * p);
    agx_sched *S = calloc(p, sizeof(agx_sched));
    unsigned char *has = calloc((size_t)p * p + 1, 1);
    (alg == MULTI ? agx_order_multileader : agx_order_regions)(R, nl, order);
    for (int v = 0; v < p; v++)
        vidx[order[v]] = v;
    for (int r = 0; r < p; r++) {
        agx_sched_init(&S[r]);
        if (build[alg](R, nl, vidx, r, &S[r]) || agx_sched_finish(&S[r])) {
            fprintf(stderr, "%s p=%d: schedule of rank %d failed\n", names[alg], p, r);
            bad = 1;
        }
        has[r * p + vidx[r]] = 1;
        vlabel[r] = R->region_of[r];
    }
    sim_counts sc = {0};
    bad = bad || !sim_run(names[alg], S, p, has, alg == LOC_BRUCK || alg == LANES, vlabel, &sc);
    *c = (counts){sc.nl_msgs_max, sc.nl_blocks_max, sc.l_msgs_max, sc.nl_msgs_total};
    for (int r = 0; r < p; r++)
        agx_sched_free(&S[r]);
    free(S), free(has), free(order), free(vidx), free(vlabel);
    return bad;
}

static int run_all(int p, const int *label)
{
    agx_regions R;
    if (agx_regions_init(&R, p, label))
        return 1;
    counts c;
    int bad = simulate(LOC_BRUCK, &R, 1, &c) || simulate(HIER, &R, 1, &c);
    for (int nl = 1; nl <= 3 && nl <= R.min_size && !bad; nl++)
        bad = simulate(MULTI, &R, nl, &c);
    for (int f = 1; f <= 4 && !bad; f++) { /* multilane: ceil(log_K r) rounds of <= f messages */
        bad = simulate(LANES, &R, f, &c);
        int L = R.r < 2 ? 0 : agx_ceil_logk(R.r, agx_multilane_radix(R.r, R.min_size, f));
        if (!bad && (c.max_nl_msgs > L * f || (R.r > 1 && R.min_size * f >= R.r - 1 && L != 1))) {
            fprintf(stderr, "multilane p=%d r=%d f=%d: %d non-local messages > %d\n", p, R.r, f, c.max_nl_msgs,
                    L * f);
            bad = 1;
        }
    }
    if (!bad) { /* loc_bruck's non-local message count is ceil(log_k r) */
        int k = R.min_size < 2 ? 2 : R.min_size;
        simulate(LOC_BRUCK, &R, 1, &c);
        if (c.max_nl_msgs != agx_ceil_logk(R.r, k)) {
            fprintf(stderr, "loc_bruck p=%d r=%d: %d non-local messages, expected %d\n", p, R.r, c.max_nl_msgs,
                    agx_ceil_logk(R.r, k));
            bad = 1;
        }
    }
    agx_regions_free(&R);
    return bad;
}

TEST(consecutive_regions)
{
    int label[40];
    for (int p = 1; p <= 40; p++)
        for (int n = 1; n <= 9; n++) {
            for (int i = 0; i < p; i++)
                label[i] = i / n;
            ASSERT_EQ(run_all(p, label), 0);
        }
}

TEST(round_robin_and_random_regions)
{
    int label[40];
    unsigned s = 7;
    for (int p = 1; p <= 40; p++) {
        for (int n = 1; n <= 5; n++) {
            for (int i = 0; i < p; i++)
                label[i] = i % n;
            ASSERT_EQ(run_all(p, label), 0);
        }
        for (int trial = 0; trial < 4; trial++) {
            for (int i = 0; i < p; i++) {
                s = s * 1103515245u + 12345u;
                label[i] = (int)((s >> 16) % 6);
            }
            ASSERT_EQ(run_all(p, label), 0);
        }
    }
}

TEST(overrides)
{
    int label[10];
    ASSERT_EQ(agx_regions_override("4", NULL, 10, label), 1);
    ASSERT(label[3] == 0 && label[4] == 1 && label[9] == 2);
    ASSERT_EQ(agx_regions_override(NULL, "round_robin:3", 10, label), 1);
    ASSERT(label[0] == 0 && label[4] == 1 && label[9] == 0);
    ASSERT_EQ(agx_regions_override(NULL, NULL, 10, label), 0);
    ASSERT_EQ(agx_regions_override("x", NULL, 10, label), -1);
    ASSERT_EQ(agx_regions_override(NULL, "blocks:2", 10, label), -1);
}

/* Bienz's numbers, from its formulas and Algorithm 1's partners. */
TEST(paper_counts)
{
    int label[64];
    agx_regions R;
    counts c;
    /* Example 2.1: 16 processes, regions of 4 */
    for (int i = 0; i < 16; i++)
        label[i] = i / 4;
    agx_regions_init(&R, 16, label);
    ASSERT_EQ(simulate(LOC_BRUCK, &R, 1, &c), 0);
    ASSERT_EQ(c.max_nl_msgs, 1);     /* "only a single non-local message" */
    ASSERT_EQ(c.max_nl_blocks, 4);   /* "only 4 data values non-locally" (Fig. 5) */
    ASSERT(c.max_l_msgs <= 2 * 2);   /* log2(p_l) (log_pl(r) + 1) local messages */
    agx_regions_free(&R);
    /* standard Bruck on the same layout: 4 non-local messages, 15 values (Sec. 4) */
    int nl_msgs = 0, nl_blocks = 0;
    agx_model_bruck_nonlocal(16, label, &nl_msgs, &nl_blocks);
    ASSERT_EQ(nl_msgs, 4);
    ASSERT_EQ(nl_blocks, 15);
    /* 64 = 4 regions of 16 and 64 = 16 regions of 4: ceil(log_pl(r)) non-local messages;
     * values pl^1 + ... + pl^L sent non-locally by the busiest process (Fig. 6) */
    int cases[2][2] = {{16, 4}, {4, 16}}; /* {p_l, r} */
    for (int k = 0; k < 2; k++) {
        int pl = cases[k][0], r = cases[k][1];
        for (int i = 0; i < 64; i++)
            label[i] = i / pl;
        agx_regions_init(&R, 64, label);
        ASSERT_EQ(simulate(LOC_BRUCK, &R, 1, &c), 0);
        ASSERT_EQ(c.max_nl_msgs, agx_model_loc_bruck_nonlocal_msgs(r, pl));
        ASSERT_EQ(c.max_nl_msgs, pl == 16 ? 1 : 2);
        ASSERT_EQ(c.max_nl_blocks, agx_model_loc_bruck_nonlocal_blocks(r, pl));
        agx_regions_free(&R);
    }
    ASSERT_EQ(agx_model_loc_bruck_nonlocal_blocks(16, 4), 4 + 16);
    /* Eq. 3 and Eq. 4 with Example 2.1 and unit costs: 4 alpha + 15 beta, and
     * 1 alpha + 4 beta + 2 log2(4) alpha_l + 15 beta_l (the text's local step count) */
    ASSERT(agx_model_bruck_eq3(16, 1, 1, 1) == 4 + 15);
    ASSERT(agx_model_loc_bruck_eq4(16, 4, 1, 1, 1, 10, 100) == 1 + 4 + 2 * 2 * 10 + 15 * 100);
}

/* multilane's counts against its model (model.h) for equal regions, and its step counts:
 * one local step per phase, (L+1)(p_l-1) local messages per process. */
TEST(multilane_counts)
{
    static int label[1024];
    int cases[][3] = {{16, 4, 1}, {16, 4, 2}, {4, 16, 1}, {4, 16, 8}, {16, 64, 8}, {16, 64, 1}, {8, 2, 1},
                      {2, 8, 1}, {1, 8, 2}, {3, 7, 2}};  /* {p_l, r, F} */
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        int pl = cases[k][0], r = cases[k][1], F = cases[k][2], p = pl * r;
        for (int i = 0; i < p; i++)
            label[i] = i / pl;
        agx_regions R;
        counts c;
        agx_regions_init(&R, p, label);
        ASSERT_EQ(simulate(LANES, &R, F, &c), 0);
        int L = agx_model_multilane_rounds(r, pl, F);
        ASSERT_EQ(c.max_nl_msgs, agx_model_multilane_nonlocal_msgs(r, pl, F));
        ASSERT_EQ(c.max_nl_blocks, agx_model_multilane_nonlocal_blocks(r, pl, F));
        ASSERT_EQ(c.max_l_msgs, (L + 1) * (pl - 1));
        agx_regions_free(&R);
    }
    /* 64 regions of 16 with F = 8: one non-local round (K = 64) where loc_bruck needs two */
    ASSERT_EQ(agx_model_multilane_rounds(64, 16, 8), 1);
    ASSERT_EQ(agx_model_loc_bruck_nonlocal_msgs(64, 16), 2);
    ASSERT_EQ(agx_model_multilane_rounds(256, 16, 8), 2);
    ASSERT_EQ(agx_model_multilane_rounds(256, 16, 16), 1);
    /* the fanout used: the smallest with the fewest rounds */
    ASSERT_EQ(agx_multilane_fanout(64, 16, 8), 4);  /* K = 65 */
    ASSERT_EQ(agx_multilane_fanout(16, 16, 8), 1);  /* K = 16 */
    ASSERT_EQ(agx_multilane_fanout(256, 16, 8), 1); /* two rounds either way: K = 17 */
    ASSERT_EQ(agx_multilane_fanout(256, 16, 16), 16);
    /* 16 regions of 4, fanout 3: K = 13, two rounds; fanout 1 (K = 5) also needs two, so
     * f = 1: round 1 sends 1 region, round 2 min(5, 16-5) = 5: 2 messages, 6 x 4 blocks;
     * fanout 4 (K = 16): one round of 4 messages, 4 x 4 blocks */
    ASSERT_EQ(agx_model_multilane_nonlocal_msgs(16, 4, 3), 2);
    ASSERT_EQ(agx_model_multilane_nonlocal_blocks(16, 4, 3), 24);
    ASSERT_EQ(agx_model_multilane_nonlocal_msgs(16, 4, 4), 4);
    ASSERT_EQ(agx_model_multilane_nonlocal_blocks(16, 4, 4), 16);
    ASSERT(agx_model_multilane(64, 4, 1, 1, 1, 10, 100, 3) == 2 + 24 + 3 * 10 + 63 * 100);
}

UNIT_MAIN()
