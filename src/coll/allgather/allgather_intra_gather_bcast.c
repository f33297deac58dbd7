/*
 * Linear gather + broadcast (the LNBC of Proficz21), src/patterns/binomial.c.
 *
 * Steps: every rank r > 0 sends its block to rank 0, which posts all p-1 receives in one
 * round (a linear tree); then rank 0 broadcasts the whole result along a binomial tree
 * (ceil(log2 p) rounds). Both phases are agx point-to-point, so the counters see them.
 * Cost = (p-1).alpha + n.((p-1)/p).beta at the root for the gather,
 *      + ceil(log2 p).(alpha + n.beta) for the broadcast.
 * Memory requirements: p request handles and statuses at the root.
 */
#include "coll_allgather.h"

int agx_allgather_intra_gather_bcast(const agx_args *a)
{
    return agx_run_flat(a, agx_build_gather_bcast, 0);
}
