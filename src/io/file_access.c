/*
 * The MPI-IO drop-in's collective writes and reads (agx_mpi_file_write_all / _write_at_all
 * / _read_all / _read_at_all; the handles' state: file_mpi.c). docs/algorithms.md,
 * "MPI-IO drop-in".
 *
 *   write  the memory data packed (MPI_Pack semantics; a dense predefined type in place),
 *          the view's stream [position * etype size, + bytes) mapped onto file (offset,
 *          length) requests through the flattened file type, written by the engine
 *          through a second, default-view handle (read-write where it can be: data
 *          sieving).
 *   read   the same requests read by the engine through that handle into a packed buffer
 *          (a dense predefined type: the user's own), then unpacked into the memory type.
 * Both: atomic mode, a representation other than "native", a type agx cannot flatten, an
 * argument the library should judge, what open's mode or the hints leave out (file_mpi.c),
 * for reads a span past the end of the file: the library's own call, on every rank (each
 * votes in the engine's first agreement); the way it went is the handle's last of its
 * direction (agx_mpi_file_last / _last_read: the preload's report). _all moves the file
 * pointer; _at_all leaves it. The status holds the bytes. The second handle is opened at
 * the first call the engine runs (a file whose calls all go to the library never opens
 * it). AGX_ADAPT (on under the
 * preload): the engine against the library's own call, timed over the file's first calls
 * of each class, writes and reads apart (src/select/adapt_file.c), the faster one kept.
 */
#include "twophase.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Whether the file's ranks span more than one node (AGX_REGION_SIZE / AGX_REGIONS: region)
 * with two or more ranks on some node, where intra-node aggregation can change anything:
 * 1, else -1. Collective on the file's communicator (its agx context, which the engine
 * uses too: made and its regions found once). */
static int spans_nodes(agx_file *f)
{
    agx_ctx *ctx;
    agx_sel *sel;
    const agx_regions *R;
    if (agx_ctx_ready(f->comm, &ctx, &sel) != MPI_SUCCESS || agx_ctx_regions(ctx, &R) != MPI_SUCCESS)
        return -1;
    return R->r > 1 && R->max_size > 1 ? 1 : -1;
}

/* The file requests of the view's stream bytes [s, s + nbytes): a list of (offset,
 * length) in file order, lengths at most INT_MAX, in one kept buffer (twophase_bufs.c) of
 * *cap entries: the offsets, then the lengths (agx_file_unmap frees it). 0, or -1 (too
 * many, out of memory). Its room is counted before: each instance of the file type the
 * bytes touch gives at most its runs, and each run holds a byte, so nothing grows while
 * 10^6 requests are listed. */
int agx_file_map(const agx_file *f, long long s, long long nbytes, MPI_Offset **off, int **len, int *n,
                 long long *cap)
{
    long long k = 0, S = f->default_view ? nbytes : f->ft.size, E = f->ft.extent;
    long long inst = S ? s / S : 0, w = S ? s % S : 0, i = 0;
    *cap = f->default_view ? nbytes / INT_MAX + 1 : (w + nbytes) / S + 1 <= INT_MAX / f->ft.n
                                                        ? ((w + nbytes) / S + 1) * f->ft.n : -1;
    if (*cap > nbytes + 1) /* every run holds a byte */
        *cap = nbytes + 1;
    *off = NULL, *len = NULL, *n = 0;
    if (*cap < 0 || *cap > INT_MAX || !(*off = agx_tp_buf((size_t)*cap * (sizeof **off + sizeof **len))))
        return -1;
    *len = (int *)(*off + *cap);
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
    while (nbytes > 0 && k < *cap) {
        long long at, room;
        if (f->default_view)
            at = s, room = nbytes;
        else
            at = f->disp + inst * E + f->ft.off[i] + (w - f->pre[i]), room = f->pre[i + 1] - w;
        long long l = room < nbytes ? room : nbytes;
        if (l > INT_MAX)
            l = INT_MAX;
        (*off)[k] = at, (*len)[k] = (int)l, k++;
        nbytes -= l, s += l, w += l;
        if (!f->default_view && w == f->pre[i + 1] && ++i == f->ft.n)
            i = 0, w = 0, inst++;
    }
    *n = (int)k;
    return nbytes == 0 ? 0 : -1;
}

void agx_file_unmap(MPI_Offset *off, long long cap)
{
    agx_tp_buf_free(off, (size_t)(cap > 0 ? cap : 0) * (sizeof *off + sizeof(int)));
}

/* The engine's way into the file (collective): opened at the first call agx takes, on
 * every rank or on none. A POSIX descriptor of the very file where every rank has one
 * (opened and agreed at open: file_mpi.c); else a second handle (the shadow): read-only
 * for a file opened so, else read-write where every rank can (data sieving reads,
 * collective reads), else write-only. */
static int shadow_as(agx_file *f, int mode)
{
    int ok = PMPI_File_open(f->comm, f->path, mode, MPI_INFO_NULL, &f->shadow) == MPI_SUCCESS;
    long long failed = !ok || !agx_posix_same(f->path, &f->id); /* not another file of that name */
    if (agx_agree(f->comm, 0, MPI_SUCCESS, &failed, 1, "MPI_File_open", "") != MPI_SUCCESS || failed) {
        if (ok)
            PMPI_File_close(&f->shadow);
        return f->shadow = MPI_FILE_NULL, 0;
    }
    f->shadow_reads = !(mode & MPI_MODE_WRONLY);
    PMPI_File_set_errhandler(f->shadow, MPI_ERRORS_RETURN);
    return 1;
}

int agx_file_shadow(agx_file *f, int reading)
{
    int ro = f->amode & MPI_MODE_RDONLY;
    agx_ctx *ctx;
    agx_sel *sel;
    if (!f->shadow_state) /* the engine's context on the file's communicator, set up with it */
        agx_ctx_ready(f->comm, &ctx, &sel);
    if (!f->shadow_state && (f->pfd >= 0 || (ro && shadow_as(f, MPI_MODE_RDONLY)) ||
                             (!ro && (shadow_as(f, MPI_MODE_RDWR) || shadow_as(f, MPI_MODE_WRONLY))))) {
        f->shadow_state = 1;
        agx_file_tell(f, 16, 1, "agx's engine %s the file through %s",
                      ro ? "reads" : f->shadow_reads ? "reads and writes" : "writes",
                      f->pfd >= 0 ? "its own POSIX descriptor" : "a second MPI handle (no POSIX descriptor on every rank)");
    }
    else if (!f->shadow_state) {
        f->shadow_state = -1;
        f->dir[0].why = f->dir[1].why = "a second handle of the file could not be opened";
    }
    if (f->shadow_state > 0 && reading && !f->shadow_reads)
        f->dir[1].why = "agx's second handle of the file cannot read";
    return f->shadow_state > 0 && (!reading || f->shadow_reads);
}

static int library(int rd, int at, MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype dt,
                   MPI_Status *st)
{
    if (rd)
        return at ? PMPI_File_read_at_all(fh, offset, buf, count, dt, st) : PMPI_File_read_all(fh, buf, count, dt, st);
    return at ? PMPI_File_write_at_all(fh, offset, buf, count, dt, st) : PMPI_File_write_all(fh, buf, count, dt, st);
}

/* What this rank alone can see about the call: NULL, or why the library should take it;
 * the stream's start (*pos, bytes: *nbytes) and, for a write, the data packed. */
static const char *local_check(agx_file *f, int rd, int at, MPI_File fh, MPI_Offset offset, void *buf, int count,
                               MPI_Datatype dt, MPI_Offset *pos, long long *nbytes, char **data)
{
    int tsize = 0;
    *pos = offset, *nbytes = 0, *data = NULL;
    if (count < 0 || dt == MPI_DATATYPE_NULL || PMPI_Type_size(dt, &tsize) != MPI_SUCCESS)
        return "an argument the library judges (count, datatype)";
    if (!f->flat_ok)
        return "a file type agx does not flatten";
    if (!at && PMPI_File_get_position(fh, pos) != MPI_SUCCESS)
        return "no file position";
    *nbytes = (long long)count * tsize;
    if (*pos < 0 || *nbytes % f->etype_size || (*nbytes > 0 && !buf))
        return "an argument the library judges (offset, size, buffer)";
    if (*nbytes == 0)
        return NULL;
    MPI_Aint lb, ext;
    PMPI_Type_get_extent(dt, &lb, &ext);
    if (agx_type_is_named(dt) && ext == tsize && lb == 0)
        *data = buf;
    else if (!(*data = agx_tp_buf((size_t)*nbytes))) /* agx_tp_buf_free'd */
        return "no memory to pack the data";
    else if (!rd && agx_pack(buf, count, dt, *data, 0) != MPI_SUCCESS)
        return "the memory type could not be packed";
    return NULL;
}

/* The drop-in's choice riding on the engine's agreement A (agx_flearn_fold). */
typedef struct {
    agx_tp_gate g;
    agx_flearn *L;
    MPI_Comm comm;
    const char *name;
    double t_call;
    int cand;
    const char *how;
} fold_gate;

static int gate(agx_tp_gate *g, const long long *v)
{
    fold_gate *x = g->arg;
    int go = 0, rc = agx_flearn_gate(x->L, x->comm, x->name, v, x->t_call, &go, &x->cand, &x->how);
    return rc != MPI_SUCCESS ? rc : go ? MPI_SUCCESS : AGX_IO_REPICK;
}

static int access_view(int rd, int at, MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype dt,
                       MPI_Status *status)
{
    static const char *const names[2][2] = {{"MPI_File_write_all", "MPI_File_write_at_all"},
                                            {"MPI_File_read_all", "MPI_File_read_at_all"}};
    const char *fn = names[rd][at];
    agx_file *f = agx_file_find(fh);
    agx_file_dir *d = f ? &f->dir[rd] : NULL;
    int atomic = 0, n = 0, rc, bit = 8 * rd; /* AGX_VERBOSE's reasons: bits 0-5 writes, 8-13 reads */
    if (!f || d->why || f->hints_why || d->hint_off || f->comm == MPI_COMM_NULL ||
        PMPI_File_get_atomicity(fh, &atomic) != MPI_SUCCESS || atomic || !f->native_rep) { /* the same on every rank */
        if (f)
            d->given++, d->last = d->why ? d->why : f->hints_why ? f->hints_why : d->hint_off ? d->hint_off
                                  : atomic ? "atomic mode" : "a data representation other than native",
                agx_file_tell(f, bit, 1, "%s: the library's own (%s)", fn, d->last);
        return library(rd, at, fh, offset, buf, count, dt, status);
    }
    MPI_Offset pos, *off = NULL;
    int *len = NULL;
    long long nbytes, cap = 0;
    char *data;
    const char *why = local_check(f, rd, at, fh, offset, buf, count, dt, &pos, &nbytes, &data);
    if (!why && agx_file_map(f, pos * f->etype_size, nbytes, &off, &len, &n, &cap))
        why = "too many file pieces";
    int vote = why != NULL;
    agx_coll_install(); /* the operations' names: a rules file's rows are read by name */
    if (why)
        agx_file_tell(f, bit + 1, 0, "%s: asks for the library's own (%s)", fn, why);
    int cand = AGX_FLEARN_ENGINE; /* AGX_ADAPT: the votes agreed, and the class's choice */
    const char *how = NULL;
    agx_io_stats st = {.meta_kernel = NULL};
    if (d->learn.mode && !f->spans) /* every rank here at the same call: the same answer */
        f->spans = spans_nodes(f);
    d->learn.ncand = d->learn.mode && f->spans > 0 && !d->h.node_aggr ? 3 : 2; /* agreed by the pick */
    fold_gate g = {.g = {.v = {vote ? 0 : nbytes, vote || n < 1 ? 0 : nbytes / n, -(d->learn.ncand > 2)}, .fn = gate,
                         .arg = &g},
                   .L = &d->learn, .comm = f->comm, .name = f->path};
    if (d->learn.mode && f->pfd >= 0 && !f->shadow_state) /* the engine's way in: its own descriptor, on every
                                                            * rank or none (agreed at open), nothing to open */
        agx_file_shadow(f, rd);
    int fold = f->shadow_state > 0 && (!rd || f->shadow_reads) && agx_flearn_fold(&d->learn); /* agreed state */
    rc = fold ? MPI_SUCCESS : agx_flearn_pick(&d->learn, f->comm, f->path, vote, vote ? 0 : nbytes, vote ? 0 : n,
                                              &cand, &how);
    for (int pass = 0; pass < 2; pass++) { /* a second where the engine's agreement chose another way */
        agx_io_hints h = d->h;
        if (cand == AGX_FLEARN_NODE) /* the engine, with intra-node aggregation */
            cand = AGX_FLEARN_ENGINE, h.node_aggr = 1;
        double t0 = PMPI_Wtime();
        int first = !f->shadow_state;
        if (rc == MPI_SUCCESS && cand == AGX_FLEARN_ENGINE && !agx_file_shadow(f, rd)) /* opened when first needed: */
            cand = AGX_FLEARN_VOTED, how = d->why; /* agreed there, as cand is; later calls: the library's */
        if (first && f->shadow_state) /* set up once: not the engine's time per call under AGX_ADAPT */
            agx_flearn_skip(&d->learn, PMPI_Wtime() - t0);
        agx_tp_gate *gp = fold && !pass ? &g.g : NULL;
        g.t_call = gp ? PMPI_Wtime() : 0; /* a learning turn the engine's agreement starts: timed from here */
        if (rc == MPI_SUCCESS && cand == AGX_FLEARN_ENGINE)
            rc = rd ? agx_tp_read(f->shadow, f->pfd, f->comm, vote ? 0 : n, off, len, data, &h, vote, fn, &st, gp)
                    : agx_tp_write(f->shadow, f->pfd, f->comm, vote ? 0 : n, off, len, data, &h, vote, fn, &st, gp);
        if (rc != AGX_IO_REPICK)
            break;
        rc = MPI_SUCCESS, cand = g.cand, how = g.how; /* on every rank, before anything moved */
    }
    agx_file_unmap(off, cap);
    if (rc == MPI_SUCCESS && rd && cand == AGX_FLEARN_ENGINE && data && data != buf &&
        agx_pack(buf, count, dt, data, 1) != MPI_SUCCESS)
        rc = agx_error(MPI_ERR_TYPE, "%s: the data read could not be unpacked into the memory type", fn);
    if (data != buf)
        agx_tp_buf_free(data, (size_t)nbytes);
    if (rc == AGX_IO_NATIVE || (rc == MPI_SUCCESS && cand != AGX_FLEARN_ENGINE)) {
        int b = how ? 4 + (cand == AGX_FLEARN_LIBRARY && !strstr(how, "faster")) : 2;
        d->given++, d->last = how ? how : rd ? "a rank asked for it, or a read past the end of the file"
                                             : "a rank asked for it";
        agx_file_tell(f, bit + b, 1, "%s: the library's own (%s)", fn, d->last);
        rc = library(rd, at, fh, offset, buf, count, dt, status);
        agx_flearn_done(&d->learn, rc == MPI_SUCCESS && cand == AGX_FLEARN_LIBRARY, 0, f->comm, f->path);
        return rc;
    }
    /* each rank its own: agreed, as the plan is, also where this rank's file calls failed */
    int own = cand == AGX_FLEARN_ENGINE && st.meta_kernel && !strcmp(st.meta_kernel, "own");
    agx_flearn_done(&d->learn, rc == MPI_SUCCESS, own, f->comm, f->path);
    if (rc != MPI_SUCCESS)
        return agx_raise_file(fh, f->comm, rc);
    d->taken++, d->last = NULL, d->kernel = st.data_kernel;
    const double ph[5] = {st.meta_time, st.data_time, st.io_time, st.other_time, st.total_time};
    for (int i = 0; i < 5; i++)
        d->phase[i] += ph[i];
    agx_file_tell(f, bit + 3, 1, "%s: agx's two-phase %s (KangRoss20): %d aggregators, %d rounds, kernels %s / %s",
                  fn, rd ? "read" : "write", st.aggregators, st.rounds, st.meta_kernel, st.data_kernel);
    if (!at && nbytes > 0)
        PMPI_File_seek(fh, pos + nbytes / f->etype_size, MPI_SEEK_SET);
    if (status != MPI_STATUS_IGNORE) /* the bytes: MPI_Get_count / _elements divide them
                                      * as for a received message (both libraries keep bytes) */
        PMPI_Status_set_elements_x(status, MPI_BYTE, nbytes);
    return MPI_SUCCESS;
}

int agx_mpi_file_write_all(MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    return access_view(0, 0, fh, 0, (void *)buf, count, datatype, status);
}

int agx_mpi_file_write_at_all(MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype,
                              MPI_Status *status)
{
    return access_view(0, 1, fh, offset, (void *)buf, count, datatype, status);
}

int agx_mpi_file_read_all(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    return access_view(1, 0, fh, 0, buf, count, datatype, status);
}

int agx_mpi_file_read_at_all(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype,
                             MPI_Status *status)
{
    return access_view(1, 1, fh, offset, buf, count, datatype, status);
}
