/*
 * Two-phase I/O workloads and their reference write / check (bench.h).
 */
#include "bench.h"

#include <stdlib.h>
#include <string.h>

unsigned long long bench_mix64(unsigned long long x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}
#define mix bench_mix64

unsigned char bio_byte(long long off, unsigned seed)
{
    return (unsigned char)(mix(((unsigned long long)seed << 48) ^ (unsigned long long)(off >> 3)) >> ((off & 7) * 8));
}

static int alloc(bio_reqs *q, long long n)
{
    *q = (bio_reqs){0};
    if (n > (1LL << 30))
        return MPI_ERR_COUNT;
    q->off = malloc(sizeof *q->off * (size_t)(n ? n : 1));
    q->len = malloc(sizeof *q->len * (size_t)(n ? n : 1));
    return q->off && q->len ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}

static void add(bio_reqs *q, long long off, long long len)
{
    q->off[q->n] = off;
    q->len[q->n++] = (int)len;
    q->bytes += len;
}

int bio_e3sm(int p, int r, const bio_params *bp, unsigned seed, bio_reqs *q)
{
    int vars = bp->vars > 0 ? bp->vars : 4;
    long long cells = bp->cells > 0 ? bp->cells : 4096, var_bytes = 0;
    /* groups of p runs of g doubles each, until the array holds p * cells doubles */
    long long groups = 0, done = 0;
    while (done < cells)
        done += 1 + (long long)(mix(seed * 7919ULL + (unsigned long long)groups++) % 3);
    int rc = alloc(q, (long long)vars * groups);
    if (rc != MPI_SUCCESS)
        return rc;
    for (int v = 0; v < vars; v++) {
        long long at = 0;
        for (long long k = 0; k < groups; k++) {
            long long g = 1 + (long long)(mix(seed * 7919ULL + (unsigned long long)k) % 3);
            long long slot = ((long long)r + (long long)(mix(((unsigned long long)v << 40) ^ (unsigned long long)k ^
                                                            ((unsigned long long)seed << 20)) % (unsigned long long)p)) % p;
            add(q, var_bytes + (at + slot * g) * 8, g * 8);
            at += (long long)p * g;
        }
        var_bytes += at * 8;
    }
    q->file_size = var_bytes;
    return MPI_SUCCESS;
}

/* FLASH: blocks of the processes before r (80 + s % 3 each). */
static long long flash_first(long long r) { return 80 * r + 3 * (r / 3) + (r % 3 == 2); }

int bio_flash(int p, int r, const bio_params *bp, bio_reqs *q)
{
    long long b = bp->block > 0 ? bp->block : 8, bbytes = b * b * b * 8;
    long long first = flash_first(r), total = flash_first(p), mine = 80 + r % 3;
    int rc = alloc(q, 24);
    if (rc != MPI_SUCCESS)
        return rc;
    for (int v = 0; v < 24; v++)
        add(q, (v * total + first) * bbytes, mine * bbytes);
    q->file_size = 24 * total * bbytes;
    return MPI_SUCCESS;
}

int bio_btio(int p, int r, const bio_params *bp, bio_reqs *q)
{
    int s = 0;
    while ((s + 1) * (s + 1) <= p)
        s++;
    if (s * s != p)
        return MPI_ERR_ARG;
    long long N = bp->cells > 0 ? bp->cells : 64, pt = 40;
    if (N < s)
        return MPI_ERR_ARG;
    int i = r / s, j = r % s;
    int rc = alloc(q, N * N / s + 2 * N);
    if (rc != MPI_SUCCESS)
        return rc;
    for (int k = 0; k < s; k++) { /* z-layer k: subarray (row, col) of the (y, x) plane */
        int row = ((i - k) % s + s) % s, col = (j + k) % s;
        long long z0 = k * N / s, z1 = (k + 1) * N / s, y0 = row * N / s, y1 = (row + 1) * N / s;
        long long x0 = col * N / s, x1 = (col + 1) * N / s;
        for (long long z = z0; z < z1; z++)
            for (long long y = y0; y < y1; y++)
                add(q, ((z * N + y) * N + x0) * pt, (x1 - x0) * pt);
    }
    q->file_size = N * N * N * pt;
    return MPI_SUCCESS;
}

int bio_fill(bio_reqs *q, unsigned seed)
{
    if (!(q->buf = malloc((size_t)(q->bytes ? q->bytes : 1))))
        return MPI_ERR_NO_MEM;
    long long at = 0;
    for (int i = 0; i < q->n; i++)
        for (int k = 0; k < q->len[i]; k++)
            q->buf[at++] = (char)bio_byte(q->off[i] + k, seed);
    return MPI_SUCCESS;
}

void bio_free(bio_reqs *q)
{
    free(q->off);
    free(q->len);
    free(q->buf);
    *q = (bio_reqs){0};
}

static const bio_reqs *sort_q;
static int by_off(const void *x, const void *y)
{
    MPI_Offset a = sort_q->off[*(const int *)x], b = sort_q->off[*(const int *)y];
    return a < b ? -1 : a > b;
}

/* The requests in file order, empty ones dropped: file displacements, buffer positions
 * and lengths for two hindexed types. */
static int sorted_types(const bio_reqs *q, MPI_Datatype *ftype, MPI_Datatype *mtype)
{
    int *idx = malloc(sizeof *idx * (size_t)(q->n + 1)), *bl = malloc(sizeof *bl * (size_t)(q->n + 1)), m = 0;
    MPI_Aint *fd = malloc(sizeof *fd * (size_t)(q->n + 1)), *md = malloc(sizeof *md * (size_t)(q->n + 1));
    MPI_Aint *pos = malloc(sizeof *pos * (size_t)(q->n + 1));
    int rc = idx && bl && fd && md && pos ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    for (int i = 0, at = 0; rc == MPI_SUCCESS && i < q->n; at += q->len[i++])
        pos[i] = at, idx[i] = i;
    if (rc == MPI_SUCCESS) {
        sort_q = q;
        qsort(idx, (size_t)q->n, sizeof *idx, by_off);
        for (int k = 0; k < q->n; k++)
            if (q->len[idx[k]] > 0)
                fd[m] = (MPI_Aint)q->off[idx[k]], md[m] = pos[idx[k]], bl[m++] = q->len[idx[k]];
        if (m == 0) /* ROMIO 3.2.1 frees a bad pointer on views of empty hindexed types */
            fd[0] = md[0] = 0, bl[0] = 1, m = 1;
        if ((rc = MPI_Type_create_hindexed(m, bl, fd, MPI_BYTE, ftype)) == MPI_SUCCESS &&
            (rc = MPI_Type_create_hindexed(m, bl, md, MPI_BYTE, mtype)) == MPI_SUCCESS) {
            MPI_Type_commit(ftype);
            MPI_Type_commit(mtype);
        }
    }
    free(idx), free(bl), free(fd), free(md), free(pos);
    return rc;
}

double bio_ref_times[3];

/* The two directions of the reference call; bio_ref_times as bench.h says. */
static int reference(MPI_File fh, const bio_reqs *q, char *got)
{
    MPI_Datatype ft, mt;
    MPI_Status st;
    double t0 = MPI_Wtime();
    int rc = sorted_types(q, &ft, &mt);
    if (rc != MPI_SUCCESS)
        return rc;
    double t1 = MPI_Wtime(), t2 = t1, t3 = t1;
    if ((rc = MPI_File_set_view(fh, 0, MPI_BYTE, ft, "native", MPI_INFO_NULL)) == MPI_SUCCESS) {
        t2 = MPI_Wtime();
        rc = got ? MPI_File_read_all(fh, got, q->bytes > 0, mt, &st) : MPI_File_write_all(fh, q->buf, q->bytes > 0, mt, &st);
        t3 = MPI_Wtime();
    }
    int rc2 = MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
    double t4 = MPI_Wtime();
    bio_ref_times[0] = t1 - t0, bio_ref_times[1] = (t2 - t1) + (t4 - t3), bio_ref_times[2] = t3 - t2;
    MPI_Type_free(&ft);
    MPI_Type_free(&mt);
    return rc != MPI_SUCCESS ? rc : rc2;
}

int bio_reference_write(MPI_File fh, const bio_reqs *q)
{
    return reference(fh, q, NULL);
}

int bio_reference_read(MPI_File fh, const bio_reqs *q, char *got)
{
    return reference(fh, q, got);
}

int bio_check(MPI_File fh, MPI_Comm comm, const bio_reqs *q, unsigned seed, long long *bad)
{
    MPI_Offset size = -1;
    int rank, rc;
    char *got = malloc((size_t)(q->bytes ? q->bytes : 1));
    *bad = 0;
    MPI_Comm_rank(comm, &rank);
    if (!got)
        return MPI_ERR_NO_MEM;
    memset(got, 0, (size_t)q->bytes);
    rc = bio_reference_read(fh, q, got);
    if (rc == MPI_SUCCESS)
        rc = MPI_File_get_size(fh, &size);
    for (int i = 0, at = 0; rc == MPI_SUCCESS && i < q->n; at += q->len[i++])
        for (int k = 0; k < q->len[i]; k++)
            *bad += (unsigned char)got[at + k] != bio_byte(q->off[i] + k, seed);
    if (rank == 0 && rc == MPI_SUCCESS && size != q->file_size)
        (*bad)++;
    free(got);
    return rc;
}
