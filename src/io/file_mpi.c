/*
 * MPI-IO collective writes through the two-phase engine, with MPI's signatures
 * (agx_mpi_file_*; libagx-preload.so maps MPI_File_open / set_view / set_info /
 * write_all / write_at_all / close onto them). docs/algorithms.md, "MPI-IO drop-in".
 *
 *   open      the library opens the file; agx keeps, per handle, a duplicate of the
 *             communicator, the path, and the hints of the caller's info (agreed: ranks
 *             whose hints differ leave the file to the library). Not taken at all: an
 *             inter-communicator, MPI_MODE_RDONLY or MPI_MODE_SEQUENTIAL,
 *             romio_cb_write=disable.
 *   set_view  the library sets the view; agx flattens the file type (file_flat.c) and
 *             keeps the displacement and the etype's size.
 *   write     the memory data packed (MPI_Pack semantics; a dense predefined type in
 *             place), the view's stream [position * etype size, + bytes) mapped onto file
 *             (offset, length) requests through the flattened file type, written by the
 *             engine through a second, default-view handle (read-write where it can be:
 *             data sieving). Atomic mode, a representation other than "native", a type
 *             agx cannot flatten, an argument the library should judge: the library's own
 *             write, on every rank (each votes in the engine's first agreement); the way
 *             it went is the handle's last (agx_mpi_file_last: the preload's report).
 *             write_all moves the file pointer; write_at_all leaves it. The status holds
 *             the bytes. AGX_ADAPT (on under the preload): the engine against the
 *             library's own write, timed over the file's first writes of each class
 *             (src/select/adapt_file.c), the faster one kept.
 *   close     both handles closed, agx's state freed. Every other call (the split
 *             forms write_all_begin / _end too) stays the library's.
 */
#include "twophase.h"

#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>


static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static agx_file **files;
static int nfiles, capfiles;

static agx_file *find(MPI_File fh)
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
    int last = nfiles == 0;
    pthread_mutex_unlock(&lock);
    if (last) /* the round buffers kept between writes (twophase_bufs.c) */
        agx_tp_bufs_release();
    agx_flat_free(&f->ft);
    free(f->pre);
    free(f->path);
    free(f);
}

/* AGX_VERBOSE: each reason once per file (reason bit `bit`), by the rank that sees it
 * (rank 0 of the file's communicator for reasons every rank shares). */
__attribute__((format(printf, 4, 5))) static void tell(agx_file *f, int bit, int all_ranks, const char *fmt, ...)
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

int agx_mpi_file_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh)
{
    int rc = PMPI_File_open(comm, filename, amode, info, fh), inter = 1;
    if (rc != MPI_SUCCESS)
        return rc;
    agx_file tmp, *f = calloc(1, sizeof *f);
    int ok = f != NULL;
    if (!f) /* still in the agreement below, so that no rank waits for this one */
        f = memset(&tmp, 0, sizeof tmp);
    f->fh = *fh, f->shadow = MPI_FILE_NULL, f->comm = MPI_COMM_NULL;
    f->default_view = f->native_rep = f->flat_ok = 1, f->etype_size = 1;
    PMPI_Comm_test_inter(comm, &inter);
    if (inter) /* the same on every rank, as amode is */
        f->why = "opened on an inter-communicator";
    else if (amode & MPI_MODE_RDONLY)
        f->why = "opened read-only";
    else if (amode & MPI_MODE_SEQUENTIAL)
        f->why = "MPI_MODE_SEQUENTIAL";
    else if (PMPI_Comm_dup(comm, &f->comm) != MPI_SUCCESS)
        f->why = "no communicator", f->comm = MPI_COMM_NULL;
    int p = 1;
    PMPI_Comm_size(comm, &p);
    agx_flearn_init(&f->learn, p);
    if (ok)
        ok = (f->path = strdup(filename)) != NULL && !insert(f);
    if (f->comm != MPI_COMM_NULL)
        agx_file_agree_hints(f, info, ok);
    if (!ok) {
        if (f->comm != MPI_COMM_NULL)
            PMPI_Comm_free(&f->comm);
        if (f != &tmp) {
            free(f->path);
            free(f);
        }
    }
    return MPI_SUCCESS;
}

int agx_mpi_file_set_info(MPI_File fh, MPI_Info info)
{
    int rc = PMPI_File_set_info(fh, info);
    agx_file *f = find(fh);
    if (rc == MPI_SUCCESS && f && f->comm != MPI_COMM_NULL && !f->lost) /* collective, as set_info is */
        agx_file_agree_hints(f, info, 1);
    return rc;
}

int agx_mpi_file_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                          const char *datarep, MPI_Info info)
{
    int rc = PMPI_File_set_view(fh, disp, etype, filetype, datarep, info);
    agx_file *f = find(fh);
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

/* The file requests of the view's stream bytes [s, s + nbytes): a list of (offset,
 * length) in file order, lengths at most INT_MAX. 0, or -1 (too many, out of memory). */
static int map_view(const agx_file *f, long long s, long long nbytes, MPI_Offset **off, int **len, int *n)
{
    long long cap = 16, k = 0, S = f->default_view ? nbytes : f->ft.size, E = f->ft.extent;
    *off = malloc(sizeof **off * (size_t)cap), *len = malloc(sizeof **len * (size_t)cap);
    long long inst = S ? s / S : 0, w = S ? s % S : 0, i = 0;
    if (!f->default_view) { /* the run that holds stream byte w of an instance */
        long long lo = 0, hi = f->ft.n - 1;
        while (lo < hi) {
            long long mid = (lo + hi + 1) / 2;
            if (f->pre[mid] <= w)
                lo = mid;
            else
                hi = mid - 1;
        }
        i = lo;
    }
    while (nbytes > 0 && *off && *len) {
        long long at, room;
        if (f->default_view)
            at = s, room = nbytes;
        else
            at = f->disp + inst * E + f->ft.off[i] + (w - f->pre[i]), room = f->pre[i + 1] - w;
        long long l = room < nbytes ? room : nbytes;
        if (l > INT_MAX)
            l = INT_MAX;
        if (k == cap) {
            if (cap >= INT_MAX / 2)
                break;
            cap *= 2;
            MPI_Offset *o = realloc(*off, sizeof **off * (size_t)cap);
            int *q = o ? realloc(*len, sizeof **len * (size_t)cap) : NULL;
            *off = o ? o : *off, *len = q ? q : *len;
            if (!o || !q)
                break;
        }
        (*off)[k] = at, (*len)[k] = (int)l, k++;
        nbytes -= l, s += l, w += l;
        if (!f->default_view && w == f->pre[i + 1] && ++i == f->ft.n)
            i = 0, w = 0, inst++;
    }
    *n = (int)k;
    return nbytes == 0 && *off && *len ? 0 : -1;
}

/* The shadow handle (collective): open at the first write agx takes, on every rank or on
 * none; read-write where every rank can (data sieving reads), else write-only. */
static int shadow_as(agx_file *f, int mode)
{
    int ok = PMPI_File_open(f->comm, f->path, mode, MPI_INFO_NULL, &f->shadow) == MPI_SUCCESS;
    long long failed = !ok;
    if (agx_agree(f->comm, 0, MPI_SUCCESS, &failed, 1, "MPI_File_write_all", "") != MPI_SUCCESS || failed) {
        if (ok)
            PMPI_File_close(&f->shadow);
        return f->shadow = MPI_FILE_NULL, 0;
    }
    return 1;
}

static int open_shadow(agx_file *f)
{
    if (!f->shadow_state && (shadow_as(f, MPI_MODE_RDWR) || shadow_as(f, MPI_MODE_WRONLY)))
        f->shadow_state = 1, PMPI_File_set_errhandler(f->shadow, MPI_ERRORS_RETURN);
    else if (!f->shadow_state)
        f->shadow_state = -1, f->why = "a second handle of the file could not be opened";
    return f->shadow_state > 0;
}

static int native(int at, MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype dt,
                  MPI_Status *st)
{
    return at ? PMPI_File_write_at_all(fh, offset, buf, count, dt, st) : PMPI_File_write_all(fh, buf, count, dt, st);
}

static int write_view(int at, MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype dt,
                      MPI_Status *status)
{
    const char *fn = at ? "MPI_File_write_at_all" : "MPI_File_write_all";
    agx_file *f = find(fh);
    int atomic = 0, tsize = 0, n = 0, vote = 0, rc;
    if (!f || f->why || f->hints_why || f->comm == MPI_COMM_NULL || PMPI_File_get_atomicity(fh, &atomic) != MPI_SUCCESS ||
        atomic || !f->native_rep || !open_shadow(f)) { /* the same on every rank */
        if (f)
            f->given++, f->last = f->why ? f->why : f->hints_why ? f->hints_why : atomic ? "atomic mode"
                                  : "a data representation other than native",
                tell(f, 0, 1, "%s: the library's own (%s)", fn, f->last);
        return native(at, fh, offset, buf, count, dt, status);
    }
    /* what this rank alone can see: its vote */
    MPI_Offset pos = offset, *off = NULL;
    int *len = NULL;
    char *data = NULL;
    const char *why = NULL;
    if (count < 0 || dt == MPI_DATATYPE_NULL || PMPI_Type_size(dt, &tsize) != MPI_SUCCESS)
        why = "an argument the library judges (count, datatype)";
    else if (!f->flat_ok)
        why = "a file type agx does not flatten";
    else if (!at && PMPI_File_get_position(fh, &pos) != MPI_SUCCESS)
        why = "no file position";
    long long nbytes = (long long)count * tsize;
    if (!why && (pos < 0 || nbytes % f->etype_size || (nbytes > 0 && !buf)))
        why = "an argument the library judges (offset, size, buffer)";
    if (!why && nbytes > 0) {
        MPI_Aint lb, ext;
        PMPI_Type_get_extent(dt, &lb, &ext);
        if (agx_type_is_named(dt) && ext == tsize && lb == 0)
            data = (char *)buf;
        else if (!(data = malloc((size_t)nbytes)) || agx_pack((void *)buf, count, dt, data, 0) != MPI_SUCCESS)
            why = "the memory type could not be packed";
    }
    if (!why && map_view(f, pos * f->etype_size, nbytes, &off, &len, &n))
        why = "too many file pieces";
    vote = why != NULL;
    if (why)
        tell(f, 1, 0, "%s: asks for the library's own (%s)", fn, why);
    int cand = AGX_FLEARN_ENGINE; /* AGX_ADAPT: the votes agreed, and the class's choice */
    const char *how = NULL;
    agx_io_stats st;
    rc = agx_flearn_pick(&f->learn, f->comm, f->path, vote, vote ? 0 : nbytes, vote ? 0 : n, &cand, &how);
    if (rc == MPI_SUCCESS && cand == AGX_FLEARN_ENGINE)
        rc = agx_tp_write(f->shadow, f->comm, vote ? 0 : n, off, len, data, &f->h, vote, fn, &st);
    if (data != buf)
        free(data);
    free(off);
    free(len);
    if (rc == AGX_IO_NATIVE || (rc == MPI_SUCCESS && cand != AGX_FLEARN_ENGINE)) {
        int bit = how ? 4 + (cand == AGX_FLEARN_LIBRARY && !strstr(how, "faster")) : 2;
        f->given++, f->last = how ? how : "a rank asked for it";
        tell(f, bit, 1, "%s: the library's own (%s)", fn, f->last);
        rc = native(at, fh, offset, buf, count, dt, status);
        agx_flearn_done(&f->learn, rc == MPI_SUCCESS && cand == AGX_FLEARN_LIBRARY);
        return rc;
    }
    agx_flearn_done(&f->learn, rc == MPI_SUCCESS);
    if (rc != MPI_SUCCESS)
        return agx_raise_file(fh, f->comm, rc);
    f->taken++, f->last = NULL, f->kernel = st.data_kernel;
    tell(f, 3, 1, "%s: agx's two-phase write (KangRoss20): %d aggregators, %d rounds, kernels %s / %s", fn,
         st.aggregators, st.rounds, st.meta_kernel, st.data_kernel);
    if (!at && nbytes > 0)
        PMPI_File_seek(fh, pos + nbytes / f->etype_size, MPI_SEEK_SET);
    if (status != MPI_STATUS_IGNORE) /* the bytes: MPI_Get_count / _elements divide them
                                      * as for a received message (both libraries keep bytes) */
        PMPI_Status_set_elements_x(status, MPI_BYTE, nbytes);
    return MPI_SUCCESS;
}

int agx_mpi_file_write_all(MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    return write_view(0, fh, 0, buf, count, datatype, status);
}

int agx_mpi_file_write_at_all(MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype,
                              MPI_Status *status)
{
    return write_view(1, fh, offset, buf, count, datatype, status);
}

int agx_mpi_file_last(MPI_File fh, const char **why)
{
    agx_file *f = find(fh);
    int took = f && f->taken + f->given > 0 && !f->last;
    if (why)
        *why = !f ? "a file opened before agx watched it" : took ? f->kernel : f->taken || f->given ? f->last : "no write yet";
    return took;
}

int agx_mpi_file_close(MPI_File *fh)
{
    agx_file *f = fh ? find(*fh) : NULL;
    if (f) {
        if (f->comm != MPI_COMM_NULL && !f->lost) /* collective, as close is */
            agx_flearn_close(&f->learn, f->comm, f->path);
        if (f->shadow != MPI_FILE_NULL)
            PMPI_File_close(&f->shadow);
        if (f->comm != MPI_COMM_NULL)
            PMPI_Comm_free(&f->comm);
        drop(f);
    }
    return PMPI_File_close(fh);
}
