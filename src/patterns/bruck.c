/* Bruck schedules (dissemination with growing distance), blocks named by final index:
 * radix 2 (bruck) and radix k (kbruck) are the same loop. */
#include "patterns.h"

/* Round `t` of a radix-k Bruck with D = k^t blocks held: for each digit j = 1..k-1 with
 * j D < p, send the c_j = min(D, p - jD) blocks r.. to r - jD, receive r + jD.. from r + jD. */
static int kbruck_round(agx_sched *s, int round, int r, int p, int k, long long D)
{
    for (int j = 1; j < k && j * D < p; j++) {
        int d = (int)(j * D), c = (int)(D < p - d ? D : p - d);
        agx_blockset snd, rcv;
        agx_set_clear(&snd);
        agx_set_clear(&rcv);
        agx_set_add_circular(&snd, r, c, p);
        agx_set_add_circular(&rcv, r + d, c, p);
        if (agx_sched_add(s, round, AGX_SOP_SEND, agx_mod(r - d, p), &snd) ||
            agx_sched_add(s, round, AGX_SOP_RECV, agx_mod(r + d, p), &rcv))
            return -1;
    }
    return 0;
}

int agx_build_kbruck(agx_sched *s, int round0, int r, int p, int param)
{
    int k = param < 2 ? 2 : param, t = 0;
    for (long long D = 1; D < p; D *= k, t++)
        if (kbruck_round(s, round0 + t, r, p, k, D))
            return -1;
    return t;
}

int agx_build_bruck(agx_sched *s, int round0, int r, int p, int param)
{
    (void)param;
    return agx_build_kbruck(s, round0, r, p, 2);
}
