/* All-to-many kernels as schedules (see alltoallv.h; KangRoss20 Sec. II, III, IV-B). */
#include "alltoallv.h"

#include <stdlib.h>
#include <string.h>

/* The rank list of Alg. 2, built from the receiver set: the p ranks fall into |R| groups
 * (p mod |R| of size ceil(p/|R|), the rest floor(p/|R|), line 5-10), group jj opens with
 * receiver R[jj] and continues with the next non-receivers in rank order. So every
 * receiver's first index is its own message (a local copy, Sec. III-B's "receivers send
 * to themselves at the beginning"), and from then on the receivers read disjoint groups
 * of senders: Figure 1b's list {0, 4, 1, 5, 2, 6, 3, 7} for R = {0, 1, 2, 3}, p = 8. With
 * R = P it is the identity and the kernel is spread-out. */
int agx_a2a_pattern_init(agx_a2a_pattern *pt, int p, const int *nsenders)
{
    memset(pt, 0, sizeof *pt);
    pt->p = p;
    int *mem = malloc(sizeof(int) * 4 * (size_t)(p > 0 ? p : 1));
    if (!mem)
        return -1;
    pt->nsenders = mem, pt->list = mem + p, pt->pos = mem + 2 * p, pt->start = mem + 3 * p;
    memcpy(pt->nsenders, nsenders, sizeof(int) * (size_t)p);
    for (int r = 0; r < p; r++) {
        pt->nrecv += nsenders[r] > 0;
        pt->smax = nsenders[r] > pt->smax ? nsenders[r] : pt->smax;
        pt->start[r] = -1;
    }
    int m = pt->nrecv, nr = 0, at = 0; /* nr: next non-receiver to place */
    if (m == 0) {
        for (int r = 0; r < p; r++)
            pt->list[r] = pt->pos[r] = r;
        return 0;
    }
    int big = (p + m - 1) / m, small = p / m, q = p % m, jj = 0;
    for (int r = 0; r < p; r++) {
        if (nsenders[r] == 0)
            continue;
        int size = jj < q ? big : small;
        pt->start[r] = at;
        pt->list[at++] = r;
        for (int k = 1; k < size; k++) {
            while (nsenders[nr] > 0)
                nr++;
            pt->list[at++] = nr++;
        }
        jj++;
    }
    for (int i = 0; i < p; i++)
        pt->pos[pt->list[i]] = i;
    return 0;
}

void agx_a2a_pattern_free(agx_a2a_pattern *pt)
{
    free(pt->nsenders);
    memset(pt, 0, sizeof *pt);
}

int agx_a2a_index(agx_a2a_kernel kernel, int p, const agx_a2a_pattern *pt, int s, int j)
{
    switch (kernel) {
    case AGX_A2A_SPREAD:
        return agx_mod(s - j, p);
    case AGX_A2A_BALANCED:
        return pt->start[j] < 0 ? -1 : agx_mod(pt->pos[s] - pt->start[j], p);
    case AGX_A2A_PAIRWISE:
        return agx_is_pow2(p) ? s ^ j : agx_mod(j - s, p);
    default:
        return 0;
    }
}

static int round_of(const agx_a2a_side *d, int i) { return d->throttle > 0 ? i / d->throttle : 0; }

/* At index i: the receive from src and the send to dst (either -1: none). */
static int step(agx_sched *s, const agx_a2a_side *d, int round, int src, int dst)
{
    int rc = 0;
    if (src >= 0 && src != d->r && d->rnz[src])
        rc = agx_sched_add_range_ex(s, round, AGX_SOP_RECV, src, 0, AGX_A2A_RECV, src, 1);
    if (!rc && dst >= 0 && dst != d->r && d->snz[dst])
        rc = agx_sched_add_range_ex(s, round, AGX_SOP_SEND, dst, d->send_flags, AGX_A2A_SEND, dst, 1);
    return rc;
}

/* Balanced spread-out: receives in list order from r_index (Alg. 2 lines 11-14); sends
 * at the index each receiver gives this rank, which differs per receiver (their r_index
 * differ), so dst_at[i] holds at most one receiver. */
static int balanced(agx_sched *s, const agx_a2a_side *d)
{
    const agx_a2a_pattern *pt = d->pt;
    int p = d->p, rc = 0, *dst_at = malloc(sizeof(int) * (size_t)p);
    if (!dst_at)
        return -1;
    for (int i = 0; i < p; i++)
        dst_at[i] = -1;
    for (int j = 0; j < p; j++)
        if (d->snz[j] && pt->start[j] >= 0)
            dst_at[agx_a2a_index(AGX_A2A_BALANCED, p, pt, d->r, j)] = j;
    int st = pt->start[d->r];
    for (int i = 0; i < p && !rc; i++)
        rc = step(s, d, round_of(d, i), st >= 0 ? pt->list[(st + i) % p] : -1, dst_at[i]);
    free(dst_at);
    return rc;
}

int agx_build_a2a(agx_sched *s, agx_a2a_kernel kernel, const agx_a2a_side *d)
{
    int p = d->p, r = d->r, rc = 0;
    if (d->snz[r] || d->rnz[r])
        rc = agx_sched_add_range_ex(s, 0, AGX_SOP_COPY, r, 0, AGX_A2A_RECV, r, 1);
    switch (kernel) {
    case AGX_A2A_ASCENDING:
        for (int x = 0; x < p && !rc; x++)
            rc = step(s, d, 0, x, -1);
        for (int x = 0; x < p && !rc; x++)
            rc = step(s, d, 0, -1, x);
        break;
    case AGX_A2A_SPREAD:
        for (int i = 1; i < p && !rc; i++)
            rc = step(s, d, round_of(d, i), (r + i) % p, agx_mod(r - i, p));
        break;
    case AGX_A2A_BALANCED:
        rc = balanced(s, d);
        break;
    case AGX_A2A_PAIRWISE:
        for (int i = 1; i < p && !rc; i++) {
            int pow2 = agx_is_pow2(p);
            rc = step(s, d, i, pow2 ? r ^ i : agx_mod(r - i, p), pow2 ? r ^ i : (r + i) % p);
        }
        break;
    }
    return rc || s->bad ? -1 : s->nrounds;
}
