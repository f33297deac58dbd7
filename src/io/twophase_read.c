/*
 * agx_file_read_all: the two-phase collective read (ROMIO's two-phase read, del Rosario
 * et al.; KangRoss20's kernels in the data exchange). The write's plan and agreements
 * (twophase_write.c) run unchanged; the rounds run the other way:
 *   - each aggregator reads its records of the round in file order (or, placed by offset
 *     in the even layout, the round's stretch and each rank's records from it in that
 *     rank's order: agx_tp_scatter_read, no merge), a stretch at a time
 *     (one stripe unit in the striped layout, the round's part of its domain in the even
 *     one): the whole stretch in one MPI_File_read_at, holes included (data sieving, as
 *     ROMIO's reads always do), or each contiguous run on its own (romio_ds_read=disable);
 *   - it packs each rank's pieces in that rank's record order and sends them with the data
 *     kernel (the senders: the aggregators; the receivers: any rank);
 *   - each rank copies its pieces of the round to their places in its buffer, or receives
 *     them there where they lie end to end in it (agx_tp_direct).
 * Ranks may read the same bytes (records of two ranks overlap at an aggregator); one
 * rank's overlapping requests go to the library (agx_mpi_file_read_all) or are an error
 * (agx_file_read_all), as for writes. A span past the end of the file (the smallest size
 * any rank sees, agreed in agreement A) is refused before anything is read: what the
 * library returns there (counts, undefined bytes) is its own. Cost per call: the write's
 * 4 allreduces, 1 alltoall of p ints and the metadata exchange, then per round one data
 * exchange and, at each aggregator, one read per stretch.
 */
#include "twophase.h"

#include <stdlib.h>
#include <string.h>

long long agx_tp_read_senders(const agx_tp *t)
{
    long long best = 0, n = 0;
    for (long long i = 0; i < t->npc; i++) { /* pieces by (round, aggregator) */
        int round_starts = i == 0 || t->pc[i].round != t->pc[i - 1].round;
        n = round_starts ? 1 : n + (t->pc[i].aggr != t->pc[i - 1].aggr);
        best = n > best ? n : best;
    }
    return best;
}

/* The file bytes [first, end) into vbuf: in one read, or run by run over the records
 * [k0, k1) of the merge (the holes between runs left unread). */
static void fetch(agx_tp *t, long long k0, long long k1, long long first, long long end, int *rerr)
{
    if (end - first > t->vcap) {
        char *v = realloc(t->vbuf, (size_t)(end - first));
        if (!v) {
            *rerr = agx_error(MPI_ERR_NO_MEM, "%s: aggregator rank %d: out of memory (%lld bytes)", t->fn, t->a.rank,
                              end - first);
            return;
        }
        t->vbuf = v, t->vcap = end - first;
    }
    if (!t->h.no_sieve) {
        agx_tp_io(t, 1, first, t->vbuf, end - first, end - first, rerr);
        t->st.sieve_reads += k1 - k0 > 1;
        return;
    }
    for (long long k = k0, a = -1, b = -1; k <= k1; k++) { /* maximal runs [a, b) */
        long long o = k < k1 ? t->meta_r[2 * t->merged[k]] : -1, l = k < k1 ? t->meta_r[2 * t->merged[k] + 1] : 0;
        if (k < k1 && a >= 0 && o <= b) {
            b = o + l > b ? o + l : b;
            continue;
        }
        if (a >= 0)
            agx_tp_io(t, 1, a, t->vbuf + (a - first), b - a, b - a, rerr);
        a = o, b = o + l;
    }
}

/* Round r at an aggregator: its records of the round in file order, a stretch at a time,
 * read and packed by rank (rpos: where the next record of each rank goes in rbuf). */
static void read_and_pack(agx_tp *t, long long r, long long *mc, int *rerr)
{
    while (*mc < t->nmeta && t->rround[t->merged[*mc]] == r) {
        long long k = *mc, first = t->meta_r[2 * t->merged[k]], end = first;
        long long unit = t->h.layout == AGX_IO_STRIPED ? first / t->fd.ss : 0;
        for (; k < t->nmeta && t->rround[t->merged[k]] == r; k++) {
            long long o = t->meta_r[2 * t->merged[k]], e = o + t->meta_r[2 * t->merged[k] + 1];
            if (t->h.layout == AGX_IO_STRIPED && o / t->fd.ss != unit)
                break;
            end = e > end ? e : end;
        }
        fetch(t, *mc, k, first, end, rerr);
        for (; *mc < k; (*mc)++) {
            long long i = t->merged[*mc], o = t->meta_r[2 * i], l = t->meta_r[2 * i + 1];
            int s = t->rsender[i];
            if (*rerr == MPI_SUCCESS && !t->h.no_write)
                agx_tp_copy(t->rbuf + t->rpos[s], t->vbuf + (o - first), l);
            t->rpos[s] += l;
            t->rcur[s]++;
        }
    }
}

int agx_tp_read_round(agx_tp *t, long long r, long long *ps, long long *mc, int *rerr)
{
    int p = t->a.p, rc;
    long long at = 0, from = *ps;
    int direct = agx_tp_direct(t, r, ps, t->rc, t->rd); /* from each aggregator */
    memset(t->sc, 0, sizeof(int) * (size_t)p);
    if (!direct) {
        memset(t->rc, 0, sizeof(int) * (size_t)p);
        for (long long i = from; i < t->npc && t->pc[i].round == r; i++) {
            int j = t->aggr_rank[t->pc[i].aggr];
            if (!t->rc[j])
                t->rd[j] = (int)at;
            t->rc[j] += (int)t->pc[i].len;
            at += t->pc[i].len;
        }
    }
    at = 0;
    for (int s = 0; t->my_aggr >= 0 && s < p; s++) { /* to each rank, as its aggregator */
        t->sd[s] = (int)at;
        t->rpos[s] = at;
        long long bytes;
        agx_tp_sender_run(t, s, r, &bytes);
        t->sc[s] += (int)bytes;
        at += t->sc[s];
    }
    if (t->my_aggr >= 0 && t->scatter)
        agx_tp_scatter_read(t, r, rerr);
    else if (t->my_aggr >= 0)
        read_and_pack(t, r, mc, rerr);
    double t0 = PMPI_Wtime();
    if ((rc = agx_tp_exchange(t, t->alg_data, t->rbuf, direct ? t->out : t->sbuf)) != MPI_SUCCESS)
        return rc;
    t->st.data_time += PMPI_Wtime() - t0;
    for (at = 0; !direct && *ps < t->npc && t->pc[*ps].round == r; (*ps)++) {
        agx_tp_copy(t->out + t->pc[*ps].pos, t->sbuf + at, t->pc[*ps].len);
        at += t->pc[*ps].len;
    }
    return MPI_SUCCESS;
}

int agx_tp_read(MPI_File fh, int pfd, MPI_Comm comm, int n, const MPI_Offset *off, const int *len, void *buf,
                const agx_io_hints *h, int native, const char *fn, agx_io_stats *stats, agx_tp_gate *gate)
{
    agx_tp t = {.a = {.op = AGX_OP_ALLTOALLV, .user_comm = comm}, .fh = fh, .pfd = pfd, .fn = fn, .n = n, .off = off,
                .len = len, .buf = buf, .out = buf, .reading = 1, .native_ok = native >= 0, .gate = gate};
    if (h)
        t.h = *h;
    else
        agx_io_hints_init(&t.h);
    return agx_tp_run(&t, native, stats);
}

int agx_file_read_all(MPI_File fh, MPI_Comm comm, int n, const MPI_Offset offsets[], const int lengths[], void *buf,
                      const agx_io_hints *hints, agx_io_stats *stats)
{
    return agx_raise_file(fh, comm,
                          agx_tp_read(fh, -1, comm, n, offsets, lengths, buf, hints, -1, "agx_file_read_all", stats,
                                      NULL));
}
