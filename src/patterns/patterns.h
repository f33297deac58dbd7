/*
 * Schedule math for collective algorithms: which peer, which blocks, in which round.
 * No MPI here, so every pattern is unit-tested by simulation (tests/unit).
 *
 * One schedule format serves every algorithm (the LibNBC split: an algorithm builds a
 * schedule, src/core/engine.c runs it). A schedule is one rank's list of operations,
 * each tagged with a round. In a round the engine posts every send and receive of that
 * round together, waits for them, then performs the round's local copies and reductions;
 * every rank numbers rounds the same way, so a message is sent and received in the same
 * round. An operation names a set of *blocks* of one of the call's buffers (the engine is
 * given the buffers as block layouts: for allgather, block i is rank i's contribution in
 * the receive buffer). A block set is a list of ranges of block indices, so contiguous
 * runs stay contiguous on the wire and a scattered set travels as one message.
 */
#ifndef AGX_PATTERNS_H
#define AGX_PATTERNS_H

/* ---- block sets: a builder's scratch list of ranges (at most AGX_SET_MAX) ---- */
#define AGX_SET_MAX 8

typedef struct {
    int first, len;
} agx_range;

typedef struct {
    int n;                       /* number of ranges in use */
    int overflow;                /* a range did not fit: the set is unusable (a bug) */
    agx_range r[AGX_SET_MAX];
} agx_blockset;

void agx_set_clear(agx_blockset *s);
void agx_set_add(agx_blockset *s, int first, int len);          /* len <= 0: ignored */
void agx_set_add_circular(agx_blockset *s, int start, int len, int p); /* wraps mod p */
int agx_set_size(const agx_blockset *s);                       /* number of blocks */
int agx_set_contains(const agx_blockset *s, int block);

/* ---- integer helpers ---- */
int agx_ceil_log2(int p);            /* smallest k with 2^k >= p; 0 for p <= 1 */
int agx_floor_pow2(int p);           /* largest power of two <= p (p >= 1) */
int agx_is_pow2(int p);
static inline int agx_mod(int a, int p) { int m = a % p; return m < 0 ? m + p : m; }
/* Blocks a Bruck-type step with distance d moves among n members: min(d, n - d). */
static inline int agx_bruck_count(int d, int n) { return d < n - d ? d : n - d; }
/* Number of rounds of a radix-k dissemination over n members: ceil(log_k n). */
int agx_ceil_logk(int n, int k);

/* ---- the schedule ---- */
enum { AGX_SOP_SEND = 0, AGX_SOP_RECV, AGX_SOP_COPY, AGX_SOP_REDUCE };
enum {
    AGX_SOP_ASYNC = 1u << 0,     /* send / receive completed at the end of the schedule,
                                  * not of its round (a send that overlaps later rounds) */
    AGX_SOP_SYNC = 1u << 1,      /* send: synchronous mode (MPI_Issend) */
};

typedef struct {
    int round;
    unsigned char kind;          /* AGX_SOP_* */
    unsigned char flags;
    unsigned char buf;           /* buffer the blocks live in (send source, receive target,
                                  * copy / reduce target) */
    unsigned char src;           /* copy / reduce: buffer read, same block indices */
    int peer;                    /* send / receive: rank on the schedule's communicator */
    int tag;                     /* 0: the engine's tag */
    int r0, nr;                  /* the op's block ranges: ranges[r0 .. r0 + nr) */
} agx_sop;

typedef struct {
    int n, cap;
    agx_sop *ops;                /* in round order (agx_sched_finish sorts) */
    int nranges, rcap;
    agx_range *ranges;
    int nrounds;                 /* highest round + 1 (may be raised by builders: padding) */
    int bad;                     /* out of memory or a block set overflowed: unusable */
} agx_sched;

void agx_sched_init(agx_sched *s);
void agx_sched_free(agx_sched *s);
/* dst = a copy of src with its own arrays (a plan outlives the cache's schedule); 0, or
 * -1 when out of memory (dst then empty). */
int agx_sched_copy(agx_sched *dst, const agx_sched *src);
/* Append an op over the ranges of `set` (send / receive with an empty set: skipped, both
 * sides compute the same set). Returns 0, or -1 (and s->bad) when out of memory. */
int agx_sched_add(agx_sched *s, int round, int kind, int peer, const agx_blockset *set);
/* The same with a tag and flags. */
int agx_sched_add_ex(agx_sched *s, int round, int kind, int peer, int tag, unsigned flags, int buf,
                     const agx_blockset *set);
/* A single range [first, first + len) (len <= 0: skipped). */
int agx_sched_add_range(agx_sched *s, int round, int kind, int peer, int first, int len);
/* The same with flags and a buffer. */
int agx_sched_add_range_ex(agx_sched *s, int round, int kind, int peer, unsigned flags, int buf, int first,
                           int len);
/* A local op (AGX_SOP_COPY / AGX_SOP_REDUCE) on blocks [first, first + len) of buffer
 * dst, reading the same blocks of buffer src (REDUCE: dst = src (+) dst). */
int agx_sched_add_local(agx_sched *s, int round, int kind, int dst, int src, int first, int len);
/* An arbitrary list of blocks (ascending runs are merged into ranges; no size limit). */
int agx_sched_add_blocks(agx_sched *s, int round, int kind, int peer, const int *blocks, int n);
/* Sort the ops by round (stable) and fix nrounds; returns 0, or -1 when s->bad. */
int agx_sched_finish(agx_sched *s);
/* Blocks of op, and whether it holds block b. */
int agx_sop_nblocks(const agx_sched *s, const agx_sop *op);
int agx_sop_has(const agx_sched *s, const agx_sop *op, int b);

/* ---- flat schedules: every builder appends rank r's ops of a p-process algorithm in
 * rounds round0 .., and returns the number of rounds it used, or -1 when out of memory.
 * `param` is the algorithm's tunable (radix), ignored by the others. ---- */
typedef int (*agx_build_fn)(agx_sched *s, int round0, int r, int p, int param);

/* ring: p-1 rounds, send block (r-s) to r+1, receive block (r-s-1) from r-1 */
int agx_build_ring(agx_sched *s, int round0, int r, int p, int param);
/* Bruck (Bienz Alg. 1): ceil(log2 p) rounds; at round k with d = 2^k, send the blocks
 * r..r+c-1 (mod p) to r-d and receive r+d..r+d+c-1 from r+d, c = min(d, p-d). Blocks are
 * named by their final index, so no rotation is needed at the end. */
int agx_build_bruck(agx_sched *s, int round0, int r, int p, int param);
/* k-port Bruck (MPICH k_brucks), radix k = param >= 2: ceil(log_k p) rounds; in round i
 * with D = k^i, for j = 1..k-1 (j D < p) send the c_j = min(D, p - jD) blocks r.. to
 * r - jD and receive r + jD.. from r + jD, the k-1 exchanges concurrent. k = 2 is bruck. */
int agx_build_kbruck(agx_sched *s, int round0, int r, int p, int param);
/* Sparbit (Loch & Koslovski 2021): L = ceil(log2 p) rounds with distances halving,
 * d = 2^(L-1-i): send to r+d and receive from r-d the blocks r - 2td (sent) and
 * r - (2t+1)d (received), t < n_i, one message each way per round; n_0 = 1,
 * n_{i+1} = 2 n_i - x_i, where x_i = 1 excludes the last transfer at the distances
 * that p's binary expansion skips, so any p works and no block arrives twice. */
int agx_build_sparbit(agx_sched *s, int round0, int r, int p, int param);
/* recursive doubling for any p (fold): with p2 = floor_pow2(p) and e = p - p2, ranks
 * p2..p-1 first hand their block to rank r - p2, the first p2 ranks run log2(p2) doubling
 * rounds (virtual rank v owns blocks v and v + p2), and finally ranks 0..e-1 send the
 * full result back to r + p2. log2(p2) + 2 rounds when e > 0. */
int agx_build_recursive_doubling(agx_sched *s, int round0, int r, int p, int param);
/* neighbour exchange (Chen et al., Open MPI's allgather "neighbor"), even p only: p/2
 * rounds; round 0 swaps single blocks inside pairs (2i, 2i+1), every later round
 * forwards the 2-block pair received in the previous round to the other neighbour. */
int agx_build_neighbor_exchange(agx_sched *s, int round0, int r, int p, int param);
/* linear gather of every block to rank 0 (one round: p-1 receives at the root) */
int agx_build_linear_gather(agx_sched *s, int round0, int r, int p, int param);
/* binomial broadcast of all p blocks from rank 0: ceil(log2 p) rounds; at round t ranks
 * r < 2^t send everything to r + 2^t. */
int agx_build_binomial_bcast(agx_sched *s, int round0, int r, int p, int param);
/* gather_bcast: linear gather, then binomial broadcast */
int agx_build_gather_bcast(agx_sched *s, int round0, int r, int p, int param);

#endif
