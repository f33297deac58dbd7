/* Per-process message and byte counters, split by locality (same node or not). */
#include "core.h"

#include <stdatomic.h>

static atomic_int enabled = -1; /* -1: not yet read from AGX_STATS */
static atomic_ullong c_msgs_local, c_msgs_nonlocal, c_bytes_local, c_bytes_nonlocal;
static atomic_ullong c_msgs_ig, c_bytes_ig_sent, c_bytes_ig_recv;
/* the arrival trace: one process's own receives (not shared between threads) */
static int tracing;
static unsigned long long t_arrivals;
static double t_first, t_last;

void agx_stats_trace(int on) { tracing = on; }
int agx_stats_tracing(void) { return tracing; }

void agx_stats_arrival(double t)
{
    if (!t_arrivals++ || t < t_first)
        t_first = t;
    if (t > t_last)
        t_last = t;
}

int agx_stats_enabled(void)
{
    int e = atomic_load_explicit(&enabled, memory_order_relaxed);
    if (e < 0) {
        e = agx_env_flag("AGX_STATS");
        atomic_store(&enabled, e);
    }
    return e;
}

void agx_stats_enable(int on) { atomic_store(&enabled, on ? 1 : 0); }

void agx_stats_reset(void)
{
    atomic_store(&c_msgs_local, 0);
    atomic_store(&c_msgs_nonlocal, 0);
    atomic_store(&c_bytes_local, 0);
    atomic_store(&c_bytes_nonlocal, 0);
    atomic_store(&c_msgs_ig, 0);
    atomic_store(&c_bytes_ig_sent, 0);
    atomic_store(&c_bytes_ig_recv, 0);
    t_arrivals = 0;
    t_first = t_last = 0;
}

void agx_stats_get(agx_stats *out)
{
    out->msgs_local = atomic_load(&c_msgs_local);
    out->msgs_nonlocal = atomic_load(&c_msgs_nonlocal);
    out->bytes_local = atomic_load(&c_bytes_local);
    out->bytes_nonlocal = atomic_load(&c_bytes_nonlocal);
    out->msgs_intergroup = atomic_load(&c_msgs_ig);
    out->bytes_intergroup_sent = atomic_load(&c_bytes_ig_sent);
    out->bytes_intergroup_recv = atomic_load(&c_bytes_ig_recv);
    out->arrivals = t_arrivals;
    out->first_arrival = t_first;
    out->last_arrival = t_last;
}

void agx_stats_intergroup(long long sent, long long recvd)
{
    if (!agx_stats_enabled())
        return;
    if (sent >= 0) {
        atomic_fetch_add_explicit(&c_msgs_ig, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&c_bytes_ig_sent, (unsigned long long)sent, memory_order_relaxed);
    }
    if (recvd > 0)
        atomic_fetch_add_explicit(&c_bytes_ig_recv, (unsigned long long)recvd, memory_order_relaxed);
}

void agx_stats_count_map(const int *node_of, int me, int peer, long long bytes)
{
    if (!agx_stats_enabled() || !node_of)
        return;
    if (node_of[peer] == node_of[me]) {
        atomic_fetch_add_explicit(&c_msgs_local, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&c_bytes_local, (unsigned long long)bytes, memory_order_relaxed);
    } else {
        atomic_fetch_add_explicit(&c_msgs_nonlocal, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&c_bytes_nonlocal, (unsigned long long)bytes, memory_order_relaxed);
    }
}
