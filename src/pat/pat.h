/*
 * The PAT session (Proficz21, Section 3 and Listing 1): a monitor thread per communicator
 * that predicts this process's arrival at the next collective, exchanges the predictions
 * while the application computes, and runs the background half of a PAP-aware algorithm.
 *
 *   monitor.c  the thread, polling without spinning, session lifecycle (per communicator,
 *              the context's AGX_SLOT_PAT): what agx_pat_init / finalize / get_info do;
 *   epoch.c    epochs and predictions (what compute_begin / progress / end do), the
 *              exchange, and the foreground's view of a call (agx_pat_call_*);
 *   predict.c  sessions without the thread: agx_pat_predict's plan and posted receives;
 *   clock.c    the clock offset to rank 0.
 * The algorithms (src/coll/allgather/allgather_intra_{bdr,bslb}.c) provide their
 * background half as an agx_pat_alg in their registry row; nothing here names them.
 * Internal: the public agx_pat_* of agx.h are in src/api/api_pat.c, which raises the
 * errors these functions return.
 */
#ifndef AGX_PAT_H
#define AGX_PAT_H

#include "select.h"

#include <pthread.h>
#include <stdatomic.h>

typedef struct agx_pat agx_pat;

/* Tags on the session's data communicator. */
enum { AGX_PAT_TAG_SHORT = 1, AGX_PAT_TAG_GO, AGX_PAT_TAG_REST, AGX_PAT_TAG_SEG0 = 16 };

/* The background half of a PAP-aware algorithm, run by the monitor thread once the
 * predictions of an epoch are exchanged. */
struct agx_pat_alg {
    /* Prepare the epoch from the predicted arrivals (common clock) and tau: fill
     * s->state. Returns an MPI error code. */
    int (*plan)(agx_pat *s, const double *arrival, double tau);
    /* The background transfers (may return early when s->cancel is set). */
    int (*background)(agx_pat *s);
    /* Free s->state. */
    void (*clear)(agx_pat *s);
    /* Sessions without the thread (agx_pat_predict): post the background receives as
     * non-blocking receives with agx_pat_post_recv, right after plan. */
    int (*post)(agx_pat *s);
};

enum { AGX_BG_NONE = 0, AGX_BG_POSTED, AGX_BG_RUNNING, AGX_BG_DONE };

struct agx_pat {
    MPI_Comm user, mon, data;
    int rank, p, tag_span;
    int enabled;              /* the session serves bdr / bslb */
    int threaded;             /* its monitor thread runs (else: agx_pat_predict only) */
    pthread_t thr;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    double offset;            /* common time = PMPI_Wtime() + offset */
    double env_tau;           /* AGX_PAT_TAU, 0: measure */
    int poll_us;              /* AGX_PAT_POLL_US: longest sleep between polls, 0: yield */
    char why[160];            /* why the session cannot serve an algorithm */
    /* epoch (main thread; fields the thread reads are guarded by mu) */
    const struct agx_pat_alg *alg; /* prepared algorithm of the open epoch */
    void *state;              /* its epoch state (alg->plan) */
    int open;                 /* an epoch prepared and not yet consumed */
    int in_compute;
    int contributed;
    double t_begin, est;
    int marks_now, marks_last;
    double ema;               /* compute-phase duration, < 0: unknown */
    double tau_local;         /* last ring-step sample (bdr without pre-steps) */
    double tau_pre_local;     /* last pre-step sample (agx_pat_pre_sample), 0: none */
    double lead;              /* this epoch: the last predicted arrival minus this rank's */
    /* thread <-> foreground */
    int bg;                   /* AGX_BG_* */
    atomic_int cancel, stop, fg_waiting;
    double mine[3], *all;     /* exchange: prediction, ring tau, pre-step tau */
    int bg_recvs, bg_recvs_last;
    char **stage;             /* per block: received in the background, not yet placed */
    long long *stage_len;
    char *target;             /* published by the foreground */
    long long blk;
    /* sessions without the thread: the receives posted by agx_pat_predict */
    MPI_Request *bg_req;      /* p of them at most */
    int *bg_seg;              /* the block each receives */
    int nbg;                  /* posted, not yet completed */
    long long pred_blk;       /* the block size they were posted for */
    int bg_rc;                /* their completion's error */
    /* what agx_pat_get_info reports */
    long long epochs;
    double last_tau, last_omega, last_error;
    int last_presteps;
    agx_pat *next;            /* the process's sessions */
};

/* ---- monitor.c ---- */
/* Why the communicator's session cannot serve a PAP-aware algorithm (NULL: it can). */
const char *agx_pat_violation(const agx_args *a, int *told);
/* Sleep (or yield) between polls, growing *us up to the session's limit. */
void agx_pat_backoff(agx_pat *s, int *us);
/* MPI_Test until done, polling with backoff. */
int agx_pat_wait_req(agx_pat *s, MPI_Request *req);
/* Receive the next message from src with tag on the data communicator: into dst_of(...)
 * when that gives a place, else into a new buffer (*buf, *len). *cancelled: the epoch
 * was cancelled before anything arrived. */
typedef char *(*agx_pat_dst_fn)(agx_pat *s, long long len, void *arg);
int agx_pat_probe_recv(agx_pat *s, int src, int tag, agx_pat_dst_fn dst_of, void *arg, char **buf,
                       long long *len, int *cancelled);
/* The first session of the process (for the process-wide compute marks). */
agx_pat *agx_pat_sessions(void);

/* The public functions' work (src/api/api_pat.c raises their errors): start a session on
 * comm, stop it, report on it. */
int agx_pat_session_init(MPI_Comm comm);
int agx_pat_session_finalize(MPI_Comm comm);
int agx_pat_session_info(MPI_Comm comm, agx_pat_info *info);

/* ---- epoch.c ---- */
/* The public compute marks' work (agx_pat_compute_begin / progress / end). */
int agx_pat_session_compute_begin(void);
int agx_pat_session_progress(double fraction);
int agx_pat_session_compute_end(void);
void agx_pat_epoch_cancel(agx_pat *s);
void agx_pat_end_compute(agx_pat *s);
/* The monitor thread's work for the epoch just posted: exchange, plan, background. */
int agx_pat_epoch_work(agx_pat *s, const struct agx_pat_alg *alg);
/* Block until the thread has finished the epoch's work (without the thread: until the
 * posted receives have completed). */
void agx_pat_wait_done(agx_pat *s);
/* ---- predict.c ---- */
/* Post a receive of block seg (s->pred_blk bytes, staged) from src with tag. */
int agx_pat_post_recv(agx_pat *s, int src, int tag, int seg);
/* Complete the posted receives (their sizes into s->stage_len, an error into s->bg_rc),
 * or with cancel withdraw them and free their staging. */
void agx_pat_posted_finish(agx_pat *s, int cancel);
/* agx_pat_predict's work: plan the open epoch from the caller's predictions and post its
 * background receives. */
int agx_pat_session_predict(MPI_Comm comm, const double *arrival, double tau, long long block_bytes);

/* The foreground's view of one collective call served by a prepared epoch. */
typedef struct {
    agx_pat *s;
    MPI_Comm data;        /* the session's data communicator */
    int rank, p;
    long long blk;        /* bytes of one block */
    char *target;         /* p * blk bytes, block i at i * blk (the receive buffer itself
                           * for a contiguous predefined recvtype, else a temporary) */
    int temp;
    void *state;          /* the algorithm's epoch state */
    int bg_recvs;         /* receive ops of this rank the background executed */
    double t_arrive;      /* PMPI_Wtime() at call_begin */
    double pre_sample;    /* set by the algorithm: see agx_pat_pre_sample */
} agx_pat_call;

/* Begin a collective of the algorithm running in `a`: 0 and c->s set when an epoch
 * prepared for it is open (the caller runs the PAP-aware path), 0 and c->s NULL when none
 * is (the caller runs the regular counterpart), or an MPI error code. With c->s set: the
 * target is published to the background thread and the own block is in it; with `wait`,
 * this returns after the background part has finished, its staged blocks copied into the
 * target (without: call_end waits for it). */
int agx_pat_call_begin(const agx_args *a, int wait, agx_pat_call *c);
/* End it: unpack a temporary target into the receive buffer, close the epoch, and feed
 * the measured transfer time of one block (tau_sample <= 0: none). Returns rc or the
 * unpack error. */
int agx_pat_call_end(const agx_args *a, agx_pat_call *c, double tau_sample, int rc);
/* The pre-step sample of a call whose pre-steps ended at PMPI_Wtime() t_pre_end, for a
 * rank whose lead (predicted time before the last arrival) is at least half the epoch's
 * largest: tau x (time from arrival to the end of the pre-steps) / lead. A plan whose
 * pre-steps fit the lead measures tau itself; pre-steps slower than tau per step (the
 * plan then ends them after the last arrival, and the ring part starts late) measure a
 * larger one. 0: no sample. */
double agx_pat_pre_sample(const agx_pat_call *c, double t_pre_end);
/* The tau a plan uses from the ranks' contributions: the larger of the smallest ring
 * sample and the largest pre-step sample, at most 4x the ring sample (0: none). */
double agx_pat_tau_of(double ring_min, double pre_max);

/* ---- clock.c ---- */
/* Offset of this process's MPI_Wtime to rank 0's over s->mon (0 when the MPI says
 * MPI_WTIME_IS_GLOBAL): ping-pong, the minimum round trip of 8. */
int agx_pat_clock_offset(agx_pat *s);
static inline double agx_pat_now(const agx_pat *s) { return PMPI_Wtime() + s->offset; }

#endif
