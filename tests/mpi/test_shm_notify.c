/*
 * Differential test of shm_notify (SharedNotify Algorithm 1 on MPI-3 RMA) against
 * PMPI_Allgatherv / PMPI_Allgather: the paper's distributions (regular, linearly
 * decreasing, broadcast) and random counts with zeros, counts 0 .. 70000 elements (blocks
 * smaller and larger than AGX_SHM_BLOCK, which is also set to 64 bytes), the datatype
 * cases of mpitest.h (derived, with holes: the packed segment layout), in place and not,
 * shuffled displacements; 1000 back-to-back calls with changing sizes
 * (segment reuse and growth); the zero-copy entry agx_allgatherv_shared (result equal to
 * PMPI's on every rank, an unreleased result reported on its rank only, non-contiguous
 * types and MPI_IN_PLACE refused); the algorithm that ran (shm_notify, or the registry's
 * fallback when AGX_TEST_EXPECT=fallback); and the write_notifies counted under
 * AGX_STATS against (r - 1) x blocks (tests/unit/test_shm_blocks.c); with
 * AGX_TEST_NTF_FAIL, a put failure in the middle of the ring (fault()). Prints the seed.
 */
#include "agx.h"
#include "mpitest.h"

static int rank, size, passed, failed;
static MPI_Comm comm;
static const char *expect = "shm_notify";

enum { D_REGULAR, D_DECREASING, D_BROADCAST, D_RANDOM, ND };
static const char *dname[ND] = {"regular", "decreasing", "broadcast", "random"};

static void make_counts(int dist, int c, unsigned *rs, int *counts)
{
    for (int i = 0; i < size; i++)
        counts[i] = dist == D_REGULAR      ? c
                    : dist == D_DECREASING ? (size == 1 ? c : (int)(2LL * c * (size - 1 - i) / (size - 1)))
                    : dist == D_BROADCAST  ? (i == 0 ? c * size : 0)
                                           : (mt_rand(rs) % 4 ? (int)(mt_rand(rs) % (unsigned)(2 * c + 1)) : 0);
}

/* One call, agx against PMPI on the same inputs: 1 when equal. */
static int one(const mt_dtcase *dt, const int *counts, int allgather, int inplace, unsigned *rs)
{
    int *displs = malloc(sizeof(int) * (size_t)size);
    long long end = allgather ? mt_regular_displs(size, counts, displs) : mt_shuffled_displs(size, counts, displs, rs);
    size_t rspan = mt_span(dt->rtype, end) + 1, sspan = mt_span(dt->stype, (long long)counts[rank] * dt->smult) + 1;
    unsigned char *sb = malloc(sspan), *rb = malloc(rspan), *ref = malloc(rspan);
    unsigned fs = *rs ^ (unsigned)(rank * 2654435761u); /* per rank: rs stays the same on every rank */
    for (size_t i = 0; i < sspan; i++)
        sb[i] = (unsigned char)mt_rand(&fs);
    memset(rb, 0xEE, rspan);
    memset(ref, 0xEE, rspan);
    MPI_Aint lb, ext;
    MPI_Type_get_extent(dt->rtype, &lb, &ext);
    int sc = counts[rank] * dt->smult, rc;
    if (allgather)
        PMPI_Allgather(sb, sc, dt->stype, ref, counts[0], dt->rtype, comm);
    else
        PMPI_Allgatherv(sb, sc, dt->stype, ref, counts, displs, dt->rtype, comm);
    if (inplace)
        MPI_Sendrecv(sb, sc, dt->stype, 0, 0, rb + displs[rank] * ext, counts[rank], dt->rtype, 0, 0, MPI_COMM_SELF,
                     MPI_STATUS_IGNORE);
    const void *s = inplace ? MPI_IN_PLACE : sb;
    if (allgather)
        rc = agx_allgather(s, sc, dt->stype, rb, counts[0], dt->rtype, comm);
    else
        rc = agx_allgatherv(s, sc, dt->stype, rb, counts, displs, dt->rtype, comm);
    int ok = rc == MPI_SUCCESS && !memcmp(rb, ref, rspan);
    free(displs), free(sb), free(rb), free(ref);
    return ok;
}

/* A new communicator for comm, forced to shm_notify: the environment's AGX_SHM_BLOCK is read
 * with a communicator's choice state, at its first call. */
static void fresh_comm(void)
{
    MPI_Comm_free(&comm);
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    agx_comm_set_algorithm(comm, AGX_OP_ALLGATHER, "shm_notify");
    agx_comm_set_algorithm(comm, AGX_OP_ALLGATHERV, "shm_notify");
}

static int ran_expected(void)
{
    const char *name;
    agx_comm_last_algorithm(comm, AGX_OP_ALLGATHERV, &name);
    return !strcmp(expect, "fallback") ? strcmp(name, "shm_notify") != 0 : !strcmp(name, expect);
}

static void differential(const mt_dtcase *dts, unsigned seed, int quick)
{
    static const int base[] = {0, 1, 7, 1000, 70000};
    int *counts = malloc(sizeof(int) * (size_t)size);
    unsigned rs = seed;
    for (int blk = 0; blk < 2; blk++) {
        if (blk) {
            setenv("AGX_SHM_BLOCK", "64", 1);
            fresh_comm();
        }
        for (int d = 0; d < ND; d++)
            for (int t = 0; t < MT_NDTCASES; t++)
                for (int c = 0; c < 5; c++)
                    for (int ip = 0; ip < 2; ip++) {
                        if (quick && (c == 4 || t == 2 || t == 3))
                            continue;
                        make_counts(d, base[c], &rs, counts);
                        int ag = d == D_REGULAR && ip == 0 && t == 0;
                        CHECK(one(&dts[t], counts, ag, ip, &rs), "%s %s count %d%s%s block %s", dname[d], dts[t].name,
                              base[c], ip ? " in place" : "", ag ? " (allgather)" : "", blk ? "64" : "default");
                        if (!ag)
                            CHECK(ran_expected(), "expected %s", expect);
                    }
        unsetenv("AGX_SHM_BLOCK");
    }
    fresh_comm();
    free(counts);
}

/* Back-to-back calls with changing sizes: segment reuse, growth, the ready handshake. */
static void back_to_back(const mt_dtcase *dts, unsigned seed, int n)
{
    int *counts = malloc(sizeof(int) * (size_t)size), bad = 0;
    unsigned rs = seed ^ 0x5bd1e995u;
    for (int i = 0; i < n; i++) {
        make_counts(i % ND, (i * 37) % 200 + (i % 97 == 0 ? 30000 : 0), &rs, counts);
        bad += !one(&dts[0], counts, 0, i % 3 == 0, &rs);
    }
    CHECK(bad == 0, "%d of %d back-to-back calls differ from PMPI", bad, n);
    free(counts);
}

/* Messages: each block crosses r - 1 node links, one write_notify per hop. */
static void counters(int r, unsigned seed)
{
    int *counts = malloc(sizeof(int) * (size_t)size);
    unsigned rs = seed ^ 77u;
    mt_dtcase dt = {"MPI_INT", MPI_INT, 1, MPI_INT};
    make_counts(D_RANDOM, 100, &rs, counts);
    setenv("AGX_SHM_BLOCK", "64", 1);
    fresh_comm();
    long long blocks = 0;
    for (int i = 0; i < size; i++)
        blocks += (counts[i] * 4LL + 63) / 64;
    agx_stats_enable(1);
    agx_stats_reset();
    int ok = one(&dt, counts, 0, 0, &rs);
    agx_stats st;
    agx_stats_get(&st);
    agx_stats_enable(0);
    unsetenv("AGX_SHM_BLOCK");
    unsigned long long mine[2] = {st.msgs_local, st.msgs_nonlocal}, all[2];
    MPI_Allreduce(mine, all, 2, MPI_UNSIGNED_LONG_LONG, MPI_SUM, comm);
    CHECK(ok, "counted call differs from PMPI");
    if (!strcmp(expect, "shm_notify"))
        CHECK(all[0] == 0 && all[1] == (unsigned long long)(blocks * (r - 1)),
              "write_notifies: %llu local, %llu non-local; expected 0 and %lld x %d", all[0], all[1], blocks, r - 1);
    free(counts);
}

static void zero_copy(unsigned seed)
{
    int *counts = malloc(sizeof(int) * (size_t)size), *displs = malloc(sizeof(int) * (size_t)size);
    unsigned rs = seed ^ 99u;
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    for (int d = 0; d < ND; d++) {
        make_counts(d, 3000, &rs, counts);
        long long end = mt_shuffled_displs(size, counts, displs, &rs);
        int *sb = malloc(sizeof(int) * (size_t)(counts[rank] + 1)), *ref = malloc(sizeof(int) * (size_t)(end + 1));
        for (int i = 0; i < counts[rank]; i++)
            sb[i] = rank * 100003 + i;
        PMPI_Allgatherv(sb, counts[rank], MPI_INT, ref, counts, displs, MPI_INT, comm);
        const void *res = NULL;
        agx_shared_handle h;
        int rc = agx_allgatherv_shared(sb, counts[rank], MPI_INT, counts, displs, MPI_INT, comm, &res, &h), same = 1;
        for (int i = 0; i < size && rc == MPI_SUCCESS; i++)
            same &= !memcmp((const int *)res + displs[i], ref + displs[i], sizeof(int) * (size_t)counts[i]);
        CHECK(rc == MPI_SUCCESS && same, "zero-copy %s: rc %d, result %s", dname[d], rc, same ? "equal" : "differs");
        if (d == D_RANDOM && !strcmp(expect, "shm_notify")) { /* rank 0 keeps its result: an error there only */
            if (rank != 0)
                agx_shared_release(&h);
            const void *res2;
            agx_shared_handle h2;
            rc = agx_allgatherv_shared(sb, counts[rank], MPI_INT, counts, displs, MPI_INT, comm, &res2, &h2);
            int cls = MPI_SUCCESS;
            if (rc != MPI_SUCCESS)
                MPI_Error_class(rc, &cls);
            CHECK(rank == 0 ? cls == MPI_ERR_OTHER : rc == MPI_SUCCESS, "unreleased result: rc %d class %d", rc, cls);
            agx_shared_release(&h2);
        }
        agx_shared_release(&h);
        free(sb), free(ref);
    }
    /* refused: a type with holes, MPI_IN_PLACE (the same on every rank: no one waits) */
    MPI_Datatype vec;
    MPI_Type_vector(2, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    int one_cnt[64], disp0[64], x[4] = {0}, cls1 = 0, cls2 = 0;
    for (int i = 0; i < size && i < 64; i++)
        one_cnt[i] = 1, disp0[i] = i;
    const void *res;
    agx_shared_handle h;
    if (size <= 64) {
        int rc1 = agx_allgatherv_shared(x, 1, vec, one_cnt, disp0, vec, comm, &res, &h);
        int rc2 = agx_allgatherv_shared(MPI_IN_PLACE, 1, MPI_INT, one_cnt, disp0, MPI_INT, comm, &res, &h);
        MPI_Error_class(rc1, &cls1);
        MPI_Error_class(rc2, &cls2);
        CHECK(cls1 == MPI_ERR_TYPE && cls2 == MPI_ERR_ARG, "refusals: classes %d and %d", cls1, cls2);
    }
    MPI_Type_free(&vec);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_ARE_FATAL);
    /* released after its communicator was freed: only the token goes (valgrind sees) */
    MPI_Comm c2;
    MPI_Comm_dup(comm, &c2);
    agx_comm_set_algorithm(c2, AGX_OP_ALLGATHERV, "shm_notify");
    int v = rank, rc3 = agx_allgatherv_shared(&v, 1, MPI_INT, one_cnt, disp0, MPI_INT, c2, &res, &h);
    int got = rc3 == MPI_SUCCESS && size <= 64 && ((const int *)res)[size - 1] == size - 1;
    MPI_Comm_free(&c2);
    CHECK(got && agx_shared_release(&h) == MPI_SUCCESS && !h.seg && !h.buf, "release after MPI_Comm_free");
    free(counts), free(displs);
}

/* AGX_TEST_NTF_FAIL=RANK:CALL (run alone, on a fresh communicator whose calls count from
 * 1): that rank's puts fail at that call. It must get the error; every rank on another
 * node needs its blocks, so each must get an error too (the failure notice) instead of
 * waiting; ranks of its own node may finish; nobody hangs (the ctest timeout); and the
 * calls after it are right again on every rank. */
/* Stale words in the notification array: the array's length follows each call's blocks,
 * so a call with more blocks than the last one has slots where the last one's data was.
 * Data of small integers (every value a later call's seq could take) there must not pass
 * for notifications (a deterministic wrong answer before the slots were cleared per call). */
static void stale_slots(void)
{
    setenv("AGX_SHM_BLOCK", "64", 1);
    fresh_comm();
    int ok = 1;
    for (int call = 0; call < 12; call++) {
        int n = 64 + 48 * call, *sb = malloc(sizeof(int) * (size_t)n), *rb = malloc(sizeof(int) * (size_t)n * size),
            *ref = malloc(sizeof(int) * (size_t)n * size);
        for (int i = 0; i < n; i++)
            sb[i] = call % 2 ? rank * 100003 + i : i % 64; /* even calls: words equal to seqs to come */
        int rc = agx_allgather(sb, n, MPI_INT, rb, n, MPI_INT, comm);
        PMPI_Allgather(sb, n, MPI_INT, ref, n, MPI_INT, comm);
        ok = ok && rc == MPI_SUCCESS && !memcmp(rb, ref, sizeof(int) * (size_t)n * size);
        free(sb), free(rb), free(ref);
    }
    unsetenv("AGX_SHM_BLOCK");
    CHECK(ok, "growing calls over stale data words that equal later seqs: a result differs");
}

static void fault(const char *spec)
{
    int frank = -1, fcall = -1, calls = 6;
    if (sscanf(spec, "%d:%d", &frank, &fcall) != 2 || frank < 0 || frank >= size)
        frank = fcall = -1; /* no such rank: no failure */
    int *region_of = malloc(sizeof(int) * (size_t)size), *counts = malloc(sizeof(int) * (size_t)size);
    agx_comm_regions(comm, region_of);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    unsigned rs = 7;
    for (int call = 1; call <= calls; call++) {
        make_counts(D_REGULAR, 3000, &rs, counts);
        int n = counts[0] * size, *rb = malloc(sizeof(int) * (size_t)n), *ref = malloc(sizeof(int) * (size_t)n);
        int *sb = malloc(sizeof(int) * (size_t)counts[0]);
        for (int i = 0; i < counts[0]; i++)
            sb[i] = rank * 100000 + call * 1000 + i;
        PMPI_Allgather(sb, counts[0], MPI_INT, ref, counts[0], MPI_INT, comm);
        int rc = agx_allgather(sb, counts[0], MPI_INT, rb, counts[0], MPI_INT, comm), cls = MPI_SUCCESS;
        MPI_Error_class(rc, &cls);
        int ok = rc == MPI_SUCCESS && !memcmp(rb, ref, sizeof(int) * (size_t)n);
        if (call != fcall || frank < 0)
            CHECK(ok, "call %d (no failure injected) differs from PMPI or failed (class %d)", call, cls);
        else if (rank == frank || region_of[rank] != region_of[frank])
            CHECK(cls == MPI_ERR_OTHER, "call %d: rank %d expected MPI_ERR_OTHER (injected at rank %d), got class %d",
                  call, rank, frank, cls);
        else
            CHECK(ok || cls == MPI_ERR_OTHER, "call %d: rank %d (node of the failing rank) got class %d", call, rank,
                  cls);
        free(rb), free(ref), free(sb);
    }
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_ARE_FATAL);
    free(region_of), free(counts);
}

int main(int argc, char **argv)
{
    mt_run run;
    mt_start(&argc, &argv, &run);
    rank = run.rank, size = run.size;
    if (getenv("AGX_TEST_EXPECT"))
        expect = getenv("AGX_TEST_EXPECT");
    setenv("AGX_FALLBACK", "silent", 1);
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    agx_comm_set_algorithm(comm, AGX_OP_ALLGATHER, "shm_notify");
    agx_comm_set_algorithm(comm, AGX_OP_ALLGATHERV, "shm_notify");
    int *region_of = malloc(sizeof(int) * (size_t)size), r = 0;
    agx_comm_regions(comm, region_of);
    for (int i = 0; i < size; i++)
        r = region_of[i] + 1 > r ? region_of[i] + 1 : r;
    if (rank == 0)
        printf("test_shm_notify: p = %d, %d regions, expecting %s, seed %u\n", size, r, expect, run.seed);
    if (getenv("AGX_TEST_NTF_FAIL")) {
        fault(getenv("AGX_TEST_NTF_FAIL"));
        goto done;
    }
    mt_dtcase dts[MT_NDTCASES];
    mt_dtcases(dts);
    differential(dts, run.seed, run.quick);
    back_to_back(dts, run.seed, getenv("AGX_TEST_CALLS") ? atoi(getenv("AGX_TEST_CALLS")) : 1000);
    counters(r, run.seed);
    zero_copy(run.seed);
    stale_slots();
    mt_dtcases_free(dts);
done:
    free(region_of);
    MPI_Comm_free(&comm);
    if (rank == 0)
        printf("%d passed, %d failed (seed %u)\n", passed, failed, run.seed);
    MPI_Finalize();
    return failed ? 1 : 0;
}
