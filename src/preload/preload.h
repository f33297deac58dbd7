/*
 * What the preload library's files share (src/preload/): whether an operation goes
 * through agx (AGX_ENABLE), the per-call counts for the report at MPI_Finalize, and
 * whether agx's requests can be handed to MPI here (its progress thread). Hidden: the
 * library exports only the MPI_* entries it defines (AGX_EXPORT).
 */
#ifndef AGX_PRELOAD_H
#define AGX_PRELOAD_H

#include "agx.h"

#define AGX_EXPORT __attribute__((visibility("default")))

int agx_preload_enabled(int op);   /* AGX_ENABLE: op (or AGX_OP_LAST: file writes) through agx */
int agx_preload_async_ok(int op);  /* enabled, and agx's progress thread runs (AGX_VERBOSE: why not) */
void agx_preload_count(agx_op op, MPI_Comm comm);       /* a call through agx: the algorithm it ran */
void agx_preload_count_name(agx_op op, const char *alg); /* the same, the algorithm named */

#endif
