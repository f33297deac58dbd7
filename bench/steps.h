/*
 * What bench/file_steps.c, comm_steps.c and dsum.c share (mpicc-only programs: no agx
 * header or library): the median of a step's times, and the persistent allreduce's and
 * alltoallv's inits (Open MPI 4.1: MPIX_..._init).
 */
#ifndef AGX_BENCH_STEPS_H
#define AGX_BENCH_STEPS_H

#include <mpi.h>
#if defined(OPEN_MPI) && MPI_VERSION < 4
#include <mpi-ext.h>
#endif
#include <stdlib.h>

#if MPI_VERSION >= 4
#define INIT_AR MPI_Allreduce_init
#define INIT_A2A MPI_Alltoallv_init
#elif defined(OMPI_HAVE_MPI_EXT_PCOLLREQ)
#define INIT_AR MPIX_Allreduce_init
#define INIT_A2A MPIX_Alltoallv_init
#endif

static int steps_by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* v sorted; its middle element (the upper one of an even count). */
static inline double steps_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, steps_by_value);
    return v[n / 2];
}

#endif
