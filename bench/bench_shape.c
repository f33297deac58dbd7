/*
 * What agx-bench moves: the shape of one size for this rank (blocks, the KangTraff19
 * intergroup settings 1-8) and Bienz's model of the non-local traffic.
 */
#include "bench.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* KangTraff19 settings: group sizes for n ranks */
void setting_groups(int setting, int n, int *p, int *q)
{
    int equal = setting == 1 || setting == 5 || setting == 6;
    *p = equal ? n - n / 2 : (int)(n * 25.0 / 32.0 + 0.5);
    if (*p >= n)
        *p = n - 1;
    if (*p < 1)
        *p = 1;
    *q = n - *p;
}

/* Block of rank i of a group of n (g: 0 = A, 1 = B) in a setting, in elements. */
static int setting_block(int setting, int g, int i, int n, long long size_elems)
{
    switch (setting) {
    case 3: return (int)(g == 0 ? size_elems : size_elems / 4);
    case 4: return (int)(g == 1 ? size_elems : size_elems / 4);
    case 6:
    case 8: return (int)(n > 1 ? size_elems * i / (n - 1) : size_elems);
    default: return (int)size_elems;
    }
}

static unsigned char pattern(int src, long long j, int iter)
{
    return (unsigned char)(src * 131 + j * 7 + iter * 13 + 1);
}

/* allreduce: element i of rank r is r*131 + i*7 + it*13 + 1 (MPI_UNSIGNED, MPI_SUM) */
static unsigned ar_value(int r, long long i, int it) { return (unsigned)r * 131u + (unsigned)i * 7u + (unsigned)it * 13u + 1u; }

void bench_fill(const options *o, const shape *sh, unsigned char *sbuf, int rank, int it)
{
    for (long long j = 0; o->op == AGX_OP_ALLREDUCE && j < sh->mine; j++)
        ((unsigned *)sbuf)[j] = ar_value(rank, j, it);
    for (long long j = 0; o->op != AGX_OP_ALLREDUCE && j < (long long)sh->mine * sh->unit; j++)
        sbuf[j] = pattern(rank, j, it);
}

int bench_check(const options *o, const shape *sh, const unsigned char *rbuf, int rank, int nprocs, int it,
                const char *alg, long long bytes)
{
    unsigned np = (unsigned)nprocs, tri = 131u * (np * (np - 1) / 2u);
    for (long long j = 0; o->op == AGX_OP_ALLREDUCE && j < sh->mine; j++)
        if (((const unsigned *)rbuf)[j] != tri + np * (ar_value(0, j, it))) {
            fprintf(stderr, "agx-bench: rank %d: allreduce %s %lld B: wrong element %lld at iteration %d\n", rank,
                    alg, bytes, j, it);
            return 0;
        }
    for (int i = 0; o->op != AGX_OP_ALLREDUCE && i < sh->n; i++)
        for (long long j = 0; j < (long long)sh->counts[i] * sh->unit; j++)
            if (rbuf[(long long)sh->displs[i] * sh->unit + j] != pattern(sh->src[i], j, it)) {
                fprintf(stderr, "agx-bench: rank %d: %s %s %lld B: wrong byte %lld of block %d at iteration %d\n",
                        rank, agx_op_name(o->op), alg, bytes, j, i, it);
                return 0;
            }
    return 1;
}

const char *const bench_dist_names[BENCH_NDIST] = {"uniform", "linear", "regular", "decreasing", "broadcast",
                                                   "random"};

/* Rank i's count under distribution d for `bytes` per process on average (SharedNotify
 * Sec. II-B: regular m_i = c; linearly decreasing m_i = 2c(p-1-i)/(p-1); broadcast m_0 =
 * p c, the others 0). */
static int dist_count(int d, long long bytes, int i, int p, unsigned *rs)
{
    switch (d) {
    case BENCH_LINEAR: return (int)(bytes * 2 * (i + 1) / (p + 1));
    case BENCH_DECREASING: return p == 1 ? (int)bytes : (int)(bytes * 2 * (p - 1 - i) / (p - 1));
    case BENCH_BROADCAST: return i == 0 ? (int)(bytes * p < INT_MAX ? bytes * p : INT_MAX) : 0;
    case BENCH_RANDOM:
        *rs ^= *rs << 13, *rs ^= *rs >> 17, *rs ^= *rs << 5;
        return *rs % 4 ? (int)(*rs % (unsigned)(2 * bytes + 1)) : 0;
    default: return (int)bytes;
    }
}

void make_shape(const options *o, int rank, int nprocs, long long bytes, shape *sh)
{
    memset(sh, 0, sizeof *sh);
    if (o->op == AGX_OP_ALLREDUCE) { /* one vector of MPI_UNSIGNED, bytes / 4 of them */
        sh->type = MPI_UNSIGNED;
        sh->unit = 4;
        sh->mine = (int)(bytes / 4 < INT_MAX ? bytes / 4 : INT_MAX);
        sh->total = sh->mine;
        return;
    }
    if (!o->setting) {
        int dist = o->op == AGX_OP_ALLGATHERV ? o->dist : BENCH_UNIFORM; /* allgather is uniform */
        unsigned rs = 12345; /* random: the same counts on every rank and every run */
        sh->type = MPI_BYTE;
        sh->unit = 1;
        if (bytes > INT_MAX / 2) { /* counts are ints: beyond that, KiB elements */
            MPI_Type_contiguous(1024, MPI_BYTE, &sh->type);
            MPI_Type_commit(&sh->type);
            sh->unit = 1024;
            sh->owned_type = 1;
            bytes /= 1024;
        }
        sh->n = nprocs;
        sh->counts = malloc(sizeof(int) * nprocs);
        sh->displs = malloc(sizeof(int) * nprocs);
        sh->src = malloc(sizeof(int) * nprocs);
        for (int i = 0; i < nprocs; i++) {
            sh->counts[i] = dist_count(dist, bytes, i, nprocs, &rs);
            sh->displs[i] = (int)sh->total;
            sh->src[i] = i;
            sh->total += sh->counts[i];
        }
        sh->mine = sh->counts[rank];
        return;
    }
    sh->type = MPI_INT;
    sh->unit = 4;
    setting_groups(o->setting, nprocs, &sh->p, &sh->q);
    int isB = rank >= sh->p, lrank = isB ? rank - sh->p : rank;
    int nG = isB ? sh->q : sh->p, nH = isB ? sh->p : sh->q;
    long long elems = bytes / 4;
    sh->mine = setting_block(o->setting, isB, lrank, nG, elems);
    sh->n = nH;
    sh->counts = malloc(sizeof(int) * nH);
    sh->displs = malloc(sizeof(int) * nH);
    sh->src = malloc(sizeof(int) * nH);
    for (int h = 0; h < nH; h++) {
        sh->counts[h] = setting_block(o->setting, !isB, h, nH, elems);
        sh->displs[h] = (int)sh->total;
        sh->src[h] = isB ? h : sh->p + h;
        sh->total += sh->counts[h];
    }
    sh->kA0 = 4.0 * setting_block(o->setting, 0, 0, sh->p, elems);
    sh->kB0 = 4.0 * setting_block(o->setting, 1, 0, sh->q, elems);
    for (int i = 0; i < sh->p; i++)
        sh->KA += 4.0 * setting_block(o->setting, 0, i, sh->p, elems);
    for (int i = 0; i < sh->q; i++)
        sh->KB += 4.0 * setting_block(o->setting, 1, i, sh->q, elems);
}

void free_shape(shape *sh)
{
    if (sh->owned_type)
        MPI_Type_free(&sh->type);
    free(sh->counts);
    free(sh->displs);
    free(sh->src);
}

/* multileader's leaders per region as the run sets them (AGX_LEADERS; 0: its default). */
int bench_leaders(void)
{
    const char *ld = getenv("AGX_LEADERS");
    return ld && atoi(ld) > 0 ? atoi(ld) : 0;
}

