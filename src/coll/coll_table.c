/*
 * The algorithm registry: one row per algorithm, per communicator kind. An algorithm
 * written against the block layout serves allgather and allgatherv with one function.
 * Adding an algorithm = its file under src/coll/<op>/ + one row here (+ its id).
 */
#include "agx_internal.h"

int agx_allgather_intra_ring(const agx_args *a);
int agx_allgather_intra_bruck(const agx_args *a);
int agx_allgather_intra_recursive_doubling(const agx_args *a);
int agx_allgather_intra_neighbor_exchange(const agx_args *a);
int agx_allgather_intra_gather_bcast(const agx_args *a);
int agx_allgather_native(const agx_args *a);
int agx_allgatherv_native(const agx_args *a);
int agx_allgather_intra_loc_bruck(const agx_args *a);
int agx_allgather_intra_hierarchical(const agx_args *a);
int agx_allgather_intra_multileader(const agx_args *a);
int agx_allgather_intra_bdr(const agx_args *a);
int agx_allgather_intra_bslb(const agx_args *a);
int agx_allgather_inter_root_gather(const agx_args *a);
int agx_allgather_inter_segmented(const agx_args *a);
int agx_allgather_inter_segmented_v(const agx_args *a);
int agx_allgather_inter_native(const agx_args *a);
int agx_allgatherv_inter_native(const agx_args *a);

#define BOTH_OPS(f) {[AGX_OP_ALLGATHER] = (f), [AGX_OP_ALLGATHERV] = (f)}

enum {
    AGX_INTRA_NATIVE,
    AGX_INTRA_RING,
    AGX_INTRA_BRUCK,
    AGX_INTRA_RECURSIVE_DOUBLING,
    AGX_INTRA_NEIGHBOR_EXCHANGE,
    AGX_INTRA_GATHER_BCAST,
    AGX_INTRA_LOC_BRUCK,
    AGX_INTRA_HIERARCHICAL,
    AGX_INTRA_MULTILEADER,
    AGX_INTRA_BDR,
    AGX_INTRA_BSLB,
    AGX_INTRA_LAST
};

static const agx_alg intra_table[AGX_INTRA_LAST] = {
    [AGX_INTRA_NATIVE] = {.id = AGX_INTRA_NATIVE, .name = "native",
        .desc = "the MPI library's own algorithm (PMPI_)",
        .fn = {[AGX_OP_ALLGATHER] = agx_allgather_native, [AGX_OP_ALLGATHERV] = agx_allgatherv_native}},
    [AGX_INTRA_RING] = {.id = AGX_INTRA_RING, .name = "ring",
        .desc = "ring: p-1 steps to the right neighbour, bandwidth-optimal",
        .fn = BOTH_OPS(agx_allgather_intra_ring)},
    [AGX_INTRA_BRUCK] = {.id = AGX_INTRA_BRUCK, .name = "bruck",
        .desc = "Bruck dissemination: ceil(log2 p) steps, any p",
        .fn = BOTH_OPS(agx_allgather_intra_bruck)},
    [AGX_INTRA_RECURSIVE_DOUBLING] = {.id = AGX_INTRA_RECURSIVE_DOUBLING,
        .name = "recursive_doubling",
        .desc = "recursive doubling; non-power-of-two p folded onto the first p2 ranks",
        .fn = BOTH_OPS(agx_allgather_intra_recursive_doubling)},
    [AGX_INTRA_NEIGHBOR_EXCHANGE] = {.id = AGX_INTRA_NEIGHBOR_EXCHANGE,
        .name = "neighbor_exchange",
        .desc = "neighbour exchange (Open MPI NEX): p/2 steps of 2 blocks, even p",
        .restrictions = AGX_R_EVEN_P, .fallback = "ring",
        .fn = BOTH_OPS(agx_allgather_intra_neighbor_exchange)},
    [AGX_INTRA_GATHER_BCAST] = {.id = AGX_INTRA_GATHER_BCAST, .name = "gather_bcast",
        .desc = "linear gather to rank 0 + binomial broadcast (LNBC)",
        .fn = BOTH_OPS(agx_allgather_intra_gather_bcast)},
    [AGX_INTRA_LOC_BRUCK] = {.id = AGX_INTRA_LOC_BRUCK, .name = "loc_bruck",
        .desc = "locality-aware Bruck: local allgathers + ceil(log_pl r) non-local steps (seed 002 Alg. 2)",
        .fn = BOTH_OPS(agx_allgather_intra_loc_bruck)},
    [AGX_INTRA_HIERARCHICAL] = {.id = AGX_INTRA_HIERARCHICAL, .name = "hierarchical",
        .desc = "gather to one leader per region, leader Bruck allgather, local bcast",
        .fn = BOTH_OPS(agx_allgather_intra_hierarchical)},
    [AGX_INTRA_MULTILEADER] = {.id = AGX_INTRA_MULTILEADER, .name = "multileader",
        .desc = "AGX_LEADERS leaders per region: sub-block gather, leader allgathers, bcast",
        .fn = BOTH_OPS(agx_allgather_intra_multileader)},
    [AGX_INTRA_BDR] = {.id = AGX_INTRA_BDR, .name = "bdr",
        .desc = "PAP-aware background disseminated ring (seed 004 Listing 2; agx_pat_init)",
        .restrictions = AGX_R_PAT, .fallback = "ring",
        .fn = {[AGX_OP_ALLGATHER] = agx_allgather_intra_bdr}},
    [AGX_INTRA_BSLB] = {.id = AGX_INTRA_BSLB, .name = "bslb",
        .desc = "PAP-aware sorted linear gather in the background + bcast (seed 004 Listing 3)",
        .restrictions = AGX_R_PAT, .fallback = "gather_bcast",
        .fn = {[AGX_OP_ALLGATHER] = agx_allgather_intra_bslb}},
};

/* Inter calls: inter-communicators and colour splits of an intra-communicator. */
enum {
    AGX_INTER_NATIVE,
    AGX_INTER_ROOT_GATHER,
    AGX_INTER_SEGMENTED,
    AGX_INTER_SEGMENTED_V,
    AGX_INTER_LAST
};

static const agx_alg inter_table[AGX_INTER_LAST] = {
    [AGX_INTER_NATIVE] = {.id = AGX_INTER_NATIVE, .name = "native",
        .desc = "the MPI library's own intergroup algorithm (PMPI_, root gathering)",
        .fn = {[AGX_OP_ALLGATHER] = agx_allgather_inter_native, [AGX_OP_ALLGATHERV] = agx_allgatherv_inter_native}},
    [AGX_INTER_ROOT_GATHER] = {.id = AGX_INTER_ROOT_GATHER, .name = "root_gather",
        .desc = "root gathering: local gather, root exchange, local bcast (seed 000 Sec. 3.1)",
        .fn = BOTH_OPS(agx_allgather_inter_root_gather)},
    [AGX_INTER_SEGMENTED] = {.id = AGX_INTER_SEGMENTED, .name = "segmented",
        .desc = "message segmentation over subgroups, then local allgathers (seed 000 Alg. 1)",
        .fn = {[AGX_OP_ALLGATHER] = agx_allgather_inter_segmented}},
    [AGX_INTER_SEGMENTED_V] = {.id = AGX_INTER_SEGMENTED_V, .name = "segmented_v",
        .desc = "byte-index segmentation with ordered receives (seed 000 Alg. 2)",
        .fn = BOTH_OPS(agx_allgather_inter_segmented_v)},
};

const agx_alg *agx_table(agx_kind kind, int *n)
{
    if (kind == AGX_KIND_INTER) {
        *n = AGX_INTER_LAST;
        return inter_table;
    }
    *n = AGX_INTRA_LAST;
    return intra_table;
}
