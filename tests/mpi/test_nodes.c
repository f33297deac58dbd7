/*
 * Counters on real MPI_COMM_TYPE_SHARED groups (launch on emulated nodes:
 * tools/agxrun --nodes K). The expected local / non-local message counts come from the
 * ring (peer r+1) and Bruck (peer r-2^k) formulas applied to the node layout read from
 * MPI itself, summed over ranks; on a duplicate of the world, whose map is split by MPI,
 * then on communicators of other orders and leaders, whose maps agx builds from the
 * processes' nodes learned there (src/core/regions.c).
 */
#include "agx.h"
#include "mpitest.h"

#include <string.h>

static const char *algs[] = {"ring", "bruck"};

/* One allgather of algorithm alg on comm (MPI_COMM_NULL: this rank is not in it): the
 * local and non-local messages summed over its ranks against the formula's, on the
 * layout node_of (world ranks) read from MPI. */
static int case_ok(MPI_Comm comm, const int *node_of, const char *alg, const char *name)
{
    if (comm == MPI_COMM_NULL)
        return 1;
    int q, me;
    MPI_Comm_size(comm, &q);
    MPI_Comm_rank(comm, &me);
    int *in = malloc(sizeof(int) * q), *w = malloc(sizeof(int) * q), *rb = malloc(sizeof(int) * q);
    MPI_Group g, wg;
    MPI_Comm_group(comm, &g);
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    for (int i = 0; i < q; i++)
        in[i] = i;
    MPI_Group_translate_ranks(g, q, in, wg, w); /* w[i]: comm rank i's world rank */
    MPI_Group_free(&g);
    MPI_Group_free(&wg);
    long long exp_local = 0, exp_nonlocal = 0;
    for (int r = 0; r < q; r++) {
        if (!strcmp(alg, "ring")) {
            for (int s = 0; s < q - 1; s++)
                node_of[w[(r + 1) % q]] == node_of[w[r]] ? exp_local++ : exp_nonlocal++;
        } else {
            for (int d = 1; d < q; d *= 2)
                node_of[w[((r - d) % q + q) % q]] == node_of[w[r]] ? exp_local++ : exp_nonlocal++;
        }
    }
    agx_comm_set_algorithm(comm, AGX_OP_ALLGATHER, alg);
    int sb = me;
    agx_stats_reset();
    agx_allgather(&sb, 1, MPI_INT, rb, 1, MPI_INT, comm);
    agx_stats st;
    agx_stats_get(&st);
    long long mine[2] = {(long long)st.msgs_local, (long long)st.msgs_nonlocal}, sum[2];
    MPI_Allreduce(mine, sum, 2, MPI_LONG_LONG, MPI_SUM, comm);
    int ok = sum[0] == exp_local && sum[1] == exp_nonlocal;
    for (int i = 0; i < q; i++)
        ok = ok && rb[i] == i;
    if (me == 0)
        printf("%s %s, %s (%d ranks): local %lld (expected %lld), non-local %lld (expected %lld)\n",
               ok ? "ok  " : "FAIL", alg, name, q, sum[0], exp_local, sum[1], exp_nonlocal);
    free(in), free(w), free(rb);
    return ok;
}

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

    /* a duplicate of the world (its map learns each process's node), then communicators
     * whose maps come from those ids: the world reversed, the world without rank 0 (other
     * node leaders), the odd ranks reversed */
    const char *names[] = {"world", "reversed", "without rank 0", "odd reversed"};
    int colour[] = {0, 0, rank == 0 ? MPI_UNDEFINED : 0, rank % 2 ? 0 : MPI_UNDEFINED};
    int key[] = {rank, p - rank, rank, -rank};
    agx_stats_enable(1);
    for (int c = 0; c < 4; c++)
        for (int a = 0; a < 2; a++) {
            MPI_Comm comm;
            MPI_Comm_split(MPI_COMM_WORLD, colour[c], key[c], &comm);
            int ok = case_ok(comm, node_of, algs[a], names[c]);
            MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
            ok ? passed++ : failed++;
            if (comm != MPI_COMM_NULL)
                MPI_Comm_free(&comm);
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
