/*
 * agx_print_info: what agx is and will do on a communicator (tools/agx-info prints it for
 * MPI_COMM_WORLD): version, MPI library, registry, regions, and the rules in force in the
 * order selection reads them (select.c): environment, rules file, built-in default.
 */
#include "api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The i-th algorithm serving op, as the public listing counts them. */
static int serves(const agx_alg *alg, agx_op op) { return (alg->ops >> op) & 1u; }

static const agx_alg *nth(agx_op op, agx_kind kind, int i)
{
    agx_coll_install();
    const agx_table *t = agx_table_of(op, kind);
    for (int j = 0; t && j < t->n; j++)
        if (serves(&t->algs[j], op) && i-- == 0)
            return &t->algs[j];
    return NULL;
}

const char *agx_op_name(agx_op op)
{
    agx_coll_install();
    const agx_op_desc *d = agx_op_get(op);
    return d ? d->name : NULL;
}

int agx_algorithm_count(agx_op op, agx_kind kind)
{
    int c = 0;
    while (nth(op, kind, c))
        c++;
    return c;
}

int agx_algorithm_info(agx_op op, agx_kind kind, int i, const char **name, const char **desc)
{
    const agx_alg *a = nth(op, kind, i);
    if (!a)
        return MPI_ERR_ARG;
    if (name)
        *name = a->name;
    if (desc)
        *desc = a->desc;
    return MPI_SUCCESS;
}

int agx_algorithm_details(agx_op op, agx_kind kind, int i, const char **cost, const char **cite)
{
    const agx_alg *a = nth(op, kind, i);
    if (!a)
        return MPI_ERR_ARG;
    if (cost)
        *cost = a->cost;
    if (cite)
        *cite = a->cite;
    return MPI_SUCCESS;
}

static void conditions(const agx_rule *r, char *buf, size_t len)
{
    static const char *const names[] = {"comm_size", "ppn", "nodes", "bytes", "piece"};
    const agx_span sp[] = {r->size, r->ppn, r->nodes, r->bytes, r->piece};
    size_t at = 0;
    buf[0] = 0;
    for (int i = 0; i < 5; i++) {
        char t[64];
        if (sp[i].lo == 0 && sp[i].end == 0)
            continue;
        agx_span_text(sp[i], t, sizeof t);
        at += (size_t)snprintf(buf + at, at < len ? len - at : 0, "%s%s %s", at ? ", " : "", names[i], t);
    }
    if (r->pow2)
        at += (size_t)snprintf(buf + at, at < len ? len - at : 0, "%scomm_size a power of two", at ? ", " : "");
    if (r->recv_pct_max)
        at += (size_t)snprintf(buf + at, at < len ? len - at : 0, "%sreceivers <= %d%% of p", at ? ", " : "",
                               r->recv_pct_max);
    if (r->send_pct_min)
        at += (size_t)snprintf(buf + at, at < len ? len - at : 0, "%ssenders of one receiver >= %d%% of p",
                               at ? ", " : "", r->send_pct_min);
    if (r->send_pct_max)
        at += (size_t)snprintf(buf + at, at < len ? len - at : 0, "%ssenders of one receiver < %d%% of p",
                               at ? ", " : "", r->send_pct_max);
    if (!at)
        snprintf(buf, len, "any");
}

static void rule_line(FILE *out, const agx_rule *r, const char *alg)
{
    char c[256];
    conditions(r, c, sizeof c);
    fprintf(out, "      %-40s -> %s", c, alg);
    for (int j = 0; j < r->nparams; j++)
        fprintf(out, "%s%s=%d", j ? ", " : " (", r->pname[j], r->pval[j]);
    fprintf(out, "%s", r->nparams ? ")" : "");
    if (r->line)
        fprintf(out, "  [line %d]", r->line);
    fprintf(out, "\n");
}

static void registry(FILE *out)
{
    fprintf(out, "registry (algorithm: description [citation] parameters):\n");
    for (int op = 0; op < AGX_OP_LAST; op++)
        for (int k = 0; k < AGX_KIND_LAST; k++) {
            const agx_table *t = agx_table_of((agx_op)op, (agx_kind)k);
            int n = 0;
            for (int i = 0; t && i < t->n; i++)
                n += agx_alg_at((agx_op)op, (agx_kind)k, i) != NULL;
            if (!n)
                continue;
            fprintf(out, "  %s, %s-communicator (%d):\n", agx_op_name((agx_op)op), k ? "inter" : "intra", n);
            for (int i = 0; i < t->n; i++) {
                const agx_alg *a = agx_alg_at((agx_op)op, (agx_kind)k, i);
                if (!a)
                    continue; /* serves the table's other operation */
                fprintf(out, "    %-20s %s [%s]", a->name, a->desc, a->cite);
                for (int j = 0; j < AGX_MAX_PARAMS && a->params[j].name; j++)
                    fprintf(out, " %s=%d (%s)", a->params[j].name, a->params[j].def, a->params[j].env);
                fprintf(out, "\n");
            }
        }
}

static void rules(FILE *out, const agx_sel *ctx)
{
    fprintf(out, "rules in force, read in this order (first that speaks chooses):\n");
    for (int op = 0; op < AGX_OP_LAST; op++) {
        const char *e = getenv(agx_op_get((agx_op)op)->env);
        if (e && *e)
            fprintf(out, "  1. environment: %s=%s%s%s\n", agx_op_get((agx_op)op)->env, e,
                    ctx->env_bad[op] ? "  (wrong: " : "", ctx->env_bad[op] ? ctx->env_bad[op] : "");
    }
    const char *path = agx_rules_path();
    if (ctx->rules_bad)
        fprintf(out, "  2. rules file: not used, every call that reaches it fails: %s\n", ctx->rules_bad);
    else
        fprintf(out, "  2. rules file: %s\n", path ? path : "none (AGX_TUNING_FILE unset)");
    for (int op = 0; ctx->rules_on && op < AGX_OP_LAST; op++)
        for (int k = 0; k < AGX_KIND_LAST; k++) {
            int n;
            const agx_rule *r = agx_rules_file((agx_op)op, (agx_kind)k, &n);
            if (n)
                fprintf(out, "    %s, %s:\n", agx_op_name((agx_op)op), k ? "inter" : "intra");
            for (int i = 0; i < n; i++)
                rule_line(out, &r[i], r[i].alg);
        }
    for (int d = 0; ctx->rules_on && d < 2; d++) { /* the per-file choice's rows (AGX_ADAPT) */
        int n;
        const agx_rule *r = agx_rules_file((agx_op)(AGX_OP_LAST + d), AGX_KIND_INTRA, &n);
        if (n)
            fprintf(out, "    %s (AGX_ADAPT's per-file choice; bytes: the largest rank's):\n",
                    d ? "file_read_all" : "file_write_all");
        for (int i = 0; i < n; i++)
            rule_line(out, &r[i], r[i].alg);
    }
    fprintf(out, "  3. built-in default (first row that holds and can run; else native):\n");
    for (int op = 0; op < AGX_OP_LAST; op++)
        for (int k = 0; k < AGX_KIND_LAST; k++) {
            const agx_table *t = agx_table_of((agx_op)op, (agx_kind)k);
            if (!t || (op == AGX_OP_ALLGATHERV && t == agx_table_of(AGX_OP_ALLGATHER, (agx_kind)k)))
                continue; /* allgatherv shares allgather's table */
            fprintf(out, "    %s%s, %s:\n", agx_op_name((agx_op)op), op == AGX_OP_ALLGATHER ? "(v)" : "",
                    k ? "inter" : "intra");
            for (int i = 0; i < t->nrules; i++)
                rule_line(out, &t->rules[i], t->rules[i].alg);
            if (!t->nrules)
                fprintf(out, "      %-40s -> native\n", "any");
        }
    const char *ad = getenv("AGX_ADAPT");
    fprintf(out, "  on-line choice (AGX_ADAPT=%s): %s\n", ad && *ad ? ad : "unset",
            ctx->adapt == 0   ? "off: the rules above choose"
            : ctx->adapt == 1 ? "where the default rule chooses, each class of calls times the default's "
                                "choice, two runners-up and native over its first calls, then runs the winner "
                                "(floating-point reductions keep the default's choice)"
            : ctx->adapt == 2 ? "as AGX_ADAPT=1, floating-point reductions included (results may change bits)"
                              : "malformed (0, 1 or any): every call the default rule would choose fails");
    for (int op = 0; op < AGX_OP_LAST; op++)
        for (int k = 0; k < AGX_KIND_LAST; k++)
            agx_learn_print(ctx, (agx_op)op, (agx_kind)k, out);
}

int agx_print_info(MPI_Comm comm, FILE *out)
{
    agx_ctx *ctx;
    agx_sel *sel;
    const agx_regions *R = NULL;
    int rc, inter = 0;
    agx_coll_install();
    if (comm == MPI_COMM_NULL)
        return agx_raise(comm, agx_error(MPI_ERR_COMM, "agx_print_info: MPI_COMM_NULL"));
    if ((rc = agx_ctx_ready(comm, &ctx, &sel)) != MPI_SUCCESS)
        return agx_raise(comm, rc);
    MPI_Comm_test_inter(comm, &inter);
    if (!inter && (rc = agx_ctx_regions(ctx, &R)) != MPI_SUCCESS) /* collective */
        return agx_raise(comm, rc);
    if (ctx->rank != 0 || !out)
        return MPI_SUCCESS;
    char lib[MPI_MAX_LIBRARY_VERSION_STRING], name[MPI_MAX_OBJECT_NAME] = "";
    int len = 0, v, sv;
    MPI_Get_library_version(lib, &len);
    lib[strcspn(lib, "\n")] = 0;
    MPI_Get_version(&v, &sv);
    MPI_Comm_get_name(comm, name, &len);
    fprintf(out, "agx %d.%d.%d\n", AGX_VERSION_MAJOR, AGX_VERSION_MINOR, AGX_VERSION_PATCH);
    fprintf(out, "MPI: %s (MPI %d.%d)\n", lib, v, sv);
    fprintf(out, "%s: %d ranks", len ? name : "communicator", ctx->p);
    if (R)
        fprintf(out, ", %d region%s (%s), %d-%d ranks per region\n", R->r, R->r == 1 ? "" : "s",
                getenv("AGX_REGION_SIZE") || getenv("AGX_REGIONS") ? "AGX_REGION_SIZE / AGX_REGIONS"
                                                                   : "shared-memory nodes",
                R->min_size, R->max_size);
    else
        fprintf(out, " (inter-communicator)\n");
    registry(out);
    rules(out, sel);
    return MPI_SUCCESS;
}
