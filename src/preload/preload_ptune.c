/*
 * ADCL's idea at a persistent collective's init (Gabriel, Huang, IPDPS 2007; AGX_ADAPT,
 * the preload's default; docs/algorithms.md, "Requests"): a small persistent allgather or
 * allreduce (at most TUNE_BYTES: the allgather's receive buffer, the allreduce's vector)
 * starts agx's plan and the library's own persistent call on scratch buffers, in rounds
 * in turn (TUNE_ROUNDS each: one untimed start, then TUNE_BLOCK back to back, timed),
 * through the program's own path (a start, MPI_Wait); the slowest rank's median rounds
 * are agreed (MAX), so every rank hands the program the same one, agx's only where it
 * is TUNE_MARGIN faster. (Single starts in turn measured each one after the other's: at
 * 2 ranks, 1 KiB, agx's plan 1.25 against 1.30 us there, 1.60 against 1.19 in a loop.) At these sizes the handle's relay (a receive posted and fired per
 * start) can cost more than agx's plan saves: 2 ranks, an 8 B allgather, agx's plan 0.32
 * us per start, through the handle 0.47-0.50, the library's 0.36-0.38; a 4-rank 8 B
 * allreduce through the handle 15.8 us against the library's 6.3. Not under MPICH, whose
 * own persistent allgather (4.0.2) returns stale blocks from its second start. What one
 * rank alone knows (its AGX_ADAPT, its types' layouts, its scratch, whether the reduction
 * gives the same bits in any order) is agreed before anything is made.
 */
#include "preload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#ifdef INIT
#define TUNE_ROUNDS 8  /* per candidate: rounds, in turn with the other's */
#define TUNE_BLOCK 8   /* starts timed back to back in a round, after one untimed */
#define TUNE_MARGIN 0.03 /* agx's plan is kept when at least this much faster */

#ifndef MPICH
/* AGX_TEST_PTUNE_SKEW=RANK:CAND:FACTOR (tests only): that rank (of MPI_COMM_WORLD) times
 * candidate CAND (0 agx's, 1 the library's) FACTOR times longer: a clock that disagrees. */
static double skew(int cand)
{
    int rank = -1, which = -1, me = -2;
    double factor = 1;
    const char *e = getenv("AGX_TEST_PTUNE_SKEW");
    if (!e || sscanf(e, "%d:%d:%lf", &rank, &which, &factor) != 3 || which != cand)
        return 1;
    PMPI_Comm_rank(MPI_COMM_WORLD, &me);
    return me == rank ? factor : 1;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* n starts, each completed, back to back through the program's path (a steady loop's
 * pace, not a start's after the other candidate's); their seconds (< 0: one failed). */
static double timed_starts(MPI_Request *h, int agxs, int n)
{
    double t0 = PMPI_Wtime();
    int rc = MPI_SUCCESS;
    for (int i = 0; i < n && rc == MPI_SUCCESS; i++)
        if ((rc = agxs ? agx_persist_start_quiet(*h) : MPI_Start(h)) == MPI_SUCCESS)
            rc = MPI_Wait(h, MPI_STATUS_IGNORE);
    return rc == MPI_SUCCESS ? PMPI_Wtime() - t0 : -1;
}
#endif

long long agx_ptune_span(MPI_Datatype t, long long count)
{
    MPI_Aint lb = 1, ext = 0, tlb = -1, text = 0;
    PMPI_Type_get_extent(t, &lb, &ext);
    PMPI_Type_get_true_extent(t, &tlb, &text);
    return !lb && tlb >= 0 && tlb + text <= ext ? count * ext : -1;
}

int agx_ptune_library_faster(const agx_ptune *c, MPI_Comm comm)
{
#ifdef MPICH
    return (void)c, (void)comm, 0;
#else
    const char *a = getenv("AGX_ADAPT");
    int p = 1, rank = 0, ok;
    PMPI_Comm_size(comm, &p);
    PMPI_Comm_rank(comm, &rank);
    if (p < 2 || c->bytes <= 0 || c->bytes > AGX_PTUNE_BYTES) /* alike on every rank (MPI's rule) */
        return 0;
    int mine = a && ((!strcmp(a, "1") && c->exact) || !strcasecmp(a, "any")) && c->room >= 0 && c->sroom >= 0 &&
               c->room + c->sroom <= 4 * AGX_PTUNE_BYTES;
    char *scratch = mine ? calloc((size_t)(c->room + c->sroom + 1), 1) : NULL; /* the program's buffers */
    MPI_Request h[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    int made = scratch != NULL; /* every rank, or none (agx's init is collective) */
    if (PMPI_Allreduce(&made, &ok, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS || !ok) {
        free(scratch);
        return 0;
    }
    const void *sbuf = c->in_place ? MPI_IN_PLACE : scratch + c->room; /* stay untouched */
    agx_request r = AGX_REQUEST_NULL;
    made = c->mk_agx(c->arg, sbuf, scratch, comm, &r) == MPI_SUCCESS; /* agreed there: alike everywhere */
    if (made && agx_persist_adopt(MPI_SUCCESS, &r, &h[0], c->op, comm, 0) != MPI_SUCCESS)
        made = 0, h[0] = MPI_REQUEST_NULL;
    made = made && c->mk_lib(c->arg, sbuf, scratch, comm, &h[1]) == MPI_SUCCESS;
    if (PMPI_Allreduce(&made, &ok, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS)
        ok = 0;
    double t[3] = {0, 0, 0}, s[2][TUNE_ROUNDS]; /* agx's, the library's (medians), a failure */
    for (int i = 0; ok && i < TUNE_ROUNDS; i++)
        for (int k = 0; k < 2; k++) {
            int w = (i + k) & 1; /* in turn, each first in turn: drift hits both alike */
            double dt = timed_starts(&h[w], w == 0, 1), bt = timed_starts(&h[w], w == 0, TUNE_BLOCK);
            t[2] = dt < 0 || bt < 0 ? 1 : t[2];
            s[w][i] = bt / TUNE_BLOCK * skew(w);
        }
    for (int w = 0; ok && w < 2; w++) { /* each rank's median round: a busy machine's spikes left out */
        qsort(s[w], TUNE_ROUNDS, sizeof(double), by_value);
        t[w] = (s[w][TUNE_ROUNDS / 2 - 1] + s[w][TUNE_ROUNDS / 2]) / 2;
    }
    if (ok)
        PMPI_Allreduce(MPI_IN_PLACE, t, 3, MPI_DOUBLE, MPI_MAX, comm);
    if (h[0] != MPI_REQUEST_NULL) /* the scratch candidates freed, agx's table entry too */
        MPI_Request_free(&h[0]);
    if (h[1] != MPI_REQUEST_NULL)
        PMPI_Request_free(&h[1]);
    free(scratch);
    int lib = ok && !t[2] && t[0] > t[1] * (1 - TUNE_MARGIN); /* a tie: the library's own */
    if (ok && !rank && agx_preload_set("AGX_VERBOSE"))
        fprintf(stderr, "agx: persistent %s (%d ranks): agx's plan %.3g us, the library's own %.3g us "
                "per start (the slowest rank's median of %d rounds of %d starts each): %s (AGX_ADAPT)\n", c->what, p,
                t[0] * 1e6, t[1] * 1e6, TUNE_ROUNDS, TUNE_BLOCK, lib ? "the library's own" : "agx's");
    return lib;
#endif
}
#endif
