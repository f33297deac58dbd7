/*
 * Datatype flattening for the MPI-IO entries (file_mpi.c): one instance of a datatype as
 * its runs of contiguous bytes, (displacement, length) in type-map order, adjacent runs
 * merged; ROMIO's ADIOI_Flatten in spirit. The type map is walked with
 * MPI_Type_get_envelope / MPI_Type_get_contents for the constructors whose layout the
 * standard defines in closed form (contiguous, vector, hvector, indexed, hindexed,
 * indexed_block, hindexed_block, struct, resized, dup, subarray); a predefined type, and
 * any other constructor (darray, the Fortran-90 parameterised types) whose true extent
 * is at most AGX_FLAT_PROBE bytes, is flattened by asking MPI itself: MPI_Unpack of
 * size() bytes of 0xff into a zeroed buffer of its true extent marks exactly the bytes
 * the type map covers, which are its runs in address order (a file type's displacements
 * are monotonically non-decreasing, MPI-3.1 Sec. 13.3, so that is type-map order too).
 * Anything else (too large to probe, more than AGX_FLAT_MAX_RUNS runs, a map that is not
 * monotone) is refused: the caller then leaves the call to the MPI library.
 */
#include "twophase.h"

#include <stdlib.h>
#include <string.h>

#define AGX_FLAT_PROBE (1LL << 24)    /* bytes: the largest true extent probed */
#define AGX_FLAT_MAX_RUNS (1LL << 26) /* runs of one instance */

static int add(agx_flat *f, long long off, long long len)
{
    if (len <= 0)
        return 0;
    if (f->n > 0 && f->off[f->n - 1] + f->len[f->n - 1] == off) {
        f->len[f->n - 1] += len;
        return 0;
    }
    if (f->n == AGX_FLAT_MAX_RUNS)
        return -1;
    if (f->n == f->cap) {
        long long cap = f->cap ? 2 * f->cap : 16;
        long long *o = realloc(f->off, sizeof(long long) * (size_t)cap);
        if (!o)
            return -1;
        f->off = o;
        long long *l = realloc(f->len, sizeof(long long) * (size_t)cap);
        if (!l)
            return -1;
        f->len = l, f->cap = cap;
    }
    f->off[f->n] = off, f->len[f->n] = len;
    f->n++;
    return 0;
}

/* `sub`'s runs shifted by base, appended to f. */
static int append(agx_flat *f, const agx_flat *sub, long long base)
{
    for (long long i = 0; i < sub->n; i++)
        if (add(f, base + sub->off[i], sub->len[i]))
            return -1;
    return 0;
}

/* MPI's own answer: the bytes that unpacking size(t) bytes touches in t's true extent. */
static int probe(MPI_Datatype t, long long base, agx_flat *f)
{
    MPI_Aint tlb, text;
    int size, pos = 0, rc = -1;
    if (PMPI_Type_size(t, &size) != MPI_SUCCESS || PMPI_Type_get_true_extent(t, &tlb, &text) != MPI_SUCCESS ||
        text > AGX_FLAT_PROBE)
        return -1;
    if (size == 0)
        return 0;
    unsigned char *mark = calloc((size_t)text + 1, 1), *ones = malloc((size_t)size);
    if (mark && ones) {
        memset(ones, 0xff, (size_t)size);
        if (PMPI_Unpack(ones, size, &pos, mark - tlb, 1, t, MPI_COMM_SELF) == MPI_SUCCESS) {
            long long covered = 0;
            rc = 0;
            for (MPI_Aint i = 0; i < text && !rc; i++)
                if (mark[i]) {
                    MPI_Aint j = i;
                    while (j < text && mark[j])
                        j++;
                    rc = add(f, base + tlb + i, j - i);
                    covered += j - i;
                    i = j;
                }
            if (covered != size) /* overlapping map: not a file type */
                rc = -1;
        }
    }
    free(mark);
    free(ones);
    return rc;
}

static void free_types(MPI_Datatype *types, int n)
{
    for (int i = 0; i < n; i++) {
        int ni, na, nd, comb;
        PMPI_Type_get_envelope(types[i], &ni, &na, &nd, &comb);
        if (comb != MPI_COMBINER_NAMED)
            PMPI_Type_free(&types[i]);
    }
}

static int flatten_at(MPI_Datatype t, long long base, agx_flat *f, int depth);

/* n consecutive elements of extent ext whose runs are sub's, from byte at. */
static int rep(agx_flat *f, const agx_flat *sub, long long ext, long long at, long long n)
{
    if (sub->n == 1 && sub->off[0] == 0 && sub->len[0] == ext) /* dense: one run */
        return add(f, at, n * ext);
    for (long long j = 0; j < n; j++)
        if (append(f, sub, at + j * ext))
            return -1;
    return 0;
}

/* count blocks of blen[i] (blen NULL: blen1) elements of old, block i at base + disp[i]
 * bytes (disp NULL: i * stride); old flattened once. */
static int blocks(MPI_Datatype old, long long base, long long count, const long long *blen, long long blen1,
                  const long long *disp, long long stride, agx_flat *f, int depth)
{
    MPI_Aint lb, ext;
    agx_flat sub = {0};
    int rc = PMPI_Type_get_extent(old, &lb, &ext) != MPI_SUCCESS || flatten_at(old, 0, &sub, depth + 1);
    for (long long i = 0; i < count && !rc; i++)
        rc = rep(f, &sub, ext, base + (disp ? disp[i] : i * stride), blen ? blen[i] : blen1);
    agx_flat_free(&sub);
    return rc ? -1 : 0;
}

/* subarray: the elements of the sub-box in memory order, a row at a time: the fastest
 * dimension's, and the next ones' too while the dimensions inside them are whole (BTIO
 * through PnetCDF: rows of 5 values over whole x-lines, 24x fewer rows to walk). */
static int subarray(const int *ints, MPI_Datatype old, long long base, agx_flat *f, int depth)
{
    int nd = ints[0], order = ints[1 + 3 * nd], rc = 0;
    const int *sizes = ints + 1, *sub = ints + 1 + nd, *start = ints + 1 + 2 * nd;
    MPI_Aint lb, ext;
    if (nd < 1 || nd > 32 || PMPI_Type_get_extent(old, &lb, &ext) != MPI_SUCCESS)
        return -1;
    long long mult[32], idx[32] = {0}, rows = 1, row = 1;
    int fast = order == MPI_ORDER_C ? nd - 1 : 0, step = order == MPI_ORDER_C ? -1 : 1, in = 0, whole = 1;
    for (int k = 0, d = fast; k < nd; k++, d += step) { /* from the fastest dimension out */
        mult[d] = k == 0 ? 1 : mult[d - step] * sizes[d - step];
        if (sub[d] == 0)
            return 0;
        if (whole) /* in the row: every dimension inside this one is whole */
            row *= sub[d], in = k + 1, whole = sub[d] == sizes[d];
        else
            rows *= sub[d];
    }
    agx_flat el = {0};
    if (flatten_at(old, 0, &el, depth + 1))
        return -1;
    for (long long r = 0; r < rows && !rc; r++) {
        long long at = 0;
        for (int d = 0; d < nd; d++)
            at += (start[d] + idx[d]) * mult[d];
        rc = rep(f, &el, ext, base + at * ext, row);
        for (int k = in, d = fast + in * step; k < nd; k++, d += step) /* odometer, next-fastest first */
            if (++idx[d] < sub[d])
                break;
            else
                idx[d] = 0;
    }
    agx_flat_free(&el);
    return rc ? -1 : 0;
}

static int flatten_at(MPI_Datatype t, long long base, agx_flat *f, int depth)
{
    int ni, na, nd, comb, rc = -1;
    if (depth > 32 || PMPI_Type_get_envelope(t, &ni, &na, &nd, &comb) != MPI_SUCCESS)
        return -1;
    if (comb == MPI_COMBINER_NAMED)
        return probe(t, base, f);
    int *ints = malloc(sizeof(int) * (size_t)(ni + 1));
    MPI_Aint *aints = malloc(sizeof(MPI_Aint) * (size_t)(na + 1));
    MPI_Datatype *types = malloc(sizeof(MPI_Datatype) * (size_t)(nd + 1));
    size_t nb = (size_t)(ni + na + 1);
    long long *bl = malloc(sizeof(long long) * 2 * nb), *dp = bl ? bl + nb : NULL;
    if (!ints || !aints || !types || !bl ||
        PMPI_Type_get_contents(t, ni, na, nd, ints, aints, types) != MPI_SUCCESS) {
        free(ints), free(aints), free(types), free(bl);
        return -1;
    }
    MPI_Aint lb, ext = 0;
    if (nd > 0)
        PMPI_Type_get_extent(types[0], &lb, &ext);
    switch (comb) {
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_RESIZED: /* the data stay where they are; lb and extent only space instances */
        rc = flatten_at(types[0], base, f, depth + 1);
        break;
    case MPI_COMBINER_CONTIGUOUS:
        rc = blocks(types[0], base, 1, NULL, ints[0], NULL, 0, f, depth);
        break;
    case MPI_COMBINER_VECTOR:
    case MPI_COMBINER_HVECTOR:
        rc = blocks(types[0], base, ints[0], NULL, ints[1], NULL,
                    comb == MPI_COMBINER_VECTOR ? (long long)ints[2] * ext : (long long)aints[0], f, depth);
        break;
    case MPI_COMBINER_INDEXED:
    case MPI_COMBINER_HINDEXED:
        for (int i = 0; i < ints[0]; i++)
            bl[i] = ints[1 + i], dp[i] = comb == MPI_COMBINER_INDEXED ? (long long)ints[1 + ints[0] + i] * ext
                                                                      : (long long)aints[i];
        rc = blocks(types[0], base, ints[0], bl, 0, dp, 0, f, depth);
        break;
    case MPI_COMBINER_INDEXED_BLOCK:
    case MPI_COMBINER_HINDEXED_BLOCK:
        for (int i = 0; i < ints[0]; i++)
            dp[i] = comb == MPI_COMBINER_INDEXED_BLOCK ? (long long)ints[2 + i] * ext : (long long)aints[i];
        rc = blocks(types[0], base, ints[0], NULL, ints[1], dp, 0, f, depth);
        break;
    case MPI_COMBINER_STRUCT:
        rc = 0;
        for (int i = 0; i < ints[0] && !rc; i++)
            rc = blocks(types[i], base + aints[i], 1, NULL, ints[1 + i], NULL, 0, f, depth);
        break;
    case MPI_COMBINER_SUBARRAY:
        rc = subarray(ints, types[0], base, f, depth);
        break;
    default: /* darray, Fortran-90 types: MPI's own answer, if small enough */
        rc = probe(t, base, f);
        break;
    }
    free_types(types, nd);
    free(ints), free(aints), free(types), free(bl);
    return rc;
}

int agx_flatten(MPI_Datatype t, agx_flat *f)
{
    MPI_Aint lb, ext;
    int size;
    memset(f, 0, sizeof *f);
    if (PMPI_Type_size(t, &size) != MPI_SUCCESS || PMPI_Type_get_extent(t, &lb, &ext) != MPI_SUCCESS)
        return -1;
    f->size = size, f->extent = ext;
    long long sum = 0;
    if (flatten_at(t, 0, f, 0))
        goto fail;
    for (long long i = 0; i < f->n; i++) {
        if (i > 0 && f->off[i] < f->off[i - 1] + f->len[i - 1]) /* not monotone: not a file type */
            goto fail;
        sum += f->len[i];
    }
    if (sum != size)
        goto fail;
    return 0;
fail:
    agx_flat_free(f);
    return -1;
}

void agx_flat_free(agx_flat *f)
{
    free(f->off);
    free(f->len);
    memset(f, 0, sizeof *f);
}
