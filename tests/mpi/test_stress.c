/*
 * Calls as real programs make them, checked without a synchronizing call between them
 * (issue 50: a reference PMPI_Allreduce after each call lines the ranks up again and hid
 * a race in dissemination_shm from every probe that used one).
 *   test_stress [--quick] [--seed S] [--calls N] [--delay US] [--pause US]
 * Sweep: for every operation (allreduce, allgather, allgatherv, alltoallv) and every
 * intra algorithm of its table, then the default: calls back to back whose sizes grow and
 * shrink (0 and 1 element among them) and whose element type alternates.
 * Random: N calls, each of a random operation, algorithm (half of them the default),
 * count, element type, reduction op and in-place-ness, drawn from the seed every rank
 * shares, so every rank makes the same calls. Ranks arrive at different times: each
 * sleeps 0..US microseconds (its own generator) before a quarter of the calls and after
 * an eighth, and agx itself pauses between the steps of its node-shared protocols
 * (AGX_TEST_PAUSE=SEED:US:PERCENT, set here unless given).
 * Every input element is a function of (call, rank, position), so each rank computes the
 * result it expects itself: nothing but the calls under test runs between them. Wrong
 * bytes (gaps of the receive layout included) and error codes are counted; one reduction
 * at the end decides. The seed is printed; --seed S replays a run.
 */
#include "mpitest.h"

#include <agx.h>
#include <stdint.h>
#include <unistd.h>

enum { T_INT, T_LLONG, T_SHORT, T_DOUBLE, T_UCHAR, NTYPES };
static MPI_Datatype ty(int k)
{
    return k == T_INT ? MPI_INT : k == T_LLONG ? MPI_LONG_LONG : k == T_SHORT ? MPI_SHORT
         : k == T_DOUBLE ? MPI_DOUBLE : MPI_UNSIGNED_CHAR;
}
static const char *tname[NTYPES] = {"MPI_INT", "MPI_LONG_LONG", "MPI_SHORT", "MPI_DOUBLE", "MPI_UNSIGNED_CHAR"};
static const int tsize[NTYPES] = {4, 8, 2, 8, 1};
enum { O_SUM, O_MAX, O_MIN, O_BXOR, NOPS };
static const char *oname[NOPS] = {"SUM", "MAX", "MIN", "BXOR"};

static void put(int k, void *b, long long i, long long v)
{
    switch (k) {
    case T_INT: ((int *)b)[i] = (int)v; break;
    case T_LLONG: ((long long *)b)[i] = v; break;
    case T_SHORT: ((short *)b)[i] = (short)v; break;
    case T_DOUBLE: ((double *)b)[i] = (double)v; break;
    default: ((unsigned char *)b)[i] = (unsigned char)v; break;
    }
}

static long long get(int k, const void *b, long long i)
{
    switch (k) {
    case T_INT: return ((const int *)b)[i];
    case T_LLONG: return ((const long long *)b)[i];
    case T_SHORT: return ((const short *)b)[i];
    case T_DOUBLE: return (long long)((const double *)b)[i];
    default: return ((const unsigned char *)b)[i];
    }
}

/* Element i of rank r's input to call t: in [-11, 11], or [0, 22] for MPI_UNSIGNED_CHAR
 * (MPICH 4.0.2 compares MPI_UNSIGNED_CHAR as signed in MIN and MAX: 2 MIN 249 = 249). */
static long long val(int k, unsigned t, int r, long long i)
{
    long long v = (long long)((t * 131u + (unsigned)r * 37u + (unsigned)i * 7u) % 23u);
    return k == T_UCHAR ? v : v - 11;
}

typedef struct {
    int op, alg, k, rop, inplace;  /* op: AGX_OP_*; alg: -1 default, else a table index */
    long long count;
    unsigned t;                    /* the call's number: inputs depend on it */
} call_t;

typedef struct {
    MPI_Comm comm;
    int rank, p, bad, errs;
    char *sbuf, *rbuf, *ebuf;      /* send, receive, expected */
    int *sc, *sd, *rc, *rd;
} ctx_t;

static long long blk(const call_t *c, int s, int d)
{ /* elements rank s sends rank d: allgatherv's block of s when d < 0 */
    if (c->op == AGX_OP_ALLGATHERV)
        return c->count * ((unsigned)(s + (int)c->t) % 3u) / 2;
    return c->op == AGX_OP_ALLTOALLV ? c->count * ((unsigned)(s + 2 * d + (int)c->t) % 4u) / 3 : c->count;
}

static long long reduce_expect(const call_t *c, int p, long long i)
{
    long long acc = val(c->k, c->t, 0, i);
    for (int r = 1; r < p; r++) {
        long long x = val(c->k, c->t, r, i);
        acc = c->rop == O_SUM ? acc + x : c->rop == O_MAX ? (x > acc ? x : acc) : c->rop == O_MIN ? (x < acc ? x : acc)
                                                                                                : acc ^ x;
    }
    return acc;
}

static MPI_Op mop(int rop) { return rop == O_SUM ? MPI_SUM : rop == O_MAX ? MPI_MAX : rop == O_MIN ? MPI_MIN : MPI_BXOR; }

/* One call: inputs, the call, the check. */
static void run_call(ctx_t *x, const call_t *c)
{
    int p = x->p, me = x->rank, ts = tsize[c->k], rc = MPI_SUCCESS;
    MPI_Datatype t = ty(c->k);
    size_t rbytes = 0;
    const char *name = "auto";
    if (c->alg >= 0)
        agx_algorithm_info((agx_op)c->op, AGX_KIND_INTRA, c->alg, &name, NULL);
    agx_comm_set_algorithm(x->comm, (agx_op)c->op, name);
    if (c->op == AGX_OP_ALLREDUCE) {
        for (long long i = 0; i < c->count; i++) {
            put(c->k, c->inplace ? x->rbuf : x->sbuf, i, val(c->k, c->t, me, i));
            put(c->k, x->ebuf, i, reduce_expect(c, p, i));
        }
        rbytes = (size_t)c->count * (size_t)ts;
        rc = agx_allreduce(c->inplace ? MPI_IN_PLACE : x->sbuf, x->rbuf, (int)c->count, t, mop(c->rop), x->comm);
    } else {
        long long soff = 0, roff = 0;
        for (int q = 0; q < p; q++) { /* layouts: blocks in rank order, one element's gap after each */
            x->sc[q] = (int)blk(c, me, q), x->sd[q] = (int)soff, soff += x->sc[q] + 1;
            x->rc[q] = (int)(c->op == AGX_OP_ALLGATHERV ? blk(c, q, -1) : blk(c, q, me));
            x->rd[q] = c->op == AGX_OP_ALLGATHER ? (int)(q * c->count) : (int)roff;
            roff = x->rd[q] + x->rc[q] + (c->op == AGX_OP_ALLGATHER ? 0 : 1);
        }
        rbytes = (size_t)roff * (size_t)ts;
        memset(x->rbuf, 0x5A, rbytes);
        memset(x->ebuf, 0x5A, rbytes);
        for (int q = 0; q < p; q++)
            for (long long i = 0; i < x->rc[q]; i++) {
                long long from = c->op == AGX_OP_ALLTOALLV ? val(c->k, c->t, q, (long long)me * 100003 + i)
                                                           : val(c->k, c->t, q, i);
                put(c->k, x->ebuf, x->rd[q] + i, from);
                if (q == me && c->inplace)
                    put(c->k, x->rbuf, x->rd[q] + i, from);
            }
        for (int q = 0; q < p && c->op == AGX_OP_ALLTOALLV; q++)
            for (long long i = 0; i < x->sc[q]; i++)
                put(c->k, x->sbuf, x->sd[q] + i, val(c->k, c->t, me, (long long)q * 100003 + i));
        for (long long i = 0; i < x->rc[me] && c->op != AGX_OP_ALLTOALLV; i++)
            put(c->k, x->sbuf, i, val(c->k, c->t, me, i));
        const void *sb = c->inplace ? MPI_IN_PLACE : x->sbuf;
        if (c->op == AGX_OP_ALLGATHER)
            rc = agx_allgather(sb, (int)c->count, t, x->rbuf, (int)c->count, t, x->comm);
        else if (c->op == AGX_OP_ALLGATHERV)
            rc = agx_allgatherv(sb, x->rc[me], t, x->rbuf, x->rc, x->rd, t, x->comm);
        else
            rc = agx_alltoallv(x->sbuf, x->sc, x->sd, t, x->rbuf, x->rc, x->rd, t, x->comm);
    }
    if (rc != MPI_SUCCESS && x->errs++ < 5) {
        char s[MPI_MAX_ERROR_STRING];
        int n;
        agx_error_string(rc, s, &n);
        fprintf(stderr, "ERROR rank %d call %u %s %s count %lld %s: %s\n", me, c->t, agx_op_name((agx_op)c->op), name,
                c->count, tname[c->k], s);
    }
    if (rc == MPI_SUCCESS && memcmp(x->rbuf, x->ebuf, rbytes)) {
        size_t b = 0;
        while (x->rbuf[b] == x->ebuf[b])
            b++;
        if (x->bad++ < 5)
            fprintf(stderr, "WRONG rank %d call %u %s %s count %lld %s %s%s: byte %zu of %zu (element %zu): %lld, "
                    "expected %lld\n", me, c->t, agx_op_name((agx_op)c->op), name, c->count, tname[c->k],
                    c->op == AGX_OP_ALLREDUCE ? oname[c->rop] : "", c->inplace ? " in place" : "", b, rbytes,
                    b / (size_t)ts, get(c->k, x->rbuf, (long long)(b / (size_t)ts)),
                    get(c->k, x->ebuf, (long long)(b / (size_t)ts)));
    }
}

static void nap(unsigned *rs, int max_us, unsigned one_in)
{
    if (max_us > 0 && mt_rand(rs) % one_in == 0)
        usleep(mt_rand(rs) % (unsigned)(max_us + 1));
}

static const int ops[4] = {AGX_OP_ALLREDUCE, AGX_OP_ALLGATHER, AGX_OP_ALLGATHERV, AGX_OP_ALLTOALLV};
#define MAXCOUNT 16384
#define MAXGATHER 2048 /* elements per block of the data-moving operations */

int main(int argc, char **argv)
{
    int calls = 2000, delay = 300, pause = 100;
    for (int i = 1; i + 1 < argc; i++) {
        if (!strcmp(argv[i], "--calls"))
            calls = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--delay"))
            delay = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--pause"))
            pause = atoi(argv[i + 1]);
    }
    mt_run run;
    char spec[64];
    snprintf(spec, sizeof spec, "%u:%d:20", mt_seed_from_env(), pause);
    if (pause > 0)
        setenv("AGX_TEST_PAUSE", spec, 0); /* read by agx at its first pause */
    mt_start(&argc, &argv, &run);
    ctx_t x = {.rank = run.rank, .p = run.size};
    MPI_Comm_dup(MPI_COMM_WORLD, &x.comm);
    MPI_Comm_set_errhandler(x.comm, MPI_ERRORS_RETURN);
    size_t cap = (size_t)x.p * (MAXGATHER + 1) * 8 + (size_t)MAXCOUNT * 8 + 64;
    x.sbuf = malloc(cap), x.rbuf = malloc(cap), x.ebuf = malloc(cap);
    x.sc = malloc(4 * sizeof(int) * (size_t)x.p);
    x.sd = x.sc + x.p, x.rc = x.sd + x.p, x.rd = x.rc + x.p;
    if (run.rank == 0)
        printf("test_stress: %d ranks, seed %u, %d random calls, delays up to %d us, AGX_TEST_PAUSE=%s\n", x.p,
               run.seed, calls, delay, getenv("AGX_TEST_PAUSE") ? getenv("AGX_TEST_PAUSE") : "(none)");
    unsigned shared = run.seed, mine = run.seed ^ (0x9E3779B9u * (unsigned)(run.rank + 1));
    double t0 = MPI_Wtime();
    /* the sweep: every algorithm of every operation, sizes growing and shrinking */
    static const long long sizes[] = {10, 1024, 1, 0, 300, 4096, 10, 2048, 7, 16384, 2, 600};
    int nsizes = run.quick ? 6 : (int)(sizeof sizes / sizeof sizes[0]), swept = 0;
    unsigned t = 0;
    for (int o = 0; o < 4; o++)
        for (int a = -1; a < agx_algorithm_count((agx_op)ops[o], AGX_KIND_INTRA); a++)
            for (int s = 0; s < nsizes; s++, swept++) {
                call_t c = {.op = ops[o], .alg = a, .k = s % 2 ? T_LLONG : T_INT, .rop = O_SUM, .t = t++,
                            .count = ops[o] == AGX_OP_ALLREDUCE || sizes[s] <= MAXGATHER ? sizes[s] : MAXGATHER};
                nap(&mine, delay, 4);
                run_call(&x, &c);
            }
    /* the random calls */
    static const long long counts[] = {0, 1, 2, 3, 10, 33, 100, 257, 1000, 1024, 4096, 5000, 16384};
    for (int i = 0; i < calls; i++) {
        call_t c = {.op = ops[mt_rand(&shared) % 4], .t = t++};
        int nalg = agx_algorithm_count((agx_op)c.op, AGX_KIND_INTRA);
        c.alg = mt_rand(&shared) % 2 ? -1 : (int)(mt_rand(&shared) % (unsigned)nalg);
        c.count = counts[mt_rand(&shared) % (sizeof counts / sizeof counts[0])];
        if (c.op != AGX_OP_ALLREDUCE && c.count > MAXGATHER)
            c.count = MAXGATHER;
        c.k = (int)(mt_rand(&shared) % NTYPES);
        c.rop = (int)(mt_rand(&shared) % (c.k == T_DOUBLE ? 3 : NOPS));
        if (c.k == T_UCHAR && c.rop == O_SUM) /* Open MPI 4.1 saturates 8-bit sums: its answer depends on its order */
            c.rop = O_BXOR;
        c.inplace = c.op != AGX_OP_ALLTOALLV && mt_rand(&shared) % 4 == 0;
        nap(&mine, delay, 4);
        run_call(&x, &c);
        nap(&mine, delay, 8);
    }
    int local[2] = {x.bad, x.errs}, total[2];
    MPI_Allreduce(local, total, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (run.rank == 0)
        printf("test_stress: %d calls (%d swept, %d random) per rank in %.1f s: %d wrong results, %d errors%s\n",
               swept + calls, swept, calls, MPI_Wtime() - t0, total[0], total[1],
               total[0] || total[1] ? " FAIL" : ", ok");
    MPI_Comm_free(&x.comm);
    free(x.sbuf), free(x.rbuf), free(x.ebuf), free(x.sc);
    MPI_Finalize();
    return total[0] || total[1] ? 1 : 0;
}
