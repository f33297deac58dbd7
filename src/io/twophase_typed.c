/*
 * A collective write's data received in place (docs/algorithms.md, "Two-phase collective
 * write", step 5). Where an aggregator's records are large (AGX_TP_TYPED_MIN bytes each on
 * average: BTIO's rows, FLASH's blocks), each sender's data of a round is received
 * straight into the round's stretch of the file, through an hindexed datatype of that
 * sender's records (adjacent ones joined), as ROMIO's two-phase write receives into its
 * collective buffer; the senders send from the user's buffer itself where their pieces
 * lie end to end (agx_tp_direct), else packed. The exchange through a kernel lands in a
 * receive buffer from which the aggregator copies every byte again (twophase_scatter.c):
 * at 1 aggregator per node it did that copy of the whole call alone. Small records keep
 * the kernels: a datatype of 10^5 blocks of 8-24 bytes (E3SM) costs more than the copy.
 * Taken only with the placement by offset (agx_tp_scatter_plan) at every aggregator and
 * no data kernel or throttle asked for in the hints; agreed with the round plan.
 * agx_tp_direct, for every exchange of a write or read: whether a rank's pieces of a round
 * lie end to end in its buffer, so that they need no packing (sent from it, received into it);
 * from the runs agx_tp_pieces noted where it found each run's pieces end to end (E3SM's
 * 250 K pieces per rank: 7% of a rank's CPU in the call went to looking at each again).
 */
#include "twophase.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define AGX_TP_TYPED_MIN 1024 /* bytes per record, on average over the aggregator's */

/* agx_tp_direct from the runs where agx_tp_pieces found each run end to end: the first and
 * last piece of each (its bytes: from the one's start to the other's end); 0 where not. */
static int direct_runs(const agx_tp *t, long long r, long long *ps, int *cnt, int *disp)
{
    long long lo = 0, hi = t->nruns, e = *ps;
    while (lo < hi) { /* the run that starts at *ps */
        long long mid = (lo + hi) / 2;
        if (t->runs[mid] < *ps)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (*ps < t->npc && (lo == t->nruns || t->runs[lo] != *ps))
        return 0;
    memset(cnt, 0, sizeof(int) * (size_t)t->a.p);
    for (long long x = lo; x < t->nruns && t->pc[t->runs[x]].round == r; x++) {
        const agx_tp_piece *a = &t->pc[t->runs[x]];
        long long end = x + 1 < t->nruns ? t->runs[x + 1] : t->npc;
        const agx_tp_piece *z = &t->pc[end - 1];
        int k = t->aggr_rank[a->aggr];
        if (a->pos > INT_MAX || cnt[k])
            return 0;
        disp[k] = (int)a->pos, cnt[k] = (int)(z->pos + z->len - a->pos), e = end;
    }
    *ps = e;
    return 1;
}

int agx_tp_direct(const agx_tp *t, long long r, long long *ps, int *cnt, int *disp)
{
    if (t->buf && t->contig && direct_runs(t, r, ps, cnt, disp))
        return 1;
    int direct = t->buf != NULL;
    long long at = 0, e = *ps;
    memset(cnt, 0, sizeof(int) * (size_t)t->a.p);
    for (int j = -1; e < t->npc && t->pc[e].round == r; e++) {
        const agx_tp_piece *q = &t->pc[e];
        int k = t->aggr_rank[q->aggr];
        if (k == j ? q->pos != at : q->pos > INT_MAX || cnt[k]) /* cnt[k]: k's pieces in two runs */
            direct = 0;
        if (k != j)
            disp[k] = (int)q->pos, j = k;
        at = q->pos + q->len;
        cnt[k] += (int)q->len;
    }
    if (!direct)
        return 0;
    *ps = e;
    return 1;
}

/* The requests of one round, p receives and p sends at most, and their statuses after them
 * (2p requests of 4 or 8 bytes: the statuses stay 8-byte aligned). */
static int requests(agx_tp *t)
{
    return t->treq || (t->treq = malloc((sizeof *t->treq + sizeof(MPI_Status)) * 2 * (size_t)t->a.p)) != NULL;
}

int agx_tp_typed_vote(agx_tp *t)
{
    const char *k = t->h.data_kernel;
    if (t->reading || (k && strcasecmp(k, "auto")) || t->h.throttle != -1) /* as agx_tp_pick reads it */
        return 0;
    if (!requests(t))
        return 0;
    if (t->my_aggr < 0)
        return 1;
    if (!t->scatter || t->overlap)
        return 0;
    long long bytes = 0, hole = 0;
    for (long long r = 0; r < t->nrounds; r++) {
        const long long *q = t->rr + 4 * r;
        bytes += q[2];
        if (q[2] && q[2] < q[1] - q[0] && q[1] - q[0] > hole)
            hole = q[1] - q[0];
    }
    if (t->nmeta && bytes / t->nmeta < AGX_TP_TYPED_MIN)
        return 0;
    if (hole > t->vcap) { /* the stretches with holes: room now, so no round lacks it later */
        char *v = realloc(t->vbuf, (size_t)hole);
        if (!v)
            return 0;
        t->vbuf = v, t->vcap = hole;
    }
    long long most = 0; /* the most records of one sender */
    for (int s = 0; s < t->a.p; s++)
        most = t->mstart[s + 1] - t->mstart[s] > most ? t->mstart[s + 1] - t->mstart[s] : most;
    t->tlen = malloc((size_t)(most + 2) * (sizeof(int) + sizeof(MPI_Aint)));
    return t->tlen != NULL;
}


/* Sender s's records of round r as one datatype over the stretch from first: NULL type
 * when it has none. */
static int recv_type(agx_tp *t, int s, long long r, long long first, MPI_Datatype *ty)
{
    const long long *m = t->meta_r;
    long long i = t->rcur[s];
    int nb = 0, *len = t->tlen;
    MPI_Aint *dsp = (MPI_Aint *)(t->tlen + ((t->mstart[s + 1] - t->mstart[s] + 1) & ~1LL)); /* aligned */
    *ty = MPI_DATATYPE_NULL;
    long long bytes, end = agx_tp_sender_run(t, s, r, &bytes);
    for (; i < end; i++) {
        if (nb && dsp[nb - 1] + len[nb - 1] == m[2 * i] - first)
            len[nb - 1] += (int)m[2 * i + 1];
        else
            dsp[nb] = (MPI_Aint)(m[2 * i] - first), len[nb++] = (int)m[2 * i + 1];
    }
    t->rcur[s] = i;
    if (!nb)
        return MPI_SUCCESS;
    int rc = MPI_Type_create_hindexed(nb, len, dsp, MPI_BYTE, ty);
    if (rc == MPI_SUCCESS && (rc = MPI_Type_commit(ty)) != MPI_SUCCESS)
        MPI_Type_free(ty);
    return rc;
}

int agx_tp_typed_round(agx_tp *t, long long r, const char *from, int *werr,
                       int (*sieve)(agx_tp *, long long, long long))
{
    int p = t->a.p, n = 0, rc = MPI_SUCCESS, read = 0;
    char *dst = t->my_aggr >= 0 ? agx_tp_stretch(t, r, werr, sieve, &read) : NULL;
    long long first = t->my_aggr >= 0 ? t->rr[4 * r] : 0;
    double t0 = PMPI_Wtime();
    for (int s = 0; t->my_aggr >= 0 && s < p && rc == MPI_SUCCESS; s++) {
        if (!t->rc[s] || (s == t->a.rank && dst)) /* my own: copied below */
            continue;
        MPI_Datatype ty = MPI_DATATYPE_NULL;
        if (!dst) { /* no room (reported): received and dropped, so that no sender waits */
            rc = MPI_Irecv(t->rbuf + t->rd[s], t->rc[s], MPI_BYTE, s, AGX_TAG, t->a.comm, &t->treq[n++]);
            agx_tp_place(t, s, r, NULL, NULL, AGX_TP_SKIP);
        }
        else if ((rc = recv_type(t, s, r, first, &ty)) == MPI_SUCCESS && ty != MPI_DATATYPE_NULL) {
            rc = MPI_Irecv(dst, 1, ty, s, AGX_TAG, t->a.comm, &t->treq[n++]);
            MPI_Type_free(&ty); /* the receive keeps what it needs */
        }
    }
    for (int j = 0; j < p && rc == MPI_SUCCESS; j++)
        if (t->sc[j] && !(j == t->a.rank && dst))
            rc = MPI_Isend(from + t->sd[j], t->sc[j], MPI_BYTE, j, AGX_TAG, t->a.comm, &t->treq[n++]);
    if (dst && rc == MPI_SUCCESS && t->rc[t->a.rank]) /* while the messages travel */
        agx_tp_place(t, t->a.rank, r, dst, (char *)from + t->sd[t->a.rank], AGX_TP_IN);
    int wrc = PMPI_Waitall(n, t->treq, (MPI_Status *)(t->treq + 2 * p)); /* the preload defines MPI_Waitall */
    t->st.data_time += PMPI_Wtime() - t0;
    if (rc != MPI_SUCCESS || wrc != MPI_SUCCESS)
        return rc != MPI_SUCCESS ? rc : wrc;
    if (dst)
        agx_tp_stretch_write(t, r, dst, read, werr);
    return MPI_SUCCESS;
}
