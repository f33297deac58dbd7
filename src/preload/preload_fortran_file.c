/* Fortran entries (Open MPI builds, preload_fortran.c says why): the MPI-IO calls
 * collective writes and reads need, around the C entries this library defines. CHARACTER arguments
 * arrive with their lengths as hidden arguments after the others (gfortran: size_t);
 * INTEGER(KIND=MPI_OFFSET_KIND) offsets as MPI_Offset. */
#include "preload_fortran.h"
#if defined(OPEN_MPI) || defined(MPICH)

#include <stdlib.h>

static MPI_File F(const MPI_Fint *fh) { return PMPI_File_f2c(*fh); }

static void f_file_open(MPI_Fint *comm, char *name, MPI_Fint *amode, MPI_Fint *info, MPI_Fint *fh, MPI_Fint *ierr,
                        size_t len)
{
    AGX_F_FOREIGN(f_file_open, "mpi_file_open_", comm, name, amode, info, fh, ierr, len);
    char *path = agx_f_string(name, len);
    MPI_File c = MPI_FILE_NULL;
    int rc = path ? MPI_File_open(C(comm), path, *amode, I(info), &c) : MPI_ERR_NO_MEM;
    free(path);
    if (rc == MPI_SUCCESS)
        *fh = PMPI_File_c2f(c);
    agx_f_ret(ierr, rc);
}
static void f_file_set_view(MPI_Fint *fh, MPI_Offset *disp, MPI_Fint *etype, MPI_Fint *ftype, char *rep,
                            MPI_Fint *info, MPI_Fint *ierr, size_t len)
{
    AGX_F_FOREIGN(f_file_set_view, "mpi_file_set_view_", fh, disp, etype, ftype, rep, info, ierr, len);
    char *datarep = agx_f_string(rep, len);
    int rc = datarep ? MPI_File_set_view(F(fh), *disp, T(etype), T(ftype), datarep, I(info)) : MPI_ERR_NO_MEM;
    free(datarep);
    agx_f_ret(ierr, rc);
}
static void f_file_set_info(MPI_Fint *fh, MPI_Fint *info, MPI_Fint *ierr)
{
    AGX_F_FOREIGN(f_file_set_info, "mpi_file_set_info_", fh, info, ierr);
    agx_f_ret(ierr, MPI_File_set_info(F(fh), I(info)));
}
#ifdef OPEN_MPI /* MPICH's mpi_f08 writes reach the C entries (descriptors for buffers) */
static void f_file_write_all(MPI_Fint *fh, void *buf, MPI_Fint *count, MPI_Fint *t, MPI_Fint *st, MPI_Fint *ierr)
{
    AGX_F_FOREIGN(f_file_write_all, "mpi_file_write_all_", fh, buf, count, t, st, ierr);
    MPI_Status tmp, *s = agx_f_status(st, &tmp);
    int rc = MPI_File_write_all(F(fh), agx_f_buf(buf), *count, T(t), s);
    agx_f_status_out(st, s);
    agx_f_ret(ierr, rc);
}
static void f_file_write_at_all(MPI_Fint *fh, MPI_Offset *off, void *buf, MPI_Fint *count, MPI_Fint *t, MPI_Fint *st,
                                MPI_Fint *ierr)
{
    AGX_F_FOREIGN(f_file_write_at_all, "mpi_file_write_at_all_", fh, off, buf, count, t, st, ierr);
    MPI_Status tmp, *s = agx_f_status(st, &tmp);
    int rc = MPI_File_write_at_all(F(fh), *off, agx_f_buf(buf), *count, T(t), s);
    agx_f_status_out(st, s);
    agx_f_ret(ierr, rc);
}
static void f_file_read_all(MPI_Fint *fh, void *buf, MPI_Fint *count, MPI_Fint *t, MPI_Fint *st, MPI_Fint *ierr)
{
    AGX_F_FOREIGN(f_file_read_all, "mpi_file_read_all_", fh, buf, count, t, st, ierr);
    MPI_Status tmp, *s = agx_f_status(st, &tmp);
    int rc = MPI_File_read_all(F(fh), (void *)agx_f_buf(buf), *count, T(t), s);
    agx_f_status_out(st, s);
    agx_f_ret(ierr, rc);
}
static void f_file_read_at_all(MPI_Fint *fh, MPI_Offset *off, void *buf, MPI_Fint *count, MPI_Fint *t, MPI_Fint *st,
                               MPI_Fint *ierr)
{
    AGX_F_FOREIGN(f_file_read_at_all, "mpi_file_read_at_all_", fh, off, buf, count, t, st, ierr);
    MPI_Status tmp, *s = agx_f_status(st, &tmp);
    int rc = MPI_File_read_at_all(F(fh), *off, (void *)agx_f_buf(buf), *count, T(t), s);
    agx_f_status_out(st, s);
    agx_f_ret(ierr, rc);
}
#endif
static void f_file_close(MPI_Fint *fh, MPI_Fint *ierr)
{
    AGX_F_FOREIGN(f_file_close, "mpi_file_close_", fh, ierr);
    MPI_File c = F(fh);
    int rc = MPI_File_close(&c);
    *fh = PMPI_File_c2f(c);
    agx_f_ret(ierr, rc);
}

AGX_F_NAMES_FILE(AGX_F_ALIAS)
#endif
