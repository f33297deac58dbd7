/* Block sets and integer helpers shared by every schedule. */
#include "patterns.h"

void agx_set_clear(agx_blockset *s)
{
    s->n = 0;
    s->overflow = 0;
}

void agx_set_add(agx_blockset *s, int first, int len)
{
    if (len <= 0)
        return;
    /* Extend the last range when the new one continues it. */
    if (s->n > 0 && s->r[s->n - 1].first + s->r[s->n - 1].len == first) {
        s->r[s->n - 1].len += len;
        return;
    }
    if (s->n < AGX_SET_MAX) {
        s->r[s->n].first = first;
        s->r[s->n].len = len;
        s->n++;
    } else {
        s->overflow = 1;
    }
}

void agx_set_add_circular(agx_blockset *s, int start, int len, int p)
{
    if (len <= 0 || p <= 0)
        return;
    start = agx_mod(start, p);
    int head = p - start < len ? p - start : len;
    agx_set_add(s, start, head);
    agx_set_add(s, 0, len - head);
}

int agx_set_size(const agx_blockset *s)
{
    int n = 0;
    for (int i = 0; i < s->n; i++)
        n += s->r[i].len;
    return n;
}

int agx_set_contains(const agx_blockset *s, int block)
{
    for (int i = 0; i < s->n; i++)
        if (block >= s->r[i].first && block < s->r[i].first + s->r[i].len)
            return 1;
    return 0;
}

int agx_ceil_log2(int p)
{
    int k = 0;
    while ((1LL << k) < p)
        k++;
    return k;
}

int agx_ceil_logk(int n, int k)
{
    int L = 0;
    for (long long D = 1; D < n; D *= (k < 2 ? 2 : k))
        L++;
    return L;
}

int agx_floor_pow2(int p)
{
    int q = 1;
    while (q <= p / 2)
        q *= 2;
    return q;
}

int agx_is_pow2(int p) { return p > 0 && (p & (p - 1)) == 0; }
