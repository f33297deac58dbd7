/* Linear gather to rank 0 and binomial broadcast of the gathered blocks from rank 0. */
#include "patterns.h"

int agx_linear_gather_nsteps(int p) { return p > 1 ? 1 : 0; }

void agx_linear_gather_step(int r, int p, int s, agx_step *st)
{
    (void)p;
    (void)s;
    agx_step_idle(st);
    if (r > 0) {
        st->send.peer = 0;
        agx_set_add(&st->send.set, r, 1);
    }
}

int agx_binomial_bcast_nsteps(int p) { return agx_ceil_log2(p); }

void agx_binomial_bcast_step(int r, int p, int s, agx_step *st)
{
    int mask = 1 << s;
    agx_step_idle(st);
    if (r < mask && r + mask < p) {
        st->send.peer = r + mask;
        agx_set_add(&st->send.set, 0, p);
    } else if (r >= mask && r < 2 * mask) {
        st->recv.peer = r - mask;
        agx_set_add(&st->recv.set, 0, p);
    }
}
