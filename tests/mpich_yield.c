/*
 * A test aid for MPICH 4.0 (ch4:ucx) on a machine with fewer cores than ranks: MPICH's
 * progress loop busy-polls and never yields the core (MPIR_CVAR_POLLS_BEFORE_YIELD did not
 * help), so 3 ranks on 2 cores ran test_allreduce --quick in 21 s and 0.2 s with this
 * library preloaded. It wraps UCX's ucp_worker_progress, which MPICH calls from that
 * loop, and yields the core when a poll found nothing to do. Loaded by tools/agxrun under
 * --mpi mpich when AGX_MPICH_YIELD names it (tests/mpich_check.sh); the benchmarks run
 * MPICH as its users do, without it.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sched.h>

typedef struct ucp_worker *ucp_worker_h;

__attribute__((visibility("default"))) unsigned ucp_worker_progress(ucp_worker_h worker)
{
    static unsigned (*real)(ucp_worker_h);
    if (!real)
        real = (unsigned (*)(ucp_worker_h))dlsym(RTLD_NEXT, "ucp_worker_progress");
    unsigned n = real ? real(worker) : 0;
    if (!n)
        sched_yield();
    return n;
}
