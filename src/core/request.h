/*
 * A request's insides, shared by src/core/request.c (its life cycle and progress) and
 * src/core/request_mpi.c (handing it to the program as an MPI request). Private to
 * src/core.
 */
#ifndef AGX_CORE_REQUEST_H
#define AGX_CORE_REQUEST_H

#include "core.h"

#include <pthread.h>
#include <stdatomic.h>

/* A persistent request's MPI handle (request_mpi.c): a persistent zero-byte receive from
 * this process, in slot `slot` of the private communicators' tags (-1: none). */
typedef struct {
    MPI_Request req;
    int slot;
} agx_relay;

struct agx_req {
    agx_ctx *ctx;             /* NULL once its communicator was freed */
    MPI_Comm user;            /* errors are raised on it (while ctx is not NULL) */
    const char *fn;           /* the call that made it */
    int persistent;
    int state;                /* AGX_REQ_* */
    int rc;                   /* the completed start's code */
    agx_plan *plan;           /* agx's schedule; NULL: the library's own call */
    agx_lib_start_fn lib_start;
    void *lib_arg;            /* freed with the request */
    MPI_Request lib;          /* the library's request of this start */
    MPI_Request greq;         /* non-blocking, handed to MPI: the generalized request completed with it */
    agx_relay relay;          /* persistent, made while the progress thread runs: its MPI handle */
    int handed;               /* persistent and handed to MPI: each completion fires the relay */
    int relay_nb;             /* non-blocking, handed to MPI as a receive its completion fires */
    MPI_Request gate;         /* agx_req_gate's reduction, until it completes */
    int gate_post;            /* the reduction is still to be posted (queued) */
    int gate_mine, gate_any;  /* its input (0) and result (the largest error class) */
    atomic_int dead;          /* MPI reported greq: free at the next sweep (set without the lock) */
    int queued;               /* started, in ctx's queue: its library call not yet posted */
    struct agx_req *lq_next;  /* the next in that queue */
    struct agx_req *prev, *next; /* every request (orphaned at MPI_Comm_free) */
};
enum { AGX_REQ_INACTIVE, AGX_REQ_ACTIVE, AGX_REQ_COMPLETE };

/* request.c's lock (recursive: the sweep frees requests under it with agx_req_free, which
 * takes it) and the progress thread's wake-up. Order: agx's lock before the MPI
 * library's (MPICH's global one), never the other way: nothing takes it inside an MPI
 * call (greq_free). */
extern pthread_mutex_t agx_req_lock;
extern pthread_cond_t agx_req_cond;
void agx_req_sweep(void);         /* free the requests MPI reported */
void agx_req_wake(void);          /* a start: wake the progress thread if it waits for one */

/* request.c (lock held): r's start completed with rc (off the active list; its MPI handle,
 * if any, completes too); r's agreement: its code once it completed (*pending while not). */
void agx_req_finish(agx_req *r, int rc);
int agx_req_gate_open(agx_req *r, int block, int *pending);

/* request_lib.c (lock held): the context's queue of collectives on its pcomm (its
 * requests' agreements and library calls, in call order). enqueue: r started (the caller
 * then pumps); pump: post what can be posted without waiting. */
void agx_lib_enqueue(agx_req *r);
void agx_lib_pump(agx_ctx *ctx);

/* request_mpi.c (lock held): the relay of a new persistent request; its message (failed:
 * one byte, which the zero-byte receive reports as MPI_ERR_TRUNCATE); what a start and a
 * completion owe the MPI handle; the relay's end */
int agx_relay_make(agx_relay *rl);
int agx_relay_fire(agx_relay *rl, int failed);
int agx_req_mpi_started(agx_req *r);
void agx_req_mpi_completed(agx_req *r);
void agx_relay_free(agx_relay *rl);

#endif
