/*
 * Persistent and non-blocking collectives: the request calls (agx_start, agx_wait & co.)
 * and the making of a request that every operation's _init / i-call shares
 * (agx_api_request). The life cycle and the progress rule are src/core/request.c's;
 * docs/algorithms.md, "Requests", gives them to users.
 */
#include "api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* AGX_VERBOSE=1: a request that runs the library's call, once per process and operation. */
static void say_lib(const agx_args *a, const char *fn)
{
    static int said[AGX_OP_LAST];
    if (a->rank != 0 || said[a->op] || !agx_env_flag("AGX_VERBOSE"))
        return;
    said[a->op] = 1;
    fprintf(stderr, "agx: %s: %s; the MPI library's own non-blocking call runs at each start\n", fn,
            a->kind == AGX_KIND_INTER ? "an inter-communicator"
            : !a->alg                  ? "no agx algorithm of this operation plans yet"
            : !a->alg->plans           ? "the chosen algorithm is not one schedule (no plan)"
                                       : "nothing to plan here (one process, no data, a packed datatype)");
}

int agx_api_request(agx_args *a, int persistent, int rc, agx_lib_start_fn lib, void *larg, const char *fn,
                    agx_request *out)
{
    agx_req *r = NULL;
    agx_plan *plan = NULL;
    int tag = a->ctx ? agx_req_tag(a->ctx) : 0; /* on every rank, in call order, failed or not */
    if (rc == MPI_SUCCESS && (rc = agx_req_new(a->ctx, a->user_comm, fn, persistent, &r)) == MPI_SUCCESS) {
        if (a->alg && a->alg->plans && a->kind == AGX_KIND_INTRA) {
            a->plan = &plan;
            a->plan_tag = tag;
            rc = a->alg->fn(a); /* success without a plan: nothing to plan (the library's call) */
            a->plan = NULL;
        }
        if (plan)
            agx_req_set_plan(r, plan);
        else if (rc == MPI_SUCCESS) {
            say_lib(a, fn);
            int native = agx_alg_find(a->op, a->kind, "native");
            if (native >= 0 && a->sel) {
                a->sel->last[a->op] = native;
                a->sel->last_kind[a->op] = a->kind;
            }
            agx_req_set_lib(r, lib, larg);
            larg = NULL;
        }
    }
    free(larg);
    /* an init is collective and pays one agreement: a rank that failed (its arguments, its
     * memory) fails it on every rank. A non-blocking call gates round 0 on the same
     * agreement, non-blocking: a rank that failed returns its error once the others have
     * joined, and they complete the request with it (on an intra-communicator of more
     * than one process: the library's own call otherwise). */
    int agreed = a->ctx && a->comm != MPI_COMM_NULL;
    if (persistent && agreed)
        rc = agx_agree(a->comm, a->rank, rc, NULL, 0, fn, "could not make its request");
    else if (agreed && a->kind == AGX_KIND_INTRA && a->p > 1)
        rc = rc == MPI_SUCCESS ? agx_req_gate(r, a->comm) : agx_req_gate_failed(a->ctx, a->comm, rc);
    if (rc == MPI_SUCCESS && !persistent)
        rc = agx_req_start(r);
    if (rc != MPI_SUCCESS && r)
        agx_req_free(r), r = NULL;
    *out = r;
    return rc;
}

int agx_request_begin(agx_args *a, int persistent, const char *fn, agx_request *req)
{
    if (!req)
        return agx_error(MPI_ERR_REQUEST, "%s: request is NULL", fn);
    *req = AGX_REQUEST_NULL;
    a->request = 1;
    agx_coll_install();
    int rc = agx_call_begin(a, fn);
    if (rc == MPI_SUCCESS && persistent) /* an init agrees (blocking) on pcomm: the queued requests' first */
        agx_req_flush(a->ctx);
    return rc;
}

void *agx_lib_arg(const void *src, size_t n, int *rc, const char *fn)
{
    void *l = malloc(n);
    if (l)
        memcpy(l, src, n);
    else if (*rc == MPI_SUCCESS)
        *rc = agx_error(MPI_ERR_NO_MEM, "%s: out of memory", fn);
    return l;
}

/* The communicator a request call raises on: the request's, else MPI_COMM_SELF's. */
static MPI_Comm comm_of(const agx_request *req)
{
    return req && *req ? agx_req_comm(*req) : MPI_COMM_SELF;
}

int agx_start(agx_request *req)
{
    if (!req || !*req)
        return agx_raise(MPI_COMM_SELF, agx_error(MPI_ERR_REQUEST, "agx_start: the request is %s",
                                                  req ? "AGX_REQUEST_NULL" : "NULL"));
    if (!agx_req_persistent(*req))
        return agx_raise(comm_of(req), agx_error(MPI_ERR_REQUEST, "agx_start: not a persistent request "
                                                 "(made by agx_<op>_init)"));
    return agx_raise(comm_of(req), agx_req_start(*req));
}

int agx_startall(int count, agx_request reqs[])
{
    int first = MPI_SUCCESS;
    for (int i = 0; i < count; i++) {
        int rc = agx_start(&reqs[i]);
        first = first == MPI_SUCCESS ? rc : first;
    }
    return first;
}

/* A request reported complete with code rc: a non-blocking one freed. */
static int reported(agx_request *req, int rc)
{
    MPI_Comm comm = comm_of(req);
    if (!agx_req_persistent(*req)) {
        agx_req_free(*req);
        *req = AGX_REQUEST_NULL;
    }
    return agx_raise(comm, rc);
}

int agx_wait(agx_request *req)
{
    if (!req)
        return agx_raise(MPI_COMM_SELF, agx_error(MPI_ERR_REQUEST, "agx_wait: the request pointer is NULL"));
    if (!*req)
        return MPI_SUCCESS;
    return reported(req, agx_req_wait(*req));
}

int agx_waitall(int count, agx_request reqs[])
{
    int first = MPI_SUCCESS, pending = 1;
    if (count > 0 && !reqs)
        return agx_raise(MPI_COMM_SELF, agx_error(MPI_ERR_REQUEST, "agx_waitall: the request array is NULL"));
    while (pending) { /* test them all in turn: none waits on one while another needs progress */
        pending = 0;
        for (int i = 0; i < count; i++) {
            int flag = 1;
            if (!reqs[i])
                continue;
            int rc = agx_req_test(reqs[i], &flag);
            if (flag) {
                rc = reported(&reqs[i], rc);
                first = first == MPI_SUCCESS ? rc : first;
            } else
                pending = 1;
        }
    }
    return first;
}

int agx_test(agx_request *req, int *flag)
{
    if (!req || !flag)
        return agx_raise(MPI_COMM_SELF, agx_error(MPI_ERR_ARG, "agx_test: request or flag is NULL"));
    *flag = 1;
    if (!*req)
        return MPI_SUCCESS;
    int rc = agx_req_test(*req, flag);
    return *flag ? reported(req, rc) : MPI_SUCCESS;
}

int agx_request_free(agx_request *req)
{
    if (!req || !*req)
        return MPI_SUCCESS;
    int rc = agx_req_free(*req);
    if (rc == MPI_SUCCESS)
        *req = AGX_REQUEST_NULL;
    return agx_raise(comm_of(req), rc);
}

int agx_request_mpi(agx_request *req, MPI_Request *out)
{
    if (!req || !*req || !out)
        return agx_raise(MPI_COMM_SELF, agx_error(MPI_ERR_REQUEST, "agx_request_mpi: no request"));
    int rc = agx_req_to_mpi(*req, out);
    if (rc == MPI_SUCCESS && !agx_req_persistent(*req)) /* MPI's now; a persistent one stays agx's too */
        *req = AGX_REQUEST_NULL;
    return agx_raise(comm_of(req), rc);
}

int agx_progress_async(void) { return agx_progress_thread_on(); }

int agx_progress(void) { return agx_req_progress(); }
