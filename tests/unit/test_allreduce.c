/*
 * Allreduce schedules simulated symbolically, p = 1..70: every buffer block holds the
 * expression it would hold ("(a.b)" = a (+) b with a the left operand), the engine's
 * semantics round by round (messages carry the sender's values at posting time, then the
 * round's copies and reductions in order). Checked for every schedule: each message has
 * its receive; every rank ends with every contribution exactly once; and what
 * docs/algorithms.md claims per algorithm: the same expression on every rank (so the same
 * bits), rank order kept (recursive doubling, reduce_bcast: non-commutative ops), the
 * cyclic order of dissemination and ring; dissemination's rounds and messages against
 * SharedNotify Sec. III and the sends of rank 0 in its Figures 4 (n = 7) and 5 (n = 11).
 */
#include "allreduce.h"
#include "simexpr.h"
#include "unit.h"

#include <stdlib.h>
#include <string.h>

#define MAXB 40 /* buffers */

enum { ORDER_ANY, ORDER_RANK, ORDER_CYCLIC_RANK, ORDER_CYCLIC_BLOCK };

/* Build every rank's schedule, run it, check coverage and the claims. */
static int check(const char *name, agx_build_fn build, int p, int same_expr, int order, int *rounds,
                 int *sent_max)
{
    int nb = agx_ar_nblocks(build, p), ok = 1;
    agx_sched *S = calloc((size_t)p, sizeof *S);
    world w = {.p = p, .nb = nb, .nbuf = build == agx_build_ar_dissemination ? agx_ar_dissem_nbufs(p) : 2};
    w.v = calloc((size_t)p * w.nbuf * nb, sizeof(char *));
    w.sent = calloc((size_t)p, sizeof(int));
    *rounds = 0;
    for (int r = 0; r < p; r++) {
        agx_sched_init(&S[r]);
        int n = build(&S[r], 0, r, p, 0);
        if (n < 0 || agx_sched_finish(&S[r]) || S[r].nrounds > n) {
            fprintf(stderr, "%s p=%d rank %d: build failed or used more rounds than it says\n", name, p, r);
            ok = 0;
        }
        *rounds = n > *rounds ? n : *rounds;
        for (int buf = 0; buf < w.nbuf; buf++)
            for (int b = 0; b < nb; b++) {
                char s[16];
                snprintf(s, sizeof s, buf == AGX_AR_ACC ? "%d" : "x", r);
                *cell(&w, r, buf, b) = strdup(s);
            }
    }
    if (ok && sim_expr_run(&w, S))
        ok = 0;
    int *lv = malloc(sizeof(int) * (size_t)(p + 1)), *seen = malloc(sizeof(int) * (size_t)p);
    for (int r = 0; r < p && ok; r++)
        for (int b = 0; b < nb && ok; b++) {
            const char *e = *cell(&w, r, AGX_AR_ACC, b);
            if (!once_each(e, p, lv, seen)) {
                fprintf(stderr, "%s p=%d rank %d block %d: %s is not every contribution once\n", name, p, r, b, e);
                ok = 0;
            }
            int first = order == ORDER_RANK ? 0 : order == ORDER_CYCLIC_RANK ? r + 1 : b;
            for (int i = 0; i < p && ok && order != ORDER_ANY; i++)
                if (lv[i] != (first + i) % p) {
                    fprintf(stderr, "%s p=%d rank %d block %d: %s is not in the claimed order\n", name, p, r, b, e);
                    ok = 0;
                }
            if (ok && same_expr && strcmp(e, *cell(&w, 0, AGX_AR_ACC, b))) {
                fprintf(stderr, "%s p=%d: rank %d's %s differs from rank 0's %s\n", name, p, r, e,
                        *cell(&w, 0, AGX_AR_ACC, b));
                ok = 0;
            }
        }
    *sent_max = 0;
    for (int r = 0; r < p; r++)
        *sent_max = w.sent[r] > *sent_max ? w.sent[r] : *sent_max;
    for (size_t i = 0; i < (size_t)p * w.nbuf * nb; i++)
        free(w.v[i]);
    for (int r = 0; r < p; r++)
        agx_sched_free(&S[r]);
    free(w.v), free(w.sent), free(S), free(lv), free(seen);
    return ok;
}

static int flog2(int p)
{
    int l = 0;
    while ((2 << l) <= p)
        l++;
    return l;
}

TEST(dissemination_any_p)
{
    for (int p = 1; p <= 70; p++) {
        int rounds, sent;
        ASSERT(check("dissemination", agx_build_ar_dissemination, p, 0, ORDER_CYCLIC_RANK, &rounds, &sent));
        ASSERT_EQ(rounds, flog2(p));                         /* l rounds, Sec. III */
        ASSERT_EQ(sent, flog2(p) + __builtin_popcount(p) - 1); /* l steps + one per c_j, j < l */
    }
}

/* Rank 0's destinations per round. */
static void sends_of_rank0(int p, int dest[][2], int *nrounds)
{
    agx_sched s;
    agx_sched_init(&s);
    *nrounds = agx_build_ar_dissemination(&s, 0, 0, p, 0);
    agx_sched_finish(&s);
    for (int t = 0; t < *nrounds; t++)
        dest[t][0] = dest[t][1] = -1;
    for (int i = 0; i < s.n; i++)
        if (s.ops[i].kind == AGX_SOP_SEND)
            dest[s.ops[i].round][dest[s.ops[i].round][0] >= 0] = s.ops[i].peer;
    agx_sched_free(&s);
}

TEST(dissemination_figures_4_5)
{
    int d[8][2], n;
    sends_of_rank0(7, d, &n); /* 7 = 4 + 2 + 1: P_0 to 0 + 4 + 2, P_1 to 0 + 4 */
    ASSERT_EQ(n, 2);
    ASSERT(d[0][0] == 1 && d[0][1] == 6);
    ASSERT(d[1][0] == 2 && d[1][1] == 4);
    sends_of_rank0(11, d, &n); /* 11 = 8 + 2 + 1: P_0 to 8 + 2, P_1 to 8 */
    ASSERT_EQ(n, 3);
    ASSERT(d[0][0] == 1 && d[0][1] == 10);
    ASSERT(d[1][0] == 2 && d[1][1] == 8);
    ASSERT(d[2][0] == 4 && d[2][1] == -1);
}

TEST(recursive_doubling_any_p)
{
    for (int p = 1; p <= 70; p++) {
        int rounds, sent, p2 = agx_floor_pow2(p), L = flog2(p2);
        ASSERT(check("recursive_doubling", agx_build_ar_recursive_doubling, p, 1, ORDER_RANK, &rounds, &sent));
        ASSERT_EQ(rounds, p == 1 ? 0 : L + (p > p2 ? 2 : 0));
        ASSERT_EQ(sent, L + (p > p2 ? 1 : 0));
    }
}

TEST(reduce_bcast_any_p)
{
    for (int p = 1; p <= 70; p++) {
        int rounds, sent;
        ASSERT(check("reduce_bcast", agx_build_ar_reduce_bcast, p, 1, ORDER_RANK, &rounds, &sent));
        ASSERT_EQ(rounds, 2 * (p > 1 ? flog2(2 * p - 1) : 0));
    }
}

TEST(ring_any_p)
{
    for (int p = 1; p <= 70; p++) {
        int rounds, sent;
        ASSERT(check("ring", agx_build_ar_ring, p, 1, ORDER_CYCLIC_BLOCK, &rounds, &sent));
        ASSERT_EQ(rounds, 2 * (p - 1));
        ASSERT_EQ(sent, 2 * (p - 1));
    }
}

TEST(rabenseifner_any_p)
{
    for (int p = 1; p <= 70; p++) {
        int rounds, sent, p2 = agx_floor_pow2(p), L = flog2(p2);
        ASSERT(check("rabenseifner", agx_build_ar_rabenseifner, p, 1, ORDER_ANY, &rounds, &sent));
        ASSERT_EQ(rounds, p == 1 ? 0 : 2 * L + (p > p2 ? 2 : 0));
        ASSERT_EQ(sent, 2 * L + (p > p2 ? 1 : 0));
    }
}

/* dissemination_node over regions of the given sizes (consecutive ranks) with nl lanes:
 * every rank ends with every contribution once in every block, the same expression as
 * the rest of its region; lanes touch only their own block of the window buffers; l + 2
 * rounds; per rank (nl - 1) + (l + popcount(R) - 1) + (L - 1) messages for a lane, nl
 * for the others (round 0's blocks to the other lanes). */
static int check_node_ex(const int *sizes, int nr, int nl, int radix);
static int check_node(const int *sizes, int nr, int nl) { return check_node_ex(sizes, nr, nl, 0); }

/* Rounds of dissemination_radix: 1 + 2 (m + (d_m > 1)) for R > 1 regions in base k. */
static int radix_rounds(int R, int k, int maxsz)
{
    if (R == 1)
        return maxsz > 1;
    int m = 0, top = R;
    while (top >= k)
        top /= k, m++;
    return 1 + 2 * (m + (top > 1));
}

/* nl: lanes (dissemination_node) or the radix k (dissemination_radix). */
static int check_node_ex(const int *sizes, int nr, int nl, int radix)
{
    int p = 0, ok = 1;
    for (int g = 0; g < nr; g++)
        p += sizes[g];
    int *label = malloc(sizeof(int) * (size_t)p);
    for (int g = 0, r = 0; g < nr; g++)
        for (int i = 0; i < sizes[g]; i++)
            label[r++] = g;
    agx_regions R;
    if (agx_regions_init(&R, p, label))
        return 0;
    agx_sched *S = calloc((size_t)p, sizeof *S);
    world w = {.p = p, .nb = radix ? 1 : nl, .nbuf = radix ? agx_ar_radix_nbufs(&R, nl) : agx_ar_node_nbufs(&R)};
    w.v = calloc((size_t)p * w.nbuf * w.nb, sizeof(char *));
    w.sent = calloc((size_t)p, sizeof(int));
    int l = flog2(nr), rounds = 0;
    for (int r = 0; r < p; r++) {
        agx_sched_init(&S[r]);
        ok &= !(radix ? agx_build_ar_dissemination_radix : agx_build_ar_dissemination_node)(&R, nl, NULL, r, &S[r]) &&
              !agx_sched_finish(&S[r]);
        rounds = S[r].nrounds > rounds ? S[r].nrounds : rounds;
        for (int i = 0; i < S[r].n && !radix; i++) /* windows: a lane's own block only */
            for (int b = 0; b < nl; b++) {
                const agx_sop *o = &S[r].ops[i];
                int touches = agx_sop_has(&S[r], o, b) && (o->buf >= AGX_AR_TMP ||
                              ((o->kind == AGX_SOP_COPY || o->kind == AGX_SOP_REDUCE) && o->src >= AGX_AR_TMP));
                if (touches && b != R.local[r]) {
                    fprintf(stderr, "dissemination_node: rank %d touches block %d of window %d\n", r, b, o->buf);
                    ok = 0;
                }
            }
        for (int buf = 0; buf < w.nbuf; buf++)
            for (int b = 0; b < w.nb; b++) {
                char c[16];
                snprintf(c, sizeof c, buf == AGX_AR_ACC ? "%d" : "x", r);
                *cell(&w, r, buf, b) = strdup(c);
            }
    }
    /* round 0 and l + 1 only where a region has two ranks */
    int want_rounds = radix ? radix_rounds(nr, nl, R.max_size) : p == 1 ? 0 : R.max_size > 1 ? l + 2 : l + 1;
    ok = ok && sim_expr_run(&w, S) == 0 && rounds == want_rounds;
    if (rounds != want_rounds)
        fprintf(stderr, "%d rounds, expected %d\n", rounds, want_rounds);
    int *lv = malloc(sizeof(int) * (size_t)(p + 1)), *seen = malloc(sizeof(int) * (size_t)p);
    for (int r = 0; r < p && ok; r++) {
        int g = R.region_of[r], me = R.local[r], lead = R.members[R.start[g]];
        int want = me < nl ? (nl - 1) + (nr > 1 ? l + __builtin_popcount(nr) - 1 : 0) + (sizes[g] - 1) : nl;
        if (!radix && w.sent[r] != want) {
            fprintf(stderr, "dissemination_node: rank %d sent %d messages, expected %d\n", r, w.sent[r], want);
            ok = 0;
        }
        for (int b = 0; b < w.nb && ok; b++) {
            const char *e = *cell(&w, r, AGX_AR_ACC, b);
            ok &= once_each(e, p, lv, seen) && !strcmp(e, *cell(&w, lead, AGX_AR_ACC, b));
            if (!ok)
                fprintf(stderr, "dissemination_node: rank %d block %d holds %s\n", r, b, e);
        }
    }
    if (!ok)
        fprintf(stderr, "dissemination_node: %d regions (first %d ranks), %d lanes failed\n", nr, sizes[0], nl);
    for (size_t i = 0; i < (size_t)p * w.nbuf * w.nb; i++)
        free(w.v[i]);
    for (int r = 0; r < p; r++)
        agx_sched_free(&S[r]);
    free(w.v), free(w.sent), free(S), free(lv), free(seen), free(label);
    agx_regions_free(&R);
    return ok;
}

TEST(dissemination_node_regions)
{
    int sizes[16];
    for (int L = 1; L <= 5; L++) /* equal regions: 1..17 nodes, every lane count */
        for (int nr = 1; nr <= 17; nr++)
            for (int nl = 1; nl <= L; nl++) {
                for (int g = 0; g < nr; g++)
                    sizes[g] = L;
                ASSERT(check_node(sizes, nr, nl));
            }
    static const int uneven[][6] = {{3, 2, 4, 0}, {1, 1, 1, 0}, {5, 3, 3, 2, 0}, {2, 7, 0}, {4, 4, 4, 4, 3, 0}};
    for (size_t u = 0; u < sizeof uneven / sizeof uneven[0]; u++) {
        int nr = 0, mn = 1 << 20;
        while (uneven[u][nr])
            mn = uneven[u][nr] < mn ? uneven[u][nr] : mn, nr++;
        for (int nl = 1; nl <= mn; nl++)
            ASSERT(check_node(uneven[u], nr, nl));
    }
}

TEST(dissemination_radix_regions)
{
    int sizes[200];
    for (int L = 1; L <= 5; L++) /* equal regions, 1..150 nodes, radix 2..max(2, L) */
        for (int nr = 1; nr <= 150; nr += nr < 40 ? 1 : 7)
            for (int k = 2; k <= (L > 2 ? L : 2); k++) {
                for (int g = 0; g < nr; g++)
                    sizes[g] = L;
                ASSERT(check_node_ex(sizes, nr, k, 1));
            }
    static const int uneven[][6] = {{3, 2, 4, 0}, {1, 1, 1, 0}, {5, 3, 3, 2, 0}, {2, 7, 0}, {4, 4, 4, 4, 3, 0}};
    for (size_t u = 0; u < sizeof uneven / sizeof uneven[0]; u++) {
        int nr = 0;
        while (uneven[u][nr])
            nr++;
        for (int k = 2; k <= 4; k++)
            ASSERT(check_node_ex(uneven[u], nr, k, 1));
    }
}

/* One rank's messages in order: "kind peer share" per send or receive, the rounds
 * numbered densely (a builder may leave a round empty), share the vector's blocks moved
 * in units of 1/nb. */
static void messages(const agx_sched *s, int nb, char *out, size_t cap)
{
    int last = -1, k = -1;
    size_t n = 0;
    out[0] = 0;
    for (int i = 0; i < s->n && n < cap; i++) {
        const agx_sop *o = &s->ops[i];
        if (o->kind != AGX_SOP_SEND && o->kind != AGX_SOP_RECV)
            continue;
        int blocks = 0;
        for (int b = 0; b < nb; b++)
            blocks += agx_sop_has(s, o, b);
        k += o->round != last, last = o->round;
        n += (size_t)snprintf(out + n, cap - n, "%d:%s%d:%d/%d ", k, o->kind == AGX_SOP_SEND ? ">" : "<", o->peer,
                              blocks, nb);
    }
}

/* On 2 ranks dissemination_node sends what dissemination sends (two regions of one rank),
 * reduce_bcast (one region, one lane) or rabenseifner (one region, two lanes): the table's
 * same_on_two, on which the on-line choice times one of them (src/select/adapt.c). */
TEST(dissemination_node_on_two)
{
    static const struct {
        int label[2], nl;
        agx_build_fn flat;
    } c[] = {{{0, 1}, 1, agx_build_ar_dissemination}, {{0, 0}, 1, agx_build_ar_reduce_bcast},
             {{0, 0}, 2, agx_build_ar_rabenseifner}};
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        agx_regions R;
        ASSERT(!agx_regions_init(&R, 2, c[i].label));
        for (int r = 0; r < 2; r++) {
            agx_sched a, b;
            char ma[256], mb[256];
            agx_sched_init(&a), agx_sched_init(&b);
            ASSERT(!agx_build_ar_dissemination_node(&R, c[i].nl, NULL, r, &a) && !agx_sched_finish(&a));
            ASSERT(c[i].flat(&b, 0, r, 2, 0) >= 0 && !agx_sched_finish(&b));
            messages(&a, c[i].nl, ma, sizeof ma);
            messages(&b, agx_ar_nblocks(c[i].flat, 2), mb, sizeof mb);
            if (strcmp(ma, mb))
                fprintf(stderr, "case %zu rank %d: dissemination_node %s, the other %s\n", i, r, ma, mb);
            ASSERT(ma[0] && !strcmp(ma, mb));
            agx_sched_free(&a), agx_sched_free(&b);
        }
        agx_regions_free(&R);
    }
}

UNIT_MAIN()
