/*
 * Simulation of schedules (src/patterns/patterns.h) without MPI, shared by the unit
 * tests: every rank's schedule is run round by round over "rank holds block b" tables.
 * Checked: every send has the matching receive at its peer in the same round with the
 * same blocks (and every receive a send); a rank sends only blocks it holds; optionally
 * no block is received twice; at the end every rank holds every block.
 * Counted per rank: messages and blocks sent, split local / non-local by region labels.
 */
#ifndef AGX_SIMSCHED_H
#define AGX_SIMSCHED_H

#include "patterns.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int msgs_max, blocks_max, msgs_total;     /* over ranks, every message */
    int nl_msgs_max, nl_blocks_max, nl_msgs_total, l_msgs_max;
    int rounds;
} sim_counts;

/* The matching receive of send op `o` of rank r at its peer (same round, blocks), or NULL. */
static inline const agx_sop *sim_match(const agx_sched *S, int r, const agx_sop *o, int p, char *used_peer)
{
    const agx_sched *d = &S[o->peer];
    for (int k = 0; k < d->n; k++) {
        const agx_sop *q = &d->ops[k];
        if (q->round != o->round || q->kind != AGX_SOP_RECV || q->peer != r || used_peer[k])
            continue;
        int same = agx_sop_nblocks(d, q) == agx_sop_nblocks(&S[r], o);
        for (int b = 0; b < p && same; b++)
            same = agx_sop_has(d, q, b) == agx_sop_has(&S[r], o, b);
        if (same) {
            used_peer[k] = 1;
            return q;
        }
    }
    return NULL;
}

/* has[r * p + b] initially set by the caller. label: region of each rank (NULL: one
 * region). Returns 1 when every check passed; prints the first violation. */
static inline int sim_run(const char *name, const agx_sched *S, int p, unsigned char *has, int exact_once,
                          const int *label, sim_counts *c)
{
    int ok = 1, rounds = 0;
    unsigned char *next = malloc((size_t)p * p + 1);
    char **used = calloc((size_t)p, sizeof(char *));
    int *m = calloc((size_t)p * 4 + 1, sizeof(int)); /* msgs, blocks, nl msgs, nl blocks */
    int *lm = calloc((size_t)p + 1, sizeof(int));
    for (int r = 0; r < p; r++) {
        used[r] = calloc((size_t)S[r].n + 1, 1);
        rounds = S[r].nrounds > rounds ? S[r].nrounds : rounds;
    }
    for (int t = 0; t < rounds && ok; t++) {
        memcpy(next, has, (size_t)p * p);
        for (int r = 0; r < p && ok; r++)
            for (int i = 0; i < S[r].n && ok; i++) {
                const agx_sop *o = &S[r].ops[i];
                if (o->round != t || o->kind != AGX_SOP_SEND)
                    continue;
                if (o->peer < 0 || o->peer >= p || o->peer == r || !sim_match(S, r, o, p, used[o->peer])) {
                    fprintf(stderr, "%s p=%d round %d: rank %d sends to %d unmatched\n", name, p, t, r, o->peer);
                    ok = 0;
                    break;
                }
                int nb = agx_sop_nblocks(&S[r], o), nl = label && label[o->peer] != label[r];
                m[4 * r]++, m[4 * r + 1] += nb;
                if (nl)
                    m[4 * r + 2]++, m[4 * r + 3] += nb;
                else
                    lm[r]++;
                for (int b = 0; b < p && ok; b++) {
                    if (!agx_sop_has(&S[r], o, b))
                        continue;
                    if (!has[r * p + b]) {
                        fprintf(stderr, "%s p=%d round %d: rank %d sends block %d it lacks\n", name, p, t, r, b);
                        ok = 0;
                    }
                    if (exact_once && (has[o->peer * p + b] || next[o->peer * p + b])) {
                        fprintf(stderr, "%s p=%d round %d: rank %d gets block %d twice\n", name, p, t, o->peer, b);
                        ok = 0;
                    }
                    next[o->peer * p + b] = 1;
                }
            }
        memcpy(has, next, (size_t)p * p);
    }
    for (int r = 0; r < p && ok; r++)
        for (int i = 0; i < S[r].n && ok; i++)
            if (S[r].ops[i].kind == AGX_SOP_RECV && !used[r][i]) {
                fprintf(stderr, "%s p=%d: rank %d receives from %d in round %d: no send\n", name, p, r,
                        S[r].ops[i].peer, S[r].ops[i].round);
                ok = 0;
            }
    for (int i = 0; i < p * p && ok; i++)
        if (!has[i]) {
            fprintf(stderr, "%s p=%d: rank %d misses block %d at the end\n", name, p, i / p, i % p);
            ok = 0;
        }
    memset(c, 0, sizeof *c);
    c->rounds = rounds;
    for (int r = 0; r < p; r++) {
        c->msgs_max = m[4 * r] > c->msgs_max ? m[4 * r] : c->msgs_max;
        c->blocks_max = m[4 * r + 1] > c->blocks_max ? m[4 * r + 1] : c->blocks_max;
        c->nl_msgs_max = m[4 * r + 2] > c->nl_msgs_max ? m[4 * r + 2] : c->nl_msgs_max;
        c->nl_blocks_max = m[4 * r + 3] > c->nl_blocks_max ? m[4 * r + 3] : c->nl_blocks_max;
        c->l_msgs_max = lm[r] > c->l_msgs_max ? lm[r] : c->l_msgs_max;
        c->msgs_total += m[4 * r];
        c->nl_msgs_total += m[4 * r + 2];
        free(used[r]);
    }
    free(used), free(m), free(lm), free(next);
    return ok;
}

/* Build every rank's flat schedule and simulate it from "rank r holds block r". */
static inline int sim_flat(const char *name, agx_build_fn build, int param, int p, int exact_once,
                           sim_counts *c)
{
    agx_sched *S = calloc((size_t)p, sizeof(agx_sched));
    unsigned char *has = calloc((size_t)p * p + 1, 1);
    int ok = 1;
    for (int r = 0; r < p; r++) {
        agx_sched_init(&S[r]);
        if (build(&S[r], 0, r, p, param) < 0 || agx_sched_finish(&S[r])) {
            fprintf(stderr, "%s p=%d: building rank %d failed\n", name, p, r);
            ok = 0;
        }
        has[r * p + r] = 1;
    }
    ok = ok && sim_run(name, S, p, has, exact_once, NULL, c);
    for (int r = 0; r < p; r++)
        agx_sched_free(&S[r]);
    free(S), free(has);
    return ok;
}

#endif
