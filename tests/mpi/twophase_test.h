/* What test_twophase.c shares with its fixed cases (twophase_cases.c). */
#ifndef AGX_TWOPHASE_TEST_H
#define AGX_TWOPHASE_TEST_H

#include "agx.h"
#include "../../bench/bench.h"

extern int rank, size, passed, failed; /* CHECK counts into passed / failed */
extern char path_a[512], path_b[512];

/* Open path on every rank; with prefill >= 0 first filled with that many background bytes. */
MPI_File open_file(const char *path, int amode, long long prefill);
/* q written by agx (path_a) and by MPI_File_write_all (path_b): the bytes that differ. */
long long write_both(const bio_reqs *q, const agx_io_hints *h, agx_io_stats *st, int amode, long long bg, int *rc,
                     int *rc2);
/* q read back by agx_file_read_all: the bytes that differ (-1: the read failed). */
long long read_back(const char *path, int amode, MPI_File fh, const bio_reqs *q, const agx_io_hints *h,
                    agx_io_stats *st);
void workloads(unsigned seed);
void in_place(unsigned seed);
void wide_records(unsigned seed);

#endif
