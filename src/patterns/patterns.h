/*
 * Schedule math for collective algorithms: which peer, which blocks, at which step.
 * No MPI here, so every pattern is unit-tested by simulation (tests/unit).
 *
 * A schedule is a sequence of synchronous steps. At step s, rank r sends the block set
 * `send.set` to `send.peer` and receives `recv.set` from `recv.peer` (peer < 0: no
 * transfer in that direction). Block i is rank i's contribution. A block set is a short
 * list of ranges of block indices, so contiguous runs stay contiguous on the wire.
 */
#ifndef AGX_PATTERNS_H
#define AGX_PATTERNS_H

#define AGX_SET_MAX 8

typedef struct {
    int n;                       /* number of ranges in use */
    int overflow;                /* a range did not fit: the set is unusable (a bug) */
    struct { int first, len; } r[AGX_SET_MAX];
} agx_blockset;

typedef struct {
    int peer;                    /* < 0: no transfer */
    agx_blockset set;
} agx_xfer;

typedef struct {
    agx_xfer send, recv;
} agx_step;

/* A schedule generator: fills `st` for rank r of p at step s (0 <= s < nsteps(p)). */
typedef int (*agx_nsteps_fn)(int p);
typedef void (*agx_step_fn)(int r, int p, int s, agx_step *st);

/* ---- block sets ---- */
void agx_set_clear(agx_blockset *s);
void agx_set_add(agx_blockset *s, int first, int len);          /* len <= 0: ignored */
void agx_set_add_circular(agx_blockset *s, int start, int len, int p); /* wraps mod p */
int agx_set_size(const agx_blockset *s);                       /* number of blocks */
int agx_set_contains(const agx_blockset *s, int block);

/* Both directions idle (the start of every step function). */
void agx_step_idle(agx_step *st);

/* ---- integer helpers ---- */
int agx_ceil_log2(int p);            /* smallest k with 2^k >= p; 0 for p <= 1 */
int agx_floor_pow2(int p);           /* largest power of two <= p (p >= 1) */
int agx_is_pow2(int p);
static inline int agx_mod(int a, int p) { int m = a % p; return m < 0 ? m + p : m; }

/* ---- ring: p-1 steps, send block (r-s) to r+1, receive block (r-s-1) from r-1 ---- */
int agx_ring_nsteps(int p);
void agx_ring_step(int r, int p, int s, agx_step *st);

/* ---- Bruck (seed 002, Algorithm 1): ceil(log2 p) steps; at step k with d = 2^k, send
 * the blocks r..r+c-1 (mod p) to r-d and receive r+d..r+d+c-1 from r+d, c = min(d, p-d).
 * Blocks are named by their final index, so no rotation is needed at the end. ---- */
int agx_bruck_nsteps(int p);
void agx_bruck_step(int r, int p, int s, agx_step *st);

/* ---- recursive doubling for any p (fold): with p2 = floor_pow2(p) and e = p - p2,
 * ranks p2..p-1 first hand their block to rank r - p2, the first p2 ranks run
 * log2(p2) doubling steps (virtual rank v owns blocks v and v + p2), and finally ranks
 * 0..e-1 send the full result back to r + p2. log2(p2) + 2 steps when e > 0. ---- */
int agx_rd_nsteps(int p);
void agx_rd_step(int r, int p, int s, agx_step *st);

/* ---- neighbour exchange (Chen et al., Open MPI's allgather "neighbor"), even p only:
 * p/2 steps; step 0 swaps single blocks inside pairs (2i, 2i+1), every later step
 * forwards the 2-block pair received in the previous step to the other neighbour. ---- */
int agx_nex_nsteps(int p);
void agx_nex_step(int r, int p, int s, agx_step *st);

/* ---- binomial broadcast of all p blocks from rank 0: ceil(log2 p) steps; at step s
 * ranks r < 2^s send everything to r + 2^s. ---- */
int agx_binomial_bcast_nsteps(int p);
void agx_binomial_bcast_step(int r, int p, int s, agx_step *st);

/* ---- linear gather to rank 0 (LNBC's gather): one step in which every rank r > 0
 * sends block r to 0. Rank 0 receives p-1 messages; agx_linear_gather_step describes
 * the non-root side, the root posts one receive per peer. ---- */
int agx_linear_gather_nsteps(int p);
void agx_linear_gather_step(int r, int p, int s, agx_step *st);

#endif
