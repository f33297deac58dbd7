/*
 * The on-line choice (AGX_ADAPT, src/select/adapt.c): every result exact during and after
 * a class's learning window, every rank running the same algorithm at every call and
 * settling on the same winner (even when one rank's clock disagrees:
 * AGX_TEST_LEARN_SKEW; one rank's clock making the default's choice 1000x slower: it
 * loses, cut at its first look), the winner kept afterwards, floating-point reductions the
 * library's own call under AGX_ADAPT=1 (its bits at every call), learning under =any,
 * alltoallv settled on the library's call and re-checked, and on two ranks no window for
 * allgather(v) and alltoallv (the library's call at every call) and an allreduce's window
 * without the algorithms that send the same one exchange there timed twice.
 *   AGX_ADAPT=1|any test_adapt [--seed S]
 */
#include "callgen.h"

static int rank, size, fails;

#define EXPECT(cond, ...)                                                                   \
    do {                                                                                    \
        if (!(cond)) {                                                                      \
            fails++;                                                                        \
            fprintf(stderr, "FAIL rank %d %s:%d: ", rank, __FILE__, __LINE__);             \
            fprintf(stderr, __VA_ARGS__);                                                   \
            fprintf(stderr, "\n");                                                          \
        }                                                                                   \
    } while (0)

/* The index of op's intra algorithm name in its table, -1 if none. */
static int alg_index(agx_op op, const char *name)
{
    int n = agx_algorithm_count(op, AGX_KIND_INTRA), idx = -1;
    for (int i = 0; i < n; i++) {
        const char *s;
        agx_algorithm_info(op, AGX_KIND_INTRA, i, &s, NULL);
        if (!strcmp(s, name))
            idx = i;
    }
    return idx;
}

/* The algorithm the last call of op ran on comm, as its index in the table; every rank's
 * must be the same (one allreduce of the index and its negation). */
static int same_everywhere(MPI_Comm comm, agx_op op, const char **name)
{
    agx_comm_last_algorithm(comm, op, name);
    int idx = alg_index(op, *name), v[2], w[2];
    v[0] = idx, v[1] = -idx;
    MPI_Allreduce(v, w, 2, MPI_INT, MPI_MAX, comm);
    return w[0] == -w[1];
}

/* agx's node map is the only caller of MPI_Comm_split_type in this program: counted */
static int split_types;
int MPI_Comm_split_type(MPI_Comm comm, int type, int key, MPI_Info info, MPI_Comm *out)
{
    split_types++;
    return PMPI_Comm_split_type(comm, type, key, info, out);
}

/* The process's first agx calls take the library's call untimed (AGX_ADAPT=1: a 2-rank
 * allreduce under 4 KiB, a floating-point one on any size): they read no rule, so they
 * make no node map; a later call that learns makes it, on every rank at the same call. */
static void untimed_first(const char *mode)
{
    MPI_Comm pair;
    MPI_Comm_split(MPI_COMM_WORLD, rank / 2, rank, &pair);
    int psize, v[2048] = {0}, w[2048];
    MPI_Comm_size(pair, &psize);
    double d = 0.5, e = 0;
    v[0] = 1;
    EXPECT(agx_allreduce(v, w, 2, MPI_INT, MPI_SUM, pair) == MPI_SUCCESS && w[0] == psize, "first pair allreduce");
    EXPECT(agx_allreduce(&d, &e, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS && e == 0.5 * size,
           "first double allreduce");
    if (!strcmp(mode, "1") && psize == 2)
        EXPECT(split_types == 0, "the first calls, the library's untimed, made %d node maps", split_types);
    for (int i = 0; i < 100; i++) /* learns on every pair (8 KiB; the pairs' 4 KiB class is
                                   * left to main): the regions made alike */
        EXPECT(agx_allreduce(v, w, 2048, MPI_INT, MPI_SUM, pair) == MPI_SUCCESS && w[0] == psize && w[2047] == 0,
               "pair allreduce of 8 KiB, call %d", i);
    MPI_Comm_free(&pair);
}

int main(int argc, char **argv)
{
    mt_run run;
    mt_start(&argc, &argv, &run);
    rank = run.rank, size = run.size;
    untimed_first(getenv("AGX_ADAPT") ? getenv("AGX_ADAPT") : "0");
    const char *mode = getenv("AGX_ADAPT") ? getenv("AGX_ADAPT") : "0", *sk = getenv("AGX_TEST_LEARN_SKEW");
    int skew_rank;
    double skew_by = 0;
    char skew_name[32] = "";
    if (sk && sscanf(sk, "%d:%lf:%31s", &skew_rank, &skew_by, skew_name) < 2)
        skew_by = 0;
    int slow_default = skew_by >= 1000 && !skew_name[0]; /* that rank's default 1000x slower or more: it must lose */
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    slot_t s;
    cg_slot_init(&s, size);
    /* a class's first calls run the library's call, untimed (AGX_ADAPT_AFTER, default 8:
     * docs/algorithms.md "On-line choice", *First calls*), then its window: at most 88 calls
     * (8 candidates x 3 rounds, then 3 x 4, then a rematch of 2 x 4, 2 calls a turn) */
    int cold = getenv("AGX_ADAPT_AFTER") ? atoi(getenv("AGX_ADAPT_AFTER")) : 8;
    int bad = 0, errs = 0, window = cold + 88;
    static const long long counts[] = {2, 100, 3000};
    unsigned t = 0;
    for (int o = 0; o < 4; o++)
        for (int n = 0; n < 3; n++) {
            const char *first = NULL, *dflt = NULL, *name;
            MPI_Comm_free(&comm); /* each shape on a fresh communicator: a settled alltoallv
                                   * would find the next shape's class only at a re-check */
            MPI_Comm_dup(MPI_COMM_WORLD, &comm);
            int changed_after = 0;
            for (int i = 0; i < window + 12; i++) { /* one shape: the same sizes every call */
                call_t c = {.op = cg_ops[o], .alg = -1, .k = T_INT, .rop = O_SUM, .count = counts[n], .t = t};
                MPI_Datatype ty_ = ty(c.k);
                cg_prepare(&s, &c, rank, size);
                int rc = c.op == AGX_OP_ALLREDUCE ? agx_allreduce(s.sbuf, s.rbuf, (int)c.count, ty_, MPI_SUM, comm)
                         : c.op == AGX_OP_ALLGATHER ? agx_allgather(s.sbuf, (int)c.count, ty_, s.rbuf, (int)c.count, ty_, comm)
                         : c.op == AGX_OP_ALLGATHERV
                             ? agx_allgatherv(s.sbuf, s.rc[rank], ty_, s.rbuf, s.rc, s.rd, ty_, comm)
                             : agx_alltoallv(s.sbuf, s.sc, s.sd, ty_, s.rbuf, s.rc, s.rd, ty_, comm);
                cg_check(&s, &c, rank, rc, &bad, &errs);
                EXPECT(same_everywhere(comm, (agx_op)c.op, &name), "%s call %d: ranks ran different algorithms",
                       agx_op_name((agx_op)c.op), i);
                EXPECT(size < 2 || i >= cold || !strcmp(name, "native"), "%s call %d, one of its class's first %d: "
                       "ran %s, not the library's", agx_op_name((agx_op)c.op), i, cold, name);
                if (i == cold) /* the window's first turn is the default's choice */
                    dflt = name;
                if (i == window)
                    first = name;
                if (i > window && first && strcmp(first, name))
                    changed_after = 1;
            }
            t++;
            EXPECT(!changed_after, "%s, %lld elements: the choice changed after the window (%s first)",
                   agx_op_name((agx_op)cg_ops[o]), counts[n], first);
            EXPECT(!slow_default || (first && dflt && strcmp(first, dflt)),
                   "%s, %lld elements: the default's choice %s won though one rank timed it 1000x slower",
                   agx_op_name((agx_op)cg_ops[o]), counts[n], dflt);
            if (rank == 0)
                printf("%s %lld elements: %s\n", agx_op_name((agx_op)cg_ops[o]), counts[n], first);
        }
    /* floating point: under AGX_ADAPT=1 the library's own call, untimed: its bits at every
     * call */
    double in[300], out0[300], out[300], ref[300];
    for (int i = 0; i < 300; i++)
        in[i] = 1.0 / (1 + i + rank * 7.0);
    const char *fname = NULL, *name;
    int differs = 0, algs_differ = 0;
    for (int i = 0; i < window + 8; i++) {
        agx_allreduce(in, i ? out : out0, 300, MPI_DOUBLE, MPI_SUM, comm);
        differs |= i && memcmp(out, out0, sizeof out) != 0;
        agx_comm_last_algorithm(comm, AGX_OP_ALLREDUCE, &name);
        algs_differ |= fname && strcmp(fname, name);
        fname = name;
    }
    if (!strcmp(mode, "1")) {
        PMPI_Allreduce(in, ref, 300, MPI_DOUBLE, MPI_SUM, comm);
        EXPECT(!differs, "MPI_DOUBLE sums changed bits between calls under AGX_ADAPT=1");
        EXPECT(!algs_differ, "MPI_DOUBLE sums ran different algorithms under AGX_ADAPT=1");
        EXPECT(size < 2 || !strcmp(fname, "native"), "MPI_DOUBLE sums ran %s, not the library's call, under "
               "AGX_ADAPT=1", fname);
        EXPECT(memcmp(out0, ref, sizeof ref) == 0, "MPI_DOUBLE sums differ from the library's under AGX_ADAPT=1");
    }
    /* alltoallv settling on the library's own call (re-checks after 16, 32, ... 256 calls):
     * a small class long enough to settle and be re-checked, then a larger one that only a
     * re-check finds (its window, then settled again): every call exact,
     * every rank running the same algorithm (AGX_TEST_LEARN_SKEW=R:F:native makes the
     * library's call win; tests/adapt_check.sh reads what AGX_VERBOSE says) */
    MPI_Comm c2;
    MPI_Comm_dup(MPI_COMM_WORLD, &c2);
    for (int n = 0; n < 2; n++)
        for (int i = 0; i < 360; i++) {
            call_t c = {.op = AGX_OP_ALLTOALLV, .alg = -1, .k = T_INT, .rop = O_SUM, .count = n ? 3000 : 2,
                        .t = 5u + (unsigned)n};
            cg_prepare(&s, &c, rank, size);
            int rc = agx_alltoallv(s.sbuf, s.sc, s.sd, MPI_INT, s.rbuf, s.rc, s.rd, MPI_INT, c2);
            cg_check(&s, &c, rank, rc, &bad, &errs);
            EXPECT(same_everywhere(c2, AGX_OP_ALLTOALLV, &name), "alltoallv settling, shape %d call %d: ranks ran "
                   "different algorithms", n, i);
        }
    /* a choice forced on the settled communicator runs at its next call */
    agx_comm_set_algorithm(c2, AGX_OP_ALLTOALLV, "pairwise");
    call_t c = {.op = AGX_OP_ALLTOALLV, .alg = -1, .k = T_INT, .rop = O_SUM, .count = 2, .t = 9};
    cg_prepare(&s, &c, rank, size);
    cg_check(&s, &c, rank, agx_alltoallv(s.sbuf, s.sc, s.sd, MPI_INT, s.rbuf, s.rc, s.rd, MPI_INT, c2), &bad, &errs);
    agx_comm_last_algorithm(c2, AGX_OP_ALLTOALLV, &name);
    EXPECT(size < 2 || !strcmp(name, "pairwise"), "alltoallv forced after settling ran %s, not pairwise", name);
    MPI_Comm_free(&c2);
    /* two ranks (pairs 2k, 2k + 1): an allgather(v) or alltoallv is one exchange whatever
     * the algorithm, so no window: every call the library's (native), every result exact */
    MPI_Comm pair;
    MPI_Comm_split(MPI_COMM_WORLD, rank / 2, rank, &pair);
    int prank, psize;
    MPI_Comm_rank(pair, &prank);
    MPI_Comm_size(pair, &psize);
    slot_t s2;
    cg_slot_init(&s2, psize);
    for (int o = 1; o < 4 && psize == 2; o++) /* cg_ops[1..3]: allgather, allgatherv, alltoallv */
        for (int i = 0; i < 24; i++) {
            call_t c = {.op = cg_ops[o], .alg = -1, .k = T_INT, .rop = O_SUM, .count = 100, .t = 11u + (unsigned)o};
            cg_prepare(&s2, &c, prank, psize);
            int rc = c.op == AGX_OP_ALLGATHER
                         ? agx_allgather(s2.sbuf, (int)c.count, MPI_INT, s2.rbuf, (int)c.count, MPI_INT, pair)
                     : c.op == AGX_OP_ALLGATHERV
                         ? agx_allgatherv(s2.sbuf, s2.rc[prank], MPI_INT, s2.rbuf, s2.rc, s2.rd, MPI_INT, pair)
                         : agx_alltoallv(s2.sbuf, s2.sc, s2.sd, MPI_INT, s2.rbuf, s2.rc, s2.rd, MPI_INT, pair);
            cg_check(&s2, &c, prank, rc, &bad, &errs);
            agx_comm_last_algorithm(pair, (agx_op)c.op, &name);
            EXPECT(!strcmp(name, "native"), "%s on 2 ranks, call %d: ran %s, not the library's (no window there)",
                   agx_op_name((agx_op)c.op), i, name);
        }
    /* an integer allreduce on two ranks under 4 KiB (8 B, 3 KiB): the library's, untimed,
     * every call */
    int *v = calloc(1024, sizeof *v), *w = calloc(1024, sizeof *w);
    for (int i = 0; i < 48 && psize == 2 && v && w; i++) {
        int n = i < 24 ? 2 : 768;
        v[0] = prank + i, v[n - 1] = 1, w[0] = w[n - 1] = 0;
        EXPECT(agx_allreduce(v, w, n, MPI_INT, MPI_SUM, pair) == MPI_SUCCESS && w[0] == 1 + 2 * i && w[n - 1] == 2,
               "allreduce of %d B on 2 ranks, call %d: %d %d", 4 * n, i, w[0], w[n - 1]);
        agx_comm_last_algorithm(pair, AGX_OP_ALLREDUCE, &name);
        EXPECT(!strcmp(name, "native"), "allreduce of %d B on 2 ranks, call %d: ran %s, not the library's", 4 * n, i,
               name);
        v[n - 1] = 0;
    }
    /* from 4 KiB it keeps its window, without timing twice what sends the same one
     * exchange (same_on_two: dissemination, dissemination_radix, recursive_doubling), nor
     * dissemination_node (what dissemination, reduce_bcast or rabenseifner sends there);
     * more than one candidate runs in it */
    int ran[64] = {0}, twins = 0, kinds = 0, node = 0;
    for (int i = 0; i < window && psize == 2 && v && w; i++) {
        v[0] = prank + i, v[1023] = 1;
        EXPECT(agx_allreduce(v, w, 1024, MPI_INT, MPI_SUM, pair) == MPI_SUCCESS && w[0] == 1 + 2 * i && w[1023] == 2 &&
                   w[512] == 0,
               "allreduce of 4 KiB on 2 ranks, call %d: %d %d %d", i, w[0], w[512], w[1023]);
        agx_comm_last_algorithm(pair, AGX_OP_ALLREDUCE, &name);
        int k = alg_index(AGX_OP_ALLREDUCE, name);
        if (k >= 0 && k < 64 && !ran[k]++) {
            kinds++;
            twins += !strcmp(name, "dissemination") || !strcmp(name, "dissemination_radix") ||
                     !strcmp(name, "recursive_doubling");
            node += !strcmp(name, "dissemination_node");
        }
    }
    EXPECT(psize < 2 || (twins <= 1 && kinds > 1 && !node), "allreduce of 4 KiB on 2 ranks: %d algorithms ran in the "
           "window, %d of them one exchange alike (at most 1), dissemination_node %d times", kinds, twins, node);
    free(v), free(w);
    cg_slot_free(&s2);
    MPI_Comm_free(&pair);
    int tot[2], mine[2] = {fails + bad, errs};
    MPI_Allreduce(mine, tot, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("test_adapt (AGX_ADAPT=%s, %d ranks, seed %u): %d failures, %d errors%s\n", mode, size, run.seed,
               tot[0], tot[1], tot[0] || tot[1] ? " FAIL" : ", ok");
    cg_slot_free(&s);
    MPI_Comm_free(&comm);
    MPI_Finalize();
    return tot[0] || tot[1];
}
