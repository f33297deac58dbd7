/*
 * Sessions without the monitor thread (SimGrid SMPI, no MPI_THREAD_MULTIPLE,
 * AGX_PAT_MONITOR=0): agx_pat_predict plans the open epoch from the caller's predictions
 * and posts the receives the thread would have run as non-blocking receives into staging
 * buffers; the foreground completes them at the call (agx_pat_wait_done) or withdraws
 * them when the epoch closes unused. docs/algorithms.md, "Without the thread".
 */
#include "pat.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>

/* Without the thread: complete the receives agx_pat_predict posted (cancel: withdraw
 * them; no rank sends to an epoch that no collective consumes, so none has matched). */
void agx_pat_posted_finish(agx_pat *s, int cancel)
{
    MPI_Status st;
    for (int k = 0; k < s->nbg; k++) {
        int seg = s->bg_seg[k], n = 0, rc = MPI_SUCCESS;
        if (cancel)
            MPI_Cancel(&s->bg_req[k]);
        rc = PMPI_Wait(&s->bg_req[k], &st);
        if (rc == MPI_SUCCESS && !cancel)
            rc = MPI_Get_count(&st, MPI_BYTE, &n);
        s->stage_len[seg] = n;
        if (rc != MPI_SUCCESS && s->bg_rc == MPI_SUCCESS)
            s->bg_rc = rc;
        if (cancel) {
            free(s->stage[seg]);
            s->stage[seg] = NULL;
        }
    }
    if (s->nbg)
        s->bg_recvs = cancel ? 0 : s->nbg;
    s->nbg = 0;
}

int agx_pat_post_recv(agx_pat *s, int src, int tag, int seg)
{
    if (!(s->stage[seg] = malloc(s->pred_blk > 0 ? (size_t)s->pred_blk : 1)))
        return agx_error(MPI_ERR_NO_MEM, "agx_pat_predict: out of memory for a block");
    int rc = MPI_Irecv(s->stage[seg], (int)s->pred_blk, MPI_BYTE, src, tag, s->data, &s->bg_req[s->nbg]);
    if (rc == MPI_SUCCESS)
        s->bg_seg[s->nbg++] = seg;
    else {
        free(s->stage[seg]);
        s->stage[seg] = NULL;
    }
    return rc;
}

int agx_pat_session_predict(MPI_Comm comm, const double *arrival, double tau, long long block_bytes)
{
    agx_ctx *ctx;
    int rc;
    if ((rc = agx_ctx_get(comm, &ctx)) != MPI_SUCCESS)
        return rc;
    agx_pat *s = agx_ctx_slot(ctx, AGX_SLOT_PAT);
    if (!s)
        return agx_error(MPI_ERR_OTHER, "agx_pat_predict: no PAT session on this communicator (agx_pat_init)");
    if (s->threaded)
        return agx_error(MPI_ERR_OTHER, "agx_pat_predict: this communicator's monitor thread predicts "
                         "(AGX_PAT_MONITOR=0 hands prediction to the caller)");
    if (!s->in_compute)
        return agx_error(MPI_ERR_OTHER, "agx_pat_predict: call it between agx_pat_compute_begin and the collective");
    if (!s->open)
        return MPI_SUCCESS; /* no PAP-aware algorithm forced on comm: nothing to prepare */
    if (s->state)
        return agx_error(MPI_ERR_OTHER, "agx_pat_predict: this epoch has its predictions already");
    if (block_bytes > INT_MAX)
        return agx_error(MPI_ERR_COUNT, "agx_pat_predict: a block of %lld bytes is too large", block_bytes);
    double amin = INFINITY, amax = -INFINITY;
    for (int q = 0; q < s->p; q++) {
        amin = fmin(amin, arrival[q]);
        amax = fmax(amax, arrival[q]);
    }
    /* tau agreed, so that every rank builds the same schedule: the caller's, AGX_PAT_TAU's
     * where set (it wins, as with the thread), or with tau 0 the measured one, the
     * smallest of the ranks' last ring samples against the largest pre-step sample, as the
     * monitor takes them (one MIN over {ring, -pre}); nothing measured yet: 0, and the
     * schedule is the ring's */
    int fixed = s->env_tau > 0 || tau > 0;
    double mine[2] = {s->env_tau > 0 ? s->env_tau : tau > 0 ? tau : s->tau_local > 0 ? s->tau_local : INFINITY,
                      fixed ? 0 : -s->tau_pre_local}, agreed[2];
    if ((rc = PMPI_Allreduce(mine, agreed, 2, MPI_DOUBLE, MPI_MIN, s->mon)) != MPI_SUCCESS)
        return rc;
    tau = agx_pat_tau_of(isfinite(agreed[0]) ? agreed[0] : 0, -agreed[1]);
    s->last_tau = tau;
    s->last_omega = amax - amin;
    s->lead = amax - arrival[s->rank];
    s->pred_blk = block_bytes;
    /* an allocation failure on one rank would leave it in the regular counterpart while
     * the others run the epoch: the outcome of plan and post is agreed (so this call is
     * collective), and on failure no rank runs it */
    int bad = s->alg->plan(s, arrival, tau) != MPI_SUCCESS, anybad;
    if (!bad)
        bad = s->alg->post(s) != MPI_SUCCESS;
    if ((rc = PMPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, s->mon)) != MPI_SUCCESS)
        return rc;
    if (anybad) {
        agx_pat_posted_finish(s, 1);
        if (s->state)
            s->alg->clear(s);
        s->state = NULL;
        s->pred_blk = -1;
        return agx_error(MPI_ERR_NO_MEM, "agx_pat_predict: out of memory for the schedule%s",
                         bad ? "" : " on another rank");
    }
    return MPI_SUCCESS;
}
