/*
 * The all-to-many kernels' schedules (src/patterns/alltoallv.h) for every rank, without
 * MPI, for p = 1..PMAX over random patterns (many zeros, all-to-many, dense) and throttle
 * values: every non-empty pair is one send at its sender and one receive at its receiver
 * in the same round (so no rank waits on another's later round: no deadlock even with
 * synchronous sends), an empty pair has no operation, a round holds at most T receives
 * and T sends, pairwise at most one of each, the own block is one local copy; the
 * balanced kernel's rank list is Figure 1b's and its receivers start with themselves.
 */
#include "alltoallv.h"
#include "unit.h"

#include <stdlib.h>
#include <string.h>

#define PMAX 40

static unsigned rnd(unsigned *s)
{
    *s ^= *s << 13, *s ^= *s >> 17, *s ^= *s << 5;
    return *s;
}

/* nz[s * p + j]: pattern kind 0 random half, 1 all-to-many (m receivers), 2 dense. */
static void make(unsigned char *nz, int p, int kind, int m, unsigned *s)
{
    int *recv = calloc((size_t)p, sizeof(int));
    for (int n = 0; n < m && n < p; n++) {
        int j = (int)(rnd(s) % (unsigned)p);
        while (recv[j])
            j = (j + 1) % p;
        recv[j] = 1;
    }
    for (int a = 0; a < p; a++)
        for (int b = 0; b < p; b++)
            nz[a * p + b] = (unsigned char)(kind == 0 ? (int)(rnd(s) % 2) : kind == 1 ? recv[b] : 1);
    free(recv);
}

/* Build every rank's schedule and check it; 1 when all checks pass. */
static int check(agx_a2a_kernel k, int p, const unsigned char *nz, int T, const char *what)
{
    int ok = 1, *ns = calloc((size_t)p, sizeof(int));
    unsigned char *snz = malloc((size_t)p), *rnz = malloc((size_t)p);
    int *sround = malloc(sizeof(int) * (size_t)p * p), *rround = malloc(sizeof(int) * (size_t)p * p);
    for (int i = 0; i < p * p; i++)
        sround[i] = rround[i] = -1;
    for (int s = 0; s < p; s++)
        for (int j = 0; j < p; j++)
            ns[j] += nz[s * p + j];
    agx_a2a_pattern pt;
    agx_a2a_pattern_init(&pt, p, ns);
    for (int r = 0; r < p && ok; r++) {
        for (int x = 0; x < p; x++)
            snz[x] = nz[r * p + x], rnz[x] = nz[x * p + r];
        agx_a2a_side d = {.p = p, .r = r, .snz = snz, .rnz = rnz, .pt = &pt, .throttle = T,
                          .send_flags = AGX_SOP_SYNC};
        agx_sched s;
        agx_sched_init(&s);
        CHECKF(agx_build_a2a(&s, k, &d) >= 0 && !agx_sched_finish(&s), ok, "%s p=%d: build failed", what, p);
        int copies = 0, *per = calloc((size_t)(s.nrounds + 1) * 2, sizeof(int));
        for (int i = 0; i < s.n && ok; i++) {
            const agx_sop *o = &s.ops[i];
            int blk = s.ranges[o->r0].first;
            CHECKF(agx_sop_nblocks(&s, o) == 1 && blk == (o->kind == AGX_SOP_COPY ? r : o->peer), ok,
                   "%s p=%d r=%d: op on block %d", what, p, r, blk);
            if (o->kind == AGX_SOP_COPY) {
                copies++;
                continue;
            }
            int send = o->kind == AGX_SOP_SEND, *slot = send ? &sround[r * p + o->peer] : &rround[o->peer * p + r];
            CHECKF(o->peer != r && (send ? snz : rnz)[o->peer] && *slot < 0, ok,
                   "%s p=%d r=%d: %s peer %d empty, own or twice", what, p, r, send ? "send" : "recv", o->peer);
            CHECKF(!send || (o->flags & AGX_SOP_SYNC), ok, "%s: send mode lost", what);
            *slot = o->round;
            per[2 * o->round + send]++;
        }
        for (int t = 0; t < s.nrounds && ok; t++) {
            int lim = k == AGX_A2A_PAIRWISE ? 1 : T > 0 && k != AGX_A2A_ASCENDING ? T : p;
            CHECKF(per[2 * t] <= lim && per[2 * t + 1] <= lim, ok, "%s p=%d T=%d r=%d round %d: %d recvs %d sends",
                   what, p, T, r, t, per[2 * t], per[2 * t + 1]);
        }
        CHECKF(copies == (snz[r] || rnz[r]), ok, "%s p=%d r=%d: %d own copies", what, p, r, copies);
        free(per);
        agx_sched_free(&s);
    }
    for (int s = 0; s < p && ok; s++)
        for (int j = 0; j < p && ok; j++) {
            int want = s != j && nz[s * p + j];
            CHECKF(want ? sround[s * p + j] >= 0 && sround[s * p + j] == rround[s * p + j]
                        : sround[s * p + j] < 0 && rround[s * p + j] < 0,
                   ok, "%s p=%d T=%d: pair %d->%d send round %d recv round %d", what, p, T, s, j,
                   sround[s * p + j], rround[s * p + j]);
        }
    agx_a2a_pattern_free(&pt);
    free(ns), free(snz), free(rnz), free(sround), free(rround);
    return ok;
}

TEST(kernels_all_patterns)
{
    unsigned seed = 12345;
    unsigned char *nz = malloc(PMAX * PMAX);
    const int T[] = {0, 1, 2, 3, 32};
    for (int p = 1; p <= PMAX; p++)
        for (int kind = 0; kind < 3; kind++) {
            int m = kind == 1 ? 1 + (int)(rnd(&seed) % (unsigned)p) : p;
            make(nz, p, kind, m, &seed);
            for (int k = AGX_A2A_ASCENDING; k <= AGX_A2A_PAIRWISE; k++)
                for (int t = 0; t < 5; t++)
                    ASSERT(check((agx_a2a_kernel)k, p, nz, T[t], "kernel"));
        }
    free(nz);
}

TEST(balanced_rank_list)
{
    /* Figure 1b: p = 8, R = {0, 1, 2, 3}: list {0, 4, 1, 5, 2, 6, 3, 7} */
    int ns[8] = {8, 8, 8, 8, 0, 0, 0, 0}, want[8] = {0, 4, 1, 5, 2, 6, 3, 7};
    agx_a2a_pattern pt;
    ASSERT_EQ(agx_a2a_pattern_init(&pt, 8, ns), 0);
    ASSERT_EQ(pt.nrecv, 4);
    ASSERT_EQ(pt.smax, 8);
    for (int i = 0; i < 8; i++)
        ASSERT_EQ(pt.list[i], want[i]);
    for (int j = 0; j < 4; j++)
        ASSERT_EQ(pt.start[j], 2 * j);
    /* p = 10, |R| = 4: p mod |R| = 2 groups of 3, then groups of 2 (Alg. 2 lines 5-10) */
    int ns2[10] = {0, 0, 5, 0, 0, 5, 0, 5, 0, 5};
    agx_a2a_pattern_free(&pt);
    ASSERT_EQ(agx_a2a_pattern_init(&pt, 10, ns2), 0);
    ASSERT_EQ(pt.start[2], 0);
    ASSERT_EQ(pt.start[5], 3);
    ASSERT_EQ(pt.start[7], 6);
    ASSERT_EQ(pt.start[9], 8);
    ASSERT_EQ(pt.start[0], -1);
    for (int j = 0; j < 10; j++)
        ASSERT_EQ(pt.list[pt.pos[j]], j);
    /* every receiver's index 0 is itself; spread-out's first sender is r + 1 */
    ASSERT_EQ(agx_a2a_index(AGX_A2A_BALANCED, 10, &pt, 7, 7), 0);
    ASSERT_EQ(agx_a2a_index(AGX_A2A_SPREAD, 10, &pt, 8, 7), 1);
    agx_a2a_pattern_free(&pt);
}

/* All-to-many, |R| = p/2 receivers 0..p/2-1 (Figure 1): in spread-out's first step every
 * rank above the last receiver sends to that receiver; in balanced's each receiver reads
 * from one sender only. */
TEST(balanced_spreads_first_step)
{
    for (int p = 4; p <= PMAX; p += 2) {
        int *ns = calloc((size_t)p, sizeof(int)), *hits = calloc((size_t)p, sizeof(int));
        for (int j = 0; j < p / 2; j++)
            ns[j] = p;
        agx_a2a_pattern pt;
        agx_a2a_pattern_init(&pt, p, ns);
        int worst_spread = 0, worst_bal = 0;
        for (int k = 0; k < 2; k++) {
            memset(hits, 0, sizeof(int) * (size_t)p);
            for (int s = 0; s < p; s++) { /* the receiver each sender starts with */
                int best = -1, bi = p;
                for (int j = 0; j < p / 2; j++) {
                    int i = agx_a2a_index(k ? AGX_A2A_BALANCED : AGX_A2A_SPREAD, p, &pt, s, j);
                    if (j != s && i < bi)
                        bi = i, best = j;
                }
                hits[best]++;
            }
            for (int j = 0; j < p; j++)
                *(k ? &worst_bal : &worst_spread) = hits[j] > *(k ? &worst_bal : &worst_spread)
                                                        ? hits[j] : *(k ? &worst_bal : &worst_spread);
        }
        ASSERT(worst_spread >= p / 2);
        ASSERT(worst_bal <= 2);
        agx_a2a_pattern_free(&pt);
        free(ns), free(hits);
    }
}

UNIT_MAIN()
