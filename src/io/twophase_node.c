/*
 * Intra-node aggregation (docs/algorithms.md, "Two-phase collective write", step 1b): the
 * first layer of TAM (Kang et al., KangRoss20's ref. [13]) at the level of requests, as
 * PnetCDF 1.14 does above MPI-IO with nc_num_aggrs_per_node=1. The ranks of each node
 * (agx's regions) hand their requests, and a write's data, to the node's first rank; it
 * merges them into file order and joins the runs that touch, so a node's many small
 * requests become few large ones; the node leaders alone then run the engine, on a
 * communicator of their own; a read's leader hands each rank its bytes back.
 *   1. gathers on the node: each rank's request count and bytes, its (offset, length)
 *      records (straight from its sorted requests: a resized datatype skips their
 *      buffer positions), a write's data in request order (from the user's buffer when
 *      it lies end to end there);
 *   2. the leader's k-way merge (a heap of the node's k lists), each record's place in
 *      the merged data, runs joined while they touch (at most 1 GiB each); a write's
 *      requests of two ranks that overlap: the library's own call (the MPI-IO entries)
 *      or an error (agx_file_write_all), agreed by the leaders' engine (a read's may
 *      overlap: their run holds the bytes once);
 *   3. the leaders' engine (agx_tp_run on the leaders' communicator, never nested again);
 *   4. the outcome broadcast on the node; a read's bytes scattered to the ranks.
 * Taken when the hint asks (agx_io_hints.node_aggr = 1, info key agx_node_aggregation =
 * enable), or when the MPI-IO drop-in's on-line choice (AGX_ADAPT, src/select/adapt_file.c)
 * timed it fastest on a file whose ranks span nodes; never by a rule (agx_tp_node_ok).
 */
#include "twophase.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define AGX_TP_NODE_RUN (1LL << 30) /* a joined run's bytes, at most */

typedef struct {
    MPI_Comm node, lead;        /* the node's ranks (its leader first); the leaders, or NULL */
    int k;                      /* the node's ranks */
    long long *hdr, *heap;      /* the leader's: 2 k counts, the merge's 3 k words */
    int *cnt;                   /* the leader's: 5 k + 1 counts and displacements */
} node_comms;

static void comms_free(void *p)
{
    node_comms *c = p;
    if (c->node != MPI_COMM_NULL)
        PMPI_Comm_free(&c->node);
    if (c->lead != MPI_COMM_NULL)
        PMPI_Comm_free(&c->lead);
    free(c->hdr);
    free(c->heap);
    free(c->cnt);
    free(c);
}

/* The communicators of t's context and the leader's arrays of one node's size, made at
 * the first call that aggregates (collective; a failure anywhere agreed). */
static int comms_of(agx_tp *t, const agx_regions *R, node_comms **out)
{
    if ((*out = agx_ctx_slot(t->a.ctx, AGX_SLOT_IO)))
        return MPI_SUCCESS;
    int me = t->a.rank, rc, all, k = R->size[R->region_of[me]], lead0 = R->local[me] == 0;
    node_comms *c = calloc(1, sizeof *c);
    if (c) {
        c->node = c->lead = MPI_COMM_NULL, c->k = k;
        if (lead0) {
            c->hdr = malloc(2 * (size_t)k * sizeof(long long));
            c->heap = malloc(3 * (size_t)k * sizeof(long long));
            c->cnt = malloc((5 * (size_t)k + 1) * sizeof(int));
        }
    }
    MPI_Comm node = MPI_COMM_NULL, lead = MPI_COMM_NULL;
    if ((rc = PMPI_Comm_split(t->a.comm, R->region_of[me], me, &node)) == MPI_SUCCESS)
        rc = PMPI_Comm_split(t->a.comm, lead0 ? 0 : MPI_UNDEFINED, me, &lead);
    if (rc == MPI_SUCCESS && lead != MPI_COMM_NULL)
        rc = agx_ctx_private(lead);
    int ok = rc == MPI_SUCCESS && c && (!lead0 || (c->hdr && c->heap && c->cnt));
    if ((rc = PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, t->a.comm)) == MPI_SUCCESS && !all)
        rc = agx_error(MPI_ERR_NO_MEM, "%s: could not make the node communicators", t->fn);
    if (!c) { /* nothing to keep them in */
        if (node != MPI_COMM_NULL)
            PMPI_Comm_free(&node);
        if (lead != MPI_COMM_NULL)
            PMPI_Comm_free(&lead);
        return rc;
    }
    c->node = node, c->lead = lead;
    if (rc != MPI_SUCCESS) {
        comms_free(c);
        return rc;
    }
    agx_ctx_attach(t->a.ctx, AGX_SLOT_IO, c, comms_free);
    *out = c;
    return MPI_SUCCESS;
}

int agx_tp_node_ok(const agx_tp *t, const agx_regions *R, long long bytes_max)
{
    /* Only when asked (node_aggr 1: the hint, or the on-line choice's turn or winner):
     * across emulated links it measured 1.04-1.39x faster than the engine alone, on shared
     * memory 1.4-1.8x slower (docs/RESULTS.md, "Intra-node aggregation in the engine"),
     * and agx's regions look the same either way: a rule could not tell. The node's
     * gathers count in ints: a node's records and bytes must fit. */
    return t->h.node_aggr > 0 && !t->no_node && !t->h.no_write && t->req_max <= INT_MAX / R->max_size &&
           bytes_max <= (INT_MAX - 1) / R->max_size;
}

/* Step 2: the leader's merge of k sorted lists (records rec, list s from first[s] to
 * first[s + 1]; heap: 3 k words): runs (moff, mlen), each record's place in the merged
 * data (dpos); returns the runs' count, or -1 when two records of a write overlap (a
 * read's may: ranks may read the same bytes, which its run then holds once). */
static long long merge(const long long *rec, const int *first, int k, int reading, long long *heap, MPI_Offset *moff,
                       int *mlen, long long *dpos)
{
    int nh = 0;
    long long *next = heap + 2 * k; /* per list: its next record */
    for (int s = 0; s < k; s++)
        next[s] = first[s];
    /* heap entries: (offset, list), ordered by offset */
#define KEY(i) heap[2 * (i)]
#define SIFT_DOWN(i0)                                                                              \
    for (int h_ = (i0), c_; (c_ = 2 * h_ + 1) < nh; h_ = c_) {                                     \
        if (c_ + 1 < nh && KEY(c_ + 1) < KEY(c_))                                                  \
            c_++;                                                                                  \
        if (KEY(h_) <= KEY(c_))                                                                    \
            break;                                                                                 \
        long long x0 = heap[2 * h_], x1 = heap[2 * h_ + 1];                                        \
        heap[2 * h_] = heap[2 * c_], heap[2 * h_ + 1] = heap[2 * c_ + 1];                          \
        heap[2 * c_] = x0, heap[2 * c_ + 1] = x1;                                                  \
    }
    for (int s = 0; s < k; s++)
        if (next[s] < first[s + 1])
            heap[2 * nh] = rec[2 * next[s]], heap[2 * nh + 1] = s, nh++;
    for (int i = nh / 2 - 1; i >= 0; i--)
        SIFT_DOWN(i)
    long long nrun = 0, end = -1, d = 0, run_off = 0, run_d = 0; /* d: the merged bytes so far */
    while (nh > 0) {
        int s = (int)heap[1];
        long long j = next[s]++, off = rec[2 * j], len = rec[2 * j + 1];
        if (off < end && !reading)
            return -1;
        long long e = off + len > end ? off + len : end;
        if (nrun && off <= end && e - run_off <= AGX_TP_NODE_RUN) /* joins the run (a read's may overlap it) */
            mlen[nrun - 1] = (int)(e - run_off);
        else
            run_off = off, run_d = d, e = off + len, moff[nrun] = off, mlen[nrun++] = (int)len;
        dpos[j] = run_d + (off - run_off);
        d = run_d + mlen[nrun - 1], end = e;
        if (next[s] < first[s + 1])
            heap[0] = rec[2 * next[s]];
        else
            heap[0] = heap[2 * (nh - 1)], heap[1] = heap[2 * (nh - 1) + 1], nh--;
        SIFT_DOWN(0)
    }
#undef SIFT_DOWN
#undef KEY
    return nrun;
}

/* A rank's bytes between its buffer (at its requests' positions) and `packed` (one after
 * another, request order): in (to packed) or out (from packed). */
static void pack(agx_tp *t, char *packed, int in)
{
    char *user = t->reading ? t->out : (char *)t->buf;
    for (long long i = 0, d = 0; i < t->nreq; d += t->req[i++].len)
        if (in)
            agx_tp_copy(packed + d, user + t->req[i].pos, t->req[i].len);
        else
            agx_tp_copy(user + t->req[i].pos, packed + d, t->req[i].len);
}

/* Where this rank's bytes lie end to end in its buffer, their start; else NULL. */
static char *end_to_end(const agx_tp *t)
{
    for (long long i = 1; i < t->nreq; i++)
        if (t->req[i].pos != t->req[i - 1].pos + t->req[i - 1].len)
            return NULL;
    return (t->reading ? t->out : (char *)t->buf) + (t->nreq ? t->req[0].pos : 0);
}

typedef struct {             /* the leader's side of one call (k-sized arrays: node_comms') */
    int k, *cnt, *dsp, *bcnt, *bdsp, *first;
    long long nrec, nbytes, nrun;
    long long *rec, *dpos, *heap;
    char *g, *m;             /* the node's bytes as gathered (rank order), and merged */
    MPI_Offset *moff;
    int *mlen;
} leader;

static void leader_free(leader *L)
{
    size_t n = (size_t)(L->nrec ? L->nrec : 1), b = (size_t)(L->nbytes ? L->nbytes : 1);
    agx_tp_buf_free(L->rec, 2 * n * sizeof(long long));
    agx_tp_buf_free(L->dpos, n * sizeof(long long));
    agx_tp_buf_free(L->g, b);
    agx_tp_buf_free(L->m, b);
    agx_tp_buf_free(L->moff, n * sizeof(MPI_Offset));
    agx_tp_buf_free(L->mlen, n * sizeof(int));
}

/* Steps 1-2 at the leader: the arrays for what the node sends (after the counts). */
static int leader_alloc(leader *L, const long long *hdr)
{
    for (int s = 0; s < L->k; s++) {
        L->first[s] = (int)L->nrec, L->cnt[s] = (int)hdr[2 * s], L->dsp[s] = (int)L->nrec;
        L->bcnt[s] = (int)hdr[2 * s + 1], L->bdsp[s] = (int)L->nbytes;
        L->nrec += hdr[2 * s], L->nbytes += hdr[2 * s + 1];
    }
    L->first[L->k] = (int)L->nrec;
    size_t n = (size_t)(L->nrec ? L->nrec : 1), b = (size_t)(L->nbytes ? L->nbytes : 1);
    L->rec = agx_tp_buf(2 * n * sizeof(long long));
    L->dpos = agx_tp_buf(n * sizeof(long long));
    L->g = agx_tp_buf(b);
    L->m = agx_tp_buf(b);
    L->moff = agx_tp_buf(n * sizeof(MPI_Offset));
    L->mlen = agx_tp_buf(n * sizeof(int));
    return L->rec && L->dpos && L->g && L->m && L->moff && L->mlen ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}

/* Step 2's data: each record's bytes between the gathered (rank order) and the merged
 * buffer; to the merged one for a write, back for a read. */
static void leader_move(leader *L, int to_merged)
{
    for (long long j = 0, gpos = 0; j < L->nrec; gpos += L->rec[2 * j + 1], j++)
        if (to_merged)
            agx_tp_copy(L->m + L->dpos[j], L->g + gpos, L->rec[2 * j + 1]);
        else
            agx_tp_copy(L->g + gpos, L->m + L->dpos[j], L->rec[2 * j + 1]);
}

/* Step 3: the leaders' engine on the merged runs (vote: this node asks for the library's
 * own call); its statistics added to this rank's. */
static int leaders_run(agx_tp *t, const node_comms *c, leader *L, int vote)
{
    agx_tp n = {.a = {.op = AGX_OP_ALLTOALLV, .user_comm = c->lead}, .h = t->h, .fh = t->fh, .pfd = t->pfd,
                .fn = t->fn, .n = (int)L->nrun, .off = L->moff, .len = L->mlen, .buf = L->m, .out = L->m,
                .reading = t->reading, .native_ok = 1, .no_node = 1};
    agx_io_stats st = {0};
    int rc = agx_tp_run(&n, vote, &st);
    if (rc != MPI_SUCCESS)
        return rc;
    t->st.meta_time += st.meta_time, t->st.data_time += st.data_time, t->st.io_time += st.io_time;
    t->st.bytes_written += st.bytes_written, t->st.write_calls += st.write_calls;
    t->st.bytes_read += st.bytes_read, t->st.read_calls += st.read_calls, t->st.sieve_reads += st.sieve_reads;
    t->st.rounds_visited += st.rounds_visited;
    t->st.rounds = st.rounds, t->st.aggregators = st.aggregators, t->st.is_aggregator = st.is_aggregator;
    return MPI_SUCCESS; /* the kernels: "node" on every rank, as the way the call went */
}

/* Steps 1-4 (after agreement A, every rank of t's communicator). */
int agx_tp_node(agx_tp *t, const agx_regions *R)
{
    node_comms *c;
    int rc = comms_of(t, R, &c), k, me, err = MPI_SUCCESS, any = 1;
    if (rc != MPI_SUCCESS)
        return rc;
    k = c->k;
    PMPI_Comm_rank(c->node, &me);
    t->node = 1;
    t->st.meta_kernel = t->st.data_kernel = "node";
    leader L = {.k = k, .cnt = c->cnt, .heap = c->heap};
    long long mine[2] = {t->nreq, t->bytes};
    char *mydata = NULL, *packed = NULL;
    double t0 = PMPI_Wtime();
    /* 1. the counts; every buffer made and any failure agreed on the node before data move */
    if ((rc = PMPI_Gather(mine, 2, MPI_LONG_LONG, c->hdr, 2, MPI_LONG_LONG, 0, c->node)) != MPI_SUCCESS)
        goto out;
    if (me == 0) {
        L.dsp = L.cnt + k, L.bcnt = L.cnt + 2 * k, L.bdsp = L.cnt + 3 * k, L.first = L.cnt + 4 * k;
        err = leader_alloc(&L, c->hdr);
    }
    if (agx_tp_reqs(t) != MPI_SUCCESS ||
        (!(mydata = end_to_end(t)) && !(mydata = packed = agx_tp_buf((size_t)(t->bytes ? t->bytes : 1)))))
        err = MPI_ERR_NO_MEM;
    int lerr = err != MPI_SUCCESS;
    if ((rc = PMPI_Allreduce(&lerr, &any, 1, MPI_INT, MPI_MAX, c->node)) != MPI_SUCCESS)
        goto out;
    if (!any) { /* the records, straight from the sorted requests, and a write's data */
        MPI_Datatype rec_t, pair_t;
        PMPI_Type_contiguous(2, MPI_LONG_LONG, &pair_t);
        PMPI_Type_create_resized(pair_t, 0, sizeof(agx_tp_req), &rec_t);
        PMPI_Type_commit(&rec_t), PMPI_Type_commit(&pair_t);
        rc = PMPI_Gatherv(t->req, (int)t->nreq, rec_t, L.rec, L.cnt, L.dsp, pair_t, 0, c->node);
        PMPI_Type_free(&rec_t), PMPI_Type_free(&pair_t);
        t->st.meta_time += PMPI_Wtime() - t0;
        double t1 = PMPI_Wtime();
        if (rc == MPI_SUCCESS && !t->reading) {
            if (packed)
                pack(t, packed, 1);
            rc = PMPI_Gatherv(mydata, (int)t->bytes, MPI_BYTE, L.g, L.bcnt, L.bdsp, MPI_BYTE, 0, c->node);
        }
        t->st.data_time += PMPI_Wtime() - t1;
        if (rc != MPI_SUCCESS)
            goto out;
    }
    /* 2-3. the leader's merge and the leaders' engine; every leader runs it, a node that
     * failed or overlaps with nothing and a vote for the library */
    int outcome[3] = {MPI_SUCCESS, 0, MPI_SUCCESS}; /* the leader's code (its own process's); 1: the
                                                     * library's own call; the code's class */
    const char *why = any ? "a rank of its node ran out of memory" : NULL;
    if (me == 0) {
        if (!any && (L.nrun = merge(L.rec, L.first, k, t->reading, L.heap, L.moff, L.mlen, L.dpos)) < 0)
            L.nrun = 0, why = "requests of two ranks of its node overlap";
        if (!why && !t->reading)
            leader_move(&L, 1);
        int r = leaders_run(t, c, &L, why != NULL);
        outcome[1] = r == AGX_IO_NATIVE && t->native_ok;
        outcome[0] = r != AGX_IO_NATIVE || t->native_ok ? r
                     : agx_error(any ? MPI_ERR_NO_MEM : MPI_ERR_ARG, "%s: %s", t->fn,
                                 why ? why : "another node's ranks overlap or ran out of memory");
        if (outcome[0] != MPI_SUCCESS && !outcome[1])
            PMPI_Error_class(outcome[0], &outcome[2]);
    }
    /* 4. the outcome (the wait for it is the rest: "other"); a read's bytes */
    rc = PMPI_Bcast(outcome, 3, MPI_INT, 0, c->node);
    double t2 = PMPI_Wtime();
    if (rc == MPI_SUCCESS && !outcome[1] && outcome[0] == MPI_SUCCESS && t->reading) {
        if (me == 0)
            leader_move(&L, 0);
        rc = PMPI_Scatterv(L.g, L.bcnt, L.bdsp, MPI_BYTE, mydata, (int)t->bytes, MPI_BYTE, 0, c->node);
        if (rc == MPI_SUCCESS && packed)
            pack(t, packed, 0);
    }
    t->st.data_time += PMPI_Wtime() - t2;
    if (rc == MPI_SUCCESS)
        rc = outcome[1] ? AGX_IO_NATIVE
             : outcome[0] == MPI_SUCCESS || me == 0
                 ? outcome[0]
                 : agx_error(outcome[2], "%s: the node's aggregator (rank %d) failed (its own error says why)", t->fn,
                             R->members[R->start[R->region_of[t->a.rank]]]);
out:
    agx_tp_buf_free(packed, (size_t)(t->bytes ? t->bytes : 1));
    leader_free(&L);
    return rc;
}
