/*
 * Multi-lane locality-aware allgather / allgatherv (agx; docs/algorithms.md, "multilane").
 *
 * Regions as for loc_bruck (MPI_COMM_TYPE_SHARED, AGX_REGION_SIZE, AGX_REGIONS). Every
 * member of a region is a lane (lanes = the smallest region's size, p_l), and F =
 * AGX_MULTILANE_FANOUT non-local messages per lane and round are allowed:
 *  1. direct local allgather: every member sends its block to every other member (one
 *     round, where loc_bruck's local Bruck takes ceil(log2 p_l));
 *  2. ceil(log_K r) non-local rounds, K - 1 = min(r - 1, p_l F): with D regions held,
 *     digit j (1 <= j < K) sends them to region R - jD and receives D regions from R + jD;
 *     lane y handles digits [1 + yF, 1 + (y+1)F), so the K - 1 digits go out of p_l ports
 *     at once (loc_bruck: p_l - 1 digits, local rank 0 idle) and what a lane receives is
 *     one range of regions;
 *  3. after each round, a direct local allgather of the ranges the lanes received.
 * Why (SimGrid's allgather smp_simple, MVAPICH2's two-level allgather and Open MPI's HAN
 * all gather to one leader per node and let it alone talk to the other nodes): a leader
 * is one port and its local gather and broadcast are sequential steps; here every
 * process carries a share of the non-local traffic, local phases are one step each, and
 * with F p_l >= r - 1 the non-local part is a single round.
 * Cost (equal regions of p_l, r = p / p_l, b = p s result bytes; a lane's F messages of a
 * round in flight together), next to Bienz Eq. 4:
 *   L alpha + (b/p_l) beta + (L+1) alpha_l + (b - s) beta_l,  L = ceil(log_K r)
 * against loc_bruck's ceil(log_pl r) alpha + (b/p_l) beta + (L+1) log2(p_l) alpha_l +
 * (b - s) beta_l: fewer non-local rounds and log2(p_l) times fewer local ones. The node's
 * link carries (r-1)/r b into the node, the bandwidth lower bound. The price: (L+1)(p_l-1)
 * local messages per process (loc_bruck: (L+1) log2 p_l), and up to F non-local ones per
 * round.
 * Memory requirements: the plan (O(p_l L + F L) operations) and the permuted layout (O(p)).
 */
#include "coll_allgather.h"

int agx_allgather_intra_multilane(const agx_args *a)
{
    int f, rc = agx_alg_param(a, 0 /* fanout */, &f);
    return rc != MPI_SUCCESS ? rc : agx_run_locality(a, agx_order_regions, agx_build_multilane, f);
}
