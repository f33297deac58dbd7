/*
 * k-port Bruck allgather / allgatherv (Bruck97 with radix k; MPICH's k_brucks),
 * src/patterns/bruck.c.
 *
 * Steps: copy the own block into place; in round i = 0..ceil(log_k p)-1, with D = k^i
 * blocks held (r .. r+D-1), for every digit j = 1..k-1 with jD < p post concurrently:
 * send the c_j = min(D, p - jD) held blocks to rank r - jD, receive blocks r+jD.. from
 * rank r + jD. After the round a rank holds min(kD, p) blocks. Blocks are addressed by
 * their final position, so no rotation is needed; radix 2 is `bruck`.
 * Parameter: AGX_KBRUCK_RADIX = k (default 4, 2..64).
 * Cost = ceil(log_k p).alpha + n.((p-1)/p).beta with up to k-1 messages in flight per
 * round: fewer rounds than Bruck where the network overlaps concurrent messages.
 * Messages per rank: sum over rounds of #{j < k : jD < p}; blocks per rank: p - 1.
 * Memory requirements: none beyond the receive buffer.
 */
#include "coll_allgather.h"

int agx_allgather_intra_kbruck(const agx_args *a)
{
    int k, rc = agx_alg_param(a, 0 /* radix */, &k);
    return rc != MPI_SUCCESS ? rc : agx_run_flat(a, agx_build_kbruck, k);
}
