/*
 * Running an alltoallv kernel schedule (src/patterns/alltoallv.h) through the engine, over
 * the call's two layouts: buffer AGX_A2A_SEND is the send layout, AGX_A2A_RECV the
 * receive layout. Built per call (O(p)): the non-empty pairs change from call to call.
 */
#include "agx_internal.h"

int agx_a2a_run(const agx_args *a, agx_a2a_kernel kernel, int throttle, unsigned send_flags)
{
    const agx_a2a_args *g = &a->u.a2a;
    agx_a2a_side side = {.p = a->p, .r = a->rank, .snz = g->snz, .rnz = g->rnz, .pt = a->pattern,
                         .throttle = throttle, .send_flags = send_flags};
    agx_blocks bufs[2];
    bufs[AGX_A2A_SEND] = g->sblk;
    bufs[AGX_A2A_RECV] = g->rblk;
    agx_sched s;
    agx_sched_init(&s);
    if (agx_build_a2a(&s, kernel, &side) < 0 || agx_sched_finish(&s)) {
        agx_sched_free(&s);
        return agx_error(MPI_ERR_NO_MEM, "agx_alltoallv: out of memory building a schedule (p = %d)", a->p);
    }
    agx_exec x;
    agx_exec_of(a, bufs, &x);
    x.nbufs = 2;
    int rc = agx_sched_run(&x, &s);
    agx_sched_free(&s);
    return rc;
}
