/*
 * The PAT monitor (seed 004, Section 3 and Listing 1): one background pthread per
 * process that predicts this process's arrival at the next collective, exchanges the
 * predictions, and runs the background part of the PAP-aware algorithms (BDR's early
 * receives, BSLB's root gathering) while the application computes.
 *
 * An epoch is one compute phase and the collective after it:
 *   agx_pat_compute_begin()  opens it; the algorithm forced on the session communicator
 *                            for allgather (bdr or bslb) decides what the epoch prepares;
 *   agx_pat_progress(f)      a milestone: f of the computation is done, so the arrival is
 *                            predicted by linear extrapolation, begin + (now - begin) / f;
 *   agx_pat_compute_end()    the arrival itself;
 *   agx_allgather(...)       consumes the epoch (compute_end is implied when missing).
 * Each process contributes one prediction per epoch, at the first moment it has one:
 *   - its first progress mark, if it gave progress marks in the previous epoch (assumed
 *     for the first epoch);
 *   - else at compute_begin, from an exponential moving average of its earlier compute
 *     phases (alpha 1/2) when it has one (beyond the paper: no marks needed);
 *   - else at compute_end (the true arrival).
 * So a process that never calls progress costs time (the others learn its arrival late,
 * or predicted from its history) but never blocks anyone. The thread exchanges the
 * predictions with a non-blocking allgather on its own communicator, together with each
 * process's measured tau, then builds the schedule (BDR) or the order (BSLB).
 *
 * Clocks: predictions are in a common time base, MPI_Wtime plus an offset to rank 0
 * measured at agx_pat_init by ping-pong (the minimum round trip of 8), unless the MPI
 * says MPI_WTIME_IS_GLOBAL.
 *
 * tau, one block's transfer time: measured, not an input. Every BDR collective divides
 * its foreground time by its number of foreground steps, and each process contributes
 * its last such sample to the exchange. Early processes' samples include waiting for the
 * late ones, so the schedule uses the smallest contribution (the process that arrived
 * last measured pure transfers). AGX_PAT_TAU=<seconds> fixes it instead. Until a
 * measurement exists (the first BDR epoch) the schedule has no pre-steps: the ring.
 *
 * The thread never busy-waits: it polls with MPI_Test / MPI_Improbe and sleeps between
 * polls, 10 us doubling up to AGX_PAT_POLL_US (default 50 us; 0: only sched_yield, for
 * nodes with a core to spare), and only yields once the foreground waits for it, so
 * oversubscribed cores stay available to the computation.
 *
 * Shutdown: agx_pat_finalize, or MPI_Finalize through an MPI_COMM_SELF attribute hook.
 * An epoch left open (a compute phase not followed by its collective) is cancelled: the
 * prediction is still contributed, so the exchange completes everywhere, and the
 * background receives are abandoned. No data message is ever sent in the background
 * before its receiver has reached the collective, so cancelling leaves none in flight.
 */
#include "pat.h"

#include <limits.h>
#include <math.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

enum { BG_NONE = 0, BG_POSTED, BG_RUNNING, BG_DONE };

struct agx_pat {
    MPI_Comm user, mon, data;
    int rank, p, tag_span;
    int enabled;              /* the thread runs */
    pthread_t thr;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    double offset;            /* common time = MPI_Wtime() + offset */
    double env_tau;           /* AGX_PAT_TAU, 0: measure */
    int poll_us;              /* AGX_PAT_POLL_US: longest sleep between polls, 0: yield */
    /* epoch (main thread; fields the thread reads are guarded by mu) */
    int alg;                  /* prepared algorithm of the open epoch */
    int open;                 /* an epoch prepared and not yet consumed */
    int in_compute;
    int contributed;
    double t_begin, est;
    int marks_now, marks_last;
    double ema;               /* compute-phase duration, < 0: unknown */
    double tau_local;
    /* thread <-> foreground */
    int bg;                   /* BG_* */
    atomic_int cancel, stop, fg_waiting;
    double mine[2], *all;     /* exchange: prediction, tau */
    agx_bdr_sched sched;
    int have_sched;
    int *order;               /* BSLB: non-roots by predicted arrival */
    int bg_recvs, bg_recvs_last;
    char **stage;             /* per block: received in the background, not yet placed */
    long long *stage_len;
    char *target;             /* published by the foreground */
    long long blk;
    /* what agx_pat_get_info reports */
    long long epochs;
    double last_tau, last_omega, last_error;
    int last_presteps;
};

static agx_pat *S;            /* the session (one per process) */
static int told;              /* agx_pat_init said the monitor cannot run */
static int self_keyval = MPI_KEYVAL_INVALID;

static double now(const agx_pat *s) { return MPI_Wtime() + s->offset; }

int agx_pat_told(void) { return told; }

int agx_pat_seg_tag(const agx_pat_call *c, int seg)
{
    return AGX_PAT_TAG_SEG0 + seg % c->s->tag_span;
}

/* ---- polling without spinning ---------------------------------------------------------- */
static void backoff(agx_pat *s, int *us)
{
    if (atomic_load(&s->fg_waiting)) {
        sched_yield();
        return;
    }
    if (s->poll_us <= 0) {
        sched_yield();
        return;
    }
    struct timespec ts = {0, (long)*us * 1000};
    nanosleep(&ts, NULL);
    *us = *us * 2 > s->poll_us ? s->poll_us : *us * 2;
}

static int wait_req(agx_pat *s, MPI_Request *req)
{
    int done = 0, us = 10, rc;
    while ((rc = MPI_Test(req, &done, MPI_STATUS_IGNORE)) == MPI_SUCCESS && !done)
        backoff(s, &us);
    return rc;
}

/* Receive the next message from src with tag on the data communicator, into dst when
 * it has exactly dst_len bytes there (dst non-NULL), else into a new buffer (*buf, *len).
 * 1: cancelled before anything arrived. */
static int probe_recv(agx_pat *s, int src, int tag, char *(*dst_of)(agx_pat *, long long, void *),
                      void *arg, char **buf, long long *len, int *cancelled)
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
        backoff(s, &us);
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

/* Where block `seg` goes when the foreground has published its target and the message
 * has the block's size; NULL: stage it. */
static char *bdr_dst(agx_pat *s, long long n, void *arg)
{
    int seg = *(int *)arg;
    pthread_mutex_lock(&s->mu);
    char *d = s->target && n == s->blk ? s->target + (long long)seg * s->blk : NULL;
    pthread_mutex_unlock(&s->mu);
    return d;
}

/* ---- background parts ------------------------------------------------------------------ */
/* BDR, Listing 2 lines 47-51: this rank's receives before its first send. */
static int bg_bdr(agx_pat *s)
{
    const agx_bdr_sched *sc = &s->sched;
    int first = agx_bdr_first_send(sc, s->rank), rc = MPI_SUCCESS;
    for (int k = sc->roff[s->rank]; k < sc->roff[s->rank + 1] && rc == MPI_SUCCESS; k++) {
        const agx_bdr_op *o = &sc->recvs[k];
        if (o->step >= first)
            break;
        int seg = o->seg, cancelled;
        char *buf;
        long long len = 0;
        rc = probe_recv(s, o->peer, AGX_PAT_TAG_SEG0 + seg % s->tag_span, bdr_dst, &seg, &buf, &len,
                        &cancelled);
        if (cancelled)
            break;
        s->stage[seg] = buf;
        s->stage_len[seg] = len;
        s->bg_recvs++;
    }
    return rc;
}

/* BSLB root: serve the non-roots one at a time, the first ready one in predicted order:
 * its short segment (sent when it reaches the collective) says it is ready, the root
 * answers GO, and receives the rest. One large transfer at a time (the "synchronized"
 * linear tree of BSLS). */
static int bg_bslb_root(agx_pat *s)
{
    int left = s->p - 1, rc = MPI_SUCCESS;
    char *served = calloc((size_t)s->p, 1);
    if (!served)
        return MPI_ERR_NO_MEM;
    while (left > 0 && rc == MPI_SUCCESS && !atomic_load(&s->cancel)) {
        int q = -1, flag = 0, us = 10;
        MPI_Message msg;
        MPI_Status st;
        for (;;) {
            for (int k = 0; k < s->p - 1 && rc == MPI_SUCCESS; k++) {
                int c = s->order[k];
                if (served[c])
                    continue;
                rc = MPI_Improbe(c, AGX_PAT_TAG_SHORT, s->data, &flag, &msg, &st);
                if (flag) {
                    q = c;
                    break;
                }
            }
            if (q >= 0 || rc != MPI_SUCCESS || atomic_load(&s->cancel))
                break;
            backoff(s, &us);
        }
        if (q < 0)
            break;
        int ns;
        MPI_Get_count(&st, MPI_BYTE, &ns);
        char *shortbuf = malloc((size_t)ns + 1);
        if (!shortbuf) {
            rc = MPI_ERR_NO_MEM;
            break;
        }
        rc = MPI_Mrecv(shortbuf, ns, MPI_BYTE, &msg, MPI_STATUS_IGNORE);
        if (rc == MPI_SUCCESS)
            rc = MPI_Send(NULL, 0, MPI_BYTE, q, AGX_PAT_TAG_GO, s->data);
        if (rc == MPI_SUCCESS) {
            /* the rest: straight into the target when it is known and the sizes agree */
            MPI_Message m2;
            MPI_Status st2;
            rc = MPI_Mprobe(q, AGX_PAT_TAG_REST, s->data, &m2, &st2);
            int nr = 0;
            MPI_Get_count(&st2, MPI_BYTE, &nr);
            pthread_mutex_lock(&s->mu);
            char *d = s->target && (long long)ns + nr == s->blk ? s->target + (long long)q * s->blk : NULL;
            pthread_mutex_unlock(&s->mu);
            if (rc == MPI_SUCCESS && d) {
                memcpy(d, shortbuf, (size_t)ns);
                rc = MPI_Mrecv(d + ns, nr, MPI_BYTE, &m2, MPI_STATUS_IGNORE);
            } else if (rc == MPI_SUCCESS) {
                char *b = malloc((size_t)ns + (size_t)nr + 1);
                if (!b) {
                    char sink;
                    MPI_Mrecv(&sink, 0, MPI_BYTE, &m2, MPI_STATUS_IGNORE);
                    rc = MPI_ERR_NO_MEM;
                } else {
                    memcpy(b, shortbuf, (size_t)ns);
                    rc = MPI_Mrecv(b + ns, nr, MPI_BYTE, &m2, MPI_STATUS_IGNORE);
                    s->stage[q] = b;
                    s->stage_len[q] = (long long)ns + nr;
                }
            }
            s->bg_recvs++;
        }
        free(shortbuf);
        served[q] = 1;
        left--;
    }
    free(served);
    return rc;
}

typedef struct {
    double a;
    int rank;
} prediction;

static int by_prediction(const void *x, const void *y)
{
    const prediction *u = x, *v = y;
    if (u->a != v->a)
        return u->a < v->a ? -1 : 1;
    return u->rank - v->rank;
}

/* The exchange and what follows from it, for the epoch just posted. */
static int epoch_work(agx_pat *s, int alg)
{
    MPI_Request req;
    int rc = MPI_Iallgather(s->mine, 2, MPI_DOUBLE, s->all, 2, MPI_DOUBLE, s->mon, &req);
    if (rc == MPI_SUCCESS)
        rc = wait_req(s, &req); /* not cancellable: every process contributes */
    if (rc != MPI_SUCCESS)
        return rc;
    double *arr = malloc(sizeof(double) * (size_t)s->p), *taus = malloc(sizeof(double) * (size_t)s->p);
    if (!arr || !taus) {
        free(arr), free(taus);
        return MPI_ERR_NO_MEM;
    }
    int nt = 0;
    double amin = INFINITY, amax = -INFINITY;
    for (int q = 0; q < s->p; q++) {
        arr[q] = s->all[2 * q];
        amin = fmin(amin, arr[q]);
        amax = fmax(amax, arr[q]);
        if (s->all[2 * q + 1] > 0)
            taus[nt++] = s->all[2 * q + 1];
    }
    /* the smallest contribution: the process that arrived last in the previous epoch
     * measured pure transfers, the others' include waiting for it */
    double tau = 0;
    for (int k = 0; k < nt; k++)
        tau = k == 0 || taus[k] < tau ? taus[k] : tau;
    s->last_tau = tau;
    s->last_omega = amax - amin;
    if (alg == AGX_PAT_BDR) {
        if (agx_bdr_build(s->p, arr, tau, &s->sched))
            rc = MPI_ERR_NO_MEM;
        else {
            s->have_sched = 1;
            s->last_presteps = s->sched.npre_xfers;
        }
    } else if (alg == AGX_PAT_BSLB) {
        prediction *pr = malloc(sizeof(prediction) * (size_t)s->p);
        if (!pr)
            rc = MPI_ERR_NO_MEM;
        for (int k = 0; pr && k < s->p - 1; k++)
            pr[k] = (prediction){arr[k + 1], k + 1};
        if (pr)
            qsort(pr, (size_t)(s->p - 1), sizeof(prediction), by_prediction);
        for (int k = 0; pr && k < s->p - 1; k++)
            s->order[k] = pr[k].rank;
        free(pr);
    }
    free(arr), free(taus);
    if (rc != MPI_SUCCESS || atomic_load(&s->cancel))
        return rc;
    if (alg == AGX_PAT_BDR)
        return bg_bdr(s);
    if (alg == AGX_PAT_BSLB && s->rank == 0)
        return bg_bslb_root(s);
    return MPI_SUCCESS;
}

static void *monitor(void *arg)
{
    agx_pat *s = arg;
    pthread_mutex_lock(&s->mu);
    for (;;) {
        while (s->bg != BG_POSTED && !atomic_load(&s->stop))
            pthread_cond_wait(&s->cv, &s->mu);
        if (s->bg != BG_POSTED)
            break; /* stop, nothing posted */
        s->bg = BG_RUNNING;
        int alg = s->alg;
        pthread_mutex_unlock(&s->mu);
        int rc = epoch_work(s, alg);
        if (rc != MPI_SUCCESS) {
            char msg[MPI_MAX_ERROR_STRING];
            int len;
            MPI_Error_string(rc, msg, &len);
            fprintf(stderr, "agx: PAT monitor on rank %d: %s; the collective will run without "
                    "its background part\n", s->rank, msg);
        }
        pthread_mutex_lock(&s->mu);
        s->bg = BG_DONE;
        pthread_cond_broadcast(&s->cv);
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

/* ---- epochs (main thread) ----------------------------------------------------------------- */
static void contribute(agx_pat *s, double est)
{
    s->contributed = 1;
    s->est = est;
    if (!s->open)
        return;
    s->mine[0] = est;
    s->mine[1] = s->env_tau > 0 ? s->env_tau : s->tau_local;
    pthread_mutex_lock(&s->mu);
    s->bg = BG_POSTED;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

static void clear_epoch(agx_pat *s)
{
    for (int q = 0; q < s->p; q++) {
        free(s->stage[q]);
        s->stage[q] = NULL;
    }
    if (s->have_sched)
        agx_bdr_free(&s->sched);
    s->have_sched = 0;
    s->bg_recvs = 0;
    pthread_mutex_lock(&s->mu);
    s->target = NULL;
    s->blk = 0;
    s->bg = BG_NONE;
    pthread_mutex_unlock(&s->mu);
    atomic_store(&s->cancel, 0);
    s->open = 0;
}

static void wait_done(agx_pat *s)
{
    atomic_store(&s->fg_waiting, 1);
    pthread_mutex_lock(&s->mu);
    while (s->bg == BG_POSTED || s->bg == BG_RUNNING)
        pthread_cond_wait(&s->cv, &s->mu);
    pthread_mutex_unlock(&s->mu);
    atomic_store(&s->fg_waiting, 0);
}

/* An open epoch whose collective never came: contribute (so the exchange completes on
 * every process) and abandon the background part. */
static void cancel_epoch(agx_pat *s)
{
    if (!s->open)
        return;
    if (!s->contributed)
        contribute(s, now(s));
    atomic_store(&s->cancel, 1);
    wait_done(s);
    clear_epoch(s);
}

static void end_compute(agx_pat *s)
{
    double t = now(s);
    if (!s->contributed)
        contribute(s, t);
    double d = t - s->t_begin;
    s->ema = s->ema < 0 ? d : 0.5 * s->ema + 0.5 * d;
    s->marks_last = s->marks_now;
    s->last_error = fabs(s->est - t);
    s->in_compute = 0;
}

static int forced_alg(agx_pat *s)
{
    agx_ctx *ctx;
    if (agx_ctx_get(s->user, &ctx) != MPI_SUCCESS)
        return AGX_PAT_NONE;
    int k = AGX_KIND_INTRA, op = AGX_OP_ALLGATHER;
    int idx = ctx->forced[k][op] >= 0 ? ctx->forced[k][op] : ctx->env_forced[k][op];
    const agx_alg *alg = agx_alg_get(AGX_KIND_INTRA, idx);
    if (!alg)
        return AGX_PAT_NONE;
    if (!strcasecmp(alg->name, "bdr"))
        return AGX_PAT_BDR;
    if (!strcasecmp(alg->name, "bslb"))
        return AGX_PAT_BSLB;
    return AGX_PAT_NONE;
}

int agx_pat_compute_begin(void)
{
    agx_pat *s = S;
    if (!s || !s->enabled)
        return MPI_SUCCESS;
    if (s->in_compute)
        end_compute(s);
    cancel_epoch(s);
    s->epochs++;
    s->alg = forced_alg(s);
    s->open = s->alg != AGX_PAT_NONE;
    s->contributed = 0;
    s->marks_now = 0;
    s->in_compute = 1;
    s->t_begin = now(s);
    if (s->marks_last == 0 && s->ema >= 0)
        contribute(s, s->t_begin + s->ema);
    return MPI_SUCCESS;
}

int agx_pat_progress(double fraction)
{
    agx_pat *s = S;
    if (!(fraction > 0.0 && fraction <= 1.0))
        return agx_raise(s ? s->user : MPI_COMM_WORLD, MPI_ERR_ARG,
                         "agx_pat_progress: fraction %g is not in (0, 1]", fraction);
    if (!s || !s->enabled || !s->in_compute)
        return MPI_SUCCESS;
    s->marks_now++;
    if (!s->contributed) {
        double t = now(s);
        contribute(s, s->t_begin + (t - s->t_begin) / fraction);
    }
    return MPI_SUCCESS;
}

int agx_pat_compute_end(void)
{
    agx_pat *s = S;
    if (s && s->enabled && s->in_compute)
        end_compute(s);
    return MPI_SUCCESS;
}

/* ---- the foreground ------------------------------------------------------------------- */
const char *agx_pat_violation(const agx_args *a)
{
    static char why[160];
    if (!S)
        return "needs the PAT monitor: call agx_pat_init(comm) first";
    if (!S->enabled) {
        int level;
        MPI_Query_thread(&level);
        snprintf(why, sizeof why, "the PAT monitor needs MPI_THREAD_MULTIPLE, the MPI library "
                 "granted level %d", level);
        return why;
    }
    int same = S->user == a->user_comm;
    if (!same)
        return "the PAT monitor runs on another communicator (the one given to agx_pat_init)";
    return NULL;
}

static int is_contiguous(MPI_Datatype t)
{
    int ni, na, nd, comb, size;
    MPI_Aint lb, extent;
    MPI_Type_get_envelope(t, &ni, &na, &nd, &comb);
    MPI_Type_size(t, &size);
    MPI_Type_get_extent(t, &lb, &extent);
    return comb == MPI_COMBINER_NAMED && lb == 0 && extent == size;
}

int agx_pat_call_begin(const agx_args *a, int alg, int wait, agx_pat_call *c)
{
    agx_pat *s = S;
    memset(c, 0, sizeof *c);
    if (!s || !s->enabled || s->user != a->user_comm)
        return MPI_SUCCESS;
    if (s->in_compute)
        end_compute(s); /* the collective is the arrival */
    if (!s->open || s->alg != alg)
        return MPI_SUCCESS;
    const agx_blocks *b = &a->blk;
    long long blk = (long long)b->ucount * b->type_size;
    if (blk > INT_MAX || (double)blk * a->p > (double)(SIZE_MAX / 2))
        return MPI_ERR_COUNT;
    c->s = s;
    c->data = s->data;
    c->rank = a->rank;
    c->p = a->p;
    c->blk = blk;
    c->temp = !is_contiguous(b->type);
    c->target = c->temp ? malloc(blk * a->p > 0 ? (size_t)(blk * a->p) : 1) : b->buf;
    if (!c->target)
        return MPI_ERR_NO_MEM;
    /* own block into the target */
    int rc = MPI_SUCCESS, pos = 0;
    char *own = c->target + (long long)a->rank * blk;
    if (a->sendbuf != MPI_IN_PLACE)
        rc = MPI_Pack(a->sendbuf, a->sendcount, a->sendtype, own, (int)blk, &pos, MPI_COMM_SELF);
    else if (c->temp)
        rc = MPI_Pack(b->buf + agx_blk_displ(b, a->rank) * b->extent, b->ucount, b->type, own,
                      (int)blk, &pos, MPI_COMM_SELF);
    pthread_mutex_lock(&s->mu);
    s->target = c->target;
    s->blk = blk;
    pthread_mutex_unlock(&s->mu);
    if (!wait) {
        c->bg_recvs = 0;
        return rc;
    }
    wait_done(s);
    /* blocks the background staged before the target was known */
    for (int q = 0; q < a->p; q++) {
        if (!s->stage[q])
            continue;
        if (s->stage_len[q] != blk && rc == MPI_SUCCESS)
            rc = MPI_ERR_TRUNCATE; /* counts differ between processes */
        else if (rc == MPI_SUCCESS)
            memcpy(c->target + (long long)q * blk, s->stage[q], (size_t)blk);
        free(s->stage[q]);
        s->stage[q] = NULL;
    }
    c->sched = s->have_sched ? &s->sched : NULL;
    c->bg_recvs = s->bg_recvs_last = s->bg_recvs;
    if (rc != MPI_SUCCESS) {
        agx_pat_call_end(a, c, 0, rc);
        c->s = NULL;
    }
    return rc;
}

int agx_pat_call_end(const agx_args *a, agx_pat_call *c, double tau_sample, int rc)
{
    agx_pat *s = c->s;
    const agx_blocks *b = &a->blk;
    if (!s)
        return rc;
    for (int q = 0; q < a->p && c->temp && rc == MPI_SUCCESS; q++) {
        int pos = 0;
        rc = MPI_Unpack(c->target + (long long)q * c->blk, (int)c->blk, &pos,
                        b->buf + agx_blk_displ(b, q) * b->extent, b->ucount, b->type, MPI_COMM_SELF);
    }
    if (c->temp)
        free(c->target);
    wait_done(s); /* the exchange, when the caller did not wait for it */
    if (tau_sample > 0) {
        s->tau_local = tau_sample; /* the last call's: who waited changes every epoch */
    }
    clear_epoch(s);
    return rc;
}

/* ---- set-up and shutdown --------------------------------------------------------------- */
/* Offset of this process's MPI_Wtime to rank 0's: ping-pong, minimum round trip. */
static int clock_offset(agx_pat *s)
{
    int *global, flag, rc = MPI_SUCCESS;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &global, &flag);
    if (flag && *global)
        return MPI_SUCCESS;
    for (int r = 1; r < s->p && rc == MPI_SUCCESS; r++) {
        double best = INFINITY, t[2];
        for (int k = 0; k < 8 && rc == MPI_SUCCESS; k++) {
            if (s->rank == 0) {
                rc = MPI_Recv(t, 1, MPI_DOUBLE, r, 0, s->mon, MPI_STATUS_IGNORE);
                t[1] = MPI_Wtime();
                if (rc == MPI_SUCCESS)
                    rc = MPI_Send(&t[1], 1, MPI_DOUBLE, r, 0, s->mon);
            } else if (s->rank == r) {
                double t0 = MPI_Wtime(), t1, remote;
                rc = MPI_Send(&t0, 1, MPI_DOUBLE, 0, 0, s->mon);
                if (rc == MPI_SUCCESS)
                    rc = MPI_Recv(&remote, 1, MPI_DOUBLE, 0, 0, s->mon, MPI_STATUS_IGNORE);
                t1 = MPI_Wtime();
                if (t1 - t0 < best) {
                    best = t1 - t0;
                    s->offset = remote - (t0 + t1) / 2;
                }
            }
        }
    }
    return rc;
}

static void session_free(agx_pat *s)
{
    if (s->enabled) {
        if (s->in_compute)
            end_compute(s);
        cancel_epoch(s);
        pthread_mutex_lock(&s->mu);
        atomic_store(&s->stop, 1);
        pthread_cond_broadcast(&s->cv);
        pthread_mutex_unlock(&s->mu);
        pthread_join(s->thr, NULL);
    }
    if (s->mon != MPI_COMM_NULL)
        MPI_Comm_free(&s->mon);
    if (s->data != MPI_COMM_NULL)
        MPI_Comm_free(&s->data);
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cv);
    free(s->all), free(s->order), free(s->stage), free(s->stage_len);
    free(s);
}

static int self_delete(MPI_Comm comm, int keyval, void *val, void *extra)
{
    (void)comm, (void)keyval, (void)val, (void)extra;
    if (S) {
        session_free(S);
        S = NULL;
    }
    MPI_Comm_free_keyval(&self_keyval);
    self_keyval = MPI_KEYVAL_INVALID;
    return MPI_SUCCESS;
}

int agx_pat_init(MPI_Comm comm)
{
    int inter = 0, level, rc;
    if (comm == MPI_COMM_NULL)
        return agx_raise(comm, MPI_ERR_COMM, "agx_pat_init: communicator is MPI_COMM_NULL");
    MPI_Comm_test_inter(comm, &inter);
    if (inter)
        return agx_raise(comm, MPI_ERR_COMM, "agx_pat_init: needs an intra-communicator");
    if (S)
        return agx_raise(comm, MPI_ERR_OTHER, "agx_pat_init: a PAT monitor is already running "
                         "(one per process; agx_pat_finalize it first)");
    agx_pat *s = calloc(1, sizeof *s);
    if (!s)
        return agx_raise(comm, MPI_ERR_NO_MEM, "agx_pat_init: out of memory");
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
    if (self_keyval == MPI_KEYVAL_INVALID) {
        MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, self_delete, &self_keyval, NULL);
        MPI_Comm_set_attr(MPI_COMM_SELF, self_keyval, NULL);
    }
    MPI_Query_thread(&level);
    if (level < MPI_THREAD_MULTIPLE) {
        /* every rank has the same level; rank 0 says it once */
        if (s->rank == 0)
            fprintf(stderr, "agx: agx_pat_init: the MPI library granted thread level %d, not "
                    "MPI_THREAD_MULTIPLE; no PAT monitor: bdr and bslb run as ring and "
                    "gather_bcast\n", level);
        told = 1;
        S = s;
        return MPI_SUCCESS;
    }
    int *ub, flag;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
    s->tag_span = (flag ? *ub : 32767) - AGX_PAT_TAG_SEG0;
    s->all = malloc(sizeof(double) * 2 * (size_t)s->p);
    s->order = malloc(sizeof(int) * (size_t)s->p);
    s->stage = calloc((size_t)s->p, sizeof(char *));
    s->stage_len = calloc((size_t)s->p, sizeof(long long));
    if (!s->all || !s->order || !s->stage || !s->stage_len) {
        session_free(s);
        return agx_raise(comm, MPI_ERR_NO_MEM, "agx_pat_init: out of memory");
    }
    if ((rc = MPI_Comm_dup(comm, &s->mon)) != MPI_SUCCESS ||
        (rc = MPI_Comm_dup(comm, &s->data)) != MPI_SUCCESS || (rc = clock_offset(s)) != MPI_SUCCESS) {
        session_free(s);
        return agx_raise_code(comm, rc);
    }
    if (pthread_create(&s->thr, NULL, monitor, s)) {
        session_free(s);
        return agx_raise(comm, MPI_ERR_OTHER, "agx_pat_init: cannot start the monitor thread");
    }
    s->enabled = 1;
    S = s;
    return MPI_SUCCESS;
}

int agx_pat_finalize(void)
{
    if (S) {
        session_free(S);
        S = NULL;
    }
    return MPI_SUCCESS;
}

int agx_pat_get_info(agx_pat_info *info)
{
    if (!info)
        return agx_raise(MPI_COMM_WORLD, MPI_ERR_ARG, "agx_pat_get_info: info is NULL");
    memset(info, 0, sizeof *info);
    if (!S)
        return MPI_SUCCESS;
    info->active = S->enabled;
    info->epochs = S->epochs;
    info->tau = S->last_tau;
    info->omega = S->last_omega;
    info->presteps = S->last_presteps;
    info->background_recvs = S->bg_recvs_last;
    info->arrival_error = S->last_error;
    info->clock_offset = S->offset;
    return MPI_SUCCESS;
}
