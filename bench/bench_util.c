/* Small helpers shared by agx-bench's modes: sizes and comma-separated lists. */
#include "bench.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

long long parse_size(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || v < 0)
        return -1;
    if (*end == 'k' || *end == 'K')
        v *= 1024, end++;
    else if (*end == 'm' || *end == 'M')
        v *= 1024 * 1024, end++;
    else if (*end == 'g' || *end == 'G')
        v *= 1024.0 * 1024 * 1024, end++;
    return *end ? -1 : (long long)v;
}

int bench_split(const char *list, char **out, int max)
{
    char *dup = strdup(list), *save = NULL;
    int n = 0;
    for (char *t = strtok_r(dup, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (n == max) {
            n = -1;
            break;
        }
        out[n++] = strdup(t);
    }
    free(dup);
    return n;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

void bench_summary(double *t, int n, double out[5])
{
    double sum = 0;
    for (int i = 0; i < n; i++)
        sum += t[i];
    qsort(t, (size_t)n, sizeof(double), cmp_double);
    out[0] = sum / n * 1e6, out[1] = t[0] * 1e6, out[2] = t[n - 1] * 1e6;
    out[3] = t[(n - 1) / 2] * 1e6, out[4] = t[(int)ceil(0.99 * n) - 1] * 1e6;
}
