/*
 * Two-phase I/O workloads (KangRoss20 Sec. V, Table I) as per-process request lists, and
 * the reference write and read-back check that agx-bench twophase and
 * tests/mpi/test_twophase.c share. Each process generates only its own requests (O(own)).
 * File byte o always holds bio_byte(o, seed), so any misplaced byte is seen.
 */
#ifndef AGX_BENCH_IO_H
#define AGX_BENCH_IO_H

#include <mpi.h>

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
/* Read back this process's requests (a view, one MPI_File_read_all) and count the bytes
 * that differ from bio_byte; the file size must be file_size. Collective. Returns an MPI
 * error code; *bad: wrong bytes here (+1 for a wrong size on rank 0). */
int bio_check(MPI_File fh, MPI_Comm comm, const bio_reqs *q, unsigned seed, long long *bad);

#endif
