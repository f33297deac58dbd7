/*
 * The environment's AGX_* variables, strictly parsed. They are read when a context or a
 * layer's per-communicator state is made (agx_ctx_get, agx_sel_get), or once per process
 * (AGX_VERBOSE, AGX_STATS, AGX_TUNING_FILE), never per call (docs/ARCHITECTURE.md).
 */
#include "core.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

int agx_env_list(const char **out, int max)
{
    int n = 0;
    for (char **e = environ; e && *e && n < max; e++) /* 90 entries under mpirun: no call per entry */
        if ((*e)[0] == 'A' && (*e)[1] == 'G' && (*e)[2] == 'X' && (*e)[3] == '_')
            out[n++] = *e;
    return n;
}

const char *agx_env_in(const char *const *list, int n, const char *name)
{
    size_t len = strlen(name);
    for (int i = 0; i < n; i++)
        if (!strncmp(list[i], name, len) && list[i][len] == '=')
            return list[i] + len + 1;
    return NULL;
}

unsigned long long agx_env_print(void)
{
    const char *list[256];
    int n = agx_env_list(list, 256);
    unsigned long long h = 1469598103934665603ULL; /* FNV-1a over the entries, in any order */
    unsigned long long sum = 0, m = 0;
    for (int i = 0; i < n; i++) {
        if (!strncmp(list[i], "AGX_TEST_KEPT_SKIP=", 19))
            continue;
        unsigned long long x = h;
        for (const char *c = list[i]; *c; c++)
            x = (x ^ (unsigned char)*c) * 1099511628211ULL;
        sum += x, m++;
    }
    return sum + m;
}

int agx_env_parse_int(const char *s, long long min, long long max, long long *v)
{
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

int agx_env_int(const char *name, long long min, long long max, long long *v)
{
    return agx_env_parse_int(getenv(name), min, max, v);
}

int agx_env_flag(const char *name)
{
    const char *s = getenv(name);
    return s && *s && strcmp(s, "0");
}

/* Test hook (tests only): AGX_TEST_PAUSE=SEED:MAX_US:PERCENT makes agx_test_pause sleep
 * 0..MAX_US microseconds in PERCENT of its calls, from a generator seeded with SEED, the
 * rank in MPI_COMM_WORLD and the thread, so a stress test can widen the windows between
 * the steps of a node-shared protocol. Read once per process. */
static struct {
    int on, max_us, percent;
    unsigned seed;
} pause_cfg;
static pthread_once_t pause_once = PTHREAD_ONCE_INIT;
static _Thread_local unsigned pause_state;

static void pause_read(void)
{
    const char *s = getenv("AGX_TEST_PAUSE");
    unsigned seed;
    int max_us, percent;
    if (s && sscanf(s, "%u:%d:%d", &seed, &max_us, &percent) == 3 && max_us >= 0 && percent > 0) {
        pause_cfg.seed = seed;
        pause_cfg.max_us = max_us;
        pause_cfg.percent = percent;
        pause_cfg.on = 1;
    }
}

static unsigned pause_next(void)
{
    unsigned x = pause_state;
    x ^= x << 13, x ^= x >> 17, x ^= x << 5;
    return pause_state = x;
}

void agx_test_pause(void)
{
    pthread_once(&pause_once, pause_read);
    if (!pause_cfg.on)
        return;
    if (!pause_state) {
        static _Atomic unsigned threads;
        int rank = 0;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        pause_state = (pause_cfg.seed ^ 0x9E3779B9u) * 2654435761u + (unsigned)rank * 40503u + ++threads * 977u;
        if (!pause_state)
            pause_state = 1;
    }
    if (pause_next() % 100 >= (unsigned)pause_cfg.percent)
        return;
    unsigned us = pause_next() % ((unsigned)pause_cfg.max_us + 1);
    if (us)
        usleep(us);
    else
        sched_yield();
}
