/*
 * The PAT session (seed 004): the monitor thread's state shared with the foreground
 * parts of the PAP-aware algorithms (src/coll/allgather/allgather_intra_{bdr,bslb}.c).
 * Internal; the public side is agx_pat_* in agx.h.
 */
#ifndef AGX_PAT_H
#define AGX_PAT_H

#include "agx_internal.h"
#include "bdr.h"

#include <pthread.h>

enum { AGX_PAT_NONE = 0, AGX_PAT_BDR, AGX_PAT_BSLB };

/* Tags on the session's data communicator. */
enum { AGX_PAT_TAG_SHORT = 1, AGX_PAT_TAG_GO, AGX_PAT_TAG_REST, AGX_PAT_TAG_SEG0 = 16 };

/* BSLB: bytes of the first (ready-signal) segment. */
#define AGX_PAT_SHORT_BYTES 256

typedef struct agx_pat agx_pat;

/* The foreground's view of one collective call served by a prepared epoch. */
typedef struct {
    agx_pat *s;
    MPI_Comm data;        /* the session's data communicator */
    int rank, p;
    long long blk;        /* bytes of one block */
    char *target;         /* p * blk bytes, block i at i * blk (the receive buffer itself
                           * for a contiguous predefined recvtype, else a temporary) */
    int temp;
    const agx_bdr_sched *sched; /* BDR: this epoch's schedule */
    int bg_recvs;         /* BDR: receive ops of this rank the background executed */
} agx_pat_call;

/* Why the session cannot serve bdr/bslb on this call (NULL: it can). */
const char *agx_pat_violation(const agx_args *a);
/* 1 when agx_pat_init already told the user that the monitor cannot run. */
int agx_pat_told(void);

/* Begin a collective of algorithm `alg`: 0 and c->s set when an epoch prepared for alg
 * is open (the caller runs the PAP-aware path), 0 and c->s NULL when none is (the caller
 * runs the regular counterpart), or an MPI error code. With c->s set: the target is
 * published to the background thread and the own block is in it; with `wait`, this
 * returns after the background part has finished, its staged blocks copied into the
 * target (without: the caller has no background part to wait for, and call_end waits
 * for the exchange). */
int agx_pat_call_begin(const agx_args *a, int alg, int wait, agx_pat_call *c);
/* End it: unpack a temporary target into the receive buffer, close the epoch, and feed
 * the measured transfer time of one block (tau_sample <= 0: none). Returns rc or the
 * unpack error. */
int agx_pat_call_end(const agx_args *a, agx_pat_call *c, double tau_sample, int rc);

/* Tag of BDR segment seg. */
int agx_pat_seg_tag(const agx_pat_call *c, int seg);

#endif
