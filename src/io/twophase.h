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

typedef struct {
    long long off, len, pos; /* pos: the request's first byte in the user's buffer */
} agx_tp_req;

typedef struct {
    long long off, len, pos, round;
    int aggr;                /* aggregator index (0 .. naggr - 1) */
} agx_tp_piece;

/* A metadata record: one piece's file offset and length (ROMIO's offset/length pair). */
#define AGX_TP_META_BYTES (2 * (int)sizeof(long long))

typedef struct {
    agx_args a;              /* ctx, comm, rank, p: what the exchanges run over */
    agx_io_hints h;          /* the hints, defaults resolved */
    MPI_File fh;
    const char *fn;
    int n;
    const MPI_Offset *off;
    const int *len;
    const char *buf;
    agx_tp_req *req;         /* my non-empty requests in file order */
    long long nreq;
    long long lo, hi;        /* my bytes' span, then the whole call's */
    agx_fd fd;
    int naggr, *aggr_rank, my_aggr; /* aggregator index -> rank; mine, or -1 */
    agx_tp_piece *pc;        /* my pieces, by (round, aggregator, offset) */
    long long npc, nrounds;
    long long sbytes_max;    /* the most bytes I send in one round */
    int *cnt_s, *cnt_r;      /* pieces per rank: sent to it, received from it */
    long long *meta_s;       /* my (offset, length) records, by aggregator then offset */
    /* aggregators: the records received, by sender, and what they imply */
    long long *meta_r, *mstart; /* mstart[s]: first record of sender s (p + 1 entries) */
    long long nmeta;
    long long *merged;       /* record indices in file order (the merge) */
    long long *rround;       /* per record: its round */
    int *rsender;            /* per record: its sender */
    long long rbytes_max;    /* the most bytes received in one round */
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
    agx_io_stats st;
} agx_tp;

/* twophase_plan.c */
int agx_tp_check(agx_tp *t);           /* local checks, hints' defaults, requests sorted */
unsigned long long agx_tp_hints_hash(const agx_io_hints *h);
int agx_tp_aggregators(agx_tp *t);     /* after the span is agreed: aggregators, domains */
int agx_tp_pieces(agx_tp *t);          /* my pieces, my metadata, counts per aggregator */
int agx_tp_prepare_recv(agx_tp *t);    /* buffers for the records I receive */
int agx_tp_merge(agx_tp *t);           /* aggregators: merge, overlap check, round sizes */
void agx_tp_free(agx_tp *t);

/* twophase_own.c: whether this rank lets its ranks write their own (the hints leave it to
 * agx, its requests are large: 16 KiB each on average; the buffer for the spans, with this
 * rank's span, requests and bytes in its place), before agreement A; after it, when every
 * rank does (one allgather of the records) and no two ranks' spans interleave or the
 * requests are larger still: each rank writes its own requests, *done set, the errors
 * agreed. */
int agx_tp_own_ok(agx_tp *t);
int agx_tp_own(agx_tp *t, int *done);
/* twophase_bufs.c: the round buffers kept between calls: one of at least n bytes (an idle
 * kept one, else malloc; NULL: no memory), given back with its size, all idle ones freed. */
void *agx_tp_buf(size_t n);
void agx_tp_buf_free(void *p, size_t n);
void agx_tp_bufs_release(void);
/* twophase_write.c: one MPI_File_write_at of len bytes at off; `used` of them the call's
 * data (the rest: holes read back); a failure kept in *werr, the rest skipped. */
int agx_tp_write_run(agx_tp *t, long long off, const char *data, long long len, long long used, int *werr);

/* twophase_write.c: the engine on prepared requests, raising nothing (agx_file_write_all
 * and the MPI-IO entries raise). native: 1 when this rank asks for the MPI library's own
 * write (a case agx does not take), 0 when not; when any rank does, or requests of two
 * ranks overlap, every rank returns AGX_IO_NATIVE before anything is written (the votes
 * ride on the engine's agreements). -1 (agx_file_write_all): no library to go to, overlap
 * is an error. */
#define AGX_IO_NATIVE (-1)
int agx_tp_write(MPI_File fh, MPI_Comm comm, int n, const MPI_Offset *off, const int *len, const void *buf,
                 const agx_io_hints *h, int native, const char *fn, agx_io_stats *stats);

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

/* ---- the MPI-IO drop-in (file_mpi.c, file_hints.c): agx's state of one file handle ---- */
typedef struct {
    MPI_File fh, shadow;       /* the user's handle; agx's default-view handle */
    MPI_Comm comm;             /* a duplicate of open's communicator (MPI_COMM_NULL: none) */
    char *path;
    const char *why;           /* non-NULL: every write goes to the library, and why */
    const char *hints_why;     /* the same for the hints (set_info may change them) */
    int shadow_state;          /* 0 not yet, 1 open, -1 could not be opened */
    agx_io_hints h;
    char meta[64], data[64];   /* the kernel hints' strings */
    MPI_Offset disp;           /* the view */
    int etype_size, native_rep, default_view, flat_ok;
    agx_flat ft;
    long long *pre;            /* pre[i]: the file type's data bytes before run i */
    long long taken, given;    /* writes the engine took, writes left to the library */
    const char *last;          /* how the last write went (a static string) */
    const char *kernel;        /* the last write agx took: its data kernel (a static name) */
    int told;                  /* AGX_VERBOSE: the reasons already printed (bits) */
    int lost;                  /* a rank keeps no state of this file: never agree again */
    agx_flearn learn;          /* AGX_ADAPT: the engine against the library's own (select.h) */
} agx_file;
/* Hints read from info and agreed (collective over f->comm), with whether every rank has
 * its record (`ok`); a disagreement leaves the file to the library on every rank. */
void agx_file_agree_hints(agx_file *f, MPI_Info info, int ok);

#endif
