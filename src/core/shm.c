/*
 * Node-shared segments: one segment per region (the communicator's shared-memory nodes,
 * or the AGX_REGION_SIZE / AGX_REGIONS regions where their ranks share memory), kept in
 * the communicator's context and grown when a call needs more.
 *
 * Set-up (first use, collective over the communicator): a region communicator (split by
 * region) and a lane communicator (split by index within the region, ordered by region),
 * or, where one region holds the whole communicator, the private communicator as the
 * region's and no lanes (two MPI_Comm_split saved);
 * where the regions are not the nodes MPI_COMM_TYPE_SHARED gave (an override),
 * MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) on the region communicator tells whether the
 * region's ranks share memory; that is agreed over the whole communicator, so either every
 * rank uses the segments or none does (the caller then falls back).
 *
 * A segment is a POSIX shared-memory object: the region's first rank creates it
 * (shm_open, ftruncate: pages zeroed when first touched, none made that a call does not
 * use; only where the file system has room for all of it now, not a SIGBUS later) and
 * sends its name over the region communicator; every rank maps it; after the agreement
 * that ends the growth (every rank has mapped it) the first rank unlinks the name, so
 * nothing is left behind once the ranks unmap it. The first dissemination_shm call on a
 * new communicator of 2 ranks (Open MPI 4.1, this project's 2-core VM) takes 285 us
 * median this way, 482 us with an MPI window (docs/RESULTS.md, "Node-shared segments"); a region
 * whose first rank cannot create one (or AGX_SHM=mpi) uses an MPI-3 shared window instead
 * (MPI_Win_allocate_shared, size 0 but at the first rank, an alloc_shared_noncontig hint
 * off, MPI_Win_shared_query for the base, zeroed by the first rank), on which every rank
 * holds a passive-target epoch (MPI_Win_lock_all, MPI_MODE_NOCHECK) from creation to
 * free. agx_shm_sync orders the loads and stores (MPI-3.1 Sec. 11.7, the unified model's
 * "MPI_Win_sync, then a process synchronisation, then MPI_Win_sync" idiom, with a full
 * memory fence for MPI_Win_sync on a POSIX segment, which is what Open MPI's and MPICH's
 * MPI_Win_sync on a shared window is): every store a rank made before its agx_shm_sync is
 * visible to every load another rank of the region makes after its own.
 *
 * Growing depends only on the bytes asked for, which every caller derives from the call's
 * arguments (the same on every rank), so every region grows at the same call; the
 * allocation's outcome is agreed over the whole communicator. SimGrid SMPI has no shared
 * memory between ranks: built with AGX_NO_SHM, the segments are never usable there.
 */
#include "core.h"
#include "notify.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/statvfs.h>
#include <unistd.h>

#define AGX_SHM_FLOOR ((size_t)64 << 10) /* a segment's least bytes */

static void drop_segment(agx_shm *m)
{
    if (m->iwin != MPI_WIN_NULL) { /* it exposes the segment: freed first */
        MPI_Win_unlock_all(m->iwin);
        MPI_Win_free(&m->iwin);
    }
    m->iwin = MPI_WIN_NULL;
    if (m->win != MPI_WIN_NULL) {
        MPI_Win_unlock_all(m->win);
        MPI_Win_free(&m->win);
    }
    m->win = MPI_WIN_NULL;
    if (m->mapped)
        munmap(m->base, m->mapped);
    m->mapped = 0;
    m->base = NULL;
    m->size = 0;
}

void agx_shm_free(agx_shm *m)
{
    if (!m)
        return;
    if (m->hold) /* an unreleased zero-copy result: its release finds it gone */
        m->hold->m = NULL;
    drop_segment(m);
    agx_ntf_drain(m);
    if (m->node != MPI_COMM_NULL && m->node != m->all) /* the private communicator's not ours */
        MPI_Comm_free(&m->node);
    if (m->lane != MPI_COMM_NULL)
        MPI_Comm_free(&m->lane);
    free(m);
}

/* The region and lane communicators, and whether every region shares memory (agreed). */
static int shm_setup(agx_ctx *ctx, const agx_regions *R, agx_shm *m, const char *fn)
{
    int rc = MPI_SUCCESS, shared = 0, reg = R->region_of[ctx->rank], loc = R->local[ctx->rank];
    if (R->r == 1) /* one region: its collectives on the private communicator itself (a blocking
                    * call posts the requests' queued ones first), no lanes; two splits saved */
        m->node = ctx->pcomm;
    else if ((rc = MPI_Comm_split(ctx->pcomm, reg, ctx->rank, &m->node)) == MPI_SUCCESS)
        rc = MPI_Comm_split(ctx->pcomm, loc, reg, &m->lane);
#ifndef AGX_NO_SHM
    shared = ctx->reg == R && ctx->reg_nodes; /* the nodes themselves: no need to ask */
    if (rc == MPI_SUCCESS && !shared) {
        MPI_Comm sh;
        int n, size;
        if ((rc = MPI_Comm_split_type(m->node, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &sh)) == MPI_SUCCESS) {
            MPI_Comm_size(sh, &n);
            MPI_Comm_size(m->node, &size);
            shared = n == size;
            MPI_Comm_free(&sh);
        }
    }
#endif
    long long unshared = !shared;
    if ((rc = agx_agree(ctx->pcomm, ctx->rank, rc, &unshared, 1, fn, "could not set up its node communicators")) !=
        MPI_SUCCESS)
        return rc;
    m->usable = !unshared;
    return MPI_SUCCESS;
}

#ifndef AGX_NO_SHM
/* AGX_SHM=mpi: MPI-3 shared windows only (the POSIX segments' fallback, for tests). */
static int posix_wanted(void)
{
    static int wanted = -1;
    if (wanted < 0) {
        const char *e = getenv("AGX_SHM");
        wanted = !(e && strcmp(e, "mpi") == 0);
    }
    return wanted;
}
#endif

/* A POSIX segment of `bytes` for the region (collective over m->node): the first rank
 * creates it and sends its name (name[0] = 0: it could not, the region takes an MPI
 * window, *posix = 0); every rank maps it. The first rank's name is left in `name` for
 * the unlink after the agreement. */
static int posix_map(agx_shm *m, int lrank, size_t bytes, char *name, int *posix, const char *fn)
{
    int fd = -1, rc;
    name[0] = 0;
#ifndef AGX_NO_SHM
    static unsigned serial;
    for (int tries = 0; lrank == 0 && posix_wanted() && fd < 0 && tries < 8; tries++) {
        snprintf(name, 64, "/agx.%d.%u", (int)getpid(), __atomic_fetch_add(&serial, 1, __ATOMIC_RELAXED));
        if ((fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600)) < 0 && errno != EEXIST)
            break;
    }
    struct statvfs fs; /* the room for it now, not a SIGBUS at a later touch */
    if (fd >= 0 && (fstatvfs(fd, &fs) != 0 || (unsigned long long)fs.f_bavail * fs.f_bsize < bytes ||
                    ftruncate(fd, (off_t)bytes) != 0)) {
        close(fd), fd = -1;
        shm_unlink(name);
    }
    if (fd < 0)
        name[0] = 0;
#endif
    if ((rc = PMPI_Bcast(name, 64, MPI_CHAR, 0, m->node)) != MPI_SUCCESS) {
        if (fd >= 0)
            close(fd), shm_unlink(name);
        name[0] = 0, *posix = 1; /* not the MPI window either: the agreement fails the call */
        return rc;
    }
    if (!(*posix = name[0] != 0))
        return MPI_SUCCESS;
    if (lrank != 0)
        fd = shm_open(name, O_RDWR, 0);
    void *p = fd >= 0 ? mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
    if (fd >= 0)
        close(fd);
    if (p == MAP_FAILED)
        return agx_error(MPI_ERR_NO_MEM, "%s: cannot map the node-shared segment %s of %zu bytes", fn, name, bytes);
    m->base = p, m->mapped = bytes;
    return MPI_SUCCESS;
}

/* The fallback: an MPI-3 shared window of `bytes` for the region (collective over
 * m->node), allocated and zeroed by the first rank, locked (passive target) by every rank. */
static int window_map(agx_shm *m, int lrank, size_t bytes, const char *fn)
{
    int rc, disp;
    MPI_Aint size;
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "alloc_shared_noncontig", "false");
    rc = MPI_Win_allocate_shared(lrank == 0 ? (MPI_Aint)bytes : 0, 1, info, m->node, &m->base, &m->win);
    MPI_Info_free(&info);
    if (rc != MPI_SUCCESS) {
        m->win = MPI_WIN_NULL;
        return agx_error(MPI_ERR_NO_MEM, "%s: cannot allocate a node-shared segment of %zu bytes", fn, bytes);
    }
    MPI_Win_set_errhandler(m->win, MPI_ERRORS_RETURN);
    rc = MPI_Win_shared_query(m->win, 0, &size, &disp, &m->base);
    if (rc == MPI_SUCCESS && (size_t)size < bytes)
        rc = agx_error(MPI_ERR_NO_MEM, "%s: shared segment of %ld bytes, %zu asked", fn, (long)size, bytes);
    if (rc == MPI_SUCCESS && lrank == 0)
        memset(m->base, 0, bytes); /* before the agreement that ends the growth: no rank uses it earlier */
    if (rc == MPI_SUCCESS)
        rc = MPI_Win_lock_all(MPI_MODE_NOCHECK, m->win);
    if (rc != MPI_SUCCESS) {
        MPI_Win_free(&m->win);
        m->win = MPI_WIN_NULL;
    }
    return rc;
}

/* A segment of at least `bytes` (collective over the communicator when it grows). An old
 * MPI window is dropped after a barrier of the region: every rank of the region has left
 * the last call that used it (a rank may still be copying a result out when a faster one
 * starts the call that grows), whether or not MPI_Win_free waits for the other ranks; an
 * old POSIX segment needs none (a rank's munmap leaves the others' mappings; the notified
 * layer's window over it is freed first, collectively: MPI-3.1 Sec. 11.2.5). */
static int shm_grow(agx_ctx *ctx, agx_shm *m, size_t bytes, const char *fn)
{
    int rc, lrank, posix;
    char name[64];
    if (m->win != MPI_WIN_NULL)
        PMPI_Barrier(m->node); /* its failure shows in the allocation that follows */
    drop_segment(m);
    m->held = 0;
    MPI_Comm_rank(m->node, &lrank);
    rc = posix_map(m, lrank, bytes, name, &posix, fn);
    if (!posix)
        rc = window_map(m, lrank, bytes, fn);
    rc = agx_agree(ctx->pcomm, ctx->rank, rc, NULL, 0, fn, "could not allocate its node-shared segment");
    if (name[0])
        shm_unlink(name); /* every rank of the region has mapped it, or failed and agreed so */
    if (rc != MPI_SUCCESS) {
        drop_segment(m); /* collective over the region: every rank drops it */
        return rc;
    }
    m->size = bytes;
    m->fresh = 1;
    return MPI_SUCCESS;
}

int agx_ctx_shm(agx_ctx *ctx, const agx_regions *R, int which, size_t bytes, agx_shm **out, const char *fn)
{
    int rc;
    *out = NULL;
    if (!ctx->shm[which] || (ctx->shm[which]->usable && bytes > ctx->shm[which]->size))
        agx_req_flush(ctx); /* collectives on pcomm follow: the requests' queued ones first */
    if (!ctx->shm[which]) {
        agx_shm *m = calloc(1, sizeof *m);
        int mine = m ? MPI_SUCCESS : agx_error(MPI_ERR_NO_MEM, "%s: out of memory", fn);
        if ((rc = agx_agree(ctx->pcomm, ctx->rank, mine, NULL, 0, fn, "ran out of memory")) != MPI_SUCCESS) {
            free(m);
            return rc;
        }
        m->node = m->lane = MPI_COMM_NULL;
        m->win = m->iwin = MPI_WIN_NULL;
        m->all = ctx->pcomm;
        ctx->shm[which] = m;
        if ((rc = shm_setup(ctx, R, m, fn)) != MPI_SUCCESS) {
            agx_shm_free(m);
            ctx->shm[which] = NULL;
            return rc;
        }
    }
    agx_shm *m = ctx->shm[which];
    if (!m->usable)
        return MPI_SUCCESS;
    /* at least doubled: a run of calls with growing sizes re-creates the windows
     * O(log) times (each is collective: 190-290 us on 2 ranks here); at least
     * AGX_SHM_FLOOR, so that the short vectors' size classes (an on-line choice's
     * window visits each) make it once */
    size_t want = bytes < 2 * m->size ? 2 * m->size : bytes;
    if (bytes > m->size && (rc = shm_grow(ctx, m, want < AGX_SHM_FLOOR ? AGX_SHM_FLOOR : want, fn)) != MPI_SUCCESS)
        return rc;
    *out = m;
    return MPI_SUCCESS;
}

/* MPI_Win_sync on the segment's windows: the shared one, and the RMA window that exposes
 * the same memory when the notified layer made one. */
static int win_sync(const agx_shm *m)
{
    int rc = MPI_SUCCESS;
    if (m->win != MPI_WIN_NULL)
        rc = MPI_Win_sync(m->win);
    else
        __atomic_thread_fence(__ATOMIC_SEQ_CST); /* a POSIX segment */
    if (rc == MPI_SUCCESS && m->iwin != MPI_WIN_NULL)
        rc = MPI_Win_sync(m->iwin);
    return rc;
}

int agx_shm_sync(const agx_shm *m)
{
    int rc = win_sync(m);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Barrier(m->node);
    if (rc == MPI_SUCCESS)
        rc = win_sync(m);
    return rc;
}
