! An unmodified Fortran MPI program calling every operation libagx-preload.so takes, in
! the binding style chosen when it is compiled: -DUSE_MPIFH (include 'mpif.h'), -DUSE_F08
! (`use mpi_f08`: handles of the derived types, optional ierror, TYPE(MPI_Status)), default
! `use mpi`. Each result is checked here and
! printed as "result NAME VALUE" lines, so tests/preload_check.sh can also compare a
! preloaded run with a plain one. -DPINIT=name: the persistent allreduce init
! (MPIX_ALLREDUCE_INIT under Open MPI 4.1, with -DPINIT_EXT for its extension module;
! MPI_ALLREDUCE_INIT under MPI-4 libraries).
! Needs 2 or more ranks and MPI_THREAD_MULTIPLE (agx's progress thread for the requests).
program preload_f
#if defined(USE_F08)
  use mpi_f08
#ifdef PINIT_EXT
  use mpi_f08_ext
#endif
#elif !defined(USE_MPIFH)
  use mpi
#ifdef PINIT_EXT
  use mpi_ext
#endif
#endif
  implicit none
#ifdef USE_MPIFH
  include 'mpif.h'
#ifdef PINIT_EXT
  include 'mpif-ext.h'
#endif
#endif
#ifdef USE_F08
  integer :: ierr, rank, np, i, bad, provided, half, color
  type(MPI_Comm) :: inter, split
  type(MPI_File) :: fh
  type(MPI_Datatype) :: vtype, btype
  type(MPI_Request) :: pr, reqs(6)
  type(MPI_Status) :: sts(6), st
  integer :: scnt(64), sdsp(64), rcnt(64), rdsp(64), idx, outc, idxs(6)
#else
  integer :: ierr, rank, np, i, bad, provided, inter, split, half, color, fh, vtype, btype, pr
  integer :: scnt(64), sdsp(64), rcnt(64), rdsp(64), reqs(6), sts(MPI_STATUS_SIZE, 6), idx, outc, idxs(6)
  integer :: st(MPI_STATUS_SIZE)
#endif
  integer :: ival(4), rval(4), imax, gv(64), counts(64), displs(64), a2s(64)
  ! written by non-blocking and persistent calls behind the compiler's back: reloaded after
  ! each completion (MPI-3 Sec. 17.1.17; MPICH 4.0.2's MPI_F_SYNC_REG crashes with `use mpi`)
  integer, volatile :: isum(4), gath(64), a2r(64)
  integer, volatile :: one(1)
  integer(kind=MPI_ADDRESS_KIND) :: addr(1)
  integer(kind=MPI_OFFSET_KIND) :: disp, off, fsum
  double precision :: dval(3), dsum(3)
  logical :: flag
  character(len=64) :: fname

  call MPI_INIT_THREAD(MPI_THREAD_MULTIPLE, provided, ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, np, ierr)
  bad = 0
  ! MPI_ALLREDUCE: integer SUM and MAX, double precision SUM, in place
  ival = [rank, 2 * rank, 1, -rank]
  call MPI_ALLREDUCE(ival, isum, 4, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check('allreduce_sum', isum(2) == np * (np - 1) .and. isum(3) == np .and. ierr == MPI_SUCCESS, isum(2))
  call MPI_ALLREDUCE(rank, imax, 1, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, ierr)
  call check('allreduce_max', imax == np - 1, imax)
  dval = [dble(rank), 0.5d0, 1.0d0]
  call MPI_ALLREDUCE(dval, dsum, 3, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check('allreduce_double', dsum(1) == dble(np * (np - 1) / 2) .and. dsum(2) == 0.5d0 * np, int(dsum(1)))
  ival = [rank, 1, 1, 1]
  call MPI_ALLREDUCE(MPI_IN_PLACE, ival, 4, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check('allreduce_in_place', ival(1) == np * (np - 1) / 2 .and. ival(4) == np, ival(1))
  ! MPI_ALLGATHER, in place, and from MPI_BOTTOM through an absolute-address type
  call MPI_ALLGATHER(rank + 10, 1, MPI_INTEGER, gath, 1, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  call check('allgather', all([(gath(i) == i + 9, i = 1, np)]), sum(gath(1:np)))
  gath(rank + 1) = 3 * rank
  call MPI_ALLGATHER(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, gath, 1, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  call check('allgather_in_place', all([(gath(i) == 3 * (i - 1), i = 1, np)]), sum(gath(1:np)))
  one(1) = 7 * rank
  call MPI_GET_ADDRESS(one, addr(1), ierr)
  call MPI_TYPE_CREATE_HINDEXED(1, [1], addr, MPI_INTEGER, btype, ierr)
  call MPI_TYPE_COMMIT(btype, ierr)
  call MPI_ALLGATHER(MPI_BOTTOM, 1, btype, gath, 1, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  call check('allgather_bottom', all([(gath(i) == 7 * (i - 1), i = 1, np)]), sum(gath(1:np)))
  call MPI_TYPE_FREE(btype, ierr)
  ! MPI_ALLGATHERV: rank i gives i + 1 values
  do i = 1, np
    counts(i) = i
    displs(i) = (i - 1) * i / 2
  end do
  gv(1:rank + 1) = rank
  call MPI_ALLGATHERV(gv, rank + 1, MPI_INTEGER, a2r, counts, displs, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  call check('allgatherv', a2r(displs(np) + 1) == np - 1 .and. a2r(1) == 0, sum(a2r(1:np * (np + 1) / 2)))
  ! MPI_ALLTOALLV: rank r sends j + 1 values of 100 r + j to rank j
  do i = 1, np
    scnt(i) = i
    sdsp(i) = (i - 1) * i / 2
    rcnt(i) = rank + 1
    rdsp(i) = (i - 1) * (rank + 1)
    a2s(sdsp(i) + 1:sdsp(i) + i) = 100 * rank + i - 1
  end do
  call MPI_ALLTOALLV(a2s, scnt, sdsp, MPI_INTEGER, a2r, rcnt, rdsp, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  call check('alltoallv', a2r(rdsp(np) + 1) == 100 * (np - 1) + rank, sum(a2r(1:np * (rank + 1))))
  ! an inter-communicator: the two halves, each gathering the other's ranks
  half = np / 2
  color = merge(0, 1, rank < half)
  call MPI_COMM_SPLIT(MPI_COMM_WORLD, color, rank, split, ierr)
  call MPI_INTERCOMM_CREATE(split, 0, MPI_COMM_WORLD, merge(half, 0, color == 0), 5, inter, ierr)
  call MPI_ALLGATHER(rank, 1, MPI_INTEGER, gath, 1, MPI_INTEGER, inter, ierr)
  call check('inter_allgather', gath(1) == merge(half, 0, color == 0), sum(gath(1:merge(np - half, half, color == 0))))
  call MPI_COMM_FREE(inter, ierr)
  call MPI_COMM_FREE(split, ierr)
  ! non-blocking and persistent collectives among the program's own requests
  ival = [rank, 1, 0, 0]
  call MPI_IALLREDUCE(ival, isum, 2, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_IALLGATHER(rank, 1, MPI_INTEGER, gath, 1, MPI_INTEGER, MPI_COMM_WORLD, reqs(2), ierr)
  call MPI_IRECV(one, 1, MPI_INTEGER, mod(rank + np - 1, np), 9, MPI_COMM_WORLD, reqs(3), ierr)
  call MPI_ISEND(rank, 1, MPI_INTEGER, mod(rank + 1, np), 9, MPI_COMM_WORLD, reqs(4), ierr)
  call MPI_IALLGATHERV(gv, rank + 1, MPI_INTEGER, a2r, counts, displs, MPI_INTEGER, MPI_COMM_WORLD, reqs(5), ierr)
  call MPI_WAITALL(5, reqs, sts, ierr)
  call check('iallreduce_waitall', isum(1) == np * (np - 1) / 2 .and. isum(2) == np, isum(1))
  call check('iallgather_waitall', all([(gath(i) == i - 1, i = 1, np)]) .and. one(1) == mod(rank + np - 1, np), &
             sum(gath(1:np)))
  call check('iallgatherv_waitall', a2r(displs(np) + 1) == np - 1, sum(a2r(1:np * (np + 1) / 2)))
#ifdef PINIT
  call PINIT(ival, isum, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, pr, ierr)
  do i = 1, 3
    ival(1) = rank + i
    call MPI_START(pr, ierr)
    call MPI_IRECV(one, 1, MPI_INTEGER, mod(rank + np - 1, np), 9, MPI_COMM_WORLD, reqs(2), ierr)
    call MPI_ISEND(rank, 1, MPI_INTEGER, mod(rank + 1, np), 9, MPI_COMM_WORLD, reqs(3), ierr)
    reqs(1) = pr
    if (i == 1) then
      call MPI_WAITALL(3, reqs, MPI_STATUSES_IGNORE, ierr)
    else if (i == 2) then
      do idx = 1, 3
        call MPI_WAITANY(3, reqs, outc, st, ierr)
      end do
    else
      outc = 0
      flag = .false.
      do while (.not. flag)
        call MPI_TESTALL(3, reqs, flag, sts, ierr)
      end do
    end if
      call check('persistent_start', isum(1) == np * (np - 1) / 2 + np * i, isum(1))
  end do
  call MPI_REQUEST_FREE(pr, ierr)
#endif
  ! waitsome / testsome / test over two non-blocking ones
  call MPI_IALLREDUCE(rank, isum(1), 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_IALLREDUCE(1, isum(2), 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, reqs(2), ierr)
  call MPI_WAITSOME(2, reqs, outc, idxs, sts, ierr)
  do while (reqs(1) /= MPI_REQUEST_NULL .or. reqs(2) /= MPI_REQUEST_NULL)
    call MPI_TESTSOME(2, reqs, outc, idxs, MPI_STATUSES_IGNORE, ierr)
  end do
  call check('waitsome_testsome', isum(1) == np * (np - 1) / 2 .and. isum(2) == np, isum(2))
  call MPI_IALLREDUCE(rank, isum(3), 1, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, reqs(1), ierr)
  flag = .false.
  do while (.not. flag)
    call MPI_TEST(reqs(1), flag, st, ierr)
  end do
  call check('test', isum(3) == np - 1 .and. reqs(1) == MPI_REQUEST_NULL, isum(3))
  ! MPI-IO: a view interleaving the ranks' integers, write_at_all then write_all, read back
  fname = 'preload_f.dat'
  call MPI_FILE_OPEN(MPI_COMM_WORLD, fname, MPI_MODE_CREATE + MPI_MODE_RDWR, MPI_INFO_NULL, fh, ierr)
  call MPI_TYPE_VECTOR(4, 1, np, MPI_INTEGER, vtype, ierr)
  call MPI_TYPE_COMMIT(vtype, ierr)
  disp = 4 * rank
  call MPI_FILE_SET_VIEW(fh, disp, MPI_INTEGER, vtype, 'native', MPI_INFO_NULL, ierr)
  ival = [1000 * rank, 1000 * rank + 1, 1000 * rank + 2, 1000 * rank + 3]
  off = 0
  call MPI_FILE_WRITE_AT_ALL(fh, off, ival, 2, MPI_INTEGER, st, ierr)
  call MPI_FILE_SEEK(fh, 2_MPI_OFFSET_KIND, MPI_SEEK_SET, ierr)
  call MPI_FILE_WRITE_ALL(fh, ival(3), 2, MPI_INTEGER, st, ierr)
  call MPI_GET_COUNT(st, MPI_INTEGER, outc, ierr)
  call check('file_write_all_count', outc == 2, outc)
  ! read back through the same view: read_at_all then read_all
  rval = -1
  call MPI_FILE_READ_AT_ALL(fh, off, rval, 2, MPI_INTEGER, st, ierr)
  call MPI_FILE_SEEK(fh, 2_MPI_OFFSET_KIND, MPI_SEEK_SET, ierr)
  call MPI_FILE_READ_ALL(fh, rval(3), 2, MPI_INTEGER, st, ierr)
  call MPI_GET_COUNT(st, MPI_INTEGER, outc, ierr)
  call check('file_read_all', outc == 2 .and. all(rval == ival), outc)
  call MPI_FILE_CLOSE(fh, ierr)
  call check('file_close', fh == MPI_FILE_NULL, 0)
  call MPI_TYPE_FREE(vtype, ierr)
  call MPI_BARRIER(MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    call MPI_FILE_OPEN(MPI_COMM_SELF, fname, MPI_MODE_RDONLY, MPI_INFO_NULL, fh, ierr)
    fsum = 0
    do i = 0, 4 * np - 1
      off = 4 * i
      call MPI_FILE_READ_AT(fh, off, one, 1, MPI_INTEGER, st, ierr)
      fsum = fsum + one(1) * (i + 1)
    end do
    call MPI_FILE_CLOSE(fh, ierr)
    call check('file_contents', fsum > 0, int(fsum))
  end if
  call MPI_ALLREDUCE(MPI_IN_PLACE, bad, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(A,I0,A,I0,A)', 'preload_f: ', np, ' ranks, ', bad, ' wrong'
  call MPI_FINALIZE(ierr)
  if (bad /= 0) stop 1
contains
  subroutine check(name, ok, v)
    character(len=*), intent(in) :: name
    logical, intent(in) :: ok
    integer, intent(in) :: v
    if (.not. ok) then
      bad = bad + 1
      print '(A,I0,A,A)', 'FAIL rank ', rank, ': ', name
    end if
    if (rank == 0) print '(A,A,A,I0)', 'result ', name, ' ', v
  end subroutine check
end program preload_f
