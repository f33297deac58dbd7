/*
 * SharedNotify's block numbering and load balance (src/patterns/shm_blocks.c) and the
 * ring of nodes that moves the blocks (Algorithm 1, lines 10-19), simulated without MPI
 * over random regions (sizes 1..5, 1..7 regions, unequal) and contributions (zeros,
 * smaller and larger than the block, a single broadcasting rank). Checked: ids are
 * continuous across nodes in region-member order (Table I / Listing 1); a node's working
 * sets (Eq. 4, Listing 3) partition its ids and differ by at most one block; the blocks
 * of a process tile its bytes exactly; in the ring every block reaches every other node
 * exactly once, after r - 1 hops, so the write_notifies number (r - 1) x blocks, the
 * count tests/mpi/test_shm_notify.c checks against the MPI run.
 */
#include "shm_blocks.h"
#include "unit.h"

#include <stdlib.h>
#include <string.h>

static unsigned rnd(unsigned *s)
{
    *s ^= *s << 13, *s ^= *s >> 17, *s ^= *s << 5;
    return *s;
}

/* One random shape: 0 = every check held. */
static int check_shape(unsigned *seed, int *write_notifies_ok)
{
    int r = 1 + rnd(seed) % 7, label[64], p = 0;
    for (int k = 0; k < r; k++)
        for (int n = 1 + rnd(seed) % 5; n > 0; n--)
            label[p++] = k;
    for (int i = p - 1; i > 0; i--) { /* regions need not be consecutive ranks */
        int j = rnd(seed) % (i + 1), t = label[i];
        label[i] = label[j], label[j] = t;
    }
    agx_regions R;
    if (agx_regions_init(&R, p, label))
        return 1;
    long long len[64], B = 1 + rnd(seed) % 100;
    int dist = rnd(seed) % 3;
    for (int i = 0; i < p; i++)
        len[i] = dist == 0 ? (long long)(rnd(seed) % 4 ? rnd(seed) % 300 : 0) : dist == 1 ? (i == 0 ? 1000 : 0) : 2 * B;
    agx_snb s;
    long long mem[2 * 64 + 2];
    agx_snb_init(&s, &R, len, B, mem);
    int bad = s.total != agx_snb_count(len, p, B);
    /* continuous ids in member order; blocks tile each process's bytes */
    long long id = 0;
    for (int v = 0; v < p; v++) {
        int rank = R.members[v];
        bad |= s.first[v] != id;
        long long covered = 0;
        for (long long b = 0; b < (len[rank] + B - 1) / B; b++, id++) {
            int rk;
            long long off, bytes;
            agx_snb_locate(&s, id, &rk, &off, &bytes);
            bad |= rk != rank || off != covered || bytes <= 0 || bytes > B;
            bad |= agx_snb_region(&s, id) != R.region_of[rank];
            covered += bytes;
        }
        bad |= covered != len[rank];
    }
    bad |= id != s.total;
    /* Eq. 4: the working sets partition the node's ids, sizes within one */
    for (int k = 0; k < r; k++) {
        long long next = s.node_first[k], lo = s.total, hi = 0;
        for (int j = 0; j < R.size[k]; j++) {
            long long first, n = agx_snb_work(&s, &R, k, j, &first);
            bad |= first != next;
            next += n;
            lo = n < lo ? n : lo, hi = n > hi ? n : hi;
        }
        bad |= next != s.node_first[k + 1] || hi - lo > 1;
    }
    /* the ring: a block written by node k to k + 1 is forwarded until the next node is its
     * source; count hops and arrivals */
    long long hops = 0;
    int *got = calloc((size_t)(s.total ? s.total : 1) * r, sizeof(int));
    for (long long b = 0; b < s.total; b++) {
        int src = agx_snb_region(&s, b);
        for (int at = (src + 1) % r; r > 1; at = (at + 1) % r) {
            got[b * r + at]++;
            hops++;
            if ((at + 1) % r == src)
                break;
        }
    }
    for (long long b = 0; b < s.total; b++)
        for (int k = 0; k < r; k++)
            bad |= got[b * r + k] != (k == agx_snb_region(&s, b) ? 0 : 1);
    *write_notifies_ok = hops == s.total * (r - 1);
    free(got);
    agx_regions_free(&R);
    return bad;
}

TEST(shm_blocks_random_shapes)
{
    unsigned seed = 12345;
    for (int t = 0; t < 2000; t++) {
        int ok = 0;
        ASSERT_EQ(check_shape(&seed, &ok), 0);
        ASSERT(ok);
    }
}

/* The paper's example (Sec. II-A.5): if node 0's last block id is 10, node 1's first
 * process starts at 11; Eq. 4 on 11 blocks over 4 processes gives 3, 3, 3, 2. */
TEST(shm_blocks_paper_example)
{
    int label[8] = {0, 0, 0, 0, 1, 1, 1, 1};
    long long len[8] = {300, 300, 300, 200, 100, 0, 100, 100};
    agx_regions R;
    agx_snb s;
    ASSERT_EQ(agx_regions_init(&R, 8, label), 0);
    long long mem[12];
    ASSERT_EQ(agx_snb_tables(8, 2), 12);
    agx_snb_init(&s, &R, len, 100, mem);
    ASSERT_EQ(s.node_first[1], 11);
    ASSERT_EQ(s.first[4], 11);
    long long first, n[4];
    for (int j = 0; j < 4; j++)
        n[j] = agx_snb_work(&s, &R, 0, j, &first);
    ASSERT(n[0] == 3 && n[1] == 3 && n[2] == 3 && n[3] == 2);
    ASSERT_EQ(agx_snb_work(&s, &R, 1, 3, &first), 0); /* 3 blocks over 4: the last has none */
    agx_regions_free(&R);
}

UNIT_MAIN()
