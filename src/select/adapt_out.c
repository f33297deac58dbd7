/*
 * What the on-line choice (adapt.c) tells: its decisions under AGX_VERBOSE, the classes a
 * communicator learned (agx-info), and AGX_TUNING_OUT=FILE, the decisions written at
 * MPI_Finalize as a rules file (the format AGX_TUNING_FILE reads, docs/algorithms.md "Rules
 * files"), so that a second run starts where the first ended: a rules file's row chooses
 * before the default rule, and a class a row covers does not learn again; the per-file
 * choice of collective writes and reads (adapt_file.c) gives file_write_all /
 * file_read_all rows the same way.
 */
#include "select.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

int agx_adapt_from_env(void)
{
    const char *s = getenv("AGX_ADAPT");
    if (!s || !*s || !strcmp(s, "0"))
        return 0;
    if (!strcmp(s, "1"))
        return 1;
    return !strcasecmp(s, "any") ? 2 : -1;
}

int agx_adapt_after_from_env(void)
{
    long long n = AGX_LEARN_AFTER;
    return agx_env_int("AGX_ADAPT_AFTER", 0, 1000000, &n) < 0 ? -1 : (int)n; /* unset: the default */
}

/* The decisions kept for AGX_TUNING_OUT (this process's, written by world rank 0). */
typedef struct {
    agx_op op;
    agx_kind kind;
    int file;              /* 0: a collective's row; 1: file_write_all's, 2: file_read_all's */
    int p, nodes, ppn, cls, pcls; /* cls: the bytes' class; pcls: a file row's piece class */
    const char *alg;
    char note[160];
} out_row;
static out_row *rows;
static int nrows, caprows, out_rank = -1, out_hooked;
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;

static void out_write(void)
{
    const char *path = getenv("AGX_TUNING_OUT");
    if (path && *path && out_rank == 0) {
        FILE *f = fopen(path, "w");
        char host[128] = "?", lib[MPI_MAX_LIBRARY_VERSION_STRING] = "?";
        int len = 0, world = 0;
        gethostname(host, sizeof host);
        MPI_Get_library_version(lib, &len);
        for (int i = 0; i < len; i++)
            lib[i] = lib[i] == '\n' || lib[i] == '"' || lib[i] == '\\' ? ' ' : lib[i];
        MPI_Comm_size(MPI_COMM_WORLD, &world);
        if (!f) {
            fprintf(stderr, "agx: AGX_TUNING_OUT=%s: cannot write it\n", path);
        } else {
            fprintf(f, "{\"format\": \"agx-rules-1\",\n \"generated_by\": \"agx's on-line choice (AGX_ADAPT, "
                    "AGX_TUNING_OUT)\",\n \"machine\": \"%s\", \"mpi\": \"%.120s\", \"job\": {\"ranks\": %d},\n "
                    "\"rules\": [", host, lib, world);
            for (int i = 0; i < nrows; i++) {
                out_row *r = &rows[i];
                long long lo = r->cls ? 1LL << (r->cls - 1) : 0, hi = (1LL << r->cls) - 1;
                if (r->file) { /* the piece within a power of 4: classes 2 pcls and 2 pcls + 1 */
                    fprintf(f, "%s\n  {\"op\": \"%s\", \"comm_size\": \"%d-%d\", \"bytes\": \"%lld-%lld\", "
                            "\"piece\": \"%lld-%lld\", \"algorithm\": \"%s\", \"note\": \"%s\"}", i ? "," : "",
                            r->file == 1 ? "file_write_all" : "file_read_all", r->p, r->p, lo, hi,
                            r->pcls ? 1LL << (2 * r->pcls - 1) : 0, (1LL << (2 * r->pcls + 1)) - 1, r->alg, r->note);
                    continue;
                }
                fprintf(f, "%s\n  {\"op\": \"%s\", \"kind\": \"%s\", \"comm_size\": \"%d-%d\", ", i ? "," : "",
                        agx_op_get(r->op)->name, r->kind == AGX_KIND_INTER ? "inter" : "intra", r->p, r->p);
                if (r->kind == AGX_KIND_INTRA && r->nodes > 0)
                    fprintf(f, "\"nodes\": \"%d-%d\", \"ppn\": \"%d-%d\", ", r->nodes, r->nodes, r->ppn, r->ppn);
                fprintf(f, "\"bytes\": \"%lld-%lld\", \"algorithm\": \"%s\", \"note\": \"%s\"}", lo, hi, r->alg,
                        r->note);
            }
            fprintf(f, "\n ]}\n");
            fclose(f);
        }
    }
    free(rows);
    rows = NULL;
    nrows = caprows = 0;
    out_hooked = 0;
}

/* Keep one row per (op, kind, shape, class): the first decision of a class holds. */
static void out_keep(out_row r)
{
    pthread_mutex_lock(&out_lock);
    if (out_rank < 0)
        MPI_Comm_rank(MPI_COMM_WORLD, &out_rank);
    if (!out_hooked) {
        out_hooked = 1;
        agx_at_finalize(out_write);
    }
    int dup = 0;
    for (int i = 0; i < nrows && !dup; i++)
        dup = rows[i].op == r.op && rows[i].kind == r.kind && rows[i].file == r.file && rows[i].p == r.p &&
              rows[i].nodes == r.nodes && rows[i].ppn == r.ppn && rows[i].cls == r.cls && rows[i].pcls == r.pcls;
    if (!dup && nrows == caprows) {
        int cap = caprows ? 2 * caprows : 32;
        out_row *g = realloc(rows, sizeof *g * (size_t)cap);
        if (g)
            rows = g, caprows = cap;
    }
    if (!dup && nrows < caprows)
        rows[nrows++] = r;
    pthread_mutex_unlock(&out_lock);
}

/* "name 12.3 us, name 10.1 us, ..." of e's candidates. */
static void times(const agx_args *a, const agx_learn *e, char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int i = 0; i < e->ncand && at < len; i++)
        at += (size_t)snprintf(buf + at, len - at, "%s%s %.2f us", i ? ", " : "", agx_call_alg(a, e->cand[i])->name,
                               e->mean[i] * 1e6);
}

/* The windows this process ended, per operation (agx_print_windows, agx.h): AGX_STATS's line,
 * printed at MPI_Finalize, where AGX_VERBOSE's lines during the run cost time themselves
 * (the forwarding of stderr shares the cores). */
static struct {
    long long classes, calls;
    double s, extra_s;
} tally[AGX_OP_LAST];

void agx_print_windows(const char *prefix, FILE *out)
{
    for (int op = 0; op < AGX_OP_LAST; op++)
        if (tally[op].classes)
            fprintf(out, "%slearning windows: %s %lld classes, %lld calls, %.1f us, %+.1f us against the winners' "
                    "pace\n", prefix, agx_op_get((agx_op)op)->name, tally[op].classes,
                    tally[op].calls, tally[op].s * 1e6, tally[op].extra_s * 1e6);
}

void agx_learn_report(const agx_args *a, const agx_learn *e)
{
    double at_winner = e->mean[e->winner] * e->total;
    pthread_mutex_lock(&out_lock);
    tally[a->op].classes++, tally[a->op].calls += e->total;
    tally[a->op].s += e->window_s, tally[a->op].extra_s += e->window_s - at_winner;
    pthread_mutex_unlock(&out_lock);
    char t[256], note[160];
    times(a, e, t, sizeof t);
    snprintf(note, sizeof note, "learned on the run at %lld-%lld B: %s", e->lo, e->hi, t);
    const char *path = getenv("AGX_TUNING_OUT");
    if (path && *path) {
        const agx_regions *R = a->kind == AGX_KIND_INTRA ? a->ctx->reg : NULL;
        out_row r = {.op = a->op, .kind = a->kind, .p = a->p, .nodes = R ? R->r : 0, .ppn = R ? R->max_size : 0,
                     .alg = agx_call_alg(a, e->cand[e->winner])->name, .cls = agx_size_class(a->msg_bytes)};
        snprintf(r.note, sizeof r.note, "%s", note);
        out_keep(r);
    }
    if (a->rank != 0 || !agx_env_flag("AGX_VERBOSE"))
        return;
    char first[64] = "";
    if (e->cold)
        snprintf(first, sizeof first, " (the first %d the library's, untimed)", e->cold);
    fprintf(stderr, "agx: %s learned on %d ranks, %lld-%lld B: %s; runs %s (window of %d calls%s took %.1f us, "
            "%+.1f us against the winner's pace)\n", agx_op_get(a->op)->name, a->p, e->lo, e->hi, t,
            agx_call_alg(a, e->cand[e->winner])->name, e->total, first, e->window_s * 1e6,
            (e->window_s - at_winner) * 1e6);
}

void agx_flearn_keep(int p, int reads, int cls, int winner, const char *note)
{
    const char *path = getenv("AGX_TUNING_OUT");
    if (!path || !*path)
        return;
    out_row r = {.file = 1 + reads, .p = p, .cls = cls / 64, .pcls = cls % 64,
                 .alg = agx_flearn_name(winner, 0)};
    snprintf(r.note, sizeof r.note, "%s", note);
    out_keep(r);
}

void agx_learn_print(const agx_sel *sel, agx_op op, agx_kind kind, FILE *out)
{
    const agx_table *t = agx_table_of(op, kind);
    for (int i = 0; t && i < sel->nlearn; i++) {
        const agx_learn *e = &sel->learn[i];
        unsigned k = e->key - 1, sub = k % 8, cls = k / 8 % 64, ok = k / 8 / 64;
        if ((int)(ok / AGX_KIND_LAST) != (int)op || (int)(ok % AGX_KIND_LAST) != (int)kind)
            continue;
        if (e->state == AGX_LEARN_NEW) { /* its first calls, the library's (adapt.c, cold) */
            fprintf(out, "      %s (class %u, sub-class %u): the library's call for its first %d calls, %d made\n",
                    agx_op_get(op)->name, cls, sub, sel->adapt_after, e->cold);
            continue;
        }
        fprintf(out, "      %s, %lld-%lld B (class %u, sub-class %u): %s", agx_op_get(op)->name, e->lo, e->hi, cls, sub,
                e->state == AGX_LEARN_DONE ? "runs " : "learning, ");
        fprintf(out, "%s", t->algs[e->cand[e->state == AGX_LEARN_DONE ? e->winner : 0]].name);
        for (int j = 0; j < e->ncand && e->state == AGX_LEARN_DONE && e->ncand > 1; j++)
            fprintf(out, "%s%s %.2f us", j ? ", " : " (", t->algs[e->cand[j]].name, e->mean[j] * 1e6);
        fprintf(out, "%s\n", e->state == AGX_LEARN_DONE && e->ncand > 1 ? ")" : "");
    }
}
