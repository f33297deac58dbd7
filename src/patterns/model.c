/* Cost models of the papers (see model.h). */
#include "model.h"

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
