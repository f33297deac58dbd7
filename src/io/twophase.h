/*
 * Two-phase collective write (agx_file_write_all; KangRoss20 Sec. IV-V, ROMIO's
 * two-phase I/O): the state of one call, shared by the plan (twophase_plan.c: checks,
 * requests, aggregators, pieces, the aggregators' merge) and the driver
 * (twophase_write.c: agreements, exchanges, rounds, writes). docs/algorithms.md,
 * "Two-phase collective write", gives the steps and the choices.
 */
#ifndef AGX_TWOPHASE_H
#define AGX_TWOPHASE_H

#include "coll_alltoallv.h"
#include "filedomain.h"

#include <string.h>

/* A piece's bytes. E3SM's pieces are 8-24 B, where a call to memcpy costs more than the
 * copy: those sizes are copied inline. */
static inline void agx_tp_copy(void *d, const void *s, long long l)
{
    switch (l) {
    case 8: memcpy(d, s, 8); break;
    case 16: memcpy(d, s, 16); break;
    case 24: memcpy(d, s, 24); break;
    default: memcpy(d, s, (size_t)l);
    }
}

typedef struct {
    long long off, len, pos; /* pos: the request's first byte in the user's buffer */
} agx_tp_req;

typedef struct {
    long long off, pos, round;
    int len;                 /* at most a request's (an int) */
    int aggr;                /* aggregator index (0 .. naggr - 1) */
} agx_tp_piece;              /* 32 bytes: E3SM's 250 K pieces per rank are written once each */

/* A metadata record: one piece's file offset and length (ROMIO's offset/length pair). */
#define AGX_TP_META_BYTES (2 * (int)sizeof(long long))

typedef struct {
    agx_args a;              /* ctx, comm, rank, p: what the exchanges run over */
    agx_io_hints h;          /* the hints, defaults resolved */
    MPI_File fh;
    int pfd;                 /* the drop-in's POSIX descriptor of the file (file_posix.c),
                              * or -1: the engine's file calls are fh's */
    const char *fn;
    int n;
    const MPI_Offset *off;
    const int *len;
    const char *buf;
    char *out;               /* a read: where the requests' bytes go (buf, writable) */
    int reading;             /* 1: agx_file_read_all (the rounds run the other way) */
    long long fsize;         /* a read: the file's size on this rank */
    long long req_max;       /* agreed: the most requests of one rank */
    long long bytes;         /* my requests' bytes */
    int no_node;             /* the node leaders' own engine (twophase_node.c): never again */
    int node;                /* the call went through the node's leader (twophase_node.c) */
    int cores;               /* agreed: the fewest cores a rank's node has online */
    agx_tp_req *req;         /* my non-empty requests in file order; NULL where they came in
                              * order (off, len as given; agx_tp_reqs makes them) */
    long long nreq;
    long long lo, hi;        /* my bytes' span, then the whole call's */
    agx_fd fd;
    int naggr, *aggr_rank, my_aggr; /* aggregator index -> rank; mine, or -1 */
    agx_tp_piece *pc;        /* my pieces, by (round, aggregator, offset); where the records
                              * are compact and the pieces in order, those of a run that lie
                              * end to end in the buffer are one entry (twophase_pieces.c) */
    long long npc, nrounds, pc_cap; /* pc's entries; pc_cap: its room (a kept buffer, twophase_bufs.c) */
    long long meta_cap;      /* meta_s's room, in 16-byte records (a kept buffer) */
    long long sbytes_max;    /* the most bytes I send in one round */
    long long *runs, nruns, runs_cap; /* the first piece of each (round, aggregator) run */
    int contig;              /* pc in order, each run's pieces end to end in the buffer */
    int *cnt_s, *cnt_r;      /* pieces per rank: sent to it, received from it */
    long long *meta_s;       /* my (offset, length) records, by aggregator then offset */
    int meta_compact;        /* meta_s holds them compact already (twophase_pieces.c) */
    /* aggregators: the records received, by sender, and what they imply */
    long long *meta_r, *mstart; /* mstart[s]: first record of sender s (p + 1 entries) */
    long long nmeta;
    long long *merged;       /* record indices in file order (the merge) */
    long long *rround;       /* per record: its round (the scatter's: at a run's first only) */
    int *rsender;            /* per record: its sender (the merge's) */
    long long rbytes_max;    /* the most bytes received in one round */
    int typed;               /* agreed: a write's data received in place (twophase_typed.c) */
    int *tlen;               /* its receive types' blocks (lengths, then MPI_Aint displacements) */
    MPI_Request *treq;       /* 2p, then 2p statuses */
    int scatter;             /* the records placed by offset, without the merge (twophase_scatter.c): */
    unsigned long long *bits; /* its domain's bytes touched, one bit each (from dlo) */
    long long *rend;         /* at the first record of a sender's run of one round: the run's
                              * end and bytes (2 per record; only there, as rround) */
    long long *rr, dlo;      /* per round: stretch [first, end), bytes, senders */
    int *sc, *sd, *rc, *rd;  /* p each: one exchange's byte counts and displacements */
    long long *rcur, *rpos;  /* p each, per sender: the next record, and where its data
                              * lies in rbuf (round loop) */
    unsigned char *snz, *rnz;
    char *sbuf, *rbuf, *wbuf; /* one round's send, receive, and write buffers */
    char *vbuf;              /* data sieving: a stretch of the file read back */
    long long vcap;
    int no_read;             /* a sieving read failed: run by run for the rest of the call */
    agx_a2a_pattern pt;      /* receivers = the aggregators (both exchanges) */
    int alg_meta, alg_data, throttle;
    unsigned flags;
    int native_ok;           /* the MPI-IO entries: overlap -> the library's own write */
    int overlap;             /* an aggregator saw overlapping requests (native_ok) */
    int own;                 /* the ranks wrote their own requests (agx_tp_own) */
    long long *own_rec;      /* p x (lo, hi, requests, bytes): agx_tp_own's spans */
    struct agx_tp_gate *gate; /* the drop-in's choice riding on agreement A, or NULL */
    agx_io_stats st;
} agx_tp;

/* Sender s's records of round r from rcur[s]: [rcur[s], end), their bytes in *bytes. */
static inline long long agx_tp_sender_run(const agx_tp *t, int s, long long r, long long *bytes)
{
    long long i = t->rcur[s], b = 0;
    if (t->scatter) { /* rcur[s] is a run's first record (or the sender's end) */
        int in = i < t->mstart[s + 1] && t->rround[i] == r;
        *bytes = in ? t->rend[2 * i + 1] : 0;
        return in ? t->rend[2 * i] : i;
    }
    for (; i < t->mstart[s + 1] && t->rround[i] == r; i++)
        b += t->meta_r[2 * i + 1];
    *bytes = b;
    return i;
}

/* twophase_plan.c */
int agx_tp_check(agx_tp *t);           /* local checks, hints' defaults, requests sorted */
int agx_tp_reqs(agx_tp *t);            /* req made from off, len where the check did not need it */
unsigned long long agx_tp_hints_hash(const agx_io_hints *h);
int agx_tp_aggregators(agx_tp *t);     /* after the span is agreed: aggregators, domains */
int agx_tp_prepare_recv(agx_tp *t);    /* buffers for the records I receive */
int agx_tp_merge(agx_tp *t);           /* aggregators: merge, overlap check, round sizes */
/* twophase_pieces.c */
int agx_tp_pieces(agx_tp *t);          /* my pieces, my metadata, counts per aggregator */
void agx_tp_meta_records(agx_tp *t);   /* meta_s as 16-byte records, from the pieces */

/* twophase_meta.c: step 3, counts, agreement B, the records (compact where they fit) */
int agx_tp_metadata(agx_tp *t, int local);
/* twophase_write.c: the kernel for one exchange: the hint, or the alltoallv pattern rule
 * on the pattern (receivers: the aggregators; smax: the most senders of one of them) */
int agx_tp_pick(agx_tp *t, const char *hint, const char *hybrid, long long smax, int *alg);

/* twophase_scatter.c: an aggregator's records placed by offset, without the merge */
int agx_tp_scatter_plan(agx_tp *t);    /* aggregators (instead of agx_tp_merge, when it can) */
long long agx_tp_scatter_senders(const agx_tp *t);
long long agx_tp_scatter_next(const agx_tp *t);
void agx_tp_scatter_round(agx_tp *t, long long r, int *werr, int (*sieve)(agx_tp *, long long, long long));
/* Round r's stretch at an aggregator: where its records go (wbuf; vbuf where it has holes,
 * read first when sieve can, *read then 1); NULL when the round has none (or no memory,
 * *werr set). Then, with the records in place, the stretch written. */
char *agx_tp_stretch(agx_tp *t, long long r, int *werr, int (*sieve)(agx_tp *, long long, long long), int *read);
void agx_tp_stretch_write(agx_tp *t, long long r, char *dst, int read, int *werr);
/* Sender s's records of round r (from rcur[s], which moves past them) between the stretch
 * (at their offsets from the round's first byte) and packed (one after another): copied
 * in (AGX_TP_IN), out (AGX_TP_OUT) or skipped (AGX_TP_SKIP); their bytes. */
enum { AGX_TP_IN, AGX_TP_OUT, AGX_TP_SKIP };
long long agx_tp_place(agx_tp *t, int s, long long r, char *stretch, char *packed, int dir);
/* A read's round r at such an aggregator: its stretch read, each rank's records packed
 * into rbuf at rpos in that rank's order. */
void agx_tp_scatter_read(agx_tp *t, long long r, int *rerr);
/* twophase_typed.c: a write's data received in place. The vote (every rank; an
 * aggregator's own records decide its vote), then one round: the exchange straight into
 * the stretch and the stretch written. */
int agx_tp_typed_vote(agx_tp *t);
int agx_tp_typed_round(agx_tp *t, long long r, const char *from, int *werr,
                       int (*sieve)(agx_tp *, long long, long long));

/* twophase_node.c: whether the call aggregates on each node first (after agreement A:
 * the hints, the regions R, the most requests and bytes of one rank; the same answer
 * everywhere), and the call that way (every rank): the node's requests merged at its
 * first rank, the leaders' engine, the outcome and a read's bytes handed back. */
int agx_tp_node_ok(const agx_tp *t, const agx_regions *R, long long bytes_max);
int agx_tp_node(agx_tp *t, const agx_regions *R);
/* twophase_own.c: whether this rank lets its ranks write their own (the hints leave it to
 * agx, its requests are large: 16 KiB each on average; the buffer for the spans, with this
 * rank's span, requests and bytes in its place), before agreement A; after it, when every
 * rank does (the records: rec, gathered with agreement A, or NULL: one allgather here)
 * and no two ranks' spans interleave or the requests are larger still: each rank writes
 * its own requests, *done set, the errors agreed. */
int agx_tp_own_ok(agx_tp *t);
int agx_tp_own(agx_tp *t, long long *rec, int *done);
/* twophase_bufs.c: the round buffers kept between calls: one of at least n bytes (an idle
 * kept one, else malloc; NULL: no memory), given back with its size, all idle ones freed. */
void *agx_tp_buf(size_t n);
void agx_tp_buf_free(void *p, size_t n);
void agx_tp_bufs_release(void);
void agx_tp_free(agx_tp *t);           /* a call's state: its buffers back, the rest freed */
/* twophase_typed.c: whether this rank's pieces of round r from *ps on lie end to end in
 * its buffer for each aggregator (a monotone view's always do), so that the round's data
 * move from (a write) or into (a read) the user's buffer itself: 1 with cnt / disp the
 * bytes and their first position per aggregator and *ps past the round; else 0. */
int agx_tp_direct(const agx_tp *t, long long r, long long *ps, int *cnt, int *disp);
/* twophase_write.c: one MPI_File_read_at (reading) or MPI_File_write_at of len bytes at
 * off; `used` of them the call's data (the rest: holes read back); a failure or a short
 * count kept in *err (an error already raised: the rest skipped). */
int agx_tp_io(agx_tp *t, int reading, long long off, char *data, long long len, long long used, int *err);
/* twophase_write.c: one exchange of a round with the kernel alg (sc/sd, rc/rd set). */
int agx_tp_exchange(agx_tp *t, int alg, const void *sbuf, void *rbuf);
/* twophase_read.c: the most aggregators that send this rank pieces in one round (a read's
 * senders), and round r of a read: the aggregator reads its records of the round ([*mc,
 * ...) of the merge) and sends them, every rank places its pieces ([*ps, ...)). */
long long agx_tp_read_senders(const agx_tp *t);
int agx_tp_read_round(agx_tp *t, long long r, long long *ps, long long *mc, int *rerr);
/* twophase_write.c: the engine on prepared requests, raising nothing (agx_file_write_all
 * and the MPI-IO entries raise). native: 1 when this rank asks for the MPI library's own
 * write (a case agx does not take), 0 when not; when any rank does, or requests of two
 * ranks overlap, every rank returns AGX_IO_NATIVE before anything is written (the votes
 * ride on the engine's agreements). -1 (agx_file_write_all): no library to go to, overlap
 * is an error. */
#define AGX_IO_NATIVE (-1)
/* gate (the MPI-IO entries; else NULL): the drop-in's choice of the call's way folded into
 * agreement A (agx_flearn_fold): v, this rank's values in, agreed out; fn, after the
 * agreement, on every rank alike: MPI_SUCCESS, the engine goes on; AGX_IO_REPICK, every
 * rank returns it before anything is moved (another way runs the call); else an error. */
typedef struct agx_tp_gate {
    long long v[3];
    int (*fn)(struct agx_tp_gate *g, const long long *v);
    void *arg;
} agx_tp_gate;
#define AGX_IO_REPICK (-2)
int agx_tp_write(MPI_File fh, int pfd, MPI_Comm comm, int n, const MPI_Offset *off, const int *len, const void *buf,
                 const agx_io_hints *h, int native, const char *fn, agx_io_stats *stats, agx_tp_gate *gate);
/* The read the same way (twophase_read.c); a request past the end of the file: with
 * native 0, AGX_IO_NATIVE on every rank, with -1 an error. */
int agx_tp_read(MPI_File fh, int pfd, MPI_Comm comm, int n, const MPI_Offset *off, const int *len, void *buf,
                const agx_io_hints *h, int native, const char *fn, agx_io_stats *stats, agx_tp_gate *gate);
/* twophase_run.c: both directions' driver (t prepared by agx_tp_write / agx_tp_read). */
int agx_tp_run(agx_tp *t, int native, agx_io_stats *stats);
/* twophase_write.c: steps 4-6, the rounds of either direction after the metadata. */
int agx_tp_rounds(agx_tp *t);

/* ---- the MPI-IO entries (file_flat.c, file_mpi.c) ---- */
/* One instance of a datatype as runs of contiguous bytes in type-map order, adjacent
 * runs merged; size and extent of the type. */
typedef struct {
    long long *off, *len, n, cap;
    long long size, extent;
} agx_flat;
/* 0, or -1 when agx cannot flatten t exactly (the call then goes to the library). */
int agx_flatten(MPI_Datatype t, agx_flat *f);
void agx_flat_free(agx_flat *f);

/* ---- the MPI-IO drop-in (file_mpi.c, file_access.c, file_hints.c): agx's state of one
 * file handle; what differs between writes ([0]) and reads ([1]) in a direction each ---- */
typedef struct {
    const char *why;           /* non-NULL: this direction goes to the library, and why
                                * (open's mode, an inter-communicator, ...) */
    const char *hint_off;      /* the same from the hints (romio_cb_write / _read=disable) */
    agx_io_hints h;            /* the hints, this direction's (cb_always, no_sieve) */
    long long taken, given;    /* calls the engine took, calls left to the library */
    const char *last;          /* how the last call went (a static string; NULL: agx's) */
    const char *kernel;        /* the last call agx took: its data kernel (a static name) */
    double phase[5];           /* the engine's calls on this rank, summed: meta, data, io,
                                * other, total seconds (agx_io_stats; AGX_VERBOSE at close) */
    agx_flearn learn;          /* AGX_ADAPT: the engine against the library's own (select.h) */
} agx_file_dir;
/* file_posix.c: the file the library opened, as the engine's descriptor may name it. */
typedef struct {
    int ok; /* known: a regular file, named by a path (no file system prefix but ufs:) */
    unsigned long long dev, ino;
} agx_posix_file;
/* Right after the library's open: the file's identity (0: not known, no POSIX calls). */
int agx_posix_id(const char *name, agx_posix_file *id);
/* 0 when the name no longer names that file (renamed, replaced); 1 when it does or when
 * its identity is not known. */
int agx_posix_same(const char *name, const agx_posix_file *id);
/* A descriptor of that very file (-1: none; AGX_IO_POSIX=0: never) on a file system whose descriptors see each
 * other's bytes at once; read-write where it can be (*readable), else write-only. */
int agx_posix_open(const char *name, const agx_posix_file *id, int rdonly, int *readable);
/* pread / pwrite of [off, off + len) until done, the end of the file or an error (*err:
 * errno, or 0): the bytes moved. */
long long agx_posix_rw(int fd, int reading, long long off, char *data, long long len, int *err);
long long agx_posix_size(int fd); /* -1: fstat failed */

typedef struct {
    MPI_File fh, shadow;       /* the user's handle; agx's default-view handle */
    agx_posix_file id;         /* the file, for the engine's own descriptor */
    int pfd;                   /* that descriptor (-1: none; then the shadow handle) */
    MPI_Comm comm;             /* a duplicate of open's communicator, perhaps kept from an
                                * earlier file (file_comm.c; MPI_COMM_NULL: none) */
    char *path;
    int amode;
    const char *hints_why;     /* non-NULL: every call goes to the library (the hints could
                                * not be agreed), and why */
    int shadow_state;          /* 0 not yet, 1 open (pfd, or else shadow), -1 could not
                                * be opened */
    int shadow_reads;          /* the shadow was opened for reading */
    char meta[64], data[64];   /* the kernel hints' strings */
    MPI_Offset disp;           /* the view */
    int etype_size, native_rep, default_view, flat_ok;
    agx_flat ft;
    long long *pre;            /* pre[i]: the file type's data bytes before run i */
    agx_file_dir dir[2];       /* writes, reads */
    int told;                  /* AGX_VERBOSE: the reasons already printed (bits) */
    int lost;                  /* a rank keeps no state of this file: never agree again */
    int spans;                 /* AGX_ADAPT: 1 its ranks span nodes, two or more on one: the
                                * engine with node aggregation is timed too; -1 not; 0 unknown */
} agx_file;
/* Hints read from info and agreed (collective over comm: open's, or the file's), with
 * whether every rank has its record (`ok`) and n more values agreed (MAX) in the same
 * reduction; a disagreement leaves the file to the library on every rank. The
 * agreement's error. */
int agx_file_agree_hints(agx_file *f, MPI_Comm comm, MPI_Info info, int ok, long long *more, int n);
/* file_comm.c: the engine's communicator of a file opened on comm, a kept duplicate where
 * every rank has the same. offer: this rank's candidate claimed (*slot), v to agree
 * (MAX); take (after the agreement; use: 0 when no rank needs one): 1 the kept one, 0 a
 * new duplicate (MPI_COMM_NULL where it failed), kept for later files where every rank
 * has room; give: at close, kept or freed. carry: what the kept one's last file's
 * decided calls left (zero for a new one); give keeps the closing file's. */
#define AGX_FILE_COMM_V 5
void agx_file_comm_offer(MPI_Comm comm, long long v[AGX_FILE_COMM_V], int *slot);
int agx_file_comm_take(MPI_Comm comm, const long long v[AGX_FILE_COMM_V], int slot, int use, MPI_Comm *out,
                       agx_flearn_carry carry[2]);
void agx_file_comm_give(MPI_Comm *c, const agx_flearn_carry carry[2]);
/* file_mpi.c: the state of a handle (NULL: not agx's); AGX_VERBOSE's line for a reason
 * (bit: said once per file; all_ranks: only rank 0 of the file says it). */
agx_file *agx_file_find(MPI_File fh);
__attribute__((format(printf, 4, 5))) void agx_file_tell(agx_file *f, int bit, int all_ranks, const char *fmt, ...);
/* file_access.c: the view's stream bytes [s, s + nbytes) as file (offset, length)
 * requests in file order (0, or -1: too many, out of memory); the shadow handle opened
 * (collective: on every rank or none), 0 when it cannot serve this direction. */
int agx_file_map(const agx_file *f, long long s, long long nbytes, MPI_Offset **off, int **len, int *n,
                 long long *cap);
void agx_file_unmap(MPI_Offset *off, long long cap);
int agx_file_shadow(agx_file *f, int reading);

#endif
