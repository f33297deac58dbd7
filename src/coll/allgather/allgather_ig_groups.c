/*
 * The two groups of an intergroup collective, behind one interface (coll_allgather.h):
 *  - inter-communicator: merged into an intra-communicator (MPI_Intercomm_merge); the
 *    group members' ranks in it come from MPI_Group_translate_ranks, so no assumption on
 *    the merge order is needed; the local group is split off the merge;
 *  - colour split of an intra-communicator: colour 0 is group A, anything else group B;
 *    the cross communicator is agx's private duplicate of the parent.
 * The algorithms (src/coll/allgather/allgather_inter_*.c) see only xcomm, local and
 * remote_x, so one implementation serves both, and SMPI (no inter-communicators) runs
 * the colour split.
 *
 * Every intergroup call starts with one agreement (agx_ig_call): each process of both
 * groups contributes a record (its colour, its send bytes, its local error class, a hash
 * of the block sizes it expects from the other group, and its block when that is at most
 * AGX_IG_EAGER bytes) and every process receives every record (one allgather of 64 bytes
 * per process over the cross communicator). From the
 * same records every process decides the same thing:
 *  - a colour changed on any rank: the split is rebuilt by all ranks together, and the
 *    agreement repeated once over the new groups;
 *  - any process failed a local check (argument, datatype, allocation, packing): every
 *    process returns an error before any data moves;
 *  - a process expects other block sizes than the other group sends: every process
 *    returns MPI_ERR_TRUNCATE;
 *  - otherwise the algorithms read every process's send size from the records (the sizes
 *    allgatherv needs, so this exchange replaces the size collectives of KangTraff19's
 *    Algorithm 2 and of root gathering).
 * The byte view, the exchange and the local collectives are in ig_io.c.
 */
#include "coll_allgather.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A record: 4 integers, then AGX_IG_EAGER bytes of the block when it fits (so a call
 * whose blocks all fit is complete after the agreement: the `eager` algorithm). */
enum { REC_COLOR, REC_K, REC_ERR, REC_HASH, REC_DATA, REC_N = REC_DATA + AGX_IG_EAGER / 8 };

static void ig_release(agx_intergroup *ig)
{
    if (ig->local != MPI_COMM_NULL)
        MPI_Comm_free(&ig->local);
    if (ig->owns_xcomm && ig->xcomm != MPI_COMM_NULL)
        MPI_Comm_free(&ig->xcomm);
    if (ig->owns_inter && ig->inter != MPI_COMM_NULL)
        MPI_Comm_free(&ig->inter);
    for (int i = 0; i < AGX_IG_NSCHED; i++)
        agx_sched_free(&ig->lsched[i]);
    free(ig->remote_x);
    free(ig->local_x);
    free(ig->colors);
    free(ig->node_of);
    free(ig->lnode_of);
    free(ig->rec);
}

void agx_ig_free(agx_intergroup *ig)
{
    if (!ig)
        return;
    ig_release(ig);
    free(ig);
}

static int build_from_inter(agx_ctx *ctx, agx_intergroup *ig)
{
    MPI_Group lg = MPI_GROUP_NULL, rg = MPI_GROUP_NULL, mg = MPI_GROUP_NULL;
    int *seq = NULL, rc;
    MPI_Comm_size(ctx->pcomm, &ig->lsize);
    MPI_Comm_remote_size(ctx->pcomm, &ig->rsize);
    MPI_Comm_rank(ctx->pcomm, &ig->lrank);
    ig->inter = ctx->pcomm; /* agx's duplicate: MPI_ERRORS_RETURN */
    ig->color = -1;
    rc = MPI_Intercomm_merge(ctx->pcomm, 0, &ig->xcomm);
    if (rc != MPI_SUCCESS)
        return rc;
    ig->owns_xcomm = 1;
    int n = ig->lsize > ig->rsize ? ig->lsize : ig->rsize;
    seq = malloc(sizeof(int) * (size_t)n);
    ig->local_x = malloc(sizeof(int) * (size_t)ig->lsize);
    ig->remote_x = malloc(sizeof(int) * (size_t)ig->rsize);
    if (!seq || !ig->local_x || !ig->remote_x) { /* still take part in the split */
        MPI_Comm_split(ig->xcomm, MPI_UNDEFINED, 0, &ig->local);
        rc = MPI_ERR_NO_MEM;
        goto fn_exit;
    }
    for (int i = 0; i < n; i++)
        seq[i] = i;
    MPI_Comm_group(ctx->pcomm, &lg);
    MPI_Comm_remote_group(ctx->pcomm, &rg);
    MPI_Comm_group(ig->xcomm, &mg);
    MPI_Group_translate_ranks(lg, ig->lsize, seq, mg, ig->local_x);
    MPI_Group_translate_ranks(rg, ig->rsize, seq, mg, ig->remote_x);
    /* local_x[0] (my group's first member in the merge) differs between the two groups */
    rc = MPI_Comm_split(ig->xcomm, ig->local_x[0], ig->lrank, &ig->local);
fn_exit:
    if (lg != MPI_GROUP_NULL) MPI_Group_free(&lg);
    if (rg != MPI_GROUP_NULL) MPI_Group_free(&rg);
    if (mg != MPI_GROUP_NULL) MPI_Group_free(&mg);
    free(seq);
    return rc;
}

/* The split of ctx by the agreed colours (0 / 1 per rank, the same array everywhere;
 * NULL: this process failed to allocate and only takes part in the split). */
static int build_from_split(agx_ctx *ctx, const int *colors, agx_intergroup *ig)
{
    ig->xcomm = ctx->pcomm;
    ig->inter = MPI_COMM_NULL;
    ig->colors = malloc(sizeof(int) * (size_t)ctx->p);
    ig->local_x = malloc(sizeof(int) * (size_t)ctx->p);
    ig->remote_x = malloc(sizeof(int) * (size_t)ctx->p);
    if (!colors || !ig->colors || !ig->local_x || !ig->remote_x) {
        MPI_Comm_split(ctx->pcomm, MPI_UNDEFINED, 0, &ig->local);
        return MPI_ERR_NO_MEM;
    }
    ig->color = colors[ctx->rank];
    memcpy(ig->colors, colors, sizeof(int) * (size_t)ctx->p);
    for (int r = 0; r < ctx->p; r++) {
        if (colors[r] == ig->color) {
            if (r == ctx->rank)
                ig->lrank = ig->lsize;
            ig->local_x[ig->lsize++] = r;
        } else
            ig->remote_x[ig->rsize++] = r;
    }
    return MPI_Comm_split(ctx->pcomm, ig->color, ctx->rank, &ig->local);
}

/* Build the groups, collectively over ctx's communicator (split: from the agreed colours,
 * NULL where this process could not allocate them). Every collective step runs on every
 * process whatever failed locally before it, and the outcome is agreed with one allreduce
 * over the cross communicator, so a local failure fails the build everywhere. */
static int ig_build(agx_ctx *ctx, int split, const int *colors, agx_intergroup **out)
{
    agx_intergroup t = {.local = MPI_COMM_NULL, .xcomm = MPI_COMM_NULL, .inter = MPI_COMM_NULL};
    agx_intergroup *ig = malloc(sizeof *ig);
    int rc = split ? build_from_split(ctx, colors, &t) : build_from_inter(ctx, &t), bad, any = 1;
    if (t.xcomm == MPI_COMM_NULL) { /* the merge failed: an MPI failure, nothing to agree over */
        free(ig);
        return rc;
    }
    MPI_Comm_set_errhandler(t.xcomm, MPI_ERRORS_RETURN);
    if (t.local != MPI_COMM_NULL)
        MPI_Comm_set_errhandler(t.local, MPI_ERRORS_RETURN);
    MPI_Comm_rank(t.xcomm, &t.xrank);
    MPI_Comm_size(t.xcomm, &t.xsize);
    if (agx_stats_enabled()) { /* collective: every process calls it */
        int r2 = agx_node_map(t.xcomm, &t.node_of);
        rc = rc == MPI_SUCCESS ? r2 : rc;
    }
    if (rc == MPI_SUCCESS) {
        t.rec = malloc(sizeof(long long) * REC_N * (size_t)t.xsize);
        rc = t.rec && ig ? agx_ig_local_scheds(&t) : MPI_ERR_NO_MEM;
    }
    if (rc == MPI_SUCCESS && t.node_of) {
        t.lnode_of = malloc(sizeof(int) * (size_t)t.lsize);
        for (int i = 0; t.lnode_of && i < t.lsize; i++)
            t.lnode_of[i] = t.node_of[t.local_x[i]];
        rc = t.lnode_of ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    }
    bad = rc != MPI_SUCCESS;
    int arc = PMPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, t.xcomm);
    if (arc != MPI_SUCCESS || any) {
        ig_release(&t);
        free(ig);
        if (rc == MPI_SUCCESS)
            rc = arc != MPI_SUCCESS ? arc : agx_error(MPI_ERR_OTHER, "building the two groups failed on "
                                                      "another process");
        return rc == MPI_ERR_NO_MEM ? agx_error(rc, "out of memory building the two groups") : rc;
    }
    *ig = t;
    *out = ig;
    return MPI_SUCCESS;
}

int agx_ig_inter_comm(agx_intergroup *ig, MPI_Comm *out)
{
    int rc = MPI_SUCCESS;
    if (ig->inter == MPI_COMM_NULL) {
        rc = MPI_Intercomm_create(ig->local, 0, ig->xcomm, ig->remote_x[0], AGX_TAG + 1, &ig->inter);
        if (rc == MPI_SUCCESS)
            ig->owns_inter = 1;
    }
    *out = ig->inter;
    return rc;
}

/* FNV-1a over a sequence of byte sizes. */
static unsigned long long hash_step(unsigned long long h, long long v)
{
    for (int i = 0; i < 8; i++) {
        h ^= (unsigned long long)(v >> (8 * i)) & 0xff;
        h *= 0x100000001b3ULL;
    }
    return h;
}
#define HASH0 0xcbf29ce484222325ULL

static long long group_hash(const long long *rec, const int *members, int n)
{
    unsigned long long h = HASH0;
    for (int i = 0; i < n; i++)
        h = hash_step(h, rec[REC_N * members[i] + REC_K]);
    return (long long)h;
}

/* My record: colour, send bytes, error class, hash of the remote block sizes I expect. */
static void my_record(const agx_args *a, int color, int rc, long long *mine)
{
    const agx_ag_args *g = &a->u.ag;
    int cls = 0;
    memset(mine, 0, sizeof(long long) * REC_N);
    mine[REC_COLOR] = color;
    if (rc != MPI_SUCCESS) {
        MPI_Error_class(rc, &cls);
        mine[REC_ERR] = cls > 0 ? cls : MPI_ERR_OTHER;
        return;
    }
    mine[REC_ERR] = 0;
    MPI_Count ssize;
    MPI_Type_size_x(g->sendtype, &ssize);
    mine[REC_K] = (long long)ssize * g->sendcount;
    unsigned long long h = HASH0;
    for (int i = 0; i < a->p; i++)
        h = hash_step(h, agx_blk_count(&g->blk, i) * g->blk.type_size);
    mine[REC_HASH] = (long long)h;
    if (g->io && g->io->began && mine[REC_K] <= AGX_IG_EAGER && mine[REC_K] > 0)
        memcpy(&mine[REC_DATA], g->io->bytes, (size_t)mine[REC_K]);
}

/* "rank r of my group" / "of the other group" for xcomm rank x (a static buffer: the
 * caller copies it into its message at once). */
static const char *who(const agx_intergroup *ig, int x)
{
    static _Thread_local char s[64];
    for (int side = 0; side < 2; side++) {
        const int *m = side ? ig->remote_x : ig->local_x;
        for (int i = 0; i < (side ? ig->rsize : ig->lsize); i++)
            if (m[i] == x) {
                snprintf(s, sizeof s, "rank %d of the %s group", i, side ? "other" : "caller's");
                return s;
            }
    }
    snprintf(s, sizeof s, "process %d", x);
    return s;
}

/* The agreed outcome, from the records alone (so the same on every process). */
static int judge(const agx_intergroup *ig, const long long *rec, int my_rc, const char *fn)
{
    for (int x = 0; x < ig->xsize; x++)
        if (rec[REC_N * x + REC_ERR]) {
            if (my_rc != MPI_SUCCESS)
                return my_rc;
            char cs[MPI_MAX_ERROR_STRING];
            int len, cls = (int)rec[REC_N * x + REC_ERR];
            MPI_Error_string(cls, cs, &len);
            return agx_error(cls, "%s: %s failed its checks (%s); no data moved", fn, who(ig, x), cs);
        }
    if (ig->rsize == 0 || ig->lsize == 0)
        return agx_error(MPI_ERR_ARG, "%s: every rank has the same colour; both groups must be non-empty", fn);
    long long hl = group_hash(rec, ig->local_x, ig->lsize), hr = group_hash(rec, ig->remote_x, ig->rsize);
    for (int side = 0; side < 2; side++) {
        const int *m = side ? ig->remote_x : ig->local_x;
        int n = side ? ig->rsize : ig->lsize;
        for (int i = 0; i < n; i++)
            if (rec[REC_N * m[i] + REC_HASH] != (side ? hl : hr))
                return agx_error(MPI_ERR_TRUNCATE, "%s: %s expects other block sizes than the other "
                                 "group sends (sendcount x sendtype vs recvcount(s) x recvtype)",
                                 fn, who(ig, m[i]));
    }
    return MPI_SUCCESS;
}

/* The communicator's groups: its context's AGX_SLOT_IG (NULL until the first call). */
static agx_intergroup *ig_of(const agx_ctx *ctx) { return agx_ctx_slot(ctx, AGX_SLOT_IG); }
static void ig_slot_free(void *p) { agx_ig_free(p); }

/* Did any colour change against the cached split (or is there none yet)? */
static int split_changed(const agx_ctx *ctx, const long long *rec)
{
    const agx_intergroup *ig = ig_of(ctx);
    if (!ig)
        return 1;
    for (int r = 0; r < ctx->p; r++)
        if (rec[REC_N * r + REC_COLOR] != ig->colors[r])
            return 1;
    return 0;
}

/* Build the groups (a split with colors, or the inter-communicator's) into the slot. */
static int ig_build_slot(agx_ctx *ctx, int split, const int *colors)
{
    agx_intergroup *ig = NULL;
    int rc = ig_build(ctx, split, colors, &ig);
    agx_ctx_attach(ctx, AGX_SLOT_IG, ig, ig_slot_free);
    return rc;
}

/* Rebuild the split from the agreed colours, all ranks together (ig_build agrees on the
 * outcome). The colours are copied out first: rec may belong to the old split. */
static int rebuild_split(agx_ctx *ctx, const long long *rec)
{
    int *colors = malloc(sizeof(int) * (size_t)ctx->p);
    for (int r = 0; colors && r < ctx->p; r++)
        colors[r] = (int)rec[REC_N * r + REC_COLOR];
    agx_ctx_attach(ctx, AGX_SLOT_IG, NULL, NULL); /* frees the old split */
    int rc = ig_build_slot(ctx, 1, colors);
    free(colors);
    return rc;
}

int agx_ig_call(agx_args *a, int color, int local_rc, agx_ig_prepare_fn prepare, const char *fn)
{
    agx_ctx *ctx = a->ctx;
    int split = ctx->kind == AGX_KIND_INTRA, rc, my_rc = MPI_SUCCESS;
    long long mine[REC_N], *stage = NULL;
    if (!split && !ig_of(ctx) && (rc = ig_build_slot(ctx, 0, NULL)) != MPI_SUCCESS)
        return rc;
    /* a split's first call has no records yet (later calls use the split's own) */
    if (split && !ig_of(ctx) && !(stage = malloc(sizeof(long long) * REC_N * (size_t)ctx->p)))
        return agx_error(MPI_ERR_NO_MEM, "%s: out of memory for the agreement", fn);
    for (;;) { /* at most twice: a rebuild makes every colour match the split */
        agx_intergroup *ig = ig_of(ctx);
        int usable = ig && (!split || ig->color == color);
        my_rc = local_rc;
        if (usable && my_rc == MPI_SUCCESS) {
            a->ig = ig;
            a->rank = ig->lrank;
            a->p = ig->rsize;
            my_rc = prepare(a, fn);
        }
        my_record(a, color, my_rc, mine);
        long long *rec = ig ? ig->rec : stage;
        MPI_Comm comm = split ? ctx->pcomm : ig->xcomm;
        if ((rc = PMPI_Allgather(mine, REC_N, MPI_LONG_LONG, rec, REC_N, MPI_LONG_LONG, comm)) != MPI_SUCCESS)
            break;
        if (split && split_changed(ctx, rec)) {
            if ((rc = rebuild_split(ctx, rec)) != MPI_SUCCESS)
                break;
            continue; /* again over the new groups: every colour now matches */
        }
        ig = ig_of(ctx);
        if (rec != ig->rec)
            memcpy(ig->rec, rec, sizeof(long long) * REC_N * (size_t)ctx->p);
        rc = judge(ig, ig->rec, my_rc, fn);
        break;
    }
    free(stage);
    if (rc != MPI_SUCCESS && my_rc != MPI_SUCCESS && rc != my_rc)
        rc = my_rc;
    return rc;
}

long long agx_ig_send_bytes(const agx_intergroup *ig, int x) { return ig->rec[REC_N * x + REC_K]; }

int agx_ig_eager_fits(const agx_intergroup *ig)
{
    for (int x = 0; x < ig->xsize; x++)
        if (ig->rec[REC_N * x + REC_K] > AGX_IG_EAGER)
            return 0;
    return 1;
}

void agx_ig_eager_copy(const agx_args *a)
{
    const agx_intergroup *ig = a->ig;
    agx_ig_io *io = a->u.ag.io;
    for (int h = 0; h < ig->rsize; h++) {
        const long long *r = &ig->rec[REC_N * ig->remote_x[h]];
        if (r[REC_K] > 0)
            memcpy(io->full + io->rpre[h], &r[REC_DATA], (size_t)r[REC_K]);
    }
}
