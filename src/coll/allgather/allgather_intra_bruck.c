/*
 * Bruck allgather / allgatherv (Bruck et al. 1997; Bienz, Algorithm 1).
 *
 * Steps: copy the own block into place; at step k = 0..ceil(log2 p)-1 with d = 2^k send
 * the c = min(d, p-d) blocks r..r+c-1 (mod p) to rank r-d and receive blocks
 * r+d..r+d+c-1 from rank r+d (src/patterns/bruck.c). Blocks are addressed by their final
 * position through the receive datatype, so the classic final rotation is not needed;
 * a wrapping block range travels as one message with an hindexed type.
 * Cost = ceil(log2 p).alpha + n.((p-1)/p).beta   (Bienz, Eq. 3: log2(p).alpha + (b-1).beta)
 * Memory requirements: none beyond the receive buffer.
 */
#include "coll_allgather.h"

int agx_allgather_intra_bruck(const agx_args *a)
{
    return agx_run_flat(a, agx_build_bruck, 0);
}
