/*
 * Selection rules as data: ranges, the rules file (AGX_TUNING_FILE, JSON read with
 * jansson) and the environment's size-ranged form (AGX_ALLGATHER_ALGORITHM=bruck:0-8K,ring).
 *
 * A rules file, one object (docs/algorithms.md, "Rules files"):
 *   {"format": "agx-rules-1", "rules": [
 *     {"op": "allgather", "kind": "intra", "comm_size": "2-16", "ppn": "1-8",
 *      "nodes": "2-", "bytes": "0-8K", "algorithm": "kbruck", "params": {"radix": 4}}, ...]}
 * Ranges are inclusive ("lo-hi", "lo-", "N" or an integer; K, M, G multiply by 1024);
 * a key left out matches anything. Two rules of one (op, kind) whose ranges all meet are
 * an error, so the order does not matter. A call no row matches, or whose row's algorithm
 * cannot run on it, takes the built-in default. Every error names the file and line.
 *
 * The file is read once per process (rules_file.c); each communicator agrees on it
 * (agx_rules_agree) before its first selection, so a file missing or different on one
 * node fails every rank alike instead of splitting the choice.
 */
#include "select.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- ranges ---------------------------------------------------------------------------- */

static int number(const char *s, const char **rest, long long *v)
{
    char *end;
    errno = 0;
    long long x = strtoll(s, &end, 10);
    if (end == s || errno || x < 0)
        return -1;
    int shift = 0;
    switch (*end) {
    case 'k': case 'K': shift = 10; end++; break;
    case 'm': case 'M': shift = 20; end++; break;
    case 'g': case 'G': shift = 30; end++; break;
    default: break;
    }
    if (x > (LLONG_MAX >> 1) >> shift)
        return -1;
    *v = x << shift;
    *rest = end;
    return 0;
}

int agx_span_parse(const char *s, agx_span *r)
{
    long long lo, hi;
    const char *p;
    if (!s || number(s, &p, &lo))
        return -1;
    if (!*p) { /* "N": exactly N */
        *r = (agx_span){lo, lo + 1};
        return 0;
    }
    if (*p++ != '-')
        return -1;
    if (!*p) { /* "lo-": no upper bound */
        *r = (agx_span){lo, 0};
        return 0;
    }
    if (number(p, &p, &hi) || *p || hi < lo)
        return -1;
    *r = (agx_span){lo, hi + 1};
    return 0;
}

int agx_span_holds(agx_span r, long long x)
{
    return x >= r.lo && (r.end == 0 || x < r.end);
}

int agx_span_meet(agx_span a, agx_span b)
{
    long long ae = a.end ? a.end : LLONG_MAX, be = b.end ? b.end : LLONG_MAX;
    return a.lo < be && b.lo < ae;
}

static int range_any(agx_span r)
{
    return r.lo == 0 && r.end == 0;
}

/* "lo-hi" (inclusive) with K/M/G where exact, into buf. */
static void size_text(long long x, char *buf, size_t len)
{
    static const char suf[] = "GMK";
    for (int i = 0; i < 3; i++) {
        int shift = 30 - 10 * i;
        if (x && x % (1LL << shift) == 0) {
            snprintf(buf, len, "%lld%c", x >> shift, suf[i]);
            return;
        }
    }
    snprintf(buf, len, "%lld", x);
}

void agx_span_text(agx_span r, char *buf, size_t len)
{
    char lo[32], hi[32];
    size_text(r.lo, lo, sizeof lo);
    if (r.end == 0)
        snprintf(buf, len, "%s-", lo);
    else if (r.end == r.lo + 1)
        snprintf(buf, len, "%s", lo);
    else {
        size_text(r.end - 1, hi, sizeof hi);
        snprintf(buf, len, "%s-%s", lo, hi);
    }
}

/* ---- matching ---------------------------------------------------------------------------- */

/* A rule's pattern conditions (alltoallv), against the call's pattern. */
static int pattern_holds(const agx_rule *r, const agx_args *a)
{
    const agx_a2a_pattern *pt = a->pattern;
    if (!r->recv_pct_max && !r->send_pct_min && !r->send_pct_max)
        return 1;
    if (!pt)
        return 0;
    long long p = pt->p;
    return (!r->recv_pct_max || pt->nrecv * 100LL <= r->recv_pct_max * p) &&
           (!r->send_pct_min || pt->smax * 100LL >= r->send_pct_min * p) &&
           (!r->send_pct_max || pt->smax * 100LL < r->send_pct_max * p);
}

int agx_rule_holds(const agx_rule *r, const agx_args *a)
{
    if (!agx_span_holds(r->bytes, a->msg_bytes) || !agx_span_holds(r->size, a->p) ||
        (r->pow2 && !agx_is_pow2(a->p)) || !pattern_holds(r, a))
        return 0;
    if (range_any(r->nodes) && range_any(r->ppn))
        return 1;
    /* the regions are derived (collectively, once per communicator: every rank selects at
     * the same call) only when a rule asks */
    const agx_regions *R;
    if (a->kind != AGX_KIND_INTRA || agx_ctx_regions(a->ctx, &R) != MPI_SUCCESS)
        return 0;
    return agx_span_holds(r->nodes, R->r) && agx_span_holds(r->ppn, R->max_size);
}

/* ---- the environment's form: "alg[:bytes],alg[:bytes],..." ----------------------------- */

int agx_env_rules(const agx_ctx *ctx, agx_op op, const char *value, agx_rule **out, int *n, char **why)
{
    char *copy = strdup(value), *save = NULL, msg[1024] = "";
    int cap = 1, count = 0;
    for (const char *c = value; *c; c++)
        cap += *c == ',';
    agx_rule *rules = calloc((size_t)cap, sizeof *rules);
    *out = NULL, *n = 0, *why = NULL;
    if (!copy || !rules) {
        free(copy), free(rules);
        return MPI_ERR_NO_MEM;
    }
    for (char *item = strtok_r(copy, ",", &save); item && !msg[0]; item = strtok_r(NULL, ",", &save)) {
        agx_rule *r = &rules[count];
        char *colon = strchr(item, ':');
        if (colon) {
            *colon = 0;
            if (agx_span_parse(colon + 1, &r->bytes))
                snprintf(msg, sizeof msg, "%s='%s': '%s' is no byte range (lo-hi, lo-, N; K, M, G)",
                         agx_op_get(op)->env, value, colon + 1);
        }
        if (!msg[0] && !agx_ctx_resolve(ctx, op, item, r->kidx) && agx_alg_find(op, AGX_KIND_INTRA, item) < 0 &&
            agx_alg_find(op, AGX_KIND_INTER, item) < 0) {
            char names[512];
            agx_alg_names(op, AGX_KIND_INTRA, names, sizeof names);
            snprintf(msg, sizeof msg, "unknown %s algorithm '%s' in %s; valid: %s", agx_op_get(op)->name, item,
                     agx_op_get(op)->env, names);
        }
        if (!msg[0] && !(r->alg = strdup(item)))
            snprintf(msg, sizeof msg, "%s: no memory", agx_op_get(op)->env);
        count++;
    }
    free(copy);
    if (msg[0]) {
        agx_env_rules_free(rules, count);
        return (*why = strdup(msg)) ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    }
    *out = rules, *n = count;
    return MPI_SUCCESS;
}

void agx_env_rules_free(agx_rule *rules, int n)
{
    for (int i = 0; rules && i < n; i++)
        free((char *)rules[i].alg);
    free(rules);
}
