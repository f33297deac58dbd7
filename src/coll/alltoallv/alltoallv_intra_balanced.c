/*
 * balanced: KangRoss20 Alg. 2, the balanced spread-out: the p ranks form |R| groups of
 * ceil or floor(p / |R|) in a rank list, receiver j starts reading at its group's first
 * index r_index and goes round the list. The list is built from the receiver set (each
 * group opens with its receiver, then non-receivers in rank order: Figure 1b), so the
 * first step is every receiver's own block and the receivers then read disjoint groups.
 * Throttled and synchronous like spread_out. Needs the call's pattern (the receiver set),
 * which agx_alltoallv's agreement computes.
 * Cost: (p - 1) ts + k tw at a receiver; straggler delay near zero for |R| <= p/2 (Sec.
 * III-B, Eq. 5: P(first delay) < 2e-6 at sigma = mu / 8).
 */
#include "coll_alltoallv.h"

int agx_alltoallv_intra_balanced(const agx_args *a)
{
    return agx_a2a_run(a, AGX_A2A_BALANCED, a->u.a2a.throttle, a->u.a2a.send_flags);
}
