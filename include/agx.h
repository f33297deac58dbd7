/*
 * agx: MPI collective algorithms from the literature, on top of standard MPI.
 *
 * The one public header. Every entry point has the signature of its MPI
 * counterpart, returns an MPI error code, and raises errors through the
 * communicator's error handler exactly as MPI does.
 */
#ifndef AGX_H
#define AGX_H

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

#define AGX_VERSION_MAJOR 0
#define AGX_VERSION_MINOR 1

/* Collective operations agx implements. */
typedef enum {
    AGX_OP_ALLGATHER = 0,
    AGX_OP_ALLGATHERV,
    AGX_OP_LAST
} agx_op;

/* Communicator kinds: an algorithm is registered for one of them. */
typedef enum {
    AGX_KIND_INTRA = 0,
    AGX_KIND_INTER,
    AGX_KIND_LAST
} agx_kind;

/* ---- collectives (MPI signatures) ---------------------------------------------------- */
int agx_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                  void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm);

int agx_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                   void *recvbuf, const int recvcounts[], const int displs[],
                   MPI_Datatype recvtype, MPI_Comm comm);

/* ---- algorithm choice -----------------------------------------------------------------
 * Precedence for each call on a communicator:
 *   1. agx_comm_set_algorithm(comm, op, name)  (per communicator),
 *   2. the environment AGX_ALLGATHER_ALGORITHM / AGX_ALLGATHERV_ALGORITHM (read when agx
 *      first sees the communicator),
 *   3. the default rule (docs/algorithms.md), evaluated per call from message size and
 *      communicator size.
 * A forced algorithm whose restrictions the call violates falls back according to
 * AGX_FALLBACK=error|warn|silent (default warn: one line on stderr per communicator).
 * name NULL or "auto" clears the choice. An unknown name raises MPI_ERR_ARG through
 * the communicator's error handler; MPI_Error_string on the returned code lists the
 * valid names. Local (not collective), but every rank should make the same choice. */
int agx_comm_set_algorithm(MPI_Comm comm, agx_op op, const char *name);

/* Name of the algorithm that ran in the last agx call of `op` on `comm` (after any
 * fallback), or "none". */
int agx_comm_last_algorithm(MPI_Comm comm, agx_op op, const char **name);

/* MPI_Error_string that also knows agx's messages on every MPI library: the message of
 * the last error agx raised in this thread when `errorcode` is that error's code, else
 * MPI_Error_string. (MPI_Error_string alone works on Open MPI; MPICH 4.0.2 returns a
 * wrong string for error codes added to a predefined class.) string needs
 * MPI_MAX_ERROR_STRING bytes. */
int agx_error_string(int errorcode, char *string, int *resultlen);

/* ---- listing the registry ------------------------------------------------------------- */
/* Number of algorithms registered for (op, kind). */
int agx_algorithm_count(agx_op op, agx_kind kind);
/* The i-th algorithm for (op, kind): name and one-line description. MPI_ERR_ARG when i
 * is out of range. */
int agx_algorithm_info(agx_op op, agx_kind kind, int i, const char **name,
                       const char **description);
/* "allgather", "allgatherv", ... ; NULL for an invalid op. */
const char *agx_op_name(agx_op op);

/* ---- counters --------------------------------------------------------------------------
 * Per process, summed over communicators: messages and bytes sent by agx algorithms,
 * split local (peer on the same shared-memory node) and non-local. Messages sent by the
 * MPI library's own collectives (the `native` algorithms) are not visible to agx and
 * are not counted. Enable with AGX_STATS=1 or agx_stats_enable(1); enabling must be
 * done on every rank of a communicator before the collective calls to be counted. */
typedef struct {
    unsigned long long msgs_local;
    unsigned long long msgs_nonlocal;
    unsigned long long bytes_local;
    unsigned long long bytes_nonlocal;
} agx_stats;

void agx_stats_enable(int on);
int agx_stats_enabled(void);
void agx_stats_reset(void);
void agx_stats_get(agx_stats *out);

#ifdef __cplusplus
}
#endif
#endif /* AGX_H */
