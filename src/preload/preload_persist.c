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

int agx_persist_adopt(int rc, agx_request *r, MPI_Request *request, agx_op op, MPI_Comm comm, long long nbytes)
{
    if (rc == MPI_SUCCESS && !reserve())
        rc = MPI_ERR_NO_MEM;
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

int agx_persist_start_quiet(MPI_Request h)
{
    entry e;
    return lookup(h, &e) ? agx_start(&e.r) : MPI_ERR_REQUEST;
}

AGX_EXPORT int INIT(Allgather)(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                               int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                               MPI_Request *request)
{
    agx_request r = AGX_REQUEST_NULL;
    if (!through_agx(AGX_OP_ALLGATHER, comm))
        return PINIT(Allgather)(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, info, request);
    if (agx_ptune_kept_allgather(sendbuf, sendcount, sendtype, recvcount, recvtype, comm, info)) {
        agx_preload_left(AGX_OP_ALLGATHER, AGX_LEFT_TIMED);
        return PINIT(Allgather)(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, info, request);
    }
    return agx_persist_adopt(agx_allgather_init(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                                                info, &r),
                             &r, request, AGX_OP_ALLGATHER, comm, agx_preload_bytes(comm, recvcount, 1, NULL, recvtype));
}

AGX_EXPORT int INIT(Allgatherv)(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                                MPI_Info info, MPI_Request *request)
{
    agx_request r = AGX_REQUEST_NULL;
    if (!through_agx(AGX_OP_ALLGATHERV, comm))
        return PINIT(Allgatherv)(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, info,
                                 request);
    if (agx_ptune_kept_allgatherv(sendbuf, sendcount, sendtype, recvcounts, displs, recvtype, comm, info)) {
        agx_preload_left(AGX_OP_ALLGATHERV, AGX_LEFT_TIMED);
        return PINIT(Allgatherv)(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, info,
                                 request);
    }
    return agx_persist_adopt(agx_allgatherv_init(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                                                 comm, info, &r),
                             &r, request, AGX_OP_ALLGATHERV, comm, agx_preload_bytes(comm, 0, 0, recvcounts, recvtype));
}

AGX_EXPORT int INIT(Allreduce)(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                               MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    agx_request r = AGX_REQUEST_NULL;
    if (!through_agx(AGX_OP_ALLREDUCE, comm))
        return PINIT(Allreduce)(sendbuf, recvbuf, count, datatype, op, comm, info, request);
    int v = agx_ptune_kept_allreduce(sendbuf, count, datatype, op, comm, info);
    if (v) {
        agx_preload_left(AGX_OP_ALLREDUCE, v == 2 ? AGX_LEFT_BITS : AGX_LEFT_TIMED);
        return PINIT(Allreduce)(sendbuf, recvbuf, count, datatype, op, comm, info, request);
    }
    return agx_persist_adopt(agx_allreduce_init(sendbuf, recvbuf, count, datatype, op, comm, info, &r), &r, request,
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
    if (agx_ptune_kept_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvcounts, rdispls, recvtype, comm, info) >
        0) {
        agx_preload_left(AGX_OP_ALLTOALLV, AGX_LEFT_TIMED);
        return PINIT(Alltoallv)(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm,
                                info, request);
    }
    return agx_persist_adopt(agx_alltoallv_init(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                                                recvtype, comm, info, &r),
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
