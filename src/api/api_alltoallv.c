/*
 * agx_alltoallv: check, agree, summarise the pattern, select, run.
 *
 * A personalized exchange fails in a way no rank sees alone: a rank whose counts say "no
 * message" for a pair the other side expects would leave that side waiting for ever. So
 * every intra call opens with an agreement (docs/ARCHITECTURE.md, "No hang"):
 *  1. one 16-byte allreduce: any rank's local error (counts, arrays, datatypes, buffers,
 *     environment, allocation), and whether any rank's pair sizes changed since the last
 *     call on this communicator;
 *  2. only when they changed: one allreduce of 2 p 64-bit words, per receiver the number
 *     of senders and a sum of hashes of (sender, bytes), from which every receiver checks
 *     its recvcounts against what is sent to it; one more 8-byte allreduce agrees on the
 *     verdict. The same summary is the call's pattern (receiver set, senders per receiver,
 *     the balanced kernel's rank list), cached for the calls that repeat it.
 * A bad call fails on every rank with one error, before any data moves. Inter-
 * communicators run the library's own MPI_Alltoallv (native), with its own checks.
 */
#include "api.h"
#include "coll_alltoallv.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static unsigned long long mix64(unsigned long long x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}
/* The hash of one non-empty pair as its receiver and its sender both compute it. */
static unsigned long long pair_hash(int sender, long long bytes)
{
    return mix64(((unsigned long long)sender << 40) ^ (unsigned long long)bytes);
}

/* A layout over the user's arrays; its element total in *elems. */
static int side_layout(agx_blocks *b, const void *buf, const int *counts, const int *displs, MPI_Datatype t,
                       int p, const char *name, const char *fn, long long *elems)
{
    MPI_Aint lb;
    MPI_Count size;
    *b = (agx_blocks){.buf = (char *)buf, .type = t, .p = p, .counts = counts, .displs = displs};
    MPI_Type_get_extent(t, &lb, &b->extent);
    MPI_Type_size_x(t, &size);
    b->type_size = size;
    *elems = 0;
    for (int i = 0; i < p; i++) {
        if (counts[i] < 0)
            return agx_error(MPI_ERR_COUNT, "%s: %s[%d] = %d is negative", fn, name, i, counts[i]);
        *elems += counts[i];
    }
    return MPI_SUCCESS;
}

/* In place: the data to send is the receive buffer as it is now; copy the span its blocks
 * cover, and describe the copy with the receive layout. */
static int in_place_copy(agx_a2a_args *g, char **tmp)
{
    const agx_blocks *r = &g->rblk;
    MPI_Aint tlb, text, lo = 0, hi = 0;
    int any = 0;
    MPI_Type_get_true_extent(g->recvtype, &tlb, &text);
    for (int i = 0; i < r->p; i++) {
        if (!r->counts[i])
            continue;
        MPI_Aint a = (MPI_Aint)r->displs[i] * r->extent + tlb;
        MPI_Aint b = a + (MPI_Aint)(r->counts[i] - 1) * r->extent + text;
        lo = !any || a < lo ? a : lo;
        hi = !any || b > hi ? b : hi;
        any = 1;
    }
    g->sblk = *r;
    if (!any)
        return MPI_SUCCESS;
    if (!(*tmp = malloc((size_t)(hi - lo))))
        return agx_error(MPI_ERR_NO_MEM, "agx_alltoallv: no memory for the in-place copy (%lld bytes)",
                         (long long)(hi - lo));
    memcpy(*tmp, r->buf + lo, (size_t)(hi - lo));
    g->sblk.buf = *tmp - lo;
    return MPI_SUCCESS;
}

/* The arguments as this rank can check them alone (arrays, types, counts, buffers); fills
 * the layouts (the send side's unless in place). */
static int check_sides(agx_args *a, const char *fn)
{
    agx_a2a_args *g = &a->u.a2a;
    int p = a->p, rc, in_place = g->sendbuf == MPI_IN_PLACE;
    long long se = 0, re = 0;
    if ((rc = agx_a2a_env(a->ctx, g)) != MPI_SUCCESS)
        return rc;
    if (!g->recvcounts || !g->rdispls || (!in_place && (!g->sendcounts || !g->sdispls)))
        return agx_error(MPI_ERR_ARG, "%s: a count or displacement array is NULL", fn);
    if ((rc = agx_type_check(g->recvtype, fn, "recvtype")) != MPI_SUCCESS)
        return rc;
    if (!in_place && (rc = agx_type_check(g->sendtype, fn, "sendtype")) != MPI_SUCCESS)
        return rc;
    if ((rc = side_layout(&g->rblk, g->recvbuf, g->recvcounts, g->rdispls, g->recvtype, p, "recvcounts", fn,
                          &re)) != MPI_SUCCESS ||
        (rc = agx_check_buffer(g->recvbuf, re, g->recvtype, "recvbuf")) != MPI_SUCCESS)
        return rc;
    if (!in_place && (rc = side_layout(&g->sblk, g->sendbuf, g->sendcounts, g->sdispls, g->sendtype, p,
                                       "sendcounts", fn, &se)) == MPI_SUCCESS)
        rc = agx_check_buffer(g->sendbuf, se, g->sendtype, "sendbuf");
    return rc;
}

/* Everything this rank can check alone; fills the layouts, the non-empty pairs, the
 * summary words (sum: 2 p per-receiver words) and the hash of its side. */
static int local_side(agx_args *a, char **tmp, unsigned long long *sum, unsigned long long *hash, const char *fn)
{
    agx_a2a_args *g = &a->u.a2a;
    int p = a->p, rc = check_sides(a, fn);
    if (rc == MPI_SUCCESS && g->sendbuf == MPI_IN_PLACE)
        rc = in_place_copy(g, tmp);
    if (rc != MPI_SUCCESS)
        return rc;
    a->msg_bytes = 0;
    *hash = mix64((unsigned long long)p);
    for (int j = 0; j < p; j++) {
        long long sb = agx_blk_count(&g->sblk, j) * g->sblk.type_size;
        long long rb = agx_blk_count(&g->rblk, j) * g->rblk.type_size;
        g->snz[j] = sb > 0;
        g->rnz[j] = rb > 0;
        a->msg_bytes += sb;
        sum[j] = g->snz[j];
        sum[p + j] = sb > 0 ? pair_hash(a->rank, sb) : 0;
        *hash = mix64(*hash ^ mix64(((unsigned long long)sb << 1) ^ ((unsigned long long)rb << 33) ^ (unsigned)j));
    }
    return MPI_SUCCESS;
}

/* One allreduce of (class << 32 | rank) of any failing rank: the same verdict everywhere,
 * and the maxima of v[0..n). Returns the code to return here: mine, a new one naming the
 * failing rank, or success. */
static int agree(agx_args *a, int mine, long long *v, int n, const char *fn, const char *why)
{
    return agx_agree(a->comm, a->rank, mine, v, n, fn, why);
}

/* Step 2: the per-receiver summary, checked by each receiver, becomes the cached pattern. */
static int summarise(agx_args *a, unsigned long long *sum, unsigned long long hash, const char *fn)
{
    agx_ctx *ctx = a->ctx;
    agx_a2a_args *g = &a->u.a2a;
    int p = a->p, r = a->rank, mine = MPI_SUCCESS, rc, nexp = 0;
    unsigned long long *tot = sum + 2 * p, hexp = 0;
    if ((rc = PMPI_Allreduce(sum, tot, 2 * p, MPI_UNSIGNED_LONG_LONG, MPI_SUM, a->comm)) != MPI_SUCCESS)
        return rc;
    for (int s = 0; s < p; s++)
        if (g->rnz[s]) {
            nexp++;
            hexp += pair_hash(s, agx_blk_count(&g->rblk, s) * g->rblk.type_size);
        }
    if (tot[r] != (unsigned long long)nexp || tot[p + r] != hexp)
        mine = agx_error(MPI_ERR_TRUNCATE, "agx_alltoallv: rank %d's recvcounts expect %d non-empty messages "
                         "but %llu ranks send it one, or their sizes differ (sendcounts x sendtype size must "
                         "equal recvcounts x recvtype size for every pair)", r, nexp, tot[r]);
    agx_a2a_state *st = agx_ctx_slot(ctx, AGX_SLOT_A2A); /* made by agx_a2a_env */
    if (st->pattern)
        agx_a2a_pattern_free(st->pattern);
    else if (!(st->pattern = calloc(1, sizeof *st->pattern)) && mine == MPI_SUCCESS)
        mine = agx_error(MPI_ERR_NO_MEM, "agx_alltoallv: out of memory for the pattern");
    int *ns = (int *)sum; /* the words sent are no longer needed */
    for (int j = 0; j < p; j++)
        ns[j] = (int)tot[j];
    if (mine == MPI_SUCCESS && agx_a2a_pattern_init(st->pattern, p, ns))
        mine = agx_error(MPI_ERR_NO_MEM, "agx_alltoallv: out of memory for the pattern");
    rc = agree(a, mine, NULL, 0, fn, "receives sizes that do not match what is sent to it");
    if (rc != MPI_SUCCESS) {
        if (st->pattern)
            agx_a2a_pattern_free(st->pattern);
        free(st->pattern);
        st->pattern = NULL;
        return rc;
    }
    st->hash = hash;
    a->pattern = st->pattern;
    return MPI_SUCCESS;
}

/* ---- requests: agx_alltoallv_init agrees on the pattern and chooses as the blocking
 * call, then plans the chosen kernel when it is one schedule (not tam, not in place);
 * agx_ialltoallv, and an init that plans nothing, run the library's MPI_Ialltoallv at each
 * start, on arguments agx checked as the blocking call does, so that a bad one fails the
 * init, or the non-blocking call's agreement, on every rank ---- */
typedef struct {
    agx_a2a_args g;
} a2a_lib;

static int a2a_lib_start(void *arg, MPI_Comm comm, MPI_Request *r)
{
    const agx_a2a_args *g = &((const a2a_lib *)arg)->g;
    return PMPI_Ialltoallv(g->sendbuf, g->sendcounts, g->sdispls, g->sendtype, g->recvbuf, g->recvcounts,
                           g->rdispls, g->recvtype, comm, r);
}

/* A request of the library's call, or of the plan the chosen kernel makes (a->alg set by
 * an init's choice), on the arguments as checked (rc). */
static int make_request(agx_args *a, int persistent, int rc, const char *fn, agx_request *req)
{
    a2a_lib l0 = {.g = a->u.a2a};
    a2a_lib *l = agx_lib_arg(&l0, sizeof l0, &rc, fn);
    return agx_api_request(a, persistent, rc, a2a_lib_start, l, fn, req);
}

/* ---- settling (AGX_ADAPT): once the library's own call has won every class learned on
 * the communicator, the agreement and the pattern check are all that is left of agx in a
 * call, and at small sizes they cost more than the call (2 ranks, 64 B: 0.93 against
 * 0.28 us). A settled communicator's blocking calls go straight to the library's
 * MPI_Alltoallv (its own checks and errors, as without agx), and a re-check takes the
 * agreed path: after AGX_A2A_RECHECK_FIRST calls, then twice as many each time it finds
 * nothing new, at most AGX_A2A_RECHECK, and so does the first call after a choice forced
 * on the communicator. A class not learned yet, or one another candidate won, unsettles
 * it there; a communicator that ran another algorithm than native by choice (a rules
 * file's, a forced one, a learned winner) does not settle until the forced choice changes
 * (agx_comm_set_algorithm). Every rank counts the same calls and decides from agreed state
 * only, so all settle and re-check at the same call. ---- */
/* Whether a call chosen since the last change of forced choice (sel->gen) ran another
 * algorithm than native: a rules file's, a forced one or a learned kernel. */
static int ran_nonnative(const agx_a2a_state *st, const agx_args *a)
{
    return st && st->nonnative && st->nn_gen == a->sel->gen;
}

static void settle(const agx_args *a, agx_a2a_state *st)
{
    if (!st)
        return;
    if (!a->learn && agx_alg_index(a) != agx_rule_alg(a->op, a->kind, -1))
        st->nonnative = 1, st->nn_gen = a->sel->gen;
    int s = !ran_nonnative(st, a) && agx_learn_settled(a) ? agx_alg_index(a) + 1 : 0;
    if (!s && !st->settled)
        return;
    st->since = 0, st->gen = a->sel->gen;
    if (s && st->settled) { /* a re-check that found nothing new: the next one later */
        st->period = st->period < AGX_A2A_RECHECK / 2 ? 2 * st->period : AGX_A2A_RECHECK;
        return;
    }
    if (a->rank == 0 && agx_env_flag("AGX_VERBOSE") && s)
        fprintf(stderr, "agx: alltoallv on %d ranks: the library's own call won every class learned here; calls "
                "go straight to it from now on, re-checked after %d, %d, ... %d calls (AGX_ADAPT)\n", a->p,
                AGX_A2A_RECHECK_FIRST, 2 * AGX_A2A_RECHECK_FIRST, AGX_A2A_RECHECK);
    else if (a->rank == 0 && agx_env_flag("AGX_VERBOSE"))
        fprintf(stderr, "agx: alltoallv on %d ranks: a class the library's call has not won; every call agreed "
                "again (AGX_ADAPT)\n", a->p);
    st->settled = s;
    st->period = AGX_A2A_RECHECK_FIRST;
}

/* The blocking call (req NULL), or a persistent request's init (req): the same checks,
 * agreement on the pattern and choice; the init then makes the chosen kernel's plan
 * (agx_api_request), or the library's call where it plans nothing. */
static int alltoallv(agx_args *a, const char *fn, agx_request *req)
{
    char *tmp = NULL;
    unsigned long long hash = 0, *sum = NULL;
    long long changed = 0;
    int rc;
    if (req) {
        if ((rc = agx_request_begin(a, 1, fn, req)) != MPI_SUCCESS || a->kind == AGX_KIND_INTER)
            return a->ctx ? make_request(a, 1, rc, fn, req) : rc;
    } else {
        agx_coll_install();
        if ((rc = agx_call_begin(a, fn)) != MPI_SUCCESS)
            return rc;
        if (a->kind == AGX_KIND_INTER) /* the library's own, with its own checks */
            return (rc = agx_choose(a)) != MPI_SUCCESS ? rc : agx_run(a);
    } /* a settled communicator's calls between re-checks went to the library in agx_alltoallv */
    agx_ctx *ctx = a->ctx;
    size_t p = (size_t)a->p;
    char *mem = malloc(p * 4 * sizeof(unsigned long long) + 2 * p);
    int local = mem ? MPI_SUCCESS : agx_error(MPI_ERR_NO_MEM, "%s: out of memory (p = %d)", fn, a->p);
    if (mem) {
        sum = (unsigned long long *)mem;
        a->u.a2a.snz = (unsigned char *)(sum + 4 * p);
        a->u.a2a.rnz = a->u.a2a.snz + p;
        local = local_side(a, &tmp, sum, &hash, fn);
    }
    agx_a2a_state *st = agx_ctx_slot(ctx, AGX_SLOT_A2A); /* NULL: no call read it yet */
    /* with the verdict: whether any rank's pairs changed, and the largest send size, the
     * size the choice reads (each rank's own would let the ranks choose differently) */
    long long v[2] = {local == MPI_SUCCESS && (!st || !st->pattern || st->hash != hash), a->msg_bytes};
    /* where the communicator may settle, the on-line choice charges agx's kernels this
     * agreement, which the library's call, settled, skips (adapt.c) */
    int timed = !req && a->sel->adapt > 0 && !ctx->check_args && !ran_nonnative(st, a);
    double t0 = timed ? PMPI_Wtime() : 0;
    rc = agree(a, local, v, 2, fn, "has invalid arguments");
    a->u.a2a.agree_s = timed ? PMPI_Wtime() - t0 : 0;
    changed = v[0];
    if (rc == MPI_SUCCESS) {
        a->msg_bytes = v[1];
        a->pattern = st->pattern;
        if (changed)
            rc = summarise(a, sum, hash, fn);
    }
    if (rc == MPI_SUCCESS && (rc = agx_choose(a)) == MPI_SUCCESS && !req) {
        settle(a, agx_ctx_slot(ctx, AGX_SLOT_A2A));
        rc = agx_run(a);
    }
    if (req)
        rc = make_request(a, 1, rc, fn, req);
    free(tmp);
    free(mem);
    return rc;
}

/* Every alltoallv but a settled one's: out of line, so that one's path keeps a small
 * frame (as agx_allreduce's). */
static __attribute__((noinline)) int alltoallv_other(const void *sendbuf, const int sendcounts[], const int sdispls[],
                                                    MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                                                    const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    agx_args a = {.op = AGX_OP_ALLTOALLV, .user_comm = comm,
                  .u.a2a = {.sendbuf = sendbuf, .sendcounts = sendcounts, .sdispls = sdispls,
                            .sendtype = sendtype, .recvbuf = recvbuf, .recvcounts = recvcounts,
                            .rdispls = rdispls, .recvtype = recvtype}};
    return agx_raise(comm, alltoallv(&a, "agx_alltoallv", NULL));
}

int agx_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                  void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                  MPI_Comm comm)
{
    agx_ctx *ctx;
    agx_a2a_state *st;
    agx_sel *sel;
    /* settled (below): straight to the library's call, before anything else is made */
    if (comm != MPI_COMM_NULL && agx_ctx_get(comm, &ctx) == MPI_SUCCESS && (st = agx_ctx_slot(ctx, AGX_SLOT_A2A)) &&
        st->settled && (sel = agx_ctx_slot(ctx, AGX_SLOT_SELECT)) && st->gen == sel->gen &&
        st->since + 1 < st->period) {
        st->since++;
        agx_req_flush_queued(ctx); /* a blocking call posts on the private communicator in program order */
        sel->last[AGX_OP_ALLTOALLV] = st->settled - 1;
        sel->last_kind[AGX_OP_ALLTOALLV] = AGX_KIND_INTRA;
        return agx_raise(comm, PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                                              recvtype, ctx->pcomm));
    }
    return alltoallv_other(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
}

/* agx_ialltoallv: the library's MPI_Ialltoallv at each start, on arguments agx checked as
 * the blocking call does (the pattern agreement would block a non-blocking call) */
static int alltoallv_request(agx_args *a, const char *fn, agx_request *req)
{
    int rc = agx_request_begin(a, 0, fn, req);
    if (!a->ctx)
        return rc;
    if (rc == MPI_SUCCESS && a->kind == AGX_KIND_INTRA)
        rc = check_sides(a, fn);
    return make_request(a, 0, rc, fn, req);
}

int agx_alltoallv_init(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                       void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                       MPI_Comm comm, MPI_Info info, agx_request *req)
{
    (void)info;
    agx_args a = {.op = AGX_OP_ALLTOALLV, .user_comm = comm,
                  .u.a2a = {.sendbuf = sendbuf, .sendcounts = sendcounts, .sdispls = sdispls, .sendtype = sendtype,
                            .recvbuf = recvbuf, .recvcounts = recvcounts, .rdispls = rdispls, .recvtype = recvtype}};
    return agx_raise(comm, alltoallv(&a, "agx_alltoallv_init", req));
}

int agx_ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                   void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                   MPI_Comm comm, agx_request *req)
{
    agx_args a = {.op = AGX_OP_ALLTOALLV, .user_comm = comm,
                  .u.a2a = {.sendbuf = sendbuf, .sendcounts = sendcounts, .sdispls = sdispls, .sendtype = sendtype,
                            .recvbuf = recvbuf, .recvcounts = recvcounts, .rdispls = rdispls, .recvtype = recvtype}};
    return agx_raise(comm, alltoallv_request(&a, "agx_ialltoallv", req));
}
