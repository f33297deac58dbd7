/* The multi-lane locality-aware allgather's schedule (see locality.h). No MPI. */
#include "locality.h"

static int radix_of(int r, int lanes, int f)
{
    long long k1 = (long long)lanes * f;
    return (int)(k1 < r - 1 ? k1 : r - 1) + 1;
}

int agx_multilane_fanout(int r, int lanes, int fanout)
{
    lanes = lanes < 1 ? 1 : lanes;
    fanout = fanout < 1 ? 1 : fanout;
    int L = r < 2 ? 0 : agx_ceil_logk(r, radix_of(r, lanes, fanout)), f = 1;
    while (f < fanout && agx_ceil_logk(r, radix_of(r, lanes, f)) > L)
        f++;
    return f;
}

int agx_multilane_radix(int r, int lanes, int fanout)
{
    lanes = lanes < 1 ? 1 : lanes;
    return radix_of(r, lanes, agx_multilane_fanout(r, lanes, fanout));
}

/* Lane y's digits in a round: [j0, j1), dealt in contiguous chunks of F (1 <= j < K). */
static void lane_digits(int y, int F, int K, int *j0, int *j1)
{
    long long a = 1 + (long long)y * F, b = a + F;
    *j0 = (int)(a < K ? a : K);
    *j1 = (int)(b < K ? b : K);
}

/* The regions lane y of region g receives in the round where D regions are held: digits
 * [j0, j1) bring regions [g + j0 D, g + min(j1 D, r)), one contiguous range. */
static int lane_received(const agx_regions *R, int y, int F, int K, long long D, int *first)
{
    int j0, j1;
    lane_digits(y, F, K, &j0, &j1);
    long long lo = j0 * D, hi = j1 * D < R->r ? j1 * D : R->r;
    *first = (int)(lo < R->r ? lo : 0);
    return lo < hi ? (int)(hi - lo) : 0;
}

/* What member y of region g has to pass on: its own block (D = 0) or, as a lane, the
 * range it received in the round where D regions were held. */
static void passed_on(const agx_regions *R, int g, int y, int F, int K, long long D, agx_blockset *s)
{
    int first, n;
    agx_set_clear(s);
    if (D == 0)
        agx_set_add(s, R->start[g] + y, 1);
    else if ((n = lane_received(R, y, F, K, D, &first)) > 0)
        agx_add_regions(s, R, g + first, n);
}

/* Every member of region g sends what it has to pass on to every other member (one
 * step); in a forwarding phase (D > 0) only the lanes have something. */
static int local_direct(const agx_regions *R, int g, int x, int step, int F, int K, long long D, agx_sched *pl)
{
    int m = R->size[g], lanes = D ? R->min_size : m;
    const int *mem = R->members + R->start[g];
    for (int y = 0; y < m; y++) {
        agx_blockset s;
        if (y != x && x < lanes) {
            passed_on(R, g, x, F, K, D, &s);
            if (agx_set_size(&s) && agx_sched_add(pl, step, AGX_SOP_SEND, mem[y], &s))
                return -1;
        }
        if (y != x && y < lanes) {
            passed_on(R, g, y, F, K, D, &s);
            if (agx_set_size(&s) && agx_sched_add(pl, step, AGX_SOP_RECV, mem[y], &s))
                return -1;
        }
    }
    return 0;
}

int agx_build_multilane(const agx_regions *R, int fanout, const int *vidx, int rank, agx_sched *pl)
{
    (void)vidx; /* the region-major order */
    int g = R->region_of[rank], x = R->local[rank], r = R->r;
    int F = agx_multilane_fanout(r, R->min_size, fanout), K = agx_multilane_radix(r, R->min_size, fanout);
    int step = 0;
    if (local_direct(R, g, x, step++, F, K, 0, pl))
        return -1;
    for (long long D = 1; D < r; D *= K) {
        int j0, j1;
        lane_digits(x, F, K, &j0, &j1);
        for (int j = j0; x < R->min_size && j < j1; j++) {
            long long c = r - j * D < D ? r - j * D : D;
            if (c <= 0)
                break;
            int off = (int)((j * D) % r), to = agx_mod(g - off, r), from = agx_mod(g + off, r);
            agx_blockset snd, rcv;
            agx_set_clear(&snd);
            agx_set_clear(&rcv);
            agx_add_regions(&snd, R, g, (int)c);
            agx_add_regions(&rcv, R, from, (int)c);
            if (agx_sched_add(pl, step, AGX_SOP_SEND, R->members[R->start[to] + x], &snd) ||
                agx_sched_add(pl, step, AGX_SOP_RECV, R->members[R->start[from] + x], &rcv))
                return -1;
        }
        if (local_direct(R, g, x, step + 1, F, K, D, pl))
            return -1;
        step += 2;
    }
    pl->nrounds = step;
    return 0;
}
