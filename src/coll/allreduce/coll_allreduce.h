/*
 * agx_allreduce: its tables (allreduce_table.c), its runner (allreduce_run.c, shared by
 * the algorithms and the entry point src/api/api_allreduce.c) and one file per algorithm.
 */
#ifndef AGX_COLL_ALLREDUCE_H
#define AGX_COLL_ALLREDUCE_H
#include "coll.h"

extern const agx_table agx_allreduce_intra_table, agx_allreduce_inter_table;

/* ---- the algorithms: one file each, allreduce_intra_<name>.c (the table's rows say what
 * each does) ------------------------------------------------------------------------------- */
int agx_allreduce_native(const agx_args *a);
int agx_allreduce_intra_dissemination(const agx_args *a);
int agx_allreduce_intra_dissemination_node(const agx_args *a);
int agx_allreduce_intra_dissemination_radix(const agx_args *a);
int agx_allreduce_intra_dissemination_shm(const agx_args *a);
int agx_allreduce_intra_recursive_doubling(const agx_args *a);
int agx_allreduce_intra_reduce_bcast(const agx_args *a);
int agx_allreduce_intra_ring(const agx_args *a);
int agx_allreduce_intra_rabenseifner(const agx_args *a);


/* ---- allreduce (src/coll/allreduce/allreduce_run.c) ------------------------------------
 * Run the cached schedule of `build` (src/patterns/allreduce.h) over the receive buffer
 * and scratch copies, after copying sendbuf into recvbuf. */
int agx_ar_run(const agx_args *a, agx_build_fn build);
/* The parts of agx_ar_run: copy sendbuf into recvbuf (and refuse more than INT_MAX base
 * elements); the elements of the vector as reduced (base elements of a packed derived
 * type); run schedule s over nb blocks and nbufs buffers, those from `win` on holding one
 * block (all blocks at their start), with scratch agreed when it is allocated. */
int agx_ar_prepare(const agx_args *a);
long long agx_ar_nelems(const agx_ar_args *g);
int agx_ar_exec(const agx_args *a, const agx_sched *s, int nb, int nbufs, int win);
/* agx_ar_run after agx_ar_prepare: the cached flat schedule of `build` over its buffers. */
int agx_ar_exec_flat(const agx_args *a, agx_build_fn build);
/* g->type's one predefined element type (base) and how many per element (per), whether
 * g->op is predefined, whether the reduction gives the same bits in every order (exact),
 * and, for a predefined op, why agx's algorithms may not run it (unproven: a pair outside
 * MPI's table, mixed element types, a library whose integer SUM/PROD does not wrap). */
int agx_ar_type(agx_ar_args *g);
/* What every rank of a correct call passes alike (bytes, the element type's place in
 * MPI's table and its size, the op's index), folded into one non-negative number
 * (AGX_CHECK_ARGS); after agx_ar_type. */
long long agx_ar_signature(const agx_ar_args *g);
#endif
