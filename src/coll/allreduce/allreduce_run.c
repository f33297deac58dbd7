/*
 * The runner every schedule-based allreduce shares: the own contribution copied into the
 * receive buffer, scratch copies of the vector's layout for the schedule's other buffers
 * (AGX_AR_TMP, dissemination's AGX_AR_PART + k), the vector cut into the schedule's
 * blocks, and the cached schedule run by the engine with the call's MPI_Op.
 *
 * With a predefined op, a derived datatype's vector is copied into scratch as an array of
 * its base elements and reduced as those (Open MPI 4.1's MPI_Reduce_local refuses
 * predefined ops on derived types), then copied back into the receive buffer, whose
 * holes keep their bytes. A user-defined op gets the user's datatype, as MPI specifies.
 *
 * Buffers from `win` on are windows: every block of the vector at one block's worth of
 * memory, for schedules that touch one block of them per rank (dissemination_node).
 * Scratch up to AR_STACK bytes lives on the stack; above that it is the communicator's
 * cached scratch (agx_ctx_scratch), grown when a call needs more, and growing is agreed
 * (one 16-byte allreduce), so a rank that runs out of memory fails the call on every rank
 * instead of leaving them waiting, and a repeated call pays no allocation. A request's plan
 * (a->plan) gets scratch of its own, and its starts copy sendbuf into recvbuf first (the
 * plan's prologue); a packed vector, one process or no data make no plan (the library's
 * non-blocking call runs instead).
 */
#include "coll_allreduce.h"

#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define AR_STACK 8192

long long agx_ar_nelems(const agx_ar_args *g)
{
    return g->predef && !agx_type_is_named(g->type) ? (long long)g->count * g->per : g->count;
}

int agx_ar_prepare(const agx_args *a)
{
    const agx_ar_args *g = &a->u.ar;
    int rc = MPI_SUCCESS;
    if (g->sendbuf != MPI_IN_PLACE)
        rc = agx_localcopy(g->sendbuf, g->count, g->type, g->recvbuf, g->count, g->type);
    if (rc == MPI_SUCCESS && agx_ar_nelems(g) > INT_MAX) /* the same on every rank */
        rc = agx_error(MPI_ERR_COUNT, "agx_allreduce: %lld elements of the base type; at most INT_MAX",
                       agx_ar_nelems(g));
    return rc;
}

/* Bytes of a layout of k elements of t (extent lb .. true extent), 64-byte aligned. */
static size_t span(MPI_Aint textent, MPI_Aint extent, long long k)
{
    return k ? ((size_t)(textent + (MPI_Aint)(k - 1) * extent) + 63) & ~(size_t)63 : 0;
}

static int ar_exec(const agx_args *a, const agx_sched *s, int nb, int nbufs, int win, size_t *used)
{
    const agx_ar_args *g = &a->u.ar;
    int rc = MPI_SUCCESS, packed = g->predef && !agx_type_is_named(g->type);
    long long n = agx_ar_nelems(g); /* elements of t */
    MPI_Datatype t = packed ? g->base : g->type;
    MPI_Aint lb, extent, tlb, textent;
    MPI_Count tsize;
    MPI_Type_get_extent(t, &lb, &extent);
    MPI_Type_get_true_extent(t, &tlb, &textent);
    MPI_Type_size_x(t, &tsize);
    /* full copies of the layout for buffers 1 .. win-1 (and the packed vector), one block's
     * for the windows win .. nbufs-1 */
    size_t full = span(textent, extent, n), wspan = span(textent, extent, (n + nb - 1) / nb);
    size_t off_win = full * (size_t)(win - 1 + packed), need = off_win + wspan * (size_t)(nbufs - win);
    /* the data (folded by SMPI's shared malloc in simulations) apart from the per-rank
     * layout and buffer table */
    size_t mneed = 3 * sizeof(MPI_Aint) * (size_t)nb + sizeof(agx_blocks) * (size_t)nbufs;
    _Alignas(64) char stack[AR_STACK];
    _Alignas(64) char mstack[AR_STACK / 2];
    void *mem = stack, *meta = mstack, *owned = NULL, *mowned = NULL;
    if (a->plan) { /* a request: scratch of its own (no plan for a packed vector: the
                    * library's call runs it), the layout's tables copied by the plan */
        if (packed)
            return MPI_SUCCESS;
        if (!(mem = owned = malloc(need ? need : 1)) || !(meta = mowned = malloc(mneed))) {
            free(owned);
            return agx_error(MPI_ERR_NO_MEM, "agx_allreduce_init: no memory for %zu bytes of scratch", need);
        }
    } else if (need > sizeof stack || mneed > sizeof mstack) {
        *used = need;
        if ((rc = agx_ctx_scratch(a->ctx, a->comm, need, mneed, &mem, &meta, "agx_allreduce")) != MPI_SUCCESS)
            return rc;
    }
    /* blocks of about equal counts, the first n % nb one element longer; windows hold
     * every block at their start */
    MPI_Aint *cnt = (MPI_Aint *)(void *)meta, *dsp = cnt + nb, *wdsp = dsp + nb;
    agx_blocks *bufs = (agx_blocks *)(void *)(wdsp + nb);
    for (int i = 0; i < nb; i++) {
        cnt[i] = (MPI_Aint)(n / nb + (i < n % nb));
        dsp[i] = i ? dsp[i - 1] + cnt[i - 1] : 0;
        wdsp[i] = 0;
    }
    /* a derived type's vector reduced as an array of its base elements (what
     * MPI_Reduce_local takes on every library), in scratch after the other full copies:
     * copied by the library at the base type's extent, not packed, since a padded base
     * (MPI_DOUBLE_INT: 12 bytes in 16) packs to another layout than its array's */
    char *acc = packed ? (char *)mem + full * (size_t)(win - 1) - tlb : (char *)g->recvbuf;
    if (packed && (rc = agx_localcopy(g->recvbuf, g->count, g->type, acc, n, t)) != MPI_SUCCESS)
        return rc;
    for (int b = 0; b < nbufs; b++) {
        char *base = b == AGX_AR_ACC ? acc : b < win ? (char *)mem + full * (size_t)(b - 1) - tlb
                                                     : (char *)mem + off_win + wspan * (size_t)(b - win) - tlb;
        bufs[b] = (agx_blocks){.buf = base, .type = t, .extent = extent, .type_size = tsize, .p = nb,
                               .ucount = (int)n, .lcounts = cnt, .ldispls = b < win ? dsp : wdsp};
    }
    agx_exec x;
    agx_exec_of(a, &bufs[0], &x);
    x.nbufs = nbufs;
    x.op = g->op;
    if (a->plan) { /* the plan owns the scratch; each start copies sendbuf in first */
        x.tag = a->plan_tag;
        if ((rc = agx_plan_make(&x, s, a->plan)) == MPI_SUCCESS) {
            agx_plan_own(*a->plan, owned);
            owned = NULL;
            if (g->sendbuf != MPI_IN_PLACE &&
                (rc = agx_plan_prologue(*a->plan, g->sendbuf, g->count, g->type, g->recvbuf, g->count, g->type))) {
                agx_plan_free(*a->plan);
                *a->plan = NULL;
            }
        }
        free(owned);
        free(mowned);
        return rc;
    }
    rc = agx_sched_run(&x, s);
    if (rc == MPI_SUCCESS && packed)
        rc = agx_localcopy(acc, n, t, g->recvbuf, g->count, g->type);
    return rc;
}

/* Every return of ar_exec, on every rank alike (need derives from the call's arguments):
 * a call that needed no more than AGX_SCRATCH_KEEP of the communicator's scratch frees what
 * an earlier, larger call left (freed after every call, the 512 MiB of a 256 MiB vector's
 * dissemination made each of its calls 1.4-1.5x slower: allocated and faulted anew). */
int agx_ar_exec(const agx_args *a, const agx_sched *s, int nb, int nbufs, int win)
{
    size_t used = 0;
    int rc = ar_exec(a, s, nb, nbufs, win, &used);
    if (!a->plan)
        agx_ctx_scratch_trim(a->ctx, used);
    return rc;
}

int agx_ar_exec_flat(const agx_args *a, agx_build_fn build)
{
    const agx_sched *s;
    int p = a->p, nbufs = build == agx_build_ar_dissemination ? agx_ar_dissem_nbufs(p) : AGX_AR_TMP + 1;
    int rc = agx_flat_sched(a, build, 0, &s);
    return rc != MPI_SUCCESS ? rc : agx_ar_exec(a, s, agx_ar_nblocks(build, p), nbufs, nbufs);
}

int agx_ar_run(const agx_args *a, agx_build_fn build)
{
    if (a->plan) { /* a request: no plan for one process or no data (the library's call runs) */
        if (agx_ar_nelems(&a->u.ar) > INT_MAX)
            return agx_error(MPI_ERR_COUNT, "agx_allreduce_init: %lld elements of the base type; at most INT_MAX",
                             agx_ar_nelems(&a->u.ar));
        return a->p == 1 || agx_ar_nelems(&a->u.ar) == 0 ? MPI_SUCCESS : agx_ar_exec_flat(a, build);
    }
    int rc = agx_ar_prepare(a);
    if (rc != MPI_SUCCESS || a->p == 1 || agx_ar_nelems(&a->u.ar) == 0)
        return rc;
    return agx_ar_exec_flat(a, build);
}

/* MPI-3.1 Sec. 5.9.2's groups of predefined types, and which predefined ops each allows. */
enum { CL_NONE, CL_CINT, CL_FINT, CL_FP, CL_LOGICAL, CL_COMPLEX, CL_BYTE, CL_MULTI, CL_PAIR_INT, CL_PAIR_FP };

static int type_class_at(MPI_Datatype t, int *at)
{
    static const MPI_Datatype cint[] = {
        MPI_INT, MPI_LONG, MPI_SHORT, MPI_UNSIGNED_SHORT, MPI_UNSIGNED, MPI_UNSIGNED_LONG, MPI_LONG_LONG_INT,
        MPI_LONG_LONG, MPI_UNSIGNED_LONG_LONG, MPI_SIGNED_CHAR, MPI_UNSIGNED_CHAR, MPI_INT8_T, MPI_INT16_T,
        MPI_INT32_T, MPI_INT64_T, MPI_UINT8_T, MPI_UINT16_T, MPI_UINT32_T, MPI_UINT64_T};
    static const MPI_Datatype fint[] = {MPI_INTEGER, MPI_INTEGER1, MPI_INTEGER2, MPI_INTEGER4, MPI_INTEGER8};
    static const MPI_Datatype fp[] = {MPI_FLOAT, MPI_DOUBLE, MPI_REAL, MPI_DOUBLE_PRECISION, MPI_LONG_DOUBLE,
                                      MPI_REAL4, MPI_REAL8, MPI_REAL16};
    static const MPI_Datatype logical[] = {MPI_LOGICAL, MPI_C_BOOL, MPI_CXX_BOOL};
    static const MPI_Datatype cplx[] = {MPI_COMPLEX, MPI_C_COMPLEX, MPI_C_FLOAT_COMPLEX, MPI_C_DOUBLE_COMPLEX,
                                        MPI_C_LONG_DOUBLE_COMPLEX, MPI_DOUBLE_COMPLEX, MPI_COMPLEX8,
                                        MPI_COMPLEX16, MPI_COMPLEX32, MPI_CXX_FLOAT_COMPLEX,
                                        MPI_CXX_DOUBLE_COMPLEX, MPI_CXX_LONG_DOUBLE_COMPLEX};
    static const MPI_Datatype multi[] = {MPI_AINT, MPI_OFFSET, MPI_COUNT};
    static const MPI_Datatype pint[] = {MPI_2INT, MPI_SHORT_INT, MPI_LONG_INT, MPI_2INTEGER};
    static const MPI_Datatype pfp[] = {MPI_FLOAT_INT, MPI_DOUBLE_INT, MPI_LONG_DOUBLE_INT, MPI_2REAL,
                                       MPI_2DOUBLE_PRECISION};
    static const struct { const MPI_Datatype *t; size_t n; int cls; } groups[] = {
        {cint, sizeof cint / sizeof *cint, CL_CINT}, {fint, sizeof fint / sizeof *fint, CL_FINT},
        {fp, sizeof fp / sizeof *fp, CL_FP}, {logical, sizeof logical / sizeof *logical, CL_LOGICAL},
        {cplx, sizeof cplx / sizeof *cplx, CL_COMPLEX}, {multi, sizeof multi / sizeof *multi, CL_MULTI},
        {pint, sizeof pint / sizeof *pint, CL_PAIR_INT}, {pfp, sizeof pfp / sizeof *pfp, CL_PAIR_FP}};
    *at = 0;
    if (t == MPI_DATATYPE_NULL)
        return CL_NONE;
    if (t == MPI_BYTE)
        return CL_BYTE;
    for (size_t g = 0; g < sizeof groups / sizeof groups[0]; g++)
        for (size_t i = 0; i < groups[g].n; i++)
            if (t == groups[g].t[i]) {
                *at = (int)i;
                return groups[g].cls;
            }
    return CL_NONE;
}

/* MPI-3.1 Sec. 5.9.2's table: op k of ops[] on a type of class cls. */
static int op_allows(int k, int cls)
{
    int integer = cls == CL_CINT || cls == CL_FINT || cls == CL_MULTI;
    switch (k) {
    case 0: case 1: /* MAX, MIN */
        return integer || cls == CL_FP;
    case 2: case 3: /* SUM, PROD */
        return integer || cls == CL_FP || cls == CL_COMPLEX;
    case 4: case 6: case 8: /* LAND, LOR, LXOR */
        return cls == CL_CINT || cls == CL_LOGICAL;
    case 5: case 7: case 9: /* BAND, BOR, BXOR */
        return integer || cls == CL_BYTE;
    default: /* MINLOC, MAXLOC */
        return cls == CL_PAIR_INT || cls == CL_PAIR_FP;
    }
}

/* Whether the library's SUM or PROD on integer type t wraps modulo 2^bits, as C's
 * unsigned arithmetic does: only then is the result the same in every order. Open MPI
 * 4.1's AVX op component saturates 8- and 16-bit sums in its vector body (ompi issue
 * 8045), which makes the library's own answer depend on its order; such a pair runs
 * native. Probed once per (type, op) with MPI_Reduce_local on 256 elements: 0x7F..F +
 * 0x7F..F and 0xFF..F + 0xFF..F both give 0xFF..FE when they wrap; their products, 1. */
static int wraps(MPI_Datatype t, int prod)
{
    static struct { MPI_Datatype t; int prod, ok; } seen[64];
    static int nseen;
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    int ok = -1, size;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < nseen && ok < 0; i++)
        if (seen[i].t == t && seen[i].prod == prod)
            ok = seen[i].ok;
    pthread_mutex_unlock(&lock);
    if (ok >= 0)
        return ok;
    MPI_Type_size(t, &size);
    ok = size > 0 && size <= 16;
    /* enough elements for any vector path (the library's scalar tail may wrap where its
     * vector body does not) */
    enum { NE = 256 };
    unsigned char *a = malloc((size_t)(2 * NE * 16)), *b = a ? a + NE * 16 : NULL, want[16];
    ok = ok && a;
    for (int pass = 0; pass < 2 && ok; pass++) {
        memset(a, 0xFF, (size_t)(NE * size));
        for (int e = 0; e < NE && !pass; e++) /* the largest signed value (little-endian) */
            a[e * size + size - 1] = 0x7F;
        memcpy(b, a, (size_t)(NE * size));
        memset(want, prod ? 0 : 0xFF, sizeof want);
        want[0] = prod ? 1 : 0xFE;
        ok = MPI_Reduce_local(a, b, NE, t, prod ? MPI_PROD : MPI_SUM) == MPI_SUCCESS;
        for (int e = 0; e < NE && ok; e++)
            ok = !memcmp(b + e * size, want, (size_t)size);
    }
    free(a);
    pthread_mutex_lock(&lock);
    if (nseen < (int)(sizeof seen / sizeof seen[0]))
        seen[nseen].t = t, seen[nseen].prod = prod, seen[nseen].ok = ok, nseen++;
    pthread_mutex_unlock(&lock);
    return ok;
}

/* The named types of t's leaves: the first in *base, *mixed set when another differs. */
static void base_type(MPI_Datatype t, MPI_Datatype *base, int *seen, int *mixed, int depth)
{
    int ni, na, nd, comb;
    MPI_Type_get_envelope(t, &ni, &na, &nd, &comb);
    if (comb == MPI_COMBINER_NAMED) {
        *mixed |= *seen && *base != t;
        *base = *seen ? *base : t;
        *seen = 1;
        return;
    }
    int *ints = malloc(sizeof(int) * (size_t)(ni + 1));
    MPI_Aint *addrs = malloc(sizeof(MPI_Aint) * (size_t)(na + 1));
    MPI_Datatype *types = malloc(sizeof(MPI_Datatype) * (size_t)(nd + 1));
    if (!ints || !addrs || !types || depth > 32)
        nd = 0, *mixed = 1;
    else
        MPI_Type_get_contents(t, ni, na, nd, ints, addrs, types);
    for (int i = 0; i < nd; i++) { /* every derived type returned is freed */
        base_type(types[i], base, seen, mixed, depth + 1);
        if (!agx_type_is_named(types[i]))
            MPI_Type_free(&types[i]);
    }
    free(ints), free(addrs), free(types);
}

long long agx_ar_signature(const agx_ar_args *g)
{
    int size, bsize = 0;
    MPI_Type_size(g->type, &size);
    if (g->predef)
        MPI_Type_size(g->base, &bsize);
    /* handles differ between processes (addresses), so: bytes, the element type's place in
     * MPI's table and its size, the op's index (user ops: one value, their functions
     * cannot be compared) */
    unsigned long long h = (unsigned long long)g->count * (unsigned long long)size;
    h = h * 1000003ULL + (unsigned long long)(g->predef ? g->elem : 99 * 64);
    h = h * 1000003ULL + (unsigned long long)bsize;
    h = h * 1000003ULL + (unsigned long long)(g->opk + 1);
    return (long long)(h & 0x3FFFFFFFFFFFFFFFULL);
}

int agx_ar_type(agx_ar_args *g)
{
    static const MPI_Op ops[] = {MPI_MAX, MPI_MIN, MPI_SUM, MPI_PROD, MPI_LAND, MPI_BAND, MPI_LOR,
                                 MPI_BOR, MPI_LXOR, MPI_BXOR, MPI_MINLOC, MPI_MAXLOC};
    int tsize, bsize, seen = 0, mixed = 0, k = -1, at = 0;
    g->base = g->type, g->per = 1, g->exact = g->predef = g->elem = 0, g->unproven = NULL;
    for (int i = 0; i < (int)(sizeof ops / sizeof ops[0]) && k < 0; i++)
        k = g->op == ops[i] ? i : -1;
    g->opk = k;
    g->predef = k >= 0;
    if (!g->predef) /* a user-defined op takes any datatype, as it is */
        return MPI_SUCCESS;
    base_type(g->type, &g->base, &seen, &mixed, 0);
    int cls = seen && !mixed ? type_class_at(g->base, &at) : CL_NONE;
    g->elem = cls * 64 + at;
    if (cls == CL_NONE || !op_allows(k, cls)) {
        g->unproven = "the MPI standard's table (MPI-3.1 Sec. 5.9.2) does not pair this op with this datatype's "
                      "elements (or they mix types): the library's own answer or error";
        return MPI_SUCCESS;
    }
    int integer = cls == CL_CINT || cls == CL_FINT || cls == CL_MULTI;
    if (integer && (k == 2 || k == 3) && !wraps(g->base, k == 3)) {
        g->unproven = "this MPI's own SUM/PROD on this integer type does not wrap around (it saturates), so "
                      "its answer depends on the reduction order: only the library's order gives it";
        return MPI_SUCCESS;
    }
    MPI_Type_size(g->type, &tsize);
    MPI_Type_size(g->base, &bsize);
    g->per = bsize ? tsize / bsize : 0;
    /* the same bits in every order: integers (wrapping), logicals, bytes, and MINLOC /
     * MAXLOC on integer pairs; floating point rounds (and MAX, MINLOC on NaN depend on
     * the order), so not those */
    g->exact = integer || cls == CL_LOGICAL || cls == CL_BYTE || cls == CL_PAIR_INT;
    return MPI_SUCCESS;
}
