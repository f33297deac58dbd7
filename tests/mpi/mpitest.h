/* Helpers shared by the MPI tests: a seeded generator and check macros. */
#ifndef AGX_MPITEST_H
#define AGX_MPITEST_H
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

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
#endif
