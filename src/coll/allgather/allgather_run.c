/*
 * The allgather family's runners: the own block's copy, the flat algorithms (one cached
 * schedule over the receive layout) and the locality-aware ones (Bienz: a virtual order
 * and its schedule, cached per communicator, over the permuted layout). For a request
 * (a->plan) they make the schedule a plan instead of running it.
 */
#include "coll_allgather.h"

#include <stdlib.h>

int agx_copy_own_block(const agx_args *a)
{
    const agx_ag_args *g = &a->u.ag;
    if (g->sendbuf == MPI_IN_PLACE)
        return MPI_SUCCESS;
    const agx_blocks *b = &g->blk;
    return agx_localcopy(g->sendbuf, g->sendcount, g->sendtype,
                         b->buf + agx_blk_displ(b, a->rank) * b->extent,
                         agx_blk_count(b, a->rank), b->type);
}


/* A request's plan of schedule s over x (a->plan): its own tag, and the own block's copy
 * as the prologue of every start. */
static int make_plan(const agx_args *a, agx_exec *x, const agx_sched *s)
{
    const agx_ag_args *g = &a->u.ag;
    const agx_blocks *b = &g->blk;
    x->tag = a->plan_tag;
    int rc = agx_plan_make(x, s, a->plan);
    if (rc == MPI_SUCCESS && g->sendbuf != MPI_IN_PLACE &&
        (rc = agx_plan_prologue(*a->plan, g->sendbuf, g->sendcount, g->sendtype,
                                b->buf + agx_blk_displ(b, a->rank) * b->extent, agx_blk_count(b, a->rank),
                                b->type)) != MPI_SUCCESS) {
        agx_plan_free(*a->plan);
        *a->plan = NULL;
    }
    return rc;
}

int agx_run_flat(const agx_args *a, agx_build_fn build, int param)
{
    const agx_sched *s;
    agx_exec x;
    int rc = a->plan ? MPI_SUCCESS : agx_copy_own_block(a);
    if (rc == MPI_SUCCESS)
        rc = agx_flat_sched(a, build, param, &s);
    if (rc != MPI_SUCCESS)
        return rc;
    agx_exec_of(a, &a->u.ag.blk, &x);
    return a->plan ? make_plan(a, &x, s) : agx_sched_run(&x, s);
}

int agx_run_locality(const agx_args *a, agx_order_fn order, agx_locbuild_fn fn, int nl)
{
    const agx_regions *R;
    const agx_sched *s;
    const int *ord;
    const agx_blocks *blk = &a->u.ag.blk;
    int rc = agx_ctx_regions(a->ctx, &R);
    if (rc != MPI_SUCCESS)
        return rc;
    if ((rc = agx_locality_sched(a->ctx, R, order, fn, nl, &s, &ord)) != MPI_SUCCESS)
        return rc;
    if (!a->plan && (rc = agx_copy_own_block(a)) != MPI_SUCCESS)
        return rc;
    /* the receive layout in the algorithm's virtual order (64-bit: displacements of a
     * regular layout may pass an int) */
    MPI_Aint *cnt = malloc(sizeof(MPI_Aint) * 2 * (size_t)a->p), *dsp = cnt + a->p;
    if (!cnt)
        return agx_error(MPI_ERR_NO_MEM, "out of memory for the permuted layout");
    for (int v = 0; v < a->p; v++) {
        cnt[v] = agx_blk_count(blk, ord[v]);
        dsp[v] = agx_blk_displ(blk, ord[v]);
    }
    agx_blocks vblk = *blk;
    vblk.counts = vblk.displs = NULL;
    vblk.lcounts = cnt;
    vblk.ldispls = dsp;
    vblk.same_shape = blk->same_shape || !agx_blk_listed(blk);
    agx_exec x;
    agx_exec_of(a, &vblk, &x);
    rc = a->plan ? make_plan(a, &x, s) : agx_sched_run(&x, s); /* a plan copies the layout */
    free(cnt);
    return rc;
}

