/*
 * agx_mpi_file_write_all / _write_at_all and _read_all / _read_at_all (the MPI-IO
 * drop-in) against the MPI library's own: the same program writes file A through the
 * library and file B through agx, with the same views, memory types and counts, and reads
 * each back the same way (buffers, positions and counts equal to the library's); then
 *  - the files are equal byte for byte (both start as the same background, so bytes in
 *    the views' holes must stay untouched);
 *  - after every write the individual file pointers are equal (MPI_File_get_position),
 *    and the statuses give the same MPI_Get_count and MPI_Get_elements;
 *  - the engine, not the library, wrote B where agx takes the call (agx's counters moved,
 *    p > 1), and the library where it must not (atomic mode, ranks' data overlapping, no
 *    second handle of the file: renamed after the open, another file made under its name;
 *    through agx's POSIX descriptor, opened with the file, the engine writes the file opened).
 * Views: bytes from a displacement per rank, a 2D row block and column block (subarray, C and Fortran
 * order), a 4D box whose inner dimensions are whole (C and Fortran order), a block-cyclic darray, an irregular indexed type, a struct with holes resized
 * to interleave the ranks, an etype of 3 shorts; memory: contiguous ints and a strided
 * vector; counts uneven, zero on one rank; three writes per view (two write_all, one
 * write_at_all), every data kernel by the agx_data_kernel hint.
 *   test_fileview [--quick] [--seed S]; files in $AGX_TP_DIR or /tmp
 */
#include "agx.h"
#include "mpitest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int rank, size, passed, failed;
static char path_a[512], path_b[512];
enum { NV = 10, BG = 0x5A, FSIZE = 1 << 16 };
static const char *vname[NV] = {"bytes",  "rows",   "columns", "fortran", "darray",
                                "indexed", "struct", "etype3",  "box4",    "box4f"};

/* View v of this rank: displacement, etype, filetype (freed by the caller when derived). */
static void make_view(int v, MPI_Offset *disp, MPI_Datatype *et, MPI_Datatype *ft)
{
    int n = 6, sizes[2] = {2 * size, n}, sub[2] = {2, n}, start[2] = {2 * rank, 0};
    *disp = 0, *et = MPI_INT, *ft = MPI_BYTE;
    MPI_Datatype t;
    switch (v) {
    case 0: *et = MPI_BYTE, *disp = 2048 * rank; return; /* MPI_BYTE views, apart */
    case 1: MPI_Type_create_subarray(2, sizes, sub, start, MPI_ORDER_C, MPI_INT, ft); break;
    case 2: case 3: {
        int s2[2] = {4, 3 * size}, b2[2] = {4, 3}, o2[2] = {0, 3 * rank};
        MPI_Type_create_subarray(2, s2, b2, o2, v == 2 ? MPI_ORDER_C : MPI_ORDER_FORTRAN, MPI_INT, ft);
        *disp = 16;
        break;
    }
    case 4: {
        int g = 12 * size, dist = MPI_DISTRIBUTE_CYCLIC, darg = 2, ps = size;
        MPI_Type_create_darray(size, rank, 1, &g, &dist, &darg, &ps, MPI_ORDER_C, MPI_INT, ft);
        break;
    }
    case 5: { /* blocks 1, 3, 2 ints of a stripe of 8 per rank, the rank's stripe r */
        int bl[3] = {1, 3, 2}, dp[3] = {8 * rank, 8 * rank + 2, 8 * rank + 6};
        MPI_Type_indexed(3, bl, dp, MPI_INT, &t);
        MPI_Type_create_resized(t, 0, 32 * size, ft);
        MPI_Type_free(&t);
        break;
    }
    case 6: { /* 2 ints at 0, a hole, 1 int at 12: 16 bytes per rank, interleaved */
        int bl[2] = {2, 1};
        MPI_Aint dp[2] = {0, 12};
        MPI_Datatype ty[2] = {MPI_INT, MPI_INT};
        MPI_Type_create_struct(2, bl, dp, ty, &t);
        MPI_Type_create_resized(t, 0, 16 * size, ft);
        MPI_Type_free(&t);
        *disp = 16 * rank + 4;
        break;
    }
    case 8: case 9: { /* a 4-D box: its 2 inner dimensions whole (one row each), the next
                       * split by rank, the outermost from 1 (C order; 9: Fortran order) */
        int c = v == 8, s4[4] = {3, 2 * size, 4, 5}, b4[4] = {2, 2, 4, 5}, o4[4] = {1, 2 * rank, 0, 0}, S[4], B[4], O[4];
        for (int d = 0; d < 4; d++)
            S[d] = s4[c ? d : 3 - d], B[d] = b4[c ? d : 3 - d], O[d] = o4[c ? d : 3 - d];
        MPI_Type_create_subarray(4, S, B, O, c ? MPI_ORDER_C : MPI_ORDER_FORTRAN, MPI_INT, ft);
        *disp = 8;
        break;
    }
    case 7: /* etype of 3 shorts, a vector of them per rank */
        MPI_Type_contiguous(3, MPI_SHORT, et);
        MPI_Type_commit(et);
        MPI_Type_vector(2, 1, size, *et, &t);
        MPI_Type_create_resized(t, 0, 6 * 2 * size, ft);
        MPI_Type_free(&t);
        *disp = 6 * rank;
        break;
    }
    MPI_Type_commit(ft);
}

static void fill_bg(const char *path)
{
    if (rank == 0) {
        FILE *f = fopen(path, "wb");
        for (int i = 0; f && i < FSIZE; i++)
            putc(BG, f);
        if (f)
            fclose(f);
    }
}

/* One view with one kernel: three writes each way, positions and statuses compared;
 * returns 1 when agx's engine moved data (on this rank, counters). */
static int one_view(int v, const char *kernel, int mem_vector, int atomic)
{
    MPI_File fa, fb;
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "agx_data_kernel", kernel);
    if (v % 2) /* every other view through each node's first rank (twophase_node.c) */
        MPI_Info_set(info, "agx_node_aggregation", "enable");
    MPI_File_open(MPI_COMM_WORLD, path_a, MPI_MODE_RDWR, MPI_INFO_NULL, &fa);
    agx_mpi_file_open(MPI_COMM_WORLD, path_b, MPI_MODE_RDWR, info, &fb);
    MPI_Info_free(&info);
    if (atomic) {
        MPI_File_set_atomicity(fa, 1);
        MPI_File_set_atomicity(fb, 1);
    }
    MPI_Offset disp;
    MPI_Datatype et, ft;
    make_view(v, &disp, &et, &ft);
    MPI_File_set_view(fa, disp, et, ft, "native", MPI_INFO_NULL);
    agx_mpi_file_set_view(fb, disp, et, ft, "native", MPI_INFO_NULL);
    int esz;
    MPI_Type_size(et, &esz);
    /* memory: ints; the vector type takes every other int of a doubled buffer */
    int buf[512];
    for (int i = 0; i < 512; i++)
        buf[i] = (rank + 1) * 1000 + i + v * 100000;
    MPI_Datatype mt = MPI_INT;
    if (mem_vector) {
        MPI_Type_vector(3, 1, 2, MPI_INT, &mt);
        MPI_Type_commit(&mt);
    }
    int per = mem_vector ? 3 : 1; /* ints per element of mt */
    agx_stats_enable(1);
    agx_stats_reset();
    int wtook = 1;
    for (int w = 0; w < 3; w++) {
        /* counts in elements of mt: a multiple of the etype's size in bytes, uneven, zero
         * on rank 1 in the second write */
        int ints = (w + 1 + rank % 3) * (esz == 6 ? 3 : 1) * per * 2, count = ints / per;
        if (w == 1 && rank == 1)
            count = 0;
        MPI_Status sa, sb;
        int ra, rb;
        if (w < 2) {
            ra = MPI_File_write_all(fa, buf + 7 * w, count, mt, &sa);
            rb = agx_mpi_file_write_all(fb, buf + 7 * w, count, mt, &sb);
        } else {
            MPI_Offset at = (MPI_Offset)(rank % 2) * 2 * (esz == 6 ? 1 : 2);
            ra = MPI_File_write_at_all(fa, at, buf + 1, count, mt, &sa);
            rb = agx_mpi_file_write_at_all(fb, at, buf + 1, count, mt, &sb);
        }
        wtook &= agx_mpi_file_last(fb, NULL);
        MPI_Offset pa, pb;
        MPI_File_get_position(fa, &pa);
        MPI_File_get_position(fb, &pb);
        int ca, cb, ea, eb;
        MPI_Get_count(&sa, mt, &ca);
        MPI_Get_count(&sb, mt, &cb);
        MPI_Get_elements(&sa, mt, &ea);
        MPI_Get_elements(&sb, mt, &eb);
        CHECK(ra == MPI_SUCCESS && rb == MPI_SUCCESS && pa == pb && ca == cb && ea == eb,
              "view %s, kernel %s, memory %s, write %d: rc %d/%d, position %lld/%lld, count %d/%d, elements %d/%d",
              vname[v], kernel, mem_vector ? "vector" : "ints", w, ra, rb, (long long)pa, (long long)pb, ca, cb, ea,
              eb);
    }
    agx_stats st;
    agx_stats_get(&st);
    agx_stats_enable(0);
    /* the same views read back: every read's buffer, position and status the library's */
    MPI_File_seek(fa, 0, MPI_SEEK_SET);
    MPI_File_seek(fb, 0, MPI_SEEK_SET);
    int took = 1;
    for (int w = 0; w < 3; w++) {
        int ints = (w + 2 + rank % 3) * (esz == 6 ? 3 : 1) * per * 2, count = ints / per;
        if (w == 1 && rank == 2)
            count = 0;
        int ba[512], bb[512];
        for (int i = 0; i < 512; i++)
            ba[i] = bb[i] = -1 - i;
        MPI_Status sa, sb;
        int ra, rb;
        if (w < 2) {
            ra = MPI_File_read_all(fa, ba + 3 * w, count, mt, &sa);
            rb = agx_mpi_file_read_all(fb, bb + 3 * w, count, mt, &sb);
        } else {
            MPI_Offset at = (MPI_Offset)(rank % 2) * (esz == 6 ? 1 : 2);
            ra = MPI_File_read_at_all(fa, at, ba + 1, count, mt, &sa);
            rb = agx_mpi_file_read_at_all(fb, at, bb + 1, count, mt, &sb);
        }
        const char *why = NULL;
        took &= agx_mpi_file_last_read(fb, &why);
        MPI_Offset pa, pb;
        MPI_File_get_position(fa, &pa);
        MPI_File_get_position(fb, &pb);
        int ca, cb, diff = -1;
        MPI_Get_count(&sa, mt, &ca);
        MPI_Get_count(&sb, mt, &cb);
        for (int i = 0; i < 512 && diff < 0; i++)
            diff = ba[i] != bb[i] ? i : -1;
        CHECK(ra == MPI_SUCCESS && rb == MPI_SUCCESS && pa == pb && ca == cb && diff < 0,
              "view %s, kernel %s, memory %s, read %d: rc %d/%d, position %lld/%lld, count %d/%d, first int "
              "differing %d (%s)", vname[v], kernel, mem_vector ? "vector" : "ints", w, ra, rb, (long long)pa,
              (long long)pb, ca, cb, diff, why ? why : "agx's");
    }
    CHECK(took == !atomic, "view %s, kernel %s: agx's engine read %s (atomic mode %d)", vname[v], kernel,
          took ? "every time" : "not every time", atomic);
    if (mem_vector)
        MPI_Type_free(&mt);
    if (ft != MPI_BYTE)
        MPI_Type_free(&ft);
    if (et != MPI_BYTE && et != MPI_INT)
        MPI_Type_free(&et);
    MPI_File_close(&fa);
    agx_mpi_file_close(&fb);
    /* through each node's first rank on one node, the leaders' engine has one rank: no
     * message agx counts, but every write taken */
    return st.msgs_local + st.msgs_nonlocal > 0 || (v % 2 && wtook);
}

int main(int argc, char **argv)
{
    mt_run run;
    mt_start(&argc, &argv, &run);
    rank = run.rank, size = run.size;
    mt_file_pair(&run, "fv", path_a, path_b, sizeof path_a);
    const char *kernels[] = {"auto", "issend_all", "balanced", "tam", "spread_out"};
    int nk = run.quick ? 2 : 5;
    if (rank == 0)
        printf("test_fileview: p = %d, seed %u\n", size, run.seed);
    for (int v = 0; v < NV; v++)
        for (int k = 0; k < nk; k++)
            for (int m = 0; m < 2; m++) {
                fill_bg(path_a), fill_bg(path_b);
                MPI_Barrier(MPI_COMM_WORLD);
                int moved = one_view(v, kernels[k], m, 0), any;
                MPI_Allreduce(&moved, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
                int same = mt_compare_files(rank, path_b, path_a) == 0;
                CHECK(same && (size == 1 || any), "view %s, kernel %s, memory %s: files %s, engine %s", vname[v],
                      kernels[k], m ? "vector" : "ints", same ? "equal" : "DIFFER", any ? "ran" : "did not run");
            }
    /* atomic mode: the library's own write (no agx traffic), the same file */
    fill_bg(path_a), fill_bg(path_b);
    MPI_Barrier(MPI_COMM_WORLD);
    int moved = one_view(1, "auto", 0, 1), any;
    MPI_Allreduce(&moved, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    long long diff = mt_compare_files(rank, path_b, path_a);
    CHECK(diff == 0 && !any, "atomic mode: %lld bytes differ, agx moved data: %d (the library should write)", diff,
          any);
    /* the file renamed after the open, another file made under its name: agx's POSIX
     * descriptor, opened with the file, writes the file opened; a second handle (opened at
     * the first write, by name: AGX_IO_POSIX=0) cannot be opened, and then the library's
     * own write on every rank, said so; either way the bytes the same, none in the other */
    MPI_File fa, fb;
    char renamed[600];
    snprintf(renamed, sizeof renamed, "%s.moved", path_b);
    fill_bg(path_a), fill_bg(path_b);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_open(MPI_COMM_WORLD, path_a, MPI_MODE_RDWR, MPI_INFO_NULL, &fa);
    agx_mpi_file_open(MPI_COMM_WORLD, path_b, MPI_MODE_RDWR, MPI_INFO_NULL, &fb);
    if (rank == 0)
        rename(path_b, renamed);
    fill_bg(path_b); /* another file under the name: agx must write neither it nor, */
    MPI_Barrier(MPI_COMM_WORLD); /* through its name, the one opened */
    {
        int w[64];
        const char *why = NULL;
        for (int i = 0; i < 64; i++)
            w[i] = rank * 1000 + i;
        MPI_Status sa, sb;
        int ra = MPI_File_write_at_all(fa, 256LL * rank, w, 64, MPI_INT, &sa);
        int rb = agx_mpi_file_write_at_all(fb, 256LL * rank, w, 64, MPI_INT, &sb);
        int took = agx_mpi_file_last(fb, &why), got = -1;
        int said = why && strstr(why, "could not be opened"), posix = !getenv("AGX_IO_POSIX") ||
                                                                      strcmp(getenv("AGX_IO_POSIX"), "0");
        MPI_Get_count(&sb, MPI_INT, &got);
        MPI_File_close(&fa);
        agx_mpi_file_close(&fb);
        long long other = 0; /* the other file's bytes that are not the background's */
        if (rank == 0) {
            FILE *o = fopen(path_b, "rb");
            for (int c; o && (c = getc(o)) != EOF;)
                other += c != BG;
            if (o)
                fclose(o);
            rename(renamed, path_b);
        }
        MPI_Bcast(&other, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
        diff = mt_compare_files(rank, path_b, path_a);
        CHECK(ra == MPI_SUCCESS && rb == MPI_SUCCESS && got == 64 && diff == 0 && (took ? posix : said) && !other,
              "no second handle: rc %d/%d, count %d, %lld bytes differ, %lld bytes of the other file written, "
              "agx's engine %s (%s)", ra, rb, got, diff, other, took ? "took it" : "did not", why ? why : "");
    }
    /* read-only handles: reads through agx; a read past the end of the file: the library's */
    MPI_File_open(MPI_COMM_WORLD, path_a, MPI_MODE_RDONLY, MPI_INFO_NULL, &fa);
    agx_mpi_file_open(MPI_COMM_WORLD, path_b, MPI_MODE_RDONLY, MPI_INFO_NULL, &fb);
    for (int past = 0; past < 2; past++) {
        int ba[256], bb[256], ca, cb;
        const char *why = NULL;
        memset(ba, 1, sizeof ba), memset(bb, 1, sizeof bb);
        MPI_Offset at = past ? FSIZE - 100 + 8 * rank : 40 * rank;
        MPI_Status sa, sb;
        int ra = MPI_File_read_at_all(fa, at, ba, 100, MPI_INT, &sa);
        int rb = agx_mpi_file_read_at_all(fb, at, bb, 100, MPI_INT, &sb);
        int took = agx_mpi_file_last_read(fb, &why);
        MPI_Get_count(&sa, MPI_INT, &ca);
        MPI_Get_count(&sb, MPI_INT, &cb);
        int same = past || !memcmp(ba, bb, sizeof ba); /* past the end: the bytes are undefined */
        CHECK(ra == MPI_SUCCESS && rb == MPI_SUCCESS && ca == cb && same && took == !past,
              "read-only handle, read %s the end: rc %d/%d, count %d/%d, buffers %s, agx's engine %s (%s)",
              past ? "past" : "before", ra, rb, ca, cb, same ? "equal" : "DIFFER", took ? "took it" : "did not",
              why ? why : "");
    }
    MPI_File_close(&fa);
    agx_mpi_file_close(&fb);
    if (rank == 0) {
        unlink(path_a);
        unlink(path_b);
        printf("%s: %d passed, %d failed\n", failed ? "FAIL" : "PASS", passed, failed);
    }
    MPI_Finalize();
    return failed ? 1 : 0;
}
