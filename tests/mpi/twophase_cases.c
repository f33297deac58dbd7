/*
 * test_twophase's fixed cases: agx-bench twophase's workloads written and read back, the
 * exact round count of a simple case, data sieving's counts, and large rows received in
 * place (src/io/twophase_typed.c).
 */
#include "twophase_test.h"
#include "mpitest.h"

#include <stdlib.h>
#include <string.h>

/* The three workloads, read back; and the exact round count of a simple case. */
void workloads(unsigned seed)
{
    bio_params bp = {.vars = 2, .cells = 600, .block = 4};
    for (int w = 0; w < 5; w++) { /* w = 3: FLASH of 138 KB requests, default hints: each rank writes its own;
                                    * w = 4: E3SM through one aggregator whose one round's stretch is
                                    * larger than a tile of the placement (twophase_scatter.c) */
        bio_reqs q;
        int sq = 1;
        while ((sq + 1) * (sq + 1) <= size)
            sq++;
        if (w == 2 && sq * sq != size)
            continue;
        bio_params b = bp;
        b.cells = w == 2 ? 12 * sq : w == 4 ? 20 * bp.cells : bp.cells, b.block = w == 3 ? 6 : bp.block;
        int rc = w % 4 == 0 ? bio_e3sm(size, rank, &b, seed, &q) : w % 2 ? bio_flash(size, rank, &b, &q)
                                                                      : bio_btio(size, rank, &b, &q);
        bio_fill(&q, seed);
        agx_io_hints h;
        agx_io_hints_init(&h);
        h.layout = w == 1 ? AGX_IO_STRIPED : AGX_IO_EVEN;
        h.stripe_size = 4096;
        h.cb_buffer_size = w == 1 ? 0 : 8192;
        if (w >= 3)
            agx_io_hints_init(&h);
        h.aggregators = w == 4 ? 1 : h.aggregators;
        agx_io_stats st = {0};
        MPI_File fh = open_file(path_a, MPI_MODE_CREATE | MPI_MODE_RDWR, 0);
        if (rc == MPI_SUCCESS)
            rc = agx_file_write_all(fh, MPI_COMM_WORLD, q.n, q.off, q.len, q.buf, &h, &st);
        int own = rc == MPI_SUCCESS && !strcmp(st.data_kernel, "own"); /* FLASH's 40 KB: own when p = 1 */
        CHECK(rc != MPI_SUCCESS || (w == 3 ? own : w == 1 || !own), "workload %d: kernel %s", w, st.data_kernel);
        MPI_File_sync(fh);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_File_sync(fh);
        long long bad = -1, rbad = 0;
        int rc2 = rc == MPI_SUCCESS ? bio_check(fh, MPI_COMM_WORLD, &q, seed, &bad) : rc;
        rbad = read_back(NULL, 0, fh, &q, &h, &st); /* and agx's read of the same requests */
        own = rbad == 0 && !strcmp(st.data_kernel, "own");
        CHECK(rbad == 0 && (w == 3 ? own : w == 1 || !own), "workload %d: read back, %lld wrong bytes (-1: "
              "failed), kernel %s", w, rbad, rbad >= 0 ? st.data_kernel : "-");
        MPI_File_close(&fh);
        CHECK(rc == MPI_SUCCESS && rc2 == MPI_SUCCESS && bad == 0, "workload %d: rc %d check %d, %lld bad bytes", w,
              rc, rc2, bad);
        bio_free(&q);
    }
    /* rank 0 writes [0, S) alone; even domains: ceil(ceil(S / A) / cb) rounds */
    long long S = 100000, cb = 3000;
    int A = size + 1 < 3 ? size + 1 : 3;
    char *buf = calloc(1, (size_t)S);
    MPI_Offset off = 0;
    int len = (int)S, n = rank == 0;
    agx_io_hints h;
    agx_io_stats st;
    agx_io_hints_init(&h);
    h.aggregators = A, h.cb_buffer_size = cb, h.no_write = 1;
    int rc = agx_file_write_all(MPI_FILE_NULL, MPI_COMM_WORLD, n, &off, &len, buf, &h, &st);
    int A2 = A < size ? A : size;
    long long want = ((S + A2 - 1) / A2 + cb - 1) / cb;
    CHECK(rc == MPI_SUCCESS && st.rounds == want && st.aggregators == A2 && st.bytes_written == 0,
          "no_write: rc %d rounds %d (want %lld) aggregators %d (want %d)", rc, st.rounds, want, st.aggregators, A2);
    free(buf);
    /* data sieving: every rank writes 8 B every 64 B of [0, 64 p x 8), one aggregator and
     * one round: the background between them read once and written back once (the
     * pattern cases compare the bytes); write-only, one write per run instead */
    for (int wronly = 0; wronly < 2; wronly++) {
        MPI_Offset o8[8];
        int l8[8];
        for (int i = 0; i < 8; i++)
            o8[i] = 64LL * (i * size + rank), l8[i] = 8;
        agx_io_hints_init(&h);
        h.aggregators = 1;
        MPI_File fh = open_file(path_a, wronly ? MPI_MODE_WRONLY : MPI_MODE_RDWR, 64LL * 8 * size);
        char d[64];
        memset(d, 'a' + rank % 26, sizeof d);
        rc = agx_file_write_all(fh, MPI_COMM_WORLD, 8, o8, l8, d, &h, &st);
        MPI_File_close(&fh);
        long long got[2] = {rc == MPI_SUCCESS ? st.sieve_reads : -1, rc == MPI_SUCCESS ? st.write_calls : -1};
        MPI_Allreduce(MPI_IN_PLACE, got, 2, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
        long long want_w = wronly ? 8LL * size : 1; /* no two runs touch */
        CHECK(got[0] == !wronly && got[1] == want_w,
              "sieving (%s): %lld reads, %lld writes (want %d, %lld)", wronly ? "write-only" : "read-write",
              got[0], got[1], wronly ? 0 : 1, want_w);
    }
}

/* Rows of 1500 B received in place (twophase_typed.c): every rank writes 8 rows at
 * 2000 x (i x p + rank), holes of 500 B between them, one aggregator, rounds of 7000 B,
 * agx's kernels; read-write (sieving), write-only (run by run) and in reverse order
 * (the sends packed): the file byte-exact against MPI_File_write_all's, the data kernel
 * "in_place" (and the kernels' once the hints ask for one). */
void in_place(unsigned seed)
{
    for (int v = 0; v < 4; v++) {
        bio_reqs q = {.n = 8, .off = malloc(8 * sizeof(MPI_Offset)), .len = malloc(8 * sizeof(int))};
        for (int i = 0; i < 8; i++) {
            int k = v == 2 ? 7 - i : i;
            q.off[i] = 2000LL * (k * size + rank), q.len[i] = 1500, q.bytes += 1500;
        }
        bio_fill(&q, seed + (unsigned)v);
        agx_io_hints h;
        agx_io_stats st = {0};
        agx_io_hints_init(&h);
        h.aggregators = 1, h.cb_buffer_size = 7000, h.data_kernel = v == 3 ? "spread_out" : NULL;
        long long bg = 2000LL * 8 * size + 321;
        int rc, rc2;
        long long diff = write_both(&q, &h, &st, v == 1 ? MPI_MODE_WRONLY : MPI_MODE_RDWR, bg, &rc, &rc2);
        const char *want = v == 3 ? "spread_out" : "in_place";
        CHECK(rc == MPI_SUCCESS && rc2 == MPI_SUCCESS && diff == 0 && !strcmp(st.data_kernel, want),
              "rows in place (case %d): rc %d ref %d, %lld bytes differ, kernel %s (want %s)", v, rc, rc2, diff,
              rc == MPI_SUCCESS ? st.data_kernel : "-", want);
        bio_free(&q);
    }
}


/* Records that need 16 bytes on one rank only (twophase_meta.c): every rank writes 8 B at
 * 16 x rank, and the last rank also 8 B past 5 GiB, a gap from the call's first byte that
 * 32 bits cannot hold; one aggregator, rounds of 1 GiB. The other ranks made their records
 * compact (twophase_pieces.c) and must send them wide as agreed. The bytes read back one
 * by one with MPI_File_read_at (a sparse file: no collective read of 5 GiB), then by
 * agx_file_read_all. */
void wide_records(unsigned seed)
{
    int last = rank == size - 1;
    bio_reqs q = {.n = 1 + last, .off = malloc(2 * sizeof(MPI_Offset)), .len = malloc(2 * sizeof(int))};
    q.off[0] = 16LL * rank, q.len[0] = 8;
    q.off[1] = (5LL << 30) + 16LL * rank, q.len[1] = 8;
    q.bytes = 8LL * q.n;
    bio_fill(&q, seed);
    agx_io_hints h;
    agx_io_stats st = {0};
    agx_io_hints_init(&h);
    h.aggregators = 1, h.cb_buffer_size = 1LL << 30, h.cb_always = 1;
    MPI_File fh = open_file(path_a, MPI_MODE_RDWR, 0);
    int rc = agx_file_write_all(fh, MPI_COMM_WORLD, q.n, q.off, q.len, q.buf, &h, &st);
    long long bad = 0;
    for (int i = 0; i < q.n && rc == MPI_SUCCESS; i++) {
        char got[8];
        MPI_File_read_at(fh, q.off[i], got, 8, MPI_BYTE, MPI_STATUS_IGNORE);
        bad += memcmp(got, q.buf + 8 * i, 8) != 0;
    }
    MPI_Offset fsize = 0;
    MPI_File_get_size(fh, &fsize);
    long long rbad = rc == MPI_SUCCESS ? read_back(NULL, 0, fh, &q, &h, &st) : -1;
    MPI_File_close(&fh);
    CHECK(rc == MPI_SUCCESS && bad == 0 && rbad == 0 && fsize == (5LL << 30) + 16LL * (size - 1) + 8,
          "records of 16 bytes on rank %d only: rc %d, %lld requests wrong, %lld bytes read back wrong, file "
          "size %lld", size - 1, rc, bad, rbad, (long long)fsize);
    bio_free(&q);
}
