/*
 * API behaviour on 3+ ranks: bad input gets its MPI error class through the
 * communicator's error handler, which a counting handler sees called exactly once per
 * failing call (never a crash or a hang, and the communicator stays usable), unknown algorithm names list the valid ones, forced algorithms fall back
 * under AGX_FALLBACK, the registry listing, exact counter values against the schedules'
 * closed forms, and the native algorithm on an inter-communicator.
 */
#include "agx.h"
#include "mpitest.h"

#include <string.h>

static int rank, p, passed, failed;


static int err_class(int rc)
{
    int c;
    MPI_Error_class(rc, &c);
    return c;
}

static const char *err_msg(int rc)
{
    static char s[MPI_MAX_ERROR_STRING];
    int len;
    agx_error_string(rc, s, &len);
    return s;
}

static int handler_calls, handler_class;
static void record_handler(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    handler_calls++;
    MPI_Error_class(*code, &handler_class);
}


/* A communicator whose error handler counts its calls (and returns, as ERRORS_RETURN). */
static MPI_Comm counting_comm(void)
{
    MPI_Comm c;
    MPI_Errhandler eh;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_Comm_create_errhandler(record_handler, &eh);
    MPI_Comm_set_errhandler(c, eh);
    MPI_Errhandler_free(&eh);
    return c;
}

/* What the default rule runs for an allgather of n ints per rank on a new communicator
 * whose regions are AGX_REGION_SIZE=region_size (NULL: the nodes); into name[64]. */
static void default_ran(const char *region_size, int n, char *name)
{
    int p;
    const char *ran;
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    region_size ? setenv("AGX_REGION_SIZE", region_size, 1) : unsetenv("AGX_REGION_SIZE");
    MPI_Comm c = counting_comm();
    int *sb = calloc((size_t)n, sizeof(int)), *rb = malloc(sizeof(int) * (size_t)n * p);
    agx_allgather(sb, n, MPI_INT, rb, n, MPI_INT, c);
    agx_comm_last_algorithm(c, AGX_OP_ALLGATHER, &ran);
    snprintf(name, 64, "%s", ran);
    free(sb);
    free(rb);
    MPI_Comm_free(&c);
    unsetenv("AGX_REGION_SIZE");
}

/* A failing call: its class, and the communicator's handler ran exactly once. */
#define EXPECT_ERR(call, cls, what)                                                        \
    do {                                                                                   \
        handler_calls = 0;                                                                 \
        int rc_ = (call);                                                                  \
        CHECK(err_class(rc_) == (cls) && handler_calls == 1 && handler_class == (cls),      \
              "%s gave %s, handler called %d times", what, err_msg(rc_), handler_calls);   \
    } while (0)

static void test_bad_input(void)
{
    MPI_Comm c = counting_comm();
    int sb[4] = {1, 2, 3, 4}, *rb = malloc(sizeof(int) * 4 * p), counts[64], displs[64];
    for (int i = 0; i < p; i++) {
        counts[i] = 1;
        displs[i] = i;
    }
    EXPECT_ERR(agx_allgather(sb, -1, MPI_INT, rb, 1, MPI_INT, c), MPI_ERR_COUNT, "negative sendcount");
    EXPECT_ERR(agx_allgather(sb, 1, MPI_INT, rb, -1, MPI_INT, c), MPI_ERR_COUNT, "negative recvcount");
    EXPECT_ERR(agx_allgather(NULL, 1, MPI_INT, rb, 1, MPI_INT, c), MPI_ERR_BUFFER, "NULL sendbuf");
    EXPECT_ERR(agx_allgather(sb, 1, MPI_INT, NULL, 1, MPI_INT, c), MPI_ERR_BUFFER, "NULL recvbuf");
    handler_calls = 0;
    int rc = agx_allgather(NULL, 0, MPI_INT, NULL, 0, MPI_INT, c);
    CHECK(rc == MPI_SUCCESS && handler_calls == 0, "NULL buffers with zero counts must be fine: %s", err_msg(rc));
    EXPECT_ERR(agx_allgather(sb, 1, MPI_DATATYPE_NULL, rb, 1, MPI_INT, c), MPI_ERR_TYPE, "null sendtype");
    EXPECT_ERR(agx_allgather(sb, 1, MPI_INT, rb, 1, MPI_DATATYPE_NULL, c), MPI_ERR_TYPE, "null recvtype");
    EXPECT_ERR(agx_allgather(sb, 2, MPI_INT, rb, 1, MPI_INT, c), MPI_ERR_TRUNCATE, "signature mismatch");
    counts[p - 1] = -3;
    EXPECT_ERR(agx_allgatherv(sb, 1, MPI_INT, rb, counts, displs, MPI_INT, c), MPI_ERR_COUNT,
               "negative recvcounts[]");
    rc = agx_allgatherv(sb, 1, MPI_INT, rb, counts, displs, MPI_INT, c);
    CHECK(strstr(err_msg(rc), "recvcounts") != NULL, "negative recvcounts[] gave %s", err_msg(rc));
    counts[p - 1] = 1;
    EXPECT_ERR(agx_allgatherv(sb, 1, MPI_INT, rb, NULL, displs, MPI_INT, c), MPI_ERR_ARG, "NULL recvcounts");
    EXPECT_ERR(agx_intergroup_allgather(sb, 1, MPI_INT, rb, 1, MPI_INT, c, -1), MPI_ERR_ARG, "negative colour");
    EXPECT_ERR(agx_intergroup_allgather(sb, 1, MPI_INT, rb, 1, MPI_INT, c, 0), MPI_ERR_ARG,
               "one colour on every rank");
    EXPECT_ERR(agx_intergroup_allgather(MPI_IN_PLACE, 1, MPI_INT, rb, 1, MPI_INT, c, rank % 2), MPI_ERR_ARG,
               "MPI_IN_PLACE on a colour split");

    /* allreduce: local checks, one error each */
    MPI_Datatype mixed;
    int bl[2] = {1, 1};
    MPI_Aint bd[2] = {0, 8};
    MPI_Datatype bt[2] = {MPI_INT, MPI_DOUBLE};
    MPI_Type_create_struct(2, bl, bd, bt, &mixed);
    MPI_Type_commit(&mixed);
    EXPECT_ERR(agx_allreduce(sb, rb, -1, MPI_INT, MPI_SUM, c), MPI_ERR_COUNT, "allreduce: negative count");
    EXPECT_ERR(agx_allreduce(sb, rb, 1, MPI_INT, MPI_OP_NULL, c), MPI_ERR_OP, "allreduce: MPI_OP_NULL");
    EXPECT_ERR(agx_allreduce(sb, rb, 1, MPI_DATATYPE_NULL, MPI_SUM, c), MPI_ERR_TYPE, "allreduce: null type");
    EXPECT_ERR(agx_allreduce(sb, NULL, 1, MPI_INT, MPI_SUM, c), MPI_ERR_BUFFER, "allreduce: NULL recvbuf");
    EXPECT_ERR(agx_allreduce(rb, rb, 1, MPI_INT, MPI_SUM, c), MPI_ERR_BUFFER, "allreduce: aliased buffers");
    /* a predefined op on mixed element types is outside MPI's table: native, the library's
     * own error (Open MPI: MPI_ERR_OP, MPICH: MPI_ERR_TYPE or MPI_ERR_OP) */
    MPI_Errhandler prev;
    MPI_Comm_get_errhandler(c, &prev);
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    int librc = PMPI_Allreduce(sb, rb, 1, mixed, MPI_SUM, c), libclass = MPI_SUCCESS;
    MPI_Error_class(librc, &libclass);
    MPI_Comm_set_errhandler(c, prev);
    MPI_Errhandler_free(&prev);
    if (librc != MPI_SUCCESS)
        EXPECT_ERR(agx_allreduce(sb, rb, 1, mixed, MPI_SUM, c), libclass, "allreduce: struct of int and double");
    MPI_Type_free(&mixed);

    /* unknown names: the error lists the valid ones */
    EXPECT_ERR(agx_comm_set_algorithm(c, AGX_OP_ALLGATHER, "no_such_alg"), MPI_ERR_ARG, "unknown name");
    rc = agx_comm_set_algorithm(c, AGX_OP_ALLGATHER, "no_such_alg");
    CHECK(strstr(err_msg(rc), "no_such_alg") && strstr(err_msg(rc), "ring") && strstr(err_msg(rc), "bruck"),
          "unknown name gave %s", err_msg(rc));
    EXPECT_ERR(agx_comm_set_algorithm(c, (agx_op)42, "ring"), MPI_ERR_ARG, "invalid op");

    /* errors found inside agx (regions, parameters, fallback policy): one call too */
    setenv("AGX_REGION_SIZE", "x", 1);
    MPI_Comm r = counting_comm();
    agx_comm_set_algorithm(r, AGX_OP_ALLGATHER, "loc_bruck");
    EXPECT_ERR(agx_allgather(sb, 1, MPI_INT, rb, 1, MPI_INT, r), MPI_ERR_ARG, "malformed AGX_REGION_SIZE");
    unsetenv("AGX_REGION_SIZE");
    MPI_Comm_free(&r);
    setenv("AGX_KBRUCK_RADIX", "1", 1); /* read with the communicator's choice state */
    r = counting_comm();
    agx_comm_set_algorithm(r, AGX_OP_ALLGATHER, "kbruck");
    EXPECT_ERR(agx_allgather(sb, 1, MPI_INT, rb, 1, MPI_INT, r), MPI_ERR_ARG, "AGX_KBRUCK_RADIX=1");
    unsetenv("AGX_KBRUCK_RADIX");
    MPI_Comm_free(&r);

    /* MPI_COMM_NULL: MPI_COMM_WORLD's handler, once */
    MPI_Errhandler eh, old;
    MPI_Comm_get_errhandler(MPI_COMM_WORLD, &old);
    MPI_Comm_create_errhandler(record_handler, &eh);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh);
    EXPECT_ERR(agx_allgather(sb, 1, MPI_INT, rb, 1, MPI_INT, MPI_COMM_NULL), MPI_ERR_COMM, "MPI_COMM_NULL");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, old);
    MPI_Errhandler_free(&eh);
    MPI_Errhandler_free(&old);

    /* after all that the communicator still works */
    handler_calls = 0;
    rc = agx_allgather(sb, 1, MPI_INT, rb, 1, MPI_INT, c);
    int ok = rc == MPI_SUCCESS && handler_calls == 0;
    for (int i = 0; i < p && ok; i++)
        ok = rb[i] == 1;
    CHECK(ok, "valid call after errors failed: %s", err_msg(rc));
    free(rb);
    MPI_Comm_free(&c);
}

static void test_environment_and_fallback(void)
{
    int sb = rank, rb[64];
    const char *ran;

    setenv("AGX_ALLGATHER_ALGORITHM", "bogus", 1);
    MPI_Comm c = counting_comm();
    EXPECT_ERR(agx_allgather(&sb, 1, MPI_INT, rb, 1, MPI_INT, c), MPI_ERR_ARG, "unknown env algorithm");
    int rc = agx_allgather(&sb, 1, MPI_INT, rb, 1, MPI_INT, c);
    CHECK(err_class(rc) == MPI_ERR_ARG && strstr(err_msg(rc), "bogus") && strstr(err_msg(rc), "ring"),
          "unknown env algorithm gave %s", err_msg(rc));
    MPI_Comm_free(&c);

    setenv("AGX_ALLGATHER_ALGORITHM", "gather_bcast", 1);
    c = counting_comm();
    rc = agx_allgather(&sb, 1, MPI_INT, rb, 1, MPI_INT, c);
    agx_comm_last_algorithm(c, AGX_OP_ALLGATHER, &ran);
    CHECK(rc == MPI_SUCCESS && !strcmp(ran, "gather_bcast"), "env choice ran %s", ran);
    agx_comm_set_algorithm(c, AGX_OP_ALLGATHER, "bruck");  /* the communicator's choice wins */
    rc = agx_allgather(&sb, 1, MPI_INT, rb, 1, MPI_INT, c);
    agx_comm_last_algorithm(c, AGX_OP_ALLGATHER, &ran);
    CHECK(rc == MPI_SUCCESS && !strcmp(ran, "bruck"), "comm choice ran %s", ran);
    MPI_Comm_free(&c);
    unsetenv("AGX_ALLGATHER_ALGORITHM");

    /* default rule: one region (this host) -> native; regions of one process: small
     * messages -> bruck, large -> ring; regions of two -> multilane */
    char on1[64], r1s[64], r1l[64], r2[64];
    default_ran(NULL, 1, on1), default_ran("1", 1, r1s), default_ran("1", 1 << 17, r1l), default_ran("2", 1, r2);
    CHECK(!strcmp(on1, "native"), "default on one node ran %s", on1);
    CHECK(!strcmp(r1s, p > 1 ? "bruck" : "native"), "default for 4 B, regions of 1, ran %s", r1s);
    CHECK(!strcmp(r1l, p > 1 ? "ring" : "native"), "default for 512 KiB, regions of 1, ran %s", r1l);
    CHECK(!strcmp(r2, p > 2 ? "multilane" : "native"), "default for 4 B, regions of 2, ran %s", r2);

    /* neighbor_exchange needs an even p: fallback policies */
    const char *policy[] = {"silent", "warn", "error"};
    for (int k = 0; k < 3; k++) {
        setenv("AGX_FALLBACK", policy[k], 1);
        c = counting_comm();
        agx_comm_set_algorithm(c, AGX_OP_ALLGATHER, "neighbor_exchange");
        rc = agx_allgather(&sb, 1, MPI_INT, rb, 1, MPI_INT, c);
        agx_comm_last_algorithm(c, AGX_OP_ALLGATHER, &ran);
        if (p % 2 == 0)
            CHECK(rc == MPI_SUCCESS && !strcmp(ran, "neighbor_exchange"), "even p ran %s", ran);
        else if (k < 2)
            CHECK(rc == MPI_SUCCESS && !strcmp(ran, "ring"), "%s fallback ran %s", policy[k], ran);
        else {
            CHECK(err_class(rc) == MPI_ERR_ARG && strstr(err_msg(rc), "even"),
                  "AGX_FALLBACK=error gave %s", err_msg(rc));
            EXPECT_ERR(agx_allgather(&sb, 1, MPI_INT, rb, 1, MPI_INT, c), MPI_ERR_ARG, "AGX_FALLBACK=error");
        }
        MPI_Comm_free(&c);
    }
    unsetenv("AGX_FALLBACK");
}

static void test_listing(void)
{
    const char *name, *desc;
    int n = agx_algorithm_count(AGX_OP_ALLGATHER, AGX_KIND_INTRA);
    CHECK(n >= 6, "only %d algorithms", n);
    int found = 0;
    for (int i = 0; i < n; i++) {
        agx_algorithm_info(AGX_OP_ALLGATHER, AGX_KIND_INTRA, i, &name, &desc);
        found += !strcmp(name, "recursive_doubling") && strlen(desc) > 10;
    }
    CHECK(found == 1, "recursive_doubling not listed with a description");
    CHECK(agx_algorithm_info(AGX_OP_ALLGATHER, AGX_KIND_INTRA, n, &name, &desc) == MPI_ERR_ARG,
          "out of range index accepted");
    CHECK(agx_algorithm_count((agx_op)7, AGX_KIND_INTRA) == 0, "bad op has algorithms");

    /* regions: one shared-memory node here, so every rank is in region 0 */
    MPI_Comm c = counting_comm();
    int *reg = malloc(sizeof(int) * p), zero = 1;
    int rc = agx_comm_regions(c, reg);
    for (int i = 0; i < p; i++)
        zero &= reg[i] == 0;
    CHECK(rc == MPI_SUCCESS && zero, "agx_comm_regions on one node: rc %d", rc);
    rc = agx_comm_regions(c, NULL);
    CHECK(err_class(rc) == MPI_ERR_BUFFER, "agx_comm_regions(NULL) gave %s", err_msg(rc));
    free(reg);
    MPI_Comm_free(&c);
}

/* Counters against the closed forms of the schedules (single node: all local). */
static void test_counters(void)
{
    struct { const char *alg; int msgs; long long blocks; } exp[4];
    int lg = 0, p2 = 1;
    while ((1 << lg) < p) lg++;
    while (p2 * 2 <= p) p2 *= 2;
    int e = p - p2, L = 0;
    while ((1 << L) < p2) L++;
    exp[0].alg = "ring";  exp[0].msgs = p - 1; exp[0].blocks = p - 1;
    exp[1].alg = "bruck"; exp[1].msgs = lg;    exp[1].blocks = p - 1;
    /* recursive doubling, rank 0 (the busiest): L doubling steps of 1,2,..2^(L-1) virtual
     * ranks' blocks (plus their extras), and with extras one message of p-1 blocks */
    exp[2].alg = "recursive_doubling";
    exp[2].msgs = L + (e > 0);
    exp[2].blocks = 0;
    for (int k = 0; k < L; k++) {
        int vr = 1 << k;                         /* virtual ranks in rank 0's group */
        exp[2].blocks += vr + (vr < e ? vr : e); /* their blocks, extras folded in */
    }
    if (e > 0)
        exp[2].blocks += p - 1;
    /* gather_bcast: rank 0 sends the whole result ceil(log2 p) times */
    exp[3].alg = "gather_bcast"; exp[3].msgs = lg; exp[3].blocks = (long long)lg * p;

    const int n = 10; /* ints per rank */
    int *sb = malloc(sizeof(int) * n), *rb = malloc(sizeof(int) * n * p);
    for (int i = 0; i < n; i++) sb[i] = rank;
    MPI_Comm c = counting_comm();
    agx_stats_enable(1);
    for (int k = 0; k < 4; k++) {
        agx_comm_set_algorithm(c, AGX_OP_ALLGATHER, exp[k].alg);
        agx_stats_reset();
        agx_allgather(sb, n, MPI_INT, rb, n, MPI_INT, c);
        agx_stats st;
        agx_stats_get(&st);
        unsigned long long mine[2] = {st.msgs_local + st.msgs_nonlocal, st.bytes_local}, mx[2];
        MPI_Allreduce(mine, mx, 2, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
        CHECK(mx[0] == (unsigned long long)exp[k].msgs && mx[1] == (unsigned long long)(exp[k].blocks * n * 4) &&
                  st.msgs_nonlocal == 0,
              "%s: max msgs %llu (expected %d), max bytes %llu (expected %lld), nonlocal %llu",
              exp[k].alg, mx[0], exp[k].msgs, mx[1], exp[k].blocks * n * 4, st.msgs_nonlocal);
    }
    /* native traffic is invisible to agx */
    agx_comm_set_algorithm(c, AGX_OP_ALLGATHER, "native");
    agx_stats_reset();
    agx_allgather(sb, n, MPI_INT, rb, n, MPI_INT, c);
    agx_stats st;
    agx_stats_get(&st);
    CHECK(st.msgs_local + st.msgs_nonlocal == 0, "native counted %llu messages", st.msgs_local);
    agx_stats_enable(0);
    MPI_Comm_free(&c);
    free(sb);
    free(rb);
}

static void test_intercomm(void)
{
    if (p < 2)
        return;
    MPI_Comm local, inter;
    int color = rank < p / 2 ? 0 : 1;
    MPI_Comm_split(MPI_COMM_WORLD, color, rank, &local);
    MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, color ? 0 : p / 2, 99, &inter);
    MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
    int rsize;
    MPI_Comm_remote_size(inter, &rsize);
    int sb[2] = {rank, -rank}, *rb = malloc(sizeof(int) * 2 * rsize), *ref = malloc(sizeof(int) * 2 * rsize);
    int rc = agx_allgather(sb, 2, MPI_INT, rb, 2, MPI_INT, inter);
    PMPI_Allgather(sb, 2, MPI_INT, ref, 2, MPI_INT, inter);
    CHECK(rc == MPI_SUCCESS && !memcmp(rb, ref, sizeof(int) * 2 * rsize), "inter allgather: %s", err_msg(rc));
    rc = agx_allgather(MPI_IN_PLACE, 0, MPI_INT, rb, 2, MPI_INT, inter);
    CHECK(err_class(rc) == MPI_ERR_ARG && strstr(err_msg(rc), "MPI_IN_PLACE"), "inter in-place gave %s",
          err_msg(rc));
    rc = agx_comm_set_algorithm(inter, AGX_OP_ALLGATHER, "ring");
    CHECK(err_class(rc) == MPI_ERR_ARG && strstr(err_msg(rc), "inter-communicator"),
          "intra algorithm on inter gave %s", err_msg(rc));
    free(rb);
    free(ref);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&local);
}

/* A repeat of the last call skips the checks, the layout and the selection (api.c,
 * ctx->ag_memo): a new forced choice, new buffers, a NULL buffer and a changed type must
 * still be seen. */
static void test_repeat(void)
{
    MPI_Comm c = counting_comm();
    int send[2], recv[64], recv2[64];
    const char *ran;
    for (int round = 0; round < 3; round++) {
        const char *want = round == 2 ? "bruck" : "ring";
        agx_comm_set_algorithm(c, AGX_OP_ALLGATHER, want);
        for (int k = 0; k < 3; k++) { /* the second and third calls repeat the first */
            int *out = k == 1 ? recv2 : recv;
            send[0] = rank * 10 + k + round, send[1] = -rank;
            memset(out, 0xff, sizeof recv);
            int rc = agx_allgather(send, 2, MPI_INT, out, 2, MPI_INT, c), ok = rc == MPI_SUCCESS;
            for (int i = 0; i < p && ok; i++)
                ok = out[2 * i] == i * 10 + k + round && out[2 * i + 1] == -i;
            agx_comm_last_algorithm(c, AGX_OP_ALLGATHER, &ran);
            CHECK(ok && !strcmp(ran, want), "repeat %d.%d: rc %d, ran %s (want %s)", round, k, rc, ran, want);
        }
    }
    EXPECT_ERR(agx_allgather(send, 2, MPI_INT, NULL, 2, MPI_INT, c), MPI_ERR_BUFFER, "a repeat with recvbuf NULL");
    EXPECT_ERR(agx_allgather(NULL, 2, MPI_INT, recv, 2, MPI_INT, c), MPI_ERR_BUFFER, "a repeat with sendbuf NULL");
    /* the same bytes in another type: checked afresh (signature mismatch on every rank) */
    EXPECT_ERR(agx_allgather(send, 2, MPI_INT, recv, 2, MPI_DOUBLE, c), MPI_ERR_TRUNCATE, "a repeat with a new type");
    agx_comm_set_algorithm(c, AGX_OP_ALLGATHER, NULL);
    MPI_Comm_free(&c);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    test_bad_input();
    test_environment_and_fallback();
    test_listing();
    test_counters();
    test_intercomm();
    test_repeat();
    if (rank == 0)
        printf("test_api p=%d: %d passed, %d failed\n", p, passed, failed);
    MPI_Finalize();
    return failed ? 1 : 0;
}
