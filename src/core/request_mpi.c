/*
 * agx requests handed to the program as MPI requests (agx_request_mpi; the preload's
 * MPI_Iallgather, MPI_Allgather_init & co.), so that MPI_Wait, MPI_Test, MPI_Waitall & co.
 * complete them among the program's other requests. Both need the progress thread: MPI's
 * completion calls do not advance agx's rounds.
 *
 * A non-blocking request becomes a generalized request (MPI_Grequest_start), completed
 * when the agx request completes and freed with it when MPI reports it.
 *
 * A persistent request needs a relay. MPI has no way to make a
 * persistent request of a library's own (a generalized request cannot be started), so
 * the handle is a real one: a persistent zero-byte receive from this process on a private
 * communicator (a dup of MPI_COMM_SELF), with a tag no other live relay has. Each start
 * posts it; the agx request's completion sends it its message. MPI_Wait, MPI_Test,
 * MPI_Waitall & co. then complete it among the program's other requests and leave it
 * inactive, exactly as MPI's own persistent requests, with no completion call
 * intercepted. A failed start sends one byte instead, so the program's completion call
 * returns MPI_ERR_TRUNCATE (the private communicator's handler returns it).
 *
 * Tags: MPI_TAG_UB of them per communicator (at least 32767); a further communicator
 * when every tag is taken. Everything here is local to the process (MPI_COMM_SELF).
 * Callers hold request.c's lock.
 */
#include "request.h"

#include <stdlib.h>

static MPI_Comm *comms; /* comms[i]: slots [i * per, (i + 1) * per) */
static int ncomms, per, top; /* top: slots ever used (the high-water mark) */
static int *freed, nfreed;    /* released slots, reused first */

static void relay_finalize(void)
{
    for (int i = 0; i < ncomms; i++)
        PMPI_Comm_free(&comms[i]);
    free(comms);
    free(freed);
    comms = NULL;
    freed = NULL;
    ncomms = per = top = nfreed = 0;
}

/* A free slot: *comm and *tag of it. */
static int slot_take(int *slot)
{
    if (!per) {
        int *ub = NULL, flag = 0;
        PMPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
        per = flag && ub && *ub > 0 ? *ub : 32767;
        agx_at_finalize(relay_finalize);
    }
    if (nfreed > 0) {
        *slot = freed[--nfreed];
        return MPI_SUCCESS;
    }
    if (top / per >= ncomms) { /* every tag of every relay communicator taken: one more */
        MPI_Comm *c = realloc(comms, sizeof *c * (size_t)(ncomms + 1));
        if (!c)
            return agx_error(MPI_ERR_NO_MEM, "agx: out of memory for a persistent request's MPI handle");
        comms = c;
        int rc = PMPI_Comm_dup(MPI_COMM_SELF, &comms[ncomms]);
        if (rc != MPI_SUCCESS)
            return rc;
        PMPI_Comm_set_errhandler(comms[ncomms], MPI_ERRORS_RETURN);
        ncomms++;
    }
    *slot = top++;
    return MPI_SUCCESS;
}

static void slot_release(int slot)
{
    int *f = realloc(freed, sizeof *f * (size_t)(nfreed + 1));
    if (!f)
        return; /* the slot stays taken: one tag fewer, nothing wrong */
    freed = f;
    freed[nfreed++] = slot;
}

int agx_relay_make(agx_relay *rl)
{
    *rl = (agx_relay){.req = MPI_REQUEST_NULL, .slot = -1};
    int rc = slot_take(&rl->slot);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = PMPI_Recv_init(NULL, 0, MPI_BYTE, 0, rl->slot % per, comms[rl->slot / per], &rl->req);
    if (rc != MPI_SUCCESS) {
        slot_release(rl->slot);
        *rl = (agx_relay){.req = MPI_REQUEST_NULL, .slot = -1};
    }
    return rc;
}

#ifdef MPICH
/* MPICH 4.0.2: a thread blocked in MPI_Wait on a receive from itself on a duplicate of
 * MPI_COMM_SELF is not woken by another thread's send that completes it (measured: a
 * zero-byte MPI_Send from a second thread, the waiter still waiting seconds later, where
 * MPI_Test polling sees it at once); completing a generalized request wakes it. */
static int poke_query(void *e, MPI_Status *st)
{
    (void)e;
    MPI_Status_set_elements(st, MPI_BYTE, 0);
    MPI_Status_set_cancelled(st, 0);
    return MPI_SUCCESS;
}
static int poke_free(void *e) { return (void)e, MPI_SUCCESS; }
static int poke_cancel(void *e, int c) { return (void)e, (void)c, MPI_SUCCESS; }

static void wake_waiters(void)
{
    MPI_Request g;
    if (MPI_Grequest_start(poke_query, poke_free, poke_cancel, NULL, &g) == MPI_SUCCESS) {
        MPI_Grequest_complete(g);
        PMPI_Request_free(&g);
    }
}
#else
static void wake_waiters(void) {}
#endif

int agx_relay_fire(agx_relay *rl, int failed)
{
    static char byte;
    int rc = PMPI_Send(&byte, failed ? 1 : 0, MPI_BYTE, 0, rl->slot % per, comms[rl->slot / per]);
    wake_waiters();
    return rc;
}

void agx_relay_free(agx_relay *rl)
{
    if (rl->slot < 0)
        return;
    if (rl->req != MPI_REQUEST_NULL)
        PMPI_Request_free(&rl->req);
    slot_release(rl->slot);
    rl->slot = -1;
}

int agx_req_mpi_started(agx_req *r) { return r->handed ? PMPI_Start(&r->relay.req) : MPI_SUCCESS; }

void agx_req_mpi_completed(agx_req *r)
{
    if (r->greq != MPI_REQUEST_NULL)
        MPI_Grequest_complete(r->greq);
    if (r->relay_nb) { /* a non-blocking one handed as a receive (MPICH): its message, then gone */
        if (r->rc != MPI_SUCCESS)
            agx_raise(agx_req_comm(r), r->rc);
        agx_relay_fire(&r->relay, r->rc != MPI_SUCCESS);
        atomic_store(&r->dead, 1); /* the program's completion call owns the receive; agx's part ends */
        return;
    }
    if (!r->handed)
        return;
    r->state = AGX_REQ_INACTIVE; /* MPI reports it: startable again */
    if (r->rc != MPI_SUCCESS)    /* the handler of the request's communicator, once */
        agx_raise(agx_req_comm(r), r->rc);
    agx_relay_fire(&r->relay, r->rc != MPI_SUCCESS);
}

#ifndef MPICH
/* The generalized request's callbacks: its status carries the request's own code in
 * MPI_ERROR (MPI leaves that field to the query function, and MPICH 4.0.2 reads it in
 * MPI_Waitall / MPI_Testsome: unset, it reported "see the MPI_ERROR field" with no
 * error), no elements and not cancelled, as MPI's collectives report; freeing it
 * (MPI_Wait & co. completed it) frees the agx request. */
static int greq_query(void *extra, MPI_Status *st)
{
    agx_req *r = extra;
    MPI_Status_set_elements(st, MPI_BYTE, 0);
    MPI_Status_set_cancelled(st, 0);
    st->MPI_SOURCE = MPI_UNDEFINED;
    st->MPI_TAG = MPI_UNDEFINED;
    st->MPI_ERROR = r->rc;
    return r->rc;
}

/* MPI reported it: the request is freed at the next sweep, not here (inside MPI_Wait &
 * co.: MPICH asserts on MPI_Request_free of the plan's requests from the callback). No
 * lock: MPICH may hold its own lock here, and the progress thread takes agx's before
 * MPICH's (the opposite order would deadlock). */
static int greq_free(void *extra)
{
    agx_req *r = extra;
    atomic_store(&r->dead, 1);
    return MPI_SUCCESS;
}

static int greq_cancel(void *extra, int complete)
{
    (void)extra;
    (void)complete;
    return MPI_SUCCESS; /* a collective cannot be cancelled: MPI_Cancel has no effect */
}
#endif

/* A persistent request: its relay is the handle; from now on each start posts it and
 * each completion fires it, and the request is inactive again at once (MPI reports it). */
static int persistent_to_mpi(agx_req *r, MPI_Request *out)
{
    if (r->relay.slot < 0)
        return agx_error(MPI_ERR_REQUEST, "agx_request_mpi: this %s request was made while agx's progress thread "
                         "was not running (AGX_PROGRESS_THREAD=1 and MPI_THREAD_MULTIPLE)", r->fn);
    if (r->state != AGX_REQ_INACTIVE || r->handed)
        return agx_error(MPI_ERR_REQUEST, "agx_request_mpi: a persistent %s request is handed to MPI once, "
                         "before its first start", r->fn);
    r->handed = 1;
    *out = r->relay.req;
    return MPI_SUCCESS;
}

#ifdef MPICH
/* MPICH 4.0.2's MPI_Waitall asserts on a generalized request that is not complete when the
 * array also holds MPI_REQUEST_NULL ("generalized requests should already be finished",
 * src/mpi/request/request_impl.c), and its MPI_Testsome mishandles them: under MPICH a
 * non-blocking request is handed as a receive from this process on a relay communicator,
 * which its completion fires (the class of a failure is lost: MPI_ERR_TRUNCATE). */
static int nonblocking_to_mpi(agx_req *r, MPI_Request *out)
{
    int rc = agx_relay_make(&r->relay);
    if (rc != MPI_SUCCESS)
        return rc;
    PMPI_Request_free(&r->relay.req); /* the persistent one: this handle is a plain receive */
    rc = PMPI_Irecv(NULL, 0, MPI_BYTE, 0, r->relay.slot % per, comms[r->relay.slot / per], out);
    if (rc != MPI_SUCCESS) {
        agx_relay_free(&r->relay);
        return rc;
    }
    r->relay_nb = 1;
    if (r->state == AGX_REQ_COMPLETE) /* completed before it was handed: fired now */
        agx_req_mpi_completed(r);
    else {
        agx_req_wake();
    }
    return MPI_SUCCESS;
}
#endif

int agx_req_to_mpi(agx_req *r, MPI_Request *out)
{
    if (!agx_progress_thread_on())
        return agx_error(MPI_ERR_OTHER, "agx_request_mpi: needs agx's progress thread (AGX_PROGRESS_THREAD=1 "
                         "and MPI_THREAD_MULTIPLE): MPI would wait on a request nothing advances");
    pthread_mutex_lock(&agx_req_lock);
    if (r->persistent) {
        int rc = persistent_to_mpi(r, out);
        pthread_mutex_unlock(&agx_req_lock);
        return rc;
    }
#ifdef MPICH
    int rc = nonblocking_to_mpi(r, out);
#else
    int rc = MPI_Grequest_start(greq_query, greq_free, greq_cancel, r, &r->greq);
    if (rc == MPI_SUCCESS) {
        *out = r->greq;
        if (r->state == AGX_REQ_COMPLETE)
            MPI_Grequest_complete(r->greq);
        else
            agx_req_wake();
    }
#endif
    pthread_mutex_unlock(&agx_req_lock);
    return rc;
}

