/*
 * agx_alltoallv: its tables (alltoallv_table.c), its runner and the exchange two-phase
 * I/O uses (alltoallv_run.c), and one file per algorithm (KangRoss20's all-to-many
 * kernels and the library's own).
 */
#ifndef AGX_COLL_ALLTOALLV_H
#define AGX_COLL_ALLTOALLV_H

#include "coll.h"

extern const agx_table agx_alltoallv_intra_table, agx_alltoallv_inter_table;

/* ---- alltoallv (src/coll/alltoallv/alltoallv_run.c) ---------------------------------------
 * Run `kernel` over the call's layouts, throttle receives per round (0: none), sends with
 * send_flags (AGX_SOP_SYNC: Issend). */
int agx_a2a_run(const agx_args *a, agx_a2a_kernel kernel, int throttle, unsigned send_flags);
/* The communicator's alltoallv state (context slot AGX_SLOT_A2A): the last call's pattern,
 * verified (src/api/api_alltoallv.c), this rank's side of it, and the environment's
 * AGX_ALLTOALLV_THROTTLE / AGX_ALLTOALLV_SYNC, read when the state is made. */
typedef struct {
    agx_a2a_pattern *pattern;
    unsigned long long hash;
    int throttle;
    unsigned send_flags;
    char bad[160];             /* what is wrong with the environment's values ("": nothing) */
    int settled;               /* AGX_ADAPT: the library's call won every class (its table
                                * index + 1; 0: not settled): blocking calls go straight to
                                * it, a re-check through the agreement every `period` calls */
    int nonnative;             /* an agreed call ran another algorithm than native (chosen,
                                * not a window's trial): no settling while sel->gen is nn_gen */
    unsigned nn_gen;
    unsigned gen;              /* sel->gen when it settled (a forced choice since: agreed path) */
    int since, period;         /* calls since the last agreed one; the re-checks' distance
                                * (AGX_A2A_RECHECK_FIRST, doubled while nothing is new, at
                                * most AGX_A2A_RECHECK) */
} agx_a2a_state;
#define AGX_A2A_RECHECK_FIRST 16
#define AGX_A2A_RECHECK 256
/* The throttle and send mode into g (an error code when the environment's are malformed);
 * makes the state on first use. */
int agx_a2a_env(agx_ctx *ctx, agx_a2a_args *g);
/* An exchange of bytes whose sizes both ends derived from the same data (two-phase I/O):
 * no agreement; algorithm `alg` (index in the intra alltoallv table) over `pt`, which
 * every rank must hold alike. base: ctx, comm, rank, p of the call. snz / rnz: p bytes of
 * scratch. */
int agx_a2a_exchange(const agx_args *base, int alg, const agx_a2a_pattern *pt, int throttle, unsigned flags,
                     const void *sbuf, const int *sc, const int *sd, void *rbuf, const int *rc, const int *rd,
                     unsigned char *snz, unsigned char *rnz);

/* ---- the algorithms: one file each, alltoallv_intra_<name>.c ------------------------------ */
int agx_alltoallv_native(const agx_args *a);
int agx_alltoallv_intra_issend_all(const agx_args *a);
int agx_alltoallv_intra_isend_all(const agx_args *a);
int agx_alltoallv_intra_spread_out(const agx_args *a);
int agx_alltoallv_intra_balanced(const agx_args *a);
int agx_alltoallv_intra_pairwise(const agx_args *a);
int agx_alltoallv_intra_tam(const agx_args *a);

#endif
