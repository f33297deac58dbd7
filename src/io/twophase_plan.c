/*
 * Two-phase collective write and read, the plan (twophase.h): what each process can work out
 * alone, before and between the driver's agreements. Every allocation and check here is
 * followed by an agreement, so a failure on one rank fails the call everywhere.
 */
#include "twophase.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MIB (1024LL * 1024)

void agx_io_hints_init(agx_io_hints *h)
{
    if (h)
        *h = (agx_io_hints){.throttle = -1};
}

static int kernel_ok(const char *name)
{
    return !name || !strcasecmp(name, "auto") || !strcasecmp(name, "hybrid") ||
           agx_alg_find(AGX_OP_ALLTOALLV, AGX_KIND_INTRA, name) >= 0;
}

static int check_hints(agx_tp *t)
{
    agx_io_hints *h = &t->h;
    char names[256];
    if (h->aggregators < 0 || (h->layout != AGX_IO_EVEN && h->layout != AGX_IO_STRIPED) ||
        h->stripe_size < 0 || h->stripe_count < 0 || h->throttle < -1 || (h->no_write & ~1))
        return agx_error(MPI_ERR_ARG, "%s: invalid hints (aggregators %d, layout %d, stripe_size %lld, "
                         "stripe_count %d, throttle %d, no_write %d)", t->fn, h->aggregators, (int)h->layout,
                         h->stripe_size, h->stripe_count, h->throttle, h->no_write);
    if (h->cb_buffer_size < 0 || h->cb_buffer_size > (1LL << 30))
        return agx_error(MPI_ERR_ARG, "%s: cb_buffer_size %lld is not in [0, 1 GiB]", t->fn, h->cb_buffer_size);
    if (!kernel_ok(h->meta_kernel) || !kernel_ok(h->data_kernel)) {
        agx_alg_names(AGX_OP_ALLTOALLV, AGX_KIND_INTRA, names, sizeof names);
        return agx_error(MPI_ERR_ARG, "%s: unknown kernel '%s'; valid: auto, hybrid, %s", t->fn,
                         kernel_ok(h->meta_kernel) ? h->data_kernel : h->meta_kernel, names);
    }
    if (!h->stripe_size)
        h->stripe_size = MIB;
    if (!h->cb_buffer_size)
        h->cb_buffer_size = h->layout == AGX_IO_STRIPED && h->stripe_size <= (1LL << 30) ? h->stripe_size
                                                                                          : 16 * MIB;
    agx_a2a_args g;
    int rc = agx_a2a_env(t->a.ctx, &g); /* the throttle's default, and the send mode */
    if (rc != MPI_SUCCESS)
        return rc;
    t->throttle = h->throttle < 0 ? g.throttle : h->throttle;
    t->flags = g.send_flags;
    return MPI_SUCCESS;
}

unsigned long long agx_tp_hints_hash(const agx_io_hints *h)
{
    unsigned long long x = 1469598103934665603ULL;
    long long v[] = {h->aggregators, h->layout, h->stripe_size, h->stripe_count, h->cb_buffer_size,
                     h->throttle, h->no_write, h->no_sieve, h->cb_always, h->node_aggr};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        x = (x ^ (unsigned long long)v[i]) * 1099511628211ULL;
    for (const char *s = h->meta_kernel ? h->meta_kernel : "auto"; *s; s++)
        x = (x ^ (unsigned char)(*s | 0x20)) * 1099511628211ULL;
    x = (x ^ '/') * 1099511628211ULL;
    for (const char *s = h->data_kernel ? h->data_kernel : "auto"; *s; s++)
        x = (x ^ (unsigned char)(*s | 0x20)) * 1099511628211ULL;
    return x;
}

/* The file: default view (offsets in bytes), opened over comm's group. */
static int check_file(agx_tp *t)
{
    MPI_Offset disp;
    MPI_Datatype et, ft;
    char rep[MPI_MAX_DATAREP_STRING];
    MPI_Group fg, cg;
    int same, rc;
    if (t->pfd >= 0 || t->no_node) /* the drop-in's: its own default view over the file's group;
                                    * the node leaders': the whole call's, checked there */
        return MPI_SUCCESS;
    if (t->fh == MPI_FILE_NULL)
        return t->h.no_write ? MPI_SUCCESS : agx_error(MPI_ERR_FILE, "%s: fh is MPI_FILE_NULL", t->fn);
    if ((rc = MPI_File_get_view(t->fh, &disp, &et, &ft, rep)) != MPI_SUCCESS)
        return rc;
    int deflt = disp == 0 && et == MPI_BYTE && ft == MPI_BYTE;
    if (!agx_type_is_named(et))
        MPI_Type_free(&et);
    if (!agx_type_is_named(ft))
        MPI_Type_free(&ft);
    if (!deflt)
        return agx_error(MPI_ERR_ARG, "%s: fh has a file view; %s needs the default view (displacement 0, "
                         "MPI_BYTE, MPI_BYTE): offsets are bytes from the file's start", t->fn, t->fn);
    MPI_File_get_group(t->fh, &fg);
    MPI_Comm_group(t->a.user_comm, &cg);
    MPI_Group_compare(fg, cg, &same);
    MPI_Group_free(&fg);
    MPI_Group_free(&cg);
    if (same != MPI_IDENT && same != MPI_SIMILAR)
        return agx_error(MPI_ERR_COMM, "%s: comm is not the group that opened fh", t->fn);
    return MPI_SUCCESS;
}

static int by_offset(const void *x, const void *y)
{
    const agx_tp_req *a = x, *b = y;
    return a->off < b->off ? -1 : a->off > b->off;
}

int agx_tp_reqs(agx_tp *t)
{
    if (t->req || !t->nreq)
        return MPI_SUCCESS;
    if (!(t->req = agx_tp_buf(sizeof *t->req * (size_t)t->n)))
        return agx_error(MPI_ERR_NO_MEM, "%s: out of memory (%d requests)", t->fn, t->n);
    for (long long i = 0, k = 0, pos = 0; i < t->n; pos += t->len[i++])
        if (t->len[i] > 0)
            t->req[k++] = (agx_tp_req){.off = t->off[i], .len = t->len[i], .pos = pos};
    return MPI_SUCCESS;
}

/* The requests: checked, the empty ones dropped, sorted by offset, no two overlapping.
 * A view's stream is in file order: then one pass, in locals, checks order and overlap
 * and finds the span, and neither a sort nor a copy is paid for (the pieces are cut from
 * offsets and lengths as given; agx_tp_reqs makes the copy where a path wants it). */
static int sort_requests(agx_tp *t)
{
    long long pos = 0, nreq = 0, lo = LLONG_MAX, last = 0, end = -1, at = -1; /* last, end: the last request's
                                                                             * offset and end; at: an overlap's */
    int sorted = 1;
    if (t->n < 0)
        return agx_error(MPI_ERR_COUNT, "%s: negative request count %d", t->fn, t->n);
    if (t->n > 0 && (!t->off || !t->len))
        return agx_error(MPI_ERR_ARG, "%s: offsets or lengths is NULL", t->fn);
    const MPI_Offset *offs = t->off;
    const int *lens = t->len;
    for (int i = 0; i < t->n; i++) {
        long long off = offs[i], len = lens[i];
        if (len < 0 || off < 0 || off > LLONG_MAX - len)
            return agx_error(len < 0 ? MPI_ERR_COUNT : MPI_ERR_ARG, "%s: request %d (offset %lld, length %d) is "
                             "invalid", t->fn, i, off, lens[i]);
        if (len > 0) {
            sorted &= !nreq || last <= off;
            at = at < 0 && sorted && nreq && off < end ? off : at;
            lo = nreq ? lo : off, last = off, end = off + len, nreq++;
        }
        pos += len;
    }
    t->nreq = nreq, t->bytes = pos;
    if (pos > 0 && !t->buf)
        return agx_error(MPI_ERR_BUFFER, "%s: buf is NULL with %lld bytes to %s", t->fn, pos,
                         t->reading ? "read" : "write");
    long long overlap = -1;
    int rc;
    if (!sorted) { /* out of order: copied, sorted, then checked for overlap */
        if ((rc = agx_tp_reqs(t)) != MPI_SUCCESS)
            return rc;
        qsort(t->req, (size_t)t->nreq, sizeof *t->req, by_offset);
        for (long long i = 1; i < t->nreq && overlap < 0; i++)
            overlap = t->req[i].off < t->req[i - 1].off + t->req[i - 1].len ? i : -1;
        at = overlap >= 0 ? t->req[overlap].off : -1;
        lo = t->nreq ? t->req[0].off : LLONG_MAX; /* none overlapping: the last ends last */
        end = t->nreq ? t->req[t->nreq - 1].off + t->req[t->nreq - 1].len : -1;
    }
    t->lo = lo, t->hi = end;
    if (at >= 0 && t->native_ok)
        return t->overlap = 1, MPI_SUCCESS; /* the library decides (agx_tp_write) */
    if (at >= 0)
        return agx_error(MPI_ERR_ARG, "%s: rank %d's requests overlap at file offset %lld", t->fn, t->a.rank, at);
    return MPI_SUCCESS;
}

int agx_tp_check(agx_tp *t)
{
    int rc;
    size_t p = (size_t)t->a.p;
    if ((rc = check_hints(t)) != MPI_SUCCESS || (rc = check_file(t)) != MPI_SUCCESS)
        return rc;
    t->cnt_s = calloc(6 * p, sizeof(int));
    t->rcur = calloc(2 * p, sizeof(long long));
    t->snz = malloc(2 * p);
    t->aggr_rank = malloc(p * sizeof(int));
    if (!t->cnt_s || !t->rcur || !t->snz || !t->aggr_rank)
        return agx_error(MPI_ERR_NO_MEM, "%s: out of memory (p = %d)", t->fn, t->a.p);
    t->cnt_r = t->cnt_s + p;
    t->sc = t->cnt_s + 2 * p, t->sd = t->cnt_s + 3 * p, t->rc = t->cnt_s + 4 * p, t->rd = t->cnt_s + 5 * p;
    t->rnz = t->snz + p;
    t->rpos = t->rcur + p;
    return sort_requests(t);
}

/* Aggregators per node when the hints leave it to agx: one, or more when the call has so
 * many requests (the most of one rank, times p) or bytes (the span) that one aggregator's
 * merge, copies and file calls would be the call's longest task: one per
 * AGX_TP_RECORDS_PER_AGGR requests or AGX_TP_BYTES_PER_AGGR bytes in all (spread over
 * the nodes), the more of the two, at most twice the cores and the ranks of the smallest
 * node (OMPIO sizes its aggregators by bytes too). On 2 cores (docs/RESULTS.md, "MPI-IO
 * drop-in: the engine's own descriptor", "Aggregators by size"): a BTIO-shaped read of
 * 35 MB at 9 ranks, 20.3 ms median with four against 28.7 with one; BTIO through PnetCDF
 * and ROMIO at 8 ranks (18 MB per write), 43-65 ms for its two writes with four, 66-241
 * with one; E3SM-IO F (2 M requests, 32 MB) changed within this machine's noise. */
#define AGX_TP_RECORDS_PER_AGGR (512LL * 1024)
#define AGX_TP_BYTES_PER_AGGR (4LL << 20)
static int per_node(const agx_tp *t, const agx_regions *R)
{
    long long k = (t->req_max * t->a.p + AGX_TP_RECORDS_PER_AGGR - 1) / AGX_TP_RECORDS_PER_AGGR;
    long long kb = ((t->hi - t->lo + AGX_TP_BYTES_PER_AGGR - 1) / AGX_TP_BYTES_PER_AGGR + R->r - 1) / R->r;
    k = k > kb ? k : kb;
    k = k < 2LL * t->cores ? k : 2LL * t->cores;
    k = k < R->min_size ? k : R->min_size;
    return k > 1 ? (int)k : 1;
}

/* Aggregators spread over the regions (nodes): the first rank of every region, then the
 * second, ...; the domains over [lo, hi); the pattern (receivers: the aggregators). */
int agx_tp_aggregators(agx_tp *t)
{
    const agx_regions *R;
    int rc, p = t->a.p;
    if ((rc = agx_ctx_regions(t->a.ctx, &R)) != MPI_SUCCESS)
        return rc;
    t->naggr = t->h.aggregators ? (t->h.aggregators < p ? t->h.aggregators : p) : R->r * per_node(t, R);
    t->my_aggr = -1;
    for (int li = 0, k = 0; k < t->naggr && li < R->max_size; li++)
        for (int g = 0; g < R->r && k < t->naggr; g++)
            if (li < R->size[g]) {
                int r = R->members[R->start[g] + li];
                t->my_aggr = r == t->a.rank ? k : t->my_aggr;
                t->aggr_rank[k++] = r;
            }
    int sc = t->h.stripe_count ? t->h.stripe_count : t->naggr;
    if (agx_fd_init(&t->fd, t->h.layout == AGX_IO_STRIPED ? AGX_FD_STRIPED : AGX_FD_EVEN, t->naggr, t->lo, t->hi,
                    t->h.cb_buffer_size, t->h.stripe_size, sc))
        return agx_error(MPI_ERR_INTERN, "%s: file domains of [%lld, %lld)", t->fn, t->lo, t->hi);
    int *ns = t->sc; /* scratch */
    memset(ns, 0, sizeof(int) * (size_t)p);
    for (int k = 0; k < t->naggr; k++)
        ns[t->aggr_rank[k]] = 1;
    for (int r = 0; t->reading && r < p; r++) /* a read: the aggregators send, any rank receives */
        ns[r] = 1;
    if (agx_a2a_pattern_init(&t->pt, p, ns))
        return agx_error(MPI_ERR_NO_MEM, "%s: out of memory (p = %d)", t->fn, p);
    return MPI_SUCCESS;
}

/* Room for the records this rank receives (cnt_r, after the count exchange). */
int agx_tp_prepare_recv(agx_tp *t)
{
    int p = t->a.p;
    if (!(t->mstart = malloc(sizeof(long long) * (size_t)(p + 1))))
        return agx_error(MPI_ERR_NO_MEM, "%s: out of memory (p = %d)", t->fn, p);
    t->mstart[0] = 0;
    for (int s = 0; s < p; s++)
        t->mstart[s + 1] = t->mstart[s] + t->cnt_r[s];
    t->nmeta = t->mstart[p];
    if (t->nmeta > INT_MAX / AGX_TP_META_BYTES)
        return agx_error(MPI_ERR_COUNT, "%s: aggregator rank %d receives %lld request pieces (at most %d: more "
                         "aggregators)", t->fn, t->a.rank, t->nmeta, INT_MAX / AGX_TP_META_BYTES);
    size_t m = (size_t)(t->nmeta ? t->nmeta : 1);
    t->meta_r = agx_tp_buf(m * AGX_TP_META_BYTES);
    t->rround = agx_tp_buf(m * sizeof(long long));
    t->rsender = agx_tp_buf(m * sizeof(int));
    if (!t->meta_r || !t->rround || !t->rsender)
        return agx_error(MPI_ERR_NO_MEM, "%s: out of memory (%lld records)", t->fn, t->nmeta);
    return MPI_SUCCESS;
}

/* An aggregator's records: each one piece of its domain in one round (else a sender
 * computed other domains: an internal error); merged into file order (KangRoss20 Sec.
 * V: "the heap merge sort for I/O requests at I/O aggregators"); two records sharing a
 * byte are overlapping requests. Sizes the round buffers. */
int agx_tp_merge(agx_tp *t)
{
    long long *m = t->meta_r, round, pos, sum = 0;
    int aggr;
    for (int s = 0; s < t->a.p; s++) /* the scatter (twophase_scatter.c) needs them not */
        for (long long i = t->mstart[s]; i < t->mstart[s + 1]; i++)
            t->rsender[i] = s;
    for (long long i = 0; i < t->nmeta; i++) {
        long long o = m[2 * i], l = m[2 * i + 1];
        if (l < 1 || o < t->lo || o + l > t->hi || agx_fd_piece(&t->fd, o, o + l, &aggr, &round, &pos) != l ||
            aggr != t->my_aggr)
            return agx_error(MPI_ERR_INTERN, "%s: rank %d sent a piece [%lld, +%lld) outside aggregator %d's "
                             "domain", t->fn, t->rsender[i], o, l, t->my_aggr);
        t->rround[i] = round;
    }
    if (!(t->merged = agx_tp_buf((size_t)(t->nmeta ? t->nmeta : 1) * sizeof(long long))) ||
        agx_merge_sorted(t->a.p, t->mstart, m, 2, t->merged))
        return agx_error(MPI_ERR_NO_MEM, "%s: out of memory merging %lld records", t->fn, t->nmeta);
    for (long long k = 0; k < t->nmeta; k++) {
        long long i = t->merged[k], j = k > 0 ? t->merged[k - 1] : -1;
        int ov = !t->reading && j >= 0 && m[2 * j] + m[2 * j + 1] > m[2 * i]; /* ranks may read a byte twice */
        if (ov && t->native_ok)
            return t->overlap = 1, MPI_SUCCESS; /* MPI leaves the bytes undefined; the library decides */
        if (ov)
            return agx_error(MPI_ERR_ARG, "%s: requests of rank %d ([%lld, +%lld)) and rank %d ([%lld, +%lld)) "
                             "overlap", t->fn, t->rsender[j], m[2 * j], m[2 * j + 1], t->rsender[i], m[2 * i],
                             m[2 * i + 1]);
        sum = j >= 0 && t->rround[j] == t->rround[i] ? sum + m[2 * i + 1] : m[2 * i + 1];
        t->rbytes_max = sum > t->rbytes_max ? sum : t->rbytes_max;
    }
    if (t->rbytes_max > INT_MAX) /* a read's ranks may all ask for the same round's bytes */
        return agx_error(MPI_ERR_COUNT, "%s: aggregator rank %d moves %lld bytes in one round (at most INT_MAX: "
                         "lower cb_buffer_size or more aggregators)", t->fn, t->a.rank, t->rbytes_max);
    if (!(t->rbuf = agx_tp_buf((size_t)t->rbytes_max)) ||
        (!t->reading && !(t->wbuf = agx_tp_buf((size_t)t->rbytes_max))))
        return agx_error(MPI_ERR_NO_MEM, "%s: out of memory (%lld bytes per round)", t->fn, t->rbytes_max);
    return MPI_SUCCESS;
}
