/*
 * Recursive-doubling allgather / allgatherv for any p (src/patterns/recursive_doubling.c).
 *
 * Steps: with p2 = the largest power of two <= p and e = p - p2:
 *   1. (e > 0) rank r >= p2 sends its block to r - p2;
 *   2. log2(p2) steps: rank v < p2 exchanges everything it holds with v ^ 2^k;
 *   3. (e > 0) rank r < e sends the whole result (but block r + p2) to r + p2.
 * Cost, p a power of two: log2(p).alpha + n.((p-1)/p).beta.
 * Otherwise: (log2(p2) + 2).alpha + n.(1 + (p2-1)/p2 ... ).beta; the fold adds one
 * message of one block and one of (p-1) blocks on the critical path.
 * Memory requirements: none beyond the receive buffer.
 */
#include "coll_allgather.h"

int agx_allgather_intra_recursive_doubling(const agx_args *a)
{
    return agx_run_flat(a, agx_build_recursive_doubling, 0);
}
