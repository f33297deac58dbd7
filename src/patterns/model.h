/*
 * Cost models of the papers, in one place (no MPI), unit-tested against the papers'
 * numbers. ts / tw: start-up and per-byte time of KangTraff19 (alpha / beta elsewhere).
 */
#ifndef AGX_MODEL_H
#define AGX_MODEL_H

/* ---- KangTraff19: intergroup allgather(v). KA, KB = total bytes of groups A (p procs) and B
 * (q procs); kA, kB = block sizes (allgather). ---- */

/* Lower bound on transfer time: M = max(KA, KB) (units of tw). */
double agx_model_ig_lower_bound(double KA, double KB);
/* Eq. 2: the production root-gathering algorithm (MPICH-style, sequential stages). */
double agx_model_ig_root_gather_eq2(int p, int q, double kA, double kB, double ts, double tw);
/* Theorem 1: transfer-time bound of Algorithm 1, (max(p kA, q kB) + k_small-group) tw,
 * where the "+k" is the block of the smaller group (the paper's kB with q <= p). */
double agx_model_ig_thm1_transfer(int p, int q, double kA, double kB);
/* Theorem 3: transfer-time bound of Algorithm 2 (without the log(pq) Allreduce term). */
double agx_model_ig_thm3_transfer(double KA, double KB, double maxkA, double maxkB);
/* Eq. 5: expected improvement of Algorithm 1/2 over root gathering as messages grow:
 * (M + 3 KA + 3 KB) / M. */
double agx_model_ig_eq5_ratio(double KA, double KB);

/* Total bytes copied by all processes together, root gathering over segmentation, for
 * the case the single-port model does not cover: every transfer shares one node's memory
 * bandwidth, so the volume, not the per-process critical path, sets the time.
 *   segmented:   exchange KA + KB, allgathers (p-1) KB + (q-1) KA;
 *   root gather: the same plus the gathers (KA - kA0) + (KB - kB0), kA0/kB0 the roots'
 *                own blocks (the exchange of the gathered messages moves KA + KB, and the
 *                broadcasts (p-1) KB + (q-1) KA). */
double agx_model_ig_volume_ratio(int p, int q, double KA, double KB, double kA0, double kB0);

/* ---- Bienz: Bruck vs locality-aware Bruck (postal model, Eq. 1-4). s = bytes per
 * process, regions of p_l processes, r = p / p_l. ---- */

/* Eq. 3: standard Bruck, the busiest process: log2(p) alpha + (p-1) s beta (the paper's
 * (b-1) beta with b = p s; every message counted non-local, as for its P0). */
double agx_model_bruck_eq3(int p, double s, double alpha, double beta);
/* Eq. 4: loc_bruck: L alpha + (r s) beta + (L+1) log2(p_l) alpha_l + (p-1) s beta_l,
 * L = ceil(log_pl r). The log2(p_l) factor is the paper's text (each local phase is a
 * Bruck allgather of log2(p_l) steps); the printed Eq. 4 drops it. */
double agx_model_loc_bruck_eq4(int p, int pl, double s, double alpha, double beta, double alpha_l,
                               double beta_l);
/* Non-local messages and blocks sent by the busiest process of standard Bruck (Algorithm 1's
 * partners r - 2^k) for region labels label[0..p). */
void agx_model_bruck_nonlocal(int p, const int *label, int *msgs, int *blocks);
/* loc_bruck with r equal regions of p_l: ceil(log_pl r) non-local messages; the busiest
 * process sends p_l * min(p_l^i, r - p_l^i) blocks at non-local step i. */
int agx_model_loc_bruck_nonlocal_msgs(int r, int pl);
int agx_model_loc_bruck_nonlocal_blocks(int r, int pl);

/* multilane (agx) with r equal regions of p_l and fanout F, radix K - 1 = min(r-1, p_l F):
 * L = ceil(log_K r) non-local rounds (0 for one region); lane 0, the busiest, sends one
 * message per digit j in 1..F with min(D, r - jD) regions of p_l blocks each round
 * (D = K^i regions held). */
int agx_model_multilane_rounds(int r, int pl, int F);
int agx_model_multilane_nonlocal_msgs(int r, int pl, int F);
int agx_model_multilane_nonlocal_blocks(int r, int pl, int F);
/* L alpha + (lane 0's non-local blocks) s beta + (L+1) alpha_l + (p-1) s beta_l: a lane's
 * messages of one round in flight together; the local phases are one step each. */
double agx_model_multilane(int p, int pl, double s, double alpha, double beta, double alpha_l, double beta_l,
                           int F);

#endif
