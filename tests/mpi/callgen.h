/*
 * The calls of the stress tests (test_stress, test_nbc): every input element a function of
 * (call, rank, position), so each rank computes the result it expects itself and nothing
 * synchronizes the ranks between the calls under test. A call: an operation (allreduce,
 * allgather, allgatherv, alltoallv), an algorithm of its intra table or the default, a
 * count, an element type, a reduction op, in place or not; its buffers and expected result
 * in a slot (cg_prepare), its check after it completed (cg_check).
 */
#ifndef AGX_CALLGEN_H
#define AGX_CALLGEN_H
#include "mpitest.h"

#include <agx.h>
#include <unistd.h>

#define CG_MAXCOUNT 16384 /* elements of an allreduce */
#define CG_MAXGATHER 2048 /* elements per block of the data-moving operations */

enum { T_INT, T_LLONG, T_SHORT, T_DOUBLE, T_UCHAR, NTYPES };
static inline MPI_Datatype ty(int k)
{
    return k == T_INT ? MPI_INT : k == T_LLONG ? MPI_LONG_LONG : k == T_SHORT ? MPI_SHORT
         : k == T_DOUBLE ? MPI_DOUBLE : MPI_UNSIGNED_CHAR;
}
static const char *tname[NTYPES] = {"MPI_INT", "MPI_LONG_LONG", "MPI_SHORT", "MPI_DOUBLE", "MPI_UNSIGNED_CHAR"};
static const int tsize[NTYPES] = {4, 8, 2, 8, 1};
enum { O_SUM, O_MAX, O_MIN, O_BXOR, NOPS };
static const char *oname[NOPS] = {"SUM", "MAX", "MIN", "BXOR"};

static inline void put(int k, void *b, long long i, long long v)
{
    switch (k) {
    case T_INT: ((int *)b)[i] = (int)v; break;
    case T_LLONG: ((long long *)b)[i] = v; break;
    case T_SHORT: ((short *)b)[i] = (short)v; break;
    case T_DOUBLE: ((double *)b)[i] = (double)v; break;
    default: ((unsigned char *)b)[i] = (unsigned char)v; break;
    }
}

static inline long long get(int k, const void *b, long long i)
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
static inline long long val(int k, unsigned t, int r, long long i)
{
    long long v = (long long)((t * 131u + (unsigned)r * 37u + (unsigned)i * 7u) % 23u);
    return k == T_UCHAR ? v : v - 11;
}

typedef struct {
    int op, alg, k, rop, inplace;  /* op: AGX_OP_*; alg: -1 default, else a table index */
    long long count;
    unsigned t;                    /* the call's number: inputs depend on it */
} call_t;

/* One call's buffers: send, receive, expected; counts and displacements (send, receive). */
typedef struct {
    char *sbuf, *rbuf, *ebuf;
    int *sc, *sd, *rc, *rd;
    size_t rbytes;                 /* what the call writes, gaps included: compared */
} slot_t;

static inline long long blk(const call_t *c, int s, int d)
{ /* elements rank s sends rank d: allgatherv's block of s when d < 0 */
    if (c->op == AGX_OP_ALLGATHERV)
        return c->count * ((unsigned)(s + (int)c->t) % 3u) / 2;
    return c->op == AGX_OP_ALLTOALLV ? c->count * ((unsigned)(s + 2 * d + (int)c->t) % 4u) / 3 : c->count;
}

static inline long long reduce_expect(const call_t *c, int p, long long i)
{
    long long acc = val(c->k, c->t, 0, i);
    for (int r = 1; r < p; r++) {
        long long x = val(c->k, c->t, r, i);
        acc = c->rop == O_SUM ? acc + x : c->rop == O_MAX ? (x > acc ? x : acc) : c->rop == O_MIN ? (x < acc ? x : acc)
                                                                                                : acc ^ x;
    }
    return acc;
}

static inline MPI_Op mop(int rop) { return rop == O_SUM ? MPI_SUM : rop == O_MAX ? MPI_MAX : rop == O_MIN ? MPI_MIN : MPI_BXOR; }


static const int cg_ops[4] = {AGX_OP_ALLREDUCE, AGX_OP_ALLGATHER, AGX_OP_ALLGATHERV, AGX_OP_ALLTOALLV};

/* A slot for calls on p ranks (free with cg_slot_free). */
static inline void cg_slot_init(slot_t *x, int p)
{
    size_t cap = (size_t)p * (CG_MAXGATHER + 1) * 8 + (size_t)CG_MAXCOUNT * 8 + 64;
    x->sbuf = malloc(cap), x->rbuf = malloc(cap), x->ebuf = malloc(cap);
    x->sc = malloc(4 * sizeof(int) * (size_t)p);
    x->sd = x->sc + p, x->rc = x->sd + p, x->rd = x->rc + p;
}

static inline void cg_slot_free(slot_t *x) { free(x->sbuf), free(x->rbuf), free(x->ebuf), free(x->sc); }

/* The name of c's algorithm ("auto": the default). */
static inline const char *cg_alg_name(const call_t *c)
{
    const char *name = "auto";
    if (c->alg >= 0)
        agx_algorithm_info((agx_op)c->op, AGX_KIND_INTRA, c->alg, &name, NULL);
    return name;
}

/* Inputs, layouts and the expected result of c on rank me of p. */
static inline void cg_prepare(slot_t *x, const call_t *c, int me, int p)
{
    int ts = tsize[c->k];
    if (c->op == AGX_OP_ALLREDUCE) {
        for (long long i = 0; i < c->count; i++) {
            put(c->k, c->inplace ? x->rbuf : x->sbuf, i, val(c->k, c->t, me, i));
            put(c->k, x->ebuf, i, reduce_expect(c, p, i));
        }
        x->rbytes = (size_t)c->count * (size_t)ts;
        return;
    }
    long long soff = 0, roff = 0;
    for (int q = 0; q < p; q++) { /* layouts: blocks in rank order, one element's gap after each */
        x->sc[q] = (int)blk(c, me, q), x->sd[q] = (int)soff, soff += x->sc[q] + 1;
        x->rc[q] = (int)(c->op == AGX_OP_ALLGATHERV ? blk(c, q, -1) : blk(c, q, me));
        x->rd[q] = c->op == AGX_OP_ALLGATHER ? (int)(q * c->count) : (int)roff;
        roff = x->rd[q] + x->rc[q] + (c->op == AGX_OP_ALLGATHER ? 0 : 1);
    }
    x->rbytes = (size_t)roff * (size_t)ts;
    memset(x->rbuf, 0x5A, x->rbytes);
    memset(x->ebuf, 0x5A, x->rbytes);
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
}

/* c completed with rc on rank me: errors and wrong bytes counted, the first few printed. */
static inline void cg_check(const slot_t *x, const call_t *c, int me, int rc, int *bad, int *errs)
{
    int ts = tsize[c->k];
    if (rc != MPI_SUCCESS && (*errs)++ < 5) {
        char s[MPI_MAX_ERROR_STRING];
        int n;
        agx_error_string(rc, s, &n);
        fprintf(stderr, "ERROR rank %d call %u %s %s count %lld %s: %s\n", me, c->t, agx_op_name((agx_op)c->op),
                cg_alg_name(c), c->count, tname[c->k], s);
    }
    if (rc == MPI_SUCCESS && memcmp(x->rbuf, x->ebuf, x->rbytes)) {
        size_t b = 0;
        while (x->rbuf[b] == x->ebuf[b])
            b++;
        if ((*bad)++ < 5)
            fprintf(stderr, "WRONG rank %d call %u %s %s count %lld %s %s%s: byte %zu of %zu (element %zu): %lld, "
                    "expected %lld\n", me, c->t, agx_op_name((agx_op)c->op), cg_alg_name(c), c->count, tname[c->k],
                    c->op == AGX_OP_ALLREDUCE ? oname[c->rop] : "", c->inplace ? " in place" : "", b, x->rbytes,
                    b / (size_t)ts, get(c->k, x->rbuf, (long long)(b / (size_t)ts)),
                    get(c->k, x->ebuf, (long long)(b / (size_t)ts)));
    }
}

/* A random call number t from the generator every rank shares: half of them the default. */
static inline call_t cg_random(unsigned *shared, unsigned t, int inplace_ok)
{
    static const long long counts[] = {0, 1, 2, 3, 10, 33, 100, 257, 1000, 1024, 4096, 5000, 16384};
    call_t c = {.op = cg_ops[mt_rand(shared) % 4], .t = t};
    int nalg = agx_algorithm_count((agx_op)c.op, AGX_KIND_INTRA);
    c.alg = mt_rand(shared) % 2 ? -1 : (int)(mt_rand(shared) % (unsigned)nalg);
    c.count = counts[mt_rand(shared) % (sizeof counts / sizeof counts[0])];
    if (c.op != AGX_OP_ALLREDUCE && c.count > CG_MAXGATHER)
        c.count = CG_MAXGATHER;
    c.k = (int)(mt_rand(shared) % NTYPES);
    c.rop = (int)(mt_rand(shared) % (c.k == T_DOUBLE ? 3 : NOPS));
    if (c.k == T_UCHAR && c.rop == O_SUM) /* Open MPI 4.1 saturates 8-bit sums: its answer depends on its order */
        c.rop = O_BXOR;
    c.inplace = inplace_ok && c.op != AGX_OP_ALLTOALLV && mt_rand(shared) % 4 == 0;
    return c;
}

/* Sleep 0..max_us microseconds in one call of one_in (the rank's own generator). */
static inline void cg_nap(unsigned *rs, int max_us, unsigned one_in)
{
    if (max_us > 0 && mt_rand(rs) % one_in == 0)
        usleep(mt_rand(rs) % (unsigned)(max_us + 1));
}

#endif
