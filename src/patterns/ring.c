/* Ring schedule: p-1 rounds, each rank forwards the block it received last. */
#include "patterns.h"

int agx_build_ring(agx_sched *s, int round0, int r, int p, int param)
{
    (void)param;
    for (int t = 0; t < p - 1; t++)
        if (agx_sched_add_range(s, round0 + t, AGX_SOP_SEND, agx_mod(r + 1, p), agx_mod(r - t, p), 1) ||
            agx_sched_add_range(s, round0 + t, AGX_SOP_RECV, agx_mod(r - 1, p), agx_mod(r - t - 1, p), 1))
            return -1;
    return p > 1 ? p - 1 : 0;
}
