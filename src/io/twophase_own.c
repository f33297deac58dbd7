/*
 * The two-phase write's (and read's) first question (ROMIO's automatic collective
 * buffering): does anyone gain from aggregation? When no two ranks' spans interleave and
 * the requests are large (16 KiB on average on every rank), or they interleave but are
 * larger still (64 KiB on average, or a stripe unit where the hints give one), the
 * aggregators would only copy each rank's bytes once more before moving them in pieces
 * no larger: each rank writes (reads) its own requests, adjacent ones in one call, and
 * each rank returns its own file calls' error, as ROMIO's independent path does (no rank
 * waits on another's file calls; since 2026-11-28: agreeing them, agreement D, made the
 * path's collectives two where ROMIO's are one). Cost of such a call: agreement A (one
 * more integer in it), one allgather of 32 B per rank (on up to AGX_AGREE_GATHER_P ranks,
 * agreement A is that allgather: agx_agree_gather), the rank's own file calls; no
 * exchange, no aggregator. A call that stays with the aggregators pays the allgather only when every
 * rank's requests are large. docs/algorithms.md, "Two-phase collective write".
 */
#include "twophase.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define OWN_MIN_BYTES 16384     /* each rank's mean request: below it, aggregation stays */
#define OWN_BIG_BYTES (64 << 10) /* the call's mean request from which spans may interleave */

static int auto_kernel(const char *k) { return !k || !strcasecmp(k, "auto"); }

static int by_lo(const void *x, const void *y)
{
    const long long *a = x, *b = y;
    return a[0] < b[0] ? -1 : a[0] > b[0];
}

/* Every rank's (lo, hi, requests, bytes): no two spans interleave, or the requests are so
 * large that aggregation would not make the writes larger (a stripe unit each where the
 * hints give one: no two ranks' writes share a stripe's lock more than at their ends). */
static int separate(long long *rec, int p, long long big)
{
    long long nreq = 0, bytes = 0;
    int k = 0;
    for (int r = 0; r < p; r++)
        if (rec[4 * r + 2] > 0) { /* ranks with requests, packed */
            nreq += rec[4 * r + 2], bytes += rec[4 * r + 3];
            memmove(rec + 4 * k++, rec + 4 * r, 4 * sizeof *rec);
        }
    if (nreq && bytes / nreq >= big)
        return 1;
    qsort(rec, (size_t)k, 4 * sizeof *rec, by_lo);
    for (int i = 1; i < k; i++)
        if (rec[4 * i] < rec[4 * (i - 1) + 1])
            return 0;
    return 1;
}

int agx_tp_own_ok(agx_tp *t)
{
    long long bytes = t->bytes; /* the non-empty requests' */
    if (t->h.cb_always || t->h.no_write || t->h.aggregators > 0 || !auto_kernel(t->h.meta_kernel) ||
        !auto_kernel(t->h.data_kernel))
        return 0;
    if (t->nreq && bytes / t->nreq < OWN_MIN_BYTES)
        return 0;
    long long *mine = t->own_rec = malloc(sizeof *t->own_rec * 4 * (size_t)t->a.p);
    if (!mine)
        return 0;
    mine += 4 * t->a.rank; /* this rank's record, gathered in place by agx_tp_own */
    mine[0] = t->nreq ? t->lo : 0, mine[1] = t->nreq ? t->hi : 0, mine[2] = t->nreq, mine[3] = bytes;
    return 1;
}

int agx_tp_own(agx_tp *t, long long *rec, int *done)
{
    int rc = rec ? MPI_SUCCESS : PMPI_Allgather(MPI_IN_PLACE, 4, MPI_LONG_LONG, t->own_rec, 4, MPI_LONG_LONG, t->a.comm);
    rec = rec ? rec : t->own_rec;
    *done = 0;
    if (rc != MPI_SUCCESS)
        return agx_error(rc, "%s: the ranks' spans could not be gathered", t->fn);
    long long big = t->h.layout == AGX_IO_STRIPED && t->h.stripe_size > OWN_BIG_BYTES ? t->h.stripe_size : OWN_BIG_BYTES;
    if (!separate(rec, t->a.p, big))
        return MPI_SUCCESS;
    *done = t->own = 1;
    int werr = agx_tp_reqs(t); /* this rank's own error, as its file calls' */
    if (werr != MPI_SUCCESS)
        return werr;
    for (long long i = 0; i < t->nreq;) { /* adjacent in the file and in the buffer: one call */
        long long j = i + 1, len = t->req[i].len;
        while (j < t->nreq && t->req[j].off == t->req[i].off + len && t->req[j].pos == t->req[i].pos + len &&
               len <= INT_MAX - t->req[j].len)
            len += t->req[j++].len;
        agx_tp_io(t, t->reading, t->req[i].off, (t->reading ? t->out : (char *)t->buf) + t->req[i].pos, len, len,
                  &werr);
        i = j;
    }
    return werr; /* its own error, not agreed: no rank waits on another's file calls */
}
