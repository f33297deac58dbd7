/* Fortran entries (Open MPI builds, preload_fortran.c says why): the request calls agx
 * must see (MPI_Start & co., MPI_Request_free, MPI_Wait & co., MPI_Test & co.), each
 * converting its requests, statuses, flags and 1-based indices around the C entry this
 * library defines. An array that cannot be converted (no memory) goes to the library's own
 * Fortran entry. */
#include "preload_fortran.h"
#if defined(OPEN_MPI) || defined(MPICH)

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

/* Requests and statuses of n Fortran handles, in one allocation (NULL: no memory). */
typedef struct {
    MPI_Request *r;
    MPI_Status *s;
} arrays;

static int arrays_in(arrays *a, int n, const MPI_Fint *f)
{
    a->r = malloc((sizeof(MPI_Request) + sizeof(MPI_Status)) * (size_t)(n > 0 ? n : 1));
    if (!a->r)
        return 0;
    a->s = (MPI_Status *)(void *)(a->r + (n > 0 ? n : 1));
    for (int i = 0; i < n; i++)
        a->r[i] = PMPI_Request_f2c(f[i]);
    return 1;
}

/* Requests back (all, or those idx[0..m) names), statuses back (unless ignored), freed. */
static void arrays_out(arrays *a, int n, MPI_Fint *f, MPI_Fint *fst, int m, const int *idx)
{
    int all = !idx;
    for (int j = 0; j < (all ? n : m); j++) {
        int i = all ? j : idx[j];
        f[i] = PMPI_Request_c2f(a->r[i]);
        if (!agx_f_statuses_ignored(fst))
            PMPI_Status_c2f(&a->s[all ? i : j], fst + (size_t)(all ? i : j) * AGX_F_STATUS_SIZE);
    }
    free(a->r);
}

/* No memory for the arrays: the library's own Fortran entry (and AGX_VERBOSE says so). */
static void *library(const char *name)
{
    void *fn = dlsym(RTLD_NEXT, name);
    if (getenv("AGX_VERBOSE"))
        fprintf(stderr, "agx-preload: %s: no memory to convert its arrays; the library's own\n", name);
    return fn;
}
typedef void (*f3)(MPI_Fint *, MPI_Fint *, MPI_Fint *);
typedef void (*f4)(MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *);
typedef void (*f5)(MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *);
typedef void (*f6)(MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *);

static void f_start(MPI_Fint *req, MPI_Fint *ierr)
{
    AGX_F_FOREIGN(f_start, "mpi_start_", req, ierr);
    MPI_Request r = PMPI_Request_f2c(*req);
    int rc = MPI_Start(&r);
    *req = PMPI_Request_c2f(r);
    agx_f_ret(ierr, rc);
}
static void f_startall(MPI_Fint *n, MPI_Fint *reqs, MPI_Fint *ierr)
{
    AGX_F_FOREIGN(f_startall, "mpi_startall_", n, reqs, ierr);
    arrays a;
    if (!arrays_in(&a, *n, reqs))
        return ((f3)library("pmpi_startall_"))(n, reqs, ierr);
    int rc = MPI_Startall(*n, a.r);
    arrays_out(&a, *n, reqs, NULL, 0, NULL);
    agx_f_ret(ierr, rc);
}
static void f_request_free(MPI_Fint *req, MPI_Fint *ierr)
{
    AGX_F_FOREIGN(f_request_free, "mpi_request_free_", req, ierr);
    MPI_Request r = PMPI_Request_f2c(*req);
    int rc = MPI_Request_free(&r);
    *req = PMPI_Request_c2f(r);
    agx_f_ret(ierr, rc);
}
static void f_wait(MPI_Fint *req, MPI_Fint *st, MPI_Fint *ierr)
{
    AGX_F_FOREIGN(f_wait, "mpi_wait_", req, st, ierr);
    MPI_Request r = PMPI_Request_f2c(*req);
    MPI_Status tmp, *s = agx_f_status(st, &tmp);
    int rc = MPI_Wait(&r, s);
    *req = PMPI_Request_c2f(r);
    agx_f_status_out(st, s);
    agx_f_ret(ierr, rc);
}
static void f_test(MPI_Fint *req, MPI_Fint *flag, MPI_Fint *st, MPI_Fint *ierr)
{
    AGX_F_FOREIGN(f_test, "mpi_test_", req, flag, st, ierr);
    MPI_Request r = PMPI_Request_f2c(*req);
    MPI_Status tmp, *s = agx_f_status(st, &tmp);
    int f = 0, rc = MPI_Test(&r, &f, s);
    *req = PMPI_Request_c2f(r);
    *flag = f != 0; /* gfortran's .TRUE. */
    if (f)
        agx_f_status_out(st, s);
    agx_f_ret(ierr, rc);
}
static void f_request_get_status(MPI_Fint *req, MPI_Fint *flag, MPI_Fint *st, MPI_Fint *ierr)
{
    AGX_F_FOREIGN(f_request_get_status, "mpi_request_get_status_", req, flag, st, ierr);
    MPI_Status tmp, *s = agx_f_status(st, &tmp);
    int f = 0, rc = MPI_Request_get_status(PMPI_Request_f2c(*req), &f, s);
    *flag = f != 0;
    if (f)
        agx_f_status_out(st, s);
    agx_f_ret(ierr, rc);
}
static void f_waitall(MPI_Fint *n, MPI_Fint *reqs, MPI_Fint *sts, MPI_Fint *ierr)
{
    AGX_F_FOREIGN(f_waitall, "mpi_waitall_", n, reqs, sts, ierr);
    arrays a;
    if (!arrays_in(&a, *n, reqs))
        return ((f4)library("pmpi_waitall_"))(n, reqs, sts, ierr);
    int rc = MPI_Waitall(*n, a.r, agx_f_statuses_ignored(sts) ? MPI_STATUSES_IGNORE : a.s);
    arrays_out(&a, *n, reqs, sts, 0, NULL);
    agx_f_ret(ierr, rc);
}
static void f_testall(MPI_Fint *n, MPI_Fint *reqs, MPI_Fint *flag, MPI_Fint *sts, MPI_Fint *ierr)
{
    AGX_F_FOREIGN(f_testall, "mpi_testall_", n, reqs, flag, sts, ierr);
    arrays a;
    if (!arrays_in(&a, *n, reqs))
        return ((f5)library("pmpi_testall_"))(n, reqs, flag, sts, ierr);
    int f = 0, rc = MPI_Testall(*n, a.r, &f, agx_f_statuses_ignored(sts) ? MPI_STATUSES_IGNORE : a.s);
    *flag = f != 0;
    arrays_out(&a, *n, reqs, f ? sts : NULL, 0, NULL);
    agx_f_ret(ierr, rc);
}
/* waitany / testany: one index (1-based in Fortran, MPI_UNDEFINED as is) and one status */
static void any(int test, MPI_Fint *n, MPI_Fint *reqs, MPI_Fint *idx, MPI_Fint *flag, MPI_Fint *st, MPI_Fint *ierr)
{
    arrays a;
    if (!arrays_in(&a, *n, reqs)) {
        if (test)
            return ((f6)library("pmpi_testany_"))(n, reqs, idx, flag, st, ierr);
        return ((f5)library("pmpi_waitany_"))(n, reqs, idx, st, ierr);
    }
    MPI_Status tmp, *s = agx_f_status(st, &tmp);
    int i = MPI_UNDEFINED, f = 1, rc = test ? MPI_Testany(*n, a.r, &i, &f, s) : MPI_Waitany(*n, a.r, &i, s);
    for (int j = 0; j < *n; j++)
        reqs[j] = PMPI_Request_c2f(a.r[j]);
    free(a.r);
    *idx = i == MPI_UNDEFINED ? MPI_UNDEFINED : i + 1;
    if (test)
        *flag = f != 0;
    if (f && i != MPI_UNDEFINED)
        agx_f_status_out(st, s);
    agx_f_ret(ierr, rc);
}
static void f_waitany(MPI_Fint *n, MPI_Fint *reqs, MPI_Fint *idx, MPI_Fint *st, MPI_Fint *ierr)
{
    AGX_F_FOREIGN(f_waitany, "mpi_waitany_", n, reqs, idx, st, ierr);
    any(0, n, reqs, idx, NULL, st, ierr);
}
static void f_testany(MPI_Fint *n, MPI_Fint *reqs, MPI_Fint *idx, MPI_Fint *flag, MPI_Fint *st, MPI_Fint *ierr)
{
    AGX_F_FOREIGN(f_testany, "mpi_testany_", n, reqs, idx, flag, st, ierr);
    any(1, n, reqs, idx, flag, st, ierr);
}
/* waitsome / testsome: outcount and 1-based indices, a status per completed request */
static void some(int test, MPI_Fint *n, MPI_Fint *reqs, MPI_Fint *out, MPI_Fint *idx, MPI_Fint *sts, MPI_Fint *ierr)
{
    arrays a;
    if (!arrays_in(&a, *n, reqs))
        return ((f6)library(test ? "pmpi_testsome_" : "pmpi_waitsome_"))(n, reqs, out, idx, sts, ierr);
    int m = 0, rc = (test ? MPI_Testsome : MPI_Waitsome)(*n, a.r, &m, idx,
                                                        agx_f_statuses_ignored(sts) ? MPI_STATUSES_IGNORE : a.s);
    for (int j = 0; j < m && m != MPI_UNDEFINED && !agx_f_statuses_ignored(sts); j++)
        PMPI_Status_c2f(&a.s[j], sts + (size_t)j * AGX_F_STATUS_SIZE); /* a status per index */
    arrays_out(&a, *n, reqs, NULL, 0, NULL);                            /* every handle back */
    *out = m;
    for (int j = 0; j < m && m != MPI_UNDEFINED; j++)
        idx[j] += 1;
    agx_f_ret(ierr, rc);
}
static void f_waitsome(MPI_Fint *n, MPI_Fint *reqs, MPI_Fint *out, MPI_Fint *idx, MPI_Fint *sts, MPI_Fint *ierr)
{
    AGX_F_FOREIGN(f_waitsome, "mpi_waitsome_", n, reqs, out, idx, sts, ierr);
    some(0, n, reqs, out, idx, sts, ierr);
}
static void f_testsome(MPI_Fint *n, MPI_Fint *reqs, MPI_Fint *out, MPI_Fint *idx, MPI_Fint *sts, MPI_Fint *ierr)
{
    AGX_F_FOREIGN(f_testsome, "mpi_testsome_", n, reqs, out, idx, sts, ierr);
    some(1, n, reqs, out, idx, sts, ierr);
}

AGX_F_NAMES_REQ(AGX_F_ALIAS)
#endif
