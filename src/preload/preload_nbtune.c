/*
 * Non-blocking allgather, allgatherv and allreduce through the preload (AGX_ADAPT, the
 * preload's default; docs/algorithms.md, "Requests"): agx's request, handed to MPI, runs
 * the call only where it is faster than the library's own MPI_I<op>. At the first call of
 * a size class (bytes in [2^(c-1), 2^c), under AGX_NBTUNE_BYTES) on a communicator, both
 * candidates are timed on scratch buffers as a persistent init's are (preload_ptune.c:
 * rounds in turn of calls started and waited for back to back, the slowest rank's median
 * agreed), and the verdict is kept on the communicator for its later calls of the class.
 * On this 2-core machine agx's non-blocking calls took 1.2-5.7x the library's time
 * (docs/RESULTS.md, "Non-blocking calls through the preload against the library's"): a
 * generalized request per call, and a progress thread sharing the cores.
 * The verdicts live in a state attached to the communicator (an attribute, freed with it):
 * every rank keeps what every rank agreed, or, where a rank could not time (its AGX_ADAPT,
 * scratch, buffer layout or state: agreed by the timing), the communicator stays with
 * agx's from then on. Inter-communicators and larger calls: agx's, untimed, as before;
 * floating-point reductions under AGX_ADAPT=1: the library's own, untimed (its bits).
 * A communicator per step: a freed communicator's verdicts are kept (the last KEPT, with
 * its group), and a new one's first call that would time takes, in one reduction (BAND)
 * on it, the verdicts that every rank kept from a freed communicator of the same ranks in
 * the same order, the same on every rank (a class a rank kept none of, or kept otherwise,
 * is timed); the timing was 8 rounds of 8 calls of each candidate, 1-2 ms at 4 ranks.
 */
#include "preload.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <strings.h>

#ifdef INIT
enum { CLASSES = 20 };            /* c = 1 .. 20: 1 B to under AGX_NBTUNE_BYTES */
_Static_assert(1LL << CLASSES <= AGX_NBTUNE_BYTES, "every class timed is one the timing takes");
#define OFF ((void *)1)           /* the attribute's value where a rank could not keep its
                                   * verdicts: agx's from now on, nothing timed */
typedef struct {
    int p, inter;                 /* the communicator's size, whether an inter-communicator */
    int off;                      /* a rank could not time here: agx's from now on (1: the
                                   * non-blocking calls, 2: the persistent inits) */
    int carried;                  /* the kept verdicts were asked for (carry) */
    MPI_Group group;              /* its ranks, for a later communicator's carry */
    unsigned long long known[7], lib[7]; /* per operation (non-blocking 0-2, persistent 3-5,
                                          * persistent alltoallv 6): the classes timed; the
                                          * library's */
} nb_state;
enum { KEPT = 4 };
static nb_state kept[KEPT]; /* freed communicators' verdicts, the latest last */
static int nkept;
static pthread_mutex_t kept_mu = PTHREAD_MUTEX_INITIALIZER;
static int key = MPI_KEYVAL_INVALID;
static pthread_once_t once = PTHREAD_ONCE_INIT;
/* Each thread's last (communicator, state), so that a call costs no attribute lookup (39
 * ns under MPI_THREAD_MULTIPLE here); every state dropped bumps gen, which empties it: a
 * freed communicator's handle may come back as another's. */
static unsigned gen;
#define HOT static _Thread_local __attribute__((tls_model("initial-exec")))
HOT struct {
    MPI_Comm comm;
    unsigned gen;
    void *v;
} hot;

static int drop(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)comm, (void)keyval, (void)extra;
    __atomic_fetch_add(&gen, 1, __ATOMIC_ACQ_REL);
    nb_state *st = value;
    if (value == OFF)
        return MPI_SUCCESS;
    unsigned long long any = 0;
    for (int k = 0; k < 7; k++)
        any |= st->known[k];
    if (!st->off && !st->inter && any) {
        pthread_mutex_lock(&kept_mu);
        if (nkept == KEPT) { /* the oldest goes */
            PMPI_Group_free(&kept[0].group);
            for (int i = 1; i < KEPT; i++)
                kept[i - 1] = kept[i];
            nkept--;
        }
        kept[nkept++] = *st, st->group = MPI_GROUP_NULL;
        pthread_mutex_unlock(&kept_mu);
    }
    if (st->group != MPI_GROUP_NULL)
        PMPI_Group_free(&st->group);
    free(st);
    return MPI_SUCCESS;
}

/* The verdicts every rank kept from a freed communicator of comm's ranks, in their order
 * (the latest such on each rank), into st: one reduction on comm, made once per
 * communicator by every rank (st NULL: this rank has no state and takes none). */
static void carry(MPI_Comm comm, nb_state *st)
{
    unsigned long long v[21] = {0}, w[21];
    int same = MPI_UNEQUAL, n = 0;
    if (st && st->group != MPI_GROUP_NULL) {
        pthread_mutex_lock(&kept_mu);
        for (int i = nkept - 1; i >= 0 && same != MPI_IDENT; i--)
            if (PMPI_Group_compare(kept[i].group, st->group, &same) == MPI_SUCCESS && same == MPI_IDENT)
                for (int k = 0; k < 7; k++)
                    v[k] = kept[i].known[k], v[7 + k] = kept[i].lib[k], v[14 + k] = ~kept[i].lib[k];
        pthread_mutex_unlock(&kept_mu);
    }
    if (st)
        st->carried = 1;
    if (PMPI_Allreduce(v, w, 21, MPI_UNSIGNED_LONG_LONG, MPI_BAND, comm) != MPI_SUCCESS || !st)
        return;
    for (int k = 0; k < 7; k++) { /* known everywhere, and the same everywhere */
        unsigned long long ok = w[k] & (w[7 + k] | w[14 + k]);
        st->known[k] |= ok, st->lib[k] |= w[7 + k] & ok;
        n += __builtin_popcountll(ok);
    }
    int rank = 1;
    if (n && agx_preload_set("AGX_VERBOSE") && PMPI_Comm_rank(comm, &rank) == MPI_SUCCESS && rank == 0)
        fprintf(stderr, "agx: non-blocking calls on a new communicator of %d ranks: the verdicts of %d size "
                "class%s taken from a freed one of the same ranks (AGX_ADAPT), not timed again\n", st->p, n,
                n > 1 ? "es" : "");
}

static void keys(void)
{
    PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, drop, &key, NULL);
}

/* comm's state, made at its first non-blocking call (NULL: agx's, untimed: OFF, or
 * none could be made, which the first timing agrees on). One attribute lookup a call. */
static nb_state *state(MPI_Comm comm, int *fresh)
{
    void *v = NULL;
    int found = 0;
    unsigned g = __atomic_load_n(&gen, __ATOMIC_ACQUIRE);
    *fresh = 0;
    if (hot.v && hot.comm == comm && hot.gen == g)
        return hot.v == OFF ? NULL : hot.v;
    pthread_once(&once, keys);
    if (PMPI_Comm_get_attr(comm, key, &v, &found) != MPI_SUCCESS)
        return NULL;
    if (found) {
        hot.comm = comm, hot.gen = g, hot.v = v;
        return v == OFF ? NULL : v;
    }
    nb_state *st = calloc(1, sizeof *st);
    if (st && (PMPI_Comm_test_inter(comm, &st->inter) != MPI_SUCCESS || PMPI_Comm_size(comm, &st->p) != MPI_SUCCESS ||
               (st->group = MPI_GROUP_NULL, !st->inter && PMPI_Comm_group(comm, &st->group) != MPI_SUCCESS) ||
               PMPI_Comm_set_attr(comm, key, st) != MPI_SUCCESS)) {
        if (st->group != MPI_GROUP_NULL)
            PMPI_Group_free(&st->group);
        free(st);
        st = NULL;
    }
    *fresh = 1;
    return st;
}

void agx_nbtune_finalize(void)
{
    void *v;
    int found = 0;
    if (key == MPI_KEYVAL_INVALID)
        return;
    if (PMPI_Comm_get_attr(MPI_COMM_WORLD, key, &v, &found) == MPI_SUCCESS && found)
        PMPI_Comm_delete_attr(MPI_COMM_WORLD, key); /* the world's state freed (drop) */
    PMPI_Comm_free_keyval(&key);
    pthread_mutex_lock(&kept_mu);
    while (nkept > 0)
        PMPI_Group_free(&kept[--nkept].group);
    pthread_mutex_unlock(&kept_mu);
}

/* The verdict of operation k (0 allgather, 1 allgatherv, 2 allreduce; 3-5 their persistent
 * inits) for a call of bytes on comm: 1 the library's, 0 agx's; at a class's first call
 * timed (time: the candidates, collective) and kept. No call is timed on a single rank, an
 * inter-communicator, no bytes or AGX_NBTUNE_BYTES or more (alike on every rank): every
 * call timed reaches the timing's agreement (preload_ptune.c), so a rank without its
 * state (2) makes the answer -2 on every rank, and no rank keeps a verdict another does
 * not. A persistent init that could not be timed (-1: a layout, scratch) keeps nothing:
 * the next init of the class is timed. */
/* The size class c: bytes in [2^(c-1), 2^c); 0 none (no bytes, 2^CLASSES or more). */
static int size_class(long long bytes)
{
    int c = 0;
    while (c <= CLASSES && (1LL << c) <= bytes)
        c++;
    return c > CLASSES ? 0 : c;
}

static int verdict(MPI_Comm comm, int k, long long bytes, int (*time)(const void *, int), const void *arg)
{
    int c = size_class(bytes), fresh, inter = 1, p = 1;
    nb_state *st = state(comm, &fresh);
    int fam = k >= 3 ? 2 : 1;
    if (!fresh && (!st || (st->off & fam))) /* agreed before: agx's */
        return 0;
    if (st)
        inter = st->inter, p = st->p;
    else
        PMPI_Comm_test_inter(comm, &inter), PMPI_Comm_size(comm, &p);
    if (inter || p < 2 || c < 1 || bytes > (fam == 2 ? AGX_PTUNE_BYTES : AGX_NBTUNE_BYTES))
        return 0; /* alike everywhere, never timed (and no agreement: a rank without its state tries again) */
    unsigned long long bit = 1ULL << (c - 1);
    if (!(st && (st->known[k] & bit)) && !(st && st->carried)) /* every rank here, once: a rank */
        carry(comm, st); /* without its state is here once too (the timing below turns it off) */
    if (st && (st->known[k] & bit))
        return (st->lib[k] & bit) != 0;
    int r = time(arg, st ? 1 : 2); /* collective; 2: this rank cannot keep it, so -2 everywhere */
    if (!st)
        return PMPI_Comm_set_attr(comm, key, OFF), 0;
    if (r == -1 && fam == 2)
        return 0;
    st->off |= r == -2 ? 3 : r < 0 ? fam : 0;
    st->known[k] |= bit;
    st->lib[k] |= r > 0 ? bit : 0;
    return r > 0;
}
/* the timings: each call's arguments, for agx_ptune_* */
typedef struct {
    const void *sbuf;
    int scount, rcount;
    MPI_Datatype stype, rtype;
    const int *rc, *rd;
    MPI_Op op;
    MPI_Comm comm;
    MPI_Info info;  /* a persistent init's (agx's inits ignore it; the library's get it) */
    int persistent; /* a persistent init's timing */
} nb_args;

/* agx_ptune's nb: 1 a non-blocking call's timing, + 2 where this rank cannot keep it */
#define NB(x, keep) (((x)->persistent ? 0 : 1) | ((keep) == 2 ? 2 : 0))

static int time_ag(const void *arg, int keep)
{
    const nb_args *x = arg;
    return agx_ptune_allgather(x->sbuf, x->scount, x->stype, x->rcount, x->rtype, x->comm, x->info, NB(x, keep));
}

static int time_agv(const void *arg, int keep)
{
    const nb_args *x = arg;
    return agx_ptune_allgatherv(x->sbuf, x->scount, x->stype, x->rc, x->rd, x->rtype, x->comm, x->info, NB(x, keep));
}

static int time_ar(const void *arg, int keep)
{
    const nb_args *x = arg;
    return agx_ptune_allreduce(x->sbuf, x->rcount, x->rtype, x->op, x->comm, x->info, NB(x, keep));
}

/* The three operations' verdicts, non-blocking (persistent 0) or a persistent init's (1) */
static int ag(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int recvcount, MPI_Datatype recvtype,
              MPI_Comm comm, MPI_Info info, int persistent)
{
    int p = 1, size = 0;
    PMPI_Comm_size(comm, &p);
    PMPI_Type_size(recvtype, &size);
    nb_args x = {.sbuf = sendbuf, .scount = sendcount, .stype = sendtype, .rcount = recvcount, .rtype = recvtype,
                 .comm = comm, .info = info, .persistent = persistent};
    return verdict(comm, 3 * persistent, (long long)p * recvcount * size, time_ag, &x);
}

static int agv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, const int *recvcounts, const int *displs,
               MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, int persistent)
{
    int p = 1, size = 0;
    long long tot = 0;
    PMPI_Comm_size(comm, &p);
    PMPI_Type_size(recvtype, &size);
    for (int i = 0; recvcounts && tot >= 0 && i < p; i++) /* the counts, alike on every rank (MPI's rule); */
        tot = recvcounts[i] < 0 ? -1 : tot + recvcounts[i]; /* not the displacements: each rank's own */
    nb_args x = {.sbuf = sendbuf, .scount = sendcount, .stype = sendtype, .rtype = recvtype, .rc = recvcounts,
                 .rd = displs, .comm = comm, .info = info, .persistent = persistent};
    return verdict(comm, 1 + 3 * persistent, tot > 0 ? tot * size : 0, time_agv, &x);
}

/* Timed where both give the same bits (agx_allreduce_exact), or under AGX_ADAPT=any; a
 * reduction whose bits depend on the order under AGX_ADAPT=1 takes the library's own
 * call, untimed (2), as a blocking one does (its bits, as without agx); AGX_ADAPT=0: agx's. */
static int ar(const void *sendbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
              int persistent)
{
    static int adapt = -1; /* 0, 1, 2 (any) */
    int size = 0;
    if (adapt < 0)
        adapt = !agx_preload_set("AGX_ADAPT") ? 0 : !strcasecmp(getenv("AGX_ADAPT"), "any") ? 2 : 1;
    if (adapt < 2 && !agx_allreduce_exact(datatype, op)) /* alike on every rank (the type and op are) */
        return adapt == 1 ? 2 : 0;
    PMPI_Type_size(datatype, &size);
    nb_args x = {.sbuf = sendbuf, .rcount = count, .rtype = datatype, .op = op, .comm = comm, .info = info,
                 .persistent = persistent};
    return verdict(comm, 2 + 3 * persistent, (long long)count * size, time_ar, &x);
}

int agx_nbtune_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int recvcount,
                         MPI_Datatype recvtype, MPI_Comm comm)
{
    return ag(sendbuf, sendcount, sendtype, recvcount, recvtype, comm, MPI_INFO_NULL, 0);
}

int agx_nbtune_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, const int *recvcounts,
                          const int *displs, MPI_Datatype recvtype, MPI_Comm comm)
{
    return agv(sendbuf, sendcount, sendtype, recvcounts, displs, recvtype, comm, MPI_INFO_NULL, 0);
}

int agx_nbtune_allreduce(const void *sendbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    return ar(sendbuf, count, datatype, op, comm, MPI_INFO_NULL, 0);
}

/* A persistent init's: agx's inits ignore info, so a verdict holds whatever the info
 * (ranks may pass different ones). Not under MPICH, whose own persistent allgather (4.0.2)
 * is wrong from its second start: agx's plan, untimed, no collective (preload_ptune.c). */
#ifdef MPICH
#define TIMED_INITS 0
#else
#define TIMED_INITS 1
#endif
int agx_ptune_kept_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int recvcount,
                             MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info)
{
    return TIMED_INITS && ag(sendbuf, sendcount, sendtype, recvcount, recvtype, comm, info, 1);
}

int agx_ptune_kept_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, const int *recvcounts,
                              const int *displs, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info)
{
    return TIMED_INITS && agv(sendbuf, sendcount, sendtype, recvcounts, displs, recvtype, comm, info, 1);
}

int agx_ptune_kept_allreduce(const void *sendbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                             MPI_Info info)
{
    return TIMED_INITS ? ar(sendbuf, count, datatype, op, comm, info, 1) : 0; /* 0, 1 or 2 */
}

/* A persistent alltoallv's: its sizes are each rank's own, so every init makes one MAX
 * reduction (each rank's size class and kept verdict, and their negatives): where every
 * rank's bytes (sent and received) fall in one class kept alike, that verdict; else timed
 * as before (preload_ptune.c), kept where the class was one. A communicator's first init
 * (agreed in that reduction) carries a freed one's verdicts, then agrees again; a rank
 * without its state makes the persistent inits agx's everywhere, as verdict's timing does. */
int agx_ptune_kept_alltoallv(const void *sendbuf, const int *sendcounts, const int *sdispls, MPI_Datatype sendtype,
                             const int *recvcounts, const int *rdispls, MPI_Datatype recvtype, MPI_Comm comm,
                             MPI_Info info)
{
    int fresh, p = 1, ssize = 0, rsize = 0, c, v[6], w[6];
    long long bytes = 0;
    if (!TIMED_INITS)
        return 0;
    nb_state *st = state(comm, &fresh);
    if (!fresh && (!st || (st->off & 2))) /* agreed before: agx's */
        return 0;
    PMPI_Comm_size(comm, &p);
    if (recvtype != MPI_DATATYPE_NULL) /* a bad call: agx's init reports it */
        PMPI_Type_size(recvtype, &rsize);
    if (sendbuf != MPI_IN_PLACE && sendtype != MPI_DATATYPE_NULL)
        PMPI_Type_size(sendtype, &ssize);
    for (int i = 0; i < p && bytes >= 0; i++) {
        int sc = sendbuf == MPI_IN_PLACE || !sendcounts ? 0 : sendcounts[i], rc = recvcounts ? recvcounts[i] : 0;
        bytes = sc < 0 || rc < 0 ? -1 : bytes + (long long)sc * ssize + (long long)rc * rsize;
    }
    c = size_class(bytes); /* 0: none kept */
    unsigned long long bit = c ? 1ULL << (c - 1) : 0;
    int kb = st && (st->known[6] & bit) ? 1 + ((st->lib[6] & bit) != 0) : 0;
    v[0] = c, v[1] = -c, v[2] = kb, v[3] = -kb, v[4] = st && !st->carried, v[5] = !st;
    if (PMPI_Allreduce(v, w, 6, MPI_INT, MPI_MAX, comm) != MPI_SUCCESS)
        return 0;
    if (w[5]) /* a rank has no state, as verdict's timing agrees (-2): agx's from now on (so */
        return st ? (st->off |= 3, 0) : (PMPI_Comm_set_attr(comm, key, OFF), 0); /* below: st) */
    if (w[4]) { /* every rank: carry, then the class's verdicts again */
        carry(comm, st);
        kb = st->known[6] & bit ? 1 + ((st->lib[6] & bit) != 0) : 0;
        v[2] = kb, v[3] = -kb;
        if (PMPI_Allreduce(v + 2, w + 2, 2, MPI_INT, MPI_MAX, comm) != MPI_SUCCESS)
            return 0;
    }
    if (w[0] == -w[1] && w[2] == -w[3] && w[2] > 0)
        return w[2] - 1; /* kept alike everywhere */
    int r = agx_ptune_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvcounts, rdispls, recvtype, comm, info);
    if (w[0] == -w[1] && w[0] > 0 && r >= 0) /* the timing's verdict is agreed: every rank */
        st->known[6] |= bit, st->lib[6] |= r > 0 ? bit : 0; /* keeps the same */
    return r;
}
#else
void agx_nbtune_finalize(void) {}
int agx_nbtune_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int recvcount,
                         MPI_Datatype recvtype, MPI_Comm comm)
{
    return (void)sendbuf, (void)sendcount, (void)sendtype, (void)recvcount, (void)recvtype, (void)comm, 0;
}
int agx_nbtune_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, const int *recvcounts,
                          const int *displs, MPI_Datatype recvtype, MPI_Comm comm)
{
    return (void)sendbuf, (void)sendcount, (void)sendtype, (void)recvcounts, (void)displs, (void)recvtype,
           (void)comm, 0;
}
int agx_nbtune_allreduce(const void *sendbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    return (void)sendbuf, (void)count, (void)datatype, (void)op, (void)comm, 0;
}
#endif
