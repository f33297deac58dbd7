/*
 * Epochs and predictions of the PAT session (Proficz21, Section 3, Listing 1).
 *
 * An epoch is one compute phase and the collective after it:
 *   agx_pat_compute_begin()  opens it on every session of the process; the algorithm
 *                            forced on a session's communicator for allgather decides
 *                            what its epoch prepares (the row's background half);
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
 * process's measured tau, then runs the algorithm's plan and background half.
 *
 * tau, one block's transfer time: measured, not an input. Every PAP-aware collective
 * may give a sample (its foreground time per step), and each process contributes its
 * last sample to the exchange. Early processes' samples include waiting for the late
 * ones, so the plan gets the smallest contribution (the process that arrived last
 * measured pure transfers), raised to the largest pre-step sample (agx_pat_pre_sample:
 * pre-steps that overran the last arrival). AGX_PAT_TAU=<seconds> fixes it instead.
 */
#include "pat.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int agx_pat_epoch_work(agx_pat *s, const struct agx_pat_alg *alg)
{
    MPI_Request req;
    int rc = PMPI_Iallgather(s->mine, 3, MPI_DOUBLE, s->all, 3, MPI_DOUBLE, s->mon, &req);
    if (rc == MPI_SUCCESS)
        rc = agx_pat_wait_req(s, &req); /* not cancellable: every process contributes */
    if (rc != MPI_SUCCESS)
        return rc;
    double *arr = malloc(sizeof(double) * (size_t)s->p);
    if (!arr)
        return MPI_ERR_NO_MEM;
    double amin = INFINITY, amax = -INFINITY, tau = 0, pre = 0;
    for (int q = 0; q < s->p; q++) {
        double t = s->all[3 * q + 1];
        arr[q] = s->all[3 * q];
        amin = fmin(amin, arr[q]);
        amax = fmax(amax, arr[q]);
        if (t > 0 && (tau == 0 || t < tau))
            tau = t; /* the smallest ring contribution */
        pre = fmax(pre, s->all[3 * q + 2]);
    }
    s->last_tau = tau = agx_pat_tau_of(tau, pre);
    s->last_omega = amax - amin;
    s->lead = amax - arr[s->rank];
    rc = alg->plan(s, arr, tau);
    free(arr);
    if (rc != MPI_SUCCESS || atomic_load(&s->cancel))
        return rc;
    return alg->background(s);
}

static void contribute(agx_pat *s, double est)
{
    s->contributed = 1;
    s->est = est;
    if (!s->open || !s->threaded)
        return;
    s->mine[0] = est;
    s->mine[1] = s->env_tau > 0 ? s->env_tau : s->tau_local;
    s->mine[2] = s->env_tau > 0 ? 0 : s->tau_pre_local;
    pthread_mutex_lock(&s->mu);
    s->bg = AGX_BG_POSTED;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

static void clear_epoch(agx_pat *s)
{
    for (int q = 0; q < s->p; q++) {
        free(s->stage[q]);
        s->stage[q] = NULL;
    }
    if (s->alg)
        s->alg->clear(s);
    s->state = NULL;
    s->bg_recvs = 0;
    s->bg_rc = MPI_SUCCESS;
    s->pred_blk = -1;
    pthread_mutex_lock(&s->mu);
    s->target = NULL;
    s->blk = 0;
    s->bg = AGX_BG_NONE;
    pthread_mutex_unlock(&s->mu);
    atomic_store(&s->cancel, 0);
    s->open = 0;
}

void agx_pat_wait_done(agx_pat *s)
{
    if (!s->threaded) {
        agx_pat_posted_finish(s, 0);
        return;
    }
    atomic_store(&s->fg_waiting, 1);
    pthread_mutex_lock(&s->mu);
    while (s->bg == AGX_BG_POSTED || s->bg == AGX_BG_RUNNING)
        pthread_cond_wait(&s->cv, &s->mu);
    pthread_mutex_unlock(&s->mu);
    atomic_store(&s->fg_waiting, 0);
}

/* An open epoch whose collective never came: contribute (so the exchange completes on
 * every process) and abandon the background part. */
void agx_pat_epoch_cancel(agx_pat *s)
{
    if (!s->open)
        return;
    if (!s->contributed)
        contribute(s, agx_pat_now(s));
    atomic_store(&s->cancel, 1);
    if (s->threaded)
        agx_pat_wait_done(s);
    else
        agx_pat_posted_finish(s, 1);
    clear_epoch(s);
}

void agx_pat_end_compute(agx_pat *s)
{
    double t = agx_pat_now(s);
    if (!s->contributed)
        contribute(s, t);
    double d = t - s->t_begin;
    s->ema = s->ema < 0 ? d : 0.5 * s->ema + 0.5 * d;
    s->marks_last = s->marks_now;
    s->last_error = fabs(s->est - t);
    s->in_compute = 0;
}

/* The background half of the allgather algorithm forced on the session's communicator. */
static const struct agx_pat_alg *forced_alg(agx_pat *s)
{
    agx_ctx *ctx;
    agx_sel *sel;
    if (agx_ctx_get(s->user, &ctx) != MPI_SUCCESS || agx_sel_get(ctx, &sel) != MPI_SUCCESS)
        return NULL;
    const agx_alg *alg = agx_alg_at(AGX_OP_ALLGATHER, AGX_KIND_INTRA,
                                    agx_sel_forced(sel, AGX_OP_ALLGATHER, AGX_KIND_INTRA));
    return alg ? alg->pat : NULL;
}

static void begin_one(agx_pat *s)
{
    if (s->in_compute)
        agx_pat_end_compute(s);
    agx_pat_epoch_cancel(s);
    s->epochs++;
    s->alg = forced_alg(s);
    s->open = s->alg != NULL && (s->threaded || s->alg->post);
    s->contributed = 0;
    s->marks_now = 0;
    s->in_compute = 1;
    s->t_begin = agx_pat_now(s);
    if (s->marks_last == 0 && s->ema >= 0)
        contribute(s, s->t_begin + s->ema);
}

int agx_pat_session_compute_begin(void)
{
    for (agx_pat *s = agx_pat_sessions(); s; s = s->next)
        if (s->enabled)
            begin_one(s);
    return MPI_SUCCESS;
}

int agx_pat_session_progress(double fraction)
{
    if (!(fraction > 0.0 && fraction <= 1.0))
        return agx_error(MPI_ERR_ARG, "agx_pat_progress: fraction %g is not in (0, 1]", fraction);
    for (agx_pat *s = agx_pat_sessions(); s; s = s->next) {
        if (!s->enabled || !s->in_compute)
            continue;
        s->marks_now++;
        if (!s->contributed) {
            double t = agx_pat_now(s);
            contribute(s, s->t_begin + (t - s->t_begin) / fraction);
        }
    }
    return MPI_SUCCESS;
}

int agx_pat_session_compute_end(void)
{
    for (agx_pat *s = agx_pat_sessions(); s; s = s->next)
        if (s->enabled && s->in_compute)
            agx_pat_end_compute(s);
    return MPI_SUCCESS;
}

static int is_contiguous(MPI_Datatype t)
{
    int size;
    MPI_Aint lb, extent;
    MPI_Type_size(t, &size);
    MPI_Type_get_extent(t, &lb, &extent);
    return agx_type_is_named(t) && lb == 0 && extent == size;
}

/* Place the own block in the target (packed, as every message carries bytes). */
static int own_block(const agx_args *a, agx_pat_call *c)
{
    const agx_ag_args *g = &a->u.ag;
    const agx_blocks *b = &g->blk;
    int pos = 0;
    char *own = c->target + (long long)a->rank * c->blk;
    MPI_Comm self;
    int rc = agx_self_comm(&self);
    if (rc != MPI_SUCCESS)
        return rc;
    if (g->sendbuf != MPI_IN_PLACE)
        return MPI_Pack(g->sendbuf, g->sendcount, g->sendtype, own, (int)c->blk, &pos, self);
    if (c->temp)
        return MPI_Pack(b->buf + agx_blk_displ(b, a->rank) * b->extent, b->ucount, b->type, own,
                        (int)c->blk, &pos, self);
    return MPI_SUCCESS;
}

/* Blocks the background staged before the target was known. */
static int unstage(agx_pat *s, agx_pat_call *c)
{
    int rc = MPI_SUCCESS;
    for (int q = 0; q < c->p; q++) {
        if (!s->stage[q])
            continue;
        if (s->stage_len[q] != c->blk && rc == MPI_SUCCESS)
            rc = agx_error(MPI_ERR_TRUNCATE, "PAT: block sizes differ between processes");
        else if (rc == MPI_SUCCESS)
            memcpy(c->target + (long long)q * c->blk, s->stage[q], (size_t)c->blk);
        free(s->stage[q]);
        s->stage[q] = NULL;
    }
    return rc;
}

int agx_pat_call_begin(const agx_args *a, int wait, agx_pat_call *c)
{
    agx_pat *s = agx_ctx_slot(a->ctx, AGX_SLOT_PAT);
    const agx_blocks *b = &a->u.ag.blk;
    memset(c, 0, sizeof *c);
    double t_arrive = PMPI_Wtime();
    if (!s || !s->enabled)
        return MPI_SUCCESS;
    if (s->in_compute)
        agx_pat_end_compute(s); /* the collective is the arrival */
    if (!s->open || s->alg != a->alg->pat)
        return MPI_SUCCESS;
    long long blk = (long long)b->ucount * b->type_size;
    if (blk > INT_MAX || (double)blk * a->p > (double)(SIZE_MAX / 2))
        return agx_error(MPI_ERR_COUNT, "PAT: a block of %lld bytes is too large", blk);
    *c = (agx_pat_call){.s = s, .data = s->data, .rank = a->rank, .p = a->p, .blk = blk,
                        .temp = !is_contiguous(b->type), .t_arrive = t_arrive};
    c->target = c->temp ? malloc(blk * a->p > 0 ? (size_t)(blk * a->p) : 1) : b->buf;
    if (!c->target)
        return agx_error(MPI_ERR_NO_MEM, "PAT: out of memory for a packed result");
    int rc = own_block(a, c);
    pthread_mutex_lock(&s->mu);
    s->target = c->target;
    s->blk = blk;
    pthread_mutex_unlock(&s->mu);
    if (!wait)
        return rc;
    agx_pat_wait_done(s);
    if (rc == MPI_SUCCESS && !s->threaded)
        rc = s->bg_rc;
    if (rc == MPI_SUCCESS)
        rc = unstage(s, c);
    c->state = s->state;
    c->bg_recvs = s->bg_recvs_last = s->bg_recvs;
    if (rc != MPI_SUCCESS) {
        agx_pat_call_end(a, c, 0, rc);
        c->s = NULL;
    }
    return rc;
}

double agx_pat_tau_of(double ring_min, double pre_max)
{
    /* at most 4x the ring step (the pre-steps measured 1.5-2.8x in SMPI): an outlier (a
     * process that waited on a wrong prediction) cannot raise tau past every lead, which
     * would stop the pre-steps and with them the samples that bring it down again */
    return ring_min > 0 ? fmin(fmax(ring_min, pre_max), 4 * ring_min) : pre_max;
}

double agx_pat_pre_sample(const agx_pat_call *c, double t_pre_end)
{
    const agx_pat *s = c->s;
    if (!s || s->last_tau <= 0 || s->lead <= 0 || 2 * s->lead < s->last_omega)
        return 0;
    return s->last_tau * (t_pre_end - c->t_arrive) / s->lead;
}

int agx_pat_call_end(const agx_args *a, agx_pat_call *c, double tau_sample, int rc)
{
    agx_pat *s = c->s;
    const agx_blocks *b = &a->u.ag.blk;
    if (!s)
        return rc;
    MPI_Comm self = MPI_COMM_NULL;
    if (c->temp && rc == MPI_SUCCESS)
        rc = agx_self_comm(&self);
    for (int q = 0; q < a->p && c->temp && rc == MPI_SUCCESS; q++) {
        int pos = 0;
        rc = MPI_Unpack(c->target + (long long)q * c->blk, (int)c->blk, &pos,
                        b->buf + agx_blk_displ(b, q) * b->extent, b->ucount, b->type, self);
    }
    if (c->temp)
        free(c->target);
    agx_pat_wait_done(s); /* the exchange, when the caller did not wait for it */
    if (tau_sample > 0)
        s->tau_local = tau_sample; /* the last call's: who waited changes every epoch */
    if (c->pre_sample > 0)
        s->tau_pre_local = c->pre_sample;
    clear_epoch(s);
    return rc;
}
