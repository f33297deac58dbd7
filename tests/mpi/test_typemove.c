/*
 * agx's data-moving operations against the MPI library's own over every predefined named
 * datatype (issue 34): allgather, allgatherv and alltoallv, intra-communicator (every
 * algorithm forced, and the default) and inter-communicator (two halves of the world), on
 * each type of MPI's reduction table (typetable.h) and the named types no reduction takes
 * (MPI_CHAR, MPI_WCHAR, MPI_CHARACTER, MPI_PACKED), the padded pairs (MPI_DOUBLE_INT 12
 * data bytes in 16, MPI_SHORT_INT, MPI_LONG_DOUBLE_INT) included. Each type also inside
 * derived types: contiguous(3,T), vector(2,1,2,T) (holes) and indexed_block({1,0},T)
 * resized to lower bound -extent (negative lb, reversed blocks); the representatives, or
 * every type with --full. On every other algorithm the data is sent as the named base
 * type and received as the derived one (other types, equal signatures).
 *
 * Variants: plain; MPI_IN_PLACE in every position MPI allows it (allgather, allgatherv,
 * alltoallv; intra only, as MPI says); MPI_BOTTOM with a send type at the buffer's absolute
 * address (allgather(v)). Counts uneven and zero, displacements shuffled with gaps; on the
 * communicator as launched and on emulated regions of 2.
 *
 * Compared: the whole receive allocation, byte for byte, with the same call's result from
 * the PMPI_ function on an identical buffer (the data of the type map, and the holes,
 * which both must leave as they were; a long double's 6 padding bytes are not data and not
 * compared). The log names each (type, operation, kind, np,
 * configuration) with the number of algorithms and variants run. Tiers: --quick (the
 * representatives), default, --full; --algs LIST runs only the algorithms LIST names,
 * AGX_TEST_TYPES=LIST only the types; AGX_TEST_TRACE=1 names each call before it runs (to
 * find a hang).
 */
#include "agx.h"
#include "mpitest.h"
#include "typetable.h"

static int rank, size, passed, failed, quick, full;
static long long calls;
static const char *cfg = "", *only_algs;

enum { AG, AGV, A2A, NOPS };
static const char *const opname[NOPS] = {"allgather", "allgatherv", "alltoallv"};
static const agx_op agxop[NOPS] = {AGX_OP_ALLGATHER, AGX_OP_ALLGATHERV, AGX_OP_ALLTOALLV};
enum { PLAIN, INPLACE, BOTTOM, NVAR };

static const char *const REPS[] = {"MPI_INT",         "MPI_SHORT",      "MPI_CHAR",    "MPI_DOUBLE",
                                   "MPI_LONG_DOUBLE", "MPI_C_LONG_DOUBLE_COMPLEX", "MPI_2INT",
                                   "MPI_SHORT_INT",   "MPI_DOUBLE_INT", "MPI_LONG_DOUBLE_INT",
                                   "MPI_BYTE",        "MPI_PACKED"};

typedef struct {
    char name[112];
    MPI_Datatype rt;   /* the type blocks are counted in */
    MPI_Datatype base; /* its named base, `per` per element of rt */
    int per;
    int ldpad; /* elements hold long doubles (fill) */
} mcase;

/* One call, the same for PMPI_ and agx. */
typedef struct {
    int op, var;
    MPI_Comm comm;
    MPI_Datatype st, rt;
    int sc, rc;                   /* allgather(v)'s send count, allgather's receive count */
    int *scounts, *sdispls, *rcounts, *rdispls;
    const char *sb;
} mcall;

static int call(int lib, const mcall *m, char *rb)
{
    const void *sb = m->var == INPLACE ? MPI_IN_PLACE : m->sb;
    MPI_Datatype st = m->st;
    int sc = m->sc, rc;
    if (m->var == BOTTOM) { /* one element of a type at the buffer's absolute address */
        MPI_Datatype run;
        MPI_Aint at;
        int one = 1;
        MPI_Get_address(m->sb, &at);
        MPI_Type_contiguous(sc, m->st, &run);
        MPI_Type_create_struct(1, &one, &at, &run, &st);
        MPI_Type_commit(&st);
        MPI_Type_free(&run);
        sb = MPI_BOTTOM, sc = 1;
    }
    if (m->op == AG)
        rc = lib ? PMPI_Allgather(sb, sc, st, rb, m->rc, m->rt, m->comm)
                 : agx_allgather(sb, sc, st, rb, m->rc, m->rt, m->comm);
    else if (m->op == AGV)
        rc = lib ? PMPI_Allgatherv(sb, sc, st, rb, m->rcounts, m->rdispls, m->rt, m->comm)
                 : agx_allgatherv(sb, sc, st, rb, m->rcounts, m->rdispls, m->rt, m->comm);
    else
        rc = lib ? PMPI_Alltoallv(sb, m->scounts, m->sdispls, st, rb, m->rcounts, m->rdispls, m->rt, m->comm)
                 : agx_alltoallv(sb, m->scounts, m->sdispls, st, rb, m->rcounts, m->rdispls, m->rt, m->comm);
    if (m->var == BOTTOM)
        MPI_Type_free(&st);
    return rc;
}

/* Block counts, the same on every rank: what rank r of group g sends (allgather(v)), and
 * what i sends j (alltoallv; symmetric for in place, as MPI requires there). With
 * MPI_BOTTOM every rank sends the same non-zero count: each rank's absolute send type is
 * then one element of its own size, and Open MPI 4.1.4's own MPI_Allgatherv loses a block
 * (intra, one rank's type empty) or fails with MPI_ERR_TRUNCATE and hangs (inter) when
 * those sizes differ, a valid call (this test found it; agx's algorithms give the right
 * data there, but `native` and the default may pass such a call to the library). */
static int gcount(int op, int var, int g, int r, unsigned seed)
{
    if (var == BOTTOM)
        return 1 + (int)(seed % 3u);
    return (int)((op == AG ? seed : (unsigned)(r * 7 + g * 3) + seed) % 4u);
}
static int pcount(int var, int g, int i, int j, unsigned seed)
{
    return (int)((var == INPLACE ? (unsigned)(i + j) + seed : (unsigned)(i * 3 + j * 5 + g * 7) + seed) % 4u);
}

/* Random bytes; for long double types the 6 padding bytes of each 80-bit value (bytes
 * 10-15 of every 16, where its elements sit from a malloc'd start) are 0 in every buffer
 * and not compared: they are not data, and MPICH 4.0 does not move them as bytes. */
static void fill(char *p, size_t n, unsigned *rs, int ldpad)
{
    for (size_t k = 0; k < n; k++)
        p[k] = ldpad && k % 16 >= 10 ? 0 : (char)(mt_rand(rs) >> 11);
}

/* One (case, operation) on comm: every algorithm and variant; returns the failures and
 * names them in bad. me/n: this rank and the peers it receives from; g/rg: the group of
 * this rank and of those peers (0 intra). */
static int run_op(const mcase *c, int op, MPI_Comm comm, int inter, int me, int n, int g, int rg, const char **algs,
                  int nalg, unsigned seed, char *bad, size_t badlen, int *nvar)
{
    int nbad = 0, nsend = inter ? 0 : n; /* alltoallv: peers sent to (= n) */
    if (inter)
        MPI_Comm_remote_size(comm, &nsend);
    int *ia = malloc(sizeof(int) * (size_t)(4 * n + 4)), *rcounts = ia, *rdispls = ia + n, *scounts = ia + 2 * n,
        *sdispls = ia + 3 * n;
    MPI_Aint lb, bext;
    MPI_Type_get_extent(c->base, &lb, &bext);
    *nvar = 0;
    for (int var = 0; var < NVAR; var++) {
        if ((var == INPLACE && inter) || (var == BOTTOM && op == A2A))
            continue;
        ++*nvar;
        for (int a = 0; a < nalg; a++) {
            unsigned s = seed + (unsigned)(var * 977 + a * 131), rs = s ^ (unsigned)(me * 2654435761u + (unsigned)g);
            int sendbase = a % 2 && var != INPLACE; /* the named base sent, the derived type received */
            mcall m = {.op = op, .var = var, .comm = comm, .rt = c->rt, .st = sendbase ? c->base : c->rt,
                       .scounts = scounts, .sdispls = sdispls, .rcounts = rcounts, .rdispls = rdispls};
            int smul = sendbase ? c->per : 1;
            long long rend = 0, send_elems = 0;
            if (op == AG) {
                m.rc = gcount(op, var, rg, 0, s);
                m.sc = gcount(op, var, g, me, s) * smul;
                rend = (long long)n * m.rc;
                send_elems = m.sc;
                for (int i = 0; i < n; i++)
                    rdispls[i] = i * m.rc;
            } else if (op == AGV) {
                for (int i = 0; i < n; i++)
                    rcounts[i] = gcount(op, var, rg, i, s);
                rend = mt_shuffled_displs(n, rcounts, rdispls, &rs);
                m.sc = gcount(op, var, g, me, s) * smul;
                send_elems = m.sc;
            } else {
                for (int i = 0; i < n; i++)
                    rcounts[i] = pcount(var, rg, i, me, s);
                for (int j = 0; j < nsend; j++)
                    scounts[j] = pcount(var, g, me, j, s);
                rend = mt_shuffled_displs(n, rcounts, rdispls, &rs);
                send_elems = mt_shuffled_displs(nsend, scounts, sdispls, &rs) * smul;
                for (int j = 0; j < nsend; j++)
                    scounts[j] *= smul, sdispls[j] *= smul;
            }
            if (var == INPLACE && op == AG) /* the own block of the receive buffer */
                m.sc = 0;
            size_t slen, rlen;
            char *smem, *rmem, *refmem, *initmem;
            m.sb = tt_buf_alloc(m.st, (int)send_elems, &smem, &slen);
            char *rb = tt_buf_alloc(c->rt, (int)rend, &rmem, &rlen);
            char *ref = tt_buf_alloc(c->rt, (int)rend, &refmem, &rlen);
            tt_buf_alloc(c->rt, (int)rend, &initmem, &rlen);
            fill(smem, slen + 64, &rs, c->ldpad);
            fill(initmem, rlen + 64, &rs, c->ldpad); /* in place: the own data too */
            memcpy(refmem, initmem, rlen + 64);
            memcpy(rmem, initmem, rlen + 64);
            if (getenv("AGX_TEST_TRACE"))
                fprintf(stderr, "rank %d: %s %s %s var %d sendbase %d\n", rank, c->name, opname[op], algs[a], var,
                        sendbase);
            int lrc = call(1, &m, ref);
            agx_comm_set_algorithm(comm, agxop[op], algs[a]);
            int arc = call(0, &m, rb);
            calls++;
            size_t at = 0; /* the first differing byte (not a long double's padding) */
            while (at < rlen + 64 && (rmem[at] == refmem[at] || (c->ldpad && at % 16 >= 10)))
                at++;
            if (lrc != MPI_SUCCESS || arc != MPI_SUCCESS || at < rlen + 64) {
                size_t u = strlen(bad);
                if (u + 160 < badlen)
                    snprintf(bad + u, badlen - u, " [%s %s%s: rc %d/%d, first differing byte %zu of %zu]", algs[a],
                             var == PLAIN ? "plain" : var == INPLACE ? "in place" : "MPI_BOTTOM",
                             sendbase ? ", sent as base" : "", lrc, arc, at, rlen);
                nbad++;
            }
            free(smem), free(rmem), free(refmem), free(initmem);
        }
    }
    free(ia);
    return nbad;
}

static void run_case(const mcase *c, MPI_Comm intra, MPI_Comm inter, int g, unsigned seed)
{
    for (int kind = 0; kind < 2; kind++) {
        MPI_Comm comm = kind ? inter : intra;
        if (comm == MPI_COMM_NULL)
            continue;
        int me, n;
        MPI_Comm_rank(comm, &me);
        if (kind)
            MPI_Comm_remote_size(comm, &n);
        else
            MPI_Comm_size(comm, &n);
        for (int op = 0; op < NOPS; op++) {
            const char *algs[40];
            int nalg = 0;
            agx_kind k = kind ? AGX_KIND_INTER : AGX_KIND_INTRA;
            for (int a = 0; a < agx_algorithm_count(agxop[op], k) && nalg < 39; a++) {
                agx_algorithm_info(agxop[op], k, a, &algs[nalg], NULL);
                nalg += !only_algs || strstr(only_algs, algs[nalg]);
            }
            if (!only_algs || strstr(only_algs, "auto"))
                algs[nalg++] = "auto";
            char bad[2048] = "";
            int nvar;
            int nbad = run_op(c, op, comm, kind, me, n, kind ? g : 0, kind ? 1 - g : 0, algs, nalg,
                              seed + (unsigned)(op * 7 + kind), bad, sizeof bad, &nvar);
            CHECK(nbad == 0, "np %d %s: %s %s %s differs from PMPI_:%s", size, cfg, c->name, opname[op],
                  kind ? "inter" : "intra", bad);
            if (rank == 0)
                printf("%s %s %s %s np=%d %s algorithms=%d variants=%d\n", nbad ? "FAIL" : "ok", c->name, opname[op],
                       kind ? "inter" : "intra", size, cfg, nalg, nvar);
        }
    }
}

static int is_rep(const char *name)
{
    for (size_t i = 0; i < sizeof REPS / sizeof REPS[0]; i++)
        if (!strcmp(REPS[i], name))
            return 1;
    return 0;
}

int main(int argc, char **argv)
{
    mt_run run;
    setenv("AGX_FALLBACK", "silent", 1);
    mt_start(&argc, &argv, &run);
    rank = run.rank, size = run.size, quick = run.quick, only_algs = run.only;
    for (int i = 1; i < argc; i++)
        full |= !strcmp(argv[i], "--full");
    tt_type tt[TT_MAX_TYPES];
    int ntt = tt_types(tt, rank == 0), nt = 0;
    struct {
        const char *name;
        MPI_Datatype type;
    } types[TT_MAX_TYPES + 8], extra[] = {{"MPI_CHAR", MPI_CHAR}, {"MPI_WCHAR", MPI_WCHAR},
                                          {"MPI_CHARACTER", MPI_CHARACTER}, {"MPI_PACKED", MPI_PACKED}};
    for (int i = 0; i < ntt; i++)
        types[nt].name = tt[i].name, types[nt++].type = tt[i].type;
    for (size_t i = 0; i < sizeof extra / sizeof extra[0]; i++) {
        int sz = 0;
        if (extra[i].type != MPI_DATATYPE_NULL && MPI_Type_size(extra[i].type, &sz) == MPI_SUCCESS && sz > 0)
            types[nt++] = extra[i];
    }
    const char *only_types = getenv("AGX_TEST_TYPES");
    if (rank == 0)
        printf("test_typemove: p = %d, seed %u (AGX_TEST_SEED=%u to repeat), %d predefined types\n", size, run.seed,
               run.seed, nt);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN); /* duplicates inherit it */
    int g = rank >= size / 2; /* the inter-communicator's halves */
    static const char *cfgs[2] = {"regions=as-launched", "regions=2"};
    for (int cf = 0; cf < 2; cf++) {
        if (cf == 1)
            setenv("AGX_REGION_SIZE", "2", 1); /* read when agx first sees the new communicators */
        cfg = cfgs[cf];
        MPI_Comm intra, local, inter = MPI_COMM_NULL;
        MPI_Comm_dup(MPI_COMM_WORLD, &intra);
        if (size > 1) {
            MPI_Comm_split(MPI_COMM_WORLD, g, rank, &local);
            MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, g ? 0 : size / 2, 71, &inter);
            MPI_Comm_free(&local);
        }
        for (int ti = 0; ti < nt; ti++) {
            int rep = is_rep(types[ti].name);
            if ((only_types && !strstr(only_types, types[ti].name)) || (quick && !rep))
                continue;
            MPI_Aint lb, ext;
            MPI_Type_get_extent(types[ti].type, &lb, &ext);
            int nd = full || (rep && cf == 0) ? 4 : 1;
            for (int d = 0; d < nd; d++) {
                mcase c = {.rt = types[ti].type, .base = types[ti].type, .per = 1,
                           .ldpad = strstr(types[ti].name, "LONG_DOUBLE") || strstr(types[ti].name, "REAL16") ||
                                    strstr(types[ti].name, "COMPLEX32")};
                if (d == 0)
                    snprintf(c.name, sizeof c.name, "%s", types[ti].name);
                else if (d == 1) {
                    MPI_Type_contiguous(3, c.base, &c.rt);
                    c.per = 3;
                    snprintf(c.name, sizeof c.name, "contiguous(3,%s)", types[ti].name);
                } else if (d == 2) {
                    MPI_Type_vector(2, 1, 2, c.base, &c.rt);
                    c.per = 2;
                    snprintf(c.name, sizeof c.name, "vector(2,1,2,%s)", types[ti].name);
                } else {
                    MPI_Datatype ib;
                    int dis[2] = {1, 0};
                    MPI_Type_create_indexed_block(2, 1, dis, c.base, &ib);
                    MPI_Type_create_resized(ib, -ext, 4 * ext, &c.rt);
                    MPI_Type_free(&ib);
                    c.per = 2;
                    snprintf(c.name, sizeof c.name, "resized(indexed_block(2,1,{1,0},%s),lb=-ext,ext=4ext)",
                             types[ti].name);
                }
                if (d > 0)
                    MPI_Type_commit(&c.rt);
                run_case(&c, intra, inter, g, run.seed + (unsigned)(ti * 53 + d * 11 + cf));
                if (d > 0)
                    MPI_Type_free(&c.rt);
            }
        }
        MPI_Comm_free(&intra);
        if (inter != MPI_COMM_NULL)
            MPI_Comm_free(&inter);
    }
    unsetenv("AGX_REGION_SIZE");
    if (rank == 0)
        printf("test_typemove: %lld agx calls compared\n%s: %d passed, %d failed\n", calls, failed ? "FAIL" : "ok",
               passed, failed);
    MPI_Finalize();
    return failed != 0;
}
