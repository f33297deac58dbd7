/*
 * Sparbit allgather schedule (Loch & Koslovski, SBAC-PAD 2021; Open MPI 5 coll/base and
 * UCC tl/ucp "sparbit"). L = ceil(log2 p) rounds; round i uses distance d = 2^(L-1-i),
 * halving: a rank sends to r + d and receives from r - d. At round i it holds n_i blocks,
 * r, r - 2d', r - 4d', ... (spread out, hence the name), forwards the ones the receiver
 * lacks and receives as many: block r - 2td goes out and r - (2t+1)d comes in, t < n_i - x_i.
 * x_i = 1 when d is a distance p's binary expansion does not need (the bits of
 * ~(p >> z) | 1, shifted back by z = ctz(p)): the last transfer would deliver a block the
 * receiver already has. n_{i+1} = 2 n_i - x_i, ending at p.
 * The blocks of one round travel as one message (a scattered set), so every rank sends at
 * most L messages and exactly p - 1 blocks.
 */
#include "patterns.h"

#include <stdlib.h>

int agx_build_sparbit(agx_sched *s, int round0, int r, int p, int param)
{
    (void)param;
    int L = agx_ceil_log2(p), z = 0, n = 1, rc = 0;
    if (p <= 1)
        return 0;
    while (!((p >> z) & 1))
        z++;
    unsigned skip = (~((unsigned)p >> z) | 1u) << z;
    int *sb = malloc(sizeof(int) * (size_t)p), *rb = malloc(sizeof(int) * (size_t)p);
    if (!sb || !rb)
        rc = -1;
    for (int i = 0; i < L && rc == 0; i++) {
        int d = 1 << (L - 1 - i), x = (d & skip) == (unsigned)d, m = n - x;
        for (int t = 0; t < m; t++) {
            sb[t] = agx_mod(r - 2 * t * d, p);
            rb[t] = agx_mod(r - (2 * t + 1) * d, p);
        }
        if (agx_sched_add_blocks(s, round0 + i, AGX_SOP_SEND, agx_mod(r + d, p), sb, m) ||
            agx_sched_add_blocks(s, round0 + i, AGX_SOP_RECV, agx_mod(r - d, p), rb, m))
            rc = -1;
        n = 2 * n - x;
    }
    free(sb);
    free(rb);
    return rc ? -1 : L;
}
