/*
 * The core layer's messages (private to src/core): a schedule operation's blocks made one
 * MPI message (or, in SMPI builds, one per piece), posted at once (the engine) or built
 * for a plan to post at each start (or made a persistent request), and each arrival checked
 * against the size the schedule expects. src/core/message.c.
 */
#ifndef AGX_MESSAGE_H
#define AGX_MESSAGE_H

#include "core.h"

typedef struct {
    void *addr;
    int count;
    MPI_Datatype type;
    int owned;           /* type was created here */
    int recv;            /* a receive (the arrival trace timestamps it) */
    int peer;            /* a plan counts its sends at each start */
    int tag, sync;       /* a plan posts it again at each start (plan.c, post_fresh) */
    long long bytes;
} agx_msg;

/* Receives that arrived with another size than the schedule expects. */
typedef struct {
    int n, from;
    long long got, want; /* got -1: longer than expected (truncated) */
} agx_mismatch;

/* Requests posted and not yet completed, with their messages. */
typedef struct {
    MPI_Request *req;
    agx_msg *msg;
    int n, cap;
} agx_reqs;

int agx_reqs_grow(agx_reqs *v, int more);
void agx_reqs_free(agx_reqs *v);
/* Release a message's datatype, if it made one. */
void agx_msg_release(agx_msg *m);
/* Post op's message(s), appended to v: started now and counted (AGX_POST_NOW), or made
 * persistent requests (MPI_Send_init & co.; AGX_POST_PERSISTENT), not started and not
 * counted, or only built (AGX_POST_LATER: the request MPI_REQUEST_NULL, a plan posts it). */
enum { AGX_POST_NOW = 0, AGX_POST_PERSISTENT = 1, AGX_POST_LATER = 2 };
int agx_post(const agx_exec *x, const agx_sched *s, const agx_sop *op, agx_reqs *v, int mode);
/* Whether a receive arrived with the size its schedule expects (see message.c). */
int agx_arrived(int err, const agx_msg *m, MPI_Status *st, agx_mismatch *bad);
/* A round's local copy or reduction (engine.c). */
int agx_local_op(const agx_exec *x, const agx_sched *s, const agx_sop *op);
/* The error of a schedule whose receives did not all arrive with their sizes. */
int agx_mismatch_error(const agx_mismatch *bad);

#endif
