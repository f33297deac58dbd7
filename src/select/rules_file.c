/*
 * The rules file (AGX_TUNING_FILE): read once per process with jansson, checked whole
 * (every error names the file and line), agreed on per communicator. The format and
 * matching are in rules.c; docs/algorithms.md, "Rules files", is the user's reference.
 */
#include "select.h"

#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static struct {
    int tried, missing;
    char *path;
    char *err;                  /* why the file cannot be used; NULL: it can */
    unsigned long long hash;    /* FNV-1a of its bytes */
    agx_rule *rules[AGX_OP_LAST + 2][AGX_KIND_LAST]; /* + file_write_all, file_read_all */
    int n[AGX_OP_LAST + 2][AGX_KIND_LAST];
} F;
static pthread_mutex_t flock = PTHREAD_MUTEX_INITIALIZER;

static void fail(const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (!F.err)
        F.err = strdup(msg);
}

/* The line of each element of the top-level "rules" array (jansson keeps no positions):
 * a scan of the text jansson accepted, following strings and nesting. */
static int rule_lines(const char *t, size_t len, int *lines, int max)
{
    int depth = 0, line = 1, in_rules = 0, n = 0, instr = 0, at_start = 0;
    const char *last = NULL; /* the last string opened at depth 1 (a key before a value) */
    for (size_t i = 0; i < len; i++) {
        char c = t[i];
        if (c == '\n')
            line++;
        if (instr) {
            if (c == '\\')
                i++;
            else if (c == '"')
                instr = 0;
            continue;
        }
        if (in_rules && depth == 2 && at_start && c != ' ' && c != '\t' && c != '\r' && c != '\n' && c != ']') {
            if (n < max)
                lines[n++] = line;
            at_start = 0;
        }
        if (c == '"') {
            instr = 1;
            if (depth == 1)
                last = t + i + 1;
        } else if (c == '{' || c == '[') {
            if (depth == 1 && c == '[' && last && !strncmp(last, "rules\"", 6))
                in_rules = at_start = 1;
            depth++;
        } else if (c == '}' || c == ']') {
            if (--depth == 1)
                in_rules = 0;
        } else if (c == ',' && in_rules && depth == 2) {
            at_start = 1;
        }
    }
    return n;
}

static const char *const file_ops[2] = {"file_write_all", "file_read_all"};

static int op_of(const char *name)
{
    for (int op = 0; op < AGX_OP_LAST; op++)
        if (agx_op_get((agx_op)op) && !strcasecmp(name, agx_op_get((agx_op)op)->name))
            return op;
    for (int d = 0; d < 2; d++)
        if (!strcasecmp(name, file_ops[d]))
            return AGX_OP_LAST + d;
    return -1;
}

static const char *op_name(int op) { return op < AGX_OP_LAST ? agx_op_get((agx_op)op)->name : file_ops[op - AGX_OP_LAST]; }

static int range_of(json_t *v, agx_span *r)
{
    if (json_is_integer(v) && json_integer_value(v) >= 0) {
        *r = (agx_span){json_integer_value(v), json_integer_value(v) + 1};
        return 0;
    }
    return json_is_string(v) ? agx_span_parse(json_string_value(v), r) : -1;
}

/* The algorithm's parameters the row sets, checked against its declaration. */
static int params_of(json_t *obj, const agx_alg *alg, agx_rule *r, const char *path, int line)
{
    const char *key;
    json_t *v;
    if (!json_is_object(obj))
        return fail("%s:%d: \"params\" must be an object of integers", path, line), -1;
    json_object_foreach(obj, key, v) {
        int i = 0;
        while (i < AGX_MAX_PARAMS && alg->params[i].name && strcmp(alg->params[i].name, key))
            i++;
        if (i == AGX_MAX_PARAMS || !alg->params[i].name)
            return fail("%s:%d: algorithm '%s' has no parameter '%s'", path, line, alg->name, key), -1;
        const agx_param *pm = &alg->params[i];
        if (!json_is_integer(v) || json_integer_value(v) < pm->min || json_integer_value(v) > pm->max)
            return fail("%s:%d: parameter '%s' of '%s' must be an integer in [%d, %d] (%s)", path, line, key,
                        alg->name, pm->min, pm->max, pm->desc), -1;
        if (r->nparams == AGX_MAX_PARAMS || !(r->pname[r->nparams] = strdup(key)))
            return fail("%s:%d: too many parameters", path, line), -1;
        r->pidx[r->nparams] = i;
        r->pval[r->nparams++] = (int)json_integer_value(v);
    }
    return 0;
}

static const char *const keys[] = {"op",        "kind",      "comm_size", "ppn",  "nodes",
                                   "bytes",     "algorithm", "params",    "note", "piece"};

/* A file row (the per-file choice of src/select/adapt_file.c): comm_size, bytes (the
 * largest rank's), piece (the mean file piece), algorithm two_phase, two_phase_node or native. */
static int file_row(json_t *o, const char *path, int line, agx_rule *r)
{
    static const char *const rk[] = {"bytes", "comm_size", "piece"};
    agx_span *rr[] = {&r->bytes, &r->size, &r->piece};
    json_t *v;
    const char *s = json_string_value(json_object_get(o, "kind"));
    if (json_object_get(o, "ppn") || json_object_get(o, "nodes") || json_object_get(o, "params") ||
        (json_object_get(o, "kind") && (!s || strcmp(s, "intra"))))
        return fail("%s:%d: a file row takes comm_size, bytes, piece, algorithm and note only", path, line), -1;
    for (int i = 0; i < 3; i++)
        if ((v = json_object_get(o, rk[i])) && range_of(v, rr[i]))
            return fail("%s:%d: \"%s\" must be a range: \"lo-hi\", \"lo-\", \"N\" or an integer (K, M, G allowed)",
                        path, line, rk[i]), -1;
    s = json_string_value(json_object_get(o, "algorithm"));
    r->kidx[0] = -1;
    for (int c = AGX_FLEARN_ENGINE; s && c < AGX_FLEARN_VOTED; c++)
        r->kidx[0] = strcmp(s, agx_flearn_name(c, 0)) ? r->kidx[0] : c;
    if (r->kidx[0] < 0)
        return fail("%s:%d: a file row's algorithm is two_phase (agx's engine), two_phase_node (with intra-node "
                    "aggregation) or native (the library's own)", path, line), -1;
    r->alg = agx_flearn_name(r->kidx[0], 0);
    r->line = line;
    return 0;
}

/* One row into r (its op and kind into *op, *kind); -1 (F.err set) when it is wrong. */
static int row(json_t *o, const char *path, int line, agx_rule *r, int *op, int *kind)
{
    const char *key, *s;
    json_t *v;
    if (!json_is_object(o))
        return fail("%s:%d: a rule must be an object", path, line), -1;
    json_object_foreach(o, key, v) {
        size_t k = 0;
        while (k < sizeof keys / sizeof keys[0] && strcmp(keys[k], key))
            k++;
        if (k == sizeof keys / sizeof keys[0])
            return fail("%s:%d: unknown key '%s' (op, kind, comm_size, ppn, nodes, bytes, piece, algorithm, params, note)",
                        path, line, key), -1;
    }
    if (!(s = json_string_value(json_object_get(o, "op"))) || (*op = op_of(s)) < 0)
        return fail("%s:%d: \"op\" must be one of allgather, allgatherv, alltoallv, allreduce, file_write_all, "
                    "file_read_all", path, line), -1;
    if (*op >= AGX_OP_LAST)
        return *kind = AGX_KIND_INTRA, file_row(o, path, line, r);
    if (json_object_get(o, "piece"))
        return fail("%s:%d: \"piece\" belongs to file rows (file_write_all, file_read_all)", path, line), -1;
    s = json_string_value(json_object_get(o, "kind"));
    if (json_object_get(o, "kind") && (!s || (strcmp(s, "intra") && strcmp(s, "inter"))))
        return fail("%s:%d: \"kind\" must be \"intra\" or \"inter\"", path, line), -1;
    *kind = s && !strcmp(s, "inter") ? AGX_KIND_INTER : AGX_KIND_INTRA;
    static const char *const rk[] = {"bytes", "comm_size", "ppn", "nodes"};
    agx_span *rr[] = {&r->bytes, &r->size, &r->ppn, &r->nodes};
    for (int i = 0; i < 4; i++)
        if ((v = json_object_get(o, rk[i])) && range_of(v, rr[i]))
            return fail("%s:%d: \"%s\" must be a range: \"lo-hi\", \"lo-\", \"N\" or an integer (K, M, G allowed)",
                        path, line, rk[i]), -1;
    if (*kind == AGX_KIND_INTER && (json_object_get(o, "ppn") || json_object_get(o, "nodes")))
        return fail("%s:%d: \"ppn\" and \"nodes\" apply to intra-communicators only", path, line), -1;
    char names[512];
    s = json_string_value(json_object_get(o, "algorithm"));
    for (int k = 0; k < AGX_KIND_LAST; k++)
        r->kidx[k] = -1;
    if (!s || (r->kidx[*kind] = agx_alg_find((agx_op)*op, (agx_kind)*kind, s)) < 0) {
        agx_alg_names((agx_op)*op, (agx_kind)*kind, names, sizeof names);
        return fail("%s:%d: unknown %s %s algorithm '%s'; valid: %s", path, line,
                    *kind == AGX_KIND_INTER ? "inter" : "intra", agx_op_get((agx_op)*op)->name, s ? s : "(none)", names), -1;
    }
    r->alg = agx_alg_at((agx_op)*op, (agx_kind)*kind, r->kidx[*kind])->name; /* static */
    r->line = line;
    if ((v = json_object_get(o, "params")))
        return params_of(v, agx_alg_at((agx_op)*op, (agx_kind)*kind, r->kidx[*kind]), r, path, line);
    return 0;
}

static int overlap(const agx_rule *a, const agx_rule *b)
{
    return agx_span_meet(a->bytes, b->bytes) && agx_span_meet(a->size, b->size) && agx_span_meet(a->ppn, b->ppn) &&
           agx_span_meet(a->nodes, b->nodes) && agx_span_meet(a->piece, b->piece);
}

static void parse(const char *path, const char *text, size_t len)
{
    json_error_t je;
    json_t *root = json_loadb(text, len, 0, &je), *rules = NULL;
    if (!root) {
        fail("%s:%d:%d: %s", path, je.line, je.column, je.text);
        return;
    }
    const char *fmt = json_string_value(json_object_get(root, "format"));
    if (!json_is_object(root) || !json_is_array(rules = json_object_get(root, "rules")))
        fail("%s:1: expected an object with a \"rules\" array", path);
    else if (json_object_get(root, "format") && (!fmt || strcmp(fmt, "agx-rules-1")))
        fail("%s:1: \"format\" is '%s'; this agx reads \"agx-rules-1\"", path, fmt ? fmt : "?");
    size_t n = F.err ? 0 : json_array_size(rules);
    int *lines = calloc(n + 1, sizeof *lines), *ops = calloc(n + 1, sizeof *ops), *kinds = calloc(n + 1, sizeof *kinds);
    agx_rule *all = calloc(n + 1, sizeof *all);
    if (!lines || !ops || !kinds || !all)
        fail("%s: no memory for %zu rules", path, n);
    else
        rule_lines(text, len, lines, (int)n);
    for (size_t i = 0; i < n && !F.err; i++)
        row(json_array_get(rules, i), path, lines[i], &all[i], &ops[i], &kinds[i]);
    for (size_t i = 0; i < n && !F.err; i++)
        for (size_t j = 0; j < i && !F.err; j++)
            if (ops[i] == ops[j] && kinds[i] == kinds[j] && overlap(&all[i], &all[j]))
                fail("%s:%d: this %s rule's ranges overlap those of the rule at line %d (one rule per shape)",
                     path, lines[i], op_name(ops[i]), lines[j]);
    for (size_t i = 0; i < n && !F.err; i++) { /* per (op, kind), in file order */
        agx_rule **dst = &F.rules[ops[i]][kinds[i]];
        int *cnt = &F.n[ops[i]][kinds[i]];
        agx_rule *grown = realloc(*dst, sizeof **dst * (size_t)(*cnt + 1));
        if (!grown) {
            fail("%s: no memory for %zu rules", path, n);
            break;
        }
        *dst = grown;
        grown[(*cnt)++] = all[i];
        all[i].nparams = 0; /* the names moved */
    }
    for (size_t i = 0; all && i < n; i++)
        for (int k = 0; k < all[i].nparams; k++)
            free((char *)all[i].pname[k]);
    free(lines), free(ops), free(kinds), free(all);
    json_decref(root);
}

static void load(void)
{
    const char *path = getenv("AGX_TUNING_FILE");
    F.tried = 1;
    if (!path || !*path)
        return;
    F.path = strdup(path);
    FILE *f = fopen(path, "rb");
    if (!f) {
        F.missing = 1;
        fail("AGX_TUNING_FILE=%s: cannot open: %s", path, strerror(errno));
        return;
    }
    char *text = NULL;
    size_t len = 0, cap = 0, got;
    do {
        if (len + 4096 > cap) {
            char *t = realloc(text, cap = 2 * cap + 4096);
            if (!t)
                break;
            text = t;
        }
        got = fread(text + len, 1, cap - len, f);
        len += got;
    } while (got > 0);
    int bad = ferror(f) || !text;
    fclose(f);
    if (bad) {
        free(text);
        fail("AGX_TUNING_FILE=%s: cannot read it", path);
        return;
    }
    F.hash = 1469598103934665603ULL;
    for (size_t i = 0; i < len; i++)
        F.hash = (F.hash ^ (unsigned char)text[i]) * 1099511628211ULL;
    parse(path, text, len);
    free(text);
    if (F.err) /* nothing of a bad file is used */
        agx_rules_free();
}

void agx_rules_free(void)
{
    for (int op = 0; op < AGX_OP_LAST + 2; op++)
        for (int k = 0; k < AGX_KIND_LAST; k++) {
            for (int i = 0; i < F.n[op][k]; i++)
                for (int j = 0; j < F.rules[op][k][i].nparams; j++)
                    free((char *)F.rules[op][k][i].pname[j]);
            free(F.rules[op][k]);
            F.rules[op][k] = NULL;
            F.n[op][k] = 0;
        }
}

/* At finalize: the next MPI_Init (a test's) reads the file again. */
void agx_rules_reset(void)
{
    pthread_mutex_lock(&flock);
    agx_rules_free();
    free(F.path), free(F.err);
    F.path = F.err = NULL;
    F.tried = F.missing = 0;
    pthread_mutex_unlock(&flock);
}

const char *agx_rules_path(void)
{
    return F.path;
}

const agx_rule *agx_rules_file(agx_op op, agx_kind kind, int *n)
{
    *n = F.n[op][kind];
    return F.rules[op][kind];
}

int agx_rules_file_io(int reads, int p, long long bytes, long long piece)
{
    const char *path = getenv("AGX_TUNING_FILE");
    int w = -1;
    if (!path || !*path)
        return -1;
    pthread_mutex_lock(&flock);
    if (!F.tried) {
        load();
        agx_at_finalize(agx_rules_reset);
    }
    const agx_rule *r = F.err ? NULL : F.rules[AGX_OP_LAST + reads][AGX_KIND_INTRA];
    for (int i = 0; r && i < F.n[AGX_OP_LAST + reads][AGX_KIND_INTRA] && w < 0; i++)
        if (agx_span_holds(r[i].size, p) && agx_span_holds(r[i].bytes, bytes) && agx_span_holds(r[i].piece, piece))
            w = r[i].kidx[0];
    pthread_mutex_unlock(&flock);
    return w;
}

int agx_rules_agree(agx_ctx *ctx, agx_sel *sel)
{
    const char *path = getenv("AGX_TUNING_FILE");
    if (!path || !*path) /* the environment is the same everywhere (as for every AGX_ setting) */
        return MPI_SUCCESS;
    pthread_mutex_lock(&flock);
    if (!F.tried) {
        load();
        agx_at_finalize(agx_rules_reset); /* the next MPI_Init (a test's) reads it again */
    }
    int mine = F.err ? agx_error(F.missing ? MPI_ERR_NO_SUCH_FILE : MPI_ERR_ARG, "%s", F.err) : MPI_SUCCESS;
    long long v[2] = {(long long)(F.hash >> 1), -(long long)(F.hash >> 1)};
    pthread_mutex_unlock(&flock);
    long long own[2] = {v[0], v[1]};
    int rc = agx_agree(ctx->pcomm, ctx->rank, mine, v, 2, "AGX_TUNING_FILE", "could not use it");
    if (ctx->kind == AGX_KIND_INTER) {
        /* an inter-communicator's allreduce gives each group the other group's verdict and
         * values: a second round, carrying both, gives every process everyone's */
        v[0] = v[0] > own[0] ? v[0] : own[0];
        v[1] = v[1] > own[1] ? v[1] : own[1];
        rc = agx_agree(ctx->pcomm, ctx->rank, rc, v, 2, "AGX_TUNING_FILE", "could not use it");
    }
    if (rc == MPI_SUCCESS && v[0] != -v[1])
        rc = agx_error(MPI_ERR_ARG, "AGX_TUNING_FILE=%s differs between the ranks of this communicator "
                       "(each node reads its own copy: make them the same)", path);
    if (rc != MPI_SUCCESS) {
        char s[MPI_MAX_ERROR_STRING];
        int l = 0;
        agx_error_string(rc, s, &l); /* agx's own message (MPICH's MPI_Error_string may not give it) */
        free(sel->rules_bad);
        sel->rules_bad = strdup(strncmp(s, "agx: ", 5) ? s : s + 5); /* agx_error adds it again */
    }
    sel->rules_on = rc == MPI_SUCCESS;
    return MPI_SUCCESS;
}
