/*
 * All-to-many personalized exchange (KangRoss20): the order in which every process posts
 * its receives and sends, and how they are cut into throttled rounds. No MPI here;
 * tests/unit/test_alltoallv.c simulates every kernel for every rank.
 *
 * The schedules use two buffers: buffer AGX_A2A_SEND (block j: what this process sends
 * to rank j) and AGX_A2A_RECV (block s: what it receives from rank s). A pair whose
 * message is empty has no operation (an all-to-many pattern is mostly zeros); the own
 * block is a local copy in round 0.
 *
 * Every kernel gives each pair (s -> j) one index i(s, j), the same at the sender and the
 * receiver; with throttle T > 0 the pair runs in round i / T, so a round holds at most T
 * receives (and at most T sends) and a send is matched in the round of its receive: no
 * process waits on a later round of another, so even synchronous sends cannot deadlock.
 */
#ifndef AGX_ALLTOALLV_H
#define AGX_ALLTOALLV_H

#include "patterns.h"

enum { AGX_A2A_SEND = 0, AGX_A2A_RECV = 1 };

/* The kernels built here. */
typedef enum {
    AGX_A2A_ASCENDING = 0, /* ROMIO's default: every receive, then every send, in ascending
                            * rank order, one round (throttle ignored) */
    AGX_A2A_SPREAD,        /* spread-out (KangRoss20 Alg. 1): receive from r + i, send to
                            * r - i at index i */
    AGX_A2A_BALANCED,      /* balanced spread-out (KangRoss20 Alg. 2) over the rank list */
    AGX_A2A_PAIRWISE,      /* step i: exchange with r XOR i (p a power of two), else send to
                            * r + i and receive from r - i; one round per step */
} agx_a2a_kernel;

/* What the whole call looks like, from one summary per receiver (agx_a2a_pattern_init):
 * the receiver set R, senders per receiver, and the balanced kernel's rank list. */
typedef struct {
    int p;
    int nrecv;       /* |R|: ranks that receive a non-empty message */
    int smax;        /* the most senders of one receiver */
    int *nsenders;   /* per rank: how many ranks send it a non-empty message */
    int *list;       /* rank_list of Alg. 2: receivers first in their groups (see .c) */
    int *pos;        /* rank -> position in list */
    int *start;      /* rank -> r_index (Alg. 2 lines 5-10) when a receiver, else -1 */
} agx_a2a_pattern;

/* Build from nsenders[0..p) (copied). Returns 0, or -1 when out of memory. */
int agx_a2a_pattern_init(agx_a2a_pattern *pt, int p, const int *nsenders);
void agx_a2a_pattern_free(agx_a2a_pattern *pt);

/* One rank's side of a call. */
typedef struct {
    int p, r;
    const unsigned char *snz;   /* snz[j]: r sends a non-empty message to j */
    const unsigned char *rnz;   /* rnz[s]: r receives a non-empty message from s */
    const agx_a2a_pattern *pt;  /* AGX_A2A_BALANCED only */
    int throttle;               /* receives per round; 0: no throttling */
    unsigned send_flags;        /* AGX_SOP_SYNC: synchronous sends (Issend) */
} agx_a2a_side;

/* Append r's operations of `kernel`; returns the number of rounds, or -1 (out of memory). */
int agx_build_a2a(agx_sched *s, agx_a2a_kernel kernel, const agx_a2a_side *side);
/* Index of the pair (s -> j) under the kernel (p, pattern as in side). */
int agx_a2a_index(agx_a2a_kernel kernel, int p, const agx_a2a_pattern *pt, int s, int j);

/* ---- two-layer aggregation (TAM, KangRoss20 Sec. II-B, V; Kang's TAM paper) ----------
 * Regions (as for loc_bruck) with one local aggregator each, its lowest rank. Phases:
 *   1. every process sends its messages to its aggregator (round 1; sizes in round 0),
 *   2. aggregator a sends aggregator b everything from region a to region b (round 2),
 *   3. aggregator b sends each member its messages (round 3).
 * Messages to oneself stay local; the aggregator moves its own part by copies. */
enum { AGX_TAM_ROUND_SIZES = 0, AGX_TAM_ROUND_UP, AGX_TAM_ROUND_ACROSS, AGX_TAM_ROUND_DOWN };

#endif
