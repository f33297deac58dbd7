/*
 * Background Disseminated Ring (Proficz21, Listing 2): the schedule, as a pure function of
 * the predicted arrival times, the number of processes and tau (one segment's transfer
 * time). No MPI here; tests/unit/test_bdr.c checks it by simulation.
 *
 * A transfer moves one segment (segment g = process g's contribution) from one process
 * to another at one step. Steps are numbered from 0 (the first pre-step) and compressed:
 * a step in which nobody transfers anything is not numbered (the paper's "empty steps
 * are not included"). Every process executes its own operations in step order.
 */
#ifndef AGX_BDR_H
#define AGX_BDR_H

#include "patterns.h"

typedef struct {
    int step, peer, seg;
} agx_bdr_op;

typedef struct {
    int p;
    int nsteps;           /* numbered steps (after compression) */
    int ring0;            /* first step of the ring part (== number of pre-steps) */
    int max_psno;         /* max_q psNo_q before compression (clamped, see bdr.c) */
    int npre_xfers;       /* transfers scheduled in the pre-steps */
    int *psno;            /* psNo_q: predicted pre-steps of process q */
    int *prev_sent;       /* prevSent_r after the pre-steps */
    int *arrive_step;     /* compressed step from which process q's own sends may happen */
    /* Per process, in step order: sends of r are sends[soff[r] .. soff[r+1]), receives of
     * r are recvs[roff[r] .. roff[r+1]); op.peer is the destination / source. */
    agx_bdr_op *sends, *recvs;
    int *soff, *roff;
} agx_bdr_sched;

/* Build the schedule. arrival[q]: predicted arrival of process q (any time origin);
 * tau: transfer time of one segment (same unit). tau <= 0, not finite, or non-finite
 * arrivals: no pre-steps (the plain ring). Deterministic: equal inputs give equal
 * schedules on every process. O(S.P + P^2) with S the productive pre-steps.
 * Returns 0, or -1 when out of memory. */
int agx_bdr_build(int p, const double *arrival, double tau, agx_bdr_sched *s);
void agx_bdr_free(agx_bdr_sched *s);

/* The first step at which process r sends (nsteps when it never sends): the background
 * thread executes r's receives before it (Listing 2, lines 47-51). */
int agx_bdr_first_send(const agx_bdr_sched *s, int r);

/* This rank's foreground part as a schedule over segments (block g = segment g): its
 * sends, and its receives after the first skip_recvs (done in the background), one round
 * per step, each message tagged tag0 + seg % span. Returns 0, or -1 when out of memory. */
int agx_bdr_foreground(const agx_bdr_sched *s, int me, int skip_recvs, int tag0, int span, agx_sched *out);

/* order[0..n) = the indices sorted by arrival (ascending, or descending), ties by index. */
int agx_order_by_arrival(int n, const double *arrival, int descending, int *order);

#endif
