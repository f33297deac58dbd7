/*
 * Recursive doubling for any p by folding the e = p - p2 extra ranks onto the first e:
 *   step 0          (e > 0): r >= p2 sends block r to r - p2;
 *   steps 1..L      : ranks < p2 double their holdings with partner v ^ 2^k;
 *   step L+1        (e > 0): r < e sends everything but block r + p2 to r + p2.
 */
#include "patterns.h"

int agx_rd_nsteps(int p)
{
    if (p <= 1)
        return 0;
    int p2 = agx_floor_pow2(p);
    return agx_ceil_log2(p2) + (p > p2 ? 2 : 0);
}

/* The blocks owned by the virtual ranks [g, g + len): g.. and their folded extras. */
static void add_virtual_group(agx_blockset *set, int g, int len, int p, int p2)
{
    int e = p - p2;
    agx_set_add(set, g, len);
    int hi = g + len < e ? g + len : e;
    if (g < hi)
        agx_set_add(set, g + p2, hi - g);
}

void agx_rd_step(int r, int p, int s, agx_step *st)
{
    int p2 = agx_floor_pow2(p), e = p - p2, L = agx_ceil_log2(p2);
    agx_step_idle(st);
    if (e > 0) {
        if (s == 0) {
            if (r >= p2) {
                st->send.peer = r - p2;
                agx_set_add(&st->send.set, r, 1);
            } else if (r < e) {
                st->recv.peer = r + p2;
                agx_set_add(&st->recv.set, r + p2, 1);
            }
            return;
        }
        if (s == L + 1) {
            if (r < e) {
                st->send.peer = r + p2;
                agx_set_add(&st->send.set, 0, r + p2);
                agx_set_add(&st->send.set, r + p2 + 1, p - r - p2 - 1);
            } else if (r >= p2) {
                st->recv.peer = r - p2;
                agx_set_add(&st->recv.set, 0, r);
                agx_set_add(&st->recv.set, r + 1, p - r - 1);
            }
            return;
        }
        s -= 1;
    }
    if (r >= p2)
        return;
    int mask = 1 << s;
    int partner = r ^ mask;
    st->send.peer = partner;
    st->recv.peer = partner;
    add_virtual_group(&st->send.set, r & ~(mask - 1), mask, p, p2);
    add_virtual_group(&st->recv.set, partner & ~(mask - 1), mask, p, p2);
}
