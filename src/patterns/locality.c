/* Regions and the schedules of the locality-aware allgathers (see locality.h). */
#include "locality.h"

#include <stdlib.h>
#include <string.h>

int agx_regions_init(agx_regions *R, int p, const int *label)
{
    memset(R, 0, sizeof *R);
    R->p = p;
    R->region_of = malloc(sizeof(int) * (size_t)p);
    R->local = malloc(sizeof(int) * (size_t)p);
    R->members = malloc(sizeof(int) * (size_t)p);
    R->size = calloc((size_t)p + 1, sizeof(int));
    R->start = calloc((size_t)p + 2, sizeof(int));
    int *first_label = malloc(sizeof(int) * (size_t)p);
    if (!R->region_of || !R->local || !R->members || !R->size || !R->start || !first_label) {
        free(first_label);
        agx_regions_free(R);
        return -1;
    }
    /* renumber labels by first appearance: region ids follow rank order */
    for (int i = 0; i < p; i++) {
        int id = -1;
        for (int j = 0; j < R->r; j++)
            if (first_label[j] == label[i]) {
                id = j;
                break;
            }
        if (id < 0) {
            id = R->r++;
            first_label[id] = label[i];
        }
        R->region_of[i] = id;
        R->local[i] = R->size[id]++;
    }
    free(first_label);
    for (int i = 0; i < R->r; i++)
        R->start[i + 1] = R->start[i] + R->size[i];
    int *fill = calloc((size_t)R->r + 1, sizeof(int));
    if (!fill) {
        agx_regions_free(R);
        return -1;
    }
    for (int i = 0; i < p; i++)
        R->members[R->start[R->region_of[i]] + fill[R->region_of[i]]++] = i;
    free(fill);
    R->min_size = p;
    R->max_size = 0;
    for (int i = 0; i < R->r; i++) {
        if (R->size[i] < R->min_size) R->min_size = R->size[i];
        if (R->size[i] > R->max_size) R->max_size = R->size[i];
    }
    return 0;
}

void agx_regions_free(agx_regions *R)
{
    free(R->region_of);
    free(R->size);
    free(R->start);
    free(R->members);
    free(R->local);
    memset(R, 0, sizeof *R);
}

int agx_regions_override(const char *region_size, const char *regions, int p, int *label)
{
    char *end;
    if (region_size && *region_size) {
        long n = strtol(region_size, &end, 10);
        if (*end || n < 1)
            return -1;
        for (int i = 0; i < p; i++)
            label[i] = (int)(i / n);
        return 1;
    }
    if (regions && *regions) {
        if (strncmp(regions, "round_robin:", 12) != 0)
            return -1;
        long n = strtol(regions + 12, &end, 10);
        if (*end || n < 1)
            return -1;
        for (int i = 0; i < p; i++)
            label[i] = (int)(i % n);
        return 1;
    }
    return 0;
}

void agx_order_regions(const agx_regions *R, int nl, int *order)
{
    (void)nl;
    memcpy(order, R->members, sizeof(int) * (size_t)R->p);
}

/* Sub-block l of a region of m members: local ranks [sb_start(m, nl, l), sb_start(.., l+1)). */
static int sb_start(int m, int nl, int l) { return l * (m / nl) + (l < m % nl ? l : m % nl); }

/* Every region needs its nl leaders: at most the smallest region's size. */
static int ml_leaders(const agx_regions *R, int nl) { return nl > R->min_size ? R->min_size : nl < 1 ? 1 : nl; }

void agx_order_multileader(const agx_regions *R, int nl, int *order)
{
    int v = 0;
    nl = ml_leaders(R, nl);
    for (int l = 0; l < nl; l++)
        for (int g = 0; g < R->r; g++)
            for (int x = sb_start(R->size[g], nl, l); x < sb_start(R->size[g], nl, l + 1); x++)
                order[v++] = R->members[R->start[g] + x];
}

void agx_add_regions(agx_blockset *s, const agx_regions *R, int a, int n)
{
    if (n <= 0)
        return;
    a = agx_mod(a, R->r);
    if (a + n <= R->r) {
        agx_set_add(s, R->start[a], R->start[a + n] - R->start[a]);
    } else {
        agx_set_add(s, R->start[a], R->p - R->start[a]);
        agx_set_add(s, 0, R->start[a + n - R->r]);
    }
}

/* What member y of a region contributes to a local allgather phase: a region range
 * (n = 0: nothing) or, in phase "own", its own block. */
typedef struct {
    int own;          /* 1: each member contributes its own block */
    int k, D, r;      /* loc_bruck step: digit handler y holds regions [g + jD, +cnt_j) */
} contrib_rule;

static int digit_of(int y, int m, int k)
{
    /* digit j (1 <= j < k) is handled by local rank j % m: rank j when m >= k, rank 0 of a
     * single-member region (k = 2) */
    for (int j = 1; j < k; j++)
        if (j % m == y)
            return j;
    return 0;
}

static void add_contrib(agx_blockset *s, const agx_regions *R, int g, int y, const contrib_rule *c)
{
    int m = R->size[g];
    if (c->own) {
        agx_set_add(s, R->start[g] + y, 1);
        return;
    }
    int j = digit_of(y, m, c->k);
    if (j == 0)
        return;
    int cnt = c->r - j * c->D;
    cnt = cnt < 0 ? 0 : cnt > c->D ? c->D : cnt;
    agx_add_regions(s, R, g + j * c->D, cnt);
}

/* Bruck allgather among the m members of region g over contributions c, in steps
 * step0 .. step0 + ceil(log2 m) - 1. */
static int local_bruck(const agx_regions *R, int g, int x, int step0, const contrib_rule *c, agx_sched *pl)
{
    int m = R->size[g], steps = agx_ceil_log2(m);
    for (int t = 0; t < steps; t++) {
        int d = 1 << t, cnt = agx_bruck_count(d, m);
        agx_blockset snd, rcv;
        agx_set_clear(&snd);
        agx_set_clear(&rcv);
        for (int y = 0; y < cnt; y++) {
            add_contrib(&snd, R, g, agx_mod(x + y, m), c);
            add_contrib(&rcv, R, g, agx_mod(x + d + y, m), c);
        }
        if (agx_sched_add(pl, step0 + t, AGX_SOP_SEND, R->members[R->start[g] + agx_mod(x - d, m)], &snd) ||
            agx_sched_add(pl, step0 + t, AGX_SOP_RECV, R->members[R->start[g] + agx_mod(x + d, m)], &rcv))
            return -1;
    }
    return 0;
}

int agx_build_loc_bruck(const agx_regions *R, int nl, const int *vidx, int rank, agx_sched *pl)
{
    (void)nl;
    (void)vidx; /* the region-major order: region g's members start at R->start[g] */
    int g = R->region_of[rank], x = R->local[rank], m = R->size[g];
    int LS = agx_ceil_log2(R->max_size); /* every local phase padded to the largest region */
    int k = R->min_size < 2 ? 2 : R->min_size;
    int L = agx_ceil_logk(R->r, k);
    contrib_rule own = {.own = 1};
    int step = 0;
    if (local_bruck(R, g, x, step, &own, pl))
        return -1;
    step += LS;
    long long D = 1;
    for (int i = 0; i < L; i++, D *= k) {
        int j = digit_of(x, m, k);
        if (j) {
            int cnt = R->r - j * (int)D;
            cnt = cnt < 0 ? 0 : cnt > D ? (int)D : cnt;
            int to = agx_mod(g - j * (int)D, R->r), from = agx_mod(g + j * (int)D, R->r);
            agx_blockset snd, rcv;
            agx_set_clear(&snd);
            agx_set_clear(&rcv);
            agx_add_regions(&snd, R, g, cnt);
            agx_add_regions(&rcv, R, from, cnt);
            if (agx_sched_add(pl, step, AGX_SOP_SEND, R->members[R->start[to] + j % R->size[to]], &snd) ||
                agx_sched_add(pl, step, AGX_SOP_RECV, R->members[R->start[from] + j % R->size[from]], &rcv))
                return -1;
        }
        step += 1;
        contrib_rule got = {.own = 0, .k = k, .D = (int)D, .r = R->r};
        if (local_bruck(R, g, x, step, &got, pl))
            return -1;
        step += LS;
    }
    pl->nrounds = step;
    return 0;
}

/* Binomial broadcast of virtual blocks [0, p) among `n` ranks ranks[0..n) from ranks[0]. */
static int local_bcast(const int *ranks, int n, int x, int step0, int p, agx_sched *pl)
{
    agx_blockset all;
    agx_set_clear(&all);
    agx_set_add(&all, 0, p);
    for (int t = 0; (1 << t) < n; t++) {
        int mask = 1 << t;
        if (x < mask && x + mask < n) {
            if (agx_sched_add(pl, step0 + t, AGX_SOP_SEND, ranks[x + mask], &all))
                return -1;
        } else if (x >= mask && x < 2 * mask) {
            if (agx_sched_add(pl, step0 + t, AGX_SOP_RECV, ranks[x - mask], &all))
                return -1;
        }
    }
    return 0;
}

int agx_build_hierarchical(const agx_regions *R, int nl, const int *vidx, int rank, agx_sched *pl)
{
    (void)nl;
    (void)vidx;
    int g = R->region_of[rank], x = R->local[rank], m = R->size[g];
    const int *mem = R->members + R->start[g];
    int step = 0;
    agx_blockset s;
    /* 1. linear gather to the region's first rank */
    if (x > 0) {
        agx_set_clear(&s);
        agx_set_add(&s, R->start[g] + x, 1);
        if (agx_sched_add(pl, step, AGX_SOP_SEND, mem[0], &s))
            return -1;
    } else {
        for (int y = 1; y < m; y++) {
            agx_set_clear(&s);
            agx_set_add(&s, R->start[g] + y, 1);
            if (agx_sched_add(pl, step, AGX_SOP_RECV, mem[y], &s))
                return -1;
        }
    }
    step += 1;
    /* 2. Bruck among the r leaders, a region's blocks as one unit */
    int LB = agx_ceil_log2(R->r);
    if (x == 0)
        for (int t = 0; t < LB; t++) {
            int d = 1 << t, cnt = agx_bruck_count(d, R->r);
            agx_blockset snd, rcv;
            agx_set_clear(&snd);
            agx_set_clear(&rcv);
            agx_add_regions(&snd, R, g, cnt);
            agx_add_regions(&rcv, R, g + d, cnt);
            int to = agx_mod(g - d, R->r), from = agx_mod(g + d, R->r);
            if (agx_sched_add(pl, step + t, AGX_SOP_SEND, R->members[R->start[to]], &snd) ||
                agx_sched_add(pl, step + t, AGX_SOP_RECV, R->members[R->start[from]], &rcv))
                return -1;
        }
    step += LB;
    /* 3. binomial broadcast of everything in the region */
    if (local_bcast(mem, m, x, step, R->p, pl))
        return -1;
    pl->nrounds = step + agx_ceil_log2(R->max_size);
    return 0;
}

/* Virtual index of the first member of sub-block l of region g. */
static int sb_first(const agx_regions *R, const int *vidx, int nl, int g, int l)
{
    return vidx[R->members[R->start[g] + sb_start(R->size[g], nl, l)]];
}

/* Phase 2 of multileader: Bruck among the r leaders of index l; sub-blocks (g .. g+cnt-1,
 * l) are contiguous in the virtual order (wrapping at the last region). */
static int ml_leaders_bruck(const agx_regions *R, int nl, const int *vidx, int g, int l, int step,
                            agx_sched *pl)
{
    int lo = sb_first(R, vidx, nl, 0, l), hi = l + 1 < nl ? sb_first(R, vidx, nl, 0, l + 1) : R->p;
    for (int t = 0; t < agx_ceil_log2(R->r); t++) {
        int d = 1 << t, cnt = agx_bruck_count(d, R->r);
        agx_blockset set[2];
        for (int side = 0; side < 2; side++) {
            int a = agx_mod(side ? g + d : g, R->r), b = a + cnt; /* regions [a, b) */
            int va = sb_first(R, vidx, nl, a, l);
            agx_set_clear(&set[side]);
            if (b <= R->r) {
                agx_set_add(&set[side], va, (b < R->r ? sb_first(R, vidx, nl, b, l) : hi) - va);
            } else {
                agx_set_add(&set[side], va, hi - va);
                agx_set_add(&set[side], lo, sb_first(R, vidx, nl, b - R->r, l) - lo);
            }
        }
        int to = agx_mod(g - d, R->r), from = agx_mod(g + d, R->r);
        if (agx_sched_add(pl, step + t, AGX_SOP_SEND, R->members[R->start[to] + sb_start(R->size[to], nl, l)], &set[0]) ||
            agx_sched_add(pl, step + t, AGX_SOP_RECV, R->members[R->start[from] + sb_start(R->size[from], nl, l)], &set[1]))
            return -1;
    }
    return 0;
}

/* Phase 3 of multileader: Bruck among the nl leaders of region g; leader l holds the
 * index-l sub-blocks of every region, virtual [first(l), first(l+1)). */
static int ml_region_bruck(const agx_regions *R, int nl, const int *vidx, int g, int l, int step,
                           agx_sched *pl)
{
    const int *mem = R->members + R->start[g];
    int m = R->size[g];
    for (int t = 0; t < agx_ceil_log2(nl); t++) {
        int d = 1 << t, cnt = agx_bruck_count(d, nl);
        agx_blockset set[2];
        for (int side = 0; side < 2; side++) {
            int a = agx_mod(side ? l + d : l, nl);
            agx_set_clear(&set[side]);
            for (int y = 0; y < cnt; y++) {
                int ll = agx_mod(a + y, nl), va = sb_first(R, vidx, nl, 0, ll);
                agx_set_add(&set[side], va, (ll + 1 < nl ? sb_first(R, vidx, nl, 0, ll + 1) : R->p) - va);
            }
        }
        if (agx_sched_add(pl, step + t, AGX_SOP_SEND, mem[sb_start(m, nl, agx_mod(l - d, nl))], &set[0]) ||
            agx_sched_add(pl, step + t, AGX_SOP_RECV, mem[sb_start(m, nl, agx_mod(l + d, nl))], &set[1]))
            return -1;
    }
    return 0;
}

int agx_build_multileader(const agx_regions *R, int nl, const int *vidx, int rank, agx_sched *pl)
{
    nl = ml_leaders(R, nl);
    int g = R->region_of[rank], x = R->local[rank], m = R->size[g];
    const int *mem = R->members + R->start[g];
    int l = 0;
    while (x >= sb_start(m, nl, l + 1))
        l++;
    int s0 = sb_start(m, nl, l), sn = sb_start(m, nl, l + 1) - s0, xs = x - s0;
    /* virtual layout: index-l sub-blocks of all regions are contiguous, region by region */
    int step = 0, maxsb = 0;
    for (int gg = 0; gg < R->r; gg++)
        for (int ll = 0; ll < nl; ll++) {
            int n = sb_start(R->size[gg], nl, ll + 1) - sb_start(R->size[gg], nl, ll);
            if (n > maxsb) maxsb = n;
        }
    /* 1. linear gather to the sub-block's leader (its first member) */
    if (xs > 0) {
        if (agx_sched_add_range(pl, step, AGX_SOP_SEND, mem[s0], vidx[rank], 1))
            return -1;
    } else {
        for (int y = 1; y < sn; y++)
            if (agx_sched_add_range(pl, step, AGX_SOP_RECV, mem[s0 + y], vidx[mem[s0 + y]], 1))
                return -1;
    }
    step += 1;
    /* 2.-3. Bruck among the leaders of index l, then among the leaders of the region */
    int LB = agx_ceil_log2(R->r), LL = agx_ceil_log2(nl);
    if (xs == 0 && (ml_leaders_bruck(R, nl, vidx, g, l, step, pl) || ml_region_bruck(R, nl, vidx, g, l, step + LB, pl)))
        return -1;
    step += LB + LL;
    /* 4. binomial broadcast inside the sub-block */
    if (local_bcast(mem + s0, sn, xs, step, R->p, pl))
        return -1;
    pl->nrounds = step + agx_ceil_log2(maxsb);
    return 0;
}
