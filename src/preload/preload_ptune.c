/*
 * ADCL's idea at a persistent collective's init (Gabriel, Huang, IPDPS 2007; AGX_ADAPT,
 * the preload's default; docs/algorithms.md, "Requests"): a small persistent allgather,
 * allgatherv, allreduce or alltoallv (at most AGX_PTUNE_BYTES) starts agx's plan and the
 * library's own persistent call on scratch buffers, in rounds in turn (TUNE_ROUNDS each:
 * one untimed start, then TUNE_BLOCK back to back, timed), through the program's own path
 * (a start, MPI_Wait); the slowest rank's median rounds are agreed (MAX), so every rank
 * hands the program the same one, agx's only where it is TUNE_MARGIN faster. (Single
 * starts in turn measured each one after the other's: at 2 ranks, a 1 KiB allreduce,
 * agx's plan 1.25 against 1.30 us there, 1.60 against 1.19 in a loop.) At these sizes the
 * handle's relay (a receive posted and fired per start) can cost more than agx's plan
 * saves: 2 ranks, an 8 B allgather, agx's plan 0.32 us per start, through the handle
 * 0.47-0.50, the library's 0.36-0.38; a 4-rank 8 B allreduce through the handle 15.8 us
 * against the library's 6.3. Not under MPICH, whose own persistent allgather (4.0.2)
 * returns stale blocks from its second start. What one rank alone knows (its AGX_ADAPT,
 * its types' layouts, its scratch, an alltoallv's sizes, whether the reduction gives the
 * same bits in any order) is agreed before anything is made.
 * Non-blocking calls (preload_nbtune.c) are timed the same way at the first call of each
 * size class on a communicator, each start a new request of either candidate
 * (agx_i<op> handed to MPI, or the library's MPI_I<op>), completed by MPI_Wait.
 */
#include "preload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#ifdef INIT
/* One timing: its candidates, made (or, nonblocking, started) by mk_agx / mk_lib on the
 * scratch (sbuf: MPI_IN_PLACE where the call is in place). */
typedef struct {
    const char *what;      /* "allgather of 8 B per rank" (AGX_VERBOSE) */
    agx_op op;
    long long bytes;       /* what decides whether to time: alike on every rank */
    long long room, sroom; /* this rank's scratch: receive, send bytes (-1: a layout too
                            * complex to copy) */
    int in_place;
    int exact;             /* both give the same bits (data movement, exact reductions):
                            * timed under AGX_ADAPT=1; else only under AGX_ADAPT=any */
    int (*mk_agx)(const void *arg, const void *sbuf, void *rbuf, MPI_Comm comm, agx_request *r);
    int (*mk_lib)(const void *arg, const void *sbuf, void *rbuf, MPI_Comm comm, MPI_Request *h);
    const void *arg;       /* the call's arguments */
    int nonblocking;       /* mk_agx / mk_lib start one call each (none made before) */
    int nokeep;            /* this rank could not keep the verdict (agreed: not timed) */
} agx_ptune;

#define TUNE_ROUNDS 8  /* per candidate: rounds, in turn with the other's */
#define TUNE_BLOCK 8   /* starts timed back to back in a round, after one untimed */
#define TUNE_MARGIN 0.03 /* agx's plan is kept when at least this much faster */

/* AGX_TEST_PTUNE_SKEW=RANK:CAND:FACTOR (tests only): that rank (of MPI_COMM_WORLD) times
 * candidate CAND (0 agx's, 1 the library's) FACTOR times longer: a clock that disagrees. */
static double skew(int cand)
{
    int rank = -1, which = -1, me = -2;
    double factor = 1;
    const char *e = getenv("AGX_TEST_PTUNE_SKEW");
    if (!e || sscanf(e, "%d:%d:%lf", &rank, &which, &factor) != 3 || which != cand)
        return 1;
    PMPI_Comm_rank(MPI_COMM_WORLD, &me);
    return me == rank ? factor : 1;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* n starts, each completed, back to back through the program's path (a steady loop's
 * pace, not a start's after the other candidate's); their seconds (< 0: one failed). A
 * non-blocking call's start is a new request of the candidate on the scratch. */
static double timed_starts(const agx_ptune *c, MPI_Request *h, int agxs, int n, const void *sbuf, void *rbuf,
                           MPI_Comm comm)
{
    double t0 = PMPI_Wtime();
    int rc = MPI_SUCCESS;
    for (int i = 0; i < n && rc == MPI_SUCCESS; i++) {
        agx_request r = AGX_REQUEST_NULL;
        if (!c->nonblocking)
            rc = agxs ? agx_persist_start_quiet(*h) : MPI_Start(h);
        else if (agxs && (rc = c->mk_agx(c->arg, sbuf, rbuf, comm, &r)) == MPI_SUCCESS) /* agx's checks, agreed */
            rc = agx_request_mpi(&r, h);
        else if (!agxs)
            rc = c->mk_lib(c->arg, sbuf, rbuf, comm, h);
        if (rc == MPI_SUCCESS)
            rc = MPI_Wait(h, MPI_STATUS_IGNORE);
    }
    return rc == MPI_SUCCESS ? PMPI_Wtime() - t0 : -1;
}

/* The bytes count elements of t span from a buffer's start, or -1 where its layout is not
 * that simple (a lower bound, data outside the extent). */
static long long span(MPI_Datatype t, long long count)
{
    MPI_Aint lb = 1, ext = 0, tlb = -1, text = 0;
    PMPI_Type_get_extent(t, &lb, &ext);
    PMPI_Type_get_true_extent(t, &tlb, &text);
    return !lb && tlb >= 0 && tlb + text <= ext ? count * ext : -1;
}

/* Collective: 1 the library's is faster, 0 agx's (or not timed: alike on every rank), -1
 * a rank could not time it, -2 a rank could not keep the verdict (agreed). */
static int run(const agx_ptune *c, MPI_Comm comm)
{
#ifdef MPICH
    if (!c->nonblocking) /* MPICH's own persistent allgather (4.0.2) is wrong from its second start */
        return 0;
#endif
    const char *a = getenv("AGX_ADAPT");
    int p = 1, rank = 0, ok = 0;
    PMPI_Comm_size(comm, &p);
    PMPI_Comm_rank(comm, &rank);
    long long most = c->nonblocking ? AGX_NBTUNE_BYTES : AGX_PTUNE_BYTES;
    if (p < 2 || c->bytes <= 0 || c->bytes > most) /* alike on every rank (MPI's rule) */
        return 0;
    int mine = a && ((!strcmp(a, "1") && c->exact) || !strcasecmp(a, "any")) && c->room >= 0 && c->sroom >= 0 &&
               c->room + c->sroom <= 4 * most && !c->nokeep;
    char *scratch = mine ? calloc((size_t)(c->room + c->sroom + 1), 1) : NULL; /* the program's buffers */
    MPI_Request h[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    int made = c->nokeep ? -1 : scratch != NULL; /* every rank, or none (agx's init is collective) */
    if (PMPI_Allreduce(&made, &ok, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS || ok <= 0) {
        free(scratch);
        return ok < 0 ? -2 : -1;
    }
    const void *sbuf = c->in_place ? MPI_IN_PLACE : scratch + c->room; /* stay untouched */
    if (!c->nonblocking) {
        agx_request r = AGX_REQUEST_NULL;
        int agx_made = c->mk_agx(c->arg, sbuf, scratch, comm, &r) == MPI_SUCCESS; /* agreed there */
        made = agx_made && agx_persist_adopt(MPI_SUCCESS, &r, &h[0], c->op, comm, 0) == MPI_SUCCESS; /* this rank's */
        if (!made)
            h[0] = MPI_REQUEST_NULL;
        /* the library's init is collective: every rank makes it where agx's was made,
         * whatever this rank's table said */
        made = agx_made && c->mk_lib(c->arg, sbuf, scratch, comm, &h[1]) == MPI_SUCCESS && made;
        if (PMPI_Allreduce(&made, &ok, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS)
            ok = 0;
    }
    /* agx's, the library's (medians), a failure; a non-blocking call's first start is
     * agx's, whose checks fail on every rank alike before the library's call is made */
    double t[3] = {0, 0, 0}, s[2][TUNE_ROUNDS];
    for (int i = 0; ok && !t[2] && i < TUNE_ROUNDS; i++)
        for (int k = 0; k < 2 && !t[2]; k++) {
            int w = (i + k) & 1; /* in turn, each first in turn: drift hits both alike */
            double dt = timed_starts(c, &h[w], w == 0, 1, sbuf, scratch, comm),
                   bt = dt < 0 ? -1 : timed_starts(c, &h[w], w == 0, TUNE_BLOCK, sbuf, scratch, comm);
            t[2] = dt < 0 || bt < 0 ? 1 : t[2];
            s[w][i] = bt / TUNE_BLOCK * skew(w);
        }
    for (int w = 0; ok && !t[2] && w < 2; w++) { /* each rank's median round: a busy machine's spikes left out */
        qsort(s[w], TUNE_ROUNDS, sizeof(double), by_value);
        t[w] = (s[w][TUNE_ROUNDS / 2 - 1] + s[w][TUNE_ROUNDS / 2]) / 2;
    }
    if (ok)
        PMPI_Allreduce(MPI_IN_PLACE, t, 3, MPI_DOUBLE, MPI_MAX, comm);
    if (h[0] != MPI_REQUEST_NULL && !c->nonblocking) /* the scratch candidates freed, agx's table entry too */
        MPI_Request_free(&h[0]);
    if (h[1] != MPI_REQUEST_NULL && !c->nonblocking)
        PMPI_Request_free(&h[1]);
    free(scratch);
    int lib = ok && !t[2] && t[0] > t[1] * (1 - TUNE_MARGIN); /* a tie: the library's own */
    if (ok && !rank && agx_preload_set("AGX_VERBOSE"))
        fprintf(stderr, "agx: %s %s (%d ranks): agx's %s %.3g us, the library's own %.3g us per %s (the slowest "
                "rank's median of %d rounds of %d each): %s (AGX_ADAPT)\n", c->nonblocking ? "non-blocking" :
                "persistent", c->what, p, c->nonblocking ? "request" : "plan", t[0] * 1e6, t[1] * 1e6,
                c->nonblocking ? "call and wait" : "start", TUNE_ROUNDS, TUNE_BLOCK,
                lib ? "the library's own" : "agx's");
    return ok ? lib : -1;
}
/* ---- the candidates of each operation, on the scratch: arg is the init's own argument
 * list ---- */
typedef struct {
    int scount, rcount;
    MPI_Datatype stype, rtype;
    MPI_Op op;
    MPI_Info info;
    const int *sc, *sd, *rc, *rd; /* the v-calls' counts and displacements */
} init_args;

/* Elements of a v-call's buffer from its start to its last block's end (-1: a negative
 * displacement or count, a layout not simple to copy). */
static long long v_end(int n, const int *counts, const int *displs)
{
    long long end = 0;
    for (int i = 0; i < n; i++) {
        if (counts[i] < 0 || (counts[i] && displs[i] < 0))
            return -1;
        end = counts[i] && (long long)displs[i] + counts[i] > end ? (long long)displs[i] + counts[i] : end;
    }
    return end;
}

static int agv_agx(const void *arg, const void *sbuf, void *rbuf, MPI_Comm comm, agx_request *r)
{
    const init_args *x = arg;
    return agx_allgatherv_init(sbuf, x->scount, x->stype, rbuf, x->rc, x->rd, x->rtype, comm, x->info, r);
}

static int agv_lib(const void *arg, const void *sbuf, void *rbuf, MPI_Comm comm, MPI_Request *h)
{
    const init_args *x = arg;
    return PINIT(Allgatherv)(sbuf, x->scount, x->stype, rbuf, x->rc, x->rd, x->rtype, comm, x->info, h);
}

static int a2a_agx(const void *arg, const void *sbuf, void *rbuf, MPI_Comm comm, agx_request *r)
{
    const init_args *x = arg;
    return agx_alltoallv_init(sbuf, x->sc, x->sd, x->stype, rbuf, x->rc, x->rd, x->rtype, comm, x->info, r);
}

static int a2a_lib(const void *arg, const void *sbuf, void *rbuf, MPI_Comm comm, MPI_Request *h)
{
    const init_args *x = arg;
    return PINIT(Alltoallv)(sbuf, x->sc, x->sd, x->stype, rbuf, x->rc, x->rd, x->rtype, comm, x->info, h);
}

static int ag_agx(const void *arg, const void *sbuf, void *rbuf, MPI_Comm comm, agx_request *r)
{
    const init_args *x = arg;
    return agx_allgather_init(sbuf, x->scount, x->stype, rbuf, x->rcount, x->rtype, comm, x->info, r);
}

static int ag_lib(const void *arg, const void *sbuf, void *rbuf, MPI_Comm comm, MPI_Request *h)
{
    const init_args *x = arg;
    return PINIT(Allgather)(sbuf, x->scount, x->stype, rbuf, x->rcount, x->rtype, comm, x->info, h);
}

static int ar_agx(const void *arg, const void *sbuf, void *rbuf, MPI_Comm comm, agx_request *r)
{
    const init_args *x = arg;
    return agx_allreduce_init(sbuf, rbuf, x->rcount, x->rtype, x->op, comm, x->info, r);
}

static int ar_lib(const void *arg, const void *sbuf, void *rbuf, MPI_Comm comm, MPI_Request *h)
{
    const init_args *x = arg;
    return PINIT(Allreduce)(sbuf, rbuf, x->rcount, x->rtype, x->op, comm, x->info, h);
}

/* the non-blocking calls' candidates: each call a new request */
static int iag_agx(const void *arg, const void *sbuf, void *rbuf, MPI_Comm comm, agx_request *r)
{
    const init_args *x = arg;
    return agx_iallgather(sbuf, x->scount, x->stype, rbuf, x->rcount, x->rtype, comm, r);
}

static int iag_lib(const void *arg, const void *sbuf, void *rbuf, MPI_Comm comm, MPI_Request *h)
{
    const init_args *x = arg;
    return PMPI_Iallgather(sbuf, x->scount, x->stype, rbuf, x->rcount, x->rtype, comm, h);
}

static int iagv_agx(const void *arg, const void *sbuf, void *rbuf, MPI_Comm comm, agx_request *r)
{
    const init_args *x = arg;
    return agx_iallgatherv(sbuf, x->scount, x->stype, rbuf, x->rc, x->rd, x->rtype, comm, r);
}

static int iagv_lib(const void *arg, const void *sbuf, void *rbuf, MPI_Comm comm, MPI_Request *h)
{
    const init_args *x = arg;
    return PMPI_Iallgatherv(sbuf, x->scount, x->stype, rbuf, x->rc, x->rd, x->rtype, comm, h);
}

static int iar_agx(const void *arg, const void *sbuf, void *rbuf, MPI_Comm comm, agx_request *r)
{
    const init_args *x = arg;
    return agx_iallreduce(sbuf, rbuf, x->rcount, x->rtype, x->op, comm, r);
}

static int iar_lib(const void *arg, const void *sbuf, void *rbuf, MPI_Comm comm, MPI_Request *h)
{
    const init_args *x = arg;
    return PMPI_Iallreduce(sbuf, rbuf, x->rcount, x->rtype, x->op, comm, h);
}


int agx_ptune_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int recvcount,
                        MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, int nb)
{
    int p = 1, size = 0, in_place = sendbuf == MPI_IN_PLACE;
    PMPI_Comm_size(comm, &p);
    PMPI_Type_size(recvtype, &size);
    init_args x = {sendcount, recvcount, sendtype, recvtype, MPI_OP_NULL, info, NULL, NULL, NULL, NULL};
    char what[64];
    snprintf(what, sizeof what, "allgather of %lld B per rank", (long long)recvcount * size);
    agx_ptune c = {.what = what, .op = AGX_OP_ALLGATHER, .bytes = (long long)p * recvcount * size,
                   .room = span(recvtype, (long long)p * recvcount), .sroom = in_place ? 0 : span(sendtype, sendcount),
                   .in_place = in_place, .exact = 1, .mk_agx = nb & 1 ? iag_agx : ag_agx,
                   .mk_lib = nb & 1 ? iag_lib : ag_lib, .arg = &x, .nonblocking = nb & 1, .nokeep = nb >> 1};
    return run(&c, comm);
}

int agx_ptune_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, const int *recvcounts,
                         const int *displs, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, int nb)
{
    int p = 1, size = 0, in_place = sendbuf == MPI_IN_PLACE;
    PMPI_Comm_size(comm, &p);
    PMPI_Type_size(recvtype, &size);
    long long tot = 0, end = recvcounts && displs ? v_end(p, recvcounts, displs) : -1;
    for (int i = 0; recvcounts && tot >= 0 && i < p; i++) /* alike on every rank; the displacements, which */
        tot = recvcounts[i] < 0 ? -1 : tot + recvcounts[i]; /* are not, decide the room (agreed in run) */
    init_args x = {sendcount, 0, sendtype, recvtype, MPI_OP_NULL, info, NULL, NULL, recvcounts, displs};
    char what[64];
    snprintf(what, sizeof what, "allgatherv of %lld B", tot * size);
    agx_ptune c = {.what = what, .op = AGX_OP_ALLGATHERV, .bytes = tot > 0 ? tot * size : 0, /* alike (MPI's rule) */
                   .room = end < 0 ? -1 : span(recvtype, end), .sroom = in_place ? 0 : span(sendtype, sendcount),
                   .in_place = in_place, .exact = 1, .mk_agx = nb & 1 ? iagv_agx : agv_agx,
                   .mk_lib = nb & 1 ? iagv_lib : agv_lib, .arg = &x, .nonblocking = nb & 1, .nokeep = nb >> 1};
    return run(&c, comm);
}

/* Timed where both give the same bits (agx_allreduce_exact), or under AGX_ADAPT=any. */
int agx_ptune_allreduce(const void *sendbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                        MPI_Info info, int nb)
{
    int size = 0, in_place = sendbuf == MPI_IN_PLACE;
    PMPI_Type_size(datatype, &size);
    init_args x = {count, count, datatype, datatype, op, info, NULL, NULL, NULL, NULL};
    char what[64];
    snprintf(what, sizeof what, "allreduce of %lld B", (long long)count * size);
    long long room = span(datatype, count);
    agx_ptune c = {.what = what, .op = AGX_OP_ALLREDUCE, .bytes = (long long)count * size, .room = room,
                   .sroom = in_place ? 0 : room, .in_place = in_place, .exact = agx_allreduce_exact(datatype, op),
                   .mk_agx = nb & 1 ? iar_agx : ar_agx, .mk_lib = nb & 1 ? iar_lib : ar_lib, .arg = &x,
                   .nonblocking = nb & 1, .nokeep = nb >> 1};
    return run(&c, comm);
}

int agx_ptune_alltoallv(const void *sendbuf, const int *sendcounts, const int *sdispls, MPI_Datatype sendtype,
                        const int *recvcounts, const int *rdispls, MPI_Datatype recvtype, MPI_Comm comm,
                        MPI_Info info)
{
    int p = 1, in_place = sendbuf == MPI_IN_PLACE;
    PMPI_Comm_size(comm, &p);
    long long rend = recvcounts && rdispls ? v_end(p, recvcounts, rdispls) : -1;
    long long send = in_place ? 0 : sendcounts && sdispls ? v_end(p, sendcounts, sdispls) : -1;
    init_args x = {0, 0, sendtype, recvtype, MPI_OP_NULL, info, sendcounts, sdispls, recvcounts, rdispls};
    /* each rank's own sizes: its scratch's limit decides (agreed), no bytes alike everywhere */
    agx_ptune c = {.what = "alltoallv", .op = AGX_OP_ALLTOALLV, .bytes = 1, .room = rend < 0 ? -1 : span(recvtype, rend),
                   .sroom = send < 0 ? -1 : in_place ? 0 : span(sendtype, send), .in_place = in_place, .exact = 1,
                   .mk_agx = a2a_agx, .mk_lib = a2a_lib, .arg = &x};
    return run(&c, comm);
}
#endif
