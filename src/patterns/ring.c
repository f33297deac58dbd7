/* Ring schedule: p-1 steps, each rank forwards the block it received last. */
#include "patterns.h"

int agx_ring_nsteps(int p) { return p > 1 ? p - 1 : 0; }

void agx_ring_step(int r, int p, int s, agx_step *st)
{
    agx_step_idle(st);
    st->send.peer = agx_mod(r + 1, p);
    st->recv.peer = agx_mod(r - 1, p);
    agx_set_add(&st->send.set, agx_mod(r - s, p), 1);
    agx_set_add(&st->recv.set, agx_mod(r - s - 1, p), 1);
}
