/*
 * Where the node-shared protocols put things in their segments (no MPI): the one
 * definition the algorithms use and the interleaving models of tests/unit/test_shm_protocols.c
 * check, so the model explores the layout the code runs.
 */
#ifndef AGX_SHM_LAYOUT_H
#define AGX_SHM_LAYOUT_H

#include <stddef.h>

/* ---- dissemination_shm (src/coll/allreduce/allreduce_intra_dissemination_shm.c) ----
 * One region's segment for a call whose vector spans `span` bytes when the previous call
 * on the segment left a result of `prev_span` bytes (0: none):
 *   [0, hdr)            each local rank's byte count (a long long per rank);
 *   [res, res + span)   the result, always at the same place (res = hdr);
 *   [slots + i slot, )  local rank i's copy of its vector, slot = span rounded up to 64.
 * The slots start after the larger of this call's result and the previous call's, so a
 * rank that stores its slot for this call before a slower rank of its region has copied
 * the previous result out leaves that result alone: the next call stores nothing below
 * res + prev_span. */
typedef struct {
    size_t hdr, res, slots, slot, bytes;
} agx_shmar_layout;
void agx_shmar_layout_of(int max_local, size_t span, size_t prev_span, agx_shmar_layout *l);

/* ---- the notified layer (src/core/notify.c) ----
 * [0, 4) the ready word; [AGX_NTF_HDR, + 4 nslots) one int notification per block id;
 * the data from agx_ntf_data_offset(nslots). */
#define AGX_NTF_HDR 64
size_t agx_ntf_data_offset(long long nslots);

#endif
