/*
 * Two-phase collective write and read: a rank's requests cut into pieces (one aggregator,
 * one round each), in the order each round packs them, and its (offset, length) records
 * for the aggregators (twophase.h). At E3SM-IO F scale a rank cuts 250 K requests of 8-24 B
 * and this was the largest part of a rank's CPU in the call; so the common case, requests
 * in file order over domains in rank order, is done in one pass: the records are written
 * compact (8 bytes, twophase_meta.c) as the pieces are made, in the order they are sent,
 * and the pieces' order and the round's bytes checked on the way. Anything else (domains
 * not in rank order, a striped layout, a gap or a length that needs 16 bytes) takes the
 * general path: the records grouped by aggregator afterwards, the pieces sorted.
 */
#include "twophase.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int by_round(const void *x, const void *y)
{
    const agx_tp_piece *a = x, *b = y;
    if (a->round != b->round)
        return a->round < b->round ? -1 : 1;
    if (a->aggr != b->aggr)
        return a->aggr < b->aggr ? -1 : 1;
    return a->off < b->off ? -1 : a->off > b->off;
}

/* The pieces, made in file order, ordered by (round, aggregator) keeping file order
 * within: a counting sort when there are not many more (round, aggregator) pairs than
 * pieces (O(pieces + pairs)), else qsort. */
static void order_pieces(agx_tp *t)
{
    long long K = t->nrounds * t->naggr, i = 1;
    while (i < t->npc && by_round(&t->pc[i - 1], &t->pc[i]) <= 0)
        i++;
    if (i >= t->npc) /* in order already */
        return;
    size_t n = sizeof(agx_tp_piece) * (size_t)t->npc;
    agx_tp_piece *out = K <= 4 * t->npc + 1024 ? agx_tp_buf(n) : NULL;
    long long *at = out ? calloc((size_t)K + 1, sizeof *at) : NULL;
    if (!at) {
        agx_tp_buf_free(out, n);
        qsort(t->pc, (size_t)t->npc, sizeof *t->pc, by_round);
        return;
    }
    for (long long i = 0; i < t->npc; i++)
        at[t->pc[i].round * t->naggr + t->pc[i].aggr + 1]++;
    for (long long k = 0; k < K; k++)
        at[k + 1] += at[k];
    for (long long i = 0; i < t->npc; i++)
        out[at[t->pc[i].round * t->naggr + t->pc[i].aggr]++] = t->pc[i];
    free(at);
    agx_tp_buf_free(t->pc, sizeof *t->pc * (size_t)t->pc_cap);
    t->pc = out, t->pc_cap = t->npc;
}

void agx_tp_meta_records(agx_tp *t)
{
    long long *at = t->rcur; /* scratch: next record per aggregator rank */
    for (int j = 0, s = 0; j < t->a.p; s += t->cnt_s[j++])
        at[j] = s;
    for (long long i = 0; i < t->npc; i++) {
        long long *m = t->meta_s + 2 * at[t->aggr_rank[t->pc[i].aggr]]++;
        m[0] = t->pc[i].off, m[1] = t->pc[i].len;
    }
    t->meta_compact = 0;
}

/* pc and meta_s (16 bytes a piece, whatever form it holds) with room for cap pieces;
 * t->npc entries of pc and nrec compact records of meta_s kept. */
static int grow(agx_tp *t, long long cap, long long nrec)
{
    agx_tp_piece *m = agx_tp_buf(sizeof *t->pc * (size_t)cap);
    long long *r = agx_tp_buf((size_t)cap * AGX_TP_META_BYTES);
    if (!m || !r) {
        agx_tp_buf_free(m, sizeof *t->pc * (size_t)cap), agx_tp_buf_free(r, (size_t)cap * AGX_TP_META_BYTES);
        return agx_error(MPI_ERR_NO_MEM, "%s: out of memory (%lld pieces)", t->fn, cap);
    }
    if (t->npc) /* a kept buffer cannot grow in place */
        memcpy(m, t->pc, sizeof *t->pc * (size_t)t->npc), memcpy(r, t->meta_s, (size_t)nrec * 2 * sizeof(uint32_t));
    agx_tp_buf_free(t->pc, sizeof *t->pc * (size_t)t->pc_cap);
    agx_tp_buf_free(t->meta_s, (size_t)t->meta_cap * AGX_TP_META_BYTES);
    t->pc = m, t->meta_s = r, t->pc_cap = t->meta_cap = cap;
    return MPI_SUCCESS;
}

/* runs: room for twice as many (round, aggregator) runs. */
static int grow_runs(agx_tp *t)
{
    long long cap = t->runs_cap ? 2 * t->runs_cap : 64, *r = realloc(t->runs, sizeof *r * (size_t)cap);
    if (!r)
        return agx_error(MPI_ERR_NO_MEM, "%s: out of memory (%lld runs of pieces)", t->fn, cap);
    t->runs = r, t->runs_cap = cap;
    return MPI_SUCCESS;
}

/* From request i (before lim) on, the requests as given that lie wholly in the last
 * piece's chunk (ending by chi) and after the end of its aggregator's last record (*prev):
 * their compact records written at cm, the run's entry grown from *el; the first request
 * not taken. The common case of the pass below (E3SM's: 250 K requests of 8-24 B, a few
 * hundred chunks), one test a request where the general loop made a dozen. */
static long long run_on(const MPI_Offset *offs, const int *lens, long long i, long long lim, long long chi,
                        long long *prev, long long *el, uint32_t *cm)
{
    long long p0 = *prev, e = *el;
    for (; i < lim; i++, cm += 2) {
        long long o = offs[i], l = lens[i];
        if ((l <= 0) | (o < p0) | (o > chi - l) | (o - p0 > UINT32_MAX) | (e > INT_MAX - l))
            break;
        cm[0] = (uint32_t)(o - p0), cm[1] = (uint32_t)l;
        p0 = o + l, e += l;
    }
    *prev = p0, *el = e;
    return i;
}

/* The pass over the requests (the file domains cut them into pieces); merge: a piece that
 * lies end to end in the buffer with its run's last (same round and aggregator) joins its
 * entry, while the records are compact (each piece's record is written here, so the
 * entries serve only the data's moves); *again: entries were joined and then the records
 * (not compact) or the order (not by round) needed every piece: cut again without. */
static int cut(agx_tp *t, int merge, int *again, int *sorted_out)
{
    long long round, clo = 1, chi = 0, cround = 0, sum = 0, prev = t->lo;
    int aggr, caggr = 0, rc; /* even layout: the (aggregator, round) chunk [clo, chi) of the last piece */
    int compact = 1, sorted = 1, last = -1, joined = 0; /* records so far: compact and in send order
                                                         * (last: the aggregator of the last); pieces: by_round */
    for (int k = 1; k < t->naggr; k++)
        compact &= t->aggr_rank[k - 1] < t->aggr_rank[k];
    merge &= compact;
    t->npc = 0;
    if (t->pc_cap < t->nreq + 16 && (rc = grow(t, t->nreq + 16, 0)) != MPI_SUCCESS)
        return rc;
    /* the loop's state in locals (stores through t's arrays would make the compiler
     * reload t's fields), and the count of the current aggregator's pieces in a register
     * until the aggregator changes */
    agx_tp_piece *pc = t->pc;
    uint32_t *cm = (uint32_t *)t->meta_s;
    long long npc = 0, nrec = 0, nrounds = t->nrounds, smax = t->sbytes_max, run = 0, lround = -1, loff = 0,
              lend = 0, nruns = 0;
    int contig = 1; /* every (round, aggregator) run of pieces end to end in the buffer */
    int laggr = -1, raggr = -1;
    const agx_tp_req *rq = t->req; /* NULL: the requests as given, in order (agx_tp_check) */
    const MPI_Offset *offs = t->off;
    const int *lens = t->len;
    for (long long i = 0, n = rq ? t->nreq : t->n, qpos = 0; i < n; i++) {
        if (!rq && merge && compact && npc && laggr == caggr && lround == cround && qpos == lend) {
            long long room = (t->pc_cap < INT_MAX / AGX_TP_META_BYTES ? t->pc_cap : INT_MAX / AGX_TP_META_BYTES) - nrec;
            long long el = pc[npc - 1].len, lim = i + room < n ? i + room : n;
            long long j = run_on(offs, lens, i, lim, chi, &prev, &el, cm + 2 * nrec);
            if (j > i) { /* the loop's state as the pieces one by one would have left it */
                long long moved = el - pc[npc - 1].len;
                pc[npc - 1].len = (int)el, joined = 1;
                nrec += j - i, run += j - i, qpos += moved, lend += moved, sum += moved;
                smax = sum > smax ? sum : smax, loff = offs[j - 1];
                if ((i = j) == n)
                    break;
            }
        }
        agx_tp_req q = rq ? rq[i] : (agx_tp_req){.off = offs[i], .len = lens[i], .pos = qpos};
        qpos += q.len;
        for (long long o = q.off, l, end = q.off + q.len; o < end; o += l) {
            int in = o >= clo && o < chi, ca; /* the chunk's state through temporaries: the */
            long long cr, cl, ch;            /* loop's own stays in registers */
            if (!in && !agx_fd_chunk(&t->fd, o, &ca, &cr, &cl, &ch))
                caggr = ca, cround = cr, clo = cl, chi = ch, in = 1;
            if (in)
                l = (end < chi ? end : chi) - o, aggr = caggr, round = cround;
            else
                l = agx_fd_piece(&t->fd, o, end, &ca, &cr, &cl), aggr = ca, round = cr; /* cl: its place, unused */
            if (nrec == INT_MAX / AGX_TP_META_BYTES) /* before a count can overflow */
                return agx_error(MPI_ERR_COUNT, "%s: rank %d has more than %d request pieces", t->fn, t->a.rank,
                                 INT_MAX / AGX_TP_META_BYTES);
            if (nrec == t->pc_cap) { /* npc <= nrec */
                t->npc = npc;
                if ((rc = grow(t, 2 * t->pc_cap, compact ? nrec : 0)) != MPI_SUCCESS)
                    return rc;
                pc = t->pc, cm = (uint32_t *)t->meta_s;
            }
            /* after the previous piece in the order rounds pack them? right after it in the
             * buffer, where it has the same round and aggregator? */
            long long at = q.pos + (o - q.off);
            int same = round == lround && aggr == laggr;
            sorted &= round > lround || (round == lround && (aggr > laggr || (aggr == laggr && o > loff)));
            if (!same) {
                if (nruns == t->runs_cap && (rc = grow_runs(t)) != MPI_SUCCESS)
                    return rc;
                t->runs[nruns++] = npc;
            } else
                contig &= at == lend;
            int join = merge && same && at == lend && pc[npc - 1].len <= INT_MAX - l;
            lend = at + l;
            sum = round == lround ? sum + l : l;
            smax = sum > smax ? sum : smax;
            if (compact && aggr != last) /* an aggregator's records start from the call's first byte */
                compact = aggr > last, prev = t->lo, last = aggr;
            if (compact && (o < prev || o - prev > UINT32_MAX || l > INT32_MAX))
                compact = 0;
            if (compact)
                cm[2 * nrec] = (uint32_t)(o - prev), cm[2 * nrec + 1] = (uint32_t)l, prev = o + l;
            nrec++;
            if (join)
                pc[npc - 1].len += (int)l, joined = 1;
            else
                pc[npc++] = (agx_tp_piece){.off = o, .pos = at, .round = round, .len = (int)l, .aggr = aggr};
            nrounds = round + 1 > nrounds ? round + 1 : nrounds;
            if (aggr != raggr) {
                if (raggr >= 0)
                    t->cnt_s[t->aggr_rank[raggr]] += (int)run;
                raggr = aggr, run = 0;
            }
            run++, lround = round, laggr = aggr, loff = o;
        }
    }
    if (raggr >= 0)
        t->cnt_s[t->aggr_rank[raggr]] += (int)run;
    t->npc = npc, t->nrounds = nrounds, t->sbytes_max = smax;
    t->nruns = nruns, t->contig = contig && sorted; /* the runs hold only in this order */
    t->meta_compact = compact;
    t->st.pieces = nrec;
    *again = joined && (!compact || !sorted);
    *sorted_out = sorted;
    return MPI_SUCCESS;
}

int agx_tp_pieces(agx_tp *t)
{
    int again, sorted, rc = cut(t, 1, &again, &sorted);
    if (rc == MPI_SUCCESS && again) {
        memset(t->cnt_s, 0, sizeof(int) * (size_t)t->a.p);
        rc = cut(t, 0, &again, &sorted);
    }
    if (rc != MPI_SUCCESS)
        return rc;
    if (!t->meta_compact) /* the general path: 16-byte records, compacted in twophase_meta.c if they fit */
        agx_tp_meta_records(t);
    if (!sorted) { /* the rounds' bytes again, by round */
        long long sum = 0;
        order_pieces(t);
        t->sbytes_max = 0;
        for (long long i = 0; i < t->npc; i++) {
            sum = i > 0 && t->pc[i].round == t->pc[i - 1].round ? sum + t->pc[i].len : t->pc[i].len;
            t->sbytes_max = sum > t->sbytes_max ? sum : t->sbytes_max;
        }
    }
    if (t->sbytes_max > INT_MAX)
        return agx_error(MPI_ERR_COUNT, "%s: rank %d sends %lld bytes in one round (at most INT_MAX: lower "
                         "cb_buffer_size or the aggregators)", t->fn, t->a.rank, t->sbytes_max);
    if (!(t->sbuf = agx_tp_buf((size_t)t->sbytes_max)))
        return agx_error(MPI_ERR_NO_MEM, "%s: out of memory (%lld bytes)", t->fn, t->sbytes_max);
    return MPI_SUCCESS;
}
