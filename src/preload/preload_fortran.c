/*
 * Fortran callers under Open MPI (README.md, "Without changing the program"): Open MPI
 * 4.1's Fortran bindings (libmpi_mpifh for mpif.h and `use mpi`, libmpi_usempif08 for
 * `use mpi_f08`) call PMPI_Allreduce & co. directly, so a Fortran program never reached
 * the C entries of this library. Here each operation the preload takes gets a Fortran
 * entry: the arguments converted as a binding does (handles through MPI_*_f2c / _c2f,
 * MPI_Fint counts, statuses through MPI_Status_f2c / _c2f, Open MPI's Fortran sentinels
 * MPI_IN_PLACE, MPI_BOTTOM, MPI_STATUS(ES)_IGNORE found once by their common blocks'
 * addresses, LOGICAL flags, 1-based indices, CHARACTER arguments with their hidden
 * lengths), then the C entry this library defines (MPI_Allreduce, MPI_Wait, ...), which
 * takes the call into agx, counts it, or leaves it to the library exactly as it does for
 * C callers; ierror set when present (mpi_f08's is optional).
 * The names: one function per operation here; every name the MPI library's Fortran
 * libraries define for it (the four manglings of mpif.h and `use mpi`, mpi_f08's
 * mpi_<name>_f08_) becomes an alias of it. CMake reads those names from the libraries'
 * symbol tables (cmake/fortran_names.cmake) into preload_fortran_names.h.
 * Under MPICH none of this is built: its Fortran bindings call the C MPI_ entries, which
 * this library already defines, so each call is taken (and counted) once.
 */
#include "preload_fortran.h"
#if defined(OPEN_MPI) || defined(MPICH)

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(MPI_Fint) == sizeof(int), "the count arrays are passed through as int arrays");

/* Open MPI's Fortran sentinels: the addresses of their common blocks. */
static void *f_in_place, *f_bottom, *f_status_ignore, *f_statuses_ignore;

#ifdef OPEN_MPI
static void *common(const char *base)
{
    char name[64];
    static const char *const forms[] = {"%s_", "%s", "%s__"};
    for (int i = 0; i < 3; i++) {
        snprintf(name, sizeof name, forms[i], base);
        void *p = dlsym(RTLD_DEFAULT, name);
        if (p)
            return p;
    }
    return NULL;
}
#endif

void agx_f_sentinels(void)
{
    static int done;
    if (done)
        return;
#ifdef OPEN_MPI
    f_in_place = common("mpi_fortran_in_place");
    f_bottom = common("mpi_fortran_bottom");
    f_status_ignore = common("mpi_fortran_status_ignore");
    f_statuses_ignore = common("mpi_fortran_statuses_ignore");
#else /* MPICH: mpi_f08's (the only entries an MPICH build defines) */
    f_status_ignore = dlsym(RTLD_DEFAULT, "MPIR_F08_MPI_STATUS_IGNORE_OBJ");
    f_statuses_ignore = dlsym(RTLD_DEFAULT, "MPIR_F08_MPI_STATUSES_IGNORE_OBJ");
#endif
    done = 1;
}

const void *agx_f_buf(const void *b)
{
    agx_f_sentinels();
    return b && b == f_in_place ? MPI_IN_PLACE : b && b == f_bottom ? MPI_BOTTOM : b;
}

void agx_f_ret(MPI_Fint *ierr, int rc)
{
    if (ierr) /* mpi_f08's ierror is optional: absent, the address is NULL */
        *ierr = (MPI_Fint)rc;
}

/* A Fortran status out: the C one written back unless the caller ignores it. */
MPI_Status *agx_f_status(MPI_Fint *f, MPI_Status *tmp)
{
    agx_f_sentinels();
    return f && f != f_status_ignore && f != f_statuses_ignore ? tmp : MPI_STATUS_IGNORE;
}

int agx_f_statuses_ignored(const MPI_Fint *f)
{
    agx_f_sentinels();
    return !f || f == f_statuses_ignore || f == f_status_ignore;
}

void agx_f_status_out(MPI_Fint *f, MPI_Status *c)
{
    if (c != MPI_STATUS_IGNORE)
        PMPI_Status_c2f(c, f);
}

/* A fixed-length Fortran string, its trailing blanks dropped (freed by the caller). */
char *agx_f_string(const char *s, size_t len)
{
    while (len > 0 && s[len - 1] == ' ')
        len--;
    char *c = malloc(len + 1);
    if (c) {
        memcpy(c, s, len);
        c[len] = '\0';
    }
    return c;
}

/* MPI_FINALIZE: the C entry, whose report (AGX_STATS, AGX_VERBOSE) says what went through agx */
static void f_finalize(MPI_Fint *ierr) { agx_f_ret(ierr, MPI_Finalize()); }
AGX_F_NAMES_MISC(AGX_F_ALIAS)

#ifdef OPEN_MPI
/* ---- the collectives --------------------------------------------------------------- */
static void f_allgather(void *sb, MPI_Fint *sc, MPI_Fint *st, void *rb, MPI_Fint *rc_, MPI_Fint *rt, MPI_Fint *comm,
                        MPI_Fint *ierr)
{
    AGX_F_FOREIGN(f_allgather, "mpi_allgather_", sb, sc, st, rb, rc_, rt, comm, ierr);
    agx_f_ret(ierr, MPI_Allgather(agx_f_buf(sb), *sc, T(st), (void *)agx_f_buf(rb), *rc_, T(rt), C(comm)));
}
static void f_allgatherv(void *sb, MPI_Fint *sc, MPI_Fint *st, void *rb, MPI_Fint *rcs, MPI_Fint *dis, MPI_Fint *rt,
                         MPI_Fint *comm, MPI_Fint *ierr)
{
    AGX_F_FOREIGN(f_allgatherv, "mpi_allgatherv_", sb, sc, st, rb, rcs, dis, rt, comm, ierr);
    agx_f_ret(ierr, MPI_Allgatherv(agx_f_buf(sb), *sc, T(st), (void *)agx_f_buf(rb), rcs, dis, T(rt), C(comm)));
}
static void f_allreduce(void *sb, void *rb, MPI_Fint *n, MPI_Fint *t, MPI_Fint *op, MPI_Fint *comm, MPI_Fint *ierr)
{
    AGX_F_FOREIGN(f_allreduce, "mpi_allreduce_", sb, rb, n, t, op, comm, ierr);
    agx_f_ret(ierr, MPI_Allreduce(agx_f_buf(sb), (void *)agx_f_buf(rb), *n, T(t), O(op), C(comm)));
}
static void f_alltoallv(void *sb, MPI_Fint *scs, MPI_Fint *sds, MPI_Fint *st, void *rb, MPI_Fint *rcs, MPI_Fint *rds,
                        MPI_Fint *rt, MPI_Fint *comm, MPI_Fint *ierr)
{
    AGX_F_FOREIGN(f_alltoallv, "mpi_alltoallv_", sb, scs, sds, st, rb, rcs, rds, rt, comm, ierr);
    agx_f_ret(ierr, MPI_Alltoallv(agx_f_buf(sb), scs, sds, T(st), (void *)agx_f_buf(rb), rcs, rds, T(rt), C(comm)));
}

/* A request out: its Fortran handle. */
void agx_f_request_out(MPI_Fint *f, MPI_Request r, int rc, MPI_Fint *ierr)
{
    if (rc == MPI_SUCCESS)
        *f = PMPI_Request_c2f(r);
    agx_f_ret(ierr, rc);
}
static void f_iallgather(void *sb, MPI_Fint *sc, MPI_Fint *st, void *rb, MPI_Fint *rc_, MPI_Fint *rt, MPI_Fint *comm,
                         MPI_Fint *req, MPI_Fint *ierr)
{
    AGX_F_FOREIGN(f_iallgather, "mpi_iallgather_", sb, sc, st, rb, rc_, rt, comm, req, ierr);
    MPI_Request r;
    agx_f_request_out(req, r, MPI_Iallgather(agx_f_buf(sb), *sc, T(st), (void *)agx_f_buf(rb), *rc_, T(rt), C(comm), &r), ierr);
}
static void f_iallgatherv(void *sb, MPI_Fint *sc, MPI_Fint *st, void *rb, MPI_Fint *rcs, MPI_Fint *dis, MPI_Fint *rt,
                          MPI_Fint *comm, MPI_Fint *req, MPI_Fint *ierr)
{
    AGX_F_FOREIGN(f_iallgatherv, "mpi_iallgatherv_", sb, sc, st, rb, rcs, dis, rt, comm, req, ierr);
    MPI_Request r;
    agx_f_request_out(req, r, MPI_Iallgatherv(agx_f_buf(sb), *sc, T(st), (void *)agx_f_buf(rb), rcs, dis, T(rt), C(comm), &r), ierr);
}
static void f_iallreduce(void *sb, void *rb, MPI_Fint *n, MPI_Fint *t, MPI_Fint *op, MPI_Fint *comm, MPI_Fint *req,
                         MPI_Fint *ierr)
{
    AGX_F_FOREIGN(f_iallreduce, "mpi_iallreduce_", sb, rb, n, t, op, comm, req, ierr);
    MPI_Request r;
    agx_f_request_out(req, r, MPI_Iallreduce(agx_f_buf(sb), (void *)agx_f_buf(rb), *n, T(t), O(op), C(comm), &r), ierr);
}

#ifdef INIT /* MPI-4's persistent collectives (Open MPI 4.1: MPIX_), as the C entries */
static void f_allgather_init(void *sb, MPI_Fint *sc, MPI_Fint *st, void *rb, MPI_Fint *rc_, MPI_Fint *rt,
                             MPI_Fint *comm, MPI_Fint *info, MPI_Fint *req, MPI_Fint *ierr)
{
    AGX_F_FOREIGN(f_allgather_init, "mpix_allgather_init_", sb, sc, st, rb, rc_, rt, comm, info, req, ierr);
    MPI_Request r;
    agx_f_request_out(req, r, INIT(Allgather)(agx_f_buf(sb), *sc, T(st), (void *)agx_f_buf(rb), *rc_, T(rt), C(comm), I(info), &r), ierr);
}
static void f_allgatherv_init(void *sb, MPI_Fint *sc, MPI_Fint *st, void *rb, MPI_Fint *rcs, MPI_Fint *dis,
                              MPI_Fint *rt, MPI_Fint *comm, MPI_Fint *info, MPI_Fint *req, MPI_Fint *ierr)
{
    AGX_F_FOREIGN(f_allgatherv_init, "mpix_allgatherv_init_", sb, sc, st, rb, rcs, dis, rt, comm, info, req, ierr);
    MPI_Request r;
    agx_f_request_out(req, r,
         INIT(Allgatherv)(agx_f_buf(sb), *sc, T(st), (void *)agx_f_buf(rb), rcs, dis, T(rt), C(comm), I(info), &r), ierr);
}
static void f_allreduce_init(void *sb, void *rb, MPI_Fint *n, MPI_Fint *t, MPI_Fint *op, MPI_Fint *comm,
                             MPI_Fint *info, MPI_Fint *req, MPI_Fint *ierr)
{
    AGX_F_FOREIGN(f_allreduce_init, "mpix_allreduce_init_", sb, rb, n, t, op, comm, info, req, ierr);
    MPI_Request r;
    agx_f_request_out(req, r, INIT(Allreduce)(agx_f_buf(sb), (void *)agx_f_buf(rb), *n, T(t), O(op), C(comm), I(info), &r), ierr);
}
static void f_alltoallv_init(void *sb, MPI_Fint *scs, MPI_Fint *sds, MPI_Fint *st, void *rb, MPI_Fint *rcs,
                             MPI_Fint *rds, MPI_Fint *rt, MPI_Fint *comm, MPI_Fint *info, MPI_Fint *req, MPI_Fint *ierr)
{
    AGX_F_FOREIGN(f_alltoallv_init, "mpix_alltoallv_init_", sb, scs, sds, st, rb, rcs, rds, rt, comm, info, req, ierr);
    MPI_Request r;
    agx_f_request_out(req, r,
         INIT(Alltoallv)(agx_f_buf(sb), scs, sds, T(st), (void *)agx_f_buf(rb), rcs, rds, T(rt), C(comm), I(info), &r), ierr);
}
AGX_F_NAMES_INIT(AGX_F_ALIAS)
#endif

AGX_F_NAMES_COLL(AGX_F_ALIAS)
#endif
#endif
