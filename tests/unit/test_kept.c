/*
 * The kept communicators' ids (src/patterns/kept.h) under every order of two threads'
 * opens: R ranks each open a file on one thread (A) and on another (B) at once, each rank
 * reserving for A and B in its own order (2^R orders), and every rank keeps both new
 * duplicates. Each rank's two ids must differ (else a later offer of that id could name
 * A's communicator on one rank and B's on another), and the same creation must have the
 * same id on every rank. Then K more rounds of the same, each rank's counter going on:
 * no id repeats on a rank. The scheme before the reservations (the largest of the ranks'
 * next free numbers, advanced only when a duplicate is kept) fails this, as printed.
 */
#include "kept.h"
#include "unit.h"

enum { RMAX = 5, K = 4 };

/* One round: A's and B's ids from each rank's reservations in the order `order` (bit r:
 * rank r reserved for B first); next[r]: rank r's counter. */
static void round_ids(int R, unsigned order, long long *next, long long *ida, long long *idb, int old)
{
    long long resa[RMAX], resb[RMAX], maxa = -1, maxb = -1;
    for (int r = 0; r < R; r++) {
        if (old) /* the earlier scheme: both offers read the same counter */
            resa[r] = resb[r] = next[r];
        else if (order >> r & 1)
            resb[r] = next[r]++, resa[r] = next[r]++;
        else
            resa[r] = next[r]++, resb[r] = next[r]++;
        maxa = resa[r] > maxa ? resa[r] : maxa, maxb = resb[r] > maxb ? resb[r] : maxb;
    }
    *ida = old ? maxa : agx_kept_id(maxa, resa[0]);
    *idb = old ? maxb : agx_kept_id(maxb, resb[0]);
    if (old) /* kept: every counter past the agreed number */
        for (int r = 0; r < R; r++)
            next[r] = (maxa > maxb ? maxa : maxb) + 1;
}

/* 0 when every order gives distinct ids, on every rank, over K rounds. */
static int check(int R, int old)
{
    for (unsigned o0 = 0; o0 < 1u << R; o0++) {
        long long next[RMAX] = {0}, seen[2 * K];
        for (int r = 0; r < R; r++)
            next[r] = (long long)(o0 * 7 + (unsigned)r * 3) % 5; /* counters that differ between ranks */
        for (int k = 0; k < K; k++) {
            long long a, b;
            round_ids(R, (o0 * 2654435761u >> k) & ((1u << R) - 1), next, &a, &b, old);
            seen[2 * k] = a, seen[2 * k + 1] = b;
        }
        for (int i = 0; i < 2 * K; i++)
            for (int j = i + 1; j < 2 * K; j++)
                if (seen[i] == seen[j])
                    return 1;
    }
    return 0;
}

TEST(two_threads_every_order)
{
    for (int R = 1; R <= RMAX; R++)
        ASSERT_EQ(check(R, 0), 0); /* R ranks: no two kept communicators with one id */
}

TEST(earlier_scheme_collides)
{
    for (int R = 2; R <= RMAX; R++)
        ASSERT_EQ(check(R, 1), 1); /* the model finds the earlier scheme's collision */
}

TEST(offers_agreed)
{
    long long id = agx_kept_id(3, 2);
    ASSERT(agx_kept_same(id, -id));
    ASSERT(!agx_kept_same(-1, 1));                      /* a rank without one */
    ASSERT(!agx_kept_same(id, -agx_kept_id(3, 1)));     /* two ranks, two different ones */
    ASSERT(agx_kept_id(1, 0) != agx_kept_id(0, 1 << 30)); /* reservations wrap inside their field */
}

UNIT_MAIN()
