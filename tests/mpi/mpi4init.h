/* INIT(name): MPI-4's persistent collective init (MPI_<name>_init), or Open MPI 4.1's
 * MPIX_<name>_init (its pcollreq extension); undefined where the MPI has neither. */
#ifndef AGX_MPI4INIT_H
#define AGX_MPI4INIT_H
#include <mpi.h>
#if defined(OPEN_MPI) && MPI_VERSION < 4
#include <mpi-ext.h>
#endif
#if MPI_VERSION >= 4
#define INIT(name) MPI_##name##_init
#elif defined(OMPI_HAVE_MPI_EXT_PCOLLREQ)
#define INIT(name) MPIX_##name##_init
#endif
#endif
