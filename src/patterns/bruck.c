/* Bruck schedule (dissemination with doubling distance), blocks named by final index. */
#include "patterns.h"

int agx_bruck_nsteps(int p) { return agx_ceil_log2(p); }

void agx_bruck_step(int r, int p, int s, agx_step *st)
{
    int d = 1 << s;
    int c = d < p - d ? d : p - d;
    agx_step_idle(st);
    st->send.peer = agx_mod(r - d, p);
    st->recv.peer = agx_mod(r + d, p);
    agx_set_add_circular(&st->send.set, r, c, p);
    agx_set_add_circular(&st->recv.set, r + d, c, p);
}
