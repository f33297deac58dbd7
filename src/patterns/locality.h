/*
 * Locality: regions of ranks where communication is cheap (Bienz, Section 2), and the
 * schedules of the locality-aware allgathers (loc_bruck, hierarchical, multileader). No
 * MPI here.
 *
 * The builders emit the common schedule format (patterns.h); a round may hold several
 * receives (a leader gathering). Peers are ranks; blocks are *virtual indices*: each
 * algorithm renumbers the ranks (`order`: virtual index -> rank) so that the units it
 * moves (a region, a sub-block) are contiguous, and the runner permutes the receive
 * layout to match. tests/unit/test_locality.c simulates every schedule for every rank.
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

/* An algorithm's virtual order (order[v] = rank) and its schedule builder; nl is the number
 * of leaders per region (multileader only). */
typedef void (*agx_order_fn)(const agx_regions *R, int nl, int *order);
typedef int (*agx_locbuild_fn)(const agx_regions *R, int nl, const int *vidx, int rank, agx_sched *s);

/* Adds the virtual blocks of regions [a, a+n) (mod r) in the region-major order. */
void agx_add_regions(agx_blockset *s, const agx_regions *R, int a, int n);
/* Virtual order of loc_bruck and hierarchical: region by region, members in rank order. */
void agx_order_regions(const agx_regions *R, int nl, int *order);
/* Virtual order of multileader: sub-block index first, then region, then member. */
void agx_order_multileader(const agx_regions *R, int nl, int *order);

/* loc_bruck (Bienz Algorithm 2, generalised): radix k = max(2, smallest region). Local
 * Bruck allgather; then ceil(log_k r) non-local steps in which local rank j (1 <= j < k)
 * of region R exchanges with local rank j of regions R -/+ j k^i, each step followed by a
 * local Bruck allgather of what arrived. Appends rank `rank`'s operations. */
int agx_build_loc_bruck(const agx_regions *R, int nl, const int *vidx, int rank, agx_sched *s);
/* Gather to each region's first rank, Bruck among those leaders, binomial bcast. */
int agx_build_hierarchical(const agx_regions *R, int nl, const int *vidx, int rank, agx_sched *s);
/* nl leaders per region (first rank of each of nl sub-blocks of consecutive local ranks):
 * gather to the sub-leader, Bruck among the r leaders of each index, Bruck among the nl
 * leaders of each region, binomial bcast in each sub-block. nl <= smallest region. */
int agx_build_multileader(const agx_regions *R, int nl, const int *vidx, int rank, agx_sched *s);
/* multilane (agx; docs/algorithms.md): every member of a region is a lane. A direct local
 * allgather (each member sends its block to every other member); then ceil(log_K r)
 * non-local rounds, K - 1 = min(r - 1, lanes * f), lanes = the smallest region's size, f
 * the smallest fanout <= `fanout` that needs no more rounds than `fanout`: with D regions held, digit j (1 <= j < K) sends them to region R - jD and receives
 * from R + jD, lane y handling digits [1 + y fanout, 1 + (y+1) fanout) (so what a lane
 * receives is one range of regions); after each round a direct local allgather of what
 * the lanes received. */
int agx_build_multilane(const agx_regions *R, int fanout, const int *vidx, int rank, agx_sched *s);
/* The fanout multilane uses: the smallest f <= fanout with as few rounds as fanout gives
 * (fewer messages per lane, and less for each lane to pass on). */
int agx_multilane_fanout(int r, int lanes, int fanout);
/* multilane's radix K: min(r - 1, lanes * f) + 1, f = agx_multilane_fanout(). */
int agx_multilane_radix(int r, int lanes, int fanout);

#endif
