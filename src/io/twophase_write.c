/*
 * agx_file_write_all: two-phase collective write (KangRoss20 Sec. IV-V; ROMIO's
 * two-phase I/O, del Rosario et al.), with agx_alltoallv kernels in both exchanges.
 *
 *   1. local: hints checked and defaulted, requests sorted by offset (twophase_plan.c);
 *      agreement A (one allreduce): errors, the call's span [lo, hi), the hints alike;
 *   2. aggregators (hint, or one per node, spread; more for millions of requests) and
 *      file domains over [lo, hi)
 *      (even: GPFS-style; striped: Lustre-style); every request cut into pieces of one
 *      aggregator and one round (at most cb_buffer_size bytes per aggregator per round);
 *   3. metadata (twophase_meta.c): an alltoall of piece counts, agreement B (errors,
 *      rounds, the most senders of one aggregator, the records' form), then one exchange
 *      of (offset, length) records with the metadata kernel, once for the whole call as
 *      ROMIO does (KangRoss20 Fig. 6-7), 8 bytes each where they fit, else 16;
 *   4. aggregators place their records by offset (twophase_scatter.c) or merge them into
 *      file order (heap merge; the striped layout), and check a write's for overlap;
 *      agreement C (errors, the most senders of one aggregator in one round, whether
 *      the data are received in place);
 *   5. per round: each process sends its pieces of the round by aggregator (from its
 *      buffer where they lie end to end, else packed), one exchange with the data kernel
 *      (sizes known at both ends from the records: no agreement), or straight into the
 *      aggregators' stretches (twophase_typed.c); aggregators place the data in file
 *      order and write each contiguous run (or sieved stretch) with MPI_File_write_at; a
 *      failed write is remembered and the rounds go on;
 *   6. agreement D: any failed write fails the call on every rank.
 * After step 1 (the driver: twophase_run.c), a call whose ranks' spans do not interleave
 * and whose requests are large has each rank write its own (twophase_own.c), as ROMIO's
 * automatic mode does; one with many small requests on several nodes of several ranks
 * first merges each node's requests at its first rank, and only those ranks run the
 * steps below (twophase_node.c).
 * Cost per call: 4 small allreduces + 1 alltoall of p ints + 1 metadata exchange (8 or 16 B
 * per piece) + `rounds` data exchanges; the kernels' own costs are in the alltoallv table.
 */
#include "twophase.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static double now(void) { return PMPI_Wtime(); }


int agx_tp_pick(agx_tp *t, const char *hint, const char *hybrid, long long smax, int *alg)
{
    const char *name = !hint || !strcasecmp(hint, "auto") ? NULL : !strcasecmp(hint, "hybrid") ? hybrid : hint;
    t->pt.smax = (int)(smax > 0 ? smax : 1);
    if (name)
        *alg = agx_alg_find(AGX_OP_ALLTOALLV, AGX_KIND_INTRA, name);
    else {
        agx_args a = t->a;
        a.op = AGX_OP_ALLTOALLV;
        a.kind = AGX_KIND_INTRA;
        a.table = agx_table_of(a.op, a.kind);
        a.pattern = &t->pt;
        *alg = agx_select_rule(&a);
    }
    return *alg >= 0 ? MPI_SUCCESS : agx_error(MPI_ERR_INTERN, "%s: no kernel '%s'", t->fn, name);
}

int agx_tp_exchange(agx_tp *t, int alg, const void *sbuf, void *rbuf)
{
    return agx_a2a_exchange(&t->a, alg, &t->pt, t->throttle, t->flags, sbuf, t->sc, t->sd, rbuf, t->rc, t->rd,
                            t->snz, t->rnz);
}

/* The most senders of this aggregator in one round. Its records' rounds rise in file
 * order (a domain's stream is numbered in file order), so one walk of the merge with a
 * stamp per sender counts them: O(records + p), whatever the number of rounds. */
static long long round_senders(const agx_tp *t)
{
    long long best = 0, n = 0, *stamp = t->rcur; /* scratch; reset below */
    for (int s = 0; s < t->a.p; s++)
        stamp[s] = -1;
    for (long long k = 0; k < t->nmeta; k++) {
        long long i = t->merged[k], r = t->rround[i];
        if (k > 0 && r != t->rround[t->merged[k - 1]])
            n = 0;
        if (stamp[t->rsender[i]] != r)
            stamp[t->rsender[i]] = r, n++;
        best = n > best ? n : best;
    }
    for (int s = 0; s < t->a.p; s++)
        t->rcur[s] = t->mstart[s];
    return best;
}

/* The next round from r on in which this process sends a piece or, as an aggregator,
 * receives one (LLONG_MAX: none). */
static long long next_round(const agx_tp *t, long long r, long long ps, long long mc)
{
    long long n = LLONG_MAX;
    if (ps < t->npc)
        n = t->pc[ps].round;
    long long a = t->my_aggr < 0 ? LLONG_MAX : t->scatter ? agx_tp_scatter_next(t)
                : mc < t->nmeta ? t->rround[t->merged[mc]] : LLONG_MAX;
    n = a < n ? a : n;
    return n > r ? n : r;
}

/* Round r's sizes: what I send each aggregator (my pieces [*ps, ...) of round r, by
 * aggregator), and, as an aggregator, what each sender sends me. The data go from the
 * returned buffer: the user's own where agx_tp_direct finds them end to end, else packed
 * into sbuf. */
static const char *round_sizes(agx_tp *t, long long r, long long *ps)
{
    int p = t->a.p, direct = agx_tp_direct(t, r, ps, t->sc, t->sd);
    long long at = 0;
    memset(t->rc, 0, sizeof(int) * (size_t)p);
    if (!direct) {
        memset(t->sc, 0, sizeof(int) * (size_t)p);
        for (; *ps < t->npc && t->pc[*ps].round == r; (*ps)++) {
            const agx_tp_piece *q = &t->pc[*ps];
            int j = t->aggr_rank[q->aggr];
            if (!t->sc[j])
                t->sd[j] = (int)at;
            agx_tp_copy(t->sbuf + at, t->buf + q->pos, q->len);
            at += q->len;
            t->sc[j] += (int)q->len;
        }
    }
    at = 0;
    for (int s = 0; t->my_aggr >= 0 && s < p; s++) {
        t->rd[s] = (int)at;
        t->rpos[s] = at;
        long long bytes;
        agx_tp_sender_run(t, s, r, &bytes);
        t->rc[s] += (int)bytes;
        at += t->rc[s];
    }
    return direct ? t->buf : t->sbuf;
}

/* One file call: the bytes [off, off + len) read or written through the drop-in's
 * descriptor or the handle; MPI_SUCCESS or an MPI error code (the descriptor's failures:
 * MPI_ERR_IO and *eno, their errno); *count: the bytes moved. */
static int file_rw(agx_tp *t, int reading, long long off, char *data, long long len, int *count, int *eno)
{
    MPI_Status st;
    int rc;
    *count = 0, *eno = 0;
    if (t->pfd >= 0) {
        *count = (int)agx_posix_rw(t->pfd, reading, off, data, len, eno);
        return *eno ? MPI_ERR_IO : MPI_SUCCESS;
    }
    rc = reading ? MPI_File_read_at(t->fh, off, data, (int)len, MPI_BYTE, &st)
                 : MPI_File_write_at(t->fh, off, data, (int)len, MPI_BYTE, &st);
    if (rc == MPI_SUCCESS && MPI_Get_count(&st, MPI_BYTE, count) != MPI_SUCCESS)
        *count = -1;
    return rc;
}

int agx_tp_io(agx_tp *t, int reading, long long off, char *data, long long len, long long used, int *err)
{
    int count = 0, rc, eno;
    if (t->h.no_write || *err != MPI_SUCCESS || len <= 0)
        return MPI_SUCCESS;
    double t0 = now();
    rc = file_rw(t, reading, off, data, len, &count, &eno);
    t->st.io_time += now() - t0;
    *(reading ? &t->st.read_calls : &t->st.write_calls) += 1;
    if (rc == MPI_SUCCESS && count == len) {
        *(reading ? &t->st.bytes_read : &t->st.bytes_written) += used;
        return MPI_SUCCESS;
    }
    char msg[MPI_MAX_ERROR_STRING];
    int n, cls = MPI_ERR_IO;
    snprintf(msg, sizeof msg, "a short %s, %d bytes: %s", reading ? "read" : "write", count,
             reading ? "the file ended earlier" : "the file system refused the rest");
    if (eno)
        snprintf(msg, sizeof msg, "%s", strerror(eno));
    else if (rc != MPI_SUCCESS) {
        agx_error_string(rc, msg, &n);
        MPI_Error_class(rc, &cls);
    }
    *err = agx_error(cls, "%s: rank %d: %s of %lld bytes at offset %lld failed (%s)", t->fn, t->a.rank,
                     t->pfd >= 0 ? reading ? "pread" : "pwrite" : reading ? "MPI_File_read_at" : "MPI_File_write_at",
                     len, off, msg);
    return *err;
}

/* Data sieving: the file bytes [off, off + len) read into vbuf, so that the holes
 * between the records laid over them are written back unchanged. 0 (write run by run)
 * when sieving is off (romio_ds_write=disable), the handle cannot read (MPI_MODE_WRONLY)
 * or the read fails (then not again in this call), or there is no memory. Past the end
 * of the file the holes are zeros, as the file system's would be. */
static int sieve_read(agx_tp *t, long long off, long long len)
{
    int count = 0, eno;
    if (t->h.no_sieve || t->h.no_write || t->no_read)
        return 0;
    if (len > t->vcap) {
        char *v = realloc(t->vbuf, (size_t)len);
        if (!v)
            return 0;
        t->vbuf = v, t->vcap = len;
    }
    double t0 = now();
    int rc = file_rw(t, 1, off, t->vbuf, len, &count, &eno);
    t->st.io_time += now() - t0;
    if (rc != MPI_SUCCESS || count < 0 || count > len)
        return t->no_read = 1, 0;
    memset(t->vbuf + count, 0, (size_t)(len - count));
    t->st.sieve_reads++;
    return 1;
}

/* Round r at an aggregator: its records of the round in file order ([*mc, ...) of the
 * merge), each contiguous run written once; where a stretch of records (one stripe unit
 * in the striped layout, whose units other aggregators interleave; the round's whole part
 * of the domain in the even one) leaves holes, the stretch is read, the records laid over
 * it and written back in one call: data sieving, as ROMIO's and OMPIO's collective writes
 * do, one write where there would be one per run (E3SM's pieces: 10^5 writes per call). */
static void place_and_write(agx_tp *t, long long r, long long *mc, int *werr)
{
    while (*mc < t->nmeta && t->rround[t->merged[*mc]] == r) {
        long long k = *mc, first = t->meta_r[2 * t->merged[k]], end = first, runs = 0;
        long long unit = t->h.layout == AGX_IO_STRIPED ? first / t->fd.ss : 0;
        for (; k < t->nmeta && t->rround[t->merged[k]] == r; k++) {
            long long o = t->meta_r[2 * t->merged[k]];
            if (t->h.layout == AGX_IO_STRIPED && o / t->fd.ss != unit)
                break;
            runs += o != end || k == *mc;
            end = o + t->meta_r[2 * t->merged[k] + 1];
        }
        int sieve = runs > 1 && sieve_read(t, first, end - first);
        long long w = 0, run_off = -1, run_w = 0;
        for (; *mc < k; (*mc)++) {
            long long i = t->merged[*mc], o = t->meta_r[2 * i], l = t->meta_r[2 * i + 1];
            int s = t->rsender[i];
            if (sieve)
                agx_tp_copy(t->vbuf + (o - first), t->rbuf + t->rpos[s], l), w += l;
            else {
                if (run_off >= 0 && run_off + (w - run_w) != o) {
                    agx_tp_io(t, 0, run_off, t->wbuf + run_w, w - run_w, w - run_w, werr);
                    run_off = -1;
                }
                if (run_off < 0)
                    run_off = o, run_w = w;
                agx_tp_copy(t->wbuf + w, t->rbuf + t->rpos[s], l);
                w += l;
            }
            t->rpos[s] += l;
            t->rcur[s]++;
        }
        if (sieve)
            agx_tp_io(t, 0, first, t->vbuf, end - first, w, werr);
        else if (run_off >= 0)
            agx_tp_io(t, 0, run_off, t->wbuf + run_w, w - run_w, w - run_w, werr);
    }
}

/* Steps 4-6. A call whose span holds more rounds than pieces (a few bytes at offset 0
 * and at 1 TiB) visits only the rounds someone has data for: the next one is agreed (one
 * allreduce per visited round) instead of walking every empty one. */
int agx_tp_rounds(agx_tp *t)
{
    long long v[4] = {0, t->npc, 0, 0}, ps = 0, mc = 0;
    int local = t->my_aggr >= 0 ? agx_tp_scatter_plan(t) : MPI_SUCCESS, werr = MPI_SUCCESS, rc;
    if (local == MPI_SUCCESS && t->my_aggr >= 0 && !t->scatter && !t->overlap)
        local = agx_tp_merge(t);
    if (t->reading) { /* the senders are the aggregators: the most of them one rank hears */
        v[0] = agx_tp_read_senders(t);
        for (int s = 0; local == MPI_SUCCESS && t->my_aggr >= 0 && s < t->a.p; s++)
            t->rcur[s] = t->mstart[s];
    }
    else if (local == MPI_SUCCESS && t->my_aggr >= 0 && !t->overlap)
        v[0] = t->scatter ? agx_tp_scatter_senders(t) : round_senders(t);
    v[2] = t->overlap;
    v[3] = local != MPI_SUCCESS || !agx_tp_typed_vote(t); /* any rank's no: the kernels */
    if ((rc = agx_agree(t->a.comm, t->a.rank, local, v, 4, t->fn, "found overlapping requests or ran out of "
                        "memory")) != MPI_SUCCESS)
        return rc;
    t->typed = !v[3];
    if (v[2]) /* nothing written yet */
        return AGX_IO_NATIVE;
    if ((rc = agx_tp_pick(t, t->h.data_kernel, "issend_all", v[0], &t->alg_data)) != MPI_SUCCESS)
        return rc;
    int sparse = t->nrounds > 64 && t->nrounds / t->a.p > v[1];
    t->st.rounds_visited = 0;
    for (long long r = 0; r < t->nrounds; r++) {
        if (sparse) {
            long long nx = -next_round(t, r, ps, mc); /* agreed minimum */
            if ((rc = agx_agree(t->a.comm, t->a.rank, MPI_SUCCESS, &nx, 1, t->fn, "")) != MPI_SUCCESS)
                return rc;
            if ((r = -nx) == LLONG_MAX)
                break;
        }
        t->st.rounds_visited++;
        if (t->reading) {
            if ((rc = agx_tp_read_round(t, r, &ps, &mc, &werr)) != MPI_SUCCESS)
                return rc;
            continue;
        }
        const char *from = round_sizes(t, r, &ps);
        if (t->typed) {
            if ((rc = agx_tp_typed_round(t, r, from, &werr, sieve_read)) != MPI_SUCCESS)
                return rc;
            continue;
        }
        double t0 = now();
        if ((rc = agx_tp_exchange(t, t->alg_data, from, t->rbuf)) != MPI_SUCCESS)
            return rc;
        t->st.data_time += now() - t0;
        if (t->my_aggr >= 0)
            t->scatter ? agx_tp_scatter_round(t, r, &werr, sieve_read) : place_and_write(t, r, &mc, &werr);
    }
    return agx_agree(t->a.comm, t->a.rank, werr, NULL, 0, t->fn,
                     t->reading ? "failed to read its file domain" : "failed to write its file domain");
}
