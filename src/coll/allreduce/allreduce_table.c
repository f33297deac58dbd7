/*
 * agx_allreduce's algorithms. Adding an algorithm = its file under src/coll/allreduce/ +
 * one row here. Citations are keys of docs/REFERENCES.md.
 */
#include "coll_allreduce.h"

#include <stddef.h>

#define AR (1u << AGX_OP_ALLREDUCE)

/* Every algorithm but native: only (type, op) pairs of MPI's table whose answer agx's
 * algorithms are tested to give (tests/mpi/test_typeops.c); the rest runs native. */
static const char *proven(const agx_args *a, int *told)
{
    (void)told;
    return a->u.ar.unproven;
}

static const char *commutative(const agx_args *a, int *told)
{
    const char *why = proven(a, told);
    if (why)
        return why;
    return a->u.ar.commutative ? NULL : "needs a commutative op (its reduction order is not the rank order)";
}

static const char *exact(const agx_args *a, int *told)
{
    const char *why = commutative(a, told);
    if (why || a->u.ar.exact)
        return why;
    return "reduces in a different order on each rank, so it needs a reduction whose result does not depend "
           "on the order (a predefined op on integer types) to give every rank the same bits";
}

/* dissemination_radix: a short-vector algorithm whose scratch is (2 + max(2k, L)) times
 * the vector: over 1 MiB it is not run (its fallback is), so that the on-line choice's
 * first look does not allocate GBs (32 MiB on 4 ranks: 320 MiB of scratch per rank, 9.4x
 * the winner's time; 2.4 GB on 3 ranks: the kernel killed a rank, docs/RESULTS.md
 * "Results over 2 GiB"). The vector's bytes are alike on every rank. */
#define RADIX_MAX_BYTES (1LL << 20)
/* the on-line choice times it on vectors under 8 KiB only: from 4 KiB it ran 1.5-7x the
 * best at 2, 4 and 8 ranks of this VM (27 launches a size), its first call at a new size
 * took 0.7-7.9 ms there on 4 ranks (dissemination's 0.03-2.0), and simulated at 16 x 12
 * it leads to 4 KiB only (docs/RESULTS.md, "dissemination_radix out of the window from
 * 8 KiB") */
#define RADIX_ONLINE_BELOW 8192
static const char *radix_check(const agx_args *a, int *told)
{
    const char *why = exact(a, told);
    if (why || a->msg_bytes <= RADIX_MAX_BYTES)
        return why;
    return "a short-vector algorithm: over 1 MiB its scratch would be (2 + 2k) times the vector";
}

/* dissemination_node's and dissemination_shm's lane size (one environment variable) */
#define LANE_BYTES                                                                                             \
    {"lane_bytes", "AGX_AR_LANE_BYTES", "bytes per lane before the vector is split over a node's ranks", 4096, 1, \
     1 << 30}

static const agx_alg intra[] = {
    {.name = "native", .fn = agx_allreduce_native, .ops = AR,
     .desc = "the MPI library's own MPI_Allreduce (PMPI_)", .cost = "the library's choice", .cite = "-"},
    {.name = "dissemination", .fn = agx_allreduce_intra_dissemination, .ops = AR, .plans = 1,
     .desc = "dissemination for any p, partial results sent early in the same rounds",
     .cost = "floor(log2 p) rounds; (floor(log2 p) + popcount(p) - 1) n sent per rank",
     .cite = "SharedNotify Sec. III, Figs. 4-5", .check = exact, .fallback = "recursive_doubling"},
    {.name = "dissemination_node", .fn = agx_allreduce_intra_dissemination_node, .ops = AR,
     .desc = "node-local reduce-scatter over lanes, dissemination among the nodes per lane, node-local allgather",
     .cost = "floor(log2 nodes) + 2 rounds; lanes carry n/lanes bytes across nodes",
     .cite = "SharedNotify Sec. III (last paragraph)", .check = exact, .fallback = "recursive_doubling",
     .params = {LANE_BYTES}, .same_on_two = "dissemination|reduce_bcast|rabenseifner"},
    {.name = "dissemination_shm", .fn = agx_allreduce_intra_dissemination_shm, .ops = AR,
     .desc = "dissemination_node with the node-local reduce-scatter and allgather in a node-shared window",
     .cost = "floor(log2 nodes) rounds + 2 node barriers; lanes carry n/lanes bytes across nodes",
     .cite = "SharedNotify Sec. III (last paragraph)", .check = exact, .fallback = "recursive_doubling",
     .params = {LANE_BYTES}},
    {.name = "dissemination_radix", .fn = agx_allreduce_intra_dissemination_radix, .ops = AR,
     .desc = "dissemination among nodes in radix k = ranks per node, partial windows in base k; short vectors",
     .cost = "about log_k(nodes) non-local rounds, each + one node-local round",
     .cite = "agx, extending SharedNotify Sec. III", .check = radix_check, .fallback = "recursive_doubling",
     .same_on_two = "dissemination", .online_below = RADIX_ONLINE_BELOW},
    {.name = "recursive_doubling", .fn = agx_allreduce_intra_recursive_doubling, .ops = AR, .plans = 1,
     .desc = "whole-vector exchanges at distances 1, 2, 4, ..; fold for any p",
     .cost = "log2(p2) (+2) rounds of n bytes", .cite = "Thakur05", .check = proven, .fallback = "native",
     .same_on_two = "dissemination"},
    {.name = "reduce_bcast", .fn = agx_allreduce_intra_reduce_bcast, .ops = AR, .plans = 1,
     .desc = "binomial reduce to rank 0, binomial broadcast",
     .cost = "2 ceil(log2 p) rounds of n bytes", .cite = "SharedNotify Sec. III-B (baseline 3)",
     .check = proven, .fallback = "native"},
    {.name = "ring", .fn = agx_allreduce_intra_ring, .ops = AR, .plans = 1,
     .desc = "ring reduce-scatter over p blocks, then ring allgather",
     .cost = "2 (p-1) rounds; 2 (p-1)/p n sent per rank", .cite = "SharedNotify Sec. III-B (baseline 8)",
     .check = commutative, .fallback = "recursive_doubling"},
    {.name = "rabenseifner", .fn = agx_allreduce_intra_rabenseifner, .ops = AR, .plans = 1,
     .desc = "reduce-scatter by recursive halving, allgather by recursive doubling; fold for any p",
     .cost = "2 log2(p2) (+2) rounds; 2 (p2-1)/p2 n sent per rank", .cite = "Thakur05 (Rabenseifner)",
     .check = commutative, .fallback = "recursive_doubling"},
};

/* The default (docs/algorithms.md, "allreduce"): across nodes, for exact reductions,
 * dissemination_radix below 8 KiB and dissemination_node below 128 KiB (the fastest agx
 * algorithms there on the simulated Cori-like machine, docs/RESULTS.md), as
 * dissemination_shm: its node-local parts in a shared window where the nodes share memory
 * (1.6-2x faster than messages here), dissemination_node itself where not; otherwise
 * short vectors by dissemination where it gives every rank the same bits, else recursive
 * doubling; long ones by Rabenseifner (commutative ops), else recursive doubling. 2 KiB
 * is MPICH's short/long threshold. */
static const agx_rule intra_rules[] = {
    {.nodes = {2, 0}, .bytes = {0, 8192}, .alg = "dissemination_radix"},
    {.nodes = {2, 0}, .bytes = {0, 131072}, .alg = "dissemination_shm"},
    {.bytes = {0, 2048}, .alg = "dissemination"},
    {.bytes = {0, 2048}, .alg = "recursive_doubling"},
    {.alg = "rabenseifner"},
    {.alg = "recursive_doubling"},
};

/* The on-line choice's candidates (AGX_ADAPT, src/select/adapt.c) beside the default's and
 * native: the fastest agx algorithms somewhere in docs/RESULTS.md's "On-line choice"
 * sweep (fewer messages and the shared window win on a busy node); dissemination_node
 * after the three whose messages it sends on 2 ranks (its same_on_two). */
static const char *const intra_online[] = {"dissemination_shm", "dissemination_radix", "recursive_doubling",
                                           "rabenseifner", "reduce_bcast", "dissemination_node", NULL};

const agx_table agx_allreduce_intra_table = {
    .kind = AGX_KIND_INTRA, .algs = intra, .n = sizeof intra / sizeof intra[0],
    .rules = intra_rules, .nrules = sizeof intra_rules / sizeof intra_rules[0], .online = intra_online};

static const agx_alg inter[] = {
    {.name = "native", .fn = agx_allreduce_native, .ops = AR, .raw = 1,
     .desc = "the MPI library's own MPI_Allreduce on the inter-communicator (PMPI_)",
     .cost = "the library's choice", .cite = "-"},
};

const agx_table agx_allreduce_inter_table = {
    .kind = AGX_KIND_INTER, .algs = inter, .n = 1}; /* no rules: native */
