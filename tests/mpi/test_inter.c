/*
 * Intergroup allgather / allgatherv (KangTraff19): every inter algorithm, on an
 * inter-communicator and on the colour split of an intra-communicator, against the MPI
 * library's inter-communicator result (PMPI_), for every pair 1 <= p, q <= 6 and
 * (10, 3), (3, 10) (group A = the first p ranks), k_A != k_B, zero blocks, allgatherv with
 * arithmetic sizes (setting 6), one large block among zeros, and random sizes with zeros,
 * received at shuffled displacements with gaps; datatypes as in test_diff.
 * The exchange-phase bytes of `segmented` and `segmented_v` are checked exactly against
 * the paper's definitions (Theorem 1: subgroups of ceil/floor(p/q), balanced pieces;
 * Algorithm 2: floor/ceil(K/n) per receiver), through agx's intergroup counters.
 *   test_inter [--quick] [--seed S]
 */
#include "agx.h"
#include "mpitest.h"

#include <stdlib.h>
#include <string.h>

static int wrank, wsize, passed, failed;

/* Block size (elements of the receive type) of rank i of group g (0 = A, 1 = B). */
static int block_size(int op, int shape, int g, int i, int n, unsigned seed)
{
    static const int ag[4][2] = {{1, 1}, {7, 3}, {0, 5}, {300, 41}};
    if (op == AGX_OP_ALLGATHER)
        return ag[shape][g];
    switch (shape) {
    case 0: return (g ? 5 : 3) * i;                    /* arithmetic, rank 0 sends 0 */
    case 1: return i == n / 2 ? 500 + 7 * g : 0;       /* one large block, zeros */
    default: {                                         /* random with zeros */
        unsigned s = seed * 7919u + (unsigned)(g * 1000 + i) * 104729u + 1;
        mt_rand(&s);
        return mt_rand(&s) % 4 == 0 ? 0 : (int)(mt_rand(&s) % 60);
    }
    }
}

static long long balanced(long long n, int m, int i) /* part i of n split in m, first n%m larger */
{
    return n / m + (i < n % m ? 1 : 0);
}

int main(int argc, char **argv)
{
    mt_run run;
    mt_start(&argc, &argv, &run);
    int quick = run.quick;
    unsigned seed = run.seed;
    wrank = run.rank;
    wsize = run.size;
    if (wrank == 0)
        printf("test_inter: %d ranks, seed=%u (rerun with AGX_TEST_SEED=%u)\n", wsize, seed, seed);
    agx_stats_enable(1);

    mt_dtcase dts[MT_NDTCASES];
    mt_dtcases(dts);

    int pairs[48][2], npairs = 0;
    for (int p = 1; p <= 6; p++)
        for (int q = 1; q <= 6; q++)
            if (!quick || p + q <= 5) {
                pairs[npairs][0] = p;
                pairs[npairs++][1] = q;
            }
    int extra[2][2] = {{10, 3}, {3, 10}};
    for (int e = 0; e < 2 && !quick; e++) {
        pairs[npairs][0] = extra[e][0];
        pairs[npairs++][1] = extra[e][1];
    }

    for (int pi = 0; pi < npairs; pi++) {
        int p = pairs[pi][0], q = pairs[pi][1], n = p + q;
        if (n > wsize)
            continue;
        MPI_Comm sub, local, inter;
        MPI_Comm_split(MPI_COMM_WORLD, wrank < n ? 0 : MPI_UNDEFINED, wrank, &sub);
        if (sub == MPI_COMM_NULL)
            continue;
        int isB = wrank >= p, lrank = isB ? wrank - p : wrank;
        int nG = isB ? q : p, nH = isB ? p : q; /* my group, the other */
        MPI_Comm_split(sub, isB, wrank, &local);
        MPI_Intercomm_create(local, 0, sub, isB ? 0 : p, 77, &inter);
        MPI_Comm_set_errhandler(sub, MPI_ERRORS_RETURN);
        MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
        /* all datatypes for small pairs and the 25:7-like ones, two otherwise */
        int ndt = (n <= 5 || p == 10 || q == 10) ? 5 : 2;

        for (int op = AGX_OP_ALLGATHER; op <= AGX_OP_ALLGATHERV; op++) { /* the allgather family */
            int nalg = agx_algorithm_count((agx_op)op, AGX_KIND_INTER);
            for (int ai = 0; ai < nalg; ai++) {
                const char *alg;
                agx_algorithm_info((agx_op)op, AGX_KIND_INTER, ai, &alg, NULL);
                int nshapes = op == AGX_OP_ALLGATHER ? 4 : 3;
                for (int shape = 0; shape < nshapes; shape++)
                    for (int d = 0; d < ndt; d++)
                        for (int mode = 0; mode < 2; mode++) {
                            const mt_dtcase *dt = &dts[d];
                            unsigned cs = seed + (unsigned)(pi * 7 + shape * 131 + d * 17 + op * 1009);
                            int mine = block_size(op, shape, isB, lrank, nG, cs);
                            int *counts = malloc(sizeof(int) * nH), *displs = malloc(sizeof(int) * nH);
                            long long end, KH = 0;
                            unsigned rs = cs ^ 0x5bd1e995u;
                            for (int h = 0; h < nH; h++)
                                counts[h] = block_size(op, shape, !isB, h, nH, cs);
                            end = op == AGX_OP_ALLGATHERV ? mt_shuffled_displs(nH, counts, displs, &rs)
                                                          : mt_regular_displs(nH, counts, displs);
                            int esize;
                            MPI_Type_size(dt->rtype, &esize);
                            for (int h = 0; h < nH; h++)
                                KH += (long long)counts[h] * esize;
                            int scount = mine * dt->smult;
                            size_t sbytes = mt_span(dt->stype, scount) + 16, rbytes = mt_span(dt->rtype, end) + 16;
                            unsigned char *sbuf = malloc(sbytes), *rbuf = malloc(rbytes), *ref = malloc(rbytes);
                            unsigned ds = cs * 2654435761u + (unsigned)wrank * 40503u + 1;
                            for (size_t i = 0; i < sbytes; i++)
                                sbuf[i] = (unsigned char)mt_rand(&ds);
                            for (size_t i = 0; i < rbytes; i++)
                                rbuf[i] = ref[i] = (unsigned char)(0x5A ^ i);

                            int rc1, rc2;
                            agx_stats st;
                            if (op == AGX_OP_ALLGATHER)
                                rc1 = PMPI_Allgather(sbuf, scount, dt->stype, ref, counts[0], dt->rtype, inter);
                            else
                                rc1 = PMPI_Allgatherv(sbuf, scount, dt->stype, ref, counts, displs, dt->rtype, inter);
                            MPI_Comm c = mode ? sub : inter;
                            agx_comm_set_algorithm(c, (agx_op)op, alg);
                            agx_stats_reset();
                            if (op == AGX_OP_ALLGATHER)
                                rc2 = mode ? agx_intergroup_allgather(sbuf, scount, dt->stype, rbuf, counts[0],
                                                                      dt->rtype, sub, isB)
                                           : agx_allgather(sbuf, scount, dt->stype, rbuf, counts[0], dt->rtype, inter);
                            else
                                rc2 = mode ? agx_intergroup_allgatherv(sbuf, scount, dt->stype, rbuf, counts, displs,
                                                                       dt->rtype, sub, isB)
                                           : agx_allgatherv(sbuf, scount, dt->stype, rbuf, counts, displs, dt->rtype,
                                                            inter);
                            agx_stats_get(&st);
                            int bad = rc1 != MPI_SUCCESS || rc2 != MPI_SUCCESS || memcmp(rbuf, ref, rbytes) != 0;
                            const char *ran = "?";
                            agx_comm_last_algorithm(c, (agx_op)op, &ran);
                            if (!strcmp(alg, "eager")) { /* eager iff every block fits its record */
                                long long kmine = (long long)mine * esize, kmax;
                                MPI_Allreduce(&kmine, &kmax, 1, MPI_LONG_LONG, MPI_MAX, sub);
                                const char *want = kmax <= 32 ? "eager"
                                                   : op == AGX_OP_ALLGATHER ? "segmented" : "segmented_v";
                                bad |= strcmp(ran, want) != 0;
                            } else
                                bad |= strcmp(ran, alg) != 0;

                            /* exchange-phase bytes, from the paper's definitions */
                            long long kG = (long long)mine * esize, exp_recv = -1;
                            if (!strcmp(alg, "segmented")) {
                                long long kH = (long long)counts[0] * esize;
                                if (nH >= nG) /* whole blocks of my subgroup of the other group */
                                    exp_recv = balanced(nH, nG, lrank) * kH;
                                else { /* my piece of the block of my subgroup's partner */
                                    int j = 0, first = 0;
                                    while (first + balanced(nG, nH, j) <= lrank)
                                        first += (int)balanced(nG, nH, j++);
                                    exp_recv = balanced(kH, (int)balanced(nG, nH, j), lrank - first);
                                }
                            } else if (!strcmp(alg, "segmented_v")) {
                                exp_recv = balanced(KH, nG, lrank);
                            }
                            if (exp_recv >= 0 && (st.bytes_intergroup_sent != (unsigned long long)kG ||
                                                  st.bytes_intergroup_recv != (unsigned long long)exp_recv)) {
                                fprintf(stderr, "  rank %d: %s exchange sent %llu (expected %lld), received %llu "
                                        "(expected %lld)\n", wrank, alg, st.bytes_intergroup_sent, kG,
                                        st.bytes_intergroup_recv, exp_recv);
                                bad = 1;
                            }
                            if (bad && rc1 == MPI_SUCCESS && rc2 != MPI_SUCCESS) {
                                char msg[MPI_MAX_ERROR_STRING];
                                int len;
                                agx_error_string(rc2, msg, &len);
                                fprintf(stderr, "  rank %d: %s\n", wrank, msg);
                            }
                            int anybad;
                            MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, sub);
                            if (anybad) {
                                failed++;
                                if (wrank == 0)
                                    printf("FAIL %s alg=%s (ran %s) p=%d q=%d shape=%d type=%s %s seed=%u\n",
                                           agx_op_name((agx_op)op), alg, ran, p, q, shape, dt->name,
                                           mode ? "colour-split" : "inter-communicator", seed);
                            } else {
                                passed++;
                            }
                            free(sbuf); free(rbuf); free(ref); free(counts); free(displs);
                        }
            }
        }
        MPI_Comm_free(&inter);
        MPI_Comm_free(&local);
        MPI_Comm_free(&sub);
    }
    int tot[2] = {passed, failed}, all[2];
    MPI_Allreduce(tot, all, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD); /* every rank's exit status */
    if (wrank == 0)
        printf("test_inter: %d passed, %d failed\n", all[0], all[1]);
    mt_dtcases_free(dts);
    MPI_Finalize();
    return all[1] ? 1 : 0;
}
