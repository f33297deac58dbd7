/*
 * Allreduce schedules (no MPI; unit-tested by simulation in tests/unit/test_allreduce.c).
 *
 * Buffers of an allreduce schedule: AGX_AR_ACC is the result (the receive buffer, which
 * starts as this rank's contribution), AGX_AR_TMP a scratch copy of the same layout, and
 * AGX_AR_PART + j (dissemination only) the partial result received for step j. A
 * REDUCE op computes buf = src (+) buf, with src as the left operand, so a schedule fixes
 * the order of every reduction: the same order run after run.
 *
 * Blocks: the whole vector is block 0 for dissemination, recursive doubling and
 * reduce_bcast; ring cuts it into p blocks, Rabenseifner into floor_pow2(p) blocks.
 */
#ifndef AGX_PATTERNS_ALLREDUCE_H
#define AGX_PATTERNS_ALLREDUCE_H

#include "locality.h"
#include "patterns.h"

enum { AGX_AR_ACC = 0, AGX_AR_TMP = 1, AGX_AR_PART = 2 };

/* Buffers the dissemination schedule of p ranks uses: AGX_AR_PART + floor(log2 p). */
int agx_ar_dissem_nbufs(int p);
/* Blocks the vector is cut into by the schedule of `build` for p ranks. */
int agx_ar_nblocks(agx_build_fn build, int p);

/* SharedNotify Sec. III, Figs. 4-5: p = sum c_k 2^k, l = floor(log2 p). Rounds k < l:
 * send the running result (the reduction of ranks r-2^k+1 .. r) to r + 2^k and reduce
 * what r - 2^k sends; in the same round, when c_k = 1, also send it as the partial
 * result P_k to r + D_k, D_k = sum_{i>k} c_i 2^i, and receive P_k of r - D_k into
 * AGX_AR_PART + k. After round l-1 the partials are reduced in, highest k first. Every
 * rank's result is the reduction over the cyclic order r+1, .., r: commutative ops only.
 * l rounds; l + popcount(p) - 1 messages sent per rank. */
int agx_build_ar_dissemination(agx_sched *s, int round0, int r, int p, int param);
/* dissemination_node (SharedNotify Sec. III, last paragraph) over regions R with nl
 * lanes (1 <= nl <= R->min_size): the vector in nl blocks, block j handled by local rank
 * j (lane j) of every region. Round 0: every rank sends block j to lane j of its region,
 * lane j reduces the region's blocks j (local index order, its own first); rounds
 * 1 .. l (l = floor(log2 R->r)): the dissemination above on block j among the lanes j
 * of all regions; round l + 1: lane j sends block j to the rest of its region. Buffers:
 * ACC (the vector), TMP and PART + k (block j only), then AGX_AR_PART + l + i for local
 * rank i's block (lanes only): agx_ar_node_nbufs(R) in all. A lane touches only its own
 * block of every buffer but ACC, so those may all hold one block (the runner's
 * "windows"). l + 2 rounds. Commutative ops only. The signature is agx_locbuild_fn's
 * (vidx unused: the virtual order is agx_order_regions'). Returns 0, or -1. */
int agx_build_ar_dissemination_node(const agx_regions *R, int nl, const int *vidx, int rank, agx_sched *s);
/* dissemination_node's and dissemination_shm's lanes for a vector of `elems` elements and
 * `bytes` bytes: min(the smallest region, elems, max(1, bytes / lane_bytes)). */
long long agx_ar_lanes(long long elems, long long bytes, int lane_bytes, int min_size);
int agx_ar_node_nbufs(const agx_regions *R);
/* dissemination_radix (agx's; SharedNotify Sec. III's partial results in base k): every
 * rank of a node holds the node's running result. Round 0: a flat exchange in each region
 * (every rank gets the region's sum). Then per non-local round i: k - 1 regular senders
 * at node distances j k^i, j = 1..k-1 (rounds i < m, m = floor(log_k R)), d_i partial
 * windows of k^i nodes sent early in round i (digits d of R in base k), and in round m
 * d_m - 1 windows of k^m; item q travels between local ranks q mod L (L = the smallest
 * region) of the two nodes, then from its receiver to the rest of the node, where every
 * rank reduces it into the running result (regular) or into the partial sum PART (COPY
 * for the first). 1 + 2 (m + (d_m > 1)) rounds, of which m + (d_m > 1) cross nodes.
 * Buffers: ACC, TMP (unused), PART, then one per item or local rank:
 * agx_ar_radix_nbufs(R, k). k >= 2. Returns 0, or -1. */
int agx_build_ar_dissemination_radix(const agx_regions *R, int k, const int *vidx, int rank, agx_sched *s);
int agx_ar_radix_nbufs(const agx_regions *R, int k);
/* Recursive doubling (MPICH's allreduce for short messages) with the fold for any p:
 * ranks 2i < 2e (e = p - floor_pow2(p)) hand their vector to 2i+1, which reduces it;
 * log2 of the power of two exchange steps among the rest, lower ranks' data always the
 * left operand (rank order kept: non-commutative ops too); the result back to 2i. */
int agx_build_ar_recursive_doubling(agx_sched *s, int round0, int r, int p, int param);
/* Binomial reduce to rank 0 (rank r holds ranks r .. r+2^k-1 after round k: rank order
 * kept), then binomial broadcast: 2 ceil(log2 p) rounds. */
int agx_build_ar_reduce_bcast(agx_sched *s, int round0, int r, int p, int param);
/* Ring: reduce-scatter over p blocks in p-1 rounds (block c reduced in the cyclic order
 * c, c+1, .., c-1), then the ring allgather in p-1 rounds; commutative ops only. */
int agx_build_ar_ring(agx_sched *s, int round0, int r, int p, int param);
/* Rabenseifner: the fold to p2 = floor_pow2(p), reduce-scatter by recursive halving over
 * p2 blocks at distances 1, 2, 4, .. (MPICH's order: the largest halves to the nearest
 * ranks), allgather by the same steps reversed, the result back to the folded ranks;
 * commutative ops only (halving interleaves the ranks). 2 log2(p2) (+2) rounds. */
int agx_build_ar_rabenseifner(agx_sched *s, int round0, int r, int p, int param);

#endif
