/*
 * agx: MPI collective algorithms from the literature, on top of standard MPI.
 * Papers are cited by the keys of docs/REFERENCES.md.
 *
 * The one public header. Every entry point has the signature of its MPI
 * counterpart, returns an MPI error code, and raises errors through the
 * communicator's error handler exactly as MPI does.
 */
#ifndef AGX_H
#define AGX_H

#include <mpi.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif
/* libagx is built with hidden visibility (AGX_BUILD): it exports exactly what this header
 * declares, so no internal name of agx can clash with a program's or its libraries'. */
#if defined(AGX_BUILD) && defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

#define AGX_VERSION_MAJOR 0
#define AGX_VERSION_MINOR 1
#define AGX_VERSION_PATCH 0

/* Collective operations agx implements. */
typedef enum {
    AGX_OP_ALLGATHER = 0,
    AGX_OP_ALLGATHERV,
    AGX_OP_ALLTOALLV,
    AGX_OP_ALLREDUCE,
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

/* Personalized exchange with MPI_Alltoallv's signature (MPI_IN_PLACE as MPI allows: the
 * data sent is the receive buffer's, described by recvcounts / rdispls / recvtype). The
 * all-to-many kernels of KangRoss20: issend_all, isend_all, spread_out, balanced, pairwise,
 * tam, native (AGX_ALLTOALLV_ALGORITHM; by default chosen from the call's pattern, see
 * docs/algorithms.md). Empty pairs send nothing. AGX_ALLTOALLV_THROTTLE=n (default 32; 0:
 * off) bounds the receives per Waitall round of spread_out and balanced;
 * AGX_ALLTOALLV_SYNC=issend|isend (default issend) sets their send mode and tam's.
 * On an intra-communicator every call opens with a 16-byte allreduce on which every rank
 * agrees its arguments are valid; when any rank's pair sizes changed since the previous
 * call on the communicator, one more allreduce of 16 p bytes checks every pair's sizes
 * (sendcounts x sendtype size = recvcounts x recvtype size) and summarises the pattern.
 * So bad input, on any rank, fails on every rank with one error and never hangs. On an
 * inter-communicator the library's own MPI_Alltoallv runs. */
int agx_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                  void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                  MPI_Comm comm);

/* Reduction to every process with MPI_Allreduce's signature (MPI_IN_PLACE included; any
 * predefined or user-defined op, datatypes of one predefined base). Algorithms
 * (AGX_ALLREDUCE_ALGORITHM): dissemination (SharedNotify Sec. III: any p in
 * floor(log2 p) rounds with partial results sent early), recursive_doubling,
 * reduce_bcast, ring, rabenseifner, native. Every algorithm gives every rank the same
 * bits, and the same bits run after run (a fixed reduction order per algorithm,
 * docs/algorithms.md says which); those whose order is not the rank order need a
 * commutative op, and dissemination (whose order differs between ranks) an exact one
 * (integer types), and fall back to recursive_doubling otherwise. On an
 * inter-communicator the library's own MPI_Allreduce runs. */
int agx_allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                  MPI_Comm comm);
/* 1 when every reduction order gives the same bits for datatype under op (a predefined op
 * on integers that wrap, logicals, bytes, MINLOC / MAXLOC on integer pairs), so that agx's
 * algorithms and the MPI library's agree bit for bit; 0 otherwise (floating point, a
 * user-defined op). Local. */
int agx_allreduce_exact(MPI_Datatype datatype, MPI_Op op);

/* ---- persistent and non-blocking collectives (docs/algorithms.md, "Requests") ----------
 * agx_<op>_init is MPI-4's persistent collective (MPI_Allgather_init & co.): collective, it
 * checks the arguments, agrees on them over the communicator (one allreduce: an error on
 * any rank fails the init on every rank), selects the algorithm and makes its plan: every
 * message of every round built once, with its datatypes (AGX_PLAN_REQUESTS=persistent:
 * as persistent MPI requests). Each agx_start then only copies the own block and posts
 * round 0. Buffers, counts and types
 * are fixed at init; their contents may change between starts. agx_i<op> is the
 * non-blocking call: a plan made and started at once, freed when agx_wait / agx_test
 * report it (its arguments checked locally, as the blocking call's, then agreed without
 * blocking: one MPI_Iallreduce before round 0, so a rank whose arguments or memory failed
 * returns its error and the others' requests complete with it). A call whose chosen
 * algorithm is not one schedule (native, shm_notify, bdr, bslb, the node-aware allreduces,
 * tam), an allreduce of a derived datatype under a predefined op, an in-place alltoallv and
 * every agx_ialltoallv, runs the MPI library's own non-blocking call (MPI_Iallgather &
 * co.) at each start. agx_alltoallv_init agrees on the pattern once, as the blocking call
 * does at each call, and plans the chosen kernel. Where the built-in default would choose native, a request runs the
 * default's first schedule instead (bruck, recursive_doubling, ring by size).
 * Progress: agx_test, agx_wait, starts and agx's blocking calls advance every active
 * request by the rounds that completed; AGX_PROGRESS_THREAD=1 (with MPI_THREAD_MULTIPLE)
 * adds a thread that does so while the program computes. Requests complete in any order.
 * Errors go to the request's communicator's handler, once, at the call that reports them
 * (MPI_COMM_SELF's once the communicator was freed). `info` is accepted and not read. */
typedef struct agx_req *agx_request;
#define AGX_REQUEST_NULL ((agx_request)0)
int agx_allgather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                       MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, agx_request *req);
int agx_allgatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                        const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                        MPI_Info info, agx_request *req);
int agx_allreduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                       MPI_Comm comm, MPI_Info info, agx_request *req);
int agx_alltoallv_init(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                       void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                       MPI_Comm comm, MPI_Info info, agx_request *req);
int agx_iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                   MPI_Datatype recvtype, MPI_Comm comm, agx_request *req);
int agx_iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                    agx_request *req);
int agx_iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                   MPI_Comm comm, agx_request *req);
int agx_ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                   void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                   MPI_Comm comm, agx_request *req);
/* MPI_Start / MPI_Startall (persistent requests only; starting an active one is an
 * error), MPI_Wait / MPI_Waitall / MPI_Test (AGX_REQUEST_NULL: complete at once; a
 * completed non-blocking request is freed and set to AGX_REQUEST_NULL, a persistent one
 * becomes inactive), MPI_Request_free (an active request: an error). agx_waitall completes
 * every request and returns the first error. */
int agx_start(agx_request *req);
int agx_startall(int count, agx_request reqs[]);
int agx_wait(agx_request *req);
int agx_waitall(int count, agx_request reqs[]);
int agx_test(agx_request *req, int *flag);
int agx_request_free(agx_request *req);
/* An agx request handed over to MPI, for MPI_Wait / MPI_Test / MPI_Waitall among the
 * program's other requests. Needs agx's progress thread (agx_progress_async() = 1), since
 * MPI does not advance agx's rounds: MPI_ERR_OTHER without it (the request stays agx's).
 * A non-blocking request: *out is an MPI generalized request that completes when it does
 * (its status's MPI_ERROR and MPI_Wait's code: the request's); *req becomes
 * AGX_REQUEST_NULL. A persistent request (made while the thread ran, handed over before
 * its first start): *out is a persistent MPI request that each agx_start starts and each
 * completion completes, inactive again after MPI_Wait & co. as MPI's own; *req stays
 * valid: start it with agx_start / agx_startall, free it with agx_request_free (which
 * frees *out), never MPI_Start or MPI_Request_free *out. A start whose rounds fail goes
 * to the communicator's handler with its code, and MPI_Wait on *out returns
 * MPI_ERR_TRUNCATE. */
int agx_request_mpi(agx_request *req, MPI_Request *out);
/* 1 when agx's progress thread runs (AGX_PROGRESS_THREAD=1 under MPI_THREAD_MULTIPLE; the
 * first call after MPI_Init starts it), else 0. */
int agx_progress_async(void);
/* Advance every active agx request by the rounds that completed, from the calling thread
 * (as agx_test does); the number still active. For code that completes agx's requests
 * handed to MPI with MPI's own calls (the preload's MPI_Test & co. call it first): under
 * a library with one global lock (MPICH), a thread polling MPI_Test can keep the
 * progress thread out of MPI for as long as it polls. */
int agx_progress(void);

/* Intergroup collectives on the two groups of an intra-communicator: ranks with colour 0
 * form group A, the others group B; each rank receives the blocks of the other group, in
 * that group's rank order, exactly as MPI_Allgather(v) on an inter-communicator between
 * them would give (recvcount(s) and displs describe the other group). For coupled codes
 * that have only MPI_COMM_WORLD split by colour, and for MPIs without
 * inter-communicators (SimGrid SMPI). Colours may change from call to call, on any
 * subset of ranks: every intergroup call opens with one small agreement among all
 * processes (an allgather of 64 bytes per process, which also carries blocks of at most
 * 32 bytes: such calls need nothing more), and the cached split is rebuilt, by all ranks
 * together, when any rank's colour changed. The same agreement makes input that is bad
 * on some processes only (counts, buffers, datatypes, sizes that do not match the other
 * group's) fail on every process with one error, before any data moves, on
 * inter-communicators too. MPI_IN_PLACE is an error, as on an inter-communicator. The
 * algorithms are those of agx_allgather on an inter-communicator (root_gather,
 * segmented, segmented_v, eager, native). */
int agx_intergroup_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                             int color);
int agx_intergroup_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                              void *recvbuf, const int recvcounts[], const int displs[],
                              MPI_Datatype recvtype, MPI_Comm comm, int color);

/* ---- zero-copy Allgather(V) (SharedNotify Sec. II) ------------------------------------
 * agx_allgatherv_shared: MPI_Allgatherv without the receive buffer. *result points at the
 * result, read-only and laid out as a receive buffer of recvtype would be (block i:
 * recvcounts[i] elements at result + displs[i] * extent), until agx_shared_release(h).
 * Where the shm_notify algorithm runs (more than one node, nodes whose ranks share memory,
 * RMA between them) the result is the node's shared segment itself: every process of a
 * node reads the same memory and no final copy is made. Elsewhere agx's choice for
 * agx_allgatherv runs into a private buffer the handle owns. recvtype must be contiguous
 * (no holes, lower bound 0; else MPI_ERR_TYPE), displs non-negative and the same on every
 * process (unlike MPI_Allgatherv's: the result is one shared layout), MPI_IN_PLACE is an
 * error. The segment is cached per communicator, grown when a call needs more: the first
 * call pays its set-up (collective window creation), later calls reuse it. Release the
 * result before the next agx_allgatherv_shared or shm_notify call on comm and before
 * freeing comm: a call that finds this process's result still held overwrites it and
 * returns MPI_ERR_OTHER on this process (the call itself completes everywhere); after
 * MPI_Comm_free(comm) the result's memory is gone, and agx_shared_release(h) still frees
 * the handle's token. Collective over comm; agx_shared_release is local. */
typedef struct {
    void *buf;  /* private result (fallback), freed by agx_shared_release */
    void *seg;  /* agx's token for a result in the node-shared segment, freed by
                 * agx_shared_release (safe after comm was freed: then it only frees) */
} agx_shared_handle;
int agx_allgatherv_shared(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                          const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                          MPI_Comm comm, const void **result, agx_shared_handle *h);
int agx_shared_release(agx_shared_handle *h);

/* ---- algorithm choice -----------------------------------------------------------------
 * Precedence for each call on a communicator:
 *   1. agx_comm_set_algorithm(comm, op, name)  (per communicator),
 *   2. the environment AGX_ALLGATHER_ALGORITHM / AGX_ALLGATHERV_ALGORITHM (read when agx
 *      first sees the communicator),
 *   3. the default rule (docs/algorithms.md), evaluated per call from message size and
 *      communicator size.
 * A forced algorithm whose restrictions the call violates falls back according to
 * AGX_FALLBACK=error|warn|silent (default warn: one line on stderr per communicator).
 * A name applies to every algorithm table that has it: on an intra-communicator, intra
 * names ("ring") choose for agx_allgather and inter names ("segmented") for
 * agx_intergroup_allgather; "native" for both. On an inter-communicator only inter names
 * are valid. The environment variables follow the same rule.
 * name NULL or "auto" clears the choice. An unknown name raises MPI_ERR_ARG through
 * the communicator's error handler; MPI_Error_string on the returned code lists the
 * valid names. Local (not collective), but every rank should make the same choice. */
int agx_comm_set_algorithm(MPI_Comm comm, agx_op op, const char *name);

/* Name of the algorithm that ran in the last agx call of `op` on `comm` (after any
 * fallback), or "none". */
int agx_comm_last_algorithm(MPI_Comm comm, agx_op op, const char **name);

/* MPI_Error_string that also knows agx's messages on every MPI library. Each error agx
 * raises gets its own code (the codes of the last 16 errors of each MPI class are
 * distinct), and each code keeps its message. (MPI_Error_string alone works on Open MPI;
 * MPICH 4.0.2 returns a wrong string for error codes added to a predefined class.)
 * string needs MPI_MAX_ERROR_STRING bytes. */
int agx_error_string(int errorcode, char *string, int *resultlen);

/* The regions agx uses on comm for the locality-aware algorithms and the counters:
 * region_of[r] (0-based, numbered by first rank) for every rank r of comm, from
 * AGX_REGION_SIZE / AGX_REGIONS or else the shared-memory nodes. Collective on the
 * first call on comm; region_of has room for the communicator's size. */
int agx_comm_regions(MPI_Comm comm, int *region_of);

/* ---- process arrival patterns (Proficz21) ------------------------------------------------
 * A monitor thread per communicator predicts when this process will arrive at the next
 * collective on it and exchanges the predictions while the application computes, so that
 * the PAP-aware allgathers `bdr` and `bslb` can move data from early processes before the
 * late ones arrive. Usage, per iteration of an iterative code:
 *
 *   agx_pat_init(comm);                          once, collective; needs MPI_THREAD_MULTIPLE
 *   agx_comm_set_algorithm(comm, AGX_OP_ALLGATHER, "bdr");   (or "bslb"; before begin)
 *   for (...) {
 *       agx_pat_compute_begin();
 *       ... compute ...  agx_pat_progress(0.5);  ... compute ...   (progress is optional)
 *       agx_pat_compute_end();
 *       agx_allgather(..., comm);                consumes the epoch
 *   }
 *   agx_pat_finalize(comm);                      collective (freeing comm, or MPI_Finalize,
 *                                                also ends the session)
 *
 * Each communicator may have its own session. compute_begin / progress / compute_end
 * describe this process's computation and apply to every session of the process;
 * compute_begin / compute_end must be called by every rank the same number of times;
 * progress marks are optional and may differ between ranks (a rank without marks is
 * predicted from its earlier compute phases). Without MPI_THREAD_MULTIPLE, agx_pat_init
 * says so once on stderr and bdr / bslb run as ring / gather_bcast. The agx_pat_*
 * functions are no-ops without a session. Wrong predictions cost time, never
 * correctness. */
int agx_pat_init(MPI_Comm comm);
int agx_pat_compute_begin(void);
/* fraction of the compute phase done, in (0, 1] (the paper's PAT_Edge). */
int agx_pat_progress(double fraction);
int agx_pat_compute_end(void);
int agx_pat_finalize(MPI_Comm comm);
/* Predictions from the caller instead of the monitor, for sessions without the thread
 * (SimGrid SMPI, no MPI_THREAD_MULTIPLE, or AGX_PAT_MONITOR=0): arrival[q] is when rank
 * q will call the next allgather on comm (seconds; any origin common to all ranks), tau
 * one block's transfer time (seconds; 0: measured, as the monitor does, from the last bdr
 * calls' time per step, the ring's schedule until there is one; AGX_PAT_TAU overrides
 * both) and block_bytes the bytes each process will
 * contribute (sendcount x type size). Collective over comm, between agx_pat_compute_begin
 * and the collective, with the same values on every rank. It plans bdr's pre-steps (or
 * bslb's order) and posts the receives the monitor would run in the background as
 * non-blocking receives, which complete while the application computes. A collective
 * whose block differs from block_bytes, or an epoch without agx_pat_predict, runs the
 * regular counterpart (ring / gather_bcast). Without the thread bslb's root cannot answer
 * ready signals, so each non-root sends its whole block when it arrives. An error where
 * the session has its thread (that one predicts). */
int agx_pat_predict(MPI_Comm comm, const double *arrival, double tau, long long block_bytes);

typedef struct {
    int active;             /* the monitor thread runs (0: agx_pat_predict plans) */
    long long epochs;       /* compute phases seen */
    double tau;             /* one block's transfer time used by the last schedule (s), 0: none */
    double omega;           /* predicted worst-case imbalance of the last epoch (s) */
    int presteps;           /* transfers in the pre-steps of the last BDR schedule */
    int background_recvs;   /* blocks this process received in the background, last call */
    double arrival_error;   /* |predicted - actual| arrival of this process, last epoch (s) */
    double clock_offset;    /* MPI_Wtime() + clock_offset = rank 0's MPI_Wtime (measured at
                             * agx_pat_init; 0 when MPI_WTIME_IS_GLOBAL) */
} agx_pat_info;
/* The session of comm (all zero when comm has none). */
int agx_pat_get_info(MPI_Comm comm, agx_pat_info *info);

/* ---- two-phase collective write (KangRoss20) --------------------------------------------
 * agx_file_write_all: ROMIO's two-phase collective write with agx_alltoallv kernels in its
 * two exchanges. Each process gives n requests (file offset in bytes, length) and buf,
 * the requests' data packed in the order given; afterwards the file holds exactly what
 * MPI_File_write_all would write for the same bytes. Requests may be unsorted and empty;
 * requests that overlap (on one process or between processes) are an error on every rank.
 * comm is the communicator that opened fh (same group: MPI_File does not expose it, and
 * agx keeps its per-communicator state on it); fh must have the default view (offsets
 * are bytes from the start of the file). Aggregators write with MPI_File_write_at, so any
 * MPI-IO backend stores the bytes. Errors (bad arguments, overlap, a failed write on any
 * aggregator) are returned on every rank and raised once through fh's error handler
 * (comm's when fh is MPI_FILE_NULL). Collective over comm. docs/algorithms.md, "Two-phase
 * collective write". */
typedef enum {
    AGX_IO_EVEN = 0,    /* GPFS-style: [first byte, last byte] split evenly, one domain per
                         * aggregator (KangRoss20 Fig. 2b) */
    AGX_IO_STRIPED = 1, /* Lustre-style: stripe units round-robin over aggregators (Fig. 2a) */
} agx_io_layout;

typedef struct {
    int aggregators;          /* I/O aggregators; 0: one per node (agx's regions), spread,
                               * more for calls of millions of requests (one per 512 Ki,
                               * at most the node's cores and ranks) */
    agx_io_layout layout;     /* file domains */
    long long stripe_size;    /* striped: bytes per stripe unit; 0: 1 MiB */
    int stripe_count;         /* striped: units per stripe row (OSTs); 0: the aggregators */
    long long cb_buffer_size; /* bytes per aggregator per round (at most 1 GiB); 0: 16 MiB
                               * (even), the stripe size (striped) */
    const char *meta_kernel;  /* agx_alltoallv algorithm of the offset/length exchange; NULL
                               * or "auto": the pattern rule; "hybrid": KangRoss20's hybrid
                               * (balanced for metadata, issend_all for data) */
    const char *data_kernel;  /* the same for the data exchange of every round */
    int throttle;             /* receives per round of the throttled kernels; -1:
                               * AGX_ALLTOALLV_THROTTLE (default 32); 0: none */
    int no_write;             /* 1: both exchanges, no file access (fh may be
                               * MPI_FILE_NULL): SMPI simulations of the communication */
    int no_sieve;             /* 1: write each contiguous run on its own; 0: where a round's
                               * data leaves holes in a stretch of an aggregator's domain,
                               * read the stretch, lay the data over it and write it back
                               * once (data sieving, as ROMIO and OMPIO do; needs a handle
                               * that can read, else run by run) */
    int cb_always;            /* 1: every call through the aggregators (romio_cb_write=enable);
                               * 0: when aggregators is 0 and both kernels agx's choice, a
                               * call whose ranks' spans do not interleave and whose requests
                               * are large (16 KiB each on average) has each rank write its
                               * own, as ROMIO's automatic collective buffering does */
    int node_aggr;            /* intra-node aggregation: 1: the ranks of each node hand
                               * their requests (a write's data too) to its first rank,
                               * which merges them and joins the runs that touch; only the
                               * node leaders run the two phases and reach the file (a
                               * read's bytes handed back); 0: agx's choice (the MPI-IO
                               * drop-in under AGX_ADAPT times it against the engine alone
                               * where the file's ranks span nodes; elsewhere not taken);
                               * -1: never */
} agx_io_hints;

/* Defaults: every field 0 / NULL, throttle -1. */
void agx_io_hints_init(agx_io_hints *hints);

/* One call's breakdown on this process (KangRoss20 Fig. 5), in seconds. */
typedef struct {
    double meta_time;         /* request-count alltoall + offset/length exchange */
    double data_time;         /* the data exchanges of all rounds */
    double io_time;           /* MPI_File_write_at (aggregators) */
    double other_time;        /* the rest: request sorting, merge, packing, agreement */
    double total_time;
    int rounds, aggregators;
    int is_aggregator;
    long long pieces;         /* request pieces this process sent */
    long long bytes_written;  /* by this process as an aggregator */
    long long write_calls;    /* its MPI_File_write_at calls (contiguous runs) */
    const char *meta_kernel, *data_kernel; /* the kernels that ran; "own": each rank wrote
                               * or read its own; data "in_place": a write's large records
                               * received straight into the aggregators' buffers */
    long long rounds_visited; /* rounds that moved data: a span with more rounds than
                               * pieces skips the rounds empty everywhere (rounds is then
                               * the span's count, at most INT_MAX) */
    long long sieve_reads;    /* stretches read back to fill holes (data sieving) */
    long long bytes_read;     /* agx_file_read_all: by this process as an aggregator (or its
                               * own requests), holes between them included */
    long long read_calls;     /* its MPI_File_read_at calls */
} agx_io_stats;

/* hints: NULL for the defaults; stats: NULL, or filled on success. */
int agx_file_write_all(MPI_File fh, MPI_Comm comm, int n, const MPI_Offset offsets[],
                       const int lengths[], const void *buf, const agx_io_hints *hints,
                       agx_io_stats *stats);
/* The collective read: buf receives the requests' bytes packed in the order given, as
 * MPI_File_read_all would read them (two-phase read: the aggregators read their file
 * domains, a stretch per round in one call where holes are small (data sieving) and send
 * each rank its pieces with the data kernel). Requests may overlap here. A request past
 * the end of the file (the smallest size any rank sees) is an MPI_ERR_IO error on every
 * rank, before anything is read. hints as for the write (cb_always: romio_cb_read=enable,
 * no_sieve: romio_ds_read=disable, no_write: no file access). */
int agx_file_read_all(MPI_File fh, MPI_Comm comm, int n, const MPI_Offset offsets[],
                      const int lengths[], void *buf, const agx_io_hints *hints, agx_io_stats *stats);

/* ---- MPI-IO collective writes through the two-phase engine ------------------------------
 * MPI's own signatures, for unmodified programs (libagx-preload.so maps MPI_File_open,
 * _set_view, _set_info, _write_all, _write_at_all and _close onto these) and for programs
 * that link agx. The library opens, views and closes the file; agx keeps what its writes
 * need (a duplicate of the communicator, the path, the hints of the info, the flattened
 * file type) and runs MPI_File_write_all / _write_at_all through agx_file_write_all's
 * engine: the file holds what the library would have written, the individual file
 * pointer moves as MPI specifies, the status counts the elements. A write agx does not
 * take goes to the library's own on every rank (AGX_VERBOSE says why): atomic mode,
 * MPI_MODE_SEQUENTIAL or read-only (for writes), an inter-communicator, a data representation other
 * than "native", romio_cb_write=disable, hints that differ between ranks, a type agx
 * cannot flatten, an argument the library should judge. Hints (the info of open,
 * set_view or set_info): cb_nodes, cb_buffer_size, striping_unit (striped domains),
 * striping_factor, romio_cb_write=enable (cb_always), and agx's agx_meta_kernel,
 * agx_data_kernel, agx_throttle. With AGX_ADAPT=1 (the preload's default) each file times
 * the engine against the library's own write over its first writes of each size class and
 * keeps the faster. Errors go through the file's error handler, once per rank.
 * docs/algorithms.md, "MPI-IO drop-in". */
int agx_mpi_file_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh);
int agx_mpi_file_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                          const char *datarep, MPI_Info info);
int agx_mpi_file_set_info(MPI_File fh, MPI_Info info);
int agx_mpi_file_write_all(MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status);
int agx_mpi_file_write_at_all(MPI_File fh, MPI_Offset offset, const void *buf, int count,
                              MPI_Datatype datatype, MPI_Status *status);
/* Collective reads the same way (agx_file_read_all's engine): the buffer as the library
 * would fill it, the pointer and status as MPI specifies. Left to the library as writes
 * are, and also: a handle that cannot read (MPI_MODE_WRONLY), romio_cb_read=disable, a
 * read past the end of the file. AGX_ADAPT times reads apart from writes. */
int agx_mpi_file_read_all(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status);
int agx_mpi_file_read_at_all(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype,
                             MPI_Status *status);
int agx_mpi_file_close(MPI_File *fh);
/* How the last write on fh went: 1 when agx's two-phase engine took it (*why: its data
 * kernel's name), 0 when it went to the library's own (*why: why). Static strings. Local.
 * agx_mpi_file_last_read: the same for the last collective read. */
int agx_mpi_file_last(MPI_File fh, const char **why);
int agx_mpi_file_last_read(MPI_File fh, const char **why);

/* ---- listing the registry ------------------------------------------------------------- */
/* Number of algorithms registered for (op, kind). */
int agx_algorithm_count(agx_op op, agx_kind kind);
/* The i-th algorithm for (op, kind): name and one-line description. MPI_ERR_ARG when i
 * is out of range. */
int agx_algorithm_info(agx_op op, agx_kind kind, int i, const char **name,
                       const char **description);
/* The i-th algorithm's cost (alpha-beta terms) and citation (a key of docs/REFERENCES.md
 * with the algorithm / equation number). */
int agx_algorithm_details(agx_op op, agx_kind kind, int i, const char **cost,
                          const char **citation);
/* "allgather", "allgatherv", "alltoallv"; NULL for an invalid op. */
const char *agx_op_name(agx_op op);
/* What agx is and will do on comm, printed to out by its rank 0 (collective: every rank
 * calls it): version, MPI library, the registry, the communicator's regions (nodes), and
 * the rules in force (environment, AGX_TUNING_FILE, built-in default). tools: agx-info. */
int agx_print_info(MPI_Comm comm, FILE *out);
/* The on-line choice's learning windows (AGX_ADAPT) this process ended, one line per
 * operation, each after prefix: classes, calls, the calls' time and what it was above each
 * class's winner's pace. Local. The preload prints rank 0's at MPI_Finalize (AGX_STATS). */
void agx_print_windows(const char *prefix, FILE *out);

/* ---- the papers' cost models (pure: no MPI, no communicator) -------------------------
 * What agx-bench prints next to the counts it measures, for tools that want the same. */
/* The regions of region_of[0..nprocs) (ranks with equal labels share a region, as from
 * agx_comm_regions): how many, and the sizes of the smallest and the largest. */
int agx_model_regions(int nprocs, const int region_of[], int *count, int *min_size, int *max_size);
/* Bienz Eq. 3/4 counts: the non-local messages and bytes sent by the busiest process in
 * one allgather of `bytes` per process by the algorithm `name` (bruck, loc_bruck,
 * hierarchical, multileader with `leaders` per region, 0 for its default 2) over the
 * regions region_of. MPI_ERR_ARG when agx has no model for it (another name, or unequal
 * regions for the locality-aware ones); *msgs = *nbytes = -1 then. */
int agx_model_allgather_nonlocal(const char *name, int nprocs, const int region_of[], long long bytes,
                                 int leaders, long long *msgs, long long *nbytes);
/* KangTraff19 Eq. 5, the expected gain of its Algorithms 1/2 over root gathering as
 * messages grow, (M + 3 KA + 3 KB) / M with M = max(KA, KB): KA, KB the bytes of the
 * two groups. */
double agx_model_intergroup_eq5(double KA, double KB);
/* The bytes all processes copy, root gathering over segmentation, when one node's memory
 * bandwidth is shared by every transfer: p, q the group sizes, kA0, kB0 the roots' own
 * blocks. */
double agx_model_intergroup_volume(int p, int q, double KA, double KB, double kA0, double kB0);

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
    /* Intergroup collectives: messages and bytes this process sent to, and bytes it
     * received from, the other group (KangTraff19's exchange phase; also counted above). */
    unsigned long long msgs_intergroup;
    unsigned long long bytes_intergroup_sent;
    unsigned long long bytes_intergroup_recv;
    /* Arrival trace (agx_stats_trace(1)): receives completed since the reset, and the
     * MPI_Wtime() of the first and the last of them (0 when none). */
    unsigned long long arrivals;
    double first_arrival, last_arrival;
} agx_stats;

void agx_stats_enable(int on);
int agx_stats_enabled(void);
void agx_stats_reset(void);
/* Arrival trace, for agx-bench's straggler column: when on, agx completes each round's
 * requests one by one (MPI_Waitany) and timestamps every receive. Changes the timing: use
 * it for a separate, untimed pass. Off by default. */
void agx_stats_trace(int on);
void agx_stats_get(agx_stats *out);

#if defined(AGX_BUILD) && defined(__GNUC__)
#pragma GCC visibility pop
#endif
#ifdef __cplusplus
}
#endif
#endif /* AGX_H */
