/*
 * MPI-4's persistent collectives under the preload: MPI_Allgather_init, _Allgatherv_init,
 * _Allreduce_init and _Alltoallv_init (MPICH 4; Open MPI 4.1 has them as MPIX_..._init,
 * its pcollreq extension, intercepted there under those names), through agx_<op>_init.
 * (Under MPICH the program's MPI_Test polling kept agx's progress thread out of MPI until
 * preload_progress.c made MPI's completion calls advance agx's requests themselves.)
 *
 * The program's handle is agx's request handed to MPI (agx_request_mpi): a persistent
 * MPI request that agx's start posts and agx's completion completes, so MPI_Wait,
 * MPI_Test, MPI_Waitall, MPI_Request_get_status & co. work on it unchanged, beside the
 * program's other requests (preload_progress.c has them advance agx's requests first, for
 * progress only). Here only the calls that must reach agx are intercepted:
 * MPI_Start and MPI_Startall (start agx's request; the program's other requests go to
 * PMPI_) and MPI_Request_free (frees agx's request with its handle). A table maps the
 * handles agx made to agx's requests; while it is empty, those three calls go straight
 * to PMPI_.
 *
 * Conservative, as the rest of the preload: an init goes through agx only when the
 * operation is enabled (AGX_ENABLE), the communicator is an intra-communicator (agx would
 * run the library's call on an inter-communicator anyway) and agx's progress thread runs
 * on every process of it (MPI's completion calls do not advance agx's rounds): one
 * PMPI_Allreduce at the init agrees on that, so no process makes agx's request while
 * another makes the library's. Everything else: the library's own _init.
 */
#include "preload.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#ifdef INIT
/* ---- the table: the MPI handles agx made -> agx's requests (open addressing; a
 * power-of-two capacity, at most half full; deletion by backward shift) ---------------- */
typedef struct {
    MPI_Request h;
    agx_request r;
    agx_op op;
    const char *alg; /* what its init chose (the report's count per start) */
    long long bytes; /* what a start delivers here (the report's) */
    int used;
} entry;

static entry *tab;
static size_t cap;
static atomic_size_t live;
static pthread_mutex_t tlock = PTHREAD_MUTEX_INITIALIZER;

static size_t slot_of(MPI_Request h)
{
    uint64_t k = 0;
    memcpy(&k, &h, sizeof h < sizeof k ? sizeof h : sizeof k);
    return (size_t)((k * 0x9E3779B97F4A7C15ull) >> 17) & (cap - 1);
}

static entry *find(MPI_Request h) /* tlock held */
{
    for (size_t i = cap ? slot_of(h) : 0; cap && tab[i].used; i = (i + 1) & (cap - 1))
        if (tab[i].h == h)
            return &tab[i];
    return NULL;
}

static void put(entry e) /* tlock held; room made by reserve */
{
    size_t i = slot_of(e.h);
    while (tab[i].used)
        i = (i + 1) & (cap - 1);
    e.used = 1;
    tab[i] = e;
    atomic_fetch_add(&live, 1);
}

/* Room for one more entry: 0 when there is no memory for it (nothing changed). */
static int reserve(void)
{
    pthread_mutex_lock(&tlock);
    int ok = 1;
    if (2 * (atomic_load(&live) + 1) > cap) {
        size_t ncap = cap ? 2 * cap : 64;
        entry *old = tab, *t = calloc(ncap, sizeof *t);
        if (t) {
            size_t ocap = cap;
            tab = t, cap = ncap;
            atomic_store(&live, 0);
            for (size_t i = 0; i < ocap; i++)
                if (old[i].used)
                    put(old[i]);
            free(old);
        } else
            ok = 0;
    }
    pthread_mutex_unlock(&tlock);
    return ok;
}

static void drop(entry *e) /* tlock held: shift the entries after it back */
{
    size_t i = (size_t)(e - tab), j = i;
    tab[i].used = 0;
    for (;;) {
        j = (j + 1) & (cap - 1);
        if (!tab[j].used)
            break;
        size_t k = slot_of(tab[j].h); /* j's home: it moves to i unless home lies in (i, j] */
        if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
            continue;
        tab[i] = tab[j];
        tab[j].used = 0;
        i = j;
    }
    atomic_fetch_sub(&live, 1);
}

/* agx's request behind handle h (*e a copy of its entry): 0 when h is not agx's. */
static int lookup(MPI_Request h, entry *e)
{
    if (atomic_load(&live) == 0 || h == MPI_REQUEST_NULL)
        return 0;
    pthread_mutex_lock(&tlock);
    entry *f = find(h);
    if (f)
        *e = *f;
    pthread_mutex_unlock(&tlock);
    return f != NULL;
}

/* ---- the inits ---------------------------------------------------------------------- */

/* Whether this init goes through agx, agreed over comm (a collective of the init). */
static int through_agx(int op, MPI_Comm comm)
{
    int inter = 1, ok, mine, all = 0;
    if (comm == MPI_COMM_NULL)
        return 0; /* the library's error */
    if (!agx_preload_enabled(op))
        return agx_preload_left(op, AGX_LEFT_ENABLE), 0; /* the same on every process of comm */
    if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter)
        return agx_preload_left(op, AGX_LEFT_INTER), 0;
    ok = (mine = agx_preload_async_ok(op)) && reserve(); /* without the thread: counted there */
    if (PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm) == MPI_SUCCESS && all)
        return 1;
    if (mine)
        agx_preload_left(op, AGX_LEFT_RANK);
    return 0;
}

/* ---- ADCL's idea at the init (AGX_ADAPT, the preload's default): a persistent allgather
 * of at most TUNE_BYTES received per rank starts agx's plan and the library's own
 * persistent allgather, on scratch buffers, TUNE_STARTS times each, interleaved,
 * through the program's own path (MPI_Start, MPI_Wait); the slowest rank's sums are
 * agreed (MAX), so every rank keeps the same one. At these sizes the handle's relay (a
 * receive posted and fired per start) can cost more than agx's plan saves: 2 ranks, 8 B,
 * agx's plan 0.32 us per start, through the handle 0.47-0.50, the library's 0.36-0.38.
 * Not under MPICH, whose own persistent allgather (4.0.2) returns stale blocks from its
 * second start. What one rank alone knows (its AGX_ADAPT, its receive type's layout, its
 * scratch) is agreed before anything is made. ---- */
#define TUNE_BYTES (64 << 10)
#define TUNE_STARTS 16
#ifndef MPICH

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

/* The bytes count elements of t span from a buffer's start, or -1 where its layout is not
 * that simple (a lower bound, data outside the extent). */
static long long span(MPI_Datatype t, long long count)
{
    MPI_Aint lb = 1, ext = 0, tlb = -1, text = 0;
    PMPI_Type_get_extent(t, &lb, &ext);
    PMPI_Type_get_true_extent(t, &tlb, &text);
    return !lb && tlb >= 0 && tlb + text <= ext ? count * ext : -1;
}

/* One start and its completion through the program's path; its seconds (< 0: failed). */
static double timed_start(MPI_Request *h, int agxs)
{
    entry e;
    double t0 = PMPI_Wtime();
    int rc = agxs ? (lookup(*h, &e) ? agx_start(&e.r) : MPI_ERR_REQUEST) : MPI_Start(h);
    if (rc == MPI_SUCCESS)
        rc = MPI_Wait(h, MPI_STATUS_IGNORE);
    return rc == MPI_SUCCESS ? PMPI_Wtime() - t0 : -1;
}

#endif

/* 1: the library's own is faster here (the init hands the program the library's). */
static int library_faster(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int recvcount,
                          MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info)
{
#ifdef MPICH
    return (void)sendbuf, (void)sendcount, (void)sendtype, (void)recvcount, (void)recvtype, (void)comm, (void)info, 0;
#else
    const char *a = getenv("AGX_ADAPT");
    int p = 1, rank = 0, size = 0, ok;
    PMPI_Comm_size(comm, &p);
    PMPI_Comm_rank(comm, &rank);
    PMPI_Type_size(recvtype, &size);
    long long bytes = (long long)p * recvcount * size; /* alike on every rank (MPI's rule) */
    if (p < 2 || bytes <= 0 || bytes > TUNE_BYTES)
        return 0;
    long long room = span(recvtype, (long long)p * recvcount); /* this rank's types' own */
    long long sroom = sendbuf == MPI_IN_PLACE ? 0 : span(sendtype, sendcount);
    int mine = a && (!strcmp(a, "1") || !strcasecmp(a, "any")) && room >= 0 && sroom >= 0 &&
               room + sroom <= 4 * TUNE_BYTES;
    char *scratch = mine ? calloc((size_t)(room + sroom + 1), 1) : NULL; /* the program's buffers */
    agx_request r = AGX_REQUEST_NULL;
    MPI_Request h[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    int made = scratch != NULL; /* every rank, or none (agx's init is collective) */
    if (PMPI_Allreduce(&made, &ok, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS || !ok) {
        free(scratch);
        return 0;
    }
    const void *sbuf = sendbuf == MPI_IN_PLACE ? sendbuf : scratch + room; /* stay untouched */
    made = agx_allgather_init(sbuf, sendcount, sendtype, scratch, recvcount, recvtype, comm, info, &r) ==
           MPI_SUCCESS; /* agreed there: alike on every rank */
    if (made && (agx_request_mpi(&r, &h[0]) != MPI_SUCCESS || !reserve()))
        made = 0, agx_request_free(&r), h[0] = MPI_REQUEST_NULL;
    else if (made) {
        pthread_mutex_lock(&tlock);
        put((entry){.h = h[0], .r = r, .op = AGX_OP_ALLGATHER});
        pthread_mutex_unlock(&tlock);
    }
    made = made && PINIT(Allgather)(sbuf, sendcount, sendtype, scratch, recvcount, recvtype, comm, info, &h[1]) ==
                       MPI_SUCCESS;
    if (PMPI_Allreduce(&made, &ok, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS)
        ok = 0;
    double t[3] = {0, 0, 0}; /* agx's, the library's, a failure */
    for (int i = -1; ok && i < TUNE_STARTS; i++) /* i = -1: a warm-up of each, not counted */
        for (int k = 0; k < 2; k++) {
            int c = (i + k) & 1; /* interleaved, each first in turn */
            double dt = timed_start(&h[c], c == 0);
            t[2] = dt < 0 ? 1 : t[2];
            t[c] += i >= 0 && dt > 0 ? dt * skew(c) : 0;
        }
    if (ok)
        PMPI_Allreduce(MPI_IN_PLACE, t, 3, MPI_DOUBLE, MPI_MAX, comm);
    if (h[0] != MPI_REQUEST_NULL) { /* the scratch candidates freed, the table's entry too */
        entry e;
        if (lookup(h[0], &e))
            MPI_Request_free(&h[0]);
    }
    if (h[1] != MPI_REQUEST_NULL)
        PMPI_Request_free(&h[1]);
    free(scratch);
    int lib = ok && !t[2] && t[1] < t[0];
    if (ok && !rank && agx_preload_set("AGX_VERBOSE"))
        fprintf(stderr, "agx: persistent allgather of %lld B per rank (%d ranks): agx's plan %.3g us, the library's "
                "own %.3g us per start (slowest rank, %d starts each): %s (AGX_ADAPT)\n", bytes / p, p,
                t[0] * 1e6 / TUNE_STARTS, t[1] * 1e6 / TUNE_STARTS, TUNE_STARTS,
                lib ? "the library's own" : "agx's");
    return lib;
#endif
}

/* agx's request r, made with code rc, as the program's persistent MPI request. */
static int adopt(int rc, agx_request *r, MPI_Request *request, agx_op op, MPI_Comm comm, long long nbytes)
{
    if (rc != MPI_SUCCESS || (rc = agx_request_mpi(r, request)) != MPI_SUCCESS) {
        agx_request_free(r);
        return rc;
    }
    const char *alg = NULL;
    agx_comm_last_algorithm(comm, op, &alg);
    pthread_mutex_lock(&tlock);
    put((entry){.h = *request, .r = *r, .op = op, .alg = alg, .bytes = nbytes});
    pthread_mutex_unlock(&tlock);
    return MPI_SUCCESS;
}

AGX_EXPORT int INIT(Allgather)(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                               int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                               MPI_Request *request)
{
    agx_request r = AGX_REQUEST_NULL;
    if (!through_agx(AGX_OP_ALLGATHER, comm))
        return PINIT(Allgather)(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, info, request);
    if (library_faster(sendbuf, sendcount, sendtype, recvcount, recvtype, comm, info)) {
        agx_preload_left(AGX_OP_ALLGATHER, AGX_LEFT_TIMED);
        return PINIT(Allgather)(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, info, request);
    }
    return adopt(agx_allgather_init(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, info, &r), &r,
                 request, AGX_OP_ALLGATHER, comm, agx_preload_bytes(comm, recvcount, 1, NULL, recvtype));
}

AGX_EXPORT int INIT(Allgatherv)(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                                MPI_Info info, MPI_Request *request)
{
    agx_request r = AGX_REQUEST_NULL;
    if (!through_agx(AGX_OP_ALLGATHERV, comm))
        return PINIT(Allgatherv)(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, info,
                                 request);
    return adopt(agx_allgatherv_init(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, info,
                                     &r),
                 &r, request, AGX_OP_ALLGATHERV, comm, agx_preload_bytes(comm, 0, 0, recvcounts, recvtype));
}

AGX_EXPORT int INIT(Allreduce)(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                               MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    agx_request r = AGX_REQUEST_NULL;
    if (!through_agx(AGX_OP_ALLREDUCE, comm))
        return PINIT(Allreduce)(sendbuf, recvbuf, count, datatype, op, comm, info, request);
    return adopt(agx_allreduce_init(sendbuf, recvbuf, count, datatype, op, comm, info, &r), &r, request,
                 AGX_OP_ALLREDUCE, comm, agx_preload_bytes(comm, count, 0, NULL, datatype));
}

AGX_EXPORT int INIT(Alltoallv)(const void *sendbuf, const int sendcounts[], const int sdispls[],
                               MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[],
                               MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    agx_request r = AGX_REQUEST_NULL;
    if (!through_agx(AGX_OP_ALLTOALLV, comm))
        return PINIT(Alltoallv)(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm,
                                info, request);
    return adopt(agx_alltoallv_init(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                                    comm, info, &r),
                 &r, request, AGX_OP_ALLTOALLV, comm, agx_preload_bytes(comm, 0, 0, recvcounts, recvtype));
}

/* ---- the calls that reach agx's requests ----------------------------------------------- */

static int start_agx(entry *e)
{
    int rc = agx_start(&e->r);
    if (rc == MPI_SUCCESS)
        agx_preload_count_name(e->op, e->alg, e->bytes);
    return rc;
}

AGX_EXPORT int MPI_Start(MPI_Request *request)
{
    entry e;
    if (!request || !lookup(*request, &e))
        return PMPI_Start(request);
    return start_agx(&e);
}

/* Runs of the program's own requests go to PMPI_Startall as they are; agx's, one by one. */
AGX_EXPORT int MPI_Startall(int count, MPI_Request array_of_requests[])
{
    if (atomic_load(&live) == 0 || count <= 0 || !array_of_requests)
        return PMPI_Startall(count, array_of_requests);
    int first = MPI_SUCCESS, from = 0;
    for (int i = 0; i <= count; i++) {
        entry e;
        int ours = i < count && lookup(array_of_requests[i], &e);
        if (i < count && !ours)
            continue;
        int rc = i > from ? PMPI_Startall(i - from, array_of_requests + from) : MPI_SUCCESS;
        first = first == MPI_SUCCESS ? rc : first;
        if (ours) {
            rc = start_agx(&e);
            first = first == MPI_SUCCESS ? rc : first;
        }
        from = i + 1;
    }
    return first;
}

AGX_EXPORT int MPI_Request_free(MPI_Request *request)
{
    entry e;
    if (!request || !lookup(*request, &e))
        return PMPI_Request_free(request);
    int rc = agx_request_free(&e.r); /* frees the handle too; an active request stays */
    if (rc == MPI_SUCCESS) {
        pthread_mutex_lock(&tlock);
        entry *f = find(*request);
        if (f)
            drop(f);
        pthread_mutex_unlock(&tlock);
        *request = MPI_REQUEST_NULL;
    }
    return rc;
}
#endif
