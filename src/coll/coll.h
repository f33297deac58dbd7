/*
 * The coll layer's shared part: what every operation's runner and algorithms use over the
 * arguments of a call, and the operations' list (coll_table.c). Each operation family has
 * its own header in its folder (coll_<op>.h). The layer calls only itself, src/pat,
 * src/select, src/core and src/patterns.
 */
#ifndef AGX_COLL_H
#define AGX_COLL_H

#include "select.h"

/* The exec of an intra call over layout blk (counters by regions). */
static inline void agx_exec_of(const agx_args *a, const agx_blocks *blk, agx_exec *x)
{
    *x = (agx_exec){.comm = a->comm, .tag = AGX_TAG, .bufs = blk, .nbufs = 1,
                    .node_of = a->ctx->reg ? a->ctx->reg->region_of : NULL, .me = a->ctx->rank,
                    .op = MPI_OP_NULL};
}

/* The schedule of a flat builder for this rank and p, from the communicator's cache or
 * built now. */
static inline int agx_flat_sched(const agx_args *a, agx_build_fn build, int param, const agx_sched **out)
{
    return agx_flat_sched_of(a->ctx, a->rank, a->p, build, param, out);
}

/* The operations and their tables, installed in the registry (src/select) once per
 * process: every entry point (src/api, src/io) calls it before anything else. */
void agx_coll_install(void);

#endif
