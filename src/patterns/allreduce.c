/* Allreduce schedules (see allreduce.h): dissemination (SharedNotify Sec. III), recursive
 * doubling, reduce + broadcast, ring and Rabenseifner. */
#include "allreduce.h"

#include <stddef.h>

enum { SEND = AGX_SOP_SEND, RECV = AGX_SOP_RECV, COPY = AGX_SOP_COPY, REDUCE = AGX_SOP_REDUCE };

static int floor_log2(int p) { return p >= 1 ? agx_ceil_log2(agx_floor_pow2(p)) : 0; }

int agx_ar_dissem_nbufs(int p) { return AGX_AR_PART + floor_log2(p); }

int agx_ar_nblocks(agx_build_fn build, int p)
{
    if (build == agx_build_ar_ring)
        return p;
    if (build == agx_build_ar_rabenseifner)
        return agx_floor_pow2(p);
    return 1;
}

/* One message of blocks [first, first + len) of buffer buf. */
static int msg(agx_sched *s, int t, int kind, int peer, int buf, int first, int len)
{
    return agx_sched_add_range_ex(s, t, kind, peer, 0, buf, first, len);
}

/* The dissemination rounds round0 .. round0 + l - 1 over n members on block `blk`, this
 * rank being member v; member i is rank i, or with regions R, lane `lane` of region i. */
static int dissem(agx_sched *s, int round0, int v, int n, const agx_regions *R, int lane, int blk, int part0)
{
    int l = floor_log2(n), bad = 0;
#define PEER(i) (R ? R->members[R->start[(i)] + lane] : (i))
    for (int k = 0; k < l; k++) {
        int d = 1 << k, t = round0 + k;
        bad |= msg(s, t, SEND, PEER((v + d) % n), AGX_AR_ACC, blk, 1) |
               msg(s, t, RECV, PEER((v - d + n) % n), AGX_AR_TMP, blk, 1);
        if (n >> k & 1) { /* c_k = 1: P_k goes out with this round's message */
            int D = (n >> (k + 1)) << (k + 1);
            bad |= msg(s, t, SEND, PEER((v + D) % n), AGX_AR_ACC, blk, 1) |
                   msg(s, t, RECV, PEER((v - D + n) % n), part0 + k, blk, 1);
        }
        bad |= agx_sched_add_local(s, t, REDUCE, AGX_AR_ACC, AGX_AR_TMP, blk, 1);
    }
#undef PEER
    for (int k = l - 1; k >= 0; k--) /* the partials precede the window: highest k first */
        if (n >> k & 1)
            bad |= agx_sched_add_local(s, round0 + l - 1, REDUCE, AGX_AR_ACC, part0 + k, blk, 1);
    return bad;
}

int agx_build_ar_dissemination(agx_sched *s, int round0, int r, int p, int param)
{
    (void)param;
    return dissem(s, round0, r, p, NULL, 0, 0, AGX_AR_PART) ? -1 : floor_log2(p);
}

int agx_ar_node_nbufs(const agx_regions *R) { return AGX_AR_PART + floor_log2(R->r) + R->max_size; }

long long agx_ar_lanes(long long elems, long long bytes, int lane_bytes, int min_size)
{
    long long nl = bytes / lane_bytes;
    return nl < 1 ? 1 : nl > min_size ? min_size : nl > elems ? elems : nl;
}

int agx_build_ar_dissemination_node(const agx_regions *R, int nl, const int *vidx, int rank, agx_sched *s)
{
    (void)vidx;
    int g = R->region_of[rank], me = R->local[rank], sz = R->size[g], l = floor_log2(R->r), bad = 0;
    int slot0 = AGX_AR_PART + l, t = 1 + l;
    const int *m = R->members + R->start[g];
    for (int j = 0; j < nl; j++) /* round 0: block j of my vector to lane j */
        if (j != me)
            bad |= msg(s, 0, SEND, m[j], AGX_AR_ACC, j, 1);
    if (me < nl) { /* lane me: reduce block me over the region, then across the regions */
        for (int i = 0; i < sz; i++)
            if (i != me)
                bad |= msg(s, 0, RECV, m[i], slot0 + i, me, 1);
        for (int i = 0; i < sz; i++)
            if (i != me)
                bad |= agx_sched_add_local(s, 0, REDUCE, AGX_AR_ACC, slot0 + i, me, 1);
        bad |= dissem(s, 1, g, R->r, R, me, me, AGX_AR_PART);
        for (int i = 0; i < sz; i++) /* round l + 1: my block to the region */
            if (i != me)
                bad |= msg(s, t, SEND, m[i], AGX_AR_ACC, me, 1);
    }
    for (int j = 0; j < nl; j++)
        if (j != me)
            bad |= msg(s, t, RECV, m[j], AGX_AR_ACC, j, 1);
    return bad ? -1 : 0;
}

int agx_ar_radix_nbufs(const agx_regions *R, int k)
{
    return AGX_AR_PART + 1 + (2 * k > R->max_size ? 2 * k : R->max_size);
}

/* The non-local items of round i of the radix-k dissemination over n nodes (m = floor
 * log_k n, digits d of n): offsets off[] and whether each is a partial window; returns
 * how many. Rounds i < m: the regular senders j k^i (j = 1..k-1) and d_i partial windows
 * at D_i + t k^i (D_i = d_m k^m + sum_{i<i'<m} d_i' k^i'); round m: d_m - 1 full windows
 * j k^m. */
static int radix_items(int k, int i, int m, const int *d, int *off, int *partial)
{
    int c = 0, w = 1;
    for (int q = 0; q < i; q++)
        w *= k;
    if (i == m) {
        for (int j = 1; j < d[m]; j++)
            off[c] = j * w, partial[c++] = 0;
        return c;
    }
    for (int j = 1; j < k; j++)
        off[c] = j * w, partial[c++] = 0;
    int D = d[m], km = 1;
    for (int q = 0; q < m; q++)
        km *= k;
    D *= km;
    for (int q = m - 1, wq = km / k; q > i; q--, wq /= k)
        D += d[q] * wq;
    for (int t = 0; t < d[i]; t++)
        off[c] = D + t * w, partial[c++] = 1;
    return c;
}

int agx_build_ar_dissemination_radix(const agx_regions *R, int k, const int *vidx, int rank, agx_sched *s)
{
    (void)vidx;
    int g = R->region_of[rank], me = R->local[rank], sz = R->size[g], n = R->r, bad = 0, t = 0;
    int slot0 = AGX_AR_PART + 1, havep = 0, d[32] = {0}, m = 0, L = R->min_size;
    const int *mb = R->members + R->start[g];
    for (int x = n, q = 0; x > 0; x /= k, q++) /* the digits of n in base k */
        d[q] = x % k, m = q;
    /* round 0: the node's sum on every local rank (a flat exchange) */
    for (int i = 0; i < sz; i++)
        if (i != me)
            bad |= msg(s, t, SEND, mb[i], AGX_AR_ACC, 0, 1) | msg(s, t, RECV, mb[i], slot0 + i, 0, 1);
    if (sz > 1) { /* the same expression on every local rank: x_0 (+) (x_1 (+) .. x_{sz-1}) */
        bad |= agx_sched_add_local(s, t, COPY, slot0 + me, AGX_AR_ACC, 0, 1) |
               agx_sched_add_local(s, t, COPY, AGX_AR_ACC, slot0 + sz - 1, 0, 1);
        for (int i = sz - 2; i >= 0; i--)
            bad |= agx_sched_add_local(s, t, REDUCE, AGX_AR_ACC, slot0 + i, 0, 1);
    }
    t++;
    for (int i = 0; i <= m && n > 1; i++) {
        int off[128], partial[128], T = radix_items(k, i, m, d, off, partial);
        if (T == 0)
            continue;
        for (int q = 0; q < T; q++) /* item q: local rank q mod L across nodes */
            if (q % L == me) {
                int to = R->members[R->start[(g + off[q]) % n] + me];
                int from = R->members[R->start[(g - off[q] % n + n) % n] + me];
                bad |= msg(s, t, SEND, to, AGX_AR_ACC, 0, 1) | msg(s, t, RECV, from, slot0 + q, 0, 1);
            }
        for (int q = 0; q < T; q++) /* then to the rest of the node */
            for (int i2 = 0; i2 < sz; i2++)
                if (i2 != q % L && (i2 == me || q % L == me))
                    bad |= msg(s, t + 1, i2 == me ? RECV : SEND, mb[i2 == me ? q % L : i2], slot0 + q, 0, 1);
        for (int q = 0; q < T; q++) { /* regular windows into ACC, partial ones into P */
            int dst = partial[q] ? AGX_AR_PART : AGX_AR_ACC;
            bad |= agx_sched_add_local(s, t + 1, partial[q] && !havep ? COPY : REDUCE, dst, slot0 + q, 0, 1);
            havep |= partial[q];
        }
        t += 2;
    }
    if (havep)
        bad |= agx_sched_add_local(s, t - 1, REDUCE, AGX_AR_ACC, AGX_AR_PART, 0, 1);
    return bad ? -1 : 0;
}

/* The fold of the first 2e ranks (e = p - p2): returns this rank's virtual rank among the
 * p2 that go on (-1: folded away); `last` set, the result goes back to the folded rank. */
static int fold(agx_sched *s, int t, int r, int p, int nb, int last, int *bad)
{
    int p2 = agx_floor_pow2(p), e = p - p2;
    if (r >= 2 * e)
        return r - e;
    if (!last) {
        if (r % 2 == 0)
            *bad |= msg(s, t, SEND, r + 1, AGX_AR_ACC, 0, nb);
        else
            *bad |= msg(s, t, RECV, r - 1, AGX_AR_TMP, 0, nb) |
                    agx_sched_add_local(s, t, REDUCE, AGX_AR_ACC, AGX_AR_TMP, 0, nb);
    } else {
        *bad |= msg(s, t, r % 2 ? SEND : RECV, r % 2 ? r - 1 : r + 1, AGX_AR_ACC, 0, nb);
    }
    return r % 2 ? r / 2 : -1;
}

static int real_rank(int v, int e) { return v < e ? 2 * v + 1 : v + e; }

/* Exchange blocks with partner (virtual pv): send [sf, sf+sl) of *cur, receive
 * [mf, mf+ml) into the other buffer, reduce so the lower ranks' data is the left operand;
 * the result's buffer becomes *cur. */
static int exchange_reduce(agx_sched *s, int t, int peer, int lower, int *cur, int sf, int sl, int mf, int ml)
{
    int other = AGX_AR_ACC + AGX_AR_TMP - *cur;
    int bad = msg(s, t, SEND, peer, *cur, sf, sl) | msg(s, t, RECV, peer, other, mf, ml);
    if (lower) /* partner's data first: cur = other (+) cur */
        return bad | agx_sched_add_local(s, t, REDUCE, *cur, other, mf, ml);
    bad |= agx_sched_add_local(s, t, REDUCE, other, *cur, mf, ml); /* other = cur (+) other */
    *cur = other;
    return bad;
}

int agx_build_ar_recursive_doubling(agx_sched *s, int round0, int r, int p, int param)
{
    (void)param;
    if (p <= 1)
        return 0;
    int p2 = agx_floor_pow2(p), e = p - p2, L = agx_ceil_log2(p2), t = round0, bad = 0, cur = AGX_AR_ACC;
    int v = fold(s, t, r, p, 1, 0, &bad);
    t += e > 0;
    for (int mask = 1; v >= 0 && mask < p2; mask <<= 1, t++)
        bad |= exchange_reduce(s, t, real_rank(v ^ mask, e), (v ^ mask) < v, &cur, 0, 1, 0, 1);
    if (v < 0)
        t += L;
    if (cur != AGX_AR_ACC)
        bad |= agx_sched_add_local(s, t - 1, COPY, AGX_AR_ACC, cur, 0, 1);
    if (e > 0)
        fold(s, t++, r, p, 1, 1, &bad);
    return bad ? -1 : t - round0;
}

int agx_build_ar_reduce_bcast(agx_sched *s, int round0, int r, int p, int param)
{
    (void)param;
    int L = agx_ceil_log2(p), bad = 0, cur = AGX_AR_ACC;
    for (int k = 0; k < L; k++) {
        int mask = 1 << k;
        if (r & mask) { /* my ranks r .. r+mask-1 go to r - mask, then I wait for the result */
            bad |= msg(s, round0 + k, SEND, r - mask, cur, 0, 1);
            break;
        }
        if (r + mask < p) /* receive only (an empty send is no message): cur (+) theirs */
            bad |= exchange_reduce(s, round0 + k, r + mask, 0, &cur, 0, 0, 0, 1);
    }
    if (r == 0 && cur != AGX_AR_ACC)
        bad |= agx_sched_add_local(s, round0 + L - 1, COPY, AGX_AR_ACC, cur, 0, 1);
    for (int k = 0; k < L; k++) {
        int mask = 1 << k;
        if (r < mask && r + mask < p)
            bad |= msg(s, round0 + L + k, SEND, r + mask, AGX_AR_ACC, 0, 1);
        else if (r >= mask && r < 2 * mask)
            bad |= msg(s, round0 + L + k, RECV, r - mask, AGX_AR_ACC, 0, 1);
    }
    return bad ? -1 : 2 * L;
}

int agx_build_ar_ring(agx_sched *s, int round0, int r, int p, int param)
{
    (void)param;
    int bad = 0, next = (r + 1) % p, prev = (r - 1 + p) % p;
    for (int k = 0; k + 1 < p; k++) {
        int t = round0 + k, c = agx_mod(r - k - 1, p);
        bad |= msg(s, t, SEND, next, AGX_AR_ACC, agx_mod(r - k, p), 1) | msg(s, t, RECV, prev, AGX_AR_TMP, c, 1) |
               agx_sched_add_local(s, t, REDUCE, AGX_AR_ACC, AGX_AR_TMP, c, 1);
    }
    for (int k = 0; k + 1 < p; k++) {
        int t = round0 + p - 1 + k;
        bad |= msg(s, t, SEND, next, AGX_AR_ACC, agx_mod(r + 1 - k, p), 1) |
               msg(s, t, RECV, prev, AGX_AR_ACC, agx_mod(r - k, p), 1);
    }
    return bad ? -1 : 2 * (p - 1);
}

int agx_build_ar_rabenseifner(agx_sched *s, int round0, int r, int p, int param)
{
    (void)param;
    if (p <= 1)
        return 0;
    int p2 = agx_floor_pow2(p), e = p - p2, L = agx_ceil_log2(p2), t = round0, bad = 0, cur = AGX_AR_ACC;
    int v = fold(s, t, r, p, p2, 0, &bad), lo = 0;
    t += e > 0;
    if (v >= 0) {
        /* reduce-scatter by recursive halving at doubling distances (MPICH's order: the
         * largest halves go to the nearest ranks, on the same node when ranks are placed
         * node by node); my range [lo, lo + len) of blocks */
        int len = p2;
        for (int mask = 1; mask < p2; mask <<= 1, t++) {
            int half = len / 2, up = v & mask;
            int mf = up ? lo + half : lo, sf = up ? lo : lo + half;
            bad |= exchange_reduce(s, t, real_rank(v ^ mask, e), (v ^ mask) < v, &cur, sf, half, mf, half);
            lo = mf, len = half;
        }
        if (cur != AGX_AR_ACC)
            bad |= agx_sched_add_local(s, t - 1, COPY, AGX_AR_ACC, cur, lo, 1);
        for (int mask = p2 / 2; mask >= 1; mask >>= 1, t++) { /* allgather: the steps reversed */
            int peer = real_rank(v ^ mask, e), plo = v & mask ? lo - len : lo + len;
            bad |= msg(s, t, SEND, peer, AGX_AR_ACC, lo, len) | msg(s, t, RECV, peer, AGX_AR_ACC, plo, len);
            lo = plo < lo ? plo : lo, len *= 2;
        }
    } else
        t += 2 * L;
    if (e > 0)
        fold(s, t++, r, p, p2, 1, &bad);
    return bad ? -1 : t - round0;
}
