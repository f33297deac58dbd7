/* The schedule container shared by every algorithm (see patterns.h). */
#include "patterns.h"

#include <stdlib.h>
#include <string.h>

void agx_sched_init(agx_sched *s) { memset(s, 0, sizeof *s); }

void agx_sched_free(agx_sched *s)
{
    free(s->ops);
    free(s->ranges);
    memset(s, 0, sizeof *s);
}

int agx_sched_copy(agx_sched *dst, const agx_sched *src)
{
    *dst = *src;
    dst->ops = malloc(sizeof(agx_sop) * (size_t)(src->n > 0 ? src->n : 1));
    dst->ranges = malloc(sizeof(agx_range) * (size_t)(src->nranges > 0 ? src->nranges : 1));
    dst->cap = src->n;
    dst->rcap = src->nranges;
    if (!dst->ops || !dst->ranges) {
        agx_sched_free(dst);
        return -1;
    }
    if (src->n)
        memcpy(dst->ops, src->ops, sizeof(agx_sop) * (size_t)src->n);
    if (src->nranges)
        memcpy(dst->ranges, src->ranges, sizeof(agx_range) * (size_t)src->nranges);
    return 0;
}

static int grow(void **p, int *cap, int need, size_t elem)
{
    if (need <= *cap)
        return 0;
    int c = *cap ? *cap : 8;
    while (c < need)
        c *= 2;
    void *q = realloc(*p, elem * (size_t)c);
    if (!q)
        return -1;
    *p = q;
    *cap = c;
    return 0;
}

/* Append an op whose ranges the caller adds next with push_range. */
static agx_sop *push_op(agx_sched *s, int round, int kind, int peer, int tag, unsigned flags, int buf)
{
    if (grow((void **)&s->ops, &s->cap, s->n + 1, sizeof(agx_sop))) {
        s->bad = 1;
        return NULL;
    }
    agx_sop *op = &s->ops[s->n++];
    *op = (agx_sop){.round = round, .kind = (unsigned char)kind, .flags = (unsigned char)flags,
                    .buf = (unsigned char)buf, .peer = peer, .tag = tag, .r0 = s->nranges};
    if (round + 1 > s->nrounds)
        s->nrounds = round + 1;
    return op;
}

static int push_range(agx_sched *s, agx_sop *op, int first, int len)
{
    if (len <= 0)
        return 0;
    if (op->nr > 0) {
        agx_range *last = &s->ranges[op->r0 + op->nr - 1];
        if (last->first + last->len == first) {
            last->len += len;
            return 0;
        }
    }
    if (grow((void **)&s->ranges, &s->rcap, s->nranges + 1, sizeof(agx_range))) {
        s->bad = 1;
        return -1;
    }
    s->ranges[s->nranges++] = (agx_range){first, len};
    op->nr++;
    return 0;
}

int agx_sched_add_ex(agx_sched *s, int round, int kind, int peer, int tag, unsigned flags, int buf,
                     const agx_blockset *set)
{
    if (set->overflow)
        s->bad = 1;
    if (agx_set_size(set) == 0 && (kind == AGX_SOP_SEND || kind == AGX_SOP_RECV))
        return s->bad ? -1 : 0; /* both sides compute the same set: skipped by both */
    agx_sop *op = push_op(s, round, kind, peer, tag, flags, buf);
    for (int i = 0; op && i < set->n; i++)
        push_range(s, op, set->r[i].first, set->r[i].len);
    return s->bad ? -1 : 0;
}

int agx_sched_add(agx_sched *s, int round, int kind, int peer, const agx_blockset *set)
{
    return agx_sched_add_ex(s, round, kind, peer, 0, 0, 0, set);
}

int agx_sched_add_range_ex(agx_sched *s, int round, int kind, int peer, unsigned flags, int buf, int first,
                           int len)
{
    agx_blockset set;
    agx_set_clear(&set);
    agx_set_add(&set, first, len);
    return agx_sched_add_ex(s, round, kind, peer, 0, flags, buf, &set);
}

int agx_sched_add_range(agx_sched *s, int round, int kind, int peer, int first, int len)
{
    return agx_sched_add_range_ex(s, round, kind, peer, 0, 0, first, len);
}

int agx_sched_add_local(agx_sched *s, int round, int kind, int dst, int src, int first, int len)
{
    if (len <= 0)
        return s->bad ? -1 : 0;
    agx_sop *op = push_op(s, round, kind, -1, 0, 0, dst);
    if (op) {
        op->src = (unsigned char)src;
        push_range(s, op, first, len);
    }
    return s->bad ? -1 : 0;
}

int agx_sched_add_blocks(agx_sched *s, int round, int kind, int peer, const int *blocks, int n)
{
    if (n <= 0)
        return s->bad ? -1 : 0;
    agx_sop *op = push_op(s, round, kind, peer, 0, 0, 0);
    for (int i = 0; op && i < n; i++)
        push_range(s, op, blocks[i], 1);
    return s->bad ? -1 : 0;
}

int agx_sched_finish(agx_sched *s)
{
    if (s->bad)
        return -1;
    /* insertion sort: builders append almost in order, and it is stable */
    for (int i = 1; i < s->n; i++) {
        agx_sop x = s->ops[i];
        int j = i - 1;
        while (j >= 0 && s->ops[j].round > x.round) {
            s->ops[j + 1] = s->ops[j];
            j--;
        }
        s->ops[j + 1] = x;
    }
    return 0;
}

int agx_sop_nblocks(const agx_sched *s, const agx_sop *op)
{
    int n = 0;
    for (int i = 0; i < op->nr; i++)
        n += s->ranges[op->r0 + i].len;
    return n;
}

int agx_sop_has(const agx_sched *s, const agx_sop *op, int b)
{
    for (int i = 0; i < op->nr; i++) {
        const agx_range *r = &s->ranges[op->r0 + i];
        if (b >= r->first && b < r->first + r->len)
            return 1;
    }
    return 0;
}
