/*
 * MPI's table of predefined reduction types and ops (MPI-3.1 Sec. 5.9.2), for the
 * differential tests: every predefined datatype the standard lets a predefined op reduce,
 * with the C layout of its elements (fields), and which ops it allows by its class.
 * Optional types this MPI does not define, or defines with size 0, are left out (said).
 * Values are drawn so that every reduction order gives the same bits (integers wrap,
 * floating-point values are small integers or powers of 2, MINLOC/MAXLOC values tie
 * often), so every algorithm can be compared exactly with PMPI_Allreduce (floating point
 * by value: a zero's sign may depend on the order).
 */
#ifndef AGX_TYPETABLE_H
#define AGX_TYPETABLE_H
#include <complex.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

/* MPI-3.1 Sec. 5.9.2's groups */
enum { TT_CINT, TT_FINT, TT_FP, TT_LOGICAL, TT_COMPLEX, TT_BYTE, TT_MULTI, TT_PAIR, TT_NCLASS };
static const char *const tt_class_name[TT_NCLASS] = {"C integer", "Fortran integer", "floating point", "logical",
                                                     "complex", "byte", "multi-language", "pair"};
/* a field's kind: signed / unsigned integer, IEEE float of its size, long double,
 * logical (0 or 1 only: C bool, Fortran LOGICAL), raw bytes */
enum { TF_SINT, TF_UINT, TF_FLT, TF_LDBL, TF_LOG, TF_RAW };

typedef struct {
    int off, kind, size;
} tt_field;

typedef struct {
    const char *name;
    MPI_Datatype type;
    int cls;
    int nf;
    tt_field f[2];
} tt_type;

#define TT_OP_N 12
static const char *const tt_op_name[TT_OP_N] = {"MAX", "MIN", "SUM", "PROD", "LAND", "BAND",
                                               "LOR", "BOR", "LXOR", "BXOR", "MINLOC", "MAXLOC"};
static inline MPI_Op tt_op(int i)
{
    MPI_Op ops[TT_OP_N] = {MPI_MAX, MPI_MIN, MPI_SUM, MPI_PROD, MPI_LAND, MPI_BAND,
                           MPI_LOR, MPI_BOR, MPI_LXOR, MPI_BXOR, MPI_MINLOC, MPI_MAXLOC};
    return ops[i];
}

/* MPI-3.1 Sec. 5.9.2: which groups each op allows */
static inline int tt_allowed(int op, int cls)
{
    switch (op) {
    case 0: case 1: /* MAX, MIN */
        return cls == TT_CINT || cls == TT_FINT || cls == TT_FP || cls == TT_MULTI;
    case 2: case 3: /* SUM, PROD */
        return cls == TT_CINT || cls == TT_FINT || cls == TT_FP || cls == TT_COMPLEX || cls == TT_MULTI;
    case 4: case 6: case 8: /* LAND, LOR, LXOR */
        return cls == TT_CINT || cls == TT_LOGICAL;
    case 5: case 7: case 9: /* BAND, BOR, BXOR */
        return cls == TT_CINT || cls == TT_FINT || cls == TT_BYTE || cls == TT_MULTI;
    default: /* MINLOC, MAXLOC */
        return cls == TT_PAIR;
    }
}

typedef struct { float v; int i; } tt_float_int;
typedef struct { double v; int i; } tt_double_int;
typedef struct { long v; int i; } tt_long_int;
typedef struct { short v; int i; } tt_short_int;
typedef struct { long double v; int i; } tt_ldouble_int;

/* User ops on the padded pairs (test_typeops): a commutative MAXLOC on DOUBLE_INT, and on
 * SHORT_INT an affine composition, associative but not commutative. */
static inline void tt_user_maxloc(void *in, void *inout, int *len, MPI_Datatype *t)
{
    (void)t;
    tt_double_int *a = in, *b = inout;
    for (int k = 0; k < *len; k++)
        if (a[k].v > b[k].v || (a[k].v == b[k].v && a[k].i < b[k].i))
            b[k].v = a[k].v, b[k].i = a[k].i; /* the fields only: the holes stay the caller's */
}
/* x -> v x + i, composed in rank order (in is the earlier map): associative, not commutative */
static inline void tt_user_affine(void *in, void *inout, int *len, MPI_Datatype *t)
{
    (void)t;
    tt_short_int *f = in, *g = inout;
    for (int k = 0; k < *len; k++) {
        unsigned short v = (unsigned short)((unsigned short)g[k].v * (unsigned short)f[k].v);
        unsigned i = (unsigned)(unsigned short)g[k].v * (unsigned)f[k].i + (unsigned)g[k].i;
        g[k].v = (short)v;
        g[k].i = (int)i;
    }
}

#define TT_S(name, cls, kind, size) {#name, name, cls, 1, {{0, kind, size}}}
#define TT_C(name, kind, size) {#name, name, TT_COMPLEX, 2, {{0, kind, size}, {size, kind, size}}}
#define TT_P(name, st, vk, ik) \
    {#name, name, TT_PAIR, 2, {{offsetof(st, v), vk, sizeof(((st *)0)->v)}, {offsetof(st, i), ik, sizeof(int)}}}

/* Fills out[] with the types this MPI has; returns their number. REAL16 and COMPLEX32
 * are kept only where this MPI's REAL16 arithmetic is C's long double (probed). */
static inline int tt_types(tt_type *out, int verbose)
{
    static const tt_type all[] = {
        TT_S(MPI_INT, TT_CINT, TF_SINT, sizeof(int)), TT_S(MPI_LONG, TT_CINT, TF_SINT, sizeof(long)),
        TT_S(MPI_SHORT, TT_CINT, TF_SINT, sizeof(short)), TT_S(MPI_UNSIGNED_SHORT, TT_CINT, TF_UINT, sizeof(short)),
        TT_S(MPI_UNSIGNED, TT_CINT, TF_UINT, sizeof(int)), TT_S(MPI_UNSIGNED_LONG, TT_CINT, TF_UINT, sizeof(long)),
        TT_S(MPI_LONG_LONG_INT, TT_CINT, TF_SINT, 8), TT_S(MPI_LONG_LONG, TT_CINT, TF_SINT, 8),
        TT_S(MPI_UNSIGNED_LONG_LONG, TT_CINT, TF_UINT, 8), TT_S(MPI_SIGNED_CHAR, TT_CINT, TF_SINT, 1),
        TT_S(MPI_UNSIGNED_CHAR, TT_CINT, TF_UINT, 1), TT_S(MPI_INT8_T, TT_CINT, TF_SINT, 1),
        TT_S(MPI_INT16_T, TT_CINT, TF_SINT, 2), TT_S(MPI_INT32_T, TT_CINT, TF_SINT, 4),
        TT_S(MPI_INT64_T, TT_CINT, TF_SINT, 8), TT_S(MPI_UINT8_T, TT_CINT, TF_UINT, 1),
        TT_S(MPI_UINT16_T, TT_CINT, TF_UINT, 2), TT_S(MPI_UINT32_T, TT_CINT, TF_UINT, 4),
        TT_S(MPI_UINT64_T, TT_CINT, TF_UINT, 8),
        TT_S(MPI_INTEGER, TT_FINT, TF_SINT, 4), TT_S(MPI_INTEGER1, TT_FINT, TF_SINT, 1),
        TT_S(MPI_INTEGER2, TT_FINT, TF_SINT, 2), TT_S(MPI_INTEGER4, TT_FINT, TF_SINT, 4),
        TT_S(MPI_INTEGER8, TT_FINT, TF_SINT, 8),
        TT_S(MPI_FLOAT, TT_FP, TF_FLT, 4), TT_S(MPI_DOUBLE, TT_FP, TF_FLT, 8), TT_S(MPI_REAL, TT_FP, TF_FLT, 4),
        TT_S(MPI_DOUBLE_PRECISION, TT_FP, TF_FLT, 8), TT_S(MPI_LONG_DOUBLE, TT_FP, TF_LDBL, sizeof(long double)),
        TT_S(MPI_REAL4, TT_FP, TF_FLT, 4), TT_S(MPI_REAL8, TT_FP, TF_FLT, 8),
        TT_S(MPI_REAL16, TT_FP, TF_LDBL, 16),
        TT_S(MPI_LOGICAL, TT_LOGICAL, TF_LOG, 4), TT_S(MPI_C_BOOL, TT_LOGICAL, TF_LOG, 1),
        TT_S(MPI_CXX_BOOL, TT_LOGICAL, TF_LOG, 1),
        TT_C(MPI_COMPLEX, TF_FLT, 4), TT_C(MPI_C_COMPLEX, TF_FLT, 4), TT_C(MPI_C_FLOAT_COMPLEX, TF_FLT, 4),
        TT_C(MPI_C_DOUBLE_COMPLEX, TF_FLT, 8), TT_C(MPI_C_LONG_DOUBLE_COMPLEX, TF_LDBL, sizeof(long double)),
        TT_C(MPI_DOUBLE_COMPLEX, TF_FLT, 8), TT_C(MPI_COMPLEX8, TF_FLT, 4), TT_C(MPI_COMPLEX16, TF_FLT, 8),
        TT_C(MPI_COMPLEX32, TF_LDBL, 16), TT_C(MPI_CXX_FLOAT_COMPLEX, TF_FLT, 4),
        TT_C(MPI_CXX_DOUBLE_COMPLEX, TF_FLT, 8), TT_C(MPI_CXX_LONG_DOUBLE_COMPLEX, TF_LDBL, sizeof(long double)),
        TT_S(MPI_BYTE, TT_BYTE, TF_RAW, 1),
        TT_S(MPI_AINT, TT_MULTI, TF_SINT, sizeof(MPI_Aint)), TT_S(MPI_OFFSET, TT_MULTI, TF_SINT, sizeof(MPI_Offset)),
        TT_S(MPI_COUNT, TT_MULTI, TF_SINT, sizeof(MPI_Count)),
        TT_P(MPI_FLOAT_INT, tt_float_int, TF_FLT, TF_SINT), TT_P(MPI_DOUBLE_INT, tt_double_int, TF_FLT, TF_SINT),
        TT_P(MPI_LONG_INT, tt_long_int, TF_SINT, TF_SINT), TT_P(MPI_SHORT_INT, tt_short_int, TF_SINT, TF_SINT),
        TT_P(MPI_LONG_DOUBLE_INT, tt_ldouble_int, TF_LDBL, TF_SINT),
        {"MPI_2INT", MPI_2INT, TT_PAIR, 2, {{0, TF_SINT, 4}, {4, TF_SINT, 4}}},
        {"MPI_2INTEGER", MPI_2INTEGER, TT_PAIR, 2, {{0, TF_SINT, 4}, {4, TF_SINT, 4}}},
        {"MPI_2REAL", MPI_2REAL, TT_PAIR, 2, {{0, TF_FLT, 4}, {4, TF_FLT, 4}}},
        {"MPI_2DOUBLE_PRECISION", MPI_2DOUBLE_PRECISION, TT_PAIR, 2, {{0, TF_FLT, 8}, {8, TF_FLT, 8}}},
    };
    int n = 0, err;
    MPI_Errhandler world_eh; /* MPI_Reduce_local reports on COMM_SELF (MPI-4) or WORLD (MPICH 4.0) */
    MPI_Comm_get_errhandler(MPI_COMM_WORLD, &world_eh);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        const tt_type *t = &all[i];
        int size = 0;
        MPI_Aint lb, ext, want = 0;
        if (t->type == MPI_DATATYPE_NULL || MPI_Type_size(t->type, &size) != MPI_SUCCESS || size == 0) {
            if (verbose)
                printf("typetable: %s is not provided by this MPI: left out\n", t->name);
            continue;
        }
        MPI_Type_get_extent(t->type, &lb, &ext);
        for (int k = 0; k < t->nf; k++)
            want = t->f[k].off + t->f[k].size > want ? t->f[k].off + t->f[k].size : want;
        if (lb != 0 || ext < want) {
            if (verbose)
                printf("typetable: %s has extent %ld here, not C's layout: left out\n", t->name, (long)ext);
            continue;
        }
        if (t->f[0].kind == TF_LDBL && t->f[0].size == 16 && sizeof(long double) == 16 &&
            (t->type == MPI_REAL16 || t->type == MPI_COMPLEX32)) { /* is REAL16 long double here? */
            long double x[2] = {1.5L, 2.25L}, y[2] = {0, 0};
            memcpy(y, x, sizeof x);
            err = MPI_Reduce_local(x, y, t->type == MPI_REAL16 ? 2 : 1, t->type, MPI_SUM);
            if (err != MPI_SUCCESS || y[0] != 3.0L || y[1] != 4.5L) {
                if (verbose)
                    printf("typetable: %s's arithmetic is not C's long double here: left out\n", t->name);
                continue;
            }
        }
        out[n++] = *t;
    }
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, world_eh);
    MPI_Errhandler_free(&world_eh);
    return n;
}
#define TT_MAX_TYPES 64

/* A buffer of `count` elements of t, zeroed: *mem is the allocation (*len bytes of data
 * reach, 64 more), the return value the address MPI sees (lb may be < 0). */
static inline char *tt_buf_alloc(MPI_Datatype t, int count, char **mem, size_t *len)
{
    MPI_Aint lb, ext, tlb, text;
    MPI_Type_get_extent(t, &lb, &ext);
    MPI_Type_get_true_extent(t, &tlb, &text);
    *len = count > 0 ? (size_t)(text + (MPI_Aint)(count - 1) * ext) : 0;
    *mem = malloc(*len + 64);
    memset(*mem, 0, *len + 64);
    return *mem - tlb;
}

/* One element's value of field f for (op, rank r, element i), drawn from r32 (a random
 * 32-bit word per field); written at p. */
static inline void tt_put(const tt_field *f, int op, int pair_index, unsigned r32, unsigned r32b, char *p)
{
    int logical = op == 4 || op == 6 || op == 8, loc = op >= 10;
    if (f->kind == TF_SINT || f->kind == TF_UINT || f->kind == TF_RAW) {
        unsigned long long v = ((unsigned long long)r32b << 32) | r32;
        if (logical) { /* zero a third of the time, else values other than 1 too */
            static const long long lv[6] = {0, 1, 2, -1, 0x80, 0};
            v = (unsigned long long)lv[r32 % 6];
        } else if (loc)
            v = r32 % 4; /* values and indices tie often: the lowest index must win */
        memcpy(p, &v, (size_t)f->size); /* little-endian: the low bytes */
    } else if (f->kind == TF_LOG) {
        unsigned v = r32 % 3 == 0 ? 0u : 1u;
        memset(p, 0, (size_t)f->size);
        memcpy(p, &v, f->size < 4 ? 1 : 4);
    } else {
        /* SUM: small integers (exact in any order); PROD: +-1, +-2, 0.5 (powers of 2);
         * MAX / MIN: varied values; MINLOC / MAXLOC: small integers (ties) */
        static const double pv[5] = {1.0, -1.0, 2.0, -2.0, 0.5};
        double v = op == 3 ? pv[r32 % 5]
                   : op == 2 ? (double)((int)(r32 % 33) - 16)
                   : loc || pair_index ? (double)(r32 % 4)
                   : ((double)r32 / 4294967296.0 - 0.5) * 1000.0;
        if (f->kind == TF_LDBL) {
            long double l = v;
            memset(p, 0, (size_t)f->size);
            memcpy(p, &l, sizeof l < (size_t)f->size ? sizeof l : (size_t)f->size);
        } else if (f->size == 4) {
            float x = (float)v;
            memcpy(p, &x, 4);
        } else {
            memcpy(p, &v, 8);
        }
    }
}

/* Complex PROD: components from {0, 1, -1} (Gaussian integers: exact products). */
static inline void tt_fill_elem(const tt_type *t, int op, unsigned (*rnd)(void *), void *st, char *elem)
{
    for (int k = 0; k < t->nf; k++) {
        unsigned a = rnd(st), b = rnd(st);
        if (t->cls == TT_COMPLEX && op == 3) {
            static const double cv[3] = {0.0, 1.0, -1.0};
            double v = cv[a % 3];
            if (k == 1 && a % 3 == 0 && b % 2) /* avoid too many zeros */
                v = 1.0;
            if (t->f[k].kind == TF_LDBL) {
                long double l = v;
                memcpy(elem + t->f[k].off, &l, sizeof l);
            } else if (t->f[k].size == 4) {
                float x = (float)v;
                memcpy(elem + t->f[k].off, &x, 4);
            } else
                memcpy(elem + t->f[k].off, &v, 8);
            continue;
        }
        tt_put(&t->f[k], op, t->cls == TT_PAIR && k == 1, a, b, elem + t->f[k].off);
    }
}

/* Whether two elements hold the same data: integer, logical and byte fields byte for
 * byte; floating-point fields by value (no value here rounds, but a zero's sign may depend
 * on the order: (-1) * (+0) is -0 in a complex product), long doubles without their
 * padding bytes. */
static inline int tt_same_elem(const tt_type *t, const char *x, const char *y)
{
    for (int k = 0; k < t->nf; k++) {
        const tt_field *f = &t->f[k];
        const char *a = x + f->off, *b = y + f->off;
        if (f->kind == TF_LDBL) {
            long double u, v;
            memcpy(&u, a, sizeof u);
            memcpy(&v, b, sizeof v);
            if (u != v)
                return 0;
        } else if (f->kind == TF_FLT && f->size == 4) {
            float u, v;
            memcpy(&u, a, 4);
            memcpy(&v, b, 4);
            if (u != v)
                return 0;
        } else if (f->kind == TF_FLT) {
            double u, v;
            memcpy(&u, a, 8);
            memcpy(&v, b, 8);
            if (u != v)
                return 0;
        } else if (memcmp(a, b, (size_t)f->size))
            return 0;
    }
    return 1;
}
#endif
