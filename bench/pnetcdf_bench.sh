#!/usr/bin/env bash
# PnetCDF write time, plain MPI-IO against libagx-preload.so (issue 36): the three
# workloads of tests/preload/pnetcdf_app.c at SCALE, each (MPI-IO implementation, ranks)
# run REPS times alternating plain and preloaded; median and range of rank 0's
# create-to-close time.   bench/pnetcdf_bench.sh BUILD [SCALE] [REPS] [NPS]
set -uo pipefail
b=$(realpath "$1") scale=${2:-8} reps=${3:-5} nps=${4:-"4 8 16"}
src=$(dirname "$(realpath "$0")")/..
app=$b/bin/pnetcdf_app lib=$b/lib/libagx-preload.so
t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
med() { sort -g | awk '{v[NR] = $1} END {m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2;
        printf "%.1f (%.1f-%.1f)", m * 1e3, v[1] * 1e3, v[NR] * 1e3}'; }
printf "# %s, %s, scale %s, %s runs each; ms: median (min-max)\n" "$(date -u +%F)" "$(hostname)" "$scale" "$reps"
printf "%-9s %-6s %3s %22s %22s %8s\n" io workload p plain agx speedup
for io in ompio romio321; do
  for w in e3sm flash btio; do
    for n in $nps; do
      : > "$t/p"; : > "$t/a"
      for ((r = 0; r < reps; r++)); do
        OMPI_MCA_io=$io "$src/tools/agxrun" -n "$n" --timeout 300 "$app" "$w" "$t/f.nc" "$scale" |
          sed -n 's/.*write_s=//p' >> "$t/p"
        OMPI_MCA_io=$io "$src/tools/agxrun" -n "$n" --timeout 300 --preload "$lib" "$app" "$w" "$t/f.nc" "$scale" |
          sed -n 's/.*write_s=//p' >> "$t/a"
      done
      mp=$(med < "$t/p") ma=$(med < "$t/a")
      sp=$(awk -v a="${mp%% *}" -v b="${ma%% *}" 'BEGIN {printf "%.2f", a / b}')
      printf "%-9s %-6s %3s %22s %22s %8s\n" "$io" "$w" "$n" "$mp" "$ma" "$sp"
    done
  done
done
