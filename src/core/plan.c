/*
 * Plans: a schedule made persistent over fixed buffers (the persistent and non-blocking
 * collectives, docs/algorithms.md "Requests"). At make, every message of every round is
 * built once (address, count, its datatype too), posted at each start (MPI_Irecv,
 * MPI_Isend, MPI_Issend) or, with AGX_PLAN_REQUESTS=persistent, made a persistent request
 * (MPI_Recv_init, MPI_Send_init, MPI_Ssend_init); the plan owns copies of the schedule,
 * the layouts and the counters' node map, so it outlives the call and the communicator's
 * cache. A start runs the prologue (a local copy: allgather's own block) and posts round 0;
 * agx_plan_step advances the plan by every round whose requests completed (local copies
 * and reductions of the round, then the next round started): without `block` it never
 * blocks, with it it waits for each round (the plan then completes). The same
 * schedule runs as agx_sched_run runs it: receives before sends in a round, ASYNC
 * requests completed at the end, every arrival's size checked.
 */
#include "message.h"

#include <stdlib.h>
#include <string.h>

struct agx_plan {
    agx_exec x;               /* bufs: the plan's copies */
    agx_blocks *bufs;
    void **arrays;            /* the layouts' counts and displs, copied (2 per buffer) */
    int *node_of;             /* the counters' map, copied (NULL: not counted) */
    agx_sched s;
    agx_reqs rq, aq;          /* every round's requests in round order; the ASYNC ones */
    int *rstart, *astart, *ostart; /* per round g: its requests [rstart[g], rstart[g+1]) of
                                    * rq, [astart[g], ..) of aq, its ops [ostart[g], ..) */
    int ng;
    MPI_Status *st;
    int has_pre;              /* the prologue: src -> dst, a local copy */
    const void *pre_src;
    void *pre_dst;
    MPI_Aint pre_sc, pre_dc;
    MPI_Datatype pre_st, pre_dt;
    void *owned;              /* memory the plan's buffers lie in (agx_plan_own), freed with it */
    int posted;               /* messages posted afresh at each start (MPI_Isend & co.), not
                               * persistent requests: agx_plan_mode() */
    int g;                    /* the round in flight; ng: the ASYNC requests; ng + 1: done */
    agx_mismatch bad;
    int rc;
};

/* How plans post their messages, read once per process: AGX_PLAN_REQUESTS=posted (the
 * default: MPI_Isend & co. of the messages built at init) or persistent (MPI_Send_init &
 * co., started with MPI_Startall). Measured at 8 B on 2 ranks (docs/RESULTS.md,
 * "Persistent and non-blocking"): Open MPI 4.1's persistent requests cost more per start
 * than its MPI_Isend (p50 0.41-0.52 us per allgather against 0.26-0.27), MPICH 4.0's the
 * same (0.42). SMPI builds always post: SMPI serializes a send's non-contiguous data when
 * its request is made, not at MPI_Start. */
static int agx_plan_posted(void)
{
#ifdef AGX_SMPI
    return 1;
#else
    static int posted = -1;
    if (posted < 0) {
        const char *v = getenv("AGX_PLAN_REQUESTS");
        posted = !(v && !strcmp(v, "persistent"));
    }
    return posted;
#endif
}

/* Copy n elements of `size` bytes (NULL stays NULL). */
static int dup_array(void **out, const void *src, int n, size_t size)
{
    *out = NULL;
    if (!src)
        return 0;
    if (!(*out = malloc(size * (size_t)(n > 0 ? n : 1))))
        return -1;
    memcpy(*out, src, size * (size_t)n);
    return 0;
}

static int copy_layouts(agx_plan *p, const agx_exec *x)
{
    p->bufs = calloc((size_t)(x->nbufs > 0 ? x->nbufs : 1), sizeof *p->bufs);
    p->arrays = calloc((size_t)(2 * x->nbufs > 0 ? 2 * x->nbufs : 1), sizeof *p->arrays);
    if (!p->bufs || !p->arrays)
        return -1;
    for (int i = 0; i < x->nbufs; i++) {
        agx_blocks *b = &p->bufs[i];
        *b = x->bufs[i];
        int bad = b->counts ? dup_array(&p->arrays[2 * i], b->counts, b->p, sizeof(int)) ||
                                  dup_array(&p->arrays[2 * i + 1], b->displs, b->p, sizeof(int))
                            : dup_array(&p->arrays[2 * i], b->lcounts, b->p, sizeof(MPI_Aint)) ||
                                  dup_array(&p->arrays[2 * i + 1], b->ldispls, b->p, sizeof(MPI_Aint));
        if (bad)
            return -1;
        if (b->counts)
            b->counts = p->arrays[2 * i], b->displs = p->arrays[2 * i + 1];
        else if (b->lcounts)
            b->lcounts = p->arrays[2 * i], b->ldispls = p->arrays[2 * i + 1];
    }
    p->x.bufs = p->bufs;
    if (x->node_of) {
        int n;
        MPI_Comm_size(x->comm, &n);
        if (dup_array((void **)&p->node_of, x->node_of, n, sizeof(int)))
            return -1;
        p->x.node_of = p->node_of;
    }
    return 0;
}

/* Every round's messages made persistent requests, in round order. */
static int make_requests(agx_plan *p)
{
    const agx_sched *s = &p->s;
    int ng = 0, rc = MPI_SUCCESS;
    for (int i = 0; i < s->n; i++)
        ng += i == 0 || s->ops[i].round != s->ops[i - 1].round;
    p->rstart = malloc(sizeof(int) * (size_t)(ng + 1));
    p->astart = malloc(sizeof(int) * (size_t)(ng + 1));
    p->ostart = malloc(sizeof(int) * (size_t)(ng + 1));
    if (!p->rstart || !p->astart || !p->ostart)
        return MPI_ERR_NO_MEM;
    p->ng = 0;
    for (int i = 0, j; i < s->n && rc == MPI_SUCCESS; i = j) {
        for (j = i; j < s->n && s->ops[j].round == s->ops[i].round; j++)
            ;
        p->rstart[p->ng] = p->rq.n, p->astart[p->ng] = p->aq.n, p->ostart[p->ng] = i;
        for (int pass = 0; pass < 2 && rc == MPI_SUCCESS; pass++)
            for (int k = i; k < j && rc == MPI_SUCCESS; k++) {
                const agx_sop *op = &s->ops[k];
                if (op->kind == (pass ? AGX_SOP_SEND : AGX_SOP_RECV))
                    rc = agx_post(&p->x, s, op, op->flags & AGX_SOP_ASYNC ? &p->aq : &p->rq,
                                  p->posted ? AGX_POST_LATER : AGX_POST_PERSISTENT);
            }
        p->ng++;
    }
    p->rstart[p->ng] = p->rq.n, p->astart[p->ng] = p->aq.n, p->ostart[p->ng] = s->n;
    int most = p->rq.n > p->aq.n ? p->rq.n : p->aq.n;
    if (rc == MPI_SUCCESS && !(p->st = malloc(sizeof(MPI_Status) * (size_t)(most > 0 ? most : 1))))
        rc = MPI_ERR_NO_MEM;
    return rc;
}

void agx_plan_free(agx_plan *p)
{
    if (!p)
        return;
    agx_reqs *v[2] = {&p->rq, &p->aq};
    for (int q = 0; q < 2; q++) {
        for (int k = 0; k < v[q]->n; k++) {
            if (v[q]->req[k] != MPI_REQUEST_NULL)
                PMPI_Request_free(&v[q]->req[k]);
            agx_msg_release(&v[q]->msg[k]);
        }
        agx_reqs_free(v[q]);
    }
    for (int i = 0; p->arrays && i < 2 * p->x.nbufs; i++)
        free(p->arrays[i]);
    if (p->has_pre && !agx_type_is_named(p->pre_st))
        MPI_Type_free(&p->pre_st);
    if (p->has_pre && !agx_type_is_named(p->pre_dt))
        MPI_Type_free(&p->pre_dt);
    agx_sched_free(&p->s);
    free(p->owned);
    free(p->arrays), free(p->bufs), free(p->node_of), free(p->rstart), free(p->astart), free(p->ostart);
    free(p->st);
    free(p);
}

int agx_plan_make(const agx_exec *x, const agx_sched *s, agx_plan **out)
{
    agx_plan *p = calloc(1, sizeof *p);
    int rc = MPI_ERR_NO_MEM;
    *out = NULL;
    if (p) {
        p->x = *x;
        p->g = -1;
        p->posted = agx_plan_posted();
        if (agx_sched_copy(&p->s, s) == 0 && copy_layouts(p, x) == 0)
            rc = make_requests(p);
    }
    if (rc != MPI_SUCCESS) {
        agx_plan_free(p);
        return rc == MPI_ERR_NO_MEM ? agx_error(rc, "out of memory for a plan of %d operations", s->n) : rc;
    }
    *out = p;
    return MPI_SUCCESS;
}

void agx_plan_own(agx_plan *p, void *mem) { p->owned = mem; }

/* A type the plan keeps (a derived one duplicated: the user may free theirs). */
static int keep_type(MPI_Datatype t, MPI_Datatype *out)
{
    *out = t;
    return agx_type_is_named(t) ? MPI_SUCCESS : MPI_Type_dup(t, out);
}

int agx_plan_prologue(agx_plan *p, const void *src, MPI_Aint scount, MPI_Datatype stype, void *dst, MPI_Aint dcount,
                      MPI_Datatype dtype)
{
    int rc = keep_type(stype, &p->pre_st);
    if (rc == MPI_SUCCESS && (rc = keep_type(dtype, &p->pre_dt)) != MPI_SUCCESS && !agx_type_is_named(stype))
        MPI_Type_free(&p->pre_st);
    if (rc != MPI_SUCCESS)
        return rc;
    p->has_pre = 1;
    p->pre_src = src, p->pre_sc = scount, p->pre_dst = dst, p->pre_dc = dcount;
    return MPI_SUCCESS;
}

/* Post requests req[0..n) of messages m afresh (a plan in posted mode). */
static int post_fresh(const agx_plan *p, MPI_Request *req, const agx_msg *m, int n)
{
    int rc = MPI_SUCCESS;
    for (int k = 0; k < n && rc == MPI_SUCCESS; k++)
        rc = m[k].recv ? MPI_Irecv(m[k].addr, m[k].count, m[k].type, m[k].peer, m[k].tag, p->x.comm, &req[k])
                       : (m[k].sync ? MPI_Issend : MPI_Isend)(m[k].addr, m[k].count, m[k].type, m[k].peer,
                                                              m[k].tag, p->x.comm, &req[k]);
    return rc;
}

/* Start round g's requests (its sends counted, as agx_post counts them). */
static int start_round(agx_plan *p)
{
    int g = p->g, rc = MPI_SUCCESS;
    int n = p->rstart[g + 1] - p->rstart[g], na = p->astart[g + 1] - p->astart[g];
    agx_msg *m = p->rq.msg + p->rstart[g], *am = p->aq.msg + p->astart[g];
    for (int k = 0; k < n; k++)
        if (!m[k].recv)
            agx_stats_count_map(p->x.node_of, p->x.me, m[k].peer, m[k].bytes);
    for (int k = 0; k < na; k++)
        if (!am[k].recv)
            agx_stats_count_map(p->x.node_of, p->x.me, am[k].peer, am[k].bytes);
    if (p->posted) {
        if ((rc = post_fresh(p, p->rq.req + p->rstart[g], m, n)) == MPI_SUCCESS)
            rc = post_fresh(p, p->aq.req + p->astart[g], am, na);
        return rc;
    }
    if (n)
        rc = PMPI_Startall(n, p->rq.req + p->rstart[g]);
    if (rc == MPI_SUCCESS && na)
        rc = PMPI_Startall(na, p->aq.req + p->astart[g]);
    return rc;
}

int agx_plan_start(agx_plan *p)
{
    p->rc = MPI_SUCCESS;
    p->bad = (agx_mismatch){0};
    p->g = 0;
    if (p->has_pre)
        p->rc = agx_localcopy(p->pre_src, p->pre_sc, p->pre_st, p->pre_dst, p->pre_dc, p->pre_dt);
    if (p->rc == MPI_SUCCESS && p->ng > 0)
        p->rc = start_round(p);
    if (p->rc != MPI_SUCCESS)
        p->g = p->ng + 1; /* nothing of this start is pending */
    return p->rc;
}

/* Whether requests v[0..n) completed (*flag); their arrivals checked. On an error every
 * one of them is completed (waited for: a failed request's peers still finish theirs). */
static int test_set(agx_plan *p, MPI_Request *req, const agx_msg *m, int n, int block, int *flag)
{
    int rc = block ? PMPI_Waitall(n, req, p->st) : PMPI_Testall(n, req, flag, p->st);
    if (block)
        *flag = 1;
    if (rc == MPI_SUCCESS && !*flag)
        return MPI_SUCCESS;
    if (rc != MPI_SUCCESS) { /* some may be pending: finish each */
        *flag = 1;
        for (int k = 0; k < n; k++) {
            int err = rc == MPI_ERR_IN_STATUS ? p->st[k].MPI_ERROR : rc;
            if (req[k] != MPI_REQUEST_NULL && (rc != MPI_ERR_IN_STATUS || err == MPI_ERR_PENDING))
                err = PMPI_Wait(&req[k], &p->st[k]);
            if (err != MPI_SUCCESS && p->rc == MPI_SUCCESS)
                p->rc = err;
        }
        return MPI_SUCCESS;
    }
    for (int k = 0; k < n; k++)
        if (m[k].recv && p->rc == MPI_SUCCESS)
            p->rc = agx_arrived(MPI_SUCCESS, &m[k], &p->st[k], &p->bad);
    return MPI_SUCCESS;
}

int agx_plan_step(agx_plan *p, int block, int *done)
{
    int flag = 1;
    while (flag && p->g < p->ng) {
        int g = p->g;
        test_set(p, p->rq.req + p->rstart[g], p->rq.msg + p->rstart[g], p->rstart[g + 1] - p->rstart[g], block,
                 &flag);
        if (!flag)
            break;
        for (int k = p->ostart[g]; k < p->ostart[g + 1] && p->rc == MPI_SUCCESS; k++)
            if (p->s.ops[k].kind == AGX_SOP_COPY || p->s.ops[k].kind == AGX_SOP_REDUCE)
                p->rc = agx_local_op(&p->x, &p->s, &p->s.ops[k]);
        /* after an error no later round starts (as agx_sched_run); the ASYNC ones finish */
        p->g = p->rc == MPI_SUCCESS ? g + 1 : p->ng;
        if (p->g < p->ng && (p->rc = start_round(p)) != MPI_SUCCESS)
            p->g = p->ng;
    }
    if (flag && p->g == p->ng) {
        int na = p->astart[p->g], first = p->rc;
        test_set(p, p->aq.req, p->aq.msg, na, block, &flag); /* the ASYNC ones of the rounds started */
        if (flag)
            p->g++;
        if (first != MPI_SUCCESS)
            p->rc = first;
    }
    *done = p->g > p->ng;
    if (*done && p->rc == MPI_SUCCESS && p->bad.n)
        p->rc = agx_mismatch_error(&p->bad);
    return *done ? p->rc : MPI_SUCCESS;
}
