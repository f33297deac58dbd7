/*
 * Counters on real MPI_COMM_TYPE_SHARED groups (launch on emulated nodes:
 * tools/agxrun --nodes K). The expected local / non-local message counts come from the
 * ring (peer r+1) and Bruck (peer r-2^k) formulas applied to the node layout read from
 * MPI itself, summed over ranks.
 */
#include "agx.h"
#include "mpitest.h"

#include <string.h>

int main(int argc, char **argv)
{
    int rank, p, passed = 0, failed = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);

    /* node id of every rank, from MPI (independent of agx's own map) */
    MPI_Comm node;
    int nrank, leader, *node_of = malloc(sizeof(int) * p);
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &nrank);
    leader = rank;
    MPI_Bcast(&leader, 1, MPI_INT, 0, node);
    MPI_Allgather(&leader, 1, MPI_INT, node_of, 1, MPI_INT, MPI_COMM_WORLD);
    MPI_Comm_free(&node);
    int nodes = 0;
    for (int i = 0; i < p; i++)
        nodes += node_of[i] == i;

    const char *algs[] = {"ring", "bruck"};
    agx_stats_enable(1);
    for (int a = 0; a < 2; a++) {
        long long exp_local = 0, exp_nonlocal = 0;
        for (int r = 0; r < p; r++) {
            if (a == 0) {
                for (int s = 0; s < p - 1; s++)
                    node_of[(r + 1) % p] == node_of[r] ? exp_local++ : exp_nonlocal++;
            } else {
                for (int d = 1; d < p; d *= 2)
                    node_of[((r - d) % p + p) % p] == node_of[r] ? exp_local++ : exp_nonlocal++;
            }
        }
        MPI_Comm c;
        MPI_Comm_dup(MPI_COMM_WORLD, &c);
        agx_comm_set_algorithm(c, AGX_OP_ALLGATHER, algs[a]);
        int sb = rank, *rb = malloc(sizeof(int) * p);
        agx_stats_reset();
        agx_allgather(&sb, 1, MPI_INT, rb, 1, MPI_INT, c);
        agx_stats st;
        agx_stats_get(&st);
        long long mine[2] = {(long long)st.msgs_local, (long long)st.msgs_nonlocal}, sum[2];
        MPI_Allreduce(mine, sum, 2, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
        int ok = sum[0] == exp_local && sum[1] == exp_nonlocal;
        for (int i = 0; i < p; i++)
            ok = ok && rb[i] == i;
        if (rank == 0)
            printf("%s %s on %d nodes: local %lld (expected %lld), non-local %lld (expected %lld)\n",
                   ok ? "ok  " : "FAIL", algs[a], nodes, sum[0], exp_local, sum[1], exp_nonlocal);
        ok ? passed++ : failed++;
        free(rb);
        MPI_Comm_free(&c);
    }
    if (nodes < 2) {
        if (rank == 0)
            printf("FAIL only %d node: the launch did not emulate several nodes\n", nodes);
        failed++;
    }
    if (rank == 0)
        printf("test_nodes p=%d: %d passed, %d failed\n", p, passed, failed);
    free(node_of);
    MPI_Finalize();
    return failed ? 1 : 0;
}
