/*
 * SharedNotify's block numbering and node-local load balance (Algorithm 1, lines 4-9;
 * Listing 1, Listing 3, Eq. 3-4). agx computes every process's first id on every process
 * from the counts (O(p), the work every allgatherv algorithm does to read them) where the
 * paper spreads Listing 1 over a node's processes through a shared window: the ids are
 * the same.
 */
#include "shm_blocks.h"

#include <stddef.h>

size_t agx_snb_tables(int p, int r) { return (size_t)p + 1 + (size_t)r + 1; }

long long agx_snb_count(const long long *len, int p, long long B)
{
    long long n = 0;
    B = B > 0 ? B : 1;
    for (int i = 0; i < p; i++)
        n += agx_snb_blocks(len[i], B);
    return n;
}

void agx_snb_init(agx_snb *s, const agx_regions *R, const long long *len, long long B, long long *mem)
{
    *s = (agx_snb){.p = R->p, .r = R->r, .B = B > 0 ? B : 1, .members = R->members, .len = len};
    s->first = mem;
    s->node_first = mem + R->p + 1;
    long long id = 0;
    for (int k = 0; k < R->r; k++) {
        s->node_first[k] = id;
        for (int v = R->start[k]; v < R->start[k + 1]; v++) {
            s->first[v] = id;
            id += agx_snb_blocks(len[R->members[v]], s->B);
        }
    }
    s->node_first[R->r] = s->first[R->p] = s->total = id;
}

long long agx_snb_work(const agx_snb *s, const agx_regions *R, int k, int j, long long *first)
{
    long long T = s->node_first[k + 1] - s->node_first[k], L = R->size[k], off = 0;
    for (int i = 0; i < j; i++) /* Listing 3, lines 7-10 */
        off += (T + L - i - 1) / L;
    *first = s->node_first[k] + off;
    return (T + L - j - 1) / L; /* Eq. 4 */
}

/* The largest i < n with a[i] <= x (a non-decreasing, a[0] <= x): the process or
 * region whose run of ids holds x, past any empty ones. */
static int last_le(const long long *a, int n, long long x)
{
    int lo = 0, hi = n - 1;
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (a[mid] <= x)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

void agx_snb_locate(const agx_snb *s, long long id, int *rank, long long *off, long long *bytes)
{
    int v = last_le(s->first, s->p, id);
    long long b = id - s->first[v], n = s->len[s->members[v]];
    *rank = s->members[v];
    *off = b * s->B;
    *bytes = n - *off < s->B ? n - *off : s->B;
}

int agx_snb_region(const agx_snb *s, long long id)
{
    return last_le(s->node_first, s->r, id);
}
