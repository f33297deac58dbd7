/*
 * The agreement: one allreduce that gives every rank of a communicator the same verdict
 * on a condition only some can see (a local error, an allocation), with a few values
 * agreed alongside (docs/ARCHITECTURE.md, "No hang").
 */
#include "core.h"

#include <string.h>

/* The verdict of the agreed error word w (max over ranks). */
static int verdict(long long w, int mine, const char *fn, const char *why)
{
    if (w < 0 || mine != MPI_SUCCESS)
        return mine;
    return agx_error((int)(w >> 32), "%s: rank %d %s (its own error says why)", fn, (int)(w & 0xffffffff), why);
}

static long long word(int mine, int rank)
{
    int cls = 0;
    if (mine != MPI_SUCCESS)
        MPI_Error_class(mine, &cls);
    return mine != MPI_SUCCESS ? ((long long)cls << 32) | rank : -1;
}

int agx_agree_gather(MPI_Comm comm, int rank, int p, int mine, long long *vals, int n, const long long *rec,
                     int nrec, long long *all, const char *fn, const char *why)
{
    enum { W = 1 + AGX_AGREE_MAX + AGX_AGREE_REC_MAX };
    long long buf[AGX_AGREE_GATHER_MAX * W], out[1 + AGX_AGREE_MAX];
    int w = 1 + n + nrec, rc;
    if (n > AGX_AGREE_MAX || nrec > AGX_AGREE_REC_MAX || p > AGX_AGREE_GATHER_MAX) /* alike on every rank */
        return agx_error(MPI_ERR_INTERN, "%s: agx_agree_gather of %d values, %d more, %d ranks", fn, n, nrec, p);
    long long *me = buf + (size_t)w * (size_t)rank;
    me[0] = word(mine, rank);
    memcpy(me + 1, vals, sizeof *vals * (size_t)n);
    memcpy(me + 1 + n, rec, sizeof *rec * (size_t)nrec);
    if ((rc = PMPI_Allgather(MPI_IN_PLACE, w, MPI_LONG_LONG, buf, w, MPI_LONG_LONG, comm)) != MPI_SUCCESS)
        return rc;
    for (int i = 0; i <= n; i++)
        out[i] = buf[i];
    for (int r = 1; r < p; r++)
        for (int i = 0; i <= n; i++)
            out[i] = buf[(size_t)w * (size_t)r + (size_t)i] > out[i] ? buf[(size_t)w * (size_t)r + (size_t)i] : out[i];
    for (int r = 0; r < p; r++)
        memcpy(all + (size_t)nrec * (size_t)r, buf + (size_t)w * (size_t)r + 1 + n, sizeof *all * (size_t)nrec);
    memcpy(vals, out + 1, sizeof *vals * (size_t)n);
    return verdict(out[0], mine, fn, why);
}

int agx_agree(MPI_Comm comm, int rank, int mine, long long *vals, int n, const char *fn, const char *why)
{
    long long in[1 + AGX_AGREE_MAX], out[1 + AGX_AGREE_MAX];
    int rc;
    if (n > AGX_AGREE_MAX)
        return agx_error(MPI_ERR_INTERN, "%s: agx_agree of %d values", fn, n);
    in[0] = word(mine, rank);
    for (int i = 0; i < n; i++)
        in[1 + i] = vals[i];
    if ((rc = PMPI_Allreduce(in, out, 1 + n, MPI_LONG_LONG, MPI_MAX, comm)) != MPI_SUCCESS)
        return rc;
    for (int i = 0; i < n; i++)
        vals[i] = out[1 + i];
    return verdict(out[0], mine, fn, why);
}
