#!/usr/bin/env python3
"""HPCC's MPI FFT, timed from outside (bench/hpcc/fft_probe.sh): reads the traces
fft_trace.c wrote (DIR/RANK.txt, the host's clock) and prints, for its forward FFT,
  hpcc_us    rank 0's own time of it: what HPCC turns into its Gflop/s
  fft_us     from the last rank's start of it to the last rank's end (the FFT's own time)
  seg_us     from the last rank's arrival at the allreduce before it to the last rank's end
             of the FFT: that allreduce, the data generation and the FFT, in the program
  r0_exit_us rank 0's exit from that allreduce less the last rank's (<0: rank 0 left first)
HPCC's mpifft.c: the forward FFT's timer starts at the third MPI_Wtime after that
allreduce and stops at the third after its third MPI_Alltoall."""
import sys, glob, os

def rank_times(path):
    rows = [l.split() for l in open(path)]
    for i, x in enumerate(rows):
        if x[0] != 'T':
            continue
        j = i - 1
        while j >= 0 and rows[j][0] == 'W':
            j -= 1
        if j >= 1 and rows[j][0] == 'a' and i - j - 1 >= 3:
            a = max(k for k in range(j) if rows[k][0] == 'A')
            ts = [k for k in range(i, len(rows)) if rows[k][0] == 'T'][:3]
            ws = [k for k in range(ts[2], len(rows)) if rows[k][0] == 'W']
            t = lambda k: float(rows[k][2])
            return dict(ain=t(a), aout=t(j), start=t(j + 3), end=t(ws[2]))
    sys.exit("%s: no forward FFT found" % path)

d = sys.argv[1]
R = [rank_times(p) for p in sorted(glob.glob(os.path.join(d, "*.txt")), key=lambda p: int(os.path.basename(p)[:-4]))]
last = lambda k: max(r[k] for r in R)
print("hpcc_us=%.1f fft_us=%.1f seg_us=%.1f r0_exit_us=%.1f" % ((R[0]['end'] - R[0]['start']) * 1e6,
      (last('end') - last('start')) * 1e6, (last('end') - last('ain')) * 1e6, (R[0]['aout'] - last('aout')) * 1e6))
