/*
 * Step 3 of the two-phase call (twophase_write.c's driver): the piece counts, agreement B,
 * and the (offset, length) records, sent compact where they can be: 8 bytes a record (the
 * gap from the end of the sender's previous record to that aggregator, from the call's
 * first byte for the first, as 32 bits; the length as 32 bits) instead of 16, when every
 * rank's gaps and lengths fit (agreed in agreement B). At E3SM-IO F scale the records are
 * as many bytes as the data (2 M pieces of 8-24 B), and this exchange took a fifth of the
 * call. The aggregators expand them back to 16-byte records in place.
 */
#include "twophase.h"

#include <stdint.h>

#define COMPACT 8 /* bytes of a compact record */

/* 1 when one of my records does not fit the compact form. */
static int wide(const agx_tp *t)
{
    const long long *m = t->meta_s;
    for (int j = 0, k = 0; j < t->a.p; j++)
        for (long long prev = t->lo, e = k + (long long)t->cnt_s[j]; k < e; k++) {
            long long gap = m[2 * k] - prev;
            if (gap < 0 || gap > UINT32_MAX || m[2 * k + 1] > INT32_MAX)
                return 1;
            prev = m[2 * k] + m[2 * k + 1];
        }
    return 0;
}

/* meta_s in place: record k's 8 bytes at 8k (read before they are written over: 8k <= 16k). */
static void compact(agx_tp *t)
{
    long long *m = t->meta_s;
    char *out = (char *)m;
    for (int j = 0, k = 0; j < t->a.p; j++)
        for (long long prev = t->lo, e = k + (long long)t->cnt_s[j]; k < e; k++) {
            long long off = m[2 * k], len = m[2 * k + 1];
            uint32_t w[2] = {(uint32_t)(off - prev), (uint32_t)len};
            memcpy(out + COMPACT * k, w, sizeof w);
            prev = off + len;
        }
}

/* meta_r's compact records, received into its second half, expanded to 16 bytes from the
 * front: record i's 16 bytes cover compact records 2i - nmeta and the next, read already. */
static void expand(agx_tp *t)
{
    long long *m = t->meta_r;
    const char *in = (const char *)m + COMPACT * t->nmeta;
    for (int s = 0; s < t->a.p; s++)
        for (long long i = t->mstart[s], prev = t->lo; i < t->mstart[s + 1]; i++) {
            uint32_t w[2];
            memcpy(w, in + COMPACT * i, sizeof w);
            m[2 * i] = prev + w[0], m[2 * i + 1] = w[1];
            prev = m[2 * i] + m[2 * i + 1];
        }
}

int agx_tp_metadata(agx_tp *t, int local)
{
    int p = t->a.p, rc;
    double t0 = PMPI_Wtime();
    if ((rc = PMPI_Alltoall(t->cnt_s, 1, MPI_INT, t->cnt_r, 1, MPI_INT, t->a.comm)) != MPI_SUCCESS)
        return rc;
    if (local == MPI_SUCCESS)
        local = agx_tp_prepare_recv(t);
    long long smax = 0, v[3];
    for (int s = 0; s < p; s++)
        smax += t->cnt_r[s] > 0;
    v[0] = t->nrounds, v[1] = smax, v[2] = local != MPI_SUCCESS || !t->meta_s || (!t->meta_compact && wide(t));
    if ((rc = agx_agree(t->a.comm, t->a.rank, local, v, 3, t->fn, "failed to plan its pieces")) != MPI_SUCCESS)
        return rc;
    t->nrounds = v[0];
    if ((rc = agx_tp_pick(t, t->h.meta_kernel, "balanced", v[1], &t->alg_meta)) != MPI_SUCCESS)
        return rc;
    int rb = v[2] ? AGX_TP_META_BYTES : COMPACT, base = v[2] ? 0 : (int)(COMPACT * t->nmeta);
    if (!v[2] && !t->meta_compact)
        compact(t);
    else if (v[2] && t->meta_compact) /* another rank's records need 16 bytes */
        agx_tp_meta_records(t);
    for (int j = 0, s = 0, r = 0; j < p; s += t->sc[j], r += t->rc[j], j++) {
        t->sc[j] = t->cnt_s[j] * rb, t->sd[j] = s;
        t->rc[j] = t->cnt_r[j] * rb, t->rd[j] = base + r;
    }
    rc = agx_tp_exchange(t, t->alg_meta, t->meta_s, t->meta_r);
    if (rc == MPI_SUCCESS && !v[2])
        expand(t);
    t->st.meta_time = PMPI_Wtime() - t0;
    return rc;
}
