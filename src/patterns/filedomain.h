/*
 * Two-phase I/O's index math (KangRoss20 Sec. IV, Fig. 2; ROMIO's file domains): which
 * aggregator stores a file byte, in which round, and the k-way merge of the sorted
 * request lists an aggregator receives. No MPI here; tests/unit/test_filedomain.c checks
 * it against a byte-by-byte model.
 *
 * Every aggregator owns a *stream*: the bytes of its file domain in file order, numbered
 * from 0 (its local offset L). Round t of aggregator a covers stream bytes
 * [t cb, (t+1) cb): at most cb (the collective buffer) bytes per aggregator per round.
 *  - even (GPFS-style, Fig. 2b): [lo, hi) cut into naggr contiguous domains of
 *    ceil((hi - lo) / naggr) bytes; L = off - lo - a * dsize.
 *  - striped (Lustre-style, Fig. 2a): stripe units of ss bytes at absolute file offsets
 *    (unit u = off / ss), unit u on OST u mod sc, OST o served by aggregator o mod naggr;
 *    a's stream is its units in file order from lo's stripe row on.
 */
#ifndef AGX_FILEDOMAIN_H
#define AGX_FILEDOMAIN_H

typedef enum { AGX_FD_EVEN = 0, AGX_FD_STRIPED = 1 } agx_fd_style;

typedef struct {
    agx_fd_style style;
    int naggr;
    long long lo, hi;  /* the bytes the whole call writes: [lo, hi) */
    long long cb;      /* bytes per aggregator per round */
    long long ss;      /* striped: stripe size */
    int sc;            /* striped: stripe count */
    long long dsize;   /* even: bytes per domain */
    long long row0;    /* striped: lo's stripe row (lo / (ss sc)) */
} agx_fd;

/* 0, or -1 when a parameter is out of range (naggr < 1, cb < 1, hi < lo, striped with
 * ss < 1 or sc < 1). */
int agx_fd_init(agx_fd *fd, agx_fd_style style, int naggr, long long lo, long long hi, long long cb,
                long long ss, int sc);

/* The longest piece of [off, end) (off < end, inside [lo, hi)) that starts at off and lies
 * in one aggregator's stream, contiguously, within one round: its length; *aggr, *round
 * and *pos (its offset in the round's buffer, L mod cb) set. */
long long agx_fd_piece(const agx_fd *fd, long long off, long long end, int *aggr, long long *round,
                       long long *pos);

/* Even layout: the bytes [*clo, *chi) of the (aggregator, round) chunk that holds off
 * (lo <= off < hi), *aggr and *round set; every piece inside it is that aggregator's in
 * that round at pos off' - *clo, so the next offsets need none of agx_fd_piece's
 * divisions. -1 (nothing set) for the striped layout, whose chunks are not contiguous. */
int agx_fd_chunk(const agx_fd *fd, long long off, int *aggr, long long *round, long long *clo, long long *chi);

/* k-way merge (a binary heap over the lists' heads, O(m log k)) of k lists sorted by key:
 * list i is key[start[i] .. start[i+1]) read with `stride` (key[j * stride]); out[0..m)
 * receives the indices j in ascending key order (ties: lower list first). Returns 0, or
 * -1 when out of memory. */
int agx_merge_sorted(int k, const long long *start, const long long *key, int stride, long long *out);

#endif
