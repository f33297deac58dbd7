/*
 * The agreement: one allreduce that gives every rank of a communicator the same verdict
 * on a condition only some can see (a local error, an allocation), with a few values
 * agreed alongside (docs/ARCHITECTURE.md, "No hang").
 */
#include "core.h"

/* This rank's failure as the agreement carries it: (class << 32 | rank), or -1. */
static long long failure(int mine, int rank)
{
    int cls = 0;
    if (mine != MPI_SUCCESS)
        MPI_Error_class(mine, &cls);
    return mine != MPI_SUCCESS ? ((long long)cls << 32) | rank : -1;
}

/* The verdict from the agreed failure (the largest one carried). */
static int verdict(long long agreed, int mine, const char *fn, const char *why)
{
    if (agreed < 0 || mine != MPI_SUCCESS)
        return mine;
    return agx_error((int)(agreed >> 32), "%s: rank %d %s (its own error says why)", fn, (int)(agreed & 0xffffffff),
                     why);
}

int agx_agree(MPI_Comm comm, int rank, int mine, long long *vals, int n, const char *fn, const char *why)
{
    long long in[1 + AGX_AGREE_MAX], out[1 + AGX_AGREE_MAX];
    int rc;
    if (n > AGX_AGREE_MAX)
        return agx_error(MPI_ERR_INTERN, "%s: agx_agree of %d values", fn, n);
    in[0] = failure(mine, rank);
    for (int i = 0; i < n; i++)
        in[1 + i] = vals[i];
    if ((rc = PMPI_Allreduce(in, out, 1 + n, MPI_LONG_LONG, MPI_MAX, comm)) != MPI_SUCCESS)
        return rc;
    for (int i = 0; i < n; i++)
        vals[i] = out[1 + i];
    return verdict(out[0], mine, fn, why);
}

int agx_agree_gather(MPI_Comm comm, int rank, int p, int mine, long long *vals, int n, const long long *extra, int k,
                     long long *all, const char *fn, const char *why)
{
    enum { W = 1 + 2 * AGX_AGREE_MAX };
    long long in[W], buf[AGX_AGREE_GATHER_P * W], out[1 + AGX_AGREE_MAX];
    int rc, w = 1 + n + k;
    if (n > AGX_AGREE_MAX || k > AGX_AGREE_MAX || p > AGX_AGREE_GATHER_P)
        return agx_error(MPI_ERR_INTERN, "%s: agx_agree_gather of %d + %d values on %d ranks", fn, n, k, p);
    in[0] = failure(mine, rank);
    for (int i = 0; i < n; i++)
        in[1 + i] = vals[i];
    for (int i = 0; i < k; i++)
        in[1 + n + i] = extra[i];
    if ((rc = PMPI_Allgather(in, w, MPI_LONG_LONG, buf, w, MPI_LONG_LONG, comm)) != MPI_SUCCESS)
        return rc;
    for (int i = 0; i <= n; i++) /* the maxima, as agx_agree's allreduce gives them */
        for (int r = 0; r < p; r++)
            out[i] = !r || buf[r * w + i] > out[i] ? buf[r * w + i] : out[i];
    for (int r = 0; r < p; r++)
        for (int i = 0; i < k; i++)
            all[r * k + i] = buf[r * w + 1 + n + i];
    for (int i = 0; i < n; i++)
        vals[i] = out[1 + i];
    return verdict(out[0], mine, fn, why);
}
