/*
 * An aggregator's records of a collective write placed without a merge (docs/algorithms.md,
 * "Two-phase collective write", step 4). A write's records may not share a byte, so their
 * place in a round's stretch is their offset: each sender's data is copied straight to it,
 * sender by sender, and the file order the heap merge (agx_tp_merge) computed is never
 * needed. What the merge gave is found in one pass over the records instead: overlap (a
 * bitmap of the aggregator's domain, one bit per byte), each round's stretch [first, end)
 * and bytes (holes: fewer bytes than the stretch), and the most senders of one round.
 * E3SM-shaped calls (2 M records of 8-24 B) spent most of their aggregators' time in the
 * merge. Taken in the even layout when the bitmap stays small (AGX_TP_BITS_MAX); the
 * striped layout keeps the merge. A read's ranks may ask for the same byte: its records
 * are not checked for overlap, and the bitmap (the union of the records) is kept only
 * where the stretch is read run by run (romio_ds_read=disable); each round's stretch is
 * read once and each rank's records copied from it in that rank's order
 * (agx_tp_scatter_read).
 */
#include "twophase.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define AGX_TP_BITS_MAX (32LL << 20) /* bytes of bitmap: a domain of up to 256 MiB */

typedef unsigned long long word;

/* Marks [a, b) of the bitmap (one word more than its bits, zero); 1 when one of its bits
 * was already set. A range of at most 64 bits (E3SM's records: 8-24) spans one word or
 * two, marked without a loop or a branch: both words, the second's mask 0 where the
 * range ends in the first (a branch there missed on a record in three or so). */
static int mark(word *bits, long long a, long long b)
{
    long long n = b - a, w = a >> 6;
    if (n <= 64) {
        int sh = (int)(a & 63);
        word full = n == 64 ? ~0ull : (1ull << n) - 1, lo = full << sh;
        word hi = (full >> 1) >> (63 - sh); /* full >> (64 - sh), 0 where sh = 0 */
        word seen = (bits[w] & lo) | (bits[w + 1] & hi);
        bits[w] |= lo, bits[w + 1] |= hi;
        return seen != 0;
    }
    int seen = 0;
    while (a < b) {
        long long e = (w + 1) << 6 < b ? (w + 1) << 6 : b;
        word m = (e - a == 64 ? ~0ull : ((1ull << (e - a)) - 1)) << (a & 63);
        seen |= (bits[w] & m) != 0;
        bits[w] |= m;
        a = e, w = a >> 6;
    }
    return seen;
}

int agx_tp_scatter_plan(agx_tp *t)
{
    t->scatter = 0;
    long long nr = t->nrounds, dsize = t->fd.dsize, dlo = t->fd.lo + t->my_aggr * dsize;
    if (t->fd.style != AGX_FD_EVEN || (dsize + 7) / 8 > AGX_TP_BITS_MAX || nr < 1 || nr > (1 << 20))
        return MPI_SUCCESS; /* the merge */
    size_t nb = (size_t)((dsize + 63) / 64 + 1) * sizeof(word), nrr = (size_t)nr * 4 * sizeof(long long);
    size_t ne = (size_t)(t->nmeta ? t->nmeta : 1) * 2 * sizeof(long long);
    word *bits = agx_tp_buf(nb);
    long long *rr = agx_tp_buf(nrr), *rend = agx_tp_buf(ne); /* per round: first, end, bytes, senders */
    if (!bits || !rr || !rend) {
        agx_tp_buf_free(bits, nb), agx_tp_buf_free(rr, nrr), agx_tp_buf_free(rend, ne);
        return MPI_SUCCESS;
    }
    memset(bits, 0, nb);
    memset(rr, 0, nrr);
    t->bits = bits, t->rr = rr, t->dlo = dlo, t->rend = rend;
    const long long *m = t->meta_r, *ms = t->mstart, lo = t->lo, hi = t->hi;
    long long *rround = t->rround, clo = 1, chi = 0, round = 0;
    int rc = MPI_SUCCESS, aggr = -1, marks = !t->reading || t->h.no_sieve;
    for (long long r = 0; r < nr; r++)
        rr[4 * r] = LLONG_MAX;
    /* A sender's records come in file order, a run of them per (aggregator, round) chunk
     * [clo, chi): each is checked against its chunk, the first of a run also (and any
     * that fails) against agx_fd_chunk; the round's stretch and bytes are added per run. */
    for (int s = 0; s < t->a.p && rc == MPI_SUCCESS && !t->overlap; s++)
        for (long long i = ms[s], last = -1, start = i; i < ms[s + 1];) {
            long long o = m[2 * i], l = m[2 * i + 1];
            if (l < 1 || o < lo || o + l > hi ||
                (!(o >= clo && o < chi) && agx_fd_chunk(&t->fd, o, &aggr, &round, &clo, &chi)) ||
                aggr != t->my_aggr || o + l > chi || round >= nr) { /* a piece of my domain, one round */
                rc = agx_error(MPI_ERR_INTERN, "%s: rank %d sent a piece [%lld, +%lld) outside aggregator %d's "
                               "domain", t->fn, s, o, l, t->my_aggr);
                break;
            }
            long long low = clo > lo ? clo : lo, lim = chi < hi ? chi : hi, mn = o, mx = 0, bytes = 0, j = i;
            for (; j < ms[s + 1]; j++) {
                o = m[2 * j], l = m[2 * j + 1];
                if (o < low || l < 1 || o + l > lim)
                    break;
                if (marks && mark(bits, o - dlo, o - dlo + l) && !t->reading) { /* a read's ranks may ask
                                                                                  * for one byte twice */
                    if (t->native_ok) /* MPI leaves the bytes undefined; the library decides */
                        t->overlap = 1;
                    else
                        rc = agx_error(MPI_ERR_ARG, "%s: the request [%lld, +%lld) of rank %d overlaps another "
                                       "request", t->fn, o, l, s);
                    break;
                }
                mn = o < mn ? o : mn, mx = o + l > mx ? o + l : mx, bytes += l;
            }
            if (rc != MPI_SUCCESS || t->overlap)
                break;
            long long *q = rr + 4 * round;
            q[0] = mn < q[0] ? mn : q[0], q[1] = mx > q[1] ? mx : q[1], q[2] += bytes;
            q[3] += round != last; /* a sender's rounds rise: counted once each */
            if (round != last) /* a run's first record: its round, end and bytes (agx_tp_sender_run) */
                start = i, rround[i] = round, rend[2 * i + 1] = 0;
            rend[2 * start] = j, rend[2 * start + 1] += bytes;
            last = round, i = j;
        }
    if (rc != MPI_SUCCESS || t->overlap)
        return rc;
    t->rbytes_max = 0;
    for (long long r = 0; r < nr; r++)
        t->rbytes_max = rr[4 * r + 2] > t->rbytes_max ? rr[4 * r + 2] : t->rbytes_max;
    if (t->rbytes_max > INT_MAX)
        rc = agx_error(MPI_ERR_COUNT, "%s: aggregator rank %d receives %lld bytes in one round (at most INT_MAX)",
                       t->fn, t->a.rank, t->rbytes_max);
    else if (!(t->rbuf = agx_tp_buf((size_t)t->rbytes_max)) ||
             (!t->reading && !(t->wbuf = agx_tp_buf((size_t)t->rbytes_max))))
        rc = agx_error(MPI_ERR_NO_MEM, "%s: out of memory (%lld bytes per round)", t->fn, t->rbytes_max);
    for (int s = 0; s < t->a.p; s++)
        t->rcur[s] = t->mstart[s];
    t->scatter = 1;
    return rc;
}

long long agx_tp_scatter_senders(const agx_tp *t)
{
    long long best = 0;
    for (long long r = 0; r < t->nrounds; r++)
        best = t->rr[4 * r + 3] > best ? t->rr[4 * r + 3] : best;
    return best;
}

/* The aggregator's next round with records, from its senders' next records (LLONG_MAX: none). */
long long agx_tp_scatter_next(const agx_tp *t)
{
    long long n = LLONG_MAX;
    for (int s = 0; s < t->a.p; s++)
        if (t->rcur[s] < t->mstart[s + 1] && t->rround[t->rcur[s]] < n)
            n = t->rround[t->rcur[s]];
    return n;
}

char *agx_tp_stretch(agx_tp *t, long long r, int *werr, int (*sieve)(agx_tp *, long long, long long), int *read)
{
    const long long *q = t->rr + 4 * r;
    long long first = q[0], len = q[1] - q[0];
    *read = 0;
    if (q[2] == 0)
        return NULL;
    int holes = q[2] < len;
    *read = holes && sieve(t, first, len);
    if (holes && !*read && len > t->vcap) {
        char *v = realloc(t->vbuf, (size_t)len);
        if (!v) {
            *werr = *werr != MPI_SUCCESS ? *werr : agx_error(MPI_ERR_NO_MEM, "%s: out of memory", t->fn);
            return NULL;
        }
        t->vbuf = v, t->vcap = len;
    }
    return !holes ? t->wbuf : t->vbuf;
}

/* Sender s's records from rcur[s] up to record end, those that start before file offset
 * lim, between the stretch (from file offset first) and packed; rcur[s] moved past them.
 * Their bytes. */
static long long place_to(agx_tp *t, int s, long long end, long long lim, long long first, char *stretch,
                          char *packed, int dir)
{
    const long long *m = t->meta_r;
    long long i = t->rcur[s], at = 0;
    for (; i < end && m[2 * i] < lim; at += m[2 * i + 1], i++)
        if (dir == AGX_TP_IN)
            agx_tp_copy(stretch + (m[2 * i] - first), packed + at, m[2 * i + 1]);
        else if (dir == AGX_TP_OUT)
            agx_tp_copy(packed + at, stretch + (m[2 * i] - first), m[2 * i + 1]);
    t->rcur[s] = i;
    return at;
}

long long agx_tp_place(agx_tp *t, int s, long long r, char *stretch, char *packed, int dir)
{
    long long bytes, end = agx_tp_sender_run(t, s, r, &bytes);
    return place_to(t, s, end, LLONG_MAX, t->rr[4 * r], stretch, packed, dir);
}

/* Every sender's records of round r between the stretch and rbuf (at rpos). A stretch
 * larger than PLACE_TILE is placed a tile at a time, each sender's records of the tile in
 * turn: the senders' records interleave in the file (E3SM's: 8-24 B each, from every
 * rank), and sender by sender over the whole stretch each pass brought every cache line of
 * it in again. */
#define PLACE_TILE (64LL << 10)
static void place_all(agx_tp *t, long long r, char *stretch, int dir)
{
    const long long first = t->rr[4 * r];
    int p = t->a.p;
    long long *end = dir != AGX_TP_SKIP && t->rr[4 * r + 1] - first > PLACE_TILE ? malloc(sizeof *end * (size_t)p)
                                                                                   : NULL;
    if (!end) {
        for (int s = 0; s < p; s++)
            t->rpos[s] += agx_tp_place(t, s, r, stretch, t->rbuf + t->rpos[s], dir);
        return;
    }
    for (int s = 0; s < p; s++) {
        long long bytes;
        end[s] = agx_tp_sender_run(t, s, r, &bytes);
    }
    for (long long lim = first + PLACE_TILE, more = 1; more; lim += PLACE_TILE) {
        more = 0;
        for (int s = 0; s < p; s++) {
            t->rpos[s] += place_to(t, s, end[s], lim, first, stretch, t->rbuf + t->rpos[s], dir);
            more |= t->rcur[s] < end[s];
        }
    }
    free(end);
}

/* Round r's stretch written from (or read into) buf run by run: the runs of set bits. */
static void by_runs(agx_tp *t, long long r, char *buf, int reading, int *err)
{
    const long long *q = t->rr + 4 * r;
    long long first = q[0];
    for (long long a = first - t->dlo, end = q[1] - t->dlo; a < end;) {
        while (a < end && !(t->bits[a >> 6] >> (a & 63) & 1))
            a += (a & 63) == 0 && t->bits[a >> 6] == 0 ? 64 : 1; /* whole empty words at once */
        long long b = a < end ? a : end;
        while (b < end && (t->bits[b >> 6] >> (b & 63) & 1))
            b += (b & 63) == 0 && t->bits[b >> 6] == ~0ull ? 64 : 1;
        b = b < end ? b : end;
        if (b > a)
            agx_tp_io(t, reading, t->dlo + a, buf + (t->dlo + a - first), b - a, b - a, err);
        a = b;
    }
}

void agx_tp_stretch_write(agx_tp *t, long long r, char *dst, int read, int *werr)
{
    const long long *q = t->rr + 4 * r;
    long long first = q[0], len = q[1] - q[0];
    if (q[2] == len || read)
        agx_tp_io(t, 0, first, dst, len, q[2], werr);
    else
        by_runs(t, r, dst, 0, werr);
}

void agx_tp_scatter_read(agx_tp *t, long long r, int *rerr)
{
    const long long *q = t->rr + 4 * r;
    long long first = q[0], len = q[1] - q[0];
    if (q[2] == 0)
        return;
    if (len > t->vcap) {
        char *v = realloc(t->vbuf, (size_t)len);
        if (!v)
            *rerr = agx_error(MPI_ERR_NO_MEM, "%s: aggregator rank %d: out of memory (%lld bytes)", t->fn, t->a.rank,
                              len);
        else
            t->vbuf = v, t->vcap = len;
    }
    if (*rerr == MPI_SUCCESS && !t->h.no_sieve) {
        agx_tp_io(t, 1, first, t->vbuf, len, len, rerr);
        t->st.sieve_reads += q[2] != len;
    }
    else if (*rerr == MPI_SUCCESS)
        by_runs(t, r, t->vbuf, 1, rerr);
    int dir = *rerr == MPI_SUCCESS && !t->h.no_write ? AGX_TP_OUT : AGX_TP_SKIP;
    place_all(t, r, t->vbuf, dir);
}

void agx_tp_scatter_round(agx_tp *t, long long r, int *werr, int (*sieve)(agx_tp *, long long, long long))
{
    int read;
    char *dst = agx_tp_stretch(t, r, werr, sieve, &read);
    if (!dst)
        return;
    place_all(t, r, dst, AGX_TP_IN);
    agx_tp_stretch_write(t, r, dst, read, werr);
}
