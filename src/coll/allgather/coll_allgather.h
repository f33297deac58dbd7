/*
 * The allgather family (MPI_Allgather, MPI_Allgatherv and their intergroup forms): its
 * tables (allgather_table.c), its runners (allgather_run.c), the intergroup machinery
 * (allgather_ig_groups.c: the two groups and the agreement; allgather_ig_io.c: the byte
 * view and KangTraff19's exchange) and one file per algorithm.
 */
#ifndef AGX_COLL_ALLGATHER_H
#define AGX_COLL_ALLGATHER_H

#include "coll.h"

/* ---- the tables ------------------------------------------------------------------------ */
extern const agx_table agx_allgather_intra_table, agx_allgather_inter_table;

/* ---- runners (allgather_run.c) --------------------------------------------------------- */
/* Copy the own contribution from sendbuf into its block (no-op for MPI_IN_PLACE). */
int agx_copy_own_block(const agx_args *a);
/* A flat allgather: copy the own block, then the cached schedule of `build`. */
int agx_run_flat(const agx_args *a, agx_build_fn build, int param);
/* Run a locality-aware algorithm: its virtual order and schedule (built once per
 * communicator and cached), over the receive layout permuted to that order. */
int agx_run_locality(const agx_args *a, agx_order_fn order, agx_locbuild_fn build, int nl);

/* ---- the algorithms: one file each, allgather_<intra|inter>_<name>.c (the table's rows
 * say what each does) --------------------------------------------------------------------- */
int agx_allgather_intra_native(const agx_args *a);
int agx_allgather_intra_ring(const agx_args *a);
int agx_allgather_intra_bruck(const agx_args *a);
int agx_allgather_intra_kbruck(const agx_args *a);
int agx_allgather_intra_sparbit(const agx_args *a);
int agx_allgather_intra_recursive_doubling(const agx_args *a);
int agx_allgather_intra_neighbor_exchange(const agx_args *a);
int agx_allgather_intra_gather_bcast(const agx_args *a);
int agx_allgather_intra_loc_bruck(const agx_args *a);
int agx_allgather_intra_hierarchical(const agx_args *a);
int agx_allgather_intra_multileader(const agx_args *a);
int agx_allgather_intra_multilane(const agx_args *a);
int agx_allgather_intra_shm_notify(const agx_args *a);
const char *agx_shm_notify_violation(const agx_args *a, int *told);
int agx_allgather_intra_bdr(const agx_args *a);
int agx_allgather_intra_bslb(const agx_args *a);
int agx_allgather_inter_native(const agx_args *a);
int agx_allgather_inter_root_gather(const agx_args *a);
int agx_allgather_inter_segmented(const agx_args *a);
int agx_allgather_inter_segmented_v(const agx_args *a);
int agx_allgather_inter_eager(const agx_args *a);
extern const struct agx_pat_alg agx_bdr_pat, agx_bslb_pat;

/* ---- intergroup (allgather_ig_groups.c, allgather_ig_io.c) ---------------------------------------
 * The two groups of an inter call, as one interface whatever their origin: `xcomm` is an
 * intra-communicator spanning both groups (the merge of an inter-communicator, or the
 * private duplicate of a colour-split communicator) with local_x[] / remote_x[] mapping
 * group ranks to xcomm ranks; `local` is the caller's own group. */
enum { AGX_IG_BRUCK, AGX_IG_RING, AGX_IG_GATHER, AGX_IG_BCAST, AGX_IG_NSCHED,
       AGX_IG_ALLGATHER = -1 /* agx_ig_local_run: Bruck or the ring by size */ };
struct agx_intergroup {
    MPI_Comm xcomm, local;
    MPI_Comm inter;          /* an inter-communicator for `native` (agx's duplicate of the
                              * user's, or created lazily for a split) */
    int owns_xcomm, owns_inter;
    int lrank, lsize, rsize, xrank, xsize;
    int *local_x;            /* local rank -> xcomm rank */
    int *remote_x;           /* remote rank -> xcomm rank */
    int *colors;             /* colour split: every rank's colour (0 / 1); NULL otherwise */
    int *node_of;            /* xcomm rank -> node id; NULL unless counters are on */
    int *lnode_of;           /* local rank -> node id, likewise */
    int color;               /* colour split: 0 or 1; inter-communicator: -1 */
    long long *rec;          /* the last agreement's records, per xcomm rank */
    agx_sched lsched[AGX_IG_NSCHED]; /* local Bruck, ring, gather to 0, bcast from 0 */
};
void agx_ig_free(agx_intergroup *ig);
/* Lay out and check one process's side of the call after the groups are known (a->ig,
 * a->rank, a->p set); its error is agreed. */
typedef int (*agx_ig_prepare_fn)(agx_args *a, const char *fn);
/* The agreement that opens every inter call: (re)build the groups when any colour changed,
 * run `prepare`, exchange the records, and return the same verdict on every process
 * (local_rc: this process's earlier check). Collective over both groups. */
int agx_ig_call(agx_args *a, int color, int local_rc, agx_ig_prepare_fn prepare, const char *fn);
/* Bytes process x (xcomm rank) sends in the current call, from the agreement. */
long long agx_ig_send_bytes(const agx_intergroup *ig, int x);
/* Blocks of at most AGX_IG_EAGER bytes travel inside the agreement's records. */
#define AGX_IG_EAGER 32
/* 1 when every block of the current call fit its record (the same on every process). */
int agx_ig_eager_fits(const agx_intergroup *ig);
/* Copy the remote blocks from the records into the byte view's `full`. */
void agx_ig_eager_copy(const agx_args *a);
/* An inter-communicator over the two groups (for the library's own collective). */
int agx_ig_inter_comm(agx_intergroup *ig, MPI_Comm *out);
/* Build the local schedules of ig (lsched). */
int agx_ig_local_scheds(agx_intergroup *ig);
/* Run local schedule `which` (AGX_IG_*) over the byte layout cnt / dsp of lsize blocks. */
int agx_ig_local_run(const agx_args *a, int which, char *base, const MPI_Aint *cnt, const MPI_Aint *dsp);
/* The byte view of an intergroup call, shared by its algorithms, set up before the
 * agreement (so its allocations and packing are agreed on):
 *  - bytes/k: my contribution as contiguous packed bytes (sendbuf itself for a predefined
 *    type, else packed into stmp);
 *  - rpre[0..p]: byte prefix sums of the remote blocks;
 *  - full: where the remote message lands in packed rank order, the receive buffer itself
 *    when its layout is exactly that (direct), else a temporary unpacked at the end;
 *  - bnd, pieces, lay: scratch for partitions (lsize + rsize + 2), plans and layouts. */
struct agx_ig_io {
    const char *bytes;
    long long k;
    char *stmp, *full;
    int direct, began;
    long long *rpre, *bnd;
    agx_piece *pieces;
    MPI_Aint *lay;
};
int agx_ig_io_begin(const agx_args *a, agx_ig_io *io);
/* Unpack (when rc is MPI_SUCCESS and not direct), free, and return rc or the unpack error;
 * nothing when io was not begun. */
int agx_ig_io_end(const agx_args *a, agx_ig_io *io, int rc);
/* KangTraff19's exchange: send my bytes [R, R+k) of my group's index space under
 * partition sbnd (rsize segments), receive my segment of the remote space (partition rbnd
 * over lsize segments) into full + rbnd[lrank], posting receives in Section 4.1's order,
 * then allgather the segments over the local group into full. */
int agx_ig_exchange(const agx_args *a, long long R, const long long *sbnd, const long long *rbnd);
/* One byte message each way between this process and xcomm rank peer, as a schedule. */
int agx_ig_swap(const agx_args *a, int peer, const void *sbuf, long long sn, void *rbuf,
                long long rn);

#endif
