/*
 * The papers' cost models behind the public agx_model_* functions (include/agx.h): thin
 * wrappers of src/patterns/model.h and the region table of locality.h, so tools (agx-bench)
 * print the predictions next to their measurements without agx's internal headers.
 */
#include "api.h"

#include <string.h>

#include "locality.h"
#include "model.h"

int agx_model_regions(int nprocs, const int region_of[], int *count, int *min_size, int *max_size)
{
    agx_regions R;
    if (nprocs < 1 || !region_of || !count || !min_size || !max_size)
        return MPI_ERR_ARG;
    if (agx_regions_init(&R, nprocs, region_of))
        return MPI_ERR_NO_MEM;
    *count = R.r;
    *min_size = R.min_size;
    *max_size = R.max_size;
    agx_regions_free(&R);
    return MPI_SUCCESS;
}

int agx_model_allgather_nonlocal(const char *name, int nprocs, const int region_of[], long long bytes,
                                 int leaders, long long *msgs, long long *nbytes)
{
    int r, lo, hi, rc;
    if (!msgs || !nbytes)
        return MPI_ERR_ARG;
    *msgs = *nbytes = -1;
    if (!name || bytes < 0 || leaders < 0)
        return MPI_ERR_ARG;
    if ((rc = agx_model_regions(nprocs, region_of, &r, &lo, &hi)))
        return rc;
    int equal = lo == hi, pl = lo, lg = 0, nl = leaders ? leaders : 2;
    while ((1 << lg) < r)
        lg++;
    if (nl > pl)
        nl = pl;
    if (!strcmp(name, "bruck")) {
        int m, b;
        agx_model_bruck_nonlocal(nprocs, region_of, &m, &b);
        *msgs = m;
        *nbytes = b * bytes;
    } else if (equal && !strcmp(name, "loc_bruck")) {
        *msgs = agx_model_loc_bruck_nonlocal_msgs(r, pl);
        *nbytes = agx_model_loc_bruck_nonlocal_blocks(r, pl) * bytes;
    } else if (equal && !strcmp(name, "hierarchical")) {
        *msgs = lg;
        *nbytes = (long long)(r - 1) * pl * bytes;
    } else if (equal && !strcmp(name, "multileader") && pl % nl == 0) {
        *msgs = lg;
        *nbytes = (long long)(r - 1) * (pl / nl) * bytes;
    } else
        return MPI_ERR_ARG;
    return MPI_SUCCESS;
}

double agx_model_intergroup_eq5(double KA, double KB) { return agx_model_ig_eq5_ratio(KA, KB); }

double agx_model_intergroup_volume(int p, int q, double KA, double KB, double kA0, double kB0)
{
    return agx_model_ig_volume_ratio(p, q, KA, KB, kA0, kB0);
}
