/*
 * isend_all: as issend_all with standard-mode MPI_Isend (ROMIO's original kernel). Small
 * messages may complete at the sender before the receiver enters the call: KangRoss20
 * Sec. IV-A's "request contention at senders" when it repeats in a loop.
 * Cost: one round, (p - 1) ts + k tw at a receiver of k bytes from p - 1 senders.
 */
#include "coll_alltoallv.h"

int agx_alltoallv_intra_isend_all(const agx_args *a)
{
    return agx_a2a_run(a, AGX_A2A_ASCENDING, 0, 0);
}
