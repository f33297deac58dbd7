/*
 * Intergroup allgather with message segmentation (KangTraff19, Algorithm 1).
 *
 * Groups A (p processes, blocks of kA bytes) and B (q, kB); say q <= p (else the roles
 * swap: everything below is computed from the two group sizes only, identically in both
 * groups).
 *  1. Exchange: A is cut into q subgroups s_i of ceil/floor(p/q) consecutive ranks; every
 *     a in s_i sends its whole block to b_i, and b_i sends the |s_i| balanced pieces of its
 *     block to the members of s_i (Lines 1-7; src/patterns/intergroup.c). Receives are
 *     posted in Section 4.1's order.
 *  2. Each group allgathers what it received, in place, in rank order (Lines 9 and 11):
 *     no reordering, the remote message is complete everywhere.
 * Segments are cut in the packed byte representation, so a boundary may fall inside an
 * element of a derived type; the receive side unpacks once at the end.
 * Cost (Theorem 1): (p/q).ts + log(p).ts + (max(p kA, q kB) + kB).tw; the exchange moves
 * max(kA ceil(p/q), ceil(kB / floor(p/q))) bytes per process pair direction.
 * Memory requirements: the packed remote message when the receive layout is not packed
 * (derived type or displacements with gaps); the packed own block for a derived type.
 */
#include "coll_allgather.h"

int agx_allgather_inter_segmented(const agx_args *a)
{
    const agx_intergroup *ig = a->ig;
    const agx_ig_io *io = a->u.ag.io;
    long long *sbnd = io->bnd, *rbnd = io->bnd + ig->rsize + 1;
    long long rk = a->u.ag.blk.type_size * a->u.ag.blk.ucount; /* the remote block */
    agx_partition_subgroups(ig->lsize, ig->rsize, io->k, sbnd);   /* my group -> remote */
    agx_partition_subgroups(ig->rsize, ig->lsize, rk, rbnd);      /* remote -> my group */
    return agx_ig_exchange(a, (long long)ig->lrank * io->k, sbnd, rbnd);
}
