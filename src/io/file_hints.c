/* The MPI-IO drop-in's hints (file_mpi.c): read from the caller's info, agreed at open and
 * at set_info. docs/algorithms.md, "MPI-IO drop-in", lists them. */
#include "twophase.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The hints of info (the caller's, not what the library kept: it may drop agx's keys);
 * cb[d]: romio_cb_write / romio_cb_read, -1 disable, 1 enable, 0 automatic. */
static void read_hints(agx_file *f, MPI_Info info, int cb[2])
{
    char v[MPI_MAX_INFO_VAL + 1];
    int flag, ds[2] = {0, 0};
    agx_io_hints h;
    agx_io_hints_init(&h);
    cb[0] = cb[1] = 0;
#define HINT(key) (info != MPI_INFO_NULL && PMPI_Info_get(info, key, MPI_MAX_INFO_VAL, v, &flag) == MPI_SUCCESS && flag)
    if (HINT("cb_nodes"))
        h.aggregators = atoi(v) > 0 ? atoi(v) : 0;
    if (HINT("cb_buffer_size"))
        h.cb_buffer_size = atoll(v) > 0 && atoll(v) <= (1LL << 30) ? atoll(v) : 0;
    if (HINT("striping_unit") && atoll(v) > 0)
        h.layout = AGX_IO_STRIPED, h.stripe_size = atoll(v);
    if (HINT("striping_factor") && atoi(v) > 0)
        h.stripe_count = atoi(v);
    static const char *const cbkey[2] = {"romio_cb_write", "romio_cb_read"}, *const dskey[2] = {"romio_ds_write",
                                                                                                "romio_ds_read"};
    for (int d = 0; d < 2; d++) {
        if (HINT(cbkey[d]))
            cb[d] = !strcasecmp(v, "disable") ? -1 : !strcasecmp(v, "enable");
        if (HINT(dskey[d]))
            ds[d] = !strcasecmp(v, "disable");
    }
    if (HINT("agx_meta_kernel") && strlen(v) < sizeof f->meta)
        strcpy(f->meta, v), h.meta_kernel = f->meta;
    if (HINT("agx_data_kernel") && strlen(v) < sizeof f->data)
        strcpy(f->data, v), h.data_kernel = f->data;
    if (HINT("agx_throttle"))
        h.throttle = atoi(v) >= 0 ? atoi(v) : -1;
    if (HINT("agx_node_aggregation"))
        h.node_aggr = !strcasecmp(v, "enable") ? 1 : !strcasecmp(v, "disable") ? -1 : 0;
#undef HINT
    for (int d = 0; d < 2; d++) {
        f->dir[d].h = h;
        f->dir[d].h.cb_always = cb[d] > 0;
        f->dir[d].h.no_sieve = ds[d];
    }
}

/* Hints read and agreed (collective over comm: open's, or the file's at set_info), with
 * whether every rank has its record (`ok`) and n more values (`more`, their maxima come
 * back): ranks whose hints differ or a rank without memory for agx's state leave the file
 * to the library on every rank; romio_cb_write=disable (romio_cb_read) its writes
 * (reads). The agreement's error (then `more` is not agreed). */
int agx_file_agree_hints(agx_file *f, MPI_Comm comm, MPI_Info info, int ok, long long *more, int n)
{
    int cb[2], rc;
    read_hints(f, info, cb);
    unsigned long long x = agx_tp_hints_hash(&f->dir[0].h) ^ (agx_tp_hints_hash(&f->dir[1].h) * 3);
    long long h = (long long)(x >> 1) ^ ((cb[0] < 0) | (cb[1] < 0) << 1), v[AGX_AGREE_MAX] = {h, -h, !ok};
    for (int i = 0; i < n && 3 + i < AGX_AGREE_MAX; i++)
        v[3 + i] = more[i];
    f->dir[0].hint_off = f->dir[1].hint_off = NULL;
    if ((rc = agx_agree(comm, 0, MPI_SUCCESS, v, 3 + n, "MPI_File_open", "")) != MPI_SUCCESS)
        f->hints_why = "the hints could not be compared";
    else if (v[2]) /* for good: that rank keeps no state, so no later agreement */
        f->hints_why = "a rank had no memory for agx's state of the file", f->lost = 1;
    else if (v[0] != -v[1])
        f->hints_why = "the hints differ between ranks";
    else {
        f->hints_why = NULL;
        f->dir[0].hint_off = cb[0] < 0 ? "romio_cb_write=disable" : NULL;
        f->dir[1].hint_off = cb[1] < 0 ? "romio_cb_read=disable" : NULL;
    }
    for (int i = 0; i < n && 3 + i < AGX_AGREE_MAX; i++)
        more[i] = v[3 + i];
    return rc;
}
