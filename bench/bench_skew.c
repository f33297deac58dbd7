/*
 * Arrival skew and noise before each timed call (--skew, --noise; bench.h).
 *
 * Every rank draws the whole iteration's pattern from the same seed, so each knows every
 * other rank's delay (hence the latest arrival) without a message, and every run and every
 * algorithm of a run sees the same patterns. Patterns (DIST:MAX[:SEED], MAX in us):
 *   random   each rank U(0, MAX), per iteration: Proficz21 Listing 4's mini-benchmark
 *   uniform  arrivals evenly spread over [0, MAX]: the rank at position k of the
 *            iteration's rotation arrives k MAX / (p-1) late (Faraj08's "uniform" PAP)
 *   one      one rank, drawn per iteration, MAX late; the others at 0
 *   several  ceil(p/8) ranks, evenly spaced from a drawn one, MAX late
 * --noise RATE:US[:SEED]: independently per rank and iteration, with probability RATE an
 * OS-noise-like detour of US us on top of the skew.
 * The delay is computation: real MPI spins on MPI_Wtime; SMPI charges it as simulated
 * time (nanosleep advances the simulated clock by exactly the delay, as bench_start).
 */
#include "bench.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const char *const bench_skew_names[BENCH_SKEW_N] = {"none", "random", "uniform", "one", "several"};

/* A draw in [0, 1) for (seed, iteration, rank, salt). */
static double draw(unsigned seed, int it, int r, int salt)
{
    unsigned long long h = bench_mix64(((unsigned long long)seed << 40) ^ ((unsigned long long)(unsigned)it << 20) ^
                                       (unsigned long long)(unsigned)r ^ ((unsigned long long)salt << 60));
    return (double)(h >> 11) * 0x1.0p-53;
}

/* "A:B[:SEED]": two numbers (the first a name for --skew) and an optional seed. */
static int split3(const char *v, char *a, size_t alen, double *b, unsigned *seed)
{
    const char *c1 = strchr(v, ':');
    if (!c1 || (size_t)(c1 - v) >= alen)
        return -1;
    memcpy(a, v, (size_t)(c1 - v));
    a[c1 - v] = 0;
    char *end;
    *b = strtod(c1 + 1, &end);
    if (end == c1 + 1 || !isfinite(*b) || *b < 0 || *b > 1e9)
        return -1;
    if (*end == 0)
        return 0;
    if (*end != ':' || !end[1])
        return -1;
    char *e2;
    unsigned long s = strtoul(end + 1, &e2, 10);
    if (*e2 || s > 0xffffffffUL || end[1] == '-')
        return -1;
    *seed = (unsigned)s;
    return 0;
}

int bench_skew_opt(int noise, const char *v, bench_skew *s, char *err, size_t errlen)
{
    char a[32];
    double x;
    unsigned seed = s->seed;
    if (!noise && !strcmp(v, "none")) {
        s->dist = BENCH_SKEW_NONE;
        return 0;
    }
    if (split3(v, a, sizeof a, &x, &seed))
        return snprintf(err, errlen, noise ? "--noise %s: RATE:US[:SEED] (RATE in [0, 1], US >= 0)"
                                           : "--skew %s: DIST:MAX_US[:SEED], DIST random, uniform, one or several",
                        v), -1;
    s->seed = seed;
    if (noise) {
        char *end;
        double rate = strtod(a, &end);
        if (*end || end == a || !(rate >= 0 && rate <= 1))
            return snprintf(err, errlen, "--noise %s: RATE must be in [0, 1]", v), -1;
        s->noise_rate = rate;
        s->noise_us = x;
        return 0;
    }
    for (s->dist = 1; s->dist < BENCH_SKEW_N && strcmp(a, bench_skew_names[s->dist]); s->dist++)
        ;
    if (s->dist == BENCH_SKEW_N)
        return snprintf(err, errlen, "--skew %s: DIST random, uniform, one or several", v), -1;
    s->max_us = x;
    return 0;
}

void bench_skew_usage(FILE *f)
{
    fprintf(f, "  --skew D:MAX[:SEED]  arrival skew before each call, MAX us (seed 1): random (U(0,MAX)\n"
               "                per rank, Proficz21), uniform (evenly spread), one (one rank late),\n"
               "                several (p/8 late); times are then from the latest arrival\n"
               "  --noise R:US[:SEED]  per rank and call, with probability R a detour of US us\n");
}

void bench_skew_text(const bench_skew *s, char *buf, size_t len)
{
    int n = snprintf(buf, len, "skew=%s", bench_skew_names[s->dist]);
    if (s->dist && n >= 0 && (size_t)n < len)
        n += snprintf(buf + n, len - (size_t)n, ":%gus", s->max_us);
    if (s->noise_rate > 0 && n >= 0 && (size_t)n < len)
        n += snprintf(buf + n, len - (size_t)n, " noise=%g:%gus", s->noise_rate, s->noise_us);
    if ((s->dist || s->noise_rate > 0) && n >= 0 && (size_t)n < len)
        snprintf(buf + n, len - (size_t)n, " seed=%u", s->seed);
}

/* Rank r's delay in iteration it, in seconds. */
static double delay_of(const bench_skew *s, int it, int r, int p)
{
    double d = 0, m = s->max_us * 1e-6;
    int off = (int)(draw(s->seed, it, -1, 1) * p), pos = ((r - off) % p + p) % p;
    switch (s->dist) {
    case BENCH_SKEW_RANDOM: d = draw(s->seed, it, r, 2) * m; break;
    case BENCH_SKEW_UNIFORM: d = p > 1 ? m * pos / (p - 1) : 0; break;
    case BENCH_SKEW_ONE: d = pos == 0 ? m : 0; break;
    case BENCH_SKEW_SEVERAL: {
        int k = (p + 7) / 8, gap = p / k; /* k late ranks, gap apart */
        d = pos % gap == 0 && pos / gap < k ? m : 0;
        break;
    }
    default: break;
    }
    if (s->noise_rate > 0 && draw(s->seed, it, r, 3) < s->noise_rate)
        d += s->noise_us * 1e-6;
    return d;
}

void bench_compute_until(double t)
{
    double d = t - MPI_Wtime();
    if (d <= 0)
        return;
#ifdef SMPI_H
    struct timespec ts = {(time_t)d, (long)((d - (double)(time_t)d) * 1e9)};
    nanosleep(&ts, NULL);
#else
    while (MPI_Wtime() < t)
        ;
#endif
}

double bench_skew_wait(const bench_skew *s, int it, int rank, int p, double t0)
{
    if (!s->dist && !(s->noise_rate > 0))
        return 0;
    double mine = 0, last = 0;
    for (int r = 0; r < p; r++) {
        double d = delay_of(s, it, r, p);
        last = d > last ? d : last;
        if (r == rank)
            mine = d;
    }
    bench_compute_until(t0 + mine);
    return last;
}
