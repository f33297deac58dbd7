/* Small helpers shared by agx-bench's modes: sizes and comma-separated lists. */
#include "bench.h"

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
