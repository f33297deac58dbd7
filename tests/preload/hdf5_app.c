/*
 * An unmodified parallel HDF5 program (its MPI-IO file driver, collective transfers and
 * collective metadata), for the MPI-IO drop-in: HDF5 builds its own file and memory
 * types from hyperslab selections and sets the view around each collective call, so agx
 * meets views and types it did not write. Four datasets, written collectively:
 *   rows     doubles, N x 16, each rank a band of 2 + r % 3 rows (uneven, contiguous)
 *   grid     ints, Z x Y x X, q x q ranks each a column block (the others select none),
 *            from a memory buffer with a halo of one cell in y and x
 *   strided  64-bit integers, every p-th element rank r's (K x p pieces of 8 bytes)
 *   chunked  floats, 2D, chunks of 3 x 7 across the ranks' blocks of rows
 * Then the file is opened read-only and each dataset read back collectively, rows and
 * strided by another rank than wrote them, every value compared with the formula.
 *   hdf5_app FILE [SCALE [HINTS]]
 * SCALE (default 1) multiplies the sizes; HINTS ("key=value;key=value") go to the file's
 * MPI_Info as a program passes its own (H5Pset_fapl_mpio); rank 0 prints the times from create to close
 * ("write_s") and from open to close ("read_s"), and whether every value read back was
 * the one written (exit 1 if not). Object times are not recorded, so every run writes
 * the same bytes.
 */
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CK(call)                                                                                   \
    do {                                                                                           \
        if ((call) < 0) {                                                                          \
            fprintf(stderr, "hdf5_app: %s failed (line %d)\n", #call, __LINE__);                  \
            MPI_Abort(MPI_COMM_WORLD, 2);                                                          \
        }                                                                                          \
    } while (0)

static int rank, p, scale = 1;
static long long bad;

static void check(double want, double got)
{
    if (want != got && bad++ < 5)
        fprintf(stderr, "hdf5_app: rank %d: read %g where %g was written\n", rank, got, want);
}

/* rows: rank r's band starts after the bands of ranks below it */
static hsize_t band(int r, hsize_t *start)
{
    hsize_t s = 0;
    for (int i = 0; i < r; i++)
        s += (hsize_t)(2 + i % 3) * scale;
    *start = s;
    return (hsize_t)(2 + r % 3) * scale;
}

static hid_t xfer(void)
{
    hid_t x = H5Pcreate(H5P_DATASET_XFER);
    CK(H5Pset_dxpl_mpio(x, H5FD_MPIO_COLLECTIVE));
    return x;
}

static hid_t dataset(hid_t f, int reading, const char *name, hid_t type, int nd, const hsize_t *dims,
                     const hsize_t *chunk)
{
    hid_t d;
    if (reading) {
        CK(d = H5Dopen2(f, name, H5P_DEFAULT));
        return d;
    }
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE), sp = H5Screate_simple(nd, dims, NULL);
    CK(H5Pset_obj_track_times(dcpl, 0));
    if (chunk)
        CK(H5Pset_chunk(dcpl, nd, chunk));
    CK(d = H5Dcreate2(f, name, type, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT));
    H5Sclose(sp);
    H5Pclose(dcpl);
    return d;
}

/* One collective transfer of d's selection fsel from / into memory selection msel. */
static void move(hid_t d, int reading, hid_t type, hid_t msel, hid_t fsel, void *buf)
{
    hid_t x = xfer();
    CK(reading ? H5Dread(d, type, msel, fsel, x, buf) : H5Dwrite(d, type, msel, fsel, x, buf));
    H5Pclose(x);
}

static void rows(hid_t f, int reading)
{
    hsize_t dims[2] = {0, 16};
    band(p, &dims[0]); /* the rows of all bands: where rank p's would start */
    int who = reading ? (rank + 1) % p : rank; /* read back another rank's band */
    hsize_t r0, nr = band(who, &r0), st[2] = {r0, 0}, cnt[2] = {nr, 16};
    hid_t d = dataset(f, reading, "rows", H5T_NATIVE_DOUBLE, 2, dims, NULL), fs = H5Dget_space(d);
    hid_t ms = H5Screate_simple(2, cnt, NULL);
    CK(H5Sselect_hyperslab(fs, H5S_SELECT_SET, st, NULL, cnt, NULL));
    double *b = malloc(sizeof(double) * nr * 16 + 1);
    for (hsize_t i = 0; i < nr * 16; i++)
        b[i] = reading ? -1 : (double)((r0 + i / 16) * 100 + i % 16);
    move(d, reading, H5T_NATIVE_DOUBLE, ms, fs, b);
    for (hsize_t i = 0; reading && i < nr * 16; i++)
        check((double)((r0 + i / 16) * 100 + i % 16), b[i]);
    free(b);
    H5Sclose(ms);
    H5Sclose(fs);
    H5Dclose(d);
}

static void grid(hid_t f, int reading)
{
    int q = 1;
    while ((q + 1) * (q + 1) <= p)
        q++;
    const hsize_t N = 12 * (hsize_t)scale, Z = 6;
    hsize_t dims[3] = {Z, N, N};
    int in = rank < q * q;
    hsize_t i = (hsize_t)(rank / q), j = (hsize_t)(rank % q);
    hsize_t ny = in ? N / q + (i < N % q) : 0, nx = in ? N / q + (j < N % q) : 0;
    hsize_t y0 = i * (N / q) + (i < N % q ? i : N % q), x0 = j * (N / q) + (j < N % q ? j : N % q);
    hid_t d = dataset(f, reading, "grid", H5T_NATIVE_INT, 3, dims, NULL), fs = H5Dget_space(d);
    hsize_t mdims[3] = {Z, ny + 2, nx + 2}, mst[3] = {0, 1, 1}, cnt[3] = {Z, ny, nx}, st[3] = {0, y0, x0};
    hid_t ms = H5Screate_simple(3, mdims, NULL);
    if (in) {
        CK(H5Sselect_hyperslab(fs, H5S_SELECT_SET, st, NULL, cnt, NULL));
        CK(H5Sselect_hyperslab(ms, H5S_SELECT_SET, mst, NULL, cnt, NULL));
    } else {
        CK(H5Sselect_none(fs));
        CK(H5Sselect_none(ms));
    }
    size_t cells = (size_t)(Z * (ny + 2) * (nx + 2));
    int *b = malloc(sizeof(int) * cells + 1);
    for (hsize_t z = 0; z < Z; z++)
        for (hsize_t y = 0; y < ny + 2; y++)
            for (hsize_t x = 0; x < nx + 2; x++) {
                size_t k = (size_t)((z * (ny + 2) + y) * (nx + 2) + x);
                int v = (int)(z * 1000000 + (y0 + y - 1) * 1000 + (x0 + x - 1));
                int halo = y == 0 || x == 0 || y == ny + 1 || x == nx + 1;
                b[k] = halo ? -7 : reading ? -1 : v; /* the halo is neither written nor read */
            }
    move(d, reading, H5T_NATIVE_INT, ms, fs, b);
    for (hsize_t z = 0; reading && z < Z; z++)
        for (hsize_t y = 0; y < ny + 2; y++)
            for (hsize_t x = 0; x < nx + 2; x++) {
                size_t k = (size_t)((z * (ny + 2) + y) * (nx + 2) + x);
                int halo = y == 0 || x == 0 || y == ny + 1 || x == nx + 1;
                check(halo ? -7 : (double)(z * 1000000 + (y0 + y - 1) * 1000 + (x0 + x - 1)), b[k]);
            }
    free(b);
    H5Sclose(ms);
    H5Sclose(fs);
    H5Dclose(d);
}

static void strided(hid_t f, int reading)
{
    const hsize_t K = 500 * (hsize_t)scale;
    hsize_t dims[1] = {K * p}, cnt[1] = {K}, stride[1] = {(hsize_t)p};
    int who = reading ? (rank + p - 1) % p : rank;
    hsize_t st[1] = {(hsize_t)who};
    hid_t d = dataset(f, reading, "strided", H5T_NATIVE_LLONG, 1, dims, NULL), fs = H5Dget_space(d);
    hid_t ms = H5Screate_simple(1, cnt, NULL);
    CK(H5Sselect_hyperslab(fs, H5S_SELECT_SET, st, stride, cnt, NULL));
    long long *b = malloc(sizeof(long long) * K);
    for (hsize_t i = 0; i < K; i++)
        b[i] = reading ? -1 : (long long)(i * p + who) * 3 + 1;
    move(d, reading, H5T_NATIVE_LLONG, ms, fs, b);
    for (hsize_t i = 0; reading && i < K; i++)
        check((double)((long long)(i * p + who) * 3 + 1), (double)b[i]);
    free(b);
    H5Sclose(ms);
    H5Sclose(fs);
    H5Dclose(d);
}

static void chunked(hid_t f, int reading)
{
    const hsize_t R = 4 * (hsize_t)scale, C = 30;
    hsize_t dims[2] = {R * p, C}, chunk[2] = {3, 7}, st[2] = {R * rank, 0}, cnt[2] = {R, C};
    hid_t d = dataset(f, reading, "chunked", H5T_NATIVE_FLOAT, 2, dims, chunk), fs = H5Dget_space(d);
    hid_t ms = H5Screate_simple(2, cnt, NULL);
    CK(H5Sselect_hyperslab(fs, H5S_SELECT_SET, st, NULL, cnt, NULL));
    float *b = malloc(sizeof(float) * R * C);
    for (hsize_t i = 0; i < R * C; i++)
        b[i] = reading ? -1.0f : (float)((R * rank + i / C) * 64 + i % C) + 0.5f;
    move(d, reading, H5T_NATIVE_FLOAT, ms, fs, b);
    for (hsize_t i = 0; reading && i < R * C; i++)
        check((double)((float)((R * rank + i / C) * 64 + i % C) + 0.5f), b[i]);
    free(b);
    H5Sclose(ms);
    H5Sclose(fs);
    H5Dclose(d);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    if (argc < 2) {
        if (rank == 0)
            fprintf(stderr, "usage: hdf5_app FILE [SCALE]\n");
        MPI_Finalize();
        return 2;
    }
    if (argc > 2)
        scale = atoi(argv[2]) > 0 ? atoi(argv[2]) : 1;
    MPI_Info info;
    MPI_Info_create(&info);
    for (char *h = argc > 3 ? argv[3] : NULL, *kv = h ? strtok(h, ";") : NULL; kv; kv = strtok(NULL, ";")) {
        char *eq = strchr(kv, '=');
        if (eq) {
            *eq = '\0';
            MPI_Info_set(info, kv, eq + 1);
        }
    }
    double tw = 0, tr = 0;
    for (int reading = 0; reading < 2; reading++) {
        double t0 = MPI_Wtime();
        hid_t fapl = H5Pcreate(H5P_FILE_ACCESS), f;
        CK(H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, info));
        CK(H5Pset_all_coll_metadata_ops(fapl, 1));
        CK(H5Pset_coll_metadata_write(fapl, 1));
        CK(f = reading ? H5Fopen(argv[1], H5F_ACC_RDONLY, fapl) : H5Fcreate(argv[1], H5F_ACC_TRUNC, H5P_DEFAULT, fapl));
        rows(f, reading);
        grid(f, reading);
        strided(f, reading);
        chunked(f, reading);
        CK(H5Fclose(f));
        H5Pclose(fapl);
        double t = MPI_Wtime() - t0, tmax;
        MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        *(reading ? &tr : &tw) = tmax;
    }
    MPI_Info_free(&info);
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("hdf5_app: p=%d scale=%d write_s=%.6f read_s=%.6f read_back=%s\n", p, scale, tw, tr,
               bad ? "WRONG" : "ok");
    if (bad && rank == 0)
        fprintf(stderr, "hdf5_app: %lld values read back differ from those written\n", bad);
    MPI_Finalize();
    return bad ? 1 : 0;
}
