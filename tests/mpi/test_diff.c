/*
 * Differential test: every registered intra-communicator algorithm (plus agx's own
 * selection, "auto") against the MPI library's result through PMPI_, over counts
 * {0, 1, 7, 1000, ~64 KiB}, datatypes {BYTE, INT, DOUBLE, strided vector, 4 x INT sent
 * as a contiguous-of-4 receive type}, MPI_IN_PLACE or not, allgather and allgatherv
 * (random counts with zeros, shuffled displacements with gaps). Whole receive buffers
 * are compared byte for byte, gaps and datatype holes included.
 *
 *   test_diff [--quick] [--seed S] [--algs a,b,...]     (or AGX_TEST_SEED=S)
 * Prints the seed; a failure line names op, algorithm, count, datatype and in-place.
 */
#include "agx.h"
#include "mpitest.h"

#include <stdlib.h>
#include <string.h>

static int rank, p;
static int ref_v_broken; /* the MPI library's Allgatherv ignores displs on one process */

/* MPICH 4.0.2's MPI_Allgatherv on a one-process communicator copies to displs 0 instead
 * of displs[0]. Probe for it on MPI_COMM_SELF so the reference stays trustworthy. */
static int probe_allgatherv_bug(void)
{
    int s = 7, r[2] = {0, 0}, one = 1, d = 1;
    PMPI_Allgatherv(&s, 1, MPI_INT, r, &one, &d, MPI_INT, MPI_COMM_SELF);
    return r[1] != 7;
}

/* Reference allgatherv: the MPI library's, or for one process where it is broken, the
 * definition itself (a copy of the send data to block 0 at displs[0]). */
static int ref_allgatherv(const void *sb, int scount, MPI_Datatype stype, void *rb, const int *counts,
                          const int *displs, MPI_Datatype rtype, MPI_Comm comm)
{
    MPI_Aint lb, ext;
    if (p > 1 || !ref_v_broken)
        return PMPI_Allgatherv(sb, scount, stype, rb, counts, displs, rtype, comm);
    if (sb == MPI_IN_PLACE)
        return MPI_SUCCESS;
    MPI_Type_get_extent(rtype, &lb, &ext);
    return PMPI_Sendrecv(sb, scount, stype, 0, 1, (char *)rb + displs[0] * ext, counts[0], rtype, 0, 1,
                         MPI_COMM_SELF, MPI_STATUS_IGNORE);
}

static int run_case(MPI_Comm comm, agx_op op, const char *alg, int count, const mt_dtcase *dt,
                    int inplace, unsigned seed)
{
    MPI_Aint lb, rext;
    MPI_Type_get_extent(dt->rtype, &lb, &rext);
    int *counts = malloc(sizeof(int) * p), *displs = malloc(sizeof(int) * p);
    unsigned rs = seed;
    long long end;

    if (op == AGX_OP_ALLGATHER) {
        for (int i = 0; i < p; i++)
            counts[i] = count;
        end = mt_regular_displs(p, counts, displs);
    } else {
        /* random counts (a quarter of them zero), blocks placed in shuffled order with gaps */
        for (int i = 0; i < p; i++)
            counts[i] = (mt_rand(&rs) % 4 == 0) ? 0 : (int)(mt_rand(&rs) % (unsigned)(2 * count + 1));
        end = mt_shuffled_displs(p, counts, displs, &rs);
    }

    size_t rbytes = mt_span(dt->rtype, end) + 16;
    int scount = counts[rank] * dt->smult;
    size_t sbytes = mt_span(dt->stype, scount) + 16;
    unsigned char *sbuf = malloc(sbytes), *rbuf = malloc(rbytes), *ref = malloc(rbytes);
    unsigned ds = seed * 2654435761u + (unsigned)rank * 40503u + 1;
    for (size_t i = 0; i < sbytes; i++)
        sbuf[i] = (unsigned char)mt_rand(&ds);
    for (size_t i = 0; i < rbytes; i++)
        rbuf[i] = (unsigned char)(0xA5 ^ i);
    if (inplace) {
        /* own contribution already in its block: write it there (holes too, harmlessly) */
        size_t off = (size_t)displs[rank] * (size_t)rext;
        size_t n = mt_span(dt->rtype, counts[rank]);
        for (size_t i = 0; i < n; i++)
            rbuf[off + i] = (unsigned char)mt_rand(&ds);
    }
    memcpy(ref, rbuf, rbytes);

    const void *sb = inplace ? MPI_IN_PLACE : sbuf;
    int rc1, rc2;
    agx_comm_set_algorithm(comm, op, strcmp(alg, "auto") ? alg : NULL);
    if (op == AGX_OP_ALLGATHER) {
        rc1 = PMPI_Allgather(sb, scount, dt->stype, ref, count, dt->rtype, comm);
        rc2 = agx_allgather(sb, scount, dt->stype, rbuf, count, dt->rtype, comm);
    } else {
        rc1 = ref_allgatherv(sb, scount, dt->stype, ref, counts, displs, dt->rtype, comm);
        rc2 = agx_allgatherv(sb, scount, dt->stype, rbuf, counts, displs, dt->rtype, comm);
    }
    int bad = rc1 != MPI_SUCCESS || rc2 != MPI_SUCCESS || memcmp(rbuf, ref, rbytes) != 0;
    if (bad) {
        const char *ran;
        agx_comm_last_algorithm(comm, op, &ran);
        fprintf(stderr, "  rank %d: ran %s, rc(PMPI)=%d rc(agx)=%d, counts[me]=%d\n", rank, ran, rc1, rc2,
                counts[rank]);
    }
    if (bad && rc2 == MPI_SUCCESS && rc1 == MPI_SUCCESS) {
        size_t i = 0;
        while (rbuf[i] == ref[i])
            i++;
        fprintf(stderr, "  rank %d: first difference at byte %zu of %zu (got %u, expected %u)\n",
                rank, i, rbytes, rbuf[i], ref[i]);
    }
    free(sbuf); free(rbuf); free(ref); free(counts); free(displs);
    return bad;
}

/* A repeated allgatherv skips the checks and the choice (api_allgather.c's memo): the
 * same counts in another array, then the last rank's count changed in place (the other
 * ranks' own arguments repeat, yet the call's size and choice change), must still give
 * the reference's bytes on every rank. Returns the calls that did not. */
enum { RV_BIG = 100000 };
static int repeat_v(void)
{
    /* a choice by size (read when the communicator's state is made): the changed call
     * must run ring on every rank, also where the rank's own arguments repeat */
    MPI_Comm comm;
    setenv("AGX_ALLGATHERV_ALGORITHM", "bruck:0-4K,ring", 1);
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    int *c[2] = {malloc(sizeof(int) * (size_t)p), malloc(sizeof(int) * (size_t)p)}, *d = malloc(sizeof(int) * (size_t)p);
    size_t n = sizeof(int) * (size_t)(4 * p + RV_BIG);
    int bad = 0, *out = malloc(n), *ref = malloc(n), *s = calloc(RV_BIG, sizeof(int));
    for (int k = 0; k < 6; k++) {
        int *cnt = c[k % 2]; /* calls 1-3 repeat call 0 from another array; 4-5 change a count */
        for (int i = 0; i < p; i++)
            cnt[i] = k >= 4 && i == p - 1 ? RV_BIG : 1 + i % 2, d[i] = i == p - 1 ? 4 * p : 4 * (p - 2 - i);
        for (int i = 0; i < 3; i++)
            s[i] = rank * 100 + k * 10 + i;
        memset(out, 0x5a, n);
        memset(ref, 0x5a, n);
        int rc = agx_allgatherv(s, cnt[rank], MPI_INT, out, cnt, d, MPI_INT, comm);
        ref_allgatherv(s, cnt[rank], MPI_INT, ref, cnt, d, MPI_INT, comm);
        bad += rc != MPI_SUCCESS || memcmp(out, ref, n) != 0;
    }
    free(s);
    free(c[0]), free(c[1]), free(d), free(out), free(ref);
    MPI_Comm_free(&comm);
    unsetenv("AGX_ALLGATHERV_ALGORITHM");
    return bad;
}

int main(int argc, char **argv)
{
    mt_run run;
    mt_start(&argc, &argv, &run);
    int quick = run.quick;
    const char *only = run.only;
    unsigned seed = run.seed;
    rank = run.rank;
    p = run.size;
    ref_v_broken = probe_allgatherv_bug();
    if (rank == 0)
        printf("test_diff: p=%d seed=%u (rerun with AGX_TEST_SEED=%u)%s\n", p, seed, seed,
               ref_v_broken && p == 1 ? "\n  note: this MPI's Allgatherv ignores displs on one process; the"
                              " p=1 reference is a Sendrecv to self" : "");

    mt_dtcase dts[MT_NDTCASES];
    mt_dtcases(dts);
    int ndt = MT_NDTCASES;
    int base_counts[] = {0, 1, 7, 1000, -1}; /* -1: about 64 KiB per rank */
    int ncounts = quick ? 3 : 5;

    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);

    int passed = 0, failed = 0;
    for (int op = AGX_OP_ALLGATHER; op <= AGX_OP_ALLGATHERV; op++) { /* the allgather family */
        int nalg = agx_algorithm_count((agx_op)op, AGX_KIND_INTRA);
        for (int ai = -1; ai < nalg; ai++) {
            const char *alg = "auto";
            if (ai >= 0)
                agx_algorithm_info((agx_op)op, AGX_KIND_INTRA, ai, &alg, NULL);
            if (only) { /* exact match of one comma-separated name */
                size_t n = strlen(alg);
                const char *hit = strstr(only, alg);
                while (hit && !((hit == only || hit[-1] == ',') && (hit[n] == ',' || hit[n] == '\0')))
                    hit = strstr(hit + 1, alg);
                if (!hit)
                    continue;
            }
            for (int ci = 0; ci < ncounts; ci++)
                for (int d = 0; d < ndt; d++)
                    for (int inplace = 0; inplace < 2; inplace++) {
                        int esize;
                        MPI_Type_size(dts[d].rtype, &esize);
                        int count = base_counts[ci] >= 0 ? base_counts[ci] : 65536 / esize;
                        unsigned cs = seed + 7919u * (unsigned)(ci * 31 + d * 7 + inplace + op * 1000);
                        int bad = run_case(comm, (agx_op)op, alg, count, &dts[d], inplace, cs);
                        int anybad;
                        MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, comm);
                        if (anybad) {
                            failed++;
                            if (rank == 0)
                                printf("FAIL %s alg=%s p=%d count=%d type=%s inplace=%d seed=%u\n",
                                       agx_op_name((agx_op)op), alg, p, count, dts[d].name, inplace, seed);
                        } else {
                            passed++;
                        }
                    }
        }
    }
    int rbad = repeat_v(), anyr;
    MPI_Allreduce(&rbad, &anyr, 1, MPI_INT, MPI_MAX, comm);
    if (anyr && rank == 0)
        printf("FAIL allgatherv repeated: %d calls differ from the reference\n", anyr);
    anyr ? failed++ : passed++;
    if (rank == 0) {
        printf("test_diff p=%d: %d passed, %d failed\n", p, passed, failed);
        fflush(stdout);
    }
    mt_dtcases_free(dts);
    MPI_Comm_free(&comm);
    MPI_Finalize();
    return failed ? 1 : 0;
}
