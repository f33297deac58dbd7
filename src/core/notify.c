/*
 * Notified one-sided writes into node-shared windows: SharedNotify's GASPI mechanism
 * (Sec. I-II: segments, gaspi_write_notify, gaspi_notify_waitsome, shared notifications)
 * on MPI-3 RMA. docs/algorithms.md maps each GASPI primitive step by step.
 *
 * The segment (GASPI's segment bound to a shared window, Table I's "shared segment") is
 * the communicator's AGX_SHM_NOTIFY node-shared segment (src/core/shm.c), zeroed when
 * allocated. It is also exposed to every rank of the communicator through a second window,
 * `iwin` (MPI_Win_create over the private communicator, every local rank exposing the
 * same memory: gaspi_segment_register to the remote writers), held in a lock_all epoch
 * from creation to free. Layout:
 *   [0, 4)                     the ready word (see below)
 *   [AGX_NTF_HDR, +4 n)        the shared notification array: one int per block id
 *   [agx_ntf_data_offset(n),)  the data (the call's result)
 *
 * write_notify(target, id) = MPI_Put of the data to the target rank, MPI_Win_flush(target)
 * (the data is complete at the target), then MPI_Accumulate(seq, MPI_REPLACE) into slot
 * id of the target node's notification array, at the node's first rank (its leader), and
 * MPI_Win_flush. A slot gets exactly one remote write per call. The node's processes
 * read it with atomic loads after MPI_Win_sync(iwin) (the unified model's polling idiom:
 * a completed remote update becomes visible, and MPI_Win_sync orders the loads after it),
 * and claim an arrived block with the processor's compare-and-swap (seq -> -seq) on the
 * memory they share: the remote write precedes every claim of its call, and the next
 * call's write waits for the ready word (below), so no claim races a remote write
 * (MPI_Compare_and_swap at the leader through iwin would serve too, at a round trip to
 * the leader per claim). A process that sees seq or -seq in slot id knows the
 * block's data is in its node's segment (the writer flushed it before notifying), and
 * MPI_Win_sync orders its later loads after that observation.
 *
 * seq counts the calls on the segment (the same on every rank), so a slot holds the
 * call that notified it. The node's leader clears the call's slots at its start (the
 * array's length follows the call's blocks, so a slot may lie where an earlier call's
 * data was, and a data word equal to seq would pass for a notification). The ready word stops a fast
 * node from writing call N+1's data into a node still reading call N's result: at the
 * start of each call, after a node barrier (every local process is done with the last
 * result), the leader accumulates the last seq into the previous node's ready word, and a
 * process waits for its own node's ready word (written by the next node, the one it
 * writes to) to reach the last seq before its first remote write. A new segment skips
 * both: its growth was agreed over the whole communicator after every rank left the
 * last call.
 */
#include "core.h"
#include "notify.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int leader(const agx_regions *R, int k) { return R->members[R->start[k]]; }

/* Poll without a message to wait for: let the MPI library progress (passive-target
 * RMA may need the target to enter the library: MPICH over UCX does, and a probe on a
 * communicator of this node only does not progress it), then give the core away. The
 * probe also finds failure notices: one for this call stops the poll, one for a later call
 * (its sender is a call ahead) is kept for that call, and an older one (its call ended
 * here before the notice came) is dropped. */
/* One failure notice if one has come (*got = 1): its call's seq and its sender. The probe
 * spans the nodes. */
static int take_notice(const agx_shm *m, int *got, int *seq, int *from)
{
    MPI_Status st;
    int rc = MPI_Iprobe(MPI_ANY_SOURCE, AGX_NTF_TAG, m->all, got, &st);
    if (rc != MPI_SUCCESS || !*got)
        return rc;
    *from = st.MPI_SOURCE;
    return MPI_Recv(seq, 1, MPI_INT, st.MPI_SOURCE, AGX_NTF_TAG, m->all, MPI_STATUS_IGNORE);
}

int agx_ntf_idle(agx_shm *m)
{
    int flag, seq, from, rc;
    if ((rc = take_notice(m, &flag, &seq, &from)) != MPI_SUCCESS)
        return rc;
    if (flag && seq >= m->seq) { /* this call's, or a later one's (kept for it) */
        m->noticed = seq;
        m->noticer = from;
    }
    if (m->noticed == m->seq)
        return agx_error(MPI_ERR_OTHER, "agx_allgather (shm_notify): rank %d of the communicator failed during this "
                         "call (its error says why); this rank stopped waiting for its blocks", m->noticer);
    if (!flag)
        sched_yield();
    return MPI_SUCCESS;
}

/* A notice per other rank, from m->note (it outlives the sends: 4 bytes, sent eagerly by
 * both MPI libraries, and the requests are freed, not waited for: a rank that finished
 * the call before the notice came never receives it, and drops it in a later poll). */
int agx_ntf_fail(agx_shm *m, int rc)
{
    int me, p;
    if (rc == MPI_SUCCESS || m->noticed == m->seq)
        return rc;
    m->note = m->seq;
    MPI_Comm_rank(m->all, &me);
    MPI_Comm_size(m->all, &p);
    for (int i = 0; i < p; i++) {
        MPI_Request req;
        if (i != me && MPI_Isend(&m->note, 1, MPI_INT, i, AGX_NTF_TAG, m->all, &req) == MPI_SUCCESS)
            PMPI_Request_free(&req);
    }
    return rc;
}

void agx_ntf_drain(agx_shm *m)
{
    int flag = 1, seq, from;
    while (m->all != MPI_COMM_NULL && flag && take_notice(m, &flag, &seq, &from) == MPI_SUCCESS)
        ;
}

/* Test hook: AGX_TEST_NTF_FAIL=RANK:CALL makes that rank's puts fail at that call (the
 * segment's seq, counted from 1), so the tests can check that a failure in the middle of
 * the ring reaches every rank. */
static int injected_fault(const agx_shm *m)
{
    static int rank = -2, call;
    if (rank == -2) {
        const char *e = getenv("AGX_TEST_NTF_FAIL");
        if (!e || sscanf(e, "%d:%d", &rank, &call) != 2)
            rank = -1;
    }
    int me = -1;
    if (rank >= 0 && call == m->seq)
        MPI_Comm_rank(m->all, &me);
    return rank >= 0 && me == rank;
}

int agx_ntf_get(agx_ctx *ctx, const agx_regions *R, size_t bytes, agx_shm **out, const char *fn)
{
    agx_shm *m;
    int rc;
    *out = NULL;
    if ((rc = agx_ctx_shm(ctx, R, AGX_SHM_NOTIFY, bytes, &m, fn)) != MPI_SUCCESS)
        return rc;
    if (!m) {
        if (ctx->shm[AGX_SHM_NOTIFY])
            ctx->shm[AGX_SHM_NOTIFY]->why = "the ranks of a node do not share memory";
        return MPI_SUCCESS;
    }
    if (m->why)
        return MPI_SUCCESS;
    if (m->iwin == MPI_WIN_NULL) { /* collective: every rank lacks it at the same call */
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, "same_disp_unit", "true");
        rc = MPI_Win_create(m->base, (MPI_Aint)m->size, 1, info, ctx->pcomm, &m->iwin);
        MPI_Info_free(&info);
        if (rc == MPI_SUCCESS) {
            MPI_Win_set_errhandler(m->iwin, MPI_ERRORS_RETURN);
            if ((rc = MPI_Win_lock_all(MPI_MODE_NOCHECK, m->iwin)) != MPI_SUCCESS)
                MPI_Win_free(&m->iwin);
        }
        if (rc != MPI_SUCCESS)
            m->iwin = MPI_WIN_NULL;
        long long broken = rc != MPI_SUCCESS;
        if ((rc = agx_agree(ctx->pcomm, ctx->rank, MPI_SUCCESS, &broken, 1, fn, "")) != MPI_SUCCESS)
            return rc;
        if (broken) { /* an MPI without working RMA between the nodes: the caller falls back */
            if (m->iwin != MPI_WIN_NULL) {
                MPI_Win_unlock_all(m->iwin);
                MPI_Win_free(&m->iwin);
            }
            m->iwin = MPI_WIN_NULL;
            m->why = "the MPI library cannot create an RMA window across the nodes";
            return MPI_SUCCESS;
        }
    }
    *out = m;
    return MPI_SUCCESS;
}

int agx_ntf_open(agx_shm *m, const agx_regions *R, int me, long long nslots)
{
    int rc = MPI_SUCCESS, k = R->region_of[me];
    if (!m->fresh) {
        rc = agx_shm_sync(m); /* every local process is done with the last result */
        if (rc == MPI_SUCCESS && R->local[me] == 0) {
            /* this call's slots may lie where an earlier call's data was (the array's
             * length follows the call's blocks), and a stale data word equal to this
             * call's seq would pass for a notification: cleared before the ready word
             * lets the previous node write, and before the local processes poll (they
             * pass agx_shm_sync after this) */
            memset(m->base + AGX_NTF_HDR, 0, (size_t)nslots * sizeof(int));
            if ((rc = MPI_Win_sync(m->iwin)) != MPI_SUCCESS)
                return rc;
            int v = m->seq, prev = leader(R, (k - 1 + R->r) % R->r);
            rc = MPI_Accumulate(&v, 1, MPI_INT, prev, 0, 1, MPI_INT, MPI_REPLACE, m->iwin);
            if (rc == MPI_SUCCESS)
                rc = MPI_Win_flush(prev, m->iwin);
        }
    }
    m->seq++; /* 2^31 - 1 calls per segment */
    return rc;
}

/* A notification word of this node's segment: a 4-byte aligned int in memory every local
 * process maps. */
static int *word(const agx_shm *m, size_t disp) { return (int *)(void *)(m->base + disp); }

/* The last seq in this node's ready word (written by the next node's leader). */
int agx_ntf_wait_ready(agx_shm *m)
{
    int rc = MPI_SUCCESS, want = m->seq - 1;
    if (m->fresh) {
        m->fresh = 0;
        return MPI_SUCCESS;
    }
    while ((rc = MPI_Win_sync(m->iwin)) == MPI_SUCCESS && __atomic_load_n(word(m, 0), __ATOMIC_ACQUIRE) < want &&
           (rc = agx_ntf_idle(m)) == MPI_SUCCESS)
        ;
    return rc;
}

int agx_ntf_put(const agx_shm *m, int target, size_t disp, const char *src, size_t bytes)
{
    int rc = MPI_SUCCESS;
    if (injected_fault(m))
        return agx_error(MPI_ERR_OTHER, "agx_allgather (shm_notify): MPI_Put failed (injected by AGX_TEST_NTF_FAIL)");
    for (size_t done = 0; done < bytes && rc == MPI_SUCCESS;) {
        size_t n = bytes - done < AGX_MAX_PIECE ? bytes - done : AGX_MAX_PIECE;
        rc = MPI_Put(src + done, (int)n, MPI_BYTE, target, (MPI_Aint)(disp + done), (int)n, MPI_BYTE, m->iwin);
        done += n;
    }
    return rc;
}

int agx_ntf_flush(const agx_shm *m, int target)
{
    return MPI_Win_flush(target, m->iwin);
}

int agx_ntf_notify(const agx_shm *m, const agx_regions *R, int k, long long id)
{
    /* the origin buffer must stay unchanged until the flush: m->seq does for the call */
    return MPI_Accumulate(&m->seq, 1, MPI_INT, leader(R, k), (MPI_Aint)(AGX_NTF_HDR + id * (long long)sizeof(int)),
                          1, MPI_INT, MPI_REPLACE, m->iwin);
}

int agx_ntf_claim(const agx_shm *m, long long id, int *won)
{
    int want = m->seq;
    *won = __atomic_compare_exchange_n(word(m, AGX_NTF_HDR + (size_t)id * sizeof(int)), &want, -m->seq, 0,
                                       __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
    return MPI_Win_sync(m->iwin); /* the block's data is read after the claim */
}

int agx_ntf_slot(const agx_shm *m, long long id)
{
    return __atomic_load_n(word(m, AGX_NTF_HDR + (size_t)id * sizeof(int)), __ATOMIC_ACQUIRE);
}

