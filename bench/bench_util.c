/* Small helpers shared by agx-bench's modes: sizes, comma-separated lists, the registry
 * listing (--list). */
#include "bench.h"

#include <errno.h>
#include <stdarg.h>
#include <getopt.h>
#include <jansson.h>
#include <unistd.h>
#include <math.h>
#include <sys/mman.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

long long parse_size(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || v < 0)
        return -1;
    if (*end == 'k' || *end == 'K')
        v *= 1024, end++;
    else if (*end == 'm' || *end == 'M')
        v *= 1024 * 1024, end++;
    else if (*end == 'g' || *end == 'G')
        v *= 1024.0 * 1024 * 1024, end++;
    return *end ? -1 : (long long)v;
}

int bench_int(const char *flag, const char *v, long long lo, long long hi, int *out, char *err, size_t errlen)
{
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (end == v || *end || errno || x < lo || x > hi)
        return snprintf(err, errlen, "%s %s: expected an integer in [%lld, %lld]", flag, v, lo, hi), -1;
    *out = (int)x;
    return 0;
}

int bench_range(const char *flag, const char *v, long long hi, long long *min, long long *max, char *err,
                size_t errlen)
{
    const char *colon = strchr(v, ':');
    char lo[64];
    snprintf(lo, sizeof lo, "%.*s", colon ? (int)(colon - v) : 0, v);
    long long b = parse_size(colon ? colon + 1 : v), a = colon ? parse_size(lo) : *min < b ? *min : b;
    if (a < 0 || b < 0 || a > b || b > hi)
        return snprintf(err, errlen, "%s %s: expected MIN:MAX or MAX, sizes with K, M or G, 0 <= MIN <= MAX <= %lld",
                        flag, v, hi), -1;
    *min = a;
    *max = b;
    return 0;
}

int bench_choice(const char *flag, const char *v, const char *zero, const char *one, int *out, char *err,
                 size_t errlen)
{
    if (strcmp(v, zero) && strcmp(v, one))
        return snprintf(err, errlen, "%s %s: %s or %s", flag, v, zero, one), -1;
    *out = !strcmp(v, one);
    return 0;
}

int bench_regions(const char *v, int *size, char *err, size_t errlen)
{
    int nr, ns;
    char tail;
    if (sscanf(v, "%dx%d%c", &nr, &ns, &tail) != 2 || nr < 1 || ns < 1)
        return snprintf(err, errlen, "--regions %s: expected NxM (N regions of M ranks)", v), -1;
    *size = ns;
    return 0;
}

int bench_split(const char *list, char **out, int max)
{
    char *dup = strdup(list), *save = NULL;
    int n = 0;
    for (char *t = strtok_r(dup, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (n == max) {
            n = -1;
            break;
        }
        out[n++] = strdup(t);
    }
    free(dup);
    return n;
}

/* A row's buffer of n bytes (1 at least), page-aligned, in a mapping of its own, every page
 * written: each row of a launch gets the same kind of memory. From malloc, the first row's
 * large buffers were fresh mappings and, once glibc had raised its mmap threshold on their
 * free, the later rows' came from the heap, where Open MPI's own MPI_Alltoallv of 256 KiB
 * pairs on 4 ranks ran 2.3x slower (this VM, 2026-11-27: 505-517 against 223-232 us p50,
 * `agx-bench alltoallv --pattern uniform --bytes 256K -a mpi,mpi,mpi,mpi`): whichever row
 * came first won. NULL when the mapping fails. */
void *bench_alloc(size_t n)
{
    void *p = mmap(NULL, n ? n : 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    memset(p, 0, n ? n : 1); /* touched, as a program's data are: no call times their page faults */
    return p;
}

void bench_free(void *p, size_t n)
{
    if (p)
        munmap(p, n ? n : 1);
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

void bench_summary(double *t, int n, double out[5])
{
    double sum = 0;
    for (int i = 0; i < n; i++)
        sum += t[i];
    qsort(t, (size_t)n, sizeof(double), cmp_double);
    out[0] = sum / n * 1e6, out[1] = t[0] * 1e6, out[2] = t[n - 1] * 1e6;
    out[3] = t[(n - 1) / 2] * 1e6, out[4] = t[(int)ceil(0.99 * n) - 1] * 1e6;
}

static struct {
    int mode; /* 0: none, 1: a terminal (one line rewritten), 2: --progress (whole lines) */
    int shown, lines;
    double start, last, delay;
} prog;

void bench_progress_init(int quiet, int forced, double delay)
{
    prog.mode = quiet ? 0 : isatty(2) ? 1 : forced ? 2 : 0;
    prog.shown = prog.lines = 0;
    prog.start = prog.last = MPI_Wtime();
    prog.delay = delay;
}

void bench_progress(const char *fmt, ...)
{
    double now = MPI_Wtime();
    if (!prog.mode || now - prog.start < prog.delay || (prog.mode == 2 && prog.lines && now - prog.last < 10.0))
        return;
    /* one write, after stdout's rows: mpirun forwards each write of each stream as it comes,
     * so a line written in parts may have a row of stdout inside it */
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    int n = snprintf(line, sizeof line, "%sagx-bench: ", prog.mode == 1 ? "\r\033[K" : "");
    n += vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    va_end(ap);
    if (n < (int)sizeof line)
        snprintf(line + n, sizeof line - (size_t)n, ", %.0f s%s", now - prog.start, prog.mode == 1 ? "" : "\n");
    fflush(stdout);
    fputs(line, stderr);
    fflush(stderr);
    prog.shown = prog.mode == 1;
    prog.lines++;
    prog.last = now;
}

void bench_progress_clear(void)
{
    if (prog.shown)
        fputs("\r\033[K", stderr), fflush(stderr);
    prog.shown = 0;
}

void bench_time_header(int full)
{
    if (full)
        printf(" %10s %10s %10s %10s %10s %6s", "Avg(us)", "Min(us)", "Max(us)", "P50(us)", "P99(us)", "Iters");
    else
        printf(" %10s", "Avg(us)");
}

void bench_time_cols(int full, const double t[5], int iters)
{
    if (full)
        printf(" %10.2f %10.2f %10.2f %10.2f %10.2f %6d", t[0], t[1], t[2], t[3], t[4], iters);
    else
        printf(" %10.2f", t[0]);
}

int bench_bad_option(int c, char *const *argv, char *err, size_t errlen)
{
    const char *last = optind > 0 ? argv[optind - 1] : "";
    char opt[64];
    if (!strncmp(last, "--", 2)) /* a long option: as given, without any =value */
        snprintf(opt, sizeof opt, "%.*s", (int)strcspn(last, "="), last);
    else
        snprintf(opt, sizeof opt, "-%c", optopt);
    if (c == ':')
        return snprintf(err, errlen, "%s needs a value", opt), -1;
    return snprintf(err, errlen, "unknown option '%s' (agx-bench MODE -h)", opt), -1;
}

int bench_mem_limit(options *o, int nprocs)
{
    int rank;
    long long per = o->op == AGX_OP_ALLREDUCE ? 2 : nprocs + 2; /* allgatherv: own block up to 2x */
    long long cap = o->mem_limit / per, max = o->min_bytes;
    if (!o->mem_limit || o->max_bytes <= cap)
        return 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (o->min_bytes > cap) {
        if (rank == 0)
            fprintf(stderr, "agx-bench: -M %lld: %lld bytes per process need %lld bytes of buffers\n", o->mem_limit,
                    o->min_bytes, o->min_bytes * per);
        return 1;
    }
    for (long long b = o->min_bytes; b <= cap; b = b ? b * o->mult : 1)
        max = b;
    if (rank == 0)
        printf("# -M %lld: sizes up to %lld bytes per process (%lld to %lld left out)\n", o->mem_limit, max,
               max ? max * o->mult : 1, o->max_bytes);
    o->max_bytes = max;
    return 0;
}

const char *bench_mpi_library(void)
{
    static char ver[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Get_library_version(ver, &len);
    ver[strcspn(ver, "\n")] = '\0';
    return ver;
}

static char g_command[4096];

void bench_note_command(int argc, char **argv)
{
    size_t n = 0;
    for (int i = 0; i < argc && n + 1 < sizeof g_command; i++)
        n += (size_t)snprintf(g_command + n, sizeof g_command - n, "%s%s", i ? " " : "", argv[i]);
}

char *bench_context_json(int nprocs, int warmup)
{
    char host[256] = "", date[64] = "", std[16];
    const char *ver = bench_mpi_library();
    int v, sv;
    MPI_Get_version(&v, &sv);
    snprintf(std, sizeof std, "%d.%d", v, sv);
    gethostname(host, sizeof host - 1);
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S%z", localtime(&now));
    json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:s, s:i, s:i}", "command", g_command, "host", host, "date", date,
                          "mpi", ver, "mpi_standard", std,
                          "nprocs", nprocs, "warmup", warmup);
    char *out = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    return out;
}

void bench_set_regions(int size)
{
    char v[32];
    if (!size)
        return;
    snprintf(v, sizeof v, "%d", size);
    setenv("AGX_REGION_SIZE", v, 1);
}

int bench_arg_error(int argc, char **argv, const char *err)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0)
        fprintf(stderr, "agx-bench: %s\n", err);
    MPI_Finalize();
    return 2;
}

int bench_close(FILE *f, const char *path)
{
    int bad = ferror(f);
    if (fclose(f) || bad) {
        fprintf(stderr, "agx-bench: could not write %s\n", path);
        return 1;
    }
    return 0;
}

int bench_outputs_writable(const char *csv, const char *json)
{
    int rank, bad = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0)
        for (int k = 0; k < 2; k++) {
            const char *path = k ? json : csv;
            FILE *f = path ? fopen(path, "a") : NULL; /* "a": an existing file keeps its data until the end */
            if (path && !f) {
                fprintf(stderr, "agx-bench: cannot write %s: %s\n", path, strerror(errno));
                bad = 1;
            }
            if (f)
                fclose(f);
        }
    MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return bad;
}

void bench_list_algorithms(void)
{
    static const char *kinds[] = {"intra-communicator", "inter-communicator"};
    for (int op = 0; op < AGX_OP_LAST; op++)
        for (int k = 0; k < AGX_KIND_LAST; k++) {
            int n = agx_algorithm_count((agx_op)op, (agx_kind)k);
            if (!n)
                continue;
            printf("%s (%s):\n", agx_op_name((agx_op)op), kinds[k]);
            for (int i = 0; i < n; i++) {
                const char *name, *desc, *cost, *cite;
                agx_algorithm_info((agx_op)op, (agx_kind)k, i, &name, &desc);
                agx_algorithm_details((agx_op)op, (agx_kind)k, i, &cost, &cite);
                printf("  %-20s %s [cost: %s; %s]\n", name, desc, cost, cite);
            }
        }
}

double bench_window_slack(void)
{
    double worst = 0, mine = 0, t = 0;
    for (int k = 0; k < 3; k++) {
        double t0 = MPI_Wtime();
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Bcast(&t, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        double d = MPI_Wtime() - t0;
        mine = d > mine ? d : mine;
    }
    MPI_Allreduce(&mine, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return 2 * worst + 5e-6;
}

void bench_late_report(int late, const char *alg, long long bytes)
{
    int me, lates = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Reduce(&late, &lates, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (me == 0 && lates)
        fprintf(stderr, "agx-bench: --sync window: %d rank-iterations of %s at %lld B started after the "
                "common time (timed from it)\n", lates, alg, bytes);
}

/* An iteration a rank reaches after the common time T is counted late and timed from T. The
 * window method needs a global clock (one host, SMPI). */
double bench_start(int window, double slack, int *late)
{
    int me;
    MPI_Barrier(MPI_COMM_WORLD);
    if (!window)
        return MPI_Wtime();
    double T = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    if (me == 0)
        T = MPI_Wtime() + slack;
    MPI_Bcast(&T, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (T < MPI_Wtime()) {
        (*late)++;
        return T;
    }
    bench_compute_until(T); /* SMPI: nanosleep advances the simulated clock exactly */
    return T;
}
