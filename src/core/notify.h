/* The notified one-sided layer (src/core/notify.c): SharedNotify's write_notify and
 * shared notifications on MPI-3 RMA. A call runs: agx_ntf_get (the segment and its
 * windows), agx_ntf_open, local stores into the data, agx_shm_sync (it orders both
 * windows), agx_ntf_wait_ready, then puts / flushes / notifies and polls with claims. */
#ifndef AGX_NOTIFY_H
#define AGX_NOTIFY_H

#include "core.h"
#include "shm_layout.h" /* the segment's layout: AGX_NTF_HDR, agx_ntf_data_offset */

/* The tag of failure notices (agx_ntf_fail), also probed to drive progress while polling. */
#define AGX_NTF_TAG 32767
/* The notified segment of at least `bytes` bytes and its RMA window (collective when
 * they are created or grow), or *out = NULL with ctx->shm[AGX_SHM_NOTIFY]->why set when
 * the communicator cannot use it (the same on every rank). */
int agx_ntf_get(agx_ctx *ctx, const agx_regions *R, size_t bytes, agx_shm **out, const char *fn);
/* Start a call: node barrier, ready word to the previous node, next seq. */
int agx_ntf_open(agx_shm *m, const agx_regions *R, int me, long long nslots);
/* Wait until the next node has released the last call's result. */
int agx_ntf_wait_ready(agx_shm *m);
/* MPI_Put of bytes to `target` at displacement disp of its node's segment. */
int agx_ntf_put(const agx_shm *m, int target, size_t disp, const char *src, size_t bytes);
int agx_ntf_flush(const agx_shm *m, int target);
/* Publish block id in region k's notification array (not flushed). */
int agx_ntf_notify(const agx_shm *m, const agx_regions *R, int k, long long id);
/* Claim an arrived block of this node: *won = 1 for the one process whose claim took it. */
int agx_ntf_claim(const agx_shm *m, long long id, int *won);
/* Slot id of this node's array (an atomic load; call MPI_Win_sync first). */
int agx_ntf_slot(const agx_shm *m, long long id);
/* One idle pass of a poll: a probe that drives the MPI library's progress (and receives
 * a failure notice, below), a yield. MPI_SUCCESS, or an error when another rank's
 * notice says this call failed there: the poll must stop. */
int agx_ntf_idle(agx_shm *m);
/* After a failure anywhere between agx_ntf_open and the end of the call: tell every
 * other rank (a notice, unless this rank's failure was itself a notice), so none polls
 * for blocks that will not come. Returns rc. */
int agx_ntf_fail(agx_shm *m, int rc);
/* Receive the notices no call took (their calls ended here first), when the segment is
 * freed (after its windows: MPI_Win_free synchronises the ranks). */
void agx_ntf_drain(agx_shm *m);

#endif
