/* The Fortran entries' shared conversions (src/preload/preload_fortran*.c; Open MPI builds
 * only): Open MPI's sentinels, statuses, strings, requests, ierror. */
#ifndef AGX_PRELOAD_FORTRAN_H
#define AGX_PRELOAD_FORTRAN_H

#include "preload.h"
#include "preload_fortran_names.h" /* generated: AGX_F_NAMES_*(X), X(target, name) per name */

#include <stddef.h>

/* A Fortran status: MPI_STATUS_SIZE integers (Open MPI: the C status's size in ints) */
#define AGX_F_STATUS_SIZE (sizeof(MPI_Status) / sizeof(MPI_Fint))
#define T(h) PMPI_Type_f2c(*(h))
#define C(h) PMPI_Comm_f2c(*(h))
#define O(h) PMPI_Op_f2c(*(h))
#define I(h) PMPI_Info_f2c(*(h))
/* A program whose MPI is not this build's (preload_foreign.c): its own Fortran function
 * fn (mpif.h's one-underscore name: every name of an operation here is one entry). */
#define AGX_F_FOREIGN(fn, name, ...)                                                       \
    do {                                                                                   \
        if (agx_preload_foreign()) {                                                       \
            ((__typeof(&fn))agx_preload_next(name))(__VA_ARGS__);                          \
            return;                                                                        \
        }                                                                                  \
    } while (0)
/* Every name the library's Fortran libraries define for an operation: an alias of its entry. */
#define AGX_F_ALIAS(target, name) extern __typeof(target) name __attribute__((alias(#target), visibility("default")));

void agx_f_sentinels(void);                 /* looks Open MPI's common blocks up, once */
const void *agx_f_buf(const void *b);       /* MPI_IN_PLACE / MPI_BOTTOM of Fortran -> C */
void agx_f_ret(MPI_Fint *ierr, int rc);     /* ierror, when present */
MPI_Status *agx_f_status(MPI_Fint *f, MPI_Status *tmp); /* tmp, or MPI_STATUS_IGNORE */
void agx_f_status_out(MPI_Fint *f, MPI_Status *c);       /* written back unless ignored */
int agx_f_statuses_ignored(const MPI_Fint *f);           /* MPI_STATUSES_IGNORE */
char *agx_f_string(const char *s, size_t len);          /* malloc'd, trailing blanks dropped */
void agx_f_request_out(MPI_Fint *f, MPI_Request r, int rc, MPI_Fint *ierr);

#endif
