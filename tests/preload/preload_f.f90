! An unmodified Fortran MPI program: MPI_ALLGATHER of each rank's number, checked.
! tests/preload_check.sh runs it under libagx-preload.so to test what README.md says
! of Fortran callers (MPICH: through agx; Open MPI 4.1: straight to PMPI).
program preload_f
  use mpi
  implicit none
  integer :: ierr, rank, nprocs, i, bad
  integer, allocatable :: got(:)
  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nprocs, ierr)
  allocate(got(nprocs))
  call MPI_ALLGATHER(rank, 1, MPI_INTEGER, got, 1, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  bad = 0
  do i = 1, nprocs
    if (got(i) /= i - 1) bad = bad + 1
  end do
  if (rank == 0) print '(A,I0,A)', 'preload_f: ', bad, ' wrong'
  call MPI_FINALIZE(ierr)
  if (bad /= 0) stop 1
end program preload_f
