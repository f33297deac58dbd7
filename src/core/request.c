/*
 * Requests: agx's persistent and non-blocking collectives (docs/algorithms.md "Requests").
 * A request runs either a plan (an agx schedule made persistent, plan.c) or the MPI
 * library's own non-blocking call (a start posts it). Life cycle: made inactive (init)
 * -> started (active; on the process's active list) -> complete (off the list, its code
 * kept) -> reported by agx_wait / agx_test (a persistent request inactive again, a
 * non-blocking one freed).
 *
 * Progress rule: every agx_test / agx_wait, every start, and every blocking agx call that
 * runs a schedule (the engine's waits) advances every active request of the process by as
 * many rounds as have completed; nothing blocks on one request's round, so requests
 * complete in any order on every rank. With AGX_PROGRESS_THREAD=1 and
 * MPI_THREAD_MULTIPLE a background thread does the same while the program computes. One
 * mutex guards the list and every request's progress.
 */
#define _GNU_SOURCE /* PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP */
#include "request.h"

#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

pthread_mutex_t agx_req_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
pthread_cond_t agx_req_cond = PTHREAD_COND_INITIALIZER;
static agx_req *all;
static atomic_int nactive;
static pthread_t thread;
static int thread_on, thread_stop, thread_asked;
static int thread_idle;    /* the thread waits for a start */
static atomic_uint driven; /* progress calls made by the program's threads (progress_main) */
#define BACKOFF_NS 100000  /* how long the thread steps aside for them */

/* Post the plan's round 0, or queue the request's collectives (request_lib.c posts its
 * agreement and the library's call in call order; a gated plan posts round 0 when its
 * agreement completes). */
static int begin(agx_req *r)
{
    if (r->plan && !r->gate_post)
        return agx_plan_start(r->plan);
    agx_lib_enqueue(r);
    return MPI_SUCCESS;
}

int agx_req_gate_open(agx_req *r, int block, int *pending)
{
    int flag = 1, rc = block ? PMPI_Wait(&r->gate, MPI_STATUS_IGNORE) : PMPI_Test(&r->gate, &flag, MPI_STATUS_IGNORE);
    *pending = rc == MPI_SUCCESS && !flag;
    if (*pending)
        return MPI_SUCCESS;
    r->gate = MPI_REQUEST_NULL;
    if (rc == MPI_SUCCESS && r->gate_any != MPI_SUCCESS)
        return agx_error(r->gate_any, "%s: another rank could not make its request (error class %d there), so "
                         "no rank runs it", r->fn, r->gate_any);
    return rc;
}

void agx_req_finish(agx_req *r, int rc)
{
    r->rc = rc;
    r->state = AGX_REQ_COMPLETE;
    atomic_fetch_sub(&nactive, 1);
    agx_req_mpi_completed(r); /* handed to MPI: its handle completes too */
}

/* Advance r (agx_req_lock held), or (block) complete it; 1 when it completed now. */
static int step(agx_req *r, int block)
{
    int done = 0, rc = MPI_SUCCESS, pending = 0;
    while (r->queued) { /* its collectives wait for the requests before it, or its agreement */
        agx_lib_pump(r->ctx);
        if (r->state != AGX_REQ_ACTIVE)
            return 1; /* completed there: its agreement failed */
        if (!block && r->queued)
            return 0;
    }
    if (r->plan && r->gate != MPI_REQUEST_NULL) { /* round 0 once every rank made the request */
        rc = agx_req_gate_open(r, block, &pending);
        if (pending)
            return 0;
        if (rc == MPI_SUCCESS)
            rc = agx_plan_start(r->plan);
        done = rc != MPI_SUCCESS;
    }
    if (done)
        ;
    else if (r->plan)
        rc = agx_plan_step(r->plan, block, &done);
    else {
        MPI_Status st;
        rc = block ? PMPI_Wait(&r->lib, &st) : PMPI_Test(&r->lib, &done, &st);
        done = done || block;
        done = done || rc != MPI_SUCCESS;
    }
    if (done)
        agx_req_finish(r, rc);
    return done;
}

static void progress_locked(void)
{
    for (agx_req *r = all; r && atomic_load(&nactive) > 0; r = r->next)
        if (r->state == AGX_REQ_ACTIVE)
            step(r, 0);
}

int agx_req_progress(void)
{
    if (atomic_load(&nactive) == 0)
        return 0;
    atomic_fetch_add(&driven, 1);
    pthread_mutex_lock(&agx_req_lock); /* blocking: the thread that holds it advances them */
    progress_locked();
    pthread_mutex_unlock(&agx_req_lock);
    return atomic_load(&nactive);
}

int agx_req_any_active(void) { return atomic_load(&nactive) > 0; }

/* The thread polls while requests are active and nobody else does; while a program
 * thread drives them (agx_test / agx_wait, agx_progress: the preload's MPI_Test & co.) it
 * steps aside for BACKOFF_NS at a time, so that the two do not take turns at agx's lock
 * and the cores (2026-11-24, 2 ranks on 2 cores, Open MPI, an 8 B persistent allgather
 * started and waited on: 3.37 us median per start with the thread polling beside the
 * wait, 0.31-0.32 with it stepping aside, 0.32-0.33 without a thread). */
static void *progress_main(void *arg)
{
    (void)arg;
    unsigned seen = atomic_load(&driven);
    pthread_mutex_lock(&agx_req_lock);
    while (!thread_stop) {
        if (atomic_load(&nactive) == 0) {
            thread_idle = 1;
            pthread_cond_wait(&agx_req_cond, &agx_req_lock);
            thread_idle = 0;
            continue;
        }
        unsigned now = atomic_load(&driven);
        if (now != seen) { /* the program drives them: step aside a while */
            seen = now;
            struct timespec until;
            clock_gettime(CLOCK_REALTIME, &until);
            until.tv_nsec += BACKOFF_NS;
            if (until.tv_nsec >= 1000000000L)
                until.tv_sec++, until.tv_nsec -= 1000000000L;
            pthread_cond_timedwait(&agx_req_cond, &agx_req_lock, &until);
            continue;
        }
        progress_locked();
        pthread_mutex_unlock(&agx_req_lock);
        sched_yield(); /* let the program's own calls take the lock */
        pthread_mutex_lock(&agx_req_lock);
    }
    pthread_mutex_unlock(&agx_req_lock);
    return NULL;
}

/* A start or a hand-over: wake the thread if it waits for one (lock held). */
void agx_req_wake(void)
{
    if (thread_on && thread_idle)
        pthread_cond_broadcast(&agx_req_cond);
}

static void thread_finalize(void)
{
    pthread_mutex_lock(&agx_req_lock);
    int on = thread_on;
    thread_stop = 1;
    pthread_cond_broadcast(&agx_req_cond);
    pthread_mutex_unlock(&agx_req_lock);
    if (on)
        pthread_join(thread, NULL);
    thread_on = thread_asked = thread_stop = 0;
    agx_req_sweep();
}

/* AGX_PROGRESS_THREAD=1: the background thread, once per process (agx_req_lock held). */
static void thread_maybe_start(void)
{
    if (thread_asked)
        return;
    thread_asked = 1;
    if (!agx_env_flag("AGX_PROGRESS_THREAD"))
        return;
    int level = MPI_THREAD_SINGLE;
    MPI_Query_thread(&level);
    if (level != MPI_THREAD_MULTIPLE) {
        fprintf(stderr, "agx: AGX_PROGRESS_THREAD=1 needs MPI_THREAD_MULTIPLE (MPI_Init_thread); requests "
                "progress in agx's calls only\n");
        return;
    }
    if (pthread_create(&thread, NULL, progress_main, NULL) == 0) {
        thread_on = 1;
        agx_at_finalize(thread_finalize);
    } else
        fprintf(stderr, "agx: AGX_PROGRESS_THREAD=1: no thread could be started; requests progress in agx's "
                "calls only\n");
}

/* Free the requests MPI reported (request_mpi.c's generalized requests), outside MPI's
 * calls. */
void agx_req_sweep(void)
{
    pthread_mutex_lock(&agx_req_lock);
    agx_req *r = all, *next;
    for (; r; r = next) {
        next = r->next;
        if (atomic_load(&r->dead)) {
            r->state = AGX_REQ_INACTIVE; /* complete, and reported by MPI */
            agx_req_free(r);
        }
    }
    pthread_mutex_unlock(&agx_req_lock);
}

int agx_progress_thread_on(void)
{
    pthread_mutex_lock(&agx_req_lock);
    thread_maybe_start();
    pthread_mutex_unlock(&agx_req_lock);
    return thread_on;
}

int agx_req_new(agx_ctx *ctx, MPI_Comm user, const char *fn, int persistent, agx_req **out)
{
    agx_req_sweep();
    agx_req *r = calloc(1, sizeof *r);
    *out = NULL;
    if (!r)
        return agx_error(MPI_ERR_NO_MEM, "%s: out of memory for a request", fn);
    *r = (agx_req){.ctx = ctx, .user = user, .fn = fn, .persistent = persistent, .lib = MPI_REQUEST_NULL,
                   .greq = MPI_REQUEST_NULL, .relay = {MPI_REQUEST_NULL, -1}, .gate = MPI_REQUEST_NULL};
    pthread_mutex_lock(&agx_req_lock);
    thread_maybe_start();
    /* while the thread runs, a persistent request gets its MPI handle now (it may be
     * handed to MPI, agx_req_to_mpi): a failure here is the init's, agreed with the rest */
    int rc = persistent && thread_on ? agx_relay_make(&r->relay) : MPI_SUCCESS;
    if (rc != MPI_SUCCESS) {
        pthread_mutex_unlock(&agx_req_lock);
        free(r);
        return rc;
    }
    r->next = all;
    if (all)
        all->prev = r;
    all = r;
    pthread_mutex_unlock(&agx_req_lock);
    *out = r;
    return MPI_SUCCESS;
}

void agx_req_set_plan(agx_req *r, agx_plan *p) { r->plan = p; }

int agx_req_gate(agx_req *r, MPI_Comm comm)
{
    (void)comm; /* the context's pcomm, where request_lib.c posts it in call order */
    r->gate_mine = MPI_SUCCESS;
    r->gate_post = 1;
    return MPI_SUCCESS;
}

int agx_req_gate_failed(agx_ctx *ctx, MPI_Comm comm, int rc)
{
    int mine = MPI_ERR_OTHER, any, flag = 0;
    MPI_Error_class(rc, &mine);
    MPI_Request g;
    agx_req_flush(ctx); /* the earlier requests' collectives first, as on the other ranks */
    if (PMPI_Iallreduce(&mine, &any, 1, MPI_INT, MPI_MAX, comm, &g) != MPI_SUCCESS)
        return rc;
    while (PMPI_Test(&g, &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS && !flag)
        agx_req_progress(); /* the others may need this rank's rounds before they reach the gate */
    return rc;
}

void agx_req_set_lib(agx_req *r, agx_lib_start_fn start, void *arg)
{
    r->lib_start = start;
    r->lib_arg = arg;
}

int agx_req_tag(agx_ctx *ctx)
{
    static int first, span; /* the same on every process: MPI_TAG_UB is the library's */
    if (!span) {
        int *ub = NULL, flag = 0;
        PMPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
        long long top = flag && ub ? *ub : 32767;
        first = top >= 65536 + (1 << 20) ? 65536 : 1024;
        span = first == 65536 ? (int)(top - 65536 + 1 < (1 << 30) ? top - 65536 + 1 : 1 << 30) : 8192;
    }
    return first + (int)(ctx->req_seq++ % (unsigned)span);
}

MPI_Comm agx_req_comm(const agx_req *r) { return r->ctx ? r->user : MPI_COMM_SELF; }

int agx_req_persistent(const agx_req *r) { return r->persistent; }

int agx_req_start(agx_req *r)
{
    int rc;
    pthread_mutex_lock(&agx_req_lock);
    if (!r->ctx)
        rc = agx_error(MPI_ERR_REQUEST, "agx_start: the communicator of this %s request was freed", r->fn);
    else if (r->state != AGX_REQ_INACTIVE)
        rc = agx_error(MPI_ERR_REQUEST, "agx_start: this %s request is active (started and not yet completed by "
                       "agx_wait or agx_test)", r->fn);
    else if ((rc = agx_req_mpi_started(r)) == MPI_SUCCESS) {
        rc = begin(r);
        if (rc == MPI_SUCCESS) { /* round 0 is posted; it advances at the next agx call */
            r->state = AGX_REQ_ACTIVE;
            atomic_fetch_add(&nactive, 1);
            if (r->queued) /* its agreement posted now if nothing is before it */
                agx_lib_pump(r->ctx);
            agx_req_wake();
        } else if (r->handed) /* its MPI handle was started: it completes, failed */
            agx_relay_fire(&r->relay, 1);
    }
    pthread_mutex_unlock(&agx_req_lock);
    return rc;
}

/* r complete: its code; the request inactive again (agx_req_lock held). */
static int report(agx_req *r)
{
    r->state = AGX_REQ_INACTIVE;
    return r->rc;
}

int agx_req_test(agx_req *r, int *flag)
{
    int rc = MPI_SUCCESS;
    pthread_mutex_lock(&agx_req_lock);
    if (r->state == AGX_REQ_ACTIVE) {
        atomic_fetch_add(&driven, 1);
        progress_locked();
    }
    *flag = r->state != AGX_REQ_ACTIVE; /* an inactive request tests complete, as in MPI */
    if (r->state == AGX_REQ_COMPLETE)
        rc = report(r);
    pthread_mutex_unlock(&agx_req_lock);
    return rc;
}

int agx_req_wait(agx_req *r)
{
    int flag = 0, rc;
    /* the only active request and no thread: nothing else needs this process's progress
     * while it waits, so it blocks in MPI for each round instead of polling */
    pthread_mutex_lock(&agx_req_lock);
    if (!thread_on && r->state == AGX_REQ_ACTIVE && atomic_load(&nactive) == 1) {
        step(r, 1);
        rc = report(r);
        pthread_mutex_unlock(&agx_req_lock);
        return rc;
    }
    pthread_mutex_unlock(&agx_req_lock);
    while ((rc = agx_req_test(r, &flag)) == MPI_SUCCESS && !flag)
        ; /* no sched_yield: the thread steps aside while this drives (0.31 us per 8 B start
           * against 1.00 with a yield per test, 2 ranks, Open MPI, 2026-11-24) */
    return rc;
}

int agx_req_free(agx_req *r)
{
    pthread_mutex_lock(&agx_req_lock);
    if (r->state != AGX_REQ_INACTIVE) { /* complete but not yet reported is still active */
        pthread_mutex_unlock(&agx_req_lock);
        return agx_error(MPI_ERR_REQUEST, "agx_request_free: this %s request is active: complete it with "
                         "agx_wait or agx_test first", r->fn);
    }
    if (r->prev)
        r->prev->next = r->next;
    else
        all = r->next;
    if (r->next)
        r->next->prev = r->prev;
    pthread_mutex_unlock(&agx_req_lock);
    agx_plan_free(r->plan);
    agx_relay_free(&r->relay);
    if (r->lib != MPI_REQUEST_NULL)
        PMPI_Request_free(&r->lib);
    free(r->lib_arg);
    free(r);
    return MPI_SUCCESS;
}

void agx_req_flush(agx_ctx *ctx)
{
    if (!ctx || !__atomic_load_n(&ctx->lq_head, __ATOMIC_ACQUIRE))
        return;
    pthread_mutex_lock(&agx_req_lock);
    agx_lib_pump(ctx);
    while (ctx->lq_head) { /* an agreement runs: advance everything meanwhile */
        atomic_fetch_add(&driven, 1);
        progress_locked();
        if (ctx->lq_head) {
            pthread_mutex_unlock(&agx_req_lock);
            sched_yield();
            pthread_mutex_lock(&agx_req_lock);
        }
    }
    pthread_mutex_unlock(&agx_req_lock);
}

int agx_req_orphan(agx_ctx *ctx)
{
    int n = 0;
    agx_req_flush(ctx); /* the queued collectives posted while pcomm lives */
    pthread_mutex_lock(&agx_req_lock);
    for (agx_req *r = all; r; r = r->next)
        if (r->ctx == ctx)
            r->ctx = NULL, n++; /* its plan owns what it uses; MPI keeps the communicator for its requests */
    pthread_mutex_unlock(&agx_req_lock);
    return n;
}
