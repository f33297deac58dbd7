/*
 * Regions of a communicator, its node map, and the cached schedules of the locality-aware
 * builders (Bienz).
 *
 * Regions come from AGX_REGION_SIZE=n (consecutive blocks of n ranks) or
 * AGX_REGIONS=round_robin:n, else from MPI_COMM_TYPE_SHARED (one region per node). They
 * are derived once per communicator (collectively, at the first call that needs them:
 * a locality-aware algorithm, or the counters' local/non-local split) and cached in the
 * context, as are the schedules (src/core/cache.c), which depend only on the regions.
 */
#include "core.h"

#include <stdlib.h>
#include <string.h>

/* This process's node, as the smallest MPI_COMM_WORLD rank on it: learned from the first
 * node map of a communicator that holds every process of the world (the program's world or
 * a duplicate of it, whose map splits the world itself), -1 until then. A later
 * communicator's map is then one allgather of these, where MPI_Comm_split_type, a
 * broadcast and a free took 100 us on 2 ranks of this VM. */
static _Atomic int my_node = -1;

static void node_forget(void)
{
    my_node = -1;
}

/* world[i] = the MPI_COMM_WORLD rank of comm's rank i; returns 0 when a member is not in
 * this process's world (spawned or connected processes: then every member finds one outside
 * its own world, so all of them contribute -1 and the map is split as before). */
static int world_ranks(MPI_Comm comm, int p, int *world)
{
    MPI_Group g, w;
    int ok = 1, *in = malloc(sizeof(int) * (size_t)p);
    if (!in)
        return 0;
    MPI_Comm_group(comm, &g);
    MPI_Comm_group(MPI_COMM_WORLD, &w);
    for (int i = 0; i < p; i++)
        in[i] = i;
    ok = MPI_Group_translate_ranks(g, p, in, w, world) == MPI_SUCCESS;
    for (int i = 0; ok && i < p; i++)
        ok = world[i] != MPI_UNDEFINED;
    MPI_Group_free(&g);
    MPI_Group_free(&w);
    free(in);
    return ok;
}

static int cmp_pair(const void *x, const void *y)
{
    const int *a = x, *b = y;
    return a[0] != b[0] ? (a[0] > b[0]) - (a[0] < b[0]) : (a[1] > b[1]) - (a[1] < b[1]);
}

/* map[i] = the smallest rank j with id[j] == id[i] (every id >= 0). */
static int map_of_ids(const int *id, int p, int *map)
{
    int *pr = malloc(sizeof(int) * 2 * (size_t)p);
    if (!pr)
        return MPI_ERR_NO_MEM;
    for (int i = 0; i < p; i++)
        pr[2 * i] = id[i], pr[2 * i + 1] = i;
    qsort(pr, (size_t)p, 2 * sizeof(int), cmp_pair);
    for (int k = 0, lead = 0; k < p; k++) {
        if (k == 0 || pr[2 * k] != pr[2 * k - 2])
            lead = pr[2 * k + 1];
        map[pr[2 * k + 1]] = lead;
    }
    free(pr);
    return MPI_SUCCESS;
}

/* The map by MPI_Comm_split_type: each node's smallest rank, broadcast on the node,
 * allgathered. */
static int split_map(MPI_Comm comm, int rank, int *map)
{
    MPI_Comm node;
    int leader = rank, rc = MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    if (rc == MPI_SUCCESS) {
        rc = PMPI_Bcast(&leader, 1, MPI_INT, 0, node);
        MPI_Comm_free(&node);
    }
    return rc == MPI_SUCCESS ? PMPI_Allgather(&leader, 1, MPI_INT, map, 1, MPI_INT, comm) : rc;
}

int agx_node_map(MPI_Comm comm, int **node_of)
{
    int rc, rank, p, wsize;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &p);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    int *map = malloc(sizeof(int) * (size_t)p), *world = malloc(sizeof(int) * (size_t)p);
    if (!map || !world) {
        free(map), free(world);
        return MPI_ERR_NO_MEM;
    }
    int inworld = world_ranks(comm, p, world), whole = inworld && p == wsize, mine = inworld ? my_node : -1, all = 1;
    /* The nodes as ids where every member knows its own (one -1 anywhere: the split), the
     * same answer on every rank, whatever each one learned before (a member whose earlier
     * map failed, another thread of it still inside one) */
    rc = PMPI_Allgather(&mine, 1, MPI_INT, map, 1, MPI_INT, comm);
    for (int i = 0; rc == MPI_SUCCESS && i < p; i++)
        all &= map[i] >= 0;
    if (rc == MPI_SUCCESS)
        rc = all ? map_of_ids(map, p, map) : split_map(comm, rank, map);
    if (rc == MPI_SUCCESS && !all && whole) { /* the whole world: my node's id */
        int id = wsize;
        for (int i = 0; i < p; i++)
            id = map[i] == map[rank] && world[i] < id ? world[i] : id;
        my_node = id;
        agx_at_finalize(node_forget);
    }
    free(world);
    if (rc != MPI_SUCCESS) {
        free(map);
        return rc;
    }
    *node_of = map;
    return MPI_SUCCESS;
}

int agx_ctx_regions(agx_ctx *ctx, const agx_regions **out)
{
    int rc = MPI_SUCCESS, *label = NULL;
    if (ctx->reg) {
        *out = ctx->reg;
        return MPI_SUCCESS;
    }
    agx_req_flush(ctx); /* collectives on pcomm follow: the requests' queued ones first */
    label = malloc(sizeof(int) * (size_t)ctx->p);
    agx_regions *R = calloc(1, sizeof *R);
    if (!label || !R) {
        rc = agx_error(MPI_ERR_NO_MEM, "out of memory for the regions of %d ranks", ctx->p);
        goto fn_exit;
    }
    int o = agx_regions_override(getenv("AGX_REGION_SIZE"), getenv("AGX_REGIONS"), ctx->p, label);
    if (o < 0) {
        rc = agx_error(MPI_ERR_ARG, "malformed AGX_REGION_SIZE (a positive integer) or "
                       "AGX_REGIONS (round_robin:N)");
        goto fn_exit;
    }
    if (o == 0) {
        int *node_of;
        if ((rc = agx_node_map(ctx->pcomm, &node_of)) != MPI_SUCCESS)
            goto fn_exit;
        memcpy(label, node_of, sizeof(int) * (size_t)ctx->p);
        free(node_of);
    }
    if (agx_regions_init(R, ctx->p, label)) {
        rc = agx_error(MPI_ERR_NO_MEM, "out of memory for the regions of %d ranks", ctx->p);
        goto fn_exit;
    }
    ctx->reg = R;
    ctx->reg_nodes = o == 0;
    R = NULL;
    *out = ctx->reg;
fn_exit:
    free(R);
    free(label);
    return rc;
}

/* The virtual order and this rank's schedule of builder `fn`, cached per communicator
 * (the regions are fixed per communicator, so (builder, nl) is the whole shape). */
int agx_locality_sched(agx_ctx *ctx, const agx_regions *R, agx_order_fn order, agx_locbuild_fn fn, int nl,
                       const agx_sched **out, const int **vorder)
{
    agx_cache_key key = {.builder = (const void *)fn, .p = R->p, .param = nl};
    if ((*out = agx_cache_find(ctx, &key, vorder)))
        return MPI_SUCCESS;
    agx_sched s;
    agx_sched_init(&s);
    int *ord = malloc(sizeof(int) * (size_t)R->p), *vidx = malloc(sizeof(int) * (size_t)R->p);
    int bad = !ord || !vidx;
    if (!bad) {
        order(R, nl, ord);
        for (int v = 0; v < R->p; v++)
            vidx[ord[v]] = v;
        bad = fn(R, nl, vidx, ctx->rank, &s) || agx_sched_finish(&s);
    }
    free(vidx);
    if (bad) {
        agx_sched_free(&s);
        free(ord);
        return agx_error(MPI_ERR_NO_MEM, "cannot build the locality-aware schedule (out of memory)");
    }
    *vorder = ord;
    return agx_cache_put(ctx, &key, &s, ord, out);
}
