/* Linear gather to rank 0 and binomial broadcast of the gathered blocks from rank 0. */
#include "patterns.h"

int agx_build_linear_gather(agx_sched *s, int round0, int r, int p, int param)
{
    (void)param;
    if (p <= 1)
        return 0;
    if (r > 0)
        return agx_sched_add_range(s, round0, AGX_SOP_SEND, 0, r, 1) ? -1 : 1;
    for (int src = 1; src < p; src++)
        if (agx_sched_add_range(s, round0, AGX_SOP_RECV, src, src, 1))
            return -1;
    return 1;
}

int agx_build_binomial_bcast(agx_sched *s, int round0, int r, int p, int param)
{
    (void)param;
    int L = agx_ceil_log2(p);
    for (int t = 0; t < L; t++) {
        int mask = 1 << t;
        if (r < mask && r + mask < p) {
            if (agx_sched_add_range(s, round0 + t, AGX_SOP_SEND, r + mask, 0, p))
                return -1;
        } else if (r >= mask && r < 2 * mask) {
            if (agx_sched_add_range(s, round0 + t, AGX_SOP_RECV, r - mask, 0, p))
                return -1;
        }
    }
    return L;
}

int agx_build_gather_bcast(agx_sched *s, int round0, int r, int p, int param)
{
    int g = agx_build_linear_gather(s, round0, r, p, param);
    int b = g < 0 ? -1 : agx_build_binomial_bcast(s, round0 + g, r, p, param);
    return b < 0 ? -1 : g + b;
}
