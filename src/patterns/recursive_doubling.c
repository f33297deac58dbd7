/*
 * Recursive doubling for any p by folding the e = p - p2 extra ranks onto the first e:
 *   round 0          (e > 0): r >= p2 sends block r to r - p2;
 *   rounds 1..L      : ranks < p2 double their holdings with partner v ^ 2^k;
 *   round L+1        (e > 0): r < e sends everything but block r + p2 to r + p2.
 */
#include "patterns.h"

/* The blocks owned by the virtual ranks [g, g + len): g.. and their folded extras. */
static void add_virtual_group(agx_blockset *set, int g, int len, int p, int p2)
{
    int e = p - p2;
    agx_set_add(set, g, len);
    int hi = g + len < e ? g + len : e;
    if (g < hi)
        agx_set_add(set, g + p2, hi - g);
}

/* Everything but block b, to or from peer. */
static int all_but(agx_sched *s, int round, int kind, int peer, int b, int p)
{
    agx_blockset set;
    agx_set_clear(&set);
    agx_set_add(&set, 0, b);
    agx_set_add(&set, b + 1, p - b - 1);
    return agx_sched_add(s, round, kind, peer, &set);
}

int agx_build_recursive_doubling(agx_sched *s, int round0, int r, int p, int param)
{
    (void)param;
    if (p <= 1)
        return 0;
    int p2 = agx_floor_pow2(p), e = p - p2, L = agx_ceil_log2(p2), t = round0;
    if (e > 0) {
        if (r >= p2 ? agx_sched_add_range(s, t, AGX_SOP_SEND, r - p2, r, 1)
            : r < e ? agx_sched_add_range(s, t, AGX_SOP_RECV, r + p2, r + p2, 1) : 0)
            return -1;
        t++;
    }
    for (int k = 0; k < L && r < p2; k++) {
        int mask = 1 << k, partner = r ^ mask;
        agx_blockset snd, rcv;
        agx_set_clear(&snd);
        agx_set_clear(&rcv);
        add_virtual_group(&snd, r & ~(mask - 1), mask, p, p2);
        add_virtual_group(&rcv, partner & ~(mask - 1), mask, p, p2);
        if (agx_sched_add(s, t + k, AGX_SOP_SEND, partner, &snd) ||
            agx_sched_add(s, t + k, AGX_SOP_RECV, partner, &rcv))
            return -1;
    }
    t += L;
    if (e > 0) {
        if (r < e ? all_but(s, t, AGX_SOP_SEND, r + p2, r + p2, p)
            : r >= p2 ? all_but(s, t, AGX_SOP_RECV, r - p2, r, p) : 0)
            return -1;
        t++;
    }
    return t - round0;
}
