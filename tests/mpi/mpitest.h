/* Helpers shared by the MPI tests: a seeded generator and check macros. */
#ifndef AGX_MPITEST_H
#define AGX_MPITEST_H
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <mpi.h>

/* xorshift32: small, deterministic across platforms */
static inline unsigned mt_rand(unsigned *s)
{
    unsigned x = *s ? *s : 0x9E3779B9u;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return *s = x;
}

/* AGX_TEST_SEED if set, else a fresh seed (rank 0's is broadcast by the caller). */
static inline unsigned mt_seed_from_env(void)
{
    const char *s = getenv("AGX_TEST_SEED");
    return s ? (unsigned)strtoul(s, NULL, 0) : (unsigned)time(NULL);
}
/* Bytes a buffer of `elems` elements of t needs from its start. */
static inline size_t mt_span(MPI_Datatype t, long long elems)
{
    MPI_Aint lb, ext, tlb, text;
    MPI_Type_get_extent(t, &lb, &ext);
    MPI_Type_get_true_extent(t, &tlb, &text);
    return elems > 0 ? (size_t)((elems - 1) * ext + tlb + text) : 0;
}

/* Displacements placing n blocks of counts[] in a random order with random gaps (0..3
 * elements, and 0..2 before the first); returns the end of the layout in elements. */
static inline long long mt_shuffled_displs(int n, const int *counts, int *displs, unsigned *rs)
{
    int *order = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
    long long off = mt_rand(rs) % 3, end = 0;
    for (int i = 0; i < n; i++)
        order[i] = i;
    for (int i = n - 1; i > 0; i--) {
        int j = (int)(mt_rand(rs) % (unsigned)(i + 1)), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    for (int k = 0; k < n; k++) {
        displs[order[k]] = (int)off;
        off += counts[order[k]] + mt_rand(rs) % 4;
    }
    for (int i = 0; i < n; i++)
        if (displs[i] + counts[i] > end)
            end = displs[i] + counts[i];
    free(order);
    return end;
}

/* Regular displacements i * count; returns the end in elements. */
static inline long long mt_regular_displs(int n, const int *counts, int *displs)
{
    for (int i = 0; i < n; i++)
        displs[i] = i * counts[0];
    return (long long)n * counts[0];
}
#endif
