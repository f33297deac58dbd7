/*
 * File domains and the aggregators' merge (src/patterns/filedomain.c) against models:
 * every byte's aggregator and stream offset computed by walking the file in order and
 * counting each aggregator's bytes (the definition in filedomain.h), and a merge checked
 * against a sort.
 */
#include "filedomain.h"
#include "unit.h"

#include <stdlib.h>

static unsigned rnd(unsigned *s)
{
    unsigned x = *s ? *s : 0x9E3779B9u;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return *s = x;
}

/* model: the aggregator of byte o */
static int model_aggr(const agx_fd *fd, long long o)
{
    if (fd->style == AGX_FD_EVEN)
        return (int)((o - fd->lo) / fd->dsize);
    return (int)((o / fd->ss) % fd->sc) % fd->naggr;
}

/* Cut [lo, hi) into pieces; every byte's (aggregator, L) must match the model, each piece
 * must be one aggregator's, contiguous in its stream and inside one round; a piece ends
 * only where the next byte changes aggregator, jumps in L, or starts a round. */
static int check_case(agx_fd_style style, int naggr, long long lo, long long hi, long long cb, long long ss, int sc)
{
    agx_fd fd;
    if (agx_fd_init(&fd, style, naggr, lo, hi, cb, ss, sc))
        return 1;
    long long *count = calloc((size_t)naggr, sizeof *count);
    long long start = style == AGX_FD_EVEN ? lo : fd.row0 * ss * sc, o = start;
    for (; o < lo; o++) /* striped streams start at lo's stripe row */
        count[model_aggr(&fd, o)]++;
    int bad = 0;
    while (o < hi && !bad) {
        int a;
        long long round, pos, len = agx_fd_piece(&fd, o, hi, &a, &round, &pos), clo, chi, cr;
        bad |= len < 1 || o + len > hi;
        int ca; /* the even layout's chunk: the same piece without the divisions */
        if (style == AGX_FD_EVEN)
            bad |= agx_fd_chunk(&fd, o, &ca, &cr, &clo, &chi) || ca != a || cr != round || o - clo != pos ||
                   (hi < chi ? hi : chi) - o != len;
        else
            bad |= agx_fd_chunk(&fd, o, &ca, &cr, &clo, &chi) != -1;
        for (long long k = 0; k < len && !bad; k++) {
            int ma = model_aggr(&fd, o + k);
            long long L = count[ma]++;
            bad |= ma != a || L / cb != round || L % cb != pos + k;
        }
        if (!bad && o + len < hi) { /* maximal: the next byte could not have joined */
            int ma = model_aggr(&fd, o + len);
            long long L = count[ma];
            bad |= ma == a && L / cb == round && L % cb == pos + len;
        }
        o += len;
    }
    free(count);
    return bad;
}

TEST(filedomain_even_and_striped)
{
    unsigned s = 12345;
    for (int i = 0; i < 3000; i++) {
        int naggr = 1 + (int)(rnd(&s) % 9), sc = 1 + (int)(rnd(&s) % 7);
        long long lo = rnd(&s) % 3 ? rnd(&s) % 5000 : 0, hi = lo + 1 + rnd(&s) % 4000;
        long long cb = 1 + rnd(&s) % 700, ss = 1 + rnd(&s) % 300;
        ASSERT_EQ(check_case(i % 2 ? AGX_FD_STRIPED : AGX_FD_EVEN, naggr, lo, hi, cb, ss, sc), 0);
    }
    agx_fd fd;
    ASSERT(agx_fd_init(&fd, AGX_FD_EVEN, 0, 0, 10, 1, 1, 1) < 0);
    ASSERT(agx_fd_init(&fd, AGX_FD_STRIPED, 2, 0, 10, 1, 0, 1) < 0);
    ASSERT(agx_fd_init(&fd, AGX_FD_EVEN, 2, 5, 4, 1, 1, 1) < 0);
}

/* KangRoss20 Fig. 2: striped, 3 aggregators, stripe 4, cb = stripe: unit u goes to
 * aggregator u mod 3 in round u / 3; even: 2 domains of 6 bytes, cb 4: rounds 0 and 1. */
TEST(filedomain_figure2)
{
    agx_fd fd;
    int a;
    long long r, pos;
    ASSERT_EQ(agx_fd_init(&fd, AGX_FD_STRIPED, 3, 0, 48, 4, 4, 3), 0);
    for (long long u = 0; u < 12; u++) {
        ASSERT_EQ(agx_fd_piece(&fd, u * 4, 48, &a, &r, &pos), 4);
        ASSERT_EQ(a, u % 3);
        ASSERT_EQ(r, u / 3);
        ASSERT_EQ(pos, 0);
    }
    ASSERT_EQ(agx_fd_init(&fd, AGX_FD_EVEN, 2, 0, 12, 4, 0, 0), 0);
    ASSERT_EQ(agx_fd_piece(&fd, 0, 12, &a, &r, &pos), 4);
    ASSERT_EQ(agx_fd_piece(&fd, 4, 12, &a, &r, &pos), 2);
    ASSERT_EQ(r, 1);
    ASSERT_EQ(agx_fd_piece(&fd, 6, 12, &a, &r, &pos), 4);
    ASSERT_EQ(a, 1);
    ASSERT_EQ(r, 0);
}

static int cmp(const void *x, const void *y)
{
    long long a = *(const long long *)x, b = *(const long long *)y;
    return a < b ? -1 : a > b;
}

TEST(merge_sorted)
{
    unsigned s = 777;
    for (int it = 0; it < 500; it++) {
        int k = 1 + (int)(rnd(&s) % 12);
        long long start[13], n = 0, key[2 * 400], out[400], sorted[400];
        start[0] = 0;
        for (int i = 0; i < k; i++) {
            int m = (int)(rnd(&s) % 30);
            long long v = rnd(&s) % 50;
            for (int j = 0; j < m; j++, n++) {
                v += rnd(&s) % 20;
                key[2 * n] = v, key[2 * n + 1] = -1;
                sorted[n] = v;
            }
            start[i + 1] = n;
        }
        ASSERT_EQ(agx_merge_sorted(k, start, key, 2, out), 0);
        qsort(sorted, (size_t)n, sizeof *sorted, cmp);
        for (long long j = 0; j < n; j++) {
            ASSERT_EQ(key[2 * out[j]], sorted[j]);
            if (j > 0 && key[2 * out[j]] == key[2 * out[j - 1]]) /* ties: lower list, then list order */
                ASSERT(out[j] > out[j - 1]);
        }
    }
}

UNIT_MAIN()
