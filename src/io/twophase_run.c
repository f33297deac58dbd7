/*
 * The two-phase engine's driver (docs/algorithms.md, "Two-phase collective write"): one
 * call of either direction from its prepared requests, step 1's agreement A and the ways
 * a call can go from there: the library's own (a vote, overlap, past the end of a read's
 * file), each rank its own (twophase_own.c), the node's leader first (twophase_node.c),
 * or the aggregators' rounds (twophase_write.c); its statistics. agx_tp_write and
 * agx_file_write_all, the write's entries (the read's: twophase_read.c).
 */
#include "twophase.h"

#include <limits.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

static double now(void) { return PMPI_Wtime(); }

static long long cores; /* online on this node (agreement A takes the fewest of any rank's) */
static void count_cores(void) { cores = sysconf(_SC_NPROCESSORS_ONLN); }

static int run_all(agx_tp *t, int native)
{
    int rc;
    agx_coll_install();
    if ((rc = agx_call_begin(&t->a, t->fn)) != MPI_SUCCESS)
        return rc;
    if (t->a.kind != AGX_KIND_INTRA)
        return agx_error(MPI_ERR_COMM, "%s: needs an intra-communicator", t->fn);
    int local = native > 0 ? MPI_SUCCESS : agx_tp_check(t);
    native = native > 0 || t->overlap;
    long long h = (long long)(agx_tp_hints_hash(&t->h) >> 1);
    int own_ok = local == MPI_SUCCESS && !native && agx_tp_own_ok(t);
    static pthread_once_t once = PTHREAD_ONCE_INIT; /* sysconf reads /sys: once, not per call */
    pthread_once(&once, count_cores);
    long long v[13] = {local == MPI_SUCCESS && !native ? -t->lo : 0, t->hi, h, -h, native, -own_ok, -t->fsize,
                       t->nreq, -(cores > 0 ? cores : 1), t->bytes};
    int nv = t->gate ? 13 : 10;
    if (t->gate)
        memcpy(v + 10, t->gate->v, sizeof t->gate->v);
    long long mine[4] = {0}, spans[4 * AGX_AGREE_GATHER_P]; /* on few ranks, the spans ride on it */
    int gather = t->a.p <= AGX_AGREE_GATHER_P;
    if (own_ok)
        memcpy(mine, t->own_rec + 4 * t->a.rank, sizeof mine);
    if ((rc = gather ? agx_agree_gather(t->a.comm, t->a.rank, t->a.p, local, v, nv, mine, 4, spans, t->fn,
                                        "has invalid arguments")
                     : agx_agree(t->a.comm, t->a.rank, local, v, nv, t->fn, "has invalid arguments")) != MPI_SUCCESS)
        return rc;
    t->req_max = v[7], t->cores = (int)-v[8];
    if (v[4])
        return AGX_IO_NATIVE;
    if (v[2] != -v[3])
        return agx_error(MPI_ERR_ARG, "%s: the hints differ between ranks", t->fn);
    if (t->gate && (rc = t->gate->fn(t->gate, v + 10)) != MPI_SUCCESS) /* AGX_IO_REPICK too */
        return rc;
    int own = 0;
    t->lo = -v[0], t->hi = v[1];
    if (t->hi <= t->lo) /* nothing to move anywhere */
        return MPI_SUCCESS;
    if (t->reading && t->hi > -v[6]) /* past the end of the file (the smallest size seen) */
        return t->native_ok ? AGX_IO_NATIVE : agx_error(MPI_ERR_IO, "%s: the requests reach byte %lld, past the "
                                                        "end of the file (%lld bytes)", t->fn, t->hi, -v[6]);
    if (v[5] == -1 && ((rc = agx_tp_own(t, gather ? spans : NULL, &own)) != MPI_SUCCESS || own)) /* every rank may */
        return rc;
    const agx_regions *R;
    if ((rc = agx_ctx_regions(t->a.ctx, &R)) != MPI_SUCCESS)
        return rc;
    if (agx_tp_node_ok(t, R, v[9]))
        return agx_tp_node(t, R);
    local = agx_tp_aggregators(t);
    if (local == MPI_SUCCESS)
        local = agx_tp_pieces(t);
    if ((rc = agx_tp_metadata(t, local)) != MPI_SUCCESS)
        return rc;
    return agx_tp_rounds(t);
}

int agx_tp_run(agx_tp *t, int native, agx_io_stats *stats)
{
    /* MPI_File calls made here return their errors (the user's handler runs once, at
     * the end, with agx's agreed error) */
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
    if (t->pfd < 0 && t->fh != MPI_FILE_NULL && MPI_File_get_errhandler(t->fh, &eh) == MPI_SUCCESS)
        MPI_File_set_errhandler(t->fh, MPI_ERRORS_RETURN);
    MPI_Offset size = 0;
    t->fsize = LLONG_MAX / 2; /* a read compares its span with the smallest size seen */
    if (t->reading && !t->h.no_write && t->pfd >= 0)
        t->fsize = (size = agx_posix_size(t->pfd)) > 0 ? size : 0;
    else if (t->reading && !t->h.no_write && t->fh != MPI_FILE_NULL)
        t->fsize = MPI_File_get_size(t->fh, &size) == MPI_SUCCESS ? size : 0;
    double t0 = now();
    int rc = run_all(t, native);
    if (eh != MPI_ERRHANDLER_NULL) {
        MPI_File_set_errhandler(t->fh, eh);
        MPI_Errhandler_free(&eh);
    }
    if (rc == MPI_SUCCESS && stats && t->node) { /* twophase_node.c filled them */
        t->st.total_time = now() - t0;
        t->st.other_time = t->st.total_time - t->st.meta_time - t->st.data_time - t->st.io_time;
        *stats = t->st;
    } else if (rc == MPI_SUCCESS && stats) {
        t->st.total_time = now() - t0;
        t->st.other_time = t->st.total_time - t->st.meta_time - t->st.data_time - t->st.io_time;
        t->st.rounds = t->nrounds < INT_MAX ? (int)t->nrounds : INT_MAX;
        t->st.aggregators = t->naggr;
        t->st.is_aggregator = t->my_aggr >= 0;
        const agx_alg *m = agx_alg_at(AGX_OP_ALLTOALLV, AGX_KIND_INTRA, t->alg_meta);
        const agx_alg *d = agx_alg_at(AGX_OP_ALLTOALLV, AGX_KIND_INTRA, t->alg_data);
        t->st.meta_kernel = t->own ? "own" : t->nrounds && m ? m->name : "none";
        t->st.data_kernel = t->own ? "own" : t->typed ? "in_place" : t->nrounds && d ? d->name : "none";
        *stats = t->st;
    } else if (stats) /* failed on this rank: whether the call went each rank its own is agreed */
        stats->meta_kernel = t->own ? "own" : NULL;
    agx_tp_free(t);
    return rc;
}

int agx_tp_write(MPI_File fh, int pfd, MPI_Comm comm, int n, const MPI_Offset *off, const int *len, const void *buf,
                 const agx_io_hints *h, int native, const char *fn, agx_io_stats *stats, agx_tp_gate *gate)
{
    agx_tp t = {.a = {.op = AGX_OP_ALLTOALLV, .user_comm = comm}, .fh = fh, .pfd = pfd, .fn = fn, .n = n, .off = off,
                .len = len, .buf = buf, .native_ok = native >= 0, .gate = gate};
    if (h)
        t.h = *h;
    else
        agx_io_hints_init(&t.h);
    return agx_tp_run(&t, native, stats);
}

int agx_file_write_all(MPI_File fh, MPI_Comm comm, int n, const MPI_Offset offsets[], const int lengths[],
                       const void *buf, const agx_io_hints *hints, agx_io_stats *stats)
{
    return agx_raise_file(fh, comm,
                          agx_tp_write(fh, -1, comm, n, offsets, lengths, buf, hints, -1, "agx_file_write_all", stats,
                                      NULL));
}
