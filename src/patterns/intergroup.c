/* Intergroup exchange plans: partitions of a group's byte index space and the pieces
 * each sender sends and each receiver receives (KangTraff19, Algorithms 1 and 2). */
#include "intergroup.h"

long long agx_balanced_start(long long n, int m, int i)
{
    long long q = n / m, r = n % m;
    return (long long)i * q + (i < r ? i : r);
}

void agx_partition_balanced(long long total, int nH, long long *bnd)
{
    for (int h = 0; h <= nH; h++)
        bnd[h] = agx_balanced_start(total, nH, h);
}

void agx_partition_subgroups(int nG, int nH, long long k, long long *bnd)
{
    if (nG >= nH) {
        for (int h = 0; h <= nH; h++)
            bnd[h] = agx_balanced_start(nG, nH, h) * k;
        return;
    }
    for (int j = 0; j < nG; j++) {
        int first = (int)agx_balanced_start(nH, nG, j), size = (int)agx_balanced_start(nH, nG, j + 1) - first;
        for (int i = 0; i < size; i++)
            bnd[first + i] = (long long)j * k + agx_balanced_start(k, size, i);
    }
    bnd[nH] = (long long)nG * k;
}

/* First segment index h with bnd[h+1] > x (the segment holding byte x). */
static int segment_of(long long x, const long long *bnd, int n)
{
    int lo = 0, hi = n - 1;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (bnd[mid + 1] > x)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

int agx_plan_sends(long long R, long long k, const long long *bnd, int nH, agx_piece *out)
{
    int n = 0;
    if (k <= 0)
        return 0;
    for (int h = segment_of(R, bnd, nH); h < nH && bnd[h] < R + k; h++) {
        long long lo = bnd[h] > R ? bnd[h] : R;
        long long hi = bnd[h + 1] < R + k ? bnd[h + 1] : R + k;
        if (hi > lo) {
            out[n].peer = h;
            out[n].off = lo - R;
            out[n].len = hi - lo;
            n++;
        }
    }
    return n;
}

int agx_plan_recvs(int h, const long long *bnd, const long long *pre, int nG, agx_piece *out)
{
    long long lo = bnd[h], hi = bnd[h + 1];
    int n = 0, first = -1, last = -1;
    if (hi <= lo)
        return 0;
    /* senders overlapping [lo, hi), ascending */
    for (int g = segment_of(lo, pre, nG); g < nG && pre[g] < hi; g++) {
        long long a = pre[g] > lo ? pre[g] : lo, b = pre[g + 1] < hi ? pre[g + 1] : hi;
        if (b <= a)
            continue;
        if (first < 0)
            first = g;
        last = g;
    }
    if (first < 0)
        return 0;
    /* a sender is multi-target when its block reaches outside this segment */
    int multi_first = pre[first] < lo, multi_last = pre[last + 1] > hi;
    int order_n = 0, order[3][2]; /* ranges of senders in posting order: {from, to} */
    if (multi_last && last != first) {
        order[order_n][0] = last;
        order[order_n++][1] = last;
    }
    int mid_from = multi_first && first != last ? first + 1 : first;
    int mid_to = multi_last && last != first ? last - 1 : last;
    if (multi_first && first != last) {
        order[order_n][0] = mid_from;
        order[order_n++][1] = mid_to;
        order[order_n][0] = first;
        order[order_n++][1] = first;
    } else {
        order[order_n][0] = mid_from;
        order[order_n++][1] = mid_to;
    }
    for (int o = 0; o < order_n; o++)
        for (int g = order[o][0]; g <= order[o][1]; g++) {
            long long a = pre[g] > lo ? pre[g] : lo, b = pre[g + 1] < hi ? pre[g + 1] : hi;
            if (b <= a)
                continue;
            out[n].peer = g;
            out[n].off = a - lo;
            out[n].len = b - a;
            n++;
        }
    return n;
}
