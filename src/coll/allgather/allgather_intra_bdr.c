/*
 * Background Disseminated Ring (Proficz21, Listing 2), the PAP-aware ring.
 *
 * Steps: the monitor thread (src/pat) exchanges the predicted arrivals during the compute
 * phase; plan() builds the schedule (src/patterns/bdr.c): pre-steps in which the
 * processes that have arrived send their own block to processes still computing (r-1,
 * r-2, ... slowest first), then the ring for the hops left. background() receives this
 * rank's blocks up to its first send step (lines 47-51), straight into the receive buffer
 * once the foreground has published it. In the call (lines 53-67) the rest of this rank's
 * schedule runs through the engine, one round per step.
 * Cost: as the ring, (p-1).alpha + n.((p-1)/p).beta, when arrivals are equal; with an
 * imbalance omega, up to min(p-1, omega/tau) of the late process's blocks arrive before
 * it does, and it leaves after as few as one step. A wrong prediction delays the
 * pre-steps' senders, up to (p-2).tau of average elapsed time (Section 3.1).
 * tau is measured (docs/algorithms.md): from ring steps, and from the pre-steps' own
 * time against the lead they were planned for (a pre-step is slower than a ring step).
 * Without a prepared epoch (no compute phase before the call) it is the ring itself.
 * Without the thread (SMPI, no MPI_THREAD_MULTIPLE, AGX_PAT_MONITOR=0) the caller's
 * agx_pat_predict plans the epoch, and post() posts the background receives as
 * non-blocking receives that complete during the computation.
 * Every message carries one block as bytes; a recvtype that is not contiguous goes
 * through one packed copy of the result.
 * Memory requirements: the schedule, O(p^2) on every rank; blocks that arrive before
 * the receive buffer is known are staged (at most p-1 blocks).
 */
#include "bdr.h"
#include "coll_allgather.h"
#include "pat.h"

#include <stdlib.h>

static int plan(agx_pat *s, const double *arrival, double tau)
{
    agx_bdr_sched *sc = malloc(sizeof *sc);
    if (!sc || agx_bdr_build(s->p, arrival, tau, sc)) {
        free(sc);
        return MPI_ERR_NO_MEM;
    }
    s->state = sc;
    s->last_presteps = sc->npre_xfers;
    return MPI_SUCCESS;
}

/* Where block `seg` goes when the foreground has published its target and the message
 * has the block's size; NULL: stage it. */
static char *dst_of(agx_pat *s, long long n, void *arg)
{
    int seg = *(int *)arg;
    pthread_mutex_lock(&s->mu);
    char *d = s->target && n == s->blk ? s->target + (long long)seg * s->blk : NULL;
    pthread_mutex_unlock(&s->mu);
    return d;
}

/* Listing 2 lines 47-51: this rank's receives before its first send are
 * sc->recvs[roff[rank] .. end). */
static int bg_end(const agx_bdr_sched *sc, int rank)
{
    int first = agx_bdr_first_send(sc, rank), k = sc->roff[rank];
    while (k < sc->roff[rank + 1] && sc->recvs[k].step < first)
        k++;
    return k;
}

static int background(agx_pat *s)
{
    const agx_bdr_sched *sc = s->state;
    int end = bg_end(sc, s->rank), rc = MPI_SUCCESS;
    for (int k = sc->roff[s->rank]; k < end && rc == MPI_SUCCESS; k++) {
        int seg = sc->recvs[k].seg, cancelled;
        char *buf;
        long long len = 0;
        rc = agx_pat_probe_recv(s, sc->recvs[k].peer, AGX_PAT_TAG_SEG0 + seg % s->tag_span, dst_of, &seg, &buf,
                                &len, &cancelled);
        if (cancelled)
            break;
        s->stage[seg] = buf;
        s->stage_len[seg] = len;
        s->bg_recvs++;
    }
    return rc;
}

static void clear(agx_pat *s)
{
    if (s->state)
        agx_bdr_free(s->state);
    free(s->state);
}

/* Without the thread (agx_pat_predict): the same receives, posted before the computation,
 * so that they complete while it runs. */
static int post(agx_pat *s)
{
    const agx_bdr_sched *sc = s->state;
    int end = bg_end(sc, s->rank), rc = MPI_SUCCESS;
    for (int k = sc->roff[s->rank]; k < end && rc == MPI_SUCCESS; k++)
        rc = agx_pat_post_recv(s, sc->recvs[k].peer, AGX_PAT_TAG_SEG0 + sc->recvs[k].seg % s->tag_span,
                               sc->recvs[k].seg);
    return rc;
}

const struct agx_pat_alg agx_bdr_pat = {plan, background, clear, post};

int agx_allgather_intra_bdr(const agx_args *a)
{
    agx_pat_call c;
    agx_sched fg;
    int rc = agx_pat_call_begin(a, 1, &c);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!c.s)
        return agx_allgather_intra_ring(a);
    if (!c.state)
        return agx_pat_call_end(a, &c, 0, MPI_ERR_INTERN); /* the monitor failed (reported) */
    const agx_bdr_sched *sc = c.state;
    agx_sched_init(&fg);
    if (agx_bdr_foreground(sc, c.rank, c.bg_recvs, AGX_PAT_TAG_SEG0, c.s->tag_span, &fg))
        rc = agx_error(MPI_ERR_NO_MEM, "bdr: out of memory for the schedule");
    /* the segments of the target as blocks; tau sample: this rank's foreground time per
     * step. Single steps mislead (a send into socket buffers returns early); the whole
     * foreground does not. The monitor keeps the smallest sample of all ranks. */
    agx_blocks seg;
    agx_blocks_bytes(&seg, c.target, c.p, NULL, NULL);
    seg.ucount = (int)c.blk;
    agx_exec x = {.comm = c.data, .tag = AGX_PAT_TAG_SEG0, .bufs = &seg, .nbufs = 1,
                  .node_of = a->ctx->reg ? a->ctx->reg->region_of : NULL, .me = a->rank};
    /* the pre-steps, then the ring part: the pre-steps' end gives the pre-step sample */
    double t_begin = PMPI_Wtime();
    int split = 0;
    while (split < fg.n && fg.ops[split].round < sc->ring0)
        split++;
    agx_sched pre = fg, ring = fg;
    pre.n = split;
    ring.n = fg.n - split;
    ring.ops = fg.ops + split;
    if (rc == MPI_SUCCESS)
        rc = agx_sched_run(&x, &pre);
    if (rc == MPI_SUCCESS && sc->npre_xfers > 0)
        c.pre_sample = agx_pat_pre_sample(&c, PMPI_Wtime());
    if (rc == MPI_SUCCESS)
        rc = agx_sched_run(&x, &ring);
    int nsteps = 0;
    for (int k = 0; k < fg.n; k++)
        nsteps += k == 0 || fg.ops[k].round != fg.ops[k - 1].round;
    /* only from a schedule without pre-steps (the ring's): after pre-steps a late process
     * finds its blocks already there and measures almost nothing, and the plan then takes
     * omega / tau pre-steps, far too many (seen in SMPI at 48 nodes: tau 0.0 us) */
    double tau = nsteps > 0 && c.blk > 0 && sc->npre_xfers == 0 ? (PMPI_Wtime() - t_begin) / nsteps : 0;
    agx_sched_free(&fg);
    return agx_pat_call_end(a, &c, tau, rc);
}
