/*
 * Differential test of agx_allreduce against PMPI_Allreduce: every algorithm of the
 * registry (forced per communicator), counts 0, 1, odd, not divisible by p, and large
 * (scratch beyond the stack, so the agreed allocation runs), in place and not, over
 * integer, pair, floating-point and derived types, predefined and user-defined ops.
 * Checked per case: exact equality with PMPI for exact reductions (integer types,
 * MINLOC); for floating point the same bits on every rank and in a second call, and
 * closeness to PMPI (the reduction order may differ from the library's); a
 * non-commutative user op (2x2 matrix products mod 2^32) exactly against the product in
 * rank order; which algorithm ran (the registry's fallback where an algorithm may not
 * run); messages sent against the closed forms of docs/algorithms.md. Prints the seed.
 */
#include "agx.h"
#include "mpitest.h"

#include <glob.h>
#include <math.h>
#include <stdint.h>
#include <unistd.h>

static int rank, size, passed, failed;
static MPI_Comm comm; /* where the cases run: MPI_COMM_WORLD, or a duplicate with emulated regions */

/* Rank r's element i of case c: the same on every rank, so any rank can compute any
 * contribution. */
static unsigned val(unsigned seed, int c, int r, int i)
{
    unsigned s = seed ^ (unsigned)(c * 7919 + r * 104729 + i * 15485863);
    mt_rand(&s);
    return mt_rand(&s);
}

/* 2x2 matrices of uint32 (mod 2^32): associative, not commutative. */
static void matmul(void *in, void *inout, int *len, MPI_Datatype *t)
{
    (void)t;
    uint32_t *a = in, *b = inout;
    for (int k = 0; k < *len; k++, a += 4, b += 4) {
        uint32_t c[4] = {a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3], a[2] * b[0] + a[3] * b[2],
                         a[2] * b[1] + a[3] * b[3]};
        memcpy(b, c, sizeof c);
    }
}

/* A commutative user op on ints (wrapping sum): agx reduces it in its own order. */
static void usum(void *in, void *inout, int *len, MPI_Datatype *t)
{
    (void)t;
    for (int k = 0; k < *len; k++)
        ((unsigned *)inout)[k] += ((unsigned *)in)[k];
}

enum { C_INT_SUM, C_VEC_SUM, C_DBL_SUM, C_2INT_MINLOC, C_LL_PROD, C_UNS_BXOR, C_FLT_MAX, C_MATMUL, C_USUM, NCASES };
static const char *cname[NCASES] = {"INT SUM", "vector(3,1,2,INT) SUM", "DOUBLE SUM", "2INT MINLOC",
                                    "LONG_LONG PROD", "UNSIGNED BXOR", "FLOAT MAX", "user matmul (non-commutative)",
                                    "user wrapping sum (commutative)"};
static MPI_Datatype ctype[NCASES];
static MPI_Op cop[NCASES];
static int exact_case[NCASES] = {1, 1, 0, 1, 1, 1, 0, 0, 0}, comm_case[NCASES] = {1, 1, 1, 1, 1, 1, 1, 0, 1};

/* Fill count elements of case c for rank r into buf (element = the type's extent). */
static void fill(unsigned seed, int c, int r, int count, void *buf)
{
    for (int i = 0; i < count; i++) {
        unsigned v = val(seed, c, r, i);
        switch (c) {
        case C_INT_SUM: ((int *)buf)[i] = (int)(v % 2001) - 1000; break;
        case C_VEC_SUM: for (int j = 0; j < 5; j++) ((int *)buf)[5 * i + j] = j % 2 ? -7 : (int)(v >> j) % 1000; break;
        case C_DBL_SUM: ((double *)buf)[i] = ((double)v / 4294967296.0 - 0.5) * pow(10.0, (double)(v % 13) - 6); break;
        case C_2INT_MINLOC: ((int *)buf)[2 * i] = (int)(v % 5), ((int *)buf)[2 * i + 1] = r; break;
        case C_LL_PROD: ((long long *)buf)[i] = (long long)(v % 5) - 2; break;
        case C_UNS_BXOR: ((unsigned *)buf)[i] = v; break;
        case C_FLT_MAX: ((float *)buf)[i] = (float)v / 1e6f - 1000.0f; break;
        case C_MATMUL: for (int j = 0; j < 4; j++) ((uint32_t *)buf)[4 * i + j] = val(seed, c, r, 4 * i + j); break;
        case C_USUM: ((unsigned *)buf)[i] = v; break;
        }
    }
}

static size_t elem_bytes(int c)
{
    MPI_Aint lb, ext;
    MPI_Type_get_extent(ctype[c], &lb, &ext);
    return (size_t)ext;
}

static int flog2(int n)
{
    int l = 0;
    while ((2 << l) <= n)
        l++;
    return l;
}

/* dissemination_node's (and dissemination_shm's) messages (docs/algorithms.md): nl lanes, min(smallest region,
 * elements, max(1, bytes / AGX_AR_LANE_BYTES)); a lane sends its block to the other
 * lanes, (l + popcount(R) - 1) dissemination messages, its block to the rest of its
 * region; the others send nl blocks. */
static long long node_msgs(int c, int count, int shm)
{
    int *reg = malloc(sizeof(int) * (size_t)size), nr = 0, mine = 0, local = 0, mn = size;
    agx_comm_regions(comm, reg);
    for (int r = 0; r < size; r++) {
        int first = 1, n = 0;
        for (int q = 0; q < r; q++)
            first &= reg[q] != reg[r];
        for (int q = 0; q < size; q++)
            n += reg[q] == reg[r];
        nr += first;
        mn = n < mn ? n : mn;
        mine = r == rank ? n : mine;
        local += r < rank && reg[r] == reg[rank];
    }
    free(reg);
    const char *lb = getenv("AGX_AR_LANE_BYTES");
    int tsize;
    MPI_Type_size(ctype[c], &tsize);
    long long n = c == C_VEC_SUM ? 3LL * count : count, nl = (long long)count * tsize / (lb ? atoi(lb) : 4096);
    nl = nl < 1 ? 1 : nl > mn ? mn : nl > n ? n : nl;
    long long dis = nr > 1 ? flog2(nr) + __builtin_popcount((unsigned)nr) - 1 : 0;
    if (shm) /* dissemination_shm: the lanes' dissemination only; the node's parts are loads */
        return local >= nl ? 0 : dis;
    if (local >= nl)
        return nl;
    return (nl - 1) + dis + (mine - 1);
}

/* The expected messages sent by this rank (closed forms), or -1 where not checked. */
static long long expected_msgs(const char *alg, int p, int r)
{
    int l = 0, p2 = 1;
    while ((2 << l) <= p)
        l++;
    p2 = 1 << l;
    int e = p - p2;
    if (p == 1)
        return 0;
    if (!strcmp(alg, "dissemination"))
        return l + __builtin_popcount((unsigned)p) - 1;
    if (!strcmp(alg, "recursive_doubling"))
        return r < 2 * e ? (r % 2 ? l + 1 : 1) : l;
    if (!strcmp(alg, "rabenseifner"))
        return r < 2 * e ? (r % 2 ? 2 * l + 1 : 1) : 2 * l;
    if (!strcmp(alg, "ring"))
        return 2 * (p - 1);
    return -1;
}

static void one(unsigned seed, const char *alg, int c, int count, int in_place)
{
    size_t eb = elem_bytes(c), n = eb * (size_t)count + 1;
    char *sb = malloc(n), *rb = malloc(n), *rb2 = malloc(n), *ref = malloc(n), *r0 = malloc(n);
    const char *ran = "";
    fill(seed, c, rank, count, sb);
    memcpy(rb, sb, n);
    agx_stats_reset();
    int rc = agx_allreduce(in_place ? MPI_IN_PLACE : sb, rb, count, ctype[c], cop[c], comm);
    agx_stats st;
    agx_stats_get(&st);
    agx_comm_last_algorithm(comm, AGX_OP_ALLREDUCE, &ran);
    memcpy(rb2, sb, n);
    agx_allreduce(in_place ? MPI_IN_PLACE : sb, rb2, count, ctype[c], cop[c], comm);
    memcpy(ref, sb, n); /* holes of derived types: the same on both sides */
    if (c == C_VEC_SUM) { /* Open MPI 4.1 refuses MPI_SUM on derived types: its ints */
        int *e = malloc(sizeof(int) * (size_t)(3 * count + 1));
        for (int i = 0; i < 3 * count; i++)
            e[i] = ((int *)sb)[5 * (i / 3) + 2 * (i % 3)];
        PMPI_Allreduce(MPI_IN_PLACE, e, 3 * count, MPI_INT, MPI_SUM, comm);
        for (int i = 0; i < 3 * count; i++)
            ((int *)ref)[5 * (i / 3) + 2 * (i % 3)] = e[i];
        free(e);
    } else
        PMPI_Allreduce(sb, ref, count, ctype[c], cop[c], comm);
    memcpy(r0, rb, n);
    MPI_Bcast(r0, (int)n, MPI_BYTE, 0, comm);
    int dissem = !strncmp(alg, "dissemination", 13); /* and dissemination_node / _radix */
    int eligible = (comm_case[c] || (strcmp(alg, "ring") && strcmp(alg, "rabenseifner") && !dissem)) &&
                   (exact_case[c] || !dissem);
    const char *expect = eligible ? alg : "recursive_doubling";
    CHECK(rc == MPI_SUCCESS && !strcmp(ran, expect), "%s, %s, count %d: rc %d, ran %s, expected %s", alg,
          cname[c], count, rc, ran, expect);
    CHECK(!memcmp(rb, r0, eb * (size_t)count) && !memcmp(rb, rb2, eb * (size_t)count),
          "%s, %s, count %d, %s: not the same bits on every rank and in both calls", alg, cname[c], count,
          in_place ? "in place" : "separate buffers");
    int ok = 1;
    if (c == C_MATMUL) { /* the product in rank order, computed here */
        uint32_t *acc = malloc(n), *x = malloc(n);
        fill(seed, c, size - 1, count, acc);
        for (int r = size - 2; r >= 0; r--) {
            fill(seed, c, r, count, x);
            matmul(x, acc, &count, NULL); /* acc = x_r * acc */
        }
        ok = !memcmp(acc, rb, eb * (size_t)count);
        free(acc), free(x);
    } else if (c == C_DBL_SUM) {
        double *x = malloc(n), *mag = calloc((size_t)count + 1, sizeof(double));
        for (int r = 0; r < size; r++) { /* sum of |x_r[i]|: the rounding errors' scale */
            fill(seed, c, r, count, x);
            for (int i = 0; i < count; i++)
                mag[i] += fabs(x[i]);
        }
        for (int i = 0; i < count && ok; i++)
            ok = fabs(((double *)rb)[i] - ((double *)ref)[i]) <= 4 * size * 1.2e-16 * mag[i];
        free(x), free(mag);
    } else {
        ok = !memcmp(rb, ref, eb * (size_t)count);
        if (c == C_VEC_SUM) /* the holes of the vector type keep the caller's values */
            for (int i = 0; i < count && ok; i++)
                ok = ((int *)rb)[5 * i + 1] == -7 && ((int *)rb)[5 * i + 3] == -7;
    }
    CHECK(ok, "%s, %s, count %d, %s: result differs from %s", alg, cname[c], count,
          in_place ? "in place" : "separate buffers", c == C_MATMUL ? "the rank-order product" : "PMPI_Allreduce");
    long long em = count > 0 && !strcmp(ran, alg)
                       ? !strcmp(alg, "dissemination_node") ? node_msgs(c, count, 0)
                         /* derived types: dissemination_shm runs dissemination_node */
                         : !strcmp(alg, "dissemination_shm") ? node_msgs(c, count, c != C_VEC_SUM)
                         : expected_msgs(alg, size, rank)
                       : -1;
    if (em >= 0)
        CHECK((long long)(st.msgs_local + st.msgs_nonlocal) == em, "%s, count %d: %llu messages sent, the "
              "closed form says %lld", alg, count, st.msgs_local + st.msgs_nonlocal, em);
    free(sb), free(rb), free(rb2), free(ref), free(r0);
}

/* dissemination_node, dissemination_shm (the regions share memory here: one machine) and
 * dissemination_radix across emulated regions (AGX_REGION_SIZE on a duplicate; regions
 * are fixed at a communicator's first call, as are the parameters: one communicator per
 * setting), with the default lane size and 8 bytes per lane (several lanes from 2
 * elements on). */
static void node_cases(unsigned seed, int quick)
{
    static const int cases[] = {C_INT_SUM, C_VEC_SUM, C_UNS_BXOR, C_2INT_MINLOC, C_DBL_SUM};
    int counts[] = {1, 2, 7, size + 1, 100, 1500}, ncounts = quick ? 3 : 6;
    for (int rs = 1; rs <= 4 && rs <= size; rs++) {
        char v[16];
        snprintf(v, sizeof v, "%d", rs);
        setenv("AGX_REGION_SIZE", v, 1);
        for (int lb = 0; lb < 5; lb++) { /* node, shm: default lanes, 8 bytes per lane; radix */
            const char *alg = lb < 2 ? "dissemination_node" : lb < 4 ? "dissemination_shm" : "dissemination_radix";
            if (lb == 1 || lb == 3)
                setenv("AGX_AR_LANE_BYTES", "8", 1);
            MPI_Comm_dup(MPI_COMM_WORLD, &comm); /* reads the parameter at its first call */
            agx_comm_set_algorithm(comm, AGX_OP_ALLREDUCE, alg);
            for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
                for (int k = 0; k < ncounts; k++)
                    one(seed + (unsigned)(rs * 100 + lb * 50 + k), alg, cases[c], counts[k], k % 2);
            MPI_Comm_free(&comm);
            unsetenv("AGX_AR_LANE_BYTES");
        }
        if (size / rs >= 2) { /* the default across regions: radix below 8 KiB, shm above, where exact */
            MPI_Comm_dup(MPI_COMM_WORLD, &comm);
            one(seed, "dissemination_radix", C_INT_SUM, 1500, 0);
            one(seed, "dissemination_shm", C_INT_SUM, 2048, 1);
            one(seed, "recursive_doubling", C_DBL_SUM, 7, 1);
            one(seed, size > 1 ? "rabenseifner" : "recursive_doubling", C_DBL_SUM, 1500, 0);
            MPI_Comm_free(&comm);
        }
        unsetenv("AGX_REGION_SIZE");
    }
    comm = MPI_COMM_WORLD;
}

/* dissemination_shm's POSIX segments are unlinked once mapped: none of the names this
 * rank made (/dev/shm/agx.PID.N) is left while the segments are still in use. */
static void leftover_segments(void)
{
    char pat[64];
    glob_t g;
    snprintf(pat, sizeof pat, "/dev/shm/agx.%d.*", (int)getpid());
    int n = glob(pat, 0, NULL, &g) == 0 ? (int)g.gl_pathc : 0;
    if (n)
        printf("FAIL rank %d: %d node-shared segment name(s) left, %s first\n", rank, n, g.gl_pathv[0]), failed++;
    else
        passed++;
    globfree(&g);
}

int main(int argc, char **argv)
{
    mt_run run;
    setenv("AGX_FALLBACK", "silent", 1);
    mt_start(&argc, &argv, &run);
    rank = run.rank, size = run.size, comm = MPI_COMM_WORLD;
    if (rank == 0)
        printf("test_allreduce: p = %d, seed %u (AGX_TEST_SEED=%u to repeat)\n", size, run.seed, run.seed);
    agx_stats_enable(1);
    MPI_Datatype vec, mat;
    MPI_Type_vector(3, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    MPI_Type_contiguous(4, MPI_UINT32_T, &mat);
    MPI_Type_commit(&mat);
    MPI_Datatype types[NCASES] = {MPI_INT, vec, MPI_DOUBLE, MPI_2INT, MPI_LONG_LONG, MPI_UNSIGNED, MPI_FLOAT, mat,
                                  MPI_UNSIGNED};
    MPI_Op ops[NCASES] = {MPI_SUM, MPI_SUM, MPI_SUM, MPI_MINLOC, MPI_PROD, MPI_BXOR, MPI_MAX, MPI_OP_NULL,
                          MPI_OP_NULL};
    MPI_Op_create(matmul, 0, &ops[C_MATMUL]);
    MPI_Op_create(usum, 1, &ops[C_USUM]);
    memcpy(ctype, types, sizeof types);
    memcpy(cop, ops, sizeof ops);
    int counts[] = {0, 1, 7, size + 1, 3 * size - 1, 100, 1500};
    int ncounts = run.quick ? 4 : (int)(sizeof counts / sizeof counts[0]);
    unsigned rs = run.seed;
    for (int a = 0; a < agx_algorithm_count(AGX_OP_ALLREDUCE, AGX_KIND_INTRA); a++) {
        const char *name, *desc;
        agx_algorithm_info(AGX_OP_ALLREDUCE, AGX_KIND_INTRA, a, &name, &desc);
        if (run.only && !strstr(run.only, name))
            continue;
        agx_comm_set_algorithm(MPI_COMM_WORLD, AGX_OP_ALLREDUCE, name);
        for (int c = 0; c < NCASES; c++)
            /* native is the library's: Open MPI 4.1 refuses predefined ops on derived types */
            if (c != C_VEC_SUM || strcmp(name, "native"))
            for (int k = 0; k < ncounts; k++)
                one(run.seed + (unsigned)(a * 1000 + c * 10 + k), name, c, counts[k], mt_rand(&rs) % 2);
    }
    node_cases(run.seed, run.quick);
    agx_comm_set_algorithm(MPI_COMM_WORLD, AGX_OP_ALLREDUCE, "auto");
    one(run.seed, "dissemination", C_INT_SUM, 7, 0); /* the default: dissemination for a short exact one */
    one(run.seed, "recursive_doubling", C_DBL_SUM, 7, 1);  /* ... recursive doubling for doubles */
    leftover_segments();
    MPI_Op_free(&ops[C_MATMUL]);
    MPI_Op_free(&ops[C_USUM]);
    MPI_Type_free(&vec);
    MPI_Type_free(&mat);
    if (rank == 0)
        printf("%s: %d passed, %d failed\n", failed ? "FAIL" : "ok", passed, failed);
    MPI_Finalize();
    return failed != 0;
}
