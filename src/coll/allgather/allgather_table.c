/*
 * The allgather family's algorithms (MPI_Allgather and MPI_Allgatherv): one row per
 * algorithm, one table per communicator kind. An intra algorithm is written against the
 * block layout of the receive buffer, so one function serves both operations (`ops`).
 * Adding an algorithm = its file under src/coll/allgather/ + one row here. `.plans`: the
 * algorithm is one schedule (agx_run_flat / agx_run_locality), so requests can run it.
 * Citations are keys of docs/REFERENCES.md.
 */
#include "coll_allgather.h"
#include "pat.h"

#define AG (1u << AGX_OP_ALLGATHER)
#define AGV (1u << AGX_OP_ALLGATHERV)

static const agx_alg intra[] = {
    {.name = "native", .fn = agx_allgather_intra_native, .ops = AG | AGV,
     .desc = "the MPI library's own algorithm (PMPI_)",
     .cost = "the library's choice", .cite = "-"},
    {.name = "ring", .fn = agx_allgather_intra_ring, .ops = AG | AGV, .plans = 1,
     .desc = "ring: p-1 steps to the right neighbour, bandwidth-optimal",
     .cost = "(p-1) alpha + n (p-1)/p beta", .cite = "Thakur05"},
    {.name = "bruck", .fn = agx_allgather_intra_bruck, .ops = AG | AGV, .plans = 1,
     .desc = "Bruck dissemination: ceil(log2 p) steps, any p",
     .cost = "ceil(log2 p) alpha + n (p-1)/p beta", .cite = "Bruck97; Bienz Alg. 1, Eq. 3"},
    {.name = "kbruck", .fn = agx_allgather_intra_kbruck, .ops = AG | AGV, .plans = 1,
     .desc = "k-port Bruck: ceil(log_k p) rounds of k-1 concurrent exchanges (AGX_KBRUCK_RADIX)",
     .cost = "ceil(log_k p) alpha + n (p-1)/p beta, k-1 messages in flight",
     .cite = "Bruck97 (radix k); MPICH k_brucks",
     .params = {{"radix", "AGX_KBRUCK_RADIX", "the radix k", 4, 2, 64}}},
    {.name = "sparbit", .fn = agx_allgather_intra_sparbit, .ops = AG | AGV, .plans = 1,
     .desc = "Sparbit: ceil(log2 p) steps with halving distances, any p",
     .cost = "ceil(log2 p) alpha + n (p-1)/p beta", .cite = "LochKoslovski21"},
    {.name = "recursive_doubling", .fn = agx_allgather_intra_recursive_doubling, .ops = AG | AGV, .plans = 1,
     .desc = "recursive doubling; non-power-of-two p folded onto the first p2 ranks",
     .cost = "log2 p alpha + n (p-1)/p beta (p a power of two)", .cite = "Thakur05"},
    {.name = "neighbor_exchange", .fn = agx_allgather_intra_neighbor_exchange, .ops = AG | AGV, .plans = 1,
     .desc = "neighbour exchange (Open MPI NEX): p/2 steps of 2 blocks, even p",
     .cost = "(p/2) alpha + n (p-1)/p beta", .cite = "Chen05; Proficz21 NEX",
     .restrictions = AGX_R_EVEN_P, .fallback = "ring"},
    {.name = "gather_bcast", .fn = agx_allgather_intra_gather_bcast, .ops = AG | AGV, .plans = 1,
     .desc = "linear gather to rank 0 + binomial broadcast (LNBC)",
     .cost = "(p-1) alpha + n beta at the root, + ceil(log2 p) (alpha + n beta)", .cite = "Proficz21 LNBC"},
    {.name = "loc_bruck", .fn = agx_allgather_intra_loc_bruck, .ops = AG | AGV, .plans = 1,
     .desc = "locality-aware Bruck: local allgathers + ceil(log_pl r) non-local steps",
     .cost = "L alpha + (b/p_l) beta + (L+1) log2(p_l) alpha_l + (b-1) beta_l, L = ceil(log_pl r)",
     .cite = "Bienz Alg. 2, Eq. 4"},
    {.name = "hierarchical", .fn = agx_allgather_intra_hierarchical, .ops = AG | AGV, .plans = 1,
     .desc = "gather to one leader per region, leader Bruck allgather, local bcast",
     .cost = "(p_l-1) alpha_l + ceil(log2 r) alpha + (r-1)/r b beta + ceil(log2 p_l)(alpha_l + b beta_l)",
     .cite = "Traff06; Bienz Sec. 5"},
    {.name = "multileader", .fn = agx_allgather_intra_multileader, .ops = AG | AGV, .plans = 1,
     .desc = "AGX_LEADERS leaders per region: sub-block gather, leader allgathers, bcast",
     .cost = "ceil(log2 r) alpha + (r-1)/r (b/nl) beta + local gather, allgather and bcast",
     .cite = "Kandalla09; Bienz Sec. 5",
     .params = {{"leaders", "AGX_LEADERS", "leaders per region", 2, 1, 1 << 20}}},
    {.name = "multilane", .fn = agx_allgather_intra_multilane, .ops = AG | AGV, .plans = 1,
     .desc = "every local rank a lane: direct local phases, ceil(log_K r) non-local rounds, K-1 = min(r-1, p_l F)",
     .cost = "L alpha + (b/p_l) beta + (L+1) alpha_l + (b-s) beta_l, L = ceil(log_K r)",
     .cite = "agx (docs/algorithms.md); cf. Bienz Alg. 2, Eq. 4",
     .params = {{"fanout", "AGX_MULTILANE_FANOUT", "non-local messages per lane and round", 16, 1, 1 << 20}}},
    {.name = "shm_notify", .fn = agx_allgather_intra_shm_notify, .ops = AG | AGV,
     .desc = "notified one-sided writes into node-shared windows, pipelined ring of nodes",
     .cost = "about (r-1 + n_node/(L B)) (alpha + B beta), a node's link carries n - n_next; 2 node barriers",
     .cite = "SharedNotify Alg. 1, Eq. 1-4", .check = agx_shm_notify_violation,
     .params = {{"block", "AGX_SHM_BLOCK", "largest data block, bytes", 65536, 64, 1 << 30}}},
    {.name = "bdr", .fn = agx_allgather_intra_bdr, .ops = AG,
     .desc = "PAP-aware background disseminated ring (agx_pat_init)",
     .cost = "as ring; up to min(p-1, omega/tau) blocks move before the last arrival",
     .cite = "Proficz21 Listing 2", .check = agx_pat_violation, .fallback = "ring", .pat = &agx_bdr_pat},
    {.name = "bslb", .fn = agx_allgather_intra_bslb, .ops = AG,
     .desc = "PAP-aware sorted linear gather in the background + bcast (agx_pat_init)",
     .cost = "(p-1)(2 alpha + n/p beta) overlapped with computation, + the library's bcast",
     .cite = "Proficz21 Listing 3", .check = agx_pat_violation, .fallback = "gather_bcast",
     .pat = &agx_bslb_pat},
};

/* The built-in default (a rules file, AGX_TUNING_FILE, measured on the machine, comes
 * first). On one region (node) the MPI library's own algorithm: agx's flat algorithms are
 * not faster than Open MPI's or MPICH's on shared memory, so agx never is slower there.
 * Across regions with more than one process in one, multilane: simulated at 16 x 16 ranks
 * (docs/RESULTS.md, "Locality-aware allgather at 16 ranks per node") it is the fastest agx
 * algorithm at every size from 8 B to 1 MiB per process, and at 4 B at 64 x 16, as its
 * cost model next to Eq. 4 predicts (one local step per phase, the fewest non-local rounds, the node link the
 * only bottleneck). One process per region: MPICH's thresholds over the flat algorithms
 * (Bruck for short results, recursive doubling for medium ones on a power of two, the
 * ring for long ones). Regions are found (collectively, once per communicator) at the
 * first selection. */
static const agx_rule intra_rules[] = {
    {.nodes = {1, 2}, .alg = "native"},
    {.nodes = {2, 0}, .ppn = {2, 0}, .alg = "multilane"},
    {.bytes = {0, 80 * 1024}, .alg = "bruck"},
    {.bytes = {0, 512 * 1024}, .pow2 = 1, .alg = "recursive_doubling"},
    {.alg = "ring"},
};

/* The on-line choice's candidates (AGX_ADAPT, src/select/adapt.c) beside the default's and
 * native: the fastest agx algorithms somewhere in docs/RESULTS.md's "On-line choice" sweep,
 * and loc_bruck, the fastest under SMPI's heavy per-message cost (docs/RESULTS.md, "Cost
 * model"). */
static const char *const intra_online[] = {"multilane", "loc_bruck", "kbruck", "hierarchical", "recursive_doubling",
                                           "bruck", "ring", NULL};

const agx_table agx_allgather_intra_table = {
    .kind = AGX_KIND_INTRA, .algs = intra, .n = sizeof intra / sizeof intra[0],
    .rules = intra_rules, .nrules = sizeof intra_rules / sizeof intra_rules[0], .online = intra_online};

/* Inter calls: inter-communicators and colour splits of an intra-communicator. */
static const agx_alg inter[] = {
    {.name = "native", .fn = agx_allgather_inter_native, .ops = AG | AGV,
     .desc = "the MPI library's own intergroup algorithm (PMPI_, root gathering)",
     .cost = "KangTraff19 Eq. 2", .cite = "KangTraff19 Sec. 3.1", .raw = 1},
    {.name = "root_gather", .fn = agx_allgather_inter_root_gather, .ops = AG | AGV,
     .desc = "root gathering: local gather, root exchange, local bcast",
     .cost = "(2 + 2 log p + log q) ts + (max((p-1) kA, (q-1) kB) + 3 p kA + 3 q kB) tw",
     .cite = "KangTraff19 Sec. 3.1, Eq. 2"},
    {.name = "segmented", .fn = agx_allgather_inter_segmented, .ops = AG,
     .desc = "message segmentation over subgroups, then local allgathers",
     .cost = "(p/q + log p) ts + (max(p kA, q kB) + kB) tw", .cite = "KangTraff19 Alg. 1, Thm. 1"},
    {.name = "segmented_v", .fn = agx_allgather_inter_segmented_v, .ops = AG | AGV,
     .desc = "byte-index segmentation with ordered receives",
     .cost = "(M + max(max kA, max kB) + log(pq)) tw, M = max(KA, KB)", .cite = "KangTraff19 Alg. 2, Thm. 3"},
    {.name = "eager", .fn = agx_allgather_inter_eager, .ops = AG | AGV,
     .desc = "blocks <= 32 B ride on the call's agreement (one allgather); else segmented(_v)",
     .cost = "ceil(log2(p+q)) ts + 64 (p+q) tw", .cite = "agx (docs/algorithms.md); KangTraff19 Sec. 3"},
};

/* The two groups see different message sizes (each receives the other's), so a size rule
 * could pick different algorithms in the two groups: one algorithm at every size. `eager`
 * decides after the agreement, from sizes every process knows, whether its records
 * carried the data or `segmented` / `segmented_v` runs. */
static const agx_rule inter_ag_rules[] = {{.alg = "eager"}};

const agx_table agx_allgather_inter_table = {
    .kind = AGX_KIND_INTER, .algs = inter, .n = sizeof inter / sizeof inter[0],
    .rules = inter_ag_rules, .nrules = 1};
