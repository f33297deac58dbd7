#!/usr/bin/python3
"""A Python program's collectives through mpi4py, for the drop-in (tests/mpi4py_check.sh).

mpi4py's buffer calls on NumPy arrays (Allreduce, in place too, with predefined and a
Python-defined operation, Allgather, Allgatherv of uneven blocks, Alltoallv of random
counts, a strided vector type, Iallreduce and Iallgatherv completed by one Waitall) and
its pickled object calls (allreduce, allgather, alltoall), interleaved, sizes and operations drawn from a seed the ranks share, enough
calls of each shape for agx's learning windows to run and decide. Every value is
integral (floating-point ones too, small enough that any order of summation gives the
same bits), so the results must not depend on the algorithm. Rank 0 prints the seed and
one digest of every rank's results: a plain run and a preloaded one must print the same.
  mpi4py_app.py [SEED] [CALLS]
"""
import hashlib
import sys

import numpy as np
from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, p = comm.Get_rank(), comm.Get_size()
seed = int(sys.argv[1]) if len(sys.argv) > 1 else 1
calls = int(sys.argv[2]) if len(sys.argv) > 2 else 600
shared = np.random.default_rng(seed)  # the same draws on every rank
mine = np.random.default_rng(seed * 1000 + rank)  # this rank's data
digest = hashlib.sha256()


def keep(x):
    digest.update(np.ascontiguousarray(x).tobytes() if isinstance(x, np.ndarray) else repr(x).encode())


def displs(counts):  # each block right after the one before
    return np.concatenate(([0], np.cumsum(counts)[:-1]))


def absmax(inbuf, outbuf, datatype):  # commutative: the larger magnitude, ties to the larger
    a = np.frombuffer(inbuf, dtype='i8')
    b = np.frombuffer(outbuf, dtype='i8')
    b[:] = np.where((np.abs(a) > np.abs(b)) | ((np.abs(a) == np.abs(b)) & (a > b)), a, b)


ABSMAX = MPI.Op.Create(absmax, commute=True)
OPS = [MPI.SUM, MPI.MAX, MPI.MIN, MPI.BOR, ABSMAX]
SIZES = [1, 2, 16, 100, 1000, 5000]
stats = {}

for i in range(calls):
    kind = shared.integers(0, 9)
    n = int(SIZES[shared.integers(0, len(SIZES))])
    stats[kind] = stats.get(kind, 0) + 1
    if kind == 0:  # integer allreduce, a predefined or the Python operation
        op = OPS[shared.integers(0, len(OPS))]
        a = mine.integers(-1000, 1000, n, dtype='i8')
        b = np.empty_like(a)
        comm.Allreduce(a, b, op=op)
        keep(b)
    elif kind == 1:  # in place
        a = mine.integers(0, 1 << 20, n, dtype='i4')
        comm.Allreduce(MPI.IN_PLACE, a, op=MPI.SUM)
        keep(a)
    elif kind == 2:  # doubles of integral values: exact in any order
        a = mine.integers(-1000, 1000, n).astype('f8')
        b = np.empty_like(a)
        comm.Allreduce(a, b, op=MPI.SUM)
        keep(b)
    elif kind == 3:
        a = mine.integers(0, 255, n, dtype='u1')
        b = np.empty(n * p, dtype='u1')
        comm.Allgather(a, b)
        keep(b)
    elif kind == 4:  # uneven blocks, some empty
        counts = shared.integers(0, n + 1, p)
        a = mine.integers(0, 1 << 30, int(counts[rank]), dtype='i4')
        b = np.empty(int(counts.sum()), dtype='i4')
        comm.Allgatherv(a, [b, counts, displs(counts), MPI.INT])
        keep(b)
    elif kind == 5:  # random counts per pair: each rank's row of the matrix drawn alike
        m = shared.integers(0, n + 1, (p, p))
        sc, rc = m[rank], m[:, rank]
        a = mine.integers(0, 1 << 30, int(sc.sum()), dtype='i4')
        b = np.empty(int(rc.sum()), dtype='i4')
        sd = displs(sc)
        rd = displs(rc)
        comm.Alltoallv([a, sc, sd, MPI.INT], [b, rc, rd, MPI.INT])
        keep(b)
    elif kind == 6:  # every other int of a row: a vector type
        vec = MPI.INT.Create_vector(n, 1, 2).Commit()
        blocks = vec.Create_resized(0, 8 * n).Commit()  # rank k's at 2 n k ints
        a = mine.integers(0, 1 << 30, 2 * n, dtype='i4')
        b = np.zeros(2 * n * p, dtype='i4')
        comm.Allgather([a, 1, vec], [b, 1, blocks])
        keep(b)
        vec.Free()
        blocks.Free()
    elif kind == 8:  # non-blocking, completed together
        a = mine.integers(-1000, 1000, n, dtype='i8')
        b = np.empty_like(a)
        counts = shared.integers(0, n + 1, p)
        g = mine.integers(0, 1 << 30, int(counts[rank]), dtype='i4')
        h = np.empty(int(counts.sum()), dtype='i4')
        reqs = [comm.Iallreduce(a, b, op=MPI.MAX),
                comm.Iallgatherv(g, [h, counts, displs(counts), MPI.INT])]
        MPI.Request.Waitall(reqs)
        keep(b)
        keep(h)
    else:  # pickled objects
        obj = {'rank': rank, 'v': [int(x) for x in mine.integers(0, 100, 3)]}
        keep(comm.allgather(obj))
        keep(comm.allreduce(int(mine.integers(0, 1 << 40)), op=MPI.MAX))
        keep(comm.alltoall([(rank, j, i) for j in range(p)]))

digests = comm.gather(digest.hexdigest(), root=0)
if rank == 0:
    whole = hashlib.sha256(''.join(digests).encode()).hexdigest()
    print("mpi4py_app: p=%d seed=%d calls=%d kinds=%s digest=%s" % (p, seed, calls, sorted(stats.items()), whole))
ABSMAX.Free()
