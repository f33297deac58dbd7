/*
 * BDR schedule (Proficz21, Listing 2, lines 21-45).
 *
 * Pre-steps (lines 22-33): psNo_q = floor((max_r a_r - a_q) / tau) is the number of
 * steps process q is predicted to be in the collective before the last one arrives; q
 * may send from pre-step S - psNo_q on (S = max psNo). At each pre-step the processes
 * are visited slowest first (arrival descending, rank ascending on ties); process r
 * sends its own segment to rc = r - 1 - prevSent_r (mod P) when it has arrived, has a
 * process left to send to, and rc receives nothing else in that step.
 * Ring (lines 34-45): from step S on, process i sends segment i - j to i + 1 at step
 * S + j while prevSent_seg + j < P - 1, so each segment makes exactly the hops the
 * pre-steps left.
 *
 * Choices where the paper is silent (docs/algorithms.md):
 *  - psNo is clamped to 2^24 so step numbers fit an int whatever omega/tau is;
 *  - pre-steps in which no arrived process has a segment left to send are skipped up to
 *    the next arrival (they would be empty), so building costs O(S'.P + P^2) with S' the
 *    productive pre-steps, independent of omega/tau;
 *  - empty steps are then removed by renumbering the used steps 0, 1, 2, ...
 */
#include "bdr.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define BDR_MAX_PSNO (1 << 24)

typedef struct {
    int step, from, to, seg;
} xfer;

typedef struct {
    double a;
    int rank;
} arrival_rank;

static int by_arrival(const void *x, const void *y)
{
    const arrival_rank *u = x, *v = y;
    if (u->a != v->a)
        return u->a < v->a ? -1 : 1;
    return u->rank - v->rank;
}

int agx_order_by_arrival(int n, const double *arrival, int descending, int *order)
{
    arrival_rank *ar = malloc(sizeof(arrival_rank) * (size_t)(n > 0 ? n : 1));
    if (!ar)
        return -1;
    for (int q = 0; q < n; q++)
        ar[q] = (arrival_rank){descending ? -arrival[q] : arrival[q], q};
    qsort(ar, (size_t)n, sizeof(arrival_rank), by_arrival);
    for (int q = 0; q < n; q++)
        order[q] = ar[q].rank;
    free(ar);
    return 0;
}

static int by_int(const void *x, const void *y)
{
    int a = *(const int *)x, b = *(const int *)y;
    return (a > b) - (a < b);
}

/* Compressed index of original step `at`: the number of used steps before it. */
static int used_before(const int *steps, int m, int at)
{
    int lo = 0, hi = m;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (steps[mid] < at)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

void agx_bdr_free(agx_bdr_sched *s)
{
    free(s->psno);
    free(s->prev_sent);
    free(s->arrive_step);
    free(s->sends);
    free(s->recvs);
    free(s->soff);
    free(s->roff);
    memset(s, 0, sizeof *s);
}

/* psNo from the arrivals; all zero when the inputs cannot give pre-steps. */
static void presteps(int p, const double *arrival, double tau, int *psno)
{
    double amax = -INFINITY;
    int ok = tau > 0 && isfinite(tau);
    for (int q = 0; q < p && ok; q++) {
        ok = isfinite(arrival[q]);
        if (arrival[q] > amax)
            amax = arrival[q];
    }
    for (int q = 0; q < p; q++) {
        double n = ok ? floor((amax - arrival[q]) / tau) : 0.0;
        psno[q] = n < 0 ? 0 : n > BDR_MAX_PSNO ? BDR_MAX_PSNO : (int)n;
    }
}

/* The pre-step loop; appends transfers to xf, returns their number. */
static int pre_loop(int p, const int *psno, int maxps, const int *pa, int *prev_sent, int *busy,
                    xfer *xf)
{
    int n = 0;
    for (int q = 0; q < p; q++)
        busy[q] = -1;
    for (int s = 0; s < maxps;) {
        int pending = 0;
        for (int k = 0; k < p; k++) {
            int r = pa[k];
            if (psno[r] < maxps - s || prev_sent[r] >= p - 1)
                continue;
            int rc = ((r - 1 - prev_sent[r]) % p + p) % p;
            if (busy[rc] == s) {
                pending = 1;
                continue;
            }
            busy[rc] = s;
            xf[n++] = (xfer){s, r, rc, r};
            if (++prev_sent[r] < p - 1)
                pending = 1;
        }
        if (pending) {
            s++;
            continue;
        }
        /* nobody who has arrived has anything left: jump to the next arrival */
        int next = maxps;
        for (int q = 0; q < p; q++) {
            int at = maxps - psno[q];
            if (at > s && at < next)
                next = at;
        }
        s = next;
    }
    return n;
}

int agx_bdr_first_send(const agx_bdr_sched *s, int r)
{
    return s->soff[r + 1] > s->soff[r] ? s->sends[s->soff[r]].step : s->nsteps;
}

/* Renumber the used steps 0, 1, ... (steps: room for n ints). */
static void compress(agx_bdr_sched *s, xfer *xf, int n, int *steps, int maxps)
{
    int nu = 0, p = s->p;
    for (int k = 0; k < n; k++)
        steps[nu++] = xf[k].step;
    qsort(steps, (size_t)nu, sizeof(int), by_int);
    int m = 0;
    for (int k = 0; k < nu; k++)
        if (m == 0 || steps[m - 1] != steps[k])
            steps[m++] = steps[k];
    s->nsteps = m;
    for (int k = 0; k < n; k++) {
        int *hit = bsearch(&xf[k].step, steps, (size_t)m, sizeof(int), by_int);
        xf[k].step = (int)(hit - steps);
    }
    for (int q = 0; q < p; q++)
        s->arrive_step[q] = used_before(steps, m, maxps - s->psno[q]);
    s->ring0 = used_before(steps, m, maxps);
}

/* Per-process lists; creation order is already step order for each process. */
static void fill_lists(agx_bdr_sched *s, const xfer *xf, int n, int *sfill, int *rfill)
{
    int p = s->p;
    for (int k = 0; k < n; k++) {
        s->soff[xf[k].from + 1]++;
        s->roff[xf[k].to + 1]++;
    }
    for (int q = 0; q < p; q++) {
        s->soff[q + 1] += s->soff[q];
        s->roff[q + 1] += s->roff[q];
    }
    memcpy(sfill, s->soff, sizeof(int) * (size_t)p);
    memcpy(rfill, s->roff, sizeof(int) * (size_t)p);
    for (int k = 0; k < n; k++) {
        s->sends[sfill[xf[k].from]++] = (agx_bdr_op){xf[k].step, xf[k].to, xf[k].seg};
        s->recvs[rfill[xf[k].to]++] = (agx_bdr_op){xf[k].step, xf[k].from, xf[k].seg};
    }
}

int agx_bdr_build(int p, const double *arrival, double tau, agx_bdr_sched *s)
{
    memset(s, 0, sizeof *s);
    s->p = p;
    long long nx = (long long)p * (p - 1);
    s->psno = malloc(sizeof(int) * (size_t)p);
    s->prev_sent = calloc((size_t)p, sizeof(int));
    s->arrive_step = malloc(sizeof(int) * (size_t)p);
    s->soff = calloc((size_t)p + 1, sizeof(int));
    s->roff = calloc((size_t)p + 1, sizeof(int));
    s->sends = malloc(sizeof(agx_bdr_op) * (size_t)(nx > 0 ? nx : 1));
    s->recvs = malloc(sizeof(agx_bdr_op) * (size_t)(nx > 0 ? nx : 1));
    xfer *xf = malloc(sizeof(xfer) * (size_t)(nx > 0 ? nx : 1));
    int *pa = malloc(sizeof(int) * (size_t)p), *busy = malloc(sizeof(int) * (size_t)p);
    int *steps = malloc(sizeof(int) * (size_t)(nx + p > 0 ? nx + p : 1));
    if (!s->psno || !s->prev_sent || !s->arrive_step || !s->soff || !s->roff || !s->sends ||
        !s->recvs || !xf || !pa || !busy || !steps) {
        free(xf), free(pa), free(busy), free(steps);
        agx_bdr_free(s);
        return -1;
    }
    presteps(p, arrival, tau, s->psno);
    int maxps = 0;
    for (int q = 0; q < p; q++) {
        pa[q] = q;
        if (s->psno[q] > maxps)
            maxps = s->psno[q];
    }
    s->max_psno = maxps;
    if (maxps > 0 && agx_order_by_arrival(p, arrival, 1, pa)) {
        free(xf), free(pa), free(busy), free(steps);
        agx_bdr_free(s);
        return -1;
    }
    int n = pre_loop(p, s->psno, maxps, pa, s->prev_sent, busy, xf);
    s->npre_xfers = n;
    for (int i = 0; i < p; i++) {
        int rc = (i + 1) % p;
        for (int j = 0; j < p; j++) {
            int seg = ((i - j) % p + p) % p;
            if (s->prev_sent[seg] + j < p - 1)
                xf[n++] = (xfer){maxps + j, i, rc, seg};
        }
    }
    compress(s, xf, n, steps, maxps);
    fill_lists(s, xf, n, busy, pa);
    free(xf), free(pa), free(busy), free(steps);
    return 0;
}

static int add_seg(agx_sched *out, int kind, const agx_bdr_op *o, int tag0, int span)
{
    agx_blockset set;
    agx_set_clear(&set);
    agx_set_add(&set, o->seg, 1);
    return agx_sched_add_ex(out, o->step, kind, o->peer, tag0 + o->seg % span, 0, 0, &set);
}

int agx_bdr_foreground(const agx_bdr_sched *sc, int me, int skip_recvs, int tag0, int span, agx_sched *out)
{
    for (int k = sc->soff[me]; k < sc->soff[me + 1]; k++)
        if (add_seg(out, AGX_SOP_SEND, &sc->sends[k], tag0, span))
            return -1;
    for (int k = sc->roff[me] + skip_recvs; k < sc->roff[me + 1]; k++)
        if (add_seg(out, AGX_SOP_RECV, &sc->recvs[k], tag0, span))
            return -1;
    return agx_sched_finish(out);
}
