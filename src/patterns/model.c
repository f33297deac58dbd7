/* Cost models of the papers (see model.h). */
#include "model.h"
#include "locality.h"
#include "patterns.h"

#include <math.h>

static double dmax(double a, double b) { return a > b ? a : b; }

double agx_model_ig_lower_bound(double KA, double KB) { return dmax(KA, KB); }

double agx_model_ig_root_gather_eq2(int p, int q, double kA, double kB, double ts, double tw)
{
    double beta = 2 + 2 * log2(p) + log2(q);
    return beta * ts + (dmax((p - 1) * kA, (q - 1) * kB) + 3 * p * kA + 3 * q * kB) * tw;
}

double agx_model_ig_thm1_transfer(int p, int q, double kA, double kB)
{
    /* the paper assumes q <= p; the "+k" belongs to the smaller group's block */
    double small_k = q <= p ? kB : kA;
    return dmax(p * kA, q * kB) + small_k;
}

double agx_model_ig_thm3_transfer(double KA, double KB, double maxkA, double maxkB)
{
    return dmax(KA + maxkA, KB + maxkB);
}

double agx_model_ig_eq5_ratio(double KA, double KB)
{
    double M = dmax(KA, KB);
    return M > 0 ? (M + 3 * KA + 3 * KB) / M : 1.0;
}

double agx_model_ig_volume_ratio(int p, int q, double KA, double KB, double kA0, double kB0)
{
    double seg = KA + KB + (p - 1) * KB + (q - 1) * KA;
    double root = seg + (KA - kA0) + (KB - kB0);
    return seg > 0 ? root / seg : 1.0;
}

double agx_model_bruck_eq3(int p, double s, double alpha, double beta)
{
    int L = 0;
    while ((1 << L) < p)
        L++;
    return L * alpha + (p - 1) * s * beta;
}

int agx_model_loc_bruck_nonlocal_msgs(int r, int pl)
{
    return agx_ceil_logk(r, pl);
}

double agx_model_loc_bruck_eq4(int p, int pl, double s, double alpha, double beta, double alpha_l,
                               double beta_l)
{
    int r = (p + pl - 1) / pl, L = agx_model_loc_bruck_nonlocal_msgs(r, pl);
    /* the text's log2(p_l) local steps per local phase (the printed Eq. 4 drops it) */
    return L * alpha + r * s * beta + (L + 1) * agx_ceil_log2(pl) * alpha_l + (p - 1) * s * beta_l;
}

void agx_model_bruck_nonlocal(int p, const int *label, int *msgs, int *blocks)
{
    *msgs = *blocks = 0;
    for (int x = 0; x < p; x++) {
        int m = 0, b = 0;
        for (int d = 1; d < p; d *= 2) {
            int peer = ((x - d) % p + p) % p, c = d < p - d ? d : p - d;
            if (label[peer] != label[x]) {
                m++;
                b += c;
            }
        }
        if (m > *msgs) *msgs = m;
        if (b > *blocks) *blocks = b;
    }
}

int agx_model_loc_bruck_nonlocal_blocks(int r, int pl)
{
    int blocks = 0, k = pl < 2 ? 2 : pl;
    for (long long D = 1; D < r; D *= k) {
        long long c = r - D < D ? r - D : D; /* digit 1 sends the most */
        blocks += (int)(pl * c);
    }
    return blocks;
}

/* Lane 0 is the busiest: its digits 1..F carry the most regions, min(D, r - jD). */
static void multilane_lane0(int r, int pl, int F, int *msgs, int *blocks)
{
    int K = agx_multilane_radix(r, pl, F);
    F = agx_multilane_fanout(r, pl, F);
    *msgs = *blocks = 0;
    for (long long D = 1; D < r; D *= K)
        for (int j = 1; j <= F && j < K && r - j * D > 0; j++) {
            (*msgs)++;
            *blocks += (int)(pl * (r - j * D < D ? r - j * D : D));
        }
}

int agx_model_multilane_nonlocal_msgs(int r, int pl, int F)
{
    int m, b;
    multilane_lane0(r, pl, F, &m, &b);
    return m;
}

int agx_model_multilane_nonlocal_blocks(int r, int pl, int F)
{
    int m, b;
    multilane_lane0(r, pl, F, &m, &b);
    return b;
}

int agx_model_multilane_rounds(int r, int pl, int F)
{
    return r < 2 ? 0 : agx_ceil_logk(r, agx_multilane_radix(r, pl, F));
}

double agx_model_multilane(int p, int pl, double s, double alpha, double beta, double alpha_l, double beta_l,
                           int F)
{
    int r = (p + pl - 1) / pl, L = agx_model_multilane_rounds(r, pl, F);
    return L * alpha + agx_model_multilane_nonlocal_blocks(r, pl, F) * s * beta + (L + 1) * alpha_l +
           (p - 1) * s * beta_l;
}
