/*
 * An unmodified PnetCDF program in the shapes of KangRoss20's three workloads (Sec. V),
 * for the MPI-IO drop-in (tests/pnetcdf_check.sh runs it plain and under
 * libagx-preload.so and compares the files byte for byte):
 *   e3sm   many small non-contiguous pieces per process: 4 variables of 64 x 3p doubles,
 *          each process writing 1-3 cells of its 3 in every row (ncmpi_put_varn_all),
 *          and 3 more variables through ncmpi_iput_vara + ncmpi_wait_all;
 *   flash  3D blocks of many variables: 6 variables nb x 8 x 8 x 8 doubles, process r
 *          owning blocks [r * 3, r * 3 + 3) (ncmpi_put_vara_all), written twice;
 *   btio   a 3D grid of 5 doubles per point cut into q x q column blocks (p = q x q, or
 *          the largest square below p with the others writing nothing), written for 2
 *          time steps of a record variable (ncmpi_put_vara_all with a subarray memory
 *          type: the block inside a ghost-cell halo).
 *   pnetcdf_app e3sm|flash|btio FILE [SCALE]
 * Then the file is opened read-only and every write read back the same way (get_varn_all,
 * iget_vara + wait_all, get_vara_all with the halo memory type), the values compared.
 * SCALE (default 1) multiplies e3sm's rows, flash's blocks per process and btio's grid
 * edge; rank 0 prints the times from create to close ("write_s") and from open to close
 * ("read_s"), and whether every value read back was the one written (exit 1 if not).
 * Values depend only on the global index, so every run writes the same bytes.
 */
#include <mpi.h>
#include <pnetcdf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CK(call)                                                                                   \
    do {                                                                                           \
        int e_ = (call);                                                                           \
        if (e_ != NC_NOERR) {                                                                      \
            fprintf(stderr, "pnetcdf_app: %s:%d: %s\n", __FILE__, __LINE__, ncmpi_strerror(e_));  \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                          \
        }                                                                                          \
    } while (0)

static int rank, p, scale = 1;
static int reading;   /* the second pass: the file reopened read-only, each write read back */
static long long bad; /* values read that differ from what was written */

/* The first pass writes n values of b (memory type mt); the second reads them into a
 * copy of b (holes of mt keep b's values) and counts the values that differ. */
static int put_or_get(int nc, int var, const MPI_Offset *s, const MPI_Offset *c, double *b, size_t nb, int n,
                      MPI_Datatype mt)
{
    if (!reading)
        return ncmpi_put_vara_all(nc, var, s, c, b, n, mt);
    double *g = malloc(sizeof *g * (nb ? nb : 1));
    memcpy(g, b, sizeof *g * nb);
    for (size_t i = 0; i < nb; i++) /* the cells the read fills: a value no write made */
        g[i] = -7.0;
    int e = ncmpi_get_vara_all(nc, var, s, c, g, n, mt);
    if (mt == MPI_DOUBLE) {
        for (size_t i = 0; i < (size_t)n; i++)
            bad += g[i] != b[i];
    } else { /* the memory type's cells: unpacked from both, compared */
        int sz;
        MPI_Type_size(mt, &sz);
        size_t k = (size_t)sz / sizeof(double) * (size_t)n;
        double *x = malloc(sizeof *x * (k ? k : 1)), *y = malloc(sizeof *y * (k ? k : 1));
        int pos = 0, pos2 = 0;
        MPI_Pack(b, n, mt, x, (int)(sizeof *x * k), &pos, MPI_COMM_SELF);
        MPI_Pack(g, n, mt, y, (int)(sizeof *y * k), &pos2, MPI_COMM_SELF);
        for (size_t i = 0; i < k; i++)
            bad += x[i] != y[i];
        free(x), free(y);
    }
    free(g);
    return e;
}

static void e3sm(int nc)
{
    int dim[2], var[7];
    if (!reading) {
        CK(ncmpi_def_dim(nc, "rows", 64 * scale, &dim[0]));
        CK(ncmpi_def_dim(nc, "cells", (MPI_Offset)p * 3, &dim[1]));
    }
    for (int v = 0; v < 7; v++) {
        char name[16];
        snprintf(name, sizeof name, "v%d", v);
        if (!reading)
            CK(ncmpi_def_var(nc, name, NC_DOUBLE, 2, dim, &var[v]));
        else
            CK(ncmpi_inq_varid(nc, name, &var[v]));
    }
    if (!reading)
        CK(ncmpi_enddef(nc));
    /* per row, a run of 1-3 cells inside this rank's slot of 3, its start moving with the row */
    int rows = 64 * scale, n = 0;
    MPI_Offset **st = malloc(sizeof *st * rows), **ct = malloc(sizeof *ct * rows);
    MPI_Offset (*start)[2] = malloc(sizeof *start * rows), (*count)[2] = malloc(sizeof *count * rows);
    double *buf = malloc(sizeof(double) * rows * 3);
    for (int row = 0; row < rows; row++) {
        int col = rank * 3 + row % 3, len = 1 + (row + rank) % 3;
        if (len > 3 - row % 3)
            len = 3 - row % 3;
        start[n][0] = row, start[n][1] = col, count[n][0] = 1, count[n][1] = len;
        st[n] = start[n], ct[n] = count[n], n++;
    }
    for (int v = 0; v < 4; v++) {
        int k = 0;
        for (int i = 0; i < n; i++)
            for (int j = 0; j < count[i][1]; j++)
                buf[k++] = v * 1e6 + start[i][0] * 1000 + start[i][1] + j;
        if (!reading) {
            CK(ncmpi_put_varn_all(nc, var[v], n, st, ct, buf, k, MPI_DOUBLE));
            continue;
        }
        double *g = malloc(sizeof *g * (size_t)(k ? k : 1));
        CK(ncmpi_get_varn_all(nc, var[v], n, st, ct, g, k, MPI_DOUBLE));
        for (int i = 0; i < k; i++)
            bad += g[i] != buf[i];
        free(g);
    }
    int req[3], stt[3];
    double *row3 = malloc(sizeof(double) * 3 * rows);
    for (int v = 4; v < 7; v++) { /* this rank's column slot of every row, non-blocking */
        MPI_Offset s2[2] = {0, rank * 3 + v % 3}, c2[2] = {rows, 1};
        for (int r = 0; r < rows; r++)
            row3[(v - 4) * rows + r] = v * 1e6 + r * 1000 + s2[1];
        if (!reading)
            CK(ncmpi_iput_vara(nc, var[v], s2, c2, row3 + (v - 4) * rows, rows, MPI_DOUBLE, &req[v - 4]));
    }
    double *got = malloc(sizeof(double) * 3 * rows);
    for (int v = 4; v < 7 && reading; v++) {
        MPI_Offset s2[2] = {0, rank * 3 + v % 3}, c2[2] = {rows, 1};
        CK(ncmpi_iget_vara(nc, var[v], s2, c2, got + (v - 4) * rows, rows, MPI_DOUBLE, &req[v - 4]));
    }
    CK(ncmpi_wait_all(nc, 3, req, stt));
    for (int i = 0; i < 3 * rows && reading; i++)
        bad += got[i] != row3[i];
    free(got);
    free(row3), free(buf), free(st), free(ct), free(start), free(count);
}

static void flash(int nc)
{
    int dim[4], var[6];
    const char *dn[4] = {"blocks", "z", "y", "x"};
    int nb = 3 * scale;
    MPI_Offset len[4] = {(MPI_Offset)p * nb, 8, 8, 8};
    for (int d = 0; d < 4; d++)
        if (!reading)
            CK(ncmpi_def_dim(nc, dn[d], len[d], &dim[d]));
    for (int v = 0; v < 6; v++) {
        char name[16];
        snprintf(name, sizeof name, "unk%d", v);
        if (!reading)
            CK(ncmpi_def_var(nc, name, NC_DOUBLE, 4, dim, &var[v]));
        else
            CK(ncmpi_inq_varid(nc, name, &var[v]));
    }
    if (!reading)
        CK(ncmpi_enddef(nc));
    double *b = malloc(sizeof(double) * nb * 512);
    for (int pass = reading; pass < 2; pass++)
        for (int v = 0; v < 6; v++) {
            for (int i = 0; i < nb * 512; i++)
                b[i] = pass + v * 1e7 + (rank * nb) * 512 + i;
            MPI_Offset s[4] = {rank * nb, 0, 0, 0}, c[4] = {nb, 8, 8, 8};
            CK(put_or_get(nc, var[v], s, c, b, (size_t)nb * 512, nb * 512, MPI_DOUBLE));
        }
    free(b);
}

static void btio(int nc)
{
    int q = 1;
    while ((q + 1) * (q + 1) <= p)
        q++;
    const int N = 12 * scale, G = 1; /* grid points per dimension, ghost cells */
    int dim[5], var;
    const char *dn[5] = {"time", "z", "y", "x", "c"};
    MPI_Offset len[5] = {NC_UNLIMITED, N, N, N, 5};
    for (int d = 0; d < 5 && !reading; d++)
        CK(ncmpi_def_dim(nc, dn[d], len[d], &dim[d]));
    if (!reading) {
        CK(ncmpi_def_var(nc, "u", NC_DOUBLE, 5, dim, &var));
        CK(ncmpi_enddef(nc));
    } else
        CK(ncmpi_inq_varid(nc, "u", &var));
    int in = rank < q * q, i = rank / q, j = rank % q;
    int ny = in ? N / q + (i < N % q) : 0, nx = in ? N / q + (j < N % q) : 0;
    int y0 = i * (N / q) + (i < N % q ? i : N % q), x0 = j * (N / q) + (j < N % q ? j : N % q);
    /* memory: the block inside a halo of G cells in y and x */
    int msz[4] = {N, ny + 2 * G, nx + 2 * G, 5}, msub[4] = {N, ny, nx, 5}, mst[4] = {0, G, G, 0};
    MPI_Datatype mt;
    if (in && ny > 0 && nx > 0) {
        MPI_Type_create_subarray(4, msz, msub, mst, MPI_ORDER_C, MPI_DOUBLE, &mt);
        MPI_Type_commit(&mt);
    } else
        mt = MPI_DOUBLE;
    size_t cells = (size_t)N * (ny + 2 * G) * (nx + 2 * G) * 5;
    double *u = malloc(sizeof(double) * (cells ? cells : 1));
    for (int t = 0; t < 2; t++) {
        for (int z = 0; z < N; z++)
            for (int y = 0; y < ny + 2 * G; y++)
                for (int x = 0; x < nx + 2 * G; x++)
                    for (int c = 0; c < 5; c++)
                        u[(((size_t)z * (ny + 2 * G) + y) * (nx + 2 * G) + x) * 5 + c] =
                            t * 1e8 + z * 1e6 + (y0 + y - G) * 1e4 + (x0 + x - G) * 10 + c;
        MPI_Offset s[5] = {t, 0, y0, x0, 0}, c[5] = {1, N, ny, nx, 5};
        if (!(ny > 0 && nx > 0))
            c[1] = c[2] = c[3] = 0, s[2] = s[3] = 0;
        CK(put_or_get(nc, var, s, c, u, cells, ny > 0 && nx > 0 ? 1 : 0, mt));
    }
    if (mt != MPI_DOUBLE)
        MPI_Type_free(&mt);
    free(u);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    if (argc < 3) {
        if (rank == 0)
            fprintf(stderr, "usage: pnetcdf_app e3sm|flash|btio FILE\n");
        MPI_Finalize();
        return 2;
    }
    int nc;
    if (argc > 3)
        scale = atoi(argv[3]) > 0 ? atoi(argv[3]) : 1;
    double tw = 0, tr = 0;
    for (reading = 0; reading < 2; reading++) {
        double t0 = MPI_Wtime();
        if (!reading) {
            CK(ncmpi_create(MPI_COMM_WORLD, argv[2], NC_CLOBBER | NC_64BIT_DATA, MPI_INFO_NULL, &nc));
            /* fill mode: the cells no process writes hold the fill value, not what a library's
             * two-phase buffer held (OMPIO writes its buffer's garbage into holes of a new file) */
            CK(ncmpi_set_fill(nc, NC_FILL, NULL));
        } else
            CK(ncmpi_open(MPI_COMM_WORLD, argv[2], NC_NOWRITE, MPI_INFO_NULL, &nc));
        if (!strcmp(argv[1], "e3sm"))
            e3sm(nc);
        else if (!strcmp(argv[1], "flash"))
            flash(nc);
        else
            btio(nc);
        CK(ncmpi_close(nc));
        double t = MPI_Wtime() - t0, tmax;
        MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        *(reading ? &tr : &tw) = tmax;
    }
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("pnetcdf_app: %s p=%d scale=%d write_s=%.6f read_s=%.6f read_back=%s\n", argv[1], p, scale, tw, tr,
               bad ? "WRONG" : "ok");
    if (bad && rank == 0)
        fprintf(stderr, "pnetcdf_app: %lld values read back differ from those written\n", bad);
    MPI_Finalize();
    return bad ? 1 : 0;
}
