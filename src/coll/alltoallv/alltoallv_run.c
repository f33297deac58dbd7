/*
 * Running an alltoallv kernel schedule (src/patterns/alltoallv.h) through the engine, over
 * the call's two layouts: buffer AGX_A2A_SEND is the send layout, AGX_A2A_RECV the
 * receive layout. Built per call (O(p)): the non-empty pairs change from call to call.
 */
#include "coll_alltoallv.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static void state_free(void *p)
{
    agx_a2a_state *st = p;
    if (st->pattern)
        agx_a2a_pattern_free(st->pattern);
    free(st->pattern);
    free(st);
}

/* The communicator's alltoallv state, made at its first alltoallv (or two-phase write):
 * AGX_ALLTOALLV_THROTTLE and AGX_ALLTOALLV_SYNC are read then, once. */
static int state_of(agx_ctx *ctx, agx_a2a_state **out)
{
    agx_a2a_state *st = agx_ctx_slot(ctx, AGX_SLOT_A2A);
    if (!st) {
        if (!(st = calloc(1, sizeof *st)))
            return agx_error(MPI_ERR_NO_MEM, "out of memory for the alltoallv state");
        long long v = 32;
        const char *s = getenv("AGX_ALLTOALLV_THROTTLE");
        if (agx_env_int("AGX_ALLTOALLV_THROTTLE", 0, INT_MAX, &v) < 0)
            snprintf(st->bad, sizeof st->bad, "AGX_ALLTOALLV_THROTTLE=%.40s: expected an integer >= 0 (receives "
                     "per round; 0: no throttling)", s);
        st->throttle = (int)v;
        s = getenv("AGX_ALLTOALLV_SYNC");
        st->send_flags = AGX_SOP_SYNC;
        if (s && *s && strcasecmp(s, "issend")) {
            if (strcasecmp(s, "isend") && !st->bad[0])
                snprintf(st->bad, sizeof st->bad, "AGX_ALLTOALLV_SYNC=%.40s: expected issend or isend", s);
            st->send_flags = 0;
        }
        agx_ctx_attach(ctx, AGX_SLOT_A2A, st, state_free);
    }
    *out = st;
    return MPI_SUCCESS;
}

int agx_a2a_env(agx_ctx *ctx, agx_a2a_args *g)
{
    agx_a2a_state *st = NULL;
    int rc = state_of(ctx, &st);
    if (rc != MPI_SUCCESS)
        return rc;
    if (st->bad[0])
        return agx_error(MPI_ERR_ARG, "%s", st->bad);
    g->throttle = st->throttle;
    g->send_flags = st->send_flags;
    return MPI_SUCCESS;
}

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
    int rc;
    if (!a->plan)
        rc = agx_sched_run(&x, &s);
    else if (g->sendbuf == MPI_IN_PLACE)
        rc = MPI_SUCCESS; /* no plan: its send side is a copy made per call (the library's call runs) */
    else {
        x.tag = a->plan_tag; /* a request: the plan copies schedule and layouts */
        rc = agx_plan_make(&x, &s, a->plan);
    }
    agx_sched_free(&s);
    return rc;
}

int agx_a2a_exchange(const agx_args *base, int alg, const agx_a2a_pattern *pt, int throttle, unsigned flags,
                     const void *sbuf, const int *sc, const int *sd, void *rbuf, const int *rc, const int *rd,
                     unsigned char *snz, unsigned char *rnz)
{
    agx_args a = *base;
    a.op = AGX_OP_ALLTOALLV;
    a.kind = AGX_KIND_INTRA;
    a.table = agx_table_of(a.op, a.kind);
    a.alg = agx_alg_at(a.op, a.kind, alg);
    a.pattern = pt;
    a.msg_bytes = 0;
    agx_a2a_args *g = &a.u.a2a;
    *g = (agx_a2a_args){.sendbuf = sbuf, .sendcounts = sc, .sdispls = sd, .sendtype = MPI_BYTE,
                        .recvbuf = rbuf, .recvcounts = rc, .rdispls = rd, .recvtype = MPI_BYTE,
                        .snz = snz, .rnz = rnz, .throttle = throttle, .send_flags = flags};
    g->sblk = (agx_blocks){.buf = (char *)sbuf, .type = MPI_BYTE, .extent = 1, .type_size = 1, .p = a.p,
                           .counts = sc, .displs = sd};
    g->rblk = g->sblk;
    g->rblk.buf = rbuf;
    g->rblk.counts = rc;
    g->rblk.displs = rd;
    for (int j = 0; j < a.p; j++) {
        snz[j] = sc[j] > 0;
        rnz[j] = rc[j] > 0;
        a.msg_bytes += sc[j];
    }
    return a.alg ? a.alg->fn(&a) : agx_error(MPI_ERR_INTERN, "agx_a2a_exchange: no algorithm %d", alg);
}
