/*
 * Neighbour exchange (Chen, Johnson, Tang et al.; Open MPI allgather "neighbor"), even p.
 * Pair i is blocks {2i, 2i+1}; np = p/2 pairs. Rank r belongs to pair i = r/2.
 *   round 0: swap single blocks with the pair partner (r ^ 1);
 *   round s >= 1: even ranks talk left (r-1) on odd s and right (r+1) on even s, odd ranks
 *   the opposite; each sends the pair it received at round s-1 (its own pair at s = 1).
 * Even rank receives pair i - (s+1)/2 on odd s and i + s/2 on even s; odd rank the mirror.
 */
#include "patterns.h"

/* The pair rank r receives at round s >= 1. */
static int nex_recv_pair(int r, int np, int s)
{
    int i = r / 2, even = (r % 2 == 0);
    int off = (s % 2 == 1) ? -(s + 1) / 2 : s / 2;
    return agx_mod(even ? i + off : i - off, np);
}

int agx_build_neighbor_exchange(agx_sched *s, int round0, int r, int p, int param)
{
    (void)param;
    int np = p / 2, even = (r % 2 == 0);
    if (p <= 1)
        return 0;
    if (agx_sched_add_range(s, round0, AGX_SOP_SEND, r ^ 1, r, 1) ||
        agx_sched_add_range(s, round0, AGX_SOP_RECV, r ^ 1, r ^ 1, 1))
        return -1;
    for (int t = 1; t < np; t++) {
        int left = (t % 2 == 1) == even;
        int peer = agx_mod(left ? r - 1 : r + 1, p);
        int send_pair = t == 1 ? r / 2 : nex_recv_pair(r, np, t - 1);
        if (agx_sched_add_range(s, round0 + t, AGX_SOP_SEND, peer, 2 * send_pair, 2) ||
            agx_sched_add_range(s, round0 + t, AGX_SOP_RECV, peer, 2 * nex_recv_pair(r, np, t), 2))
            return -1;
    }
    return np;
}
