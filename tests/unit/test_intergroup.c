/*
 * Intergroup plans (KangTraff19) without MPI, exhaustively for group sizes 1..12 and many
 * block-size shapes: partitions cover the byte space, Algorithm 2 segments are floor/ceil
 * of K/n, Algorithm 1 sends whole blocks from the larger group and balanced pieces from
 * the smaller one, send and receive plans describe the same pieces, every byte is
 * delivered exactly once, the receive order is that of Section 4.1, and the exchange-phase
 * bytes equal Theorem 1's terms. The model reproduces Eq. 5's ratios.
 */
#include "intergroup.h"
#include "model.h"
#include "unit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NMAX 12

/* Check a full exchange G -> H. Returns 0 when consistent. */
static int check_exchange(int nG, int nH, const long long *k, const long long *bnd, const char *what)
{
    long long pre[NMAX + 1], total = 0;
    for (int g = 0; g < nG; g++) {
        pre[g] = total;
        total += k[g];
    }
    pre[nG] = total;
    if (bnd[0] != 0 || bnd[nH] != total) {
        fprintf(stderr, "%s nG=%d nH=%d: partition ends %lld..%lld, total %lld\n", what, nG, nH, bnd[0], bnd[nH], total);
        return 1;
    }
    unsigned char *got = calloc((size_t)total + 1, 1);
    agx_piece sp[NMAX], rp[NMAX + 2];
    long long sent_to[NMAX] = {0};
    int bad = 0;
    for (int g = 0; g < nG && !bad; g++) {
        int n = agx_plan_sends(pre[g], k[g], bnd, nH, sp);
        long long sum = 0;
        for (int i = 0; i < n; i++) {
            sum += sp[i].len;
            sent_to[sp[i].peer] += sp[i].len;
            if (i > 0 && sp[i].peer <= sp[i - 1].peer)
                bad = 1; /* receivers ascending */
        }
        if (sum != k[g])
            bad = 1; /* a sender sends exactly its block */
    }
    for (int h = 0; h < nH && !bad; h++) {
        int n = agx_plan_recvs(h, bnd, pre, nG, rp);
        long long sum = 0;
        for (int i = 0; i < n; i++) {
            long long gidx = bnd[h] + rp[i].off;
            int g = rp[i].peer;
            /* the piece lies in sender g's block and was planned by g for receiver h */
            if (gidx < pre[g] || gidx + rp[i].len > pre[g + 1])
                bad = 1;
            int ns = agx_plan_sends(pre[g], k[g], bnd, nH, sp), found = 0;
            for (int j = 0; j < ns; j++)
                found |= sp[j].peer == h && pre[g] + sp[j].off == gidx && sp[j].len == rp[i].len;
            if (!found)
                bad = 1;
            for (long long b = gidx; b < gidx + rp[i].len; b++)
                got[b]++;
            sum += rp[i].len;
        }
        if (sum != bnd[h + 1] - bnd[h] || sum != sent_to[h])
            bad = 1;
        /* Section 4.1 order: a multi-target first sender goes last, a multi-target last
         * sender (distinct from the first) goes first */
        if (n >= 2) {
            int lo = rp[0].peer, hi = rp[0].peer;
            for (int i = 1; i < n; i++) {
                if (rp[i].peer < lo) lo = rp[i].peer;
                if (rp[i].peer > hi) hi = rp[i].peer;
            }
            if (pre[hi + 1] > bnd[h + 1] && rp[0].peer != hi)
                bad = 1;
            if (pre[lo] < bnd[h] && rp[n - 1].peer != lo)
                bad = 1;
        }
    }
    for (long long b = 0; b < total && !bad; b++)
        if (got[b] != 1)
            bad = 1; /* every byte exactly once */
    if (bad)
        fprintf(stderr, "%s nG=%d nH=%d: inconsistent plan\n", what, nG, nH);
    free(got);
    return bad;
}

TEST(balanced_start)
{
    ASSERT_EQ(agx_balanced_start(10, 3, 0), 0);
    ASSERT_EQ(agx_balanced_start(10, 3, 1), 4);
    ASSERT_EQ(agx_balanced_start(10, 3, 2), 7);
    ASSERT_EQ(agx_balanced_start(10, 3, 3), 10);
    ASSERT_EQ(agx_balanced_start(2, 5, 5), 2);
}

TEST(algorithm2_balanced)
{
    unsigned s = 12345;
    for (int nG = 1; nG <= NMAX; nG++)
        for (int nH = 1; nH <= NMAX; nH++)
            for (int shape = 0; shape < 6; shape++) {
                long long k[NMAX], bnd[NMAX + 1], total = 0;
                for (int g = 0; g < nG; g++) {
                    s = s * 1103515245u + 12345u;
                    switch (shape) {
                    case 0: k[g] = 4000; break;                          /* equal */
                    case 1: k[g] = 4 * (g + 1); break;                   /* arithmetic (setting 6) */
                    case 2: k[g] = g == nG / 2 ? 10007 : 0; break;       /* one large, zeros */
                    case 3: k[g] = (s >> 16) % 5 == 0 ? 0 : (s >> 16) % 997; break; /* random */
                    case 4: k[g] = 0; break;                             /* all empty */
                    default: k[g] = 1; break;                            /* tiny */
                    }
                    total += k[g];
                }
                agx_partition_balanced(total, nH, bnd);
                for (int h = 0; h < nH; h++) {
                    long long len = bnd[h + 1] - bnd[h];
                    ASSERT(len == total / nH || len == total / nH + 1);
                }
                ASSERT_EQ(check_exchange(nG, nH, k, bnd, "alg2"), 0);
            }
}

TEST(algorithm1_subgroups)
{
    for (int nG = 1; nG <= NMAX; nG++)
        for (int nH = 1; nH <= NMAX; nH++)
            for (long long kk = 0; kk <= 13; kk += 13) {
                long long k[NMAX], bnd[NMAX + 1];
                long long kb = kk ? kk : 7;
                for (int g = 0; g < nG; g++)
                    k[g] = kb;
                agx_partition_subgroups(nG, nH, kb, bnd);
                ASSERT_EQ(check_exchange(nG, nH, k, bnd, "alg1"), 0);
                for (int h = 0; h < nH; h++) {
                    long long len = bnd[h + 1] - bnd[h];
                    if (nG >= nH) {
                        /* whole blocks: ceil or floor(nG/nH) of them (Fig. 2: 3,3,2 for 8/3) */
                        ASSERT(bnd[h] % kb == 0);
                        ASSERT(len == kb * (nG / nH) || len == kb * (nG / nH + 1));
                    } else {
                        /* a piece of one block: floor/ceil of kB over its subgroup */
                        ASSERT(bnd[h] / kb == (bnd[h + 1] - 1) / kb || len == 0);
                        long long lo = kb / ((nH + nG - 1) / nG), hi = (kb + nH / nG - 1) / (nH / nG);
                        ASSERT(len >= lo - 1 && len <= hi);
                    }
                }
            }
}

/* Theorem 1: with q <= p and uniform blocks, the exchange moves max(kA p/q, kB) per
 * process pair direction: a process of B receives ceil(p/q) blocks of A, a process of A
 * receives at most ceil(kB / floor(p/q)) bytes of B, and each sends exactly its block. */
TEST(theorem1_exchange_bytes)
{
    for (int p = 1; p <= NMAX; p++)
        for (int q = 1; q <= p; q++) {
            long long kA = 24, kB = 20, bndAB[NMAX + 1], bndBA[NMAX + 1];
            agx_partition_subgroups(p, q, kA, bndAB); /* A -> B */
            agx_partition_subgroups(q, p, kB, bndBA); /* B -> A */
            long long maxB = 0, maxA = 0;
            for (int h = 0; h < q; h++)
                if (bndAB[h + 1] - bndAB[h] > maxB) maxB = bndAB[h + 1] - bndAB[h];
            for (int h = 0; h < p; h++)
                if (bndBA[h + 1] - bndBA[h] > maxA) maxA = bndBA[h + 1] - bndBA[h];
            ASSERT_EQ(maxB, kA * ((p + q - 1) / q));
            int fl = p / q;
            ASSERT_EQ(maxA, (kB + fl - 1) / fl);
            /* Theorem 1's exchange term, exactly where it applies (q | p, (p/q) | kB):
             * full duplex, a process spends max(sent, received); the busiest spends
             * max(kA p/q, kB). */
            if (p % q == 0 && kB % (p / q) == 0) {
                long long busiest = 0;
                for (int h = 0; h < q; h++) { /* B: sends kB, receives its segment of A */
                    long long t = bndAB[h + 1] - bndAB[h] > kB ? bndAB[h + 1] - bndAB[h] : kB;
                    if (t > busiest) busiest = t;
                }
                for (int h = 0; h < p; h++) { /* A: sends kA, receives its piece of B */
                    long long t = bndBA[h + 1] - bndBA[h] > kA ? bndBA[h + 1] - bndBA[h] : kA;
                    if (t > busiest) busiest = t;
                }
                long long expect = kA * (p / q) > kB ? kA * (p / q) : kB;
                ASSERT_EQ(busiest, expect);
                ASSERT(agx_model_ig_thm1_transfer(p, q, kA, kB) >= (double)(p * kA > q * kB ? p * kA : q * kB));
            }
        }
}

static double round2(double x) { return floor(x * 100 + 0.5) / 100; }

TEST(model_eq5)
{
    /* settings 1-4 as messages grow: p:q = 1 or 25:7, k ratios 1, 1, 4:1, 1:4 */
    ASSERT(round2(agx_model_ig_eq5_ratio(64 * 1.0, 64 * 1.0)) == 7.00);
    ASSERT(round2(agx_model_ig_eq5_ratio(25 * 1.0, 7 * 1.0)) == 4.84);
    ASSERT(round2(agx_model_ig_eq5_ratio(25 * 4.0, 7 * 1.0)) == 4.21);
    ASSERT(round2(agx_model_ig_eq5_ratio(25 * 1.0, 7 * 4.0)) == 6.68);
    /* Eq. 2 over the bound M tends to Eq. 5's ratio (here 1791/256 = 6.996 -> 7) */
    double eq2 = agx_model_ig_root_gather_eq2(256, 256, 1e6, 1e6, 0, 1);
    ASSERT(fabs(eq2 / agx_model_ig_lower_bound(256e6, 256e6) - 1791.0 / 256) < 1e-9);
    /* Theorem 1 tends to the bound M */
    ASSERT(agx_model_ig_thm1_transfer(2500, 700, 1, 1) / agx_model_ig_lower_bound(2500, 700) < 1.001);
    ASSERT(agx_model_ig_thm3_transfer(100, 50, 10, 5) == 110);
    /* volume model: p = 5, q = 4, equal blocks k: segmented 40k, root gathering 47k */
    ASSERT(fabs(agx_model_ig_volume_ratio(5, 4, 5, 4, 1, 1) - 47.0 / 40) < 1e-12);
    /* p = 7, q = 2 (settings 2, 7): 28k against 35k */
    ASSERT(fabs(agx_model_ig_volume_ratio(7, 2, 7, 2, 1, 1) - 35.0 / 28) < 1e-12);
}

UNIT_MAIN()
