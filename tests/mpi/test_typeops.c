/*
 * agx_allreduce against PMPI_Allreduce over MPI's whole table (MPI-3.1 Sec. 5.9.2,
 * tests/mpi/typetable.h): every predefined op on every predefined datatype the standard
 * allows it on (C and Fortran integers, floating point, logical, complex, byte, the
 * multi-language types, the MINLOC/MAXLOC pairs), each also inside derived types
 * (contiguous, a vector with holes, a reversed indexed block resized to a negative lower
 * bound), user-defined ops (a commutative MAXLOC on the padded MPI_DOUBLE_INT, a
 * non-commutative affine composition on the padded MPI_SHORT_INT), counts 0, 1, 2, 3, 7,
 * 13, 101 and one above every scratch and lane threshold, in place and not, every
 * algorithm forced and the default, on the communicator as it is, on emulated regions of
 * 2 and on regions of 2 with 8-byte lanes. Each call is made in one of three forms, in
 * turn over the counts, so that every (type, op, algorithm) runs in each: the blocking
 * agx_allreduce, a persistent request (agx_allreduce_init, agx_start, agx_wait: what the
 * preload's MPI_Allreduce_init runs) and a non-blocking one (agx_iallreduce), each
 * against the library's call of that form (PMPI_Allreduce; PMPI_Iallreduce for both
 * requests): where the library's arithmetic depends on its order (Open MPI 4.1 saturates
 * 8- and 16-bit sums), its blocking and non-blocking calls answer differently, and agx,
 * running native there, must give each form's own answer.
 *
 * Compared per case: the data of every element (long doubles by value, every other field
 * byte for byte) against PMPI_Allreduce, and the bytes between the type map's data (holes)
 * left as the caller had them. Values make every reduction order give the same bits
 * (typetable.h), so the comparison is exact for every algorithm. A predefined op on a
 * derived type is compared with PMPI_Allreduce on the packed base elements (MPI's
 * semantics; Open MPI 4.1 refuses the derived type itself).
 *
 * The log names each (type, op, algorithm) with the counts and process count checked and
 * what ran. Tiers: by default every type with counts 0, 1, 13 and the large one, the
 * representative types (REPS) with every count and in derived types, and on the regions;
 * --full: every type in every way (about 3x longer); --quick: the representatives as
 * launched and on regions of 2, 4 counts, no derived types. Options: --seed N, --algs LIST;
 * AGX_TEST_TYPES=LIST runs only the types whose names LIST contains.
 */
#include "agx.h"
#include "mpitest.h"
#include "typetable.h"

#include <stdint.h>

static int rank, size, passed, failed, quick, full;
static MPI_Comm comm;
static const char *cfg = "";
static long long cases_run;

typedef struct {
    char name[96];
    const tt_type *base;  /* element layout of the base type */
    MPI_Datatype type;    /* what the call passes (derived or the base) */
    int per;              /* base elements per element of type */
    int derived;
    int rep;              /* a representative type (REPS) */
} tcase;

/* One type per layout the code treats differently: widths 1, 2, 4, 8 and 16, signed and
 * unsigned, Fortran, floating point, logical, complex, bytes, the multi-language types
 * and the pairs, padded (DOUBLE_INT, SHORT_INT, LONG_DOUBLE_INT) or not. */
static const char *const REPS[] = {"MPI_INT", "MPI_SHORT", "MPI_UNSIGNED_CHAR", "MPI_UNSIGNED_LONG", "MPI_INTEGER",
                                   "MPI_FLOAT", "MPI_DOUBLE", "MPI_LONG_DOUBLE", "MPI_C_BOOL", "MPI_LOGICAL",
                                   "MPI_C_DOUBLE_COMPLEX", "MPI_C_LONG_DOUBLE_COMPLEX", "MPI_BYTE", "MPI_AINT",
                                   "MPI_2INT", "MPI_SHORT_INT", "MPI_DOUBLE_INT", "MPI_LONG_DOUBLE_INT"};

static int is_rep(const char *name)
{
    for (size_t i = 0; i < sizeof REPS / sizeof REPS[0]; i++)
        if (!strcmp(REPS[i], name))
            return 1;
    return 0;
}

static unsigned rnd(void *s) { return mt_rand((unsigned *)s); }

/* The base elements of a buffer of t, contiguous (the MPI library's own copy). */
static void to_base(const tcase *c, const char *typed, int count, char *base)
{
    if ((long long)count * c->per == 0)
        return;
    PMPI_Sendrecv(typed, count, c->type, 0, 99, base, count * c->per, c->base->type, 0, 99, MPI_COMM_SELF,
                  MPI_STATUS_IGNORE);
}

static void from_base(const tcase *c, const char *base, int count, char *typed)
{
    if ((long long)count * c->per == 0)
        return;
    PMPI_Sendrecv(base, count * c->per, c->base->type, 0, 99, typed, count, c->type, 0, 99, MPI_COMM_SELF,
                  MPI_STATUS_IGNORE);
}

/* One (case, op, count): the reference once, then every algorithm; returns the number of
 * algorithms that gave a different answer (their names appended to bad). */
static const char *const form_name[3] = {"blocking", "persistent", "non-blocking"};

/* The library's answer for agx's form f: PMPI_Allreduce for the blocking call, and for
 * both request forms PMPI_Iallreduce, the call agx's requests run where agx runs native
 * (Open MPI 4.1's persistent allreduce gives the same bits as its MPI_Iallreduce,
 * docs/algorithms.md). */
static int lib_form(int f, const void *sb, void *rb, int count, MPI_Datatype t, MPI_Op op)
{
    MPI_Request q;
    if (f == 0)
        return PMPI_Allreduce(sb, rb, count, t, op, comm);
    int rc = PMPI_Iallreduce(sb, rb, count, t, op, comm, &q);
    return rc == MPI_SUCCESS ? PMPI_Wait(&q, MPI_STATUS_IGNORE) : rc;
}

/* agx's allreduce in form f (0 blocking, 1 persistent: made, started once and freed, 2
 * non-blocking) */
static int allreduce_form(int f, const void *sb, void *rb, int count, MPI_Datatype t, MPI_Op op)
{
    agx_request q = AGX_REQUEST_NULL;
    if (f == 0)
        return agx_allreduce(sb, rb, count, t, op, comm);
    int rc = f == 1 ? agx_allreduce_init(sb, rb, count, t, op, comm, MPI_INFO_NULL, &q)
                    : agx_iallreduce(sb, rb, count, t, op, comm, &q);
    if (rc == MPI_SUCCESS && f == 1)
        rc = agx_start(&q);
    if (rc == MPI_SUCCESS)
        rc = agx_wait(&q);
    agx_request_free(&q);
    return rc;
}

static int run_count(const tcase *c, int op, MPI_Op mop, int count, int form0, unsigned seed, const char **algs,
                     int nalg, char *bad, size_t badlen, char *ran, size_t ranlen)
{
    MPI_Aint bext, lb;
    MPI_Type_get_extent(c->base->type, &lb, &bext);
    long long nb = (long long)count * c->per;
    size_t blen = (size_t)(nb > 0 ? nb : 1) * (size_t)bext, len;
    char *smem, *rmem, *fmem, *refmem, *maskmem;
    char *sb = tt_buf_alloc(c->type, count, &smem, &len), *rb = tt_buf_alloc(c->type, count, &rmem, &len);
    tt_buf_alloc(c->type, count, &fmem, &len);
    char *ref = tt_buf_alloc(c->type, count, &refmem, &len);
    char *mask = tt_buf_alloc(c->type, count, &maskmem, &len);
    char *b1 = calloc(blen, 1), *b2 = calloc(blen, 1), *bref = calloc(3 * blen, 1); /* one per form */
    unsigned st = seed ^ (unsigned)(rank * 2654435761u);
    /* the rank's contribution: holes 0xA5 in the send buffer, 0x5A in the receive buffer */
    memset(smem, 0xA5, len + 64);
    memset(fmem, 0x5A, len + 64);
    for (long long k = 0; k < nb; k++)
        tt_fill_elem(c->base, op, rnd, &st, b1 + k * bext);
    from_base(c, b1, count, sb);
    /* the data bytes of the layout */
    memset(b2, 0xFF, blen);
    from_base(c, b2, count, mask);
    /* the references, one per form: PMPI on the base elements (predefined op), or on the
     * type (user op) */
    int rc = MPI_SUCCESS;
    int librc = MPI_SUCCESS; /* the library on the derived type itself (Open MPI 4.1 refuses) */
    if (op < TT_OP_N && c->derived) {
        memcpy(refmem, fmem, len + 64);
        librc = PMPI_Allreduce(sb, ref, count, c->type, mop, comm);
    }
    for (int f = 0; f < 3 && rc == MPI_SUCCESS; f++) {
        char *bf = bref + (size_t)f * blen;
        if (op < TT_OP_N)
            rc = lib_form(f, b1, bf, (int)nb, c->base->type, mop);
        else {
            memcpy(refmem, fmem, len + 64);
            rc = lib_form(f, sb, ref, count, c->type, mop);
            to_base(c, ref, count, bf);
        }
    }
    int nbad = 0, refrc = rc;
    if (refrc != MPI_SUCCESS) { /* the same on every rank: every rank skips the algorithms */
        snprintf(bad, badlen, "PMPI_Allreduce failed (%d)", rc);
        nbad = 1;
    }
    /* every rank runs every algorithm, whatever it found so far */
    for (int a = 0; a < nalg && refrc == MPI_SUCCESS; a++) {
        int inplace = (a + count) % 2, form = (form0 + a) % 3;
        memcpy(rmem, inplace ? smem : fmem, len + 64);
        agx_comm_set_algorithm(comm, AGX_OP_ALLREDUCE, algs[a]);
        rc = allreduce_form(form, inplace ? MPI_IN_PLACE : sb, rb, count, c->type, mop);
        const char *r = "?";
        agx_comm_last_algorithm(comm, AGX_OP_ALLREDUCE, &r);
        if (a < 16 && !strstr(ran, r) && strlen(ran) + strlen(r) + 2 < ranlen)
            strcat(ran, r), strcat(ran, " ");
        if (rc != MPI_SUCCESS && librc != MPI_SUCCESS && !strcmp(r, "native")) {
            cases_run++; /* native gives the library's error: the library refuses this call */
            continue;
        }
        int ok = rc == MPI_SUCCESS;
        memset(b2, 0, blen);
        to_base(c, rb, count, b2);
        for (long long k = 0; k < nb && ok; k++)
            ok = tt_same_elem(c->base, b2 + k * bext, bref + (size_t)form * blen + k * bext);
        /* holes: what the caller had (the send buffer's, in place) */
        const char *hole_src = inplace ? smem : fmem;
        for (size_t k = 0; k < len + 64 && ok; k++)
            ok = maskmem[k] || rmem[k] == hole_src[k];
        if (!ok) {
            nbad++;
            size_t u = strlen(bad);
            snprintf(bad + u, badlen - u, "%s%s(%s, %s%s)", u ? " " : "", algs[a], form_name[form],
                     inplace ? "in place" : "separate", rc != MPI_SUCCESS ? ", error" : "");
        }
        cases_run++;
    }
    free(smem), free(rmem), free(fmem), free(refmem), free(maskmem), free(b1), free(b2), free(bref);
    return nbad;
}

static void run_case(const tcase *c, int op, MPI_Op mop, const char *opname, unsigned seed, const char **algs,
                     int nalg)
{
    int tsize;
    MPI_Type_size(c->type, &tsize);
    int large = 8300 / (tsize > 0 ? tsize : 1) + 3; /* above AR_STACK (8 KiB) and the lanes' 4 KiB */
    int counts[] = {0, 1, 2, 3, 7, 13, 101, large}, nc = (int)(sizeof counts / sizeof counts[0]);
    int qcounts[] = {0, 1, 13, large};
    int few = !full && (quick || c->derived || !c->rep || strcmp(cfg, "regions=as-launched"));
    int *cs = few ? qcounts : counts, ncs = few ? 4 : nc;
    char bad[2048] = "", ran[512] = "", clist[128] = "";
    int nbad = 0;
    for (int k = 0; k < ncs; k++) {
        char b[1024] = "";
        int n = run_count(c, op, mop, cs[k], k, seed + (unsigned)k * 7919u, algs, nalg, b, sizeof b, ran, sizeof ran);
        size_t u = strlen(clist);
        snprintf(clist + u, sizeof clist - u, "%s%d", k ? "," : "", cs[k]);
        if (n) {
            u = strlen(bad);
            snprintf(bad + u, sizeof bad - u, " [count %d: %s]", cs[k], b);
            nbad += n;
        }
    }
    CHECK(nbad == 0, "np %d %s: %s %s differs from PMPI_Allreduce:%s", size, cfg, c->name, opname, bad);
    if (rank == 0)
        printf("%s %s %s np=%d %s counts=%s algorithms=%d ran: %s\n", nbad ? "FAIL" : "ok", c->name, opname, size,
               cfg, clist, nalg, ran);
}

/* Mismatched arguments (issue 34): with AGX_CHECK_ARGS=1, ranks that pass another count,
 * another type of the same size (UNSIGNED for INT) or another op get one error each, on
 * every rank and every algorithm, never a hang. */
static int handler_calls;
static void count_handler(MPI_Comm *c, int *code, ...)
{
    (void)c, (void)code;
    handler_calls++;
}

static void mismatches(const char **algs, int nalg)
{
    MPI_Errhandler eh;
    MPI_Comm mc;
    setenv("AGX_CHECK_ARGS", "1", 1);
    MPI_Comm_dup(MPI_COMM_WORLD, &mc);
    agx_comm_set_algorithm(mc, AGX_OP_ALLREDUCE, "auto"); /* agx's context, read now */
    unsetenv("AGX_CHECK_ARGS");
    MPI_Comm_create_errhandler(count_handler, &eh);
    MPI_Comm_set_errhandler(mc, eh);
    int sb[64], rb[64];
    for (int i = 0; i < 64; i++)
        sb[i] = rank + i;
    static const char *what[3] = {"count", "datatype", "op"};
    for (int a = 0; a < nalg; a++)
        for (int k = 0; k < 3; k++) {
            int odd = rank == size - 1; /* the last rank differs */
            int count = k == 0 && odd ? 9 : 8;
            MPI_Datatype t = k == 1 && odd ? MPI_UNSIGNED : MPI_INT;
            MPI_Op op = k == 2 && odd ? MPI_MAX : MPI_SUM;
            agx_comm_set_algorithm(mc, AGX_OP_ALLREDUCE, algs[a]);
            handler_calls = 0;
            int rc = agx_allreduce(sb, rb, count, t, op, mc);
            CHECK(rc != MPI_SUCCESS && handler_calls == 1, "np %d: %s, one rank with another %s: rc %d, %d "
                  "handler calls (expected an error and 1)", size, algs[a], what[k], rc, handler_calls);
            handler_calls = 0;
            rc = agx_allreduce(sb, rb, 8, MPI_INT, MPI_SUM, mc); /* and the communicator still works */
            CHECK(rc == MPI_SUCCESS && handler_calls == 0, "np %d: %s after a %s mismatch: rc %d", size, algs[a],
                  what[k], rc);
        }
    if (rank == 0)
        printf("mismatches: %d algorithms x {count, datatype, op} with AGX_CHECK_ARGS=1 on np=%d\n", nalg, size);
    MPI_Comm_free(&mc);
    /* Without the agreement: a count or element size that differs on the last rank makes
     * messages arrive with another size than their receiver expects (or, in
     * dissemination_shm's window, byte counts differ). Every agx algorithm must end (no
     * hang: ctest's timeout), with an error on the ranks that see a wrong size (at least
     * one), and leave the communicator usable. native is the library's affair. */
    MPI_Comm_dup(MPI_COMM_WORLD, &mc);
    MPI_Comm_set_errhandler(mc, eh);
    int nrun = 0;
    for (int a = 0; a < nalg; a++)
        for (int k = 0; k < 2; k++) {
            if (!strcmp(algs[a], "native") || !strcmp(algs[a], "auto"))
                continue;
            int odd = rank == size - 1;
            /* 52 or 56 bytes against 48: every rank's segment in dissemination_shm stays the
             * size the others have (a mismatch that grows it on some ranks only is left to
             * AGX_CHECK_ARGS, docs/algorithms.md) */
            int count = k == 0 && odd ? 13 : k == 1 && odd ? 7 : 12;
            MPI_Datatype t = k == 1 && odd ? MPI_LONG_LONG : MPI_INT;
            agx_comm_set_algorithm(mc, AGX_OP_ALLREDUCE, algs[a]);
            handler_calls = 0;
            int rc = agx_allreduce(sb, rb, count, t, MPI_SUM, mc), any, ran_agx;
            const char *r = "?";
            agx_comm_last_algorithm(mc, AGX_OP_ALLREDUCE, &r);
            ran_agx = strcmp(r, "native") != 0;
            MPI_Allreduce(&ran_agx, &any, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
            if (!any) /* fell back to native somewhere (say, one rank alone in its region) */
                continue;
            int err = rc != MPI_SUCCESS;
            MPI_Allreduce(MPI_IN_PLACE, &err, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
            CHECK(err > 0 && handler_calls == (rc != MPI_SUCCESS), "np %d: %s without AGX_CHECK_ARGS, one rank "
                  "with another %s: %d ranks reported it (expected >= 1), rc %d, %d handler calls", size,
                  algs[a], what[k], err, rc, handler_calls);
            handler_calls = 0;
            rc = agx_allreduce(sb, rb, 8, MPI_INT, MPI_SUM, mc);
            CHECK(rc == MPI_SUCCESS && handler_calls == 0, "np %d: %s after an unchecked %s mismatch: rc %d", size,
                  algs[a], what[k], rc);
            nrun++;
        }
    if (rank == 0)
        printf("mismatches without AGX_CHECK_ARGS: %d (algorithm, count or datatype) cases ended with an error on "
               "np=%d\n", nrun, size);
    MPI_Comm_free(&mc);
    MPI_Errhandler_free(&eh);
}

int main(int argc, char **argv)
{
    mt_run run;
    setenv("AGX_FALLBACK", "silent", 1);
    mt_start(&argc, &argv, &run);
    rank = run.rank, size = run.size, quick = run.quick;
    for (int i = 1; i < argc; i++)
        full |= !strcmp(argv[i], "--full");
    const char *only_types = getenv("AGX_TEST_TYPES"); /* e.g. MPI_SHORT,MPI_DOUBLE_INT */
    tt_type types[TT_MAX_TYPES];
    int nt = tt_types(types, rank == 0);
    if (rank == 0)
        printf("test_typeops: p = %d, seed %u (AGX_TEST_SEED=%u to repeat), %d predefined types\n", size, run.seed,
               run.seed, nt);
    const char *algs[32];
    int nalg = 0;
    for (int a = 0; a < agx_algorithm_count(AGX_OP_ALLREDUCE, AGX_KIND_INTRA) && nalg < 31; a++) {
        const char *name;
        agx_algorithm_info(AGX_OP_ALLREDUCE, AGX_KIND_INTRA, a, &name, NULL);
        if (!run.only || strstr(run.only, name))
            algs[nalg++] = name;
    }
    if (!run.only || strstr(run.only, "auto"))
        algs[nalg++] = "auto";
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN); /* duplicates inherit it */
    MPI_Op umax, uaff;
    MPI_Op_create(tt_user_maxloc, 1, &umax);
    MPI_Op_create(tt_user_affine, 0, &uaff);
    /* configurations: as launched; regions of 2; regions of 2 with 8-byte lanes */
    static const char *cfgs[3] = {"regions=as-launched", "regions=2", "regions=2,lanes=8B"};
    for (int g = 0; g < (quick ? 2 : 3); g++) {
        if (g > 0)
            setenv("AGX_REGION_SIZE", "2", 1);
        if (g == 2)
            setenv("AGX_AR_LANE_BYTES", "8", 1);
        cfg = cfgs[g];
        MPI_Comm_dup(MPI_COMM_WORLD, &comm);
        for (int ti = 0; ti < nt; ti++) {
            const tt_type *t = &types[ti];
            int rep = is_rep(t->name);
            if (only_types && !strstr(only_types, t->name))
                continue;
            /* every type as launched; the representatives on regions (all with --full),
             * --quick: the representatives only */
            if (!full && !rep && (quick || g > 0))
                continue;
            /* the named type, then (not with --quick, and only in the first configuration)
             * derived types of it */
            int nd = full || (!quick && g == 0 && rep) ? 4 : 1;
            for (int d = 0; d < nd; d++) {
                tcase c = {.base = t, .type = t->type, .per = 1, .derived = d > 0, .rep = rep};
                MPI_Aint lb, ext;
                MPI_Type_get_extent(t->type, &lb, &ext);
                if (d == 0)
                    snprintf(c.name, sizeof c.name, "%s", t->name);
                else if (d == 1) {
                    MPI_Type_contiguous(3, t->type, &c.type);
                    c.per = 3;
                    snprintf(c.name, sizeof c.name, "contiguous(3,%s)", t->name);
                } else if (d == 2) {
                    MPI_Type_vector(2, 1, 2, t->type, &c.type);
                    c.per = 2;
                    snprintf(c.name, sizeof c.name, "vector(2,1,2,%s)", t->name);
                } else {
                    MPI_Datatype ib;
                    int dis[2] = {1, 0};
                    MPI_Type_create_indexed_block(2, 1, dis, t->type, &ib);
                    MPI_Type_create_resized(ib, -ext, 4 * ext, &c.type);
                    MPI_Type_free(&ib);
                    c.per = 2;
                    snprintf(c.name, sizeof c.name, "resized(indexed_block(2,1,{1,0},%s),lb=-ext,ext=4ext)",
                             t->name);
                }
                if (d > 0)
                    MPI_Type_commit(&c.type);
                for (int op = 0; op < TT_OP_N; op++)
                    if (tt_allowed(op, t->cls))
                        run_case(&c, op, tt_op(op), tt_op_name[op], run.seed + (unsigned)(ti * 131 + op * 17 + d),
                                 algs, nalg);
                if (d > 0)
                    MPI_Type_free(&c.type);
                /* user ops on the padded pairs */
                if (d == 0 && t->type == MPI_DOUBLE_INT)
                    run_case(&c, TT_OP_N, umax, "user MAXLOC (commutative)", run.seed + 1, algs, nalg);
                if (d == 0 && t->type == MPI_SHORT_INT)
                    run_case(&c, TT_OP_N, uaff, "user affine composition (non-commutative)", run.seed + 2, algs,
                             nalg);
            }
        }
        MPI_Comm_free(&comm);
    }
    unsetenv("AGX_REGION_SIZE");
    unsetenv("AGX_AR_LANE_BYTES");
    if (size > 1)
        mismatches(algs, nalg);
    MPI_Op_free(&umax);
    MPI_Op_free(&uaff);
    if (rank == 0)
        printf("test_typeops: %lld agx calls compared\n%s: %d passed, %d failed\n", cases_run,
               failed ? "FAIL" : "ok", passed, failed);
    MPI_Finalize();
    return failed != 0;
}
