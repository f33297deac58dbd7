/*
 * agx_alltoallv's algorithms: the all-to-many kernels of KangRoss20 and the library's
 * own. Adding an algorithm = its file under src/coll/alltoallv/ + one row here.
 * Citations are keys of docs/REFERENCES.md.
 */
#include "coll_alltoallv.h"

#define A2AV (1u << AGX_OP_ALLTOALLV)

static const agx_alg intra[] = {
    {.name = "native", .fn = agx_alltoallv_native, .ops = A2AV,
     .desc = "the MPI library's own MPI_Alltoallv (PMPI_)", .cost = "the library's choice", .cite = "-"},
    {.name = "issend_all", .fn = agx_alltoallv_intra_issend_all, .ops = A2AV, .plans = 1,
     .desc = "ROMIO's default: every Irecv, then every Issend, ascending ranks, one Waitall",
     .cost = "1 round; (p-1) ts + k tw, m requests in flight at a receiver of m senders",
     .cite = "KangRoss20 Sec. V, Fig. 3a"},
    {.name = "isend_all", .fn = agx_alltoallv_intra_isend_all, .ops = A2AV, .plans = 1,
     .desc = "as issend_all with standard-mode Isend (ROMIO's original)",
     .cost = "1 round; (p-1) ts + k tw", .cite = "KangRoss20 Sec. IV-A"},
    {.name = "spread_out", .fn = agx_alltoallv_intra_spread_out, .ops = A2AV, .plans = 1,
     .desc = "spread-out: receive from r+i, send to r-i; AGX_ALLTOALLV_THROTTLE receives per round",
     .cost = "(p-1) ts + k tw; straggler delay (p-1) sigma/sqrt(2 pi) when |R| << p",
     .cite = "KangRoss20 Alg. 1, Eq. 4"},
    {.name = "balanced", .fn = agx_alltoallv_intra_balanced, .ops = A2AV, .plans = 1,
     .desc = "balanced spread-out over a rank list built from the receivers; throttled",
     .cost = "(p-1) ts + k tw; straggler delay ~0 for |R| <= p/2",
     .cite = "KangRoss20 Alg. 2, Eq. 5"},
    {.name = "pairwise", .fn = agx_alltoallv_intra_pairwise, .ops = A2AV, .plans = 1,
     .desc = "p-1 Sendrecv steps: XOR partner (p a power of two), else shift",
     .cost = "(p-1) ts + k tw, one partner per step", .cite = "KangRoss20 Sec. II-B; Thakur05"},
    {.name = "tam", .fn = agx_alltoallv_intra_tam, .ops = A2AV,
     .desc = "two-layer aggregation: region gather, aggregator exchange, region scatter",
     .cost = "(r-1) ts + (region's bytes out) tw between aggregators, + 3 intra-region phases",
     .cite = "KangRoss20 Sec. II-B, V (TAM)"},
};

/* The pattern-aware choice (docs/algorithms.md, "alltoallv"): from the call's receiver
 * set R and the most senders of one receiver (smax), by KangRoss20's findings:
 * all-to-many (|R| <= p/2 receivers, each hearing from >= p/2 senders): balanced with
 * throttling (Sec. V-A, Fig. 5a-b); few senders per receiver (< p/4: FLASH-IO and BTIO's
 * data phase, Sec. V-B, V-C): ROMIO's issend_all without throttling; otherwise (dense):
 * spread_out, MPICH's throttled alltoallv. */
static const agx_rule intra_rules[] = {
    {.recv_pct_max = 50, .send_pct_min = 50, .alg = "balanced"},
    {.send_pct_max = 25, .alg = "issend_all"},
    {.alg = "spread_out"},
};

/* The on-line choice's candidates (AGX_ADAPT, src/select/adapt.c) beside the default's and
 * native: the kernels that are one schedule. */
static const char *const intra_online[] = {"spread_out", "pairwise", "isend_all", "issend_all", "balanced", NULL};

const agx_table agx_alltoallv_intra_table = {
    .kind = AGX_KIND_INTRA, .algs = intra, .n = sizeof intra / sizeof intra[0],
    .rules = intra_rules, .nrules = sizeof intra_rules / sizeof intra_rules[0], .online = intra_online};

static const agx_alg inter[] = {
    {.name = "native", .fn = agx_alltoallv_native, .ops = A2AV, .raw = 1,
     .desc = "the MPI library's own MPI_Alltoallv on the inter-communicator (PMPI_)",
     .cost = "the library's choice", .cite = "-"},
};

const agx_table agx_alltoallv_inter_table = {
    .kind = AGX_KIND_INTER, .algs = inter, .n = 1}; /* no rules: native */
