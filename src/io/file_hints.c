/* The MPI-IO drop-in's hints (file_mpi.c): read from the caller's info, agreed at open and
 * at set_info. docs/algorithms.md, "MPI-IO drop-in", lists them. */
#include "twophase.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The hints of info (the caller's, not what the library kept: it may drop agx's keys). */
static void read_hints(agx_file *f, MPI_Info info, int *cb_disable)
{
    char v[MPI_MAX_INFO_VAL + 1];
    int flag;
    agx_io_hints_init(&f->h);
    *cb_disable = 0;
    if (info == MPI_INFO_NULL)
        return;
#define HINT(key) (PMPI_Info_get(info, key, MPI_MAX_INFO_VAL, v, &flag) == MPI_SUCCESS && flag)
    if (HINT("cb_nodes"))
        f->h.aggregators = atoi(v) > 0 ? atoi(v) : 0;
    if (HINT("cb_buffer_size"))
        f->h.cb_buffer_size = atoll(v) > 0 && atoll(v) <= (1LL << 30) ? atoll(v) : 0;
    if (HINT("striping_unit") && atoll(v) > 0)
        f->h.layout = AGX_IO_STRIPED, f->h.stripe_size = atoll(v);
    if (HINT("striping_factor") && atoi(v) > 0)
        f->h.stripe_count = atoi(v);
    if (HINT("romio_cb_write"))
        *cb_disable = !strcasecmp(v, "disable"), f->h.cb_always = !strcasecmp(v, "enable");
    if (HINT("romio_ds_write"))
        f->h.no_sieve = !strcasecmp(v, "disable");
    if (HINT("agx_meta_kernel") && strlen(v) < sizeof f->meta)
        strcpy(f->meta, v), f->h.meta_kernel = f->meta;
    if (HINT("agx_data_kernel") && strlen(v) < sizeof f->data)
        strcpy(f->data, v), f->h.data_kernel = f->data;
    if (HINT("agx_throttle"))
        f->h.throttle = atoi(v) >= 0 ? atoi(v) : -1;
#undef HINT
}

/* Hints read and agreed (collective over f->comm), with whether every rank has its record
 * (`ok`): ranks whose hints differ, a romio_cb_write=disable, or a rank without memory
 * for agx's state leave the file to the library on every rank. */
void agx_file_agree_hints(agx_file *f, MPI_Info info, int ok)
{
    int cb_disable;
    read_hints(f, info, &cb_disable);
    long long h = (long long)(agx_tp_hints_hash(&f->h) >> 1) ^ cb_disable, v[3] = {h, -h, !ok};
    if (agx_agree(f->comm, 0, MPI_SUCCESS, v, 3, "MPI_File_open", "") != MPI_SUCCESS)
        f->hints_why = "the hints could not be compared";
    else if (v[2]) /* for good: that rank keeps no state, so no later agreement */
        f->hints_why = "a rank had no memory for agx's state of the file", f->lost = 1;
    else if (v[0] != -v[1])
        f->hints_why = "the hints differ between ranks";
    else
        f->hints_why = cb_disable ? "romio_cb_write=disable" : NULL;
}

