/*
 * The environment's AGX_* variables, strictly parsed. They are read when a context or a
 * layer's per-communicator state is made (agx_ctx_get, agx_sel_get), or once per process
 * (AGX_VERBOSE, AGX_STATS, AGX_TUNING_FILE), never per call (docs/ARCHITECTURE.md).
 */
#include "core.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int agx_env_int(const char *name, long long min, long long max, long long *v)
{
    const char *s = getenv(name);
    char *end;
    if (!s || !*s)
        return 1;
    errno = 0;
    long long x = strtoll(s, &end, 10);
    if (errno || end == s || *end || x < min || x > max)
        return -1;
    *v = x;
    return 0;
}

int agx_env_flag(const char *name)
{
    const char *s = getenv(name);
    return s && *s && strcmp(s, "0");
}
