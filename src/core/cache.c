/*
 * Schedules cached per (communicator, algorithm, shape): a schedule depends only on the
 * builder, the rank (fixed per communicator), the process count and the algorithm's
 * parameter, never on the message sizes, so it is built once and reused. Freed with the
 * communicator's context.
 */
#include "core.h"

#include <stdlib.h>

struct agx_cached {
    agx_cache_key key;
    agx_sched s;
    int *order;          /* virtual index -> rank (locality-aware algorithms), or NULL */
    agx_cached *next;
};

const agx_sched *agx_cache_find(agx_ctx *ctx, const agx_cache_key *key, const int **order)
{
    for (agx_cached *c = ctx->cache; c; c = c->next)
        if (c->key.builder == key->builder && c->key.p == key->p && c->key.param == key->param) {
            if (order)
                *order = c->order;
            return &c->s;
        }
    return NULL;
}

int agx_cache_put(agx_ctx *ctx, const agx_cache_key *key, agx_sched *s, int *order,
                  const agx_sched **out)
{
    agx_cached *c = malloc(sizeof *c);
    if (!c) {
        agx_sched_free(s);
        free(order);
        return agx_error(MPI_ERR_NO_MEM, "out of memory caching a schedule");
    }
    c->key = *key;
    c->s = *s;
    c->order = order;
    c->next = ctx->cache;
    ctx->cache = c;
    *out = &c->s;
    return MPI_SUCCESS;
}

void agx_cache_free(agx_ctx *ctx)
{
    while (ctx->cache) {
        agx_cached *c = ctx->cache;
        ctx->cache = c->next;
        agx_sched_free(&c->s);
        free(c->order);
        free(c);
    }
}

int agx_flat_sched_of(agx_ctx *ctx, int rank, int p, agx_build_fn build, int param, const agx_sched **out)
{
    agx_cache_key key = {.builder = (const void *)build, .p = p, .param = param};
    if ((*out = agx_cache_find(ctx, &key, NULL)))
        return MPI_SUCCESS;
    agx_sched s;
    agx_sched_init(&s);
    if (build(&s, 0, rank, p, param) < 0 || agx_sched_finish(&s)) {
        agx_sched_free(&s);
        return agx_error(MPI_ERR_NO_MEM, "out of memory building a schedule for p = %d", p);
    }
    return agx_cache_put(ctx, &key, &s, NULL, out);
}
