/*
 * Neighbour exchange (Chen, Johnson, Tang et al.; Open MPI allgather "neighbor"), even p.
 * Pair i is blocks {2i, 2i+1}; np = p/2 pairs. Rank r belongs to pair i = r/2.
 *   step 0: swap single blocks with the pair partner (r ^ 1);
 *   step s >= 1: even ranks talk left (r-1) on odd s and right (r+1) on even s, odd ranks
 *   the opposite; each sends the pair it received at step s-1 (its own pair at s = 1).
 * Even rank receives pair i - (s+1)/2 on odd s and i + s/2 on even s; odd rank the mirror.
 */
#include "patterns.h"

int agx_nex_nsteps(int p) { return p > 1 ? p / 2 : 0; }

/* The pair rank r receives at step s >= 1. */
static int nex_recv_pair(int r, int np, int s)
{
    int i = r / 2, even = (r % 2 == 0);
    int off = (s % 2 == 1) ? -(s + 1) / 2 : s / 2;
    return agx_mod(even ? i + off : i - off, np);
}

void agx_nex_step(int r, int p, int s, agx_step *st)
{
    int np = p / 2, even = (r % 2 == 0);
    agx_step_idle(st);
    if (s == 0) {
        int partner = r ^ 1;
        st->send.peer = st->recv.peer = partner;
        agx_set_add(&st->send.set, r, 1);
        agx_set_add(&st->recv.set, partner, 1);
        return;
    }
    int left = (s % 2 == 1) == even;
    int peer = agx_mod(left ? r - 1 : r + 1, p);
    int send_pair = s == 1 ? r / 2 : nex_recv_pair(r, np, s - 1);
    int recv_pair = nex_recv_pair(r, np, s);
    st->send.peer = st->recv.peer = peer;
    agx_set_add(&st->send.set, 2 * send_pair, 2);
    agx_set_add(&st->recv.set, 2 * recv_pair, 2);
}
