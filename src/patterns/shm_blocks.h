/*
 * The blocks of SharedNotify's Allgather(V) (Algorithm 1, Listings 1-3, Eq. 3-4): every
 * process's contribution cut into data blocks of at most B bytes, numbered by one global
 * id that is continuous across the nodes (node 0's blocks first, within a node by local
 * rank, within a process in byte order), and each node's blocks split evenly over its
 * local processes, who write them to the next node of the ring. No MPI here
 * (tests/unit/test_shm_blocks.c).
 */
#ifndef AGX_SHM_BLOCKS_H
#define AGX_SHM_BLOCKS_H

#include "locality.h"

#include <stddef.h>

typedef struct {
    int p, r;
    long long B;            /* the largest block, bytes (AGX_SHM_BLOCK) */
    long long total;        /* blocks of all processes */
    long long *first;       /* first[v], v in region-member order (R->members), v = 0..p:
                             * the id of the first block of process members[v]; first[p] =
                             * total */
    long long *node_first;  /* node_first[k], k = 0..r: the first id of region k */
    const int *members;     /* R->members */
    const long long *len;   /* bytes of each rank's contribution (by rank) */
} agx_snb;

/* Eq. 3: the blocks of a contribution of len bytes cut at B bytes (B >= 1). */
static inline long long agx_snb_blocks(long long len, long long B) { return (len + B - 1) / B; }
/* The long longs agx_snb_init needs for its tables on p processes in r regions. */
size_t agx_snb_tables(int p, int r);
/* Blocks of all p contributions len[rank] (bytes) cut at B bytes (Eq. 3): s->total. */
long long agx_snb_count(const long long *len, int p, long long B);
/* Number the blocks of contributions len[rank] (bytes) over the regions of R: Eq. 3 gives
 * a process ceil(len / B) blocks, Listing 1 the first id. The tables live in mem
 * (agx_snb_tables(R->p, R->r) long longs, the caller's: nothing to free). */
void agx_snb_init(agx_snb *s, const agx_regions *R, const long long *len, long long B, long long *mem);
/* The blocks local process j of region k writes (Listing 3, Eq. 4): count, and the first
 * id in *first (the node's ids node_first[k] + offset, a contiguous run). */
long long agx_snb_work(const agx_snb *s, const agx_regions *R, int k, int j, long long *first);
/* Block id's process (a rank), byte offset within that process's contribution, bytes. */
void agx_snb_locate(const agx_snb *s, long long id, int *rank, long long *off, long long *bytes);
/* The region that holds block id. */
int agx_snb_region(const agx_snb *s, long long id);

#endif
