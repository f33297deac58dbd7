#!/usr/bin/env bash
# HPC Challenge's MPI FFT (Debian's hpcc, its example input, 4 ranks) plain, through the
# drop-in as users run it, and through it with the library's allreduce
# (AGX_ALLREDUCE_ALGORITHM=native), REPS launches of each in turn, timed from outside by
# fft_trace.c (docs/RESULTS.md, "HPCC's MPI FFT: rank 0's clock"): per launch HPCC's own
# Gflop/s and fft_probe.py's figures, then the medians per mode.
#   bench/hpcc/fft_probe.sh BUILD [REPS] [RANKS]   (RANKS a power of two: every rank in the FFT)
set -uo pipefail
b=$(realpath "$1") reps=${2:-10} n=${3:-4}
here=$(dirname "$(realpath "$0")") src=$(dirname "$(realpath "$0")")/../..
command -v hpcc > /dev/null || { echo "fft_probe.sh: no hpcc (Debian's hpcc package)" >&2; exit 1; }
t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
mpicc.openmpi -shared -fPIC -O2 -o "$t/trace.so" "$here/fft_trace.c" -ldl || exit 1
zcat -f /usr/share/doc/hpcc/examples/_hpccinf.txt* > "$t/hpccinf.txt"
printf "# %s, %s, %s ranks, %s launches of each in turn\n" "$(date -u +%F)" "$(hostname)" "$n" "$reps"
for ((r = 0; r < reps; r++)); do
  for mode in plain agx native; do
    rm -rf "$t/tr" "$t/hpccoutf.txt"; mkdir "$t/tr"
    pre=$t/trace.so env=()
    [ "$mode" != plain ] && pre=$t/trace.so:$b/lib/libagx-preload.so
    [ "$mode" = native ] && env=(-x AGX_ALLREDUCE_ALGORITHM=native)
    (cd "$t" && "$src/tools/agxrun" -n "$n" --timeout 120 -x LD_PRELOAD="$pre" -x FFT_TRACE_DIR="$t/tr" "${env[@]}" \
      "$(command -v hpcc)" > /dev/null 2>&1)
    g=$(sed -n 's/^MPIFFT_Gflops=//p' "$t/hpccoutf.txt")
    echo "$mode gflops=$g $(python3 "$here/fft_probe.py" "$t/tr")"
  done
done | tee "$t/all"
echo "# medians: mode gflops hpcc_us fft_us seg_us r0_exit_us"
for mode in plain agx native; do
  printf "%-7s" "$mode"
  for k in gflops hpcc_us fft_us seg_us r0_exit_us; do
    grep "^$mode " "$t/all" | sed -n "s/.* $k=\([-0-9.e+]*\).*/\1/p" | sort -g |
      awk '{v[NR] = $1} END {printf " %9.2f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'
  done
  echo
done
