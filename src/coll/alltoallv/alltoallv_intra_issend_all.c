/*
 * issend_all: ROMIO's two-phase exchange as KangRoss20 evaluates it (Sec. V, Figure 3a):
 * every receive posted in ascending rank order, then every send as MPI_Issend in
 * ascending rank order, one Waitall. Not throttled.
 * Cost: one round; a receiver of m senders has m requests in flight, so under contention
 * (|R| << p) t = (p - 1) ts + k tw plus the straggler and request-queue costs of Sec. III.
 */
#include "coll_alltoallv.h"

int agx_alltoallv_intra_issend_all(const agx_args *a)
{
    return agx_a2a_run(a, AGX_A2A_ASCENDING, 0, AGX_SOP_SYNC);
}
