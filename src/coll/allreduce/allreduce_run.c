/*
 * The runner every schedule-based allreduce shares: the own contribution copied into the
 * receive buffer, scratch copies of the vector's layout for the schedule's other buffers
 * (AGX_AR_TMP, dissemination's AGX_AR_PART + k), the vector cut into the schedule's
 * blocks, and the cached schedule run by the engine with the call's MPI_Op.
 *
 * With a predefined op, a derived datatype's vector is packed into scratch and reduced as
 * its base elements (Open MPI 4.1's MPI_Reduce_local refuses predefined ops on derived
 * types), then unpacked into the receive buffer, whose holes keep their bytes. A
 * user-defined op gets the user's datatype, as MPI specifies.
 *
 * Buffers from `win` on are windows: every block of the vector at one block's worth of
 * memory, for schedules that touch one block of them per rank (dissemination_node).
 * Scratch up to AR_STACK bytes lives on the stack; above that it is the communicator's
 * cached scratch (agx_ctx_scratch), grown when a call needs more, and growing is agreed
 * (one 16-byte allreduce), so a rank that runs out of memory fails the call on every rank
 * instead of leaving them waiting, and a repeated call pays no allocation.
 */
#include "agx_internal.h"

#include <limits.h>
#include <stdlib.h>

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

int agx_ar_exec(const agx_args *a, const agx_sched *s, int nb, int nbufs, int win)
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
    void *mem = stack, *meta = mstack;
    if ((need > sizeof stack || mneed > sizeof mstack) &&
        (rc = agx_ctx_scratch(a->ctx, a->comm, need, mneed, &mem, &meta, "agx_allreduce")) != MPI_SUCCESS)
        return rc;
    /* blocks of about equal counts, the first n % nb one element longer; windows hold
     * every block at their start */
    MPI_Aint *cnt = (MPI_Aint *)(void *)meta, *dsp = cnt + nb, *wdsp = dsp + nb;
    agx_blocks *bufs = (agx_blocks *)(void *)(wdsp + nb);
    for (int i = 0; i < nb; i++) {
        cnt[i] = (MPI_Aint)(n / nb + (i < n % nb));
        dsp[i] = i ? dsp[i - 1] + cnt[i - 1] : 0;
        wdsp[i] = 0;
    }
    /* a derived type's vector reduced as its packed base elements (what MPI_Reduce_local
     * takes on every library), in scratch after the other full copies */
    char *acc = packed ? (char *)mem + full * (size_t)(win - 1) : (char *)g->recvbuf;
    if (packed && (rc = agx_pack(g->recvbuf, g->count, g->type, acc, 0)) != MPI_SUCCESS)
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
    rc = agx_sched_run(&x, s);
    if (rc == MPI_SUCCESS && packed)
        rc = agx_pack(g->recvbuf, g->count, g->type, acc, 1);
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
    int rc = agx_ar_prepare(a);
    if (rc != MPI_SUCCESS || a->p == 1 || agx_ar_nelems(&a->u.ar) == 0)
        return rc;
    return agx_ar_exec_flat(a, build);
}

/* Element types whose reductions by the predefined ops are exact (no rounding). */
static int exact_leaf(MPI_Datatype t)
{
    static const MPI_Datatype ints[] = {
        MPI_CHAR, MPI_SIGNED_CHAR, MPI_UNSIGNED_CHAR, MPI_BYTE, MPI_SHORT, MPI_UNSIGNED_SHORT, MPI_INT,
        MPI_UNSIGNED, MPI_LONG, MPI_UNSIGNED_LONG, MPI_LONG_LONG, MPI_UNSIGNED_LONG_LONG, MPI_INT8_T,
        MPI_INT16_T, MPI_INT32_T, MPI_INT64_T, MPI_UINT8_T, MPI_UINT16_T, MPI_UINT32_T, MPI_UINT64_T,
        MPI_C_BOOL, MPI_AINT, MPI_OFFSET, MPI_2INT, MPI_SHORT_INT, MPI_LONG_INT, MPI_WCHAR};
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
        if (t == ints[i])
            return 1;
    return 0;
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

int agx_ar_type(MPI_Op op, MPI_Datatype t, MPI_Datatype *base, int *per, int *exact, int *predef)
{
    static const MPI_Op ops[] = {MPI_MAX, MPI_MIN, MPI_SUM, MPI_PROD, MPI_LAND, MPI_BAND, MPI_LOR,
                                 MPI_BOR, MPI_LXOR, MPI_BXOR, MPI_MINLOC, MPI_MAXLOC};
    int tsize, bsize, seen = 0, mixed = 0;
    *base = t, *per = 1, *exact = *predef = 0;
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        *predef |= op == ops[i];
    if (!*predef) /* a user-defined op takes any datatype, as it is */
        return MPI_SUCCESS;
    base_type(t, base, &seen, &mixed, 0);
    if (!seen || mixed)
        return agx_error(MPI_ERR_TYPE, "agx_allreduce: the datatype mixes element types (a predefined op needs "
                         "one predefined element type)");
    MPI_Type_size(t, &tsize);
    MPI_Type_size(*base, &bsize);
    *per = bsize ? tsize / bsize : 0;
    *exact = exact_leaf(*base);
    return MPI_SUCCESS;
}
