/*
 * The api layer: agx's public functions (include/agx.h), one file per operation
 * (api_<op>.c) plus the communicator (api_comm.c), the registry listing and agx-info
 * (api_info.c) and the PAT session (api_pat.c). Each checks its arguments, opens the call
 * (agx_call_begin), runs it, and raises a failing call's code through the communicator's
 * error handler exactly once (agx_raise): the only layer, with src/io's public entry, that
 * raises. It calls every layer below and none of its siblings.
 */
#ifndef AGX_API_H
#define AGX_API_H

#include "coll.h"

/* An intra allgather(v) call up to its choice: context, local checks, receive layout
 * (api_allgather.c; api_shared.c's zero-copy entry shares it). */
int agx_ag_prepare_intra(agx_args *a, const char *fn);

#endif
