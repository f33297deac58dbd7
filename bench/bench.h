/* The one header of agx-bench (the bench folder; tests/mpi/test_twophase.c uses its I/O part). */
#ifndef AGX_BENCH_H
#define AGX_BENCH_H

#include <mpi.h>
#include <stddef.h>
#include <stdio.h>

#include "agx.h"

/* "64K", "1M", "2G", "100" -> bytes (or elements); -1 when malformed. */
long long parse_size(const char *s);
/* Option values, strictly: the whole string an integer in [lo, hi]; a size range MIN:MAX
 * (or MAX) of parse_size sizes with 0 <= MIN <= MAX <= hi. 0, or -1 with a message naming
 * the flag in err. */
int bench_int(const char *flag, const char *v, long long lo, long long hi, int *out, char *err, size_t errlen);
int bench_range(const char *flag, const char *v, long long hi, long long *min, long long *max, char *err,
                size_t errlen);
/* v is `zero` (0) or `one` (1); --regions NxM: M. 0, or -1 with a message in err. */
int bench_choice(const char *flag, const char *v, const char *zero, const char *one, int *out, char *err,
                 size_t errlen);
int bench_regions(const char *v, int *size, char *err, size_t errlen);
/* getopt_long returned c ('?' or ':', with opterr = 0) on argv: -1, with the message
 * naming the unknown option or the one that needs a value. */
int bench_bad_option(int c, char *const *argv, char *err, size_t errlen);
/* The MPI library's version string, its first line (a static buffer). */
const char *bench_mpi_library(void);
/* The run's context for JSON output (jansson-escaped): {"command", "host", "date", "mpi",
 * "nprocs", "warmup"}; bench_note_command (first thing in main) records the command line.
 * A new string (free it), or NULL when out of memory. */
void bench_note_command(int argc, char **argv);
char *bench_context_json(int nprocs, int warmup);
/* --regions: AGX_REGION_SIZE=size (read when agx first sees a communicator); 0: none. */
void bench_set_regions(int size);
/* A mode's arguments were refused (before any MPI work): every rank starts MPI, rank 0
 * alone prints "agx-bench: err", and the mode returns the value (2) to exit with. */
int bench_arg_error(int argc, char **argv, const char *err);
/* Close an output file; 1 (after a message) when anything written to it was lost. */
int bench_close(FILE *f, const char *path);
/* Collective: rank 0 checks it can write the --csv / --json paths (NULL: none) before a
 * run; 1 on every rank (after one message) when it cannot. */
int bench_outputs_writable(const char *csv, const char *json);
/* Split a comma-separated list into at most max new strings (free each); the count, or -1
 * when the list has more than max items. */
int bench_split(const char *list, char **out, int max);
/* Iteration times t[0..n) in seconds (sorted in place) -> avg, min, max, p50, p99 in us. */
void bench_summary(double *t, int n, double out[5]);
/* a row's buffer: its own mapping, page-aligned, written (bench_util.c) */
void *bench_alloc(size_t n);
void bench_free(void *p, size_t n);
/* OSU's timing columns: Avg(us) alone, or with -f (full) also Min, Max, P50, P99 and Iters;
 * t = avg, min, max, p50, p99 as bench_summary gives them. */
void bench_time_header(int full);
void bench_time_cols(int full, const double t[5], int iters);
/* Progress of a long run (rank 0, stderr): on a terminal one line rewritten in place,
 * after `delay` s; where stderr is not a terminal (mpirun pipes it) nothing, unless
 * `forced` (--progress): then whole lines at most every 10 s, so a file that also gets
 * stdout sees them between rows, never inside one. bench_progress_clear before a row. */
void bench_progress_init(int quiet, int forced, double delay);
void bench_progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void bench_progress_clear(void);
/* Print the registry: every operation, communicator kind and algorithm with its
 * description, cost and citation. */
void bench_list_algorithms(void);

/* --skew / --noise (bench_skew.c): an arrival pattern and OS-noise-like detours before each
 * timed call, drawn from one seed so every rank knows the whole pattern. */
enum { BENCH_SKEW_NONE, BENCH_SKEW_RANDOM, BENCH_SKEW_UNIFORM, BENCH_SKEW_ONE, BENCH_SKEW_SEVERAL, BENCH_SKEW_N };
extern const char *const bench_skew_names[BENCH_SKEW_N];
typedef struct {
    int dist;             /* BENCH_SKEW_* */
    double max_us;        /* the pattern's largest delay */
    double noise_rate, noise_us;
    unsigned seed;        /* 1 unless given */
} bench_skew;
/* Parse --skew (noise 0) or --noise (1) into s; 0, or -1 with a message in err. */
int bench_skew_opt(int noise, const char *v, bench_skew *s, char *err, size_t errlen);
void bench_skew_usage(FILE *f);
/* "skew=random:100us noise=0.01:50us seed=1" (or "skew=none") for a report's header. */
void bench_skew_text(const bench_skew *s, char *buf, size_t len);
/* Compute until t0 + this rank's delay of iteration it; returns the iteration's largest
 * delay over all p ranks (0 without skew or noise), to time from the latest arrival. */
double bench_skew_wait(const bench_skew *s, int it, int rank, int p, double t0);
/* Compute (spin on MPI_Wtime; in SMPI, charge simulated time) until MPI_Wtime() = t. */
void bench_compute_until(double t);
/* A 64-bit mixer (splitmix64's finaliser) for seeded draws (bench_io.c). */
unsigned long long bench_mix64(unsigned long long x);

#define MAX_ALGS 256 /* agx-tune repeats the list once per round */
/* allgatherv count distributions (--dist) */
enum { BENCH_UNIFORM, BENCH_LINEAR, BENCH_REGULAR, BENCH_DECREASING, BENCH_BROADCAST, BENCH_RANDOM, BENCH_NDIST };
extern const char *const bench_dist_names[BENCH_NDIST];

typedef struct {
    agx_op op;
    int setting;          /* inter-allgather: KangTraff19 setting 1..8, 0: intra op */
    int color_split;      /* inter-allgather on a colour split instead of an inter-comm */
    char *algs[MAX_ALGS];
    int nalgs;
    long long min_bytes, max_bytes;
    long long mem_limit;  /* -M: bytes of buffers per process at most (0: none) */
    int iters, warmup, check, quiet, progress; /* progress: --progress */
    int dist;             /* --dist: index in bench_dist_names */
    int zero_copy;        /* --zero-copy: a zero_copy row (agx_allgatherv_shared) */
    const char *csv, *json;
    int region_size;      /* --regions NxM: M, 0 = regions from AGX_REGION_SIZE or nodes */
    int mult;             /* sizes grow by this factor (--factor), default 2 */
    int full;             /* -f: OSU's full statistics (min, max, p50, p99, iterations) */
    int window;           /* --sync window: a common start time instead of the barrier's exit */
    bench_skew skew;      /* --skew, --noise */
    int req;              /* BENCH_BLOCKING, --persistent, --nonblocking */
    int overlap;          /* --overlap: OSU's overlap measurement after the timed iterations */
} options;
enum { BENCH_BLOCKING, BENCH_PERSISTENT, BENCH_NONBLOCKING };

/* One (algorithm, size) result of the allgather(v)/allreduce/inter-allgather modes. */
typedef struct {
    char alg[64];
    long long bytes;
    double avg, min, max, p50, p99;
    int validated;
    int counted;
    int setting, p, q;
    double eq5, volume;
    long long model_msgs, model_bytes; /* Bienz prediction of non-local traffic, -1: none */
    unsigned long long ml, mn, bl, bn;
    double overlap;       /* --overlap: percent, -1: not measured */
} record;

/* The request modes (agx_bench_req.c): one run's request (agx's, or with algorithm
 * mpi_init the MPI library's MPI-4 persistent one). */
typedef struct {
    agx_request r;
    MPI_Request m;
    int mpi;
} bench_req;

/* agx_bench_report.c: rank 0's table header and rows (first = the size's first
 * algorithm's average, for the Speedup column), and the CSV / JSON files (1 on failure). */
/* agx-bench pap's options (Proficz21 Listing 4's sweep). */
#define PAP_MAX 16

typedef struct {
    long long n[PAP_MAX];
    int nn;
    double delay[PAP_MAX]; /* seconds */
    int nd;
    char *alg[PAP_MAX];
    int na;
    int iters, warmup;
    double compute;        /* seconds */
    const char *csv, *json;
    int per_process;       /* -m: n[] holds bytes per process, not total floats */
    int quiet, progress;   /* -q, --progress */
    int predict;           /* --predict: bdr / bslb get the true arrivals (agx_pat_predict) */
} pap_opts;

typedef struct {
    double elapsed, run, omega, absorb;
    double tau;            /* bdr: tau of the last schedule (s) */
    double presteps;       /* bdr: pre-step transfers per schedule, mean */
    int ok;
} pap_res;

/* agx-bench alltoallv's options (KangRoss20's patterns). */
enum { P_TO_MANY, P_MANY, P_UNIFORM };
extern const char *const bench_a2a_patterns[3]; /* their --pattern names */

typedef struct {
    int pattern, nrecv, nsend, stride, iters, warmup, check, quiet, full, region_size;
    int persistent;       /* --persistent: agx_alltoallv_init once, agx_start + agx_wait per call */
    long long bytes[64];
    int nbytes;
    char *algs[MAX_ALGS];
    int nalgs;
    const char *csv, *json;
    bench_skew skew;      /* --skew, --noise */
} a2a_opts;

/* Each mode's options, strictly: every value whole and in range, every flag known; on an
 * error a message naming the flag in `err` and -1 (agx_bench_args.c). */
void bench_coll_usage(FILE *f);
void bench_pap_usage(FILE *f);
int bench_coll_args(int argc, char **argv, options *o, char *err, size_t errlen);
int bench_pap_args(int argc, char **argv, pap_opts *o, char *err, size_t errlen);
int bench_a2a_args(int argc, char **argv, a2a_opts *o, char *err, size_t errlen);
/* The other modes' mains (agx_bench_pap.c, agx_bench_a2a.c, agx_bench_io.c). */
int agx_bench_pap(int argc, char **argv);
int agx_bench_a2a(int argc, char **argv);
int agx_bench_io(int argc, char **argv);
void report_header(const options *o, int nprocs, const int *labels, int gp, int gq);
void report_row(const options *o, const record *r, double first);
int report_csv(const char *path, const options *o, int nprocs, const record *r, int n);
int report_json(const char *path, const options *o, int nprocs, const record *r, int n);

/* (agx_bench_req.c) --persistent: make the request (else nothing); one timed call: post,
 * compute `compute` s (its measured time in *t_compute), wait; free; --overlap's percent
 * over o->iters calls computing t_pure each (*rc: the first failure). */
struct bench_shape;
int bench_req_open(const options *o, const struct bench_shape *sh, const void *sbuf, void *rbuf, MPI_Comm comm,
                   const char *alg, bench_req *q);
int bench_req_call(const options *o, bench_req *q, const struct bench_shape *sh, const void *sbuf, void *rbuf,
                   MPI_Comm comm, double compute, double *t_compute);
void bench_req_close(bench_req *q);
double bench_req_overlap(const options *o, bench_req *q, const struct bench_shape *sh, const void *sbuf, void *rbuf,
                         MPI_Comm comm, double t_pure, int *rc);

/* What one size means for this rank: its contribution, and the blocks it receives. */
typedef struct bench_shape {
    MPI_Datatype type;
    int unit;            /* bytes per element: 1, or 1024 (a contiguous type) for sizes
                          * whose counts would not fit an int */
    int owned_type;
    int mine;            /* elements I send */
    int n;               /* blocks I receive */
    int *counts, *displs;
    int *src;            /* world rank that sent each block (for validation) */
    long long total;     /* elements received */
    double KA, KB;       /* intergroup: total bytes of groups A and B */
    double kA0, kB0;     /* and the blocks of their first ranks (the roots) */
    int p, q;
} shape;

/* -M: drop the sizes whose buffers (send + receive, per process) exceed o->mem_limit, with
 * a note from rank 0; 1 (after a message) when not even the smallest fits. */
int bench_mem_limit(options *o, int nprocs);
/* KangTraff19 settings: the sizes p, q of groups A and B for n ranks. */
void setting_groups(int setting, int n, int *p, int *q);
/* The shape of one size for this rank (bench_shape.c). */
void make_shape(const options *o, int rank, int nprocs, long long bytes, shape *sh);
void free_shape(shape *sh);
/* Fill this rank's send buffer for iteration it (-c), and check the result it received:
 * 1 when right, else 0 after one line on stderr naming the first wrong byte or element. */
void bench_fill(const options *o, const shape *sh, unsigned char *sbuf, int rank, int it);
int bench_check(const options *o, const shape *sh, const unsigned char *rbuf, int rank, int nprocs, int it,
                const char *alg, long long bytes);
/* multileader's leaders per region as the run sets them (AGX_LEADERS; 0: its default). */
int bench_leaders(void);

/* --sync window: how long before the common start time rank 0 sets it (twice the slowest
 * barrier + broadcast of a few trials, plus 5 us). Collective over MPI_COMM_WORLD. */
double bench_window_slack(void);
/* Start one timed iteration: MPI_Barrier, then (window) wait for the time rank 0
 * broadcasts, `slack` ahead; returns the iteration's start time. A rank that gets the time
 * after it passed adds 1 to *late. */
double bench_start(int window, double slack, int *late);
/* Rank 0 says on stderr how many rank-iterations started late (collective). */
void bench_late_report(int late, const char *alg, long long bytes);

/* ---- two-phase I/O workloads (bench_io.c) ----------------------------------------------
 * KangRoss20 Sec. V, Table I, as per-process request lists, and the reference write and
 * read-back check that agx-bench twophase and tests/mpi/test_twophase.c share. Each process generates only its own requests (O(own)).
 * File byte o always holds bio_byte(o, seed), so any misplaced byte is seen.
 */
typedef struct {
    int n;               /* requests, in the order the process gives them */
    MPI_Offset *off;
    int *len;
    char *buf;           /* their data, packed in that order */
    long long bytes;     /* sum of len */
    long long file_size; /* the file's size once every process wrote (same everywhere) */
} bio_reqs;

typedef struct {
    int vars;            /* e3sm: variables (default 4) */
    long long cells;     /* e3sm: cells per process and variable (default 4096);
                          * btio: grid points per dimension N (default 64) */
    int block;           /* flash: block edge (default 8: 8^3 doubles) */
} bio_params;

/* E3SM-F-like (Sec. V-A; E3SM-IO's F case): `vars` arrays of p * cells doubles; array
 * k-th group of p runs (g_k = 1..3 doubles each, irregular) gives each process one run at
 * a position that moves with k: tiny noncontiguous requests spread over the whole file,
 * every process sending to every aggregator (all-to-many). */
int bio_e3sm(int p, int r, const bio_params *bp, unsigned seed, bio_reqs *q);
/* FLASH-IO-like (Sec. V-B; PnetCDF's FLASH-IO benchmark): 24 variables, each an array of
 * blocks of block^3 doubles, process r owning 80 + r % 3 consecutive blocks of every
 * variable (80-82 per process, weak scaling): 24 contiguous requests per process. */
int bio_flash(int p, int r, const bio_params *bp, bio_reqs *q);
/* BTIO-like (Sec. V-C; NPB BTIO): p = q^2, an N^3 grid of 5 doubles per point (40 B, x
 * fastest), cut into q^3 subarrays; in z-layer k process (i, j) owns subarray
 * ((i - k) mod q, (j + k) mod q) (sqrt(p) permutations, Fig. 7): one request per (z, y)
 * row of each owned subarray. MPI_ERR_ARG when p is not a square. */
int bio_btio(int p, int r, const bio_params *bp, bio_reqs *q);
/* Fill buf with each request's bytes. */
int bio_fill(bio_reqs *q, unsigned seed);
unsigned char bio_byte(long long off, unsigned seed);
void bio_free(bio_reqs *q);

/* The same bytes through MPI_File_write_all: a file view of the requests in file order
 * (hindexed), the data described in place (hindexed over buf); the view is reset after. */
int bio_reference_write(MPI_File fh, const bio_reqs *q);
/* The same requests read through MPI_File_read_all into got (packed as buf is). */
int bio_reference_read(MPI_File fh, const bio_reqs *q, char *got);
/* Read back this process's requests (a view, one MPI_File_read_all) and count the bytes
 * that differ from bio_byte; the file size must be file_size. Collective. Returns an MPI
 * error code; *bad: wrong bytes here (+1 for a wrong size on rank 0). */
int bio_check(MPI_File fh, MPI_Comm comm, const bio_reqs *q, unsigned seed, long long *bad);
/* The last reference write's or read's parts on this rank (s): the two hindexed types
 * built, the two MPI_File_set_view calls (the view and back), the collective call. */
extern double bio_ref_times[3];

#endif
