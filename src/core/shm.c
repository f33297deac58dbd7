/*
 * Node-shared segments: one MPI-3 shared window per region (the communicator's
 * shared-memory nodes, or the AGX_REGION_SIZE / AGX_REGIONS regions where their ranks
 * share memory), kept in the communicator's context and grown when a call needs more.
 *
 * Set-up (first use, collective over the communicator): a region communicator (split by
 * region) and a lane communicator (split by index within the region, ordered by region);
 * MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) on the region communicator tells whether the
 * region's ranks share memory, and that is agreed over the whole communicator, so either
 * every rank uses the segments or none does (the caller then falls back).
 *
 * The segment is allocated by the region's first rank (MPI_Win_allocate_shared, size 0
 * elsewhere; MPI_Win_shared_query gives every rank the same base), with an alloc_shared_
 * noncontig hint off. Every rank holds a passive-target epoch on it from creation to
 * free (MPI_Win_lock_all with MPI_MODE_NOCHECK), so loads and stores are allowed at any
 * time, and agx_shm_sync orders them (MPI-3.1 Sec. 11.7, the unified model's
 * "MPI_Win_sync, then a process synchronisation, then MPI_Win_sync" idiom): every store a
 * rank made before its agx_shm_sync is visible to every load another rank of the region
 * makes after its own.
 *
 * A new segment is zeroed by its allocator before the agreement that ends the growth.
 * Growing depends only on the bytes asked for, which every caller derives from the call's
 * arguments (the same on every rank), so every region grows at the same call; the
 * allocation's outcome is agreed over the whole communicator. SimGrid SMPI has no shared
 * windows: built with AGX_NO_SHM, the segments are never usable there.
 */
#include "core.h"
#include "notify.h"

#include <stdlib.h>
#include <string.h>

#define AGX_SHM_FLOOR ((size_t)64 << 10) /* a segment's least bytes */

static void drop_window(agx_shm *m)
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
    m->base = NULL;
    m->size = 0;
}

void agx_shm_free(agx_shm *m)
{
    if (!m)
        return;
    if (m->hold) /* an unreleased zero-copy result: its release finds it gone */
        m->hold->m = NULL;
    drop_window(m);
    agx_ntf_drain(m);
    if (m->node != MPI_COMM_NULL)
        MPI_Comm_free(&m->node);
    if (m->lane != MPI_COMM_NULL)
        MPI_Comm_free(&m->lane);
    free(m);
}

/* The region and lane communicators, and whether every region shares memory (agreed). */
static int shm_setup(agx_ctx *ctx, const agx_regions *R, agx_shm *m, const char *fn)
{
    int rc, shared = 0, reg = R->region_of[ctx->rank], loc = R->local[ctx->rank];
    rc = MPI_Comm_split(ctx->pcomm, reg, ctx->rank, &m->node);
    if (rc == MPI_SUCCESS)
        rc = MPI_Comm_split(ctx->pcomm, loc, reg, &m->lane);
#ifndef AGX_NO_SHM
    if (rc == MPI_SUCCESS) {
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

/* A segment of at least `bytes` (collective over the communicator when it grows). The
 * old one is dropped after a barrier of the region: every rank of the region has left
 * the last call that used it (a rank may still be copying a result out when a faster one
 * starts the call that grows), whether or not MPI_Win_free waits for the other ranks. */
static int shm_grow(agx_ctx *ctx, agx_shm *m, size_t bytes, const char *fn)
{
    int rc, lrank, disp;
    MPI_Aint size;
    MPI_Info info = MPI_INFO_NULL;
    if (m->win != MPI_WIN_NULL)
        PMPI_Barrier(m->node); /* its failure shows in the allocation that follows */
    drop_window(m);
    m->held = 0;
    MPI_Comm_rank(m->node, &lrank);
    MPI_Info_create(&info);
    MPI_Info_set(info, "alloc_shared_noncontig", "false");
    rc = MPI_Win_allocate_shared(lrank == 0 ? (MPI_Aint)bytes : 0, 1, info, m->node, &m->base, &m->win);
    MPI_Info_free(&info);
    if (rc == MPI_SUCCESS) {
        MPI_Win_set_errhandler(m->win, MPI_ERRORS_RETURN);
        rc = MPI_Win_shared_query(m->win, 0, &size, &disp, &m->base);
        if (rc == MPI_SUCCESS && (size_t)size < bytes)
            rc = agx_error(MPI_ERR_NO_MEM, "%s: shared segment of %ld bytes, %zu asked", fn, (long)size, bytes);
        if (rc == MPI_SUCCESS && lrank == 0)
            memset(m->base, 0, bytes); /* before the agreement below: no rank uses it earlier */
        if (rc == MPI_SUCCESS)
            rc = MPI_Win_lock_all(MPI_MODE_NOCHECK, m->win);
        if (rc != MPI_SUCCESS) {
            MPI_Win_free(&m->win);
            m->win = MPI_WIN_NULL;
        }
    } else {
        m->win = MPI_WIN_NULL;
        rc = agx_error(MPI_ERR_NO_MEM, "%s: cannot allocate a node-shared segment of %zu bytes", fn, bytes);
    }
    if ((rc = agx_agree(ctx->pcomm, ctx->rank, rc, NULL, 0, fn, "could not allocate its node-shared segment")) !=
        MPI_SUCCESS) {
        drop_window(m); /* collective over the region: every rank drops it */
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
    int rc = MPI_Win_sync(m->win);
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
