/*
 * spread_out: KangRoss20 Alg. 1 (MPICH's "scattered" alltoallv): at index i = 1 .. p-1,
 * receive from r + i and send to r - i (mod p); indices in rounds of
 * AGX_ALLTOALLV_THROTTLE receives (Sec. IV-B), each round one Waitall; sends synchronous
 * unless AGX_ALLTOALLV_SYNC=isend (Sec. IV-A).
 * Cost: (p - 1) ts + k tw for k bytes at a receiver (S = R = P); with |R| << p the ranks
 * above the last receiver all start on it: expected straggler delay (p - 1) sigma /
 * sqrt(2 pi) (Sec. III-B, Eq. 4).
 */
#include "coll_alltoallv.h"

int agx_alltoallv_intra_spread_out(const agx_args *a)
{
    return agx_a2a_run(a, AGX_A2A_SPREAD, a->u.a2a.throttle, a->u.a2a.send_flags);
}
