/*
 * Non-local message and byte counts of real runs against Bienz's formulas, on the
 * regions of this launch (AGX_REGION_SIZE / AGX_REGIONS, or emulated nodes): loc_bruck
 * sends ceil(log_pl r) non-local messages and pl * sum_i min(pl^i, r - pl^i) blocks from
 * its busiest process; standard Bruck what Algorithm 1's partners r - 2^k imply
 * (Example 2.1: 4 messages, 15 values); hierarchical and multileader ceil(log2 r) from
 * their leaders; multilane what its model (model.h) gives its lane 0 at the default
 * fanout (or AGX_MULTILANE_FANOUT). Every result is also checked.
 */
#include "agx.h"
#include "locality.h"
#include "model.h"
#include "mpitest.h"

#include <string.h>

int main(int argc, char **argv)
{
    int rank, p, passed = 0, failed = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    int *label = malloc(sizeof(int) * p);
    if (agx_regions_override(getenv("AGX_REGION_SIZE"), getenv("AGX_REGIONS"), p, label) != 1) {
        MPI_Comm node;
        int leader = rank;
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
        MPI_Bcast(&leader, 1, MPI_INT, 0, node);
        MPI_Allgather(&leader, 1, MPI_INT, label, 1, MPI_INT, MPI_COMM_WORLD);
        MPI_Comm_free(&node);
    }
    agx_regions R;
    agx_regions_init(&R, p, label);
    int equal = R.min_size == R.max_size, pl = R.min_size, r = R.r;
    int lg_r = 0;
    while ((1 << lg_r) < r)
        lg_r++;
    const char *fo = getenv("AGX_MULTILANE_FANOUT");
    int F = fo ? atoi(fo) : 8;
    struct { const char *alg; long long msgs, blocks; } exp[5] = {
        {"loc_bruck", equal ? agx_model_loc_bruck_nonlocal_msgs(r, pl) : -1,
         equal ? agx_model_loc_bruck_nonlocal_blocks(r, pl) : -1},
        {"bruck", 0, 0},
        /* leaders: Bruck over regions moves the other r-1 regions' blocks (multileader:
         * each of nl leaders its 1/nl share) */
        {"hierarchical", lg_r, equal ? (long long)(r - 1) * pl : -1},
        {"multileader", lg_r, -1},
        {"multilane", equal ? agx_model_multilane_nonlocal_msgs(r, pl, F) : -1,
         equal ? agx_model_multilane_nonlocal_blocks(r, pl, F) : -1},
    };
    const char *ld = getenv("AGX_LEADERS");
    int nl = ld ? atoi(ld) : 2;
    if (nl > R.min_size)
        nl = R.min_size;
    if (equal && pl % nl == 0)
        exp[3].blocks = (long long)(r - 1) * (pl / nl);
    int bm, bb;
    agx_model_bruck_nonlocal(p, label, &bm, &bb);
    exp[1].msgs = bm;
    exp[1].blocks = bb;
    if (rank == 0)
        printf("test_regions: p=%d in %d regions (sizes %d..%d)\n", p, r, R.min_size, R.max_size);

    const int n = 3; /* ints per rank */
    int *sb = malloc(sizeof(int) * n), *rb = malloc(sizeof(int) * n * p);
    for (int i = 0; i < n; i++)
        sb[i] = rank * 100 + i;
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    agx_stats_enable(1);
    for (int k = 0; k < 5; k++) {
        agx_comm_set_algorithm(c, AGX_OP_ALLGATHER, exp[k].alg);
        agx_allgather(sb, n, MPI_INT, rb, n, MPI_INT, c); /* warm: regions and plans */
        agx_stats_reset();
        memset(rb, 0, sizeof(int) * n * p);
        agx_allgather(sb, n, MPI_INT, rb, n, MPI_INT, c);
        agx_stats st;
        agx_stats_get(&st);
        int ok = 1;
        for (int i = 0; i < p * n; i++)
            ok &= rb[i] == (i / n) * 100 + i % n;
        long long mine[2] = {(long long)st.msgs_nonlocal, (long long)st.bytes_nonlocal / (4 * n)}, mx[2];
        MPI_Allreduce(mine, mx, 2, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
        int allok;
        MPI_Allreduce(&ok, &allok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        int good = allok && (exp[k].msgs < 0 || mx[0] == exp[k].msgs) && (exp[k].blocks < 0 || mx[1] == exp[k].blocks);
        if (rank == 0)
            printf("%s %-13s non-local messages %lld (expected %lld), non-local blocks %lld (expected %lld)%s\n",
                   good ? "ok  " : "FAIL", exp[k].alg, mx[0], exp[k].msgs, mx[1], exp[k].blocks,
                   allok ? "" : ", WRONG RESULT");
        good ? passed++ : failed++;
        /* the public model (agx_model_allgather_nonlocal, what agx-bench prints) says the same */
        long long pm = -1, pb = -1;
        int prc = agx_model_allgather_nonlocal(exp[k].alg, p, label, 4 * n, nl, &pm, &pb);
        int has = k < 4 && exp[k].msgs >= 0 && exp[k].blocks >= 0;
        good = has ? prc == MPI_SUCCESS && pm == exp[k].msgs && pb == exp[k].blocks * 4 * n
                   : prc == MPI_ERR_ARG && pm == -1 && pb == -1;
        if (rank == 0 && !good)
            printf("FAIL agx_model_allgather_nonlocal(%s): rc %d, %lld messages, %lld bytes\n", exp[k].alg, prc, pm, pb);
        good ? passed++ : failed++;
    }
    int pr, plo, phi, *mine_of = malloc(sizeof(int) * p);
    agx_comm_regions(c, mine_of);
    int good = agx_model_regions(p, label, &pr, &plo, &phi) == MPI_SUCCESS && pr == r && plo == R.min_size &&
               phi == R.max_size && agx_model_regions(p, mine_of, &pr, &plo, &phi) == MPI_SUCCESS && pr == r;
    if (rank == 0)
        printf("%s agx_model_regions: %d regions, sizes %d..%d\n", good ? "ok  " : "FAIL", pr, plo, phi);
    good ? passed++ : failed++;
    free(mine_of);
    if (rank == 0)
        printf("test_regions p=%d: %d passed, %d failed\n", p, passed, failed);
    agx_regions_free(&R);
    free(label);
    free(sb);
    free(rb);
    MPI_Comm_free(&c);
    MPI_Finalize();
    return failed ? 1 : 0;
}
