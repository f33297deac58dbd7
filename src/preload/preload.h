/*
 * What the preload library's files share (src/preload/): whether an operation goes
 * through agx (AGX_ENABLE), the per-call counts for the report at MPI_Finalize, and
 * whether agx's requests can be handed to MPI here (its progress thread). Hidden: the
 * library exports only the MPI_* entries it defines (AGX_EXPORT).
 */
#ifndef AGX_PRELOAD_H
#define AGX_PRELOAD_H

#include "agx.h"
#if defined(OPEN_MPI) && MPI_VERSION < 4
#include <mpi-ext.h>
#endif

/* MPI-4's persistent collectives: MPI_<Op>_init, or Open MPI 4.1's MPIX_<Op>_init (its
 * pcollreq extension); INIT undefined where the library has neither. */
#if MPI_VERSION >= 4
#define INIT(name) MPI_##name##_init
#define PINIT(name) PMPI_##name##_init
#elif defined(OMPI_HAVE_MPI_EXT_PCOLLREQ)
#define INIT(name) MPIX_##name##_init
#define PINIT(name) PMPIX_##name##_init
#endif

#define AGX_EXPORT __attribute__((visibility("default")))

int agx_preload_enabled(int op);   /* AGX_ENABLE: op (AGX_OP_LAST: file writes, + 1: reads) through agx */
int agx_preload_set(const char *name); /* an environment variable set, and not to 0 */
int agx_preload_async_ok(int op);  /* enabled, and agx's progress thread runs (AGX_VERBOSE: why not) */
/* Counts for the report (op: an agx_op, AGX_OP_LAST for collective file writes, + 1 reads). */
void agx_preload_count(int op, MPI_Comm comm, long long nbytes); /* a call through agx: the algorithm it ran */
void agx_preload_count_name(int op, const char *alg, long long nbytes); /* the same, the algorithm named */
long long agx_preload_bytes(MPI_Comm comm, int n, int all, const int *counts, MPI_Datatype t); /* the bytes */
enum { AGX_LEFT_ENABLE, AGX_LEFT_THREAD, AGX_LEFT_INTER, AGX_LEFT_RANK, AGX_LEFT_TIMED, AGX_LEFT_BITS, AGX_LEFT_N };
void agx_preload_left(int op, int why); /* a call left to the library, and why (AGX_LEFT_*) */
#ifdef INIT
/* preload_persist.c: agx's request r, made with code rc, as the program's persistent MPI
 * handle in the table of agx's handles (nbytes: what a start delivers, for the report;
 * on failure r is freed); and a start of such a handle that the report does not count
 * (the init's timing). */
int agx_persist_adopt(int rc, agx_request *r, MPI_Request *request, agx_op op, MPI_Comm comm, long long nbytes);
int agx_persist_start_quiet(MPI_Request h);
/* preload_ptune.c: a persistent init timed (AGX_ADAPT): agx's plan against the library's
 * own persistent call on scratch buffers, with the init's arguments (collective). */
#define AGX_NBTUNE_BYTES (1 << 20) /* the most bytes a non-blocking call's timing takes */
#define AGX_PTUNE_BYTES (64 << 10) /* a persistent init's: an allgather(v)'s receive buffer, an
                                    * allreduce's vector; an alltoallv's buffers per rank */
/* each: 1 the library's is faster, 0 agx's (or not timed: alike on every rank), -1 a rank
 * could not time it (its AGX_ADAPT, scratch or layout), -2 a rank could not keep the
 * verdict (nb & 2 on it), agreed; nb & 1: the non-blocking call, each timed start a new
 * request (info unused) */
int agx_ptune_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int recvcount,
                        MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, int nb);
int agx_ptune_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, const int *recvcounts,
                         const int *displs, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, int nb);
int agx_ptune_allreduce(const void *sendbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                        MPI_Info info, int nb);
int agx_ptune_alltoallv(const void *sendbuf, const int *sendcounts, const int *sdispls, MPI_Datatype sendtype,
                        const int *recvcounts, const int *rdispls, MPI_Datatype recvtype, MPI_Comm comm,
                        MPI_Info info);
#endif
/* preload_nbtune.c: a non-blocking call of a size class new on comm timed (AGX_ADAPT),
 * the verdict kept on comm: 1 when the library's own call is faster (collective at a
 * class's first call, on every rank alike). */
int agx_nbtune_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int recvcount,
                         MPI_Datatype recvtype, MPI_Comm comm);
int agx_nbtune_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, const int *recvcounts,
                          const int *displs, MPI_Datatype recvtype, MPI_Comm comm);
int agx_nbtune_allreduce(const void *sendbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
/* The same verdicts for a persistent init (preload_ptune.c's timing, kept on comm per size
 * class): 1 the library's own; 2 (allreduce) the library's own untimed, whose bits agx's
 * would not give (floating point under AGX_ADAPT=1). alltoallv's class: every rank's bytes
 * in one, agreed at every init. */
int agx_ptune_kept_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int recvcount,
                             MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info);
int agx_ptune_kept_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, const int *recvcounts,
                              const int *displs, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info);
int agx_ptune_kept_allreduce(const void *sendbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                             MPI_Info info);
int agx_ptune_kept_alltoallv(const void *sendbuf, const int *sendcounts, const int *sdispls, MPI_Datatype sendtype,
                             const int *recvcounts, const int *rdispls, MPI_Datatype recvtype, MPI_Comm comm,
                             MPI_Info info);
void agx_nbtune_finalize(void); /* before MPI_Finalize: the world's state and the keyval freed */
/* preload_foreign.c: the program's MPI library is not the one this build links (then
 * every entry steps aside), and a function of the program's own MPI library by name. */
int agx_preload_foreign(void);
void *agx_preload_next(const char *name);

#endif
