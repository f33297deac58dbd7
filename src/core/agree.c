/*
 * The agreement: one allreduce that gives every rank of a communicator the same verdict
 * on a condition only some can see (a local error, an allocation), with a few values
 * agreed alongside (docs/ARCHITECTURE.md, "No hang").
 */
#include "core.h"

int agx_agree(MPI_Comm comm, int rank, int mine, long long *vals, int n, const char *fn, const char *why)
{
    long long in[1 + AGX_AGREE_MAX], out[1 + AGX_AGREE_MAX];
    int cls = 0, rc;
    if (n > AGX_AGREE_MAX)
        return agx_error(MPI_ERR_INTERN, "%s: agx_agree of %d values", fn, n);
    if (mine != MPI_SUCCESS)
        MPI_Error_class(mine, &cls);
    in[0] = mine != MPI_SUCCESS ? ((long long)cls << 32) | rank : -1;
    for (int i = 0; i < n; i++)
        in[1 + i] = vals[i];
    if ((rc = PMPI_Allreduce(in, out, 1 + n, MPI_LONG_LONG, MPI_MAX, comm)) != MPI_SUCCESS)
        return rc;
    for (int i = 0; i < n; i++)
        vals[i] = out[1 + i];
    if (out[0] < 0 || mine != MPI_SUCCESS)
        return mine;
    return agx_error((int)(out[0] >> 32), "%s: rank %d %s (its own error says why)", fn,
                     (int)(out[0] & 0xffffffff), why);
}
