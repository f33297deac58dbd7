/*
 * An explicit-state explorer for the node-shared protocols' models (tests/unit/
 * test_shm_*_model.c): every interleaving of the processes' steps, each step atomic, the
 * memory sequentially consistent between steps (what the protocols' syncs and atomics
 * provide at each step boundary).
 *
 * A model is a fixed-size state (plain bytes: every process's program counter and local
 * variables, the shared memory with the provenance of each cell, barrier counters) and
 * a step function that advances one process by one step. The explorer runs a depth-first
 * search over all reachable states, each state once (a visited set of 128-bit hashes of
 * the state's bytes, so two distinct states are confused with probability about 2^-128
 * per pair), and reports:
 *  - a violation a step detects (a read that sees a cell written by the wrong write),
 *    with the schedule that led there (the sequence of processes that stepped);
 *  - a deadlock: a state where no process can step and not every process is done (a
 *    hang: a rank waiting for a flag or a barrier that never comes);
 *  - a violation of the model's end check in a state where every process is done.
 * Interleavings that reach the same state are explored once: two schedules that differ
 * only in the order of independent steps meet in the same state, which is why the whole
 * space of 2-4 processes over 3 calls is small enough to exhaust.
 */
#ifndef AGX_INTERLEAVE_H
#define AGX_INTERLEAVE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { XS_OK, XS_BLOCKED, XS_DONE, XS_BAD };

typedef struct xmodel {
    int nproc;
    size_t size;                                      /* bytes of a state */
    int (*step)(struct xmodel *m, void *st, int proc); /* XS_*; on XS_BAD, why says what */
    int (*end)(struct xmodel *m, const void *st);     /* every process done: 0 when right */
    const void *params;                               /* the model's own parameters */
    char why[512];
} xmodel;

typedef struct {
    long long states, transitions, max_depth;
    int bad;                                          /* 0: every interleaving passed */
} xresult;

typedef struct {
    uint64_t *keys;                                   /* pairs; (0, 0) = empty */
    size_t cap, n;
} xset;

static inline void xhash(const unsigned char *p, size_t n, uint64_t *a, uint64_t *b)
{
    uint64_t h1 = 1469598103934665603ull, h2 = 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < n; i++) {
        h1 = (h1 ^ p[i]) * 1099511628211ull;
        h2 = (h2 ^ p[i]) * 0x100000001B3ull + (h2 >> 29);
    }
    *a = h1 | 1; /* never (0, 0) */
    *b = h2;
}

/* 1 when the state was new (now inserted). */
static inline int xset_insert(xset *s, const void *st, size_t size)
{
    uint64_t a, b;
    xhash(st, size, &a, &b);
    if (2 * (s->n + 1) > s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 1 << 16;
        uint64_t *k = calloc(2 * cap, sizeof *k);
        if (!k) {
            fprintf(stderr, "interleave: out of memory at %zu states\n", s->n);
            exit(2);
        }
        for (size_t i = 0; i < s->cap; i++)
            if (s->keys[2 * i]) {
                size_t j = s->keys[2 * i] & (cap - 1);
                while (k[2 * j])
                    j = (j + 1) & (cap - 1);
                k[2 * j] = s->keys[2 * i], k[2 * j + 1] = s->keys[2 * i + 1];
            }
        free(s->keys);
        s->keys = k, s->cap = cap;
    }
    size_t j = a & (s->cap - 1);
    while (s->keys[2 * j]) {
        if (s->keys[2 * j] == a && s->keys[2 * j + 1] == b)
            return 0;
        j = (j + 1) & (s->cap - 1);
    }
    s->keys[2 * j] = a, s->keys[2 * j + 1] = b;
    s->n++;
    return 1;
}

static inline void xreport(const xmodel *m, const int *path, long long depth, const char *what)
{
    fprintf(stderr, "interleave: %s: %s\n  schedule (process per step):", what, m->why);
    for (long long i = 0; i < depth; i++)
        fprintf(stderr, " %d", path[i]);
    fprintf(stderr, "\n");
}

/* Explore every interleaving from init; quiet = 1 does not print the violation. */
static inline xresult xexplore(xmodel *m, const void *init, int quiet)
{
    xresult r = {0};
    xset seen = {0};
    size_t cap = 1024, depth = 0;
    unsigned char *states = malloc(cap * m->size);
    int *next = malloc(cap * sizeof(int)), *any = malloc(cap * sizeof(int)), *path = malloc(cap * sizeof(int));
    unsigned char *tmp = malloc(m->size);
    memcpy(states, init, m->size);
    next[0] = any[0] = 0;
    xset_insert(&seen, init, m->size);
    r.states = 1;
    depth = 1;
    while (depth > 0 && !r.bad) {
        size_t d = depth - 1;
        unsigned char *cur = states + d * m->size;
        if (next[d] == m->nproc) {
            if (!any[d]) { /* nobody could step: all done, or a hang */
                int done = 0;
                for (int p = 0; p < m->nproc; p++) {
                    memcpy(tmp, cur, m->size);
                    done += m->step(m, tmp, p) == XS_DONE;
                }
                if (done < m->nproc) {
                    snprintf(m->why, sizeof m->why, "deadlock: %d of %d processes wait forever", m->nproc - done,
                             m->nproc);
                    r.bad = 1;
                } else if (m->end && m->end(m, cur)) {
                    r.bad = 1;
                }
                if (r.bad && !quiet)
                    xreport(m, path, (long long)d, "violation at the end");
            }
            depth--;
            continue;
        }
        int p = next[d]++;
        memcpy(tmp, cur, m->size);
        int rc = m->step(m, tmp, p);
        if (rc == XS_BAD) {
            path[d] = p;
            if (!quiet)
                xreport(m, path, (long long)d + 1, "violation");
            r.bad = 1;
            break;
        }
        if (rc != XS_OK)
            continue;
        any[d] = 1;
        r.transitions++;
        if (!xset_insert(&seen, tmp, m->size))
            continue;
        r.states++;
        if (depth == cap) {
            cap *= 2;
            states = realloc(states, cap * m->size);
            next = realloc(next, cap * sizeof(int));
            any = realloc(any, cap * sizeof(int));
            path = realloc(path, cap * sizeof(int));
            if (!states || !next || !any || !path) {
                fprintf(stderr, "interleave: out of memory at depth %zu\n", depth);
                exit(2);
            }
        }
        path[d] = p;
        memcpy(states + depth * m->size, tmp, m->size);
        next[depth] = any[depth] = 0;
        depth++;
        if ((long long)depth > r.max_depth)
            r.max_depth = (long long)depth;
    }
    free(states), free(next), free(any), free(path), free(tmp), free(seen.keys);
    return r;
}

#endif
