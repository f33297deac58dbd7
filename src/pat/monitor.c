/*
 * The PAT monitor (Proficz21, Section 3 and Listing 1): one background pthread per
 * session, a session per communicator (agx_pat_init(comm); kept in the communicator's
 * agx context, so two communicators can each have one).
 *
 * The thread never busy-waits: it polls with MPI_Test / MPI_Improbe and sleeps between
 * polls, 10 us doubling up to AGX_PAT_POLL_US (default 50 us; 0: only sched_yield, for
 * nodes with a core to spare), and only yields once the foreground waits for it, so
 * oversubscribed cores stay available to the computation.
 *
 * Shutdown: agx_pat_finalize(comm), freeing the communicator, or MPI_Finalize (through
 * the context's MPI_COMM_SELF hook). An epoch left open (a compute phase not followed by
 * its collective) is cancelled: the prediction is still contributed, so the exchange
 * completes everywhere, and the background receives are abandoned. No data message is
 * ever sent in the background before its receiver has reached the collective, so
 * cancelling leaves none in flight.
 */
#include "pat.h"

#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static agx_pat *sessions;     /* every session of this process (main thread only) */

/* SimGrid SMPI runs processes as threads of one simulator: a session there never starts
 * its own thread, and bdr / bslb plan from agx_pat_predict. */
#ifdef AGX_SMPI
#define AGX_PAT_NO_THREADS 1
#else
#define AGX_PAT_NO_THREADS 0
#endif

agx_pat *agx_pat_sessions(void) { return sessions; }

void agx_pat_backoff(agx_pat *s, int *us)
{
    if (atomic_load(&s->fg_waiting) || s->poll_us <= 0) {
        sched_yield();
        return;
    }
    struct timespec ts = {0, (long)*us * 1000};
    nanosleep(&ts, NULL);
    *us = *us * 2 > s->poll_us ? s->poll_us : *us * 2;
}

int agx_pat_wait_req(agx_pat *s, MPI_Request *req)
{
    int done = 0, us = 10, rc;
    while ((rc = PMPI_Test(req, &done, MPI_STATUS_IGNORE)) == MPI_SUCCESS && !done)
        agx_pat_backoff(s, &us);
    return rc;
}

int agx_pat_probe_recv(agx_pat *s, int src, int tag, agx_pat_dst_fn dst_of, void *arg, char **buf,
                       long long *len, int *cancelled)
{
    int flag = 0, us = 10, rc, n;
    MPI_Message msg;
    MPI_Status st;
    *cancelled = 0;
    *buf = NULL;
    for (;;) {
        if ((rc = MPI_Improbe(src, tag, s->data, &flag, &msg, &st)) != MPI_SUCCESS)
            return rc;
        if (flag)
            break;
        if (atomic_load(&s->cancel)) {
            *cancelled = 1;
            return MPI_SUCCESS;
        }
        agx_pat_backoff(s, &us);
    }
    MPI_Get_count(&st, MPI_BYTE, &n);
    *len = n;
    char *dst = dst_of ? dst_of(s, n, arg) : NULL;
    if (!dst) {
        *buf = malloc(n > 0 ? (size_t)n : 1);
        if (!*buf) {
            char sink;
            MPI_Mrecv(&sink, 0, MPI_BYTE, &msg, MPI_STATUS_IGNORE); /* frees the message */
            return MPI_ERR_NO_MEM;
        }
        dst = *buf;
    }
    return MPI_Mrecv(dst, n, MPI_BYTE, &msg, MPI_STATUS_IGNORE);
}

static void *monitor(void *arg)
{
    agx_pat *s = arg;
    pthread_mutex_lock(&s->mu);
    for (;;) {
        while (s->bg != AGX_BG_POSTED && !atomic_load(&s->stop))
            pthread_cond_wait(&s->cv, &s->mu);
        if (s->bg != AGX_BG_POSTED)
            break; /* stop, nothing posted */
        s->bg = AGX_BG_RUNNING;
        const struct agx_pat_alg *alg = s->alg;
        pthread_mutex_unlock(&s->mu);
        int rc = agx_pat_epoch_work(s, alg);
        if (rc != MPI_SUCCESS) {
            char msg[MPI_MAX_ERROR_STRING];
            int len;
            MPI_Error_string(rc, msg, &len);
            fprintf(stderr, "agx: PAT monitor on rank %d: %s; the collective will run without "
                    "its background part\n", s->rank, msg);
        }
        pthread_mutex_lock(&s->mu);
        s->bg = AGX_BG_DONE;
        pthread_cond_broadcast(&s->cv);
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

const char *agx_pat_violation(const agx_args *a, int *told)
{
    agx_pat *s = agx_ctx_slot(a->ctx, AGX_SLOT_PAT);
    if (!s)
        return "needs the PAT monitor: call agx_pat_init(comm) first";
    const agx_blocks *b = &a->u.ag.blk;
    if ((long long)b->ucount * b->type_size > INT_MAX) /* alike on every rank of a valid call */
        return "a block over 2 GiB: the background half moves a block as one count of bytes";
    *told = 1; /* agx_pat_init said why the monitor does not run */
    if (s->threaded)
        return NULL;
    /* without the thread only an epoch planned by agx_pat_predict for this block size
     * (the same verdict on every rank of a valid call) */
    if (s->open && s->state && (long long)b->ucount * b->type_size == s->pred_blk)
        return NULL;
    return s->why;
}

static void session_free(agx_pat *s)
{
    if (s->enabled) {
        if (s->in_compute)
            agx_pat_end_compute(s);
        agx_pat_epoch_cancel(s);
    }
    if (s->threaded) {
        pthread_mutex_lock(&s->mu);
        atomic_store(&s->stop, 1);
        pthread_cond_broadcast(&s->cv);
        pthread_mutex_unlock(&s->mu);
        pthread_join(s->thr, NULL);
    }
    for (agx_pat **pp = &sessions; *pp; pp = &(*pp)->next)
        if (*pp == s) {
            *pp = s->next;
            break;
        }
    if (s->mon != MPI_COMM_NULL)
        MPI_Comm_free(&s->mon);
    if (s->data != MPI_COMM_NULL)
        MPI_Comm_free(&s->data);
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cv);
    free(s->all), free(s->stage), free(s->stage_len), free(s->bg_req), free(s->bg_seg);
    free(s);
}

static void session_slot_free(void *p) { session_free(p); }

/* Allocation, private communicators, clock, thread; the session is usable on success. */
static int session_start(agx_pat *s, MPI_Comm comm, int threaded)
{
    int *ub, flag, rc;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
    s->tag_span = (flag ? *ub : 32767) - AGX_PAT_TAG_SEG0;
    s->all = malloc(sizeof(double) * 3 * (size_t)s->p);
    s->stage = calloc((size_t)s->p, sizeof(char *));
    s->stage_len = calloc((size_t)s->p, sizeof(long long));
    s->bg_req = malloc(sizeof(MPI_Request) * (size_t)s->p);
    s->bg_seg = malloc(sizeof(int) * (size_t)s->p);
    int nomem = !s->all || !s->stage || !s->stage_len || !s->bg_req || !s->bg_seg, any;
    /* agreed, and so is the thread: every rank plans the same way */
    int in[2] = {nomem, !threaded}, out[2];
    if ((rc = PMPI_Allreduce(in, out, 2, MPI_INT, MPI_MAX, comm)) != MPI_SUCCESS)
        return rc;
    if ((any = out[0]))
        return agx_error(MPI_ERR_NO_MEM, "agx_pat_init: out of memory%s", nomem ? "" : " on another rank");
    threaded = !out[1];
    if ((rc = MPI_Comm_dup(comm, &s->mon)) != MPI_SUCCESS || (rc = MPI_Comm_dup(comm, &s->data)) != MPI_SUCCESS ||
        (rc = agx_pat_clock_offset(s)) != MPI_SUCCESS)
        return rc;
    if (threaded && pthread_create(&s->thr, NULL, monitor, s))
        return agx_error(MPI_ERR_OTHER, "agx_pat_init: cannot start the monitor thread");
    s->enabled = 1;
    s->threaded = threaded;
    return MPI_SUCCESS;
}

static agx_pat *session_new(MPI_Comm comm)
{
    agx_pat *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->user = comm;
    s->mon = s->data = MPI_COMM_NULL;
    s->ema = -1;
    s->marks_last = 1;
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    MPI_Comm_rank(comm, &s->rank);
    MPI_Comm_size(comm, &s->p);
    const char *e = getenv("AGX_PAT_TAU");
    s->env_tau = e ? atof(e) : 0;
    e = getenv("AGX_PAT_POLL_US");
    s->poll_us = e ? atoi(e) : 50;
    return s;
}

int agx_pat_session_init(MPI_Comm comm)
{
    int inter = 0, level, rc;
    agx_ctx *ctx;
    MPI_Comm_test_inter(comm, &inter);
    if (inter)
        return agx_error(MPI_ERR_COMM, "agx_pat_init: needs an intra-communicator");
    if ((rc = agx_ctx_get(comm, &ctx)) != MPI_SUCCESS)
        return rc;
    if (agx_ctx_slot(ctx, AGX_SLOT_PAT))
        return agx_error(MPI_ERR_OTHER, "agx_pat_init: this communicator already has a PAT monitor "
                         "(agx_pat_finalize it first)");
    agx_pat *s = session_new(comm);
    if (!s)
        return agx_error(MPI_ERR_NO_MEM, "agx_pat_init: out of memory");
    MPI_Query_thread(&level);
    const char *e = getenv("AGX_PAT_MONITOR");
    int threaded = level >= MPI_THREAD_MULTIPLE && !(e && !strcmp(e, "0")) && !AGX_PAT_NO_THREADS;
    if ((rc = session_start(s, comm, threaded)) != MPI_SUCCESS) {
        session_free(s);
        return rc;
    }
    if (!s->threaded) {
        /* rank 0 says it once, and the fallback to the regular algorithms is then silent
         * (agx_pat_violation's *told) */
        const char *reason = AGX_PAT_NO_THREADS            ? "SimGrid SMPI has no threads"
                             : level < MPI_THREAD_MULTIPLE ? "the MPI library did not grant MPI_THREAD_MULTIPLE"
                                                           : "AGX_PAT_MONITOR=0 on some rank";
        snprintf(s->why, sizeof s->why, "no PAT monitor (%s) and no agx_pat_predict for this epoch's block", reason);
        if (s->rank == 0)
            fprintf(stderr, "agx: agx_pat_init: %s; no PAT monitor: bdr and bslb run as their regular "
                    "counterparts unless agx_pat_predict gives the arrivals\n", reason);
    }
    s->next = sessions;
    sessions = s;
    agx_ctx_attach(ctx, AGX_SLOT_PAT, s, session_slot_free);
    return MPI_SUCCESS;
}

int agx_pat_session_finalize(MPI_Comm comm)
{
    agx_ctx *ctx;
    int rc;
    if ((rc = agx_ctx_get(comm, &ctx)) != MPI_SUCCESS)
        return rc;
    agx_ctx_attach(ctx, AGX_SLOT_PAT, NULL, NULL); /* frees the session */
    return MPI_SUCCESS;
}

int agx_pat_session_info(MPI_Comm comm, agx_pat_info *info)
{
    agx_ctx *ctx;
    int rc;
    if ((rc = agx_ctx_get(comm, &ctx)) != MPI_SUCCESS)
        return rc;
    memset(info, 0, sizeof *info);
    agx_pat *s = agx_ctx_slot(ctx, AGX_SLOT_PAT);
    if (!s)
        return MPI_SUCCESS;
    info->active = s->threaded;
    info->epochs = s->epochs;
    info->tau = s->last_tau;
    info->omega = s->last_omega;
    info->presteps = s->last_presteps;
    info->background_recvs = s->bg_recvs_last;
    info->arrival_error = s->last_error;
    info->clock_offset = s->offset;
    return MPI_SUCCESS;
}
