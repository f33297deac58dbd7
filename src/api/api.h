/*
 * The api layer: agx's public functions (include/agx.h), one file per operation
 * (api_<op>.c) plus the communicator (api_comm.c), the registry listing and agx-info
 * (api_info.c) and the PAT session (api_pat.c). Each checks its arguments, opens the call
 * (agx_call_begin), runs it, and raises a failing call's code through the communicator's
 * error handler exactly once (agx_raise): the only layer, with src/io's public entry, that
 * raises. It calls every layer below and none of its siblings.
 */
#ifndef AGX_API_H
#define AGX_API_H

#include "coll.h"

/* An intra allgather(v) call up to its choice: context, local checks, receive layout
 * (api_allgather.c; api_shared.c's zero-copy entry shares it). */
int agx_ag_prepare_intra(agx_args *a, const char *fn);

/* The request of a prepared call (api_request.c): `rc` its checks' code, a->alg chosen
 * with a->request set (NULL: none, e.g. an inter-communicator). A plan where the algorithm
 * plans, else the library's call: lib(larg) at each start (larg taken over, freed). An
 * init (persistent) is agreed over the communicator; a non-blocking call starts at once. */
/* The opening of a request call: req checked and cleared, a->request set, the call begun
 * (a->ctx NULL: the code returned is final, no request can be made); an init (persistent)
 * first posts the collectives earlier requests queued (agx_req_flush): it agrees. */
int agx_request_begin(agx_args *a, int persistent, const char *fn, agx_request *req);
/* A copy of the library call's n-byte arguments (NULL, and *rc set if it was success,
 * when out of memory). */
void *agx_lib_arg(const void *src, size_t n, int *rc, const char *fn);
int agx_api_request(agx_args *a, int persistent, int rc, agx_lib_start_fn lib, void *larg, const char *fn,
                    agx_request *out);

/* Repeated blocking calls (api_comm.c; allgather's and allreduce's memos): the memo in the
 * context's slot, made zeroed at its first use (NULL: no memory, every call takes the
 * whole path); and a repeat's run: the queued requests posted first (its algorithm may post
 * on pcomm), the algorithm kept for agx_comm_last_algorithm, a->alg run on a. */
void *agx_memo_slot(agx_ctx *ctx, int slot, size_t size);
int agx_repeat_run(agx_ctx *ctx, agx_args *a);
/* agx_repeat_run's part before the run, for a repeat that calls the library itself: a
 * memo whose algorithm is native (agx_repeat_native: the table's native, on p > 1 ranks
 * and some bytes, where it is exactly the library's call on a->comm) calls it directly,
 * with no copy of the arguments (2 ranks, 8 B: the library's call takes 0.2-0.3 us). */
static inline void agx_repeat_note(agx_ctx *ctx, const agx_args *a)
{
    agx_req_flush_queued(ctx);
    a->sel->last[a->op] = (int)(a->alg - a->table->algs);
    a->sel->last_kind[a->op] = a->kind;
}
int agx_repeat_native(const agx_args *a);

#endif
