/*
 * The BDR schedule (Proficz21, Listing 2) simulated without MPI, for p = 1..48 and many
 * arrival patterns (equal, one late, one early, random, adversarial: huge omega/tau,
 * tau 0, NaN). Checked for every process: it ends with every segment exactly once; it
 * receives at most once and sends at most once per step; it sends a segment only at a
 * step after it got it (its own from its predicted arrival step on); sends and receives
 * pair up (same step, peer, segment); exactly p(p-1) transfers. Plus: equal arrivals
 * give the plain ring, and Figure 4's example (process 0 late by 2 tau, p = 4).
 */
#include "bdr.h"
#include "patterns.h"
#include "simsched.h"
#include "unit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* 1 when the schedule is valid; prints the first violation otherwise. */
static int check(const agx_bdr_sched *s, int p)
{
    int ok = 1;
    int *got = malloc(sizeof(int) * (size_t)(p * p)); /* got[r*p+g]: step r got g, -1 own */
    int *rstep = malloc(sizeof(int) * (size_t)p), *sstep = malloc(sizeof(int) * (size_t)p);
    for (int k = 0; k < p * p; k++)
        got[k] = -2;
    for (int r = 0; r < p; r++)
        got[r * p + r] = -1;
    long long total = 0;
    for (int r = 0; r < p && ok; r++) {
        int last = -1;
        for (int k = s->roff[r]; k < s->roff[r + 1] && ok; k++) {
            const agx_bdr_op *o = &s->recvs[k];
            CHECKF(o->step > last, ok, "p=%d: rank %d receives twice in step %d or out of order", p, r, o->step);
            CHECKF(o->step < s->nsteps, ok, "p=%d: step %d beyond nsteps %d", p, o->step, s->nsteps);
            CHECKF(got[r * p + o->seg] == -2, ok, "p=%d: rank %d receives segment %d twice", p, r, o->seg);
            got[r * p + o->seg] = o->step;
            last = o->step;
            total++;
        }
        last = -1;
        for (int k = s->soff[r]; k < s->soff[r + 1] && ok; k++) {
            const agx_bdr_op *o = &s->sends[k];
            CHECKF(o->step > last, ok, "p=%d: rank %d sends twice in step %d or out of order", p, r, o->step);
            last = o->step;
        }
    }
    /* availability and pairing */
    for (int r = 0; r < p && ok; r++) {
        for (int k = s->soff[r]; k < s->soff[r + 1] && ok; k++) {
            const agx_bdr_op *o = &s->sends[k];
            int have = got[r * p + o->seg];
            CHECKF(have != -2 && have < o->step, ok,
                   "p=%d: rank %d sends segment %d at step %d before having it (%d)", p, r, o->seg, o->step, have);
            if (o->seg == r)
                CHECKF(o->step >= s->arrive_step[r], ok,
                       "p=%d: rank %d sends its own segment at step %d before its arrival step %d", p, r,
                       o->step, s->arrive_step[r]);
            int found = 0;
            for (int j = s->roff[o->peer]; j < s->roff[o->peer + 1]; j++) {
                const agx_bdr_op *q = &s->recvs[j];
                found |= q->step == o->step && q->peer == r && q->seg == o->seg;
            }
            CHECKF(found, ok, "p=%d: send %d->%d of %d at %d has no receive", p, r, o->peer, o->seg, o->step);
        }
    }
    for (int k = 0; k < p * p && ok; k++)
        CHECKF(got[k] != -2, ok, "p=%d: rank %d never gets segment %d", p, k / p, k % p);
    CHECKF(!ok || total == (long long)p * (p - 1), ok, "p=%d: %lld transfers", p, total);
    CHECKF(!ok || s->soff[p] == s->roff[p], ok, "p=%d: sends %d != receives %d", p, s->soff[p], s->roff[p]);
    free(got), free(rstep), free(sstep);
    return ok;
}

static int build_check(int p, const double *arr, double tau)
{
    agx_bdr_sched s;
    if (agx_bdr_build(p, arr, tau, &s))
        return 0;
    int ok = check(&s, p);
    agx_bdr_free(&s);
    return ok;
}

TEST(equal_arrivals_are_the_ring)
{
    for (int p = 1; p <= 33; p++) {
        double *arr = calloc((size_t)p, sizeof(double));
        agx_bdr_sched s;
        ASSERT(agx_bdr_build(p, arr, 1.0, &s) == 0);
        ASSERT(check(&s, p));
        ASSERT_EQ(s.ring0, 0);
        ASSERT_EQ(s.nsteps, p - 1);
        for (int r = 0; r < p; r++) {
            ASSERT_EQ(s.soff[r + 1] - s.soff[r], p - 1);
            agx_sched ring;
            agx_sched_init(&ring);
            ASSERT(agx_build_ring(&ring, 0, r, p, 0) >= 0 && agx_sched_finish(&ring) == 0);
            for (int j = 0; j < p - 1; j++) {
                const agx_sop *send = &ring.ops[2 * j];
                const agx_bdr_op *o = &s.sends[s.soff[r] + j];
                ASSERT_EQ(send->kind, AGX_SOP_SEND);
                ASSERT_EQ(o->step, j);
                ASSERT_EQ(o->peer, send->peer);
                ASSERT(agx_sop_has(&ring, send, o->seg));
            }
            agx_sched_free(&ring);
        }
        agx_bdr_free(&s);
        free(arr);
    }
}

/* Figure 4(b): p = 4, process 0 arrives 2 tau late. Processes 1-3 disseminate in two
 * pre-steps; 0 receives segments 1 and 2 before it arrives and finishes one step after
 * its arrival (e_0 = tau), against 3 tau in the plain ring. */
TEST(figure4_example)
{
    double arr[4] = {2.0, 0.0, 0.0, 0.0};
    agx_bdr_sched s;
    ASSERT(agx_bdr_build(4, arr, 1.0, &s) == 0);
    ASSERT(check(&s, 4));
    ASSERT_EQ(s.max_psno, 2);
    ASSERT_EQ(s.ring0, 2);
    ASSERT_EQ(s.npre_xfers, 6);
    ASSERT_EQ(s.prev_sent[0], 0);
    for (int r = 1; r < 4; r++)
        ASSERT_EQ(s.prev_sent[r], 2);
    /* rank 0: receives 1 and 2 in the pre-steps, one receive and one send after */
    ASSERT_EQ(s.roff[1] - s.roff[0], 3);
    ASSERT_EQ(s.recvs[s.roff[0]].seg, 1);
    ASSERT_EQ(s.recvs[s.roff[0] + 1].seg, 2);
    ASSERT_EQ(s.recvs[s.roff[0] + 2].step, 2);
    ASSERT_EQ(s.soff[1] - s.soff[0], 1);
    ASSERT_EQ(s.sends[s.soff[0]].step, 2);
    ASSERT_EQ(agx_bdr_first_send(&s, 0), 2);
    /* whole collective: 5 steps, as the ring's 2 waiting + 3 */
    ASSERT_EQ(s.nsteps, 5);
    agx_bdr_free(&s);
}

static unsigned long long rng = 88172645463325252ull;
static double urand(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}

TEST(random_arrivals)
{
    for (int p = 1; p <= 48; p++)
        for (int t = 0; t < 12; t++) {
            double arr[48], tau = 0.05 + urand();
            for (int q = 0; q < p; q++)
                arr[q] = t % 3 == 0 ? floor(urand() * 6) : urand() * 10.0; /* ties and spread */
            ASSERT(build_check(p, arr, tau));
        }
}

TEST(one_late_one_early)
{
    for (int p = 2; p <= 40; p++)
        for (int who = 0; who < p; who += (p > 8 ? 5 : 1)) {
            double late[40], early[40];
            for (int q = 0; q < p; q++) {
                late[q] = q == who ? 100.0 : 0.0;
                early[q] = q == who ? 0.0 : 100.0;
            }
            agx_bdr_sched s;
            ASSERT(agx_bdr_build(p, late, 1.0, &s) == 0);
            ASSERT(check(&s, p));
            /* the late process receives everything before it arrives and then only sends
             * its own segment along the ring: p-1 hops, one per step */
            ASSERT_EQ(agx_bdr_first_send(&s, who), s.arrive_step[who]);
            for (int k = s.roff[who]; k < s.roff[who + 1]; k++)
                ASSERT(s.recvs[k].step < s.arrive_step[who]);
            agx_bdr_free(&s);
            ASSERT(build_check(p, early, 1.0));
        }
}

/* Adversarial inputs: omega/tau enormous (psNo clamped; building must stay fast because
 * unproductive pre-steps are skipped), tau zero or negative, NaN and infinite arrivals. */
TEST(adversarial_inputs)
{
    for (int p = 1; p <= 64; p += 9) {
        double arr[64];
        for (int q = 0; q < p; q++)
            arr[q] = q % 2 ? 1e9 : 0.0;
        ASSERT(build_check(p, arr, 1e-12));
        ASSERT(build_check(p, arr, 0.0));
        ASSERT(build_check(p, arr, -1.0));
        ASSERT(build_check(p, arr, NAN));
        arr[0] = NAN;
        ASSERT(build_check(p, arr, 1.0));
        arr[0] = INFINITY;
        ASSERT(build_check(p, arr, 1.0));
    }
    /* one process per arrival step, far apart: skipping keeps this cheap */
    double arr[200];
    for (int q = 0; q < 200; q++)
        arr[q] = q * 1e6;
    ASSERT(build_check(200, arr, 1.0));
}


/* The foreground schedules of all ranks (nothing done in the background) form a valid
 * schedule in the common format: every segment arrives exactly once. */
TEST(foreground_schedules)
{
    unsigned seed = 11;
    for (int p = 1; p <= 24; p++)
        for (int trial = 0; trial < 4; trial++) {
            double arr[24];
            for (int q = 0; q < p; q++) {
                seed = seed * 1103515245u + 12345u;
                arr[q] = trial == 0 ? 0 : (double)((seed >> 16) % 50);
            }
            agx_bdr_sched s;
            ASSERT(agx_bdr_build(p, arr, 1.0, &s) == 0);
            agx_sched *S = calloc((size_t)p, sizeof(agx_sched));
            unsigned char *has = calloc((size_t)p * p + 1, 1);
            for (int r = 0; r < p; r++) {
                agx_sched_init(&S[r]);
                ASSERT(agx_bdr_foreground(&s, r, 0, 16, 1000, &S[r]) == 0);
                has[r * p + r] = 1;
            }
            sim_counts c;
            ASSERT(sim_run("bdr", S, p, has, 1, NULL, &c));
            ASSERT_EQ(c.msgs_total, p * (p - 1));
            for (int r = 0; r < p; r++)
                agx_sched_free(&S[r]);
            free(S), free(has);
            agx_bdr_free(&s);
        }
}

UNIT_MAIN()
