/*
 * Symbolic simulation of reduction schedules (src/patterns/patterns.h), without MPI, for
 * tests/unit/test_allreduce.c: every buffer block holds the expression it would hold
 * ("(a.b)" = a (+) b, a the left operand), run with the engine's semantics round by round
 * (messages carry the sender's values at posting time, then the round's copies and
 * reductions in order).
 */
#ifndef AGX_SIMEXPR_H
#define AGX_SIMEXPR_H

#include "patterns.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int p, nb, nbuf;
    char **v; /* v[(r * nbuf + buf) * nb + b] */
    int *sent; /* messages sent per rank */
} world;

static inline char **cell(world *w, int r, int buf, int b) { return &w->v[((size_t)r * w->nbuf + buf) * w->nb + b]; }

static inline char *join(const char *a, const char *b)
{
    size_t n = strlen(a) + strlen(b) + 4;
    char *s = malloc(n);
    snprintf(s, n, "(%s.%s)", a, b);
    return s;
}

static inline void set(char **c, char *s)
{
    free(*c);
    *c = s;
}

/* Run the schedules S[0..p) on w; returns 0 when every message matched. */
static inline int sim_expr_run(world *w, const agx_sched *S)
{
    int p = w->p, rounds = 0;
    for (int r = 0; r < p; r++)
        rounds = S[r].nrounds > rounds ? S[r].nrounds : rounds;
    char *used = calloc((size_t)p * 4096, 1);
    for (int t = 0; t < rounds; t++) {
        /* messages: for each send, the first unused matching receive at the peer */
        char **stage = calloc((size_t)p * w->nbuf * w->nb, sizeof(char *));
        for (int r = 0; r < p; r++)
            for (int i = 0; i < S[r].n; i++) {
                const agx_sop *o = &S[r].ops[i];
                if (o->round != t || o->kind != AGX_SOP_SEND)
                    continue;
                const agx_sched *d = &S[o->peer];
                int k = 0;
                for (; k < d->n; k++) {
                    const agx_sop *q = &d->ops[k];
                    if (q->round != t || q->kind != AGX_SOP_RECV || q->peer != r || used[o->peer * 4096 + k])
                        continue;
                    int same = agx_sop_nblocks(d, q) == agx_sop_nblocks(&S[r], o);
                    for (int b = 0; b < w->nb && same; b++)
                        same = agx_sop_has(d, q, b) == agx_sop_has(&S[r], o, b);
                    if (same)
                        break;
                }
                if (k == d->n) {
                    fprintf(stderr, "p=%d round %d: rank %d's send to %d has no receive\n", p, t, r, o->peer);
                    free(stage);
                    free(used);
                    return -1;
                }
                used[o->peer * 4096 + k] = 1;
                w->sent[r]++;
                for (int b = 0; b < w->nb; b++)
                    if (agx_sop_has(&S[r], o, b))
                        stage[((size_t)o->peer * w->nbuf + d->ops[k].buf) * w->nb + b] =
                            strdup(*cell(w, r, o->buf, b));
            }
        for (size_t i = 0; i < (size_t)p * w->nbuf * w->nb; i++)
            if (stage[i])
                set(&w->v[i], stage[i]);
        free(stage);
        for (int r = 0; r < p; r++)
            for (int i = 0; i < S[r].n; i++) {
                const agx_sop *o = &S[r].ops[i];
                if (o->round != t || (o->kind != AGX_SOP_COPY && o->kind != AGX_SOP_REDUCE))
                    continue;
                for (int b = 0; b < w->nb; b++)
                    if (agx_sop_has(&S[r], o, b)) {
                        char **dst = cell(w, r, o->buf, b), *src = *cell(w, r, o->src, b);
                        set(dst, o->kind == AGX_SOP_COPY ? strdup(src) : join(src, *dst));
                    }
            }
    }
    for (int r = 0; r < p; r++)
        for (int i = 0; i < S[r].n; i++)
            if (S[r].ops[i].kind == AGX_SOP_RECV && !used[r * 4096 + i]) {
                fprintf(stderr, "p=%d: rank %d's receive %d has no send\n", p, r, i);
                free(used);
                return -1;
            }
    free(used);
    return 0;
}

/* The leaves of expression e in order, into out (n of them). */
static inline int leaves(const char *e, int *out, int max)
{
    int n = 0;
    for (const char *c = e; *c;) {
        if (*c >= '0' && *c <= '9') {
            if (n < max)
                out[n] = (int)strtol(c, (char **)&c, 10);
            n++;
        } else
            c++;
    }
    return n;
}

/* Expression e holds every contribution 0..p-1 exactly once (and no scratch 'x');
 * leaves into lv[0..p], seen[p] scratch. */
static inline int once_each(const char *e, int p, int *lv, int *seen)
{
    int n = leaves(e, lv, p + 1), ok = n == p && !strchr(e, 'x');
    memset(seen, 0, sizeof(int) * (size_t)p);
    for (int i = 0; i < n && i <= p && ok; i++)
        ok = lv[i] >= 0 && lv[i] < p && !seen[lv[i]]++;
    return ok;
}

#endif
