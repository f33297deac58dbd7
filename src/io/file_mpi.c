/*
 * MPI-IO collective writes and reads through the two-phase engine, with MPI's signatures
 * (agx_mpi_file_*; libagx-preload.so maps MPI_File_open / set_view / set_info /
 * write_all / write_at_all / read_all / read_at_all / close onto them). This file keeps
 * the handles' state; file_access.c runs the calls. docs/algorithms.md, "MPI-IO drop-in".
 *
 *   open      the library opens the file; agx keeps, per handle, a communicator (a
 *             duplicate of open's, perhaps kept from an earlier file: file_comm.c), the
 *             path, the mode, the engine's POSIX descriptor and the hints of the caller's
 *             info (agreed in one reduction: ranks whose hints differ leave the file to
 *             the library). Not taken at all:
 *             an inter-communicator, MPI_MODE_SEQUENTIAL; writes not taken: MPI_MODE_RDONLY,
 *             romio_cb_write=disable; reads not taken: MPI_MODE_WRONLY,
 *             romio_cb_read=disable.
 *   set_view  the library sets the view; agx flattens the file type (file_flat.c) and
 *             keeps the displacement and the etype's size.
 *   close     the user's handle, agx's default-view one or descriptor closed, the
 *             communicator kept for the next file (or freed), agx's state freed.
 *             Every other call (the split forms, independent I/O) stays the library's.
 */
#include "twophase.h"

#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>


static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static agx_file **files;
static int nfiles, capfiles;

agx_file *agx_file_find(MPI_File fh)
{
    agx_file *f = NULL;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < nfiles && !f; i++)
        if (files[i]->fh == fh)
            f = files[i];
    pthread_mutex_unlock(&lock);
    return f;
}

static int insert(agx_file *f)
{
    int rc = 0;
    pthread_mutex_lock(&lock);
    if (nfiles == capfiles) {
        agx_file **m = realloc(files, sizeof *files * (size_t)(capfiles ? 2 * capfiles : 8));
        if (m)
            files = m, capfiles = capfiles ? 2 * capfiles : 8;
        else
            rc = -1;
    }
    if (!rc)
        files[nfiles++] = f;
    pthread_mutex_unlock(&lock);
    return rc;
}

static void drop(agx_file *f)
{
    pthread_mutex_lock(&lock);
    for (int i = 0; i < nfiles; i++)
        if (files[i] == f)
            files[i] = files[--nfiles];
    pthread_mutex_unlock(&lock); /* the engine's kept buffers stay for the next file (twophase_bufs.c) */
    agx_flat_free(&f->ft);
    free(f->pre);
    free(f->path);
    free(f);
}

/* AGX_VERBOSE: each reason once per file (reason bit `bit`), by the rank that sees it
 * (rank 0 of the file's communicator for reasons every rank shares). */
void agx_file_tell(agx_file *f, int bit, int all_ranks, const char *fmt, ...)
{
    static int on = -1;
    int rank = 0;
    if (on < 0)
        on = agx_env_flag("AGX_VERBOSE");
    if (!on || (f->told >> bit & 1))
        return;
    f->told |= 1 << bit;
    if ((f->comm != MPI_COMM_NULL && PMPI_Comm_rank(f->comm, &rank) != MPI_SUCCESS) || (all_ranks && rank))
        return;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "agx: %s (rank %d): %s\n", f->path ? f->path : "a file", rank, msg);
}

/* The engine's communicator and descriptor, agreed with the hints in one reduction on
 * open's communicator (file_comm.c: a kept duplicate where every rank has the same);
 * a new duplicate is checked by one more. The descriptor is opened here so that the
 * engine's first call needs no agreement of its own. */
static void engine_setup(agx_file *f, MPI_Comm comm, MPI_Info info, int ok)
{
    long long v[AGX_FILE_COMM_V + 2];
    int slot, readable = 0, fd = agx_posix_open(f->path ? f->path : "", &f->id, f->amode & MPI_MODE_RDONLY, &readable);
    agx_file_comm_offer(comm, v, &slot);
    v[AGX_FILE_COMM_V] = fd < 0, v[AGX_FILE_COMM_V + 1] = !readable; /* any rank without one; any that cannot read */
    int use = agx_file_agree_hints(f, comm, info, ok, v, AGX_FILE_COMM_V + 2) == MPI_SUCCESS && !f->lost;
    agx_flearn_carry carry[2];
    if (agx_file_comm_take(comm, v, slot, use, &f->comm, carry)) {
        agx_file_tell(f, 17, 1, "agx's engine communicates on a duplicate kept from an earlier file on these ranks");
        for (int d = 0; d < 2; d++)
            agx_flearn_carry_in(&f->dir[d].learn, &carry[d], f->comm, f->path);
    } else if (use) { /* a new duplicate, on every rank? */
        long long failed = f->comm == MPI_COMM_NULL || agx_ctx_private(f->comm) != MPI_SUCCESS;
        if (agx_agree(comm, 0, MPI_SUCCESS, &failed, 1, "MPI_File_open", "") != MPI_SUCCESS || failed) {
            if (f->comm != MPI_COMM_NULL)
                agx_file_comm_give(&f->comm, NULL);
            f->hints_why = "no communicator for agx's engine on every rank", f->lost = 1, use = 0;
        }
    }
    if (use && !v[AGX_FILE_COMM_V])
        f->pfd = fd, f->shadow_reads = !v[AGX_FILE_COMM_V + 1];
    else if (fd >= 0)
        close(fd);
}

int agx_mpi_file_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh)
{
    int rc = PMPI_File_open(comm, filename, amode, info, fh), inter = 1;
    if (rc != MPI_SUCCESS)
        return rc;
    agx_file tmp, *f = calloc(1, sizeof *f);
    int ok = f != NULL;
    if (!f) /* still in the agreement below, so that no rank waits for this one */
        f = memset(&tmp, 0, sizeof tmp);
    f->fh = *fh, f->shadow = MPI_FILE_NULL, f->pfd = -1, f->comm = MPI_COMM_NULL, f->amode = amode;
    agx_posix_id(filename, &f->id); /* the file the library has just opened */
    f->default_view = f->native_rep = f->flat_ok = 1, f->etype_size = 1;
    PMPI_Comm_test_inter(comm, &inter);
    const char *why = inter ? "opened on an inter-communicator" /* the same on every rank, as amode is */
                      : amode & MPI_MODE_SEQUENTIAL ? "MPI_MODE_SEQUENTIAL" : NULL;
    f->dir[0].why = why ? why : amode & MPI_MODE_RDONLY ? "opened read-only" : NULL;
    f->dir[1].why = why ? why : amode & MPI_MODE_WRONLY ? "opened write-only" : NULL;
    int p = 1;
    PMPI_Comm_size(comm, &p);
    for (int d = 0; d < 2; d++)
        agx_flearn_init(&f->dir[d].learn, p, d);
    if (ok)
        ok = (f->path = strdup(filename)) != NULL && !insert(f);
    if (!why)
        engine_setup(f, comm, info, ok);
    if (!ok && f != &tmp) { /* every rank left it to the library (agreed above) */
        free(f->path);
        free(f);
    }
    return MPI_SUCCESS;
}

int agx_mpi_file_set_info(MPI_File fh, MPI_Info info)
{
    int rc = PMPI_File_set_info(fh, info);
    agx_file *f = agx_file_find(fh);
    if (rc == MPI_SUCCESS && f && f->comm != MPI_COMM_NULL && !f->lost) /* collective, as set_info is */
        agx_file_agree_hints(f, f->comm, info, 1, NULL, 0);
    return rc;
}

int agx_mpi_file_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                          const char *datarep, MPI_Info info)
{
    int rc = PMPI_File_set_view(fh, disp, etype, filetype, datarep, info);
    agx_file *f = agx_file_find(fh);
    if (rc != MPI_SUCCESS || !f)
        return rc;
    agx_flat_free(&f->ft);
    free(f->pre);
    f->pre = NULL;
    f->disp = disp;
    PMPI_Type_size(etype, &f->etype_size);
    f->native_rep = datarep && !strcmp(datarep, "native");
    f->default_view = disp == 0 && etype == MPI_BYTE && filetype == MPI_BYTE;
    f->flat_ok = f->default_view;
    if (!f->default_view && !agx_flatten(filetype, &f->ft) && f->ft.size > 0 &&
        (f->pre = malloc(sizeof(long long) * (size_t)(f->ft.n + 1)))) {
        f->pre[0] = 0;
        for (long long i = 0; i < f->ft.n; i++)
            f->pre[i + 1] = f->pre[i] + f->ft.len[i];
        f->flat_ok = 1;
    }
    return rc;
}

static int last(MPI_File fh, int d, const char **why)
{
    agx_file *f = agx_file_find(fh);
    const agx_file_dir *x = f ? &f->dir[d] : NULL;
    int took = x && x->taken + x->given > 0 && !x->last;
    if (why)
        *why = !f ? "a file opened before agx watched it" : took ? x->kernel : x->taken || x->given ? x->last
               : d ? "no read yet" : "no write yet";
    return took;
}

int agx_mpi_file_last(MPI_File fh, const char **why) { return last(fh, 0, why); }

int agx_mpi_file_last_read(MPI_File fh, const char **why) { return last(fh, 1, why); }

int agx_mpi_file_close(MPI_File *fh)
{
    agx_file *f = fh ? agx_file_find(*fh) : NULL;
    if (f) {
        for (int d = 0; d < 2; d++) /* the engine's time by phase (KangRoss20 Fig. 5), AGX_VERBOSE */
            if (f->dir[d].taken)
                agx_file_tell(f, 14 + d, 1, "%lld %s through agx's engine: %.2f ms here (metadata %.2f, data %.2f, "
                              "file calls %.2f, the rest %.2f)", f->dir[d].taken, d ? "reads" : "writes",
                              f->dir[d].phase[4] * 1e3, f->dir[d].phase[0] * 1e3, f->dir[d].phase[1] * 1e3,
                              f->dir[d].phase[2] * 1e3, f->dir[d].phase[3] * 1e3);
        agx_flearn *const L[2] = {&f->dir[0].learn, &f->dir[1].learn};
        if (f->comm != MPI_COMM_NULL && !f->lost) /* collective, as close is */
            agx_flearn_close(L, f->comm, f->path);
        if (f->shadow != MPI_FILE_NULL)
            PMPI_File_close(&f->shadow);
        if (f->pfd >= 0)
            close(f->pfd);
        agx_flearn_carry carry[2];
        for (int d = 0; d < 2; d++)
            agx_flearn_carry_out(&f->dir[d].learn, &carry[d]);
        if (f->comm != MPI_COMM_NULL)
            agx_file_comm_give(&f->comm, carry); /* kept for the next file on these ranks */
        drop(f);
    }
    return PMPI_File_close(fh);
}
