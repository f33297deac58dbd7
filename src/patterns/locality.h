/*
 * Locality: regions of ranks where communication is cheap (seed 002), and the plans of
 * the locality-aware allgathers (loc_bruck, hierarchical, multileader). No MPI here.
 *
 * A plan is the list of sends and receives of one rank, each tagged with a global step
 * number; every rank of the communicator uses the same step numbering, so a message is
 * sent and received in the same step (synchronous rounds, deadlock-free). A step may hold
 * several receives (a leader gathering). Peers are ranks; blocks are *virtual indices*:
 * each algorithm renumbers the ranks (`order`: virtual index -> rank) so that the units it
 * moves (a region, a sub-block) are contiguous, and the engine permutes the receive layout
 * to match. tests/unit/test_locality.c simulates every plan for every rank.
 */
#ifndef AGX_LOCALITY_H
#define AGX_LOCALITY_H

#include "patterns.h"

typedef struct {
    int p, r;
    int *region_of;   /* rank -> region 0..r-1 (numbered by first rank) */
    int *size;        /* members per region */
    int *start;       /* start[i]: offset of region i's members in `members`; start[r] = p */
    int *members;     /* the ranks of region 0, then region 1, ..., each in rank order */
    int *local;       /* rank -> index within its region */
    int min_size, max_size;
} agx_regions;

/* Build from any region labels (renumbered 0..r-1 by first rank). 0 on success. */
int agx_regions_init(agx_regions *R, int p, const int *label);
void agx_regions_free(agx_regions *R);
/* Region labels from AGX_REGION_SIZE=n (consecutive blocks of n ranks) or
 * AGX_REGIONS=round_robin:n (rank i in region i mod n), given the variables' values (NULL
 * when unset). Returns 1 and fills label[] when an override applies, 0 when none, -1 when
 * a value is malformed. */
int agx_regions_override(const char *region_size, const char *regions, int p, int *label);

typedef struct {
    int step, send, peer; /* send: 1 = send to peer, 0 = receive from peer */
    agx_blockset set;
} agx_pop;

typedef struct {
    int n, cap, nsteps;
    agx_pop *ops;
    int overflow; /* a block set overflowed: the plan is unusable */
} agx_plan;

void agx_plan_init(agx_plan *pl);
void agx_plan_free(agx_plan *pl);

/* An algorithm's virtual order (order[v] = rank) and its plan builder; nl is the number
 * of leaders per region (multileader only). */
typedef void (*agx_order_fn)(const agx_regions *R, int nl, int *order);
typedef int (*agx_locplan_fn)(const agx_regions *R, int nl, const int *vidx, int rank, agx_plan *pl);

/* Virtual order of loc_bruck and hierarchical: region by region, members in rank order. */
void agx_order_regions(const agx_regions *R, int nl, int *order);
/* Virtual order of multileader: sub-block index first, then region, then member. */
void agx_order_multileader(const agx_regions *R, int nl, int *order);

/* loc_bruck (seed 002 Algorithm 2, generalised): radix k = max(2, smallest region). Local
 * Bruck allgather; then ceil(log_k r) non-local steps in which local rank j (1 <= j < k)
 * of region R exchanges with local rank j of regions R -/+ j k^i, each step followed by a
 * local Bruck allgather of what arrived. Appends rank `rank`'s operations. */
int agx_plan_loc_bruck(const agx_regions *R, int nl, const int *vidx, int rank, agx_plan *pl);
/* Gather to each region's first rank, Bruck among those leaders, binomial bcast. */
int agx_plan_hierarchical(const agx_regions *R, int nl, const int *vidx, int rank, agx_plan *pl);
/* nl leaders per region (first rank of each of nl sub-blocks of consecutive local ranks):
 * gather to the sub-leader, Bruck among the r leaders of each index, Bruck among the nl
 * leaders of each region, binomial bcast in each sub-block. nl <= smallest region. */
int agx_plan_multileader(const agx_regions *R, int nl, const int *vidx, int rank, agx_plan *pl);

/* Non-local steps of loc_bruck for r regions with radix k (ceil(log_k r); 0 for r = 1). */
int agx_loc_bruck_nonlocal_steps(int r, int k);

#endif
