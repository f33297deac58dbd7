#!/usr/bin/env bash
# PnetCDF write and read times, plain MPI-IO against libagx-preload.so (issues 36, 53):
# the three workloads of tests/preload/pnetcdf_app.c at SCALE (written, then read back
# the same way), each (MPI-IO implementation, ranks) run REPS times alternating plain,
# preloaded (as a user runs it: AGX_ADAPT=1, each file timing agx's engine against the
# library's call) and preloaded with AGX_ADAPT=0 (every call agx can take to the engine);
# median and range of rank 0's create-to-close (write) and open-to-close (read) times.
# With PHASES=1, one more launch per (MPI-IO, workload, ranks) with AGX_ADAPT=0 prints rank
# 0's engine time by phase (metadata, data exchange, file calls, the rest: KangRoss20
# Fig. 5; AGX_VERBOSE's line at close) under the two rows. ENGINE_ENV (default AGX_ADAPT=0)
# is the third column's environment: ENGINE_ENV=AGX_IO_POSIX=0 compares the engine's own
# file descriptor with a second MPI handle of the file. BASE=DIR (another build, e.g. an
# earlier commit's) replaces the third column with that build's preload as users run it,
# in the same alternation: a change measured side by side.
#   [PHASES=1] [ENGINE_ENV=VAR=VALUE] [BASE=DIR] bench/pnetcdf_bench.sh BUILD [SCALE] [REPS] [NPS] [WORKLOADS]
#   (BTIO refuses scale 64)
set -uo pipefail
b=$(realpath "$1") scale=${2:-8} reps=${3:-5} nps=${4:-"4 8 16"} workloads=${5:-"e3sm flash btio"}
src=$(dirname "$(realpath "$0")")/..
app=$b/bin/pnetcdf_app lib=$b/lib/libagx-preload.so
t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
med() { sort -g | awk '{v[NR] = $1} END {m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2;
        printf "%.1f (%.1f-%.1f)", m * 1e3, v[1] * 1e3, v[NR] * 1e3}'; }
printf "# %s, %s, scale %s, %s runs each; ms: median (min-max)\n" "$(date -u +%F)" "$(hostname)" "$scale" "$reps"
base=${BASE:+$(realpath "$BASE")} third="${ENGINE_ENV:-AGX_ADAPT=0}" c3=agx_engine r3=plain/eng
[ -n "$base" ] && third="the preload of $base" c3=agx_base r3=plain/base
printf "# third column: %s\n" "$third"
printf "%-9s %-6s %-5s %3s %22s %22s %22s %8s %8s\n" io workload op p plain agx $c3 plain/agx $r3
times() { sed -n 's/.*write_s=\([0-9.]*\) read_s=\([0-9.]*\).*/\1 \2/p'; }
for io in ompio romio321; do
  for w in $workloads; do
    for n in $nps; do
      : > "$t/p"; : > "$t/a"; : > "$t/e"
      for ((r = 0; r < reps; r++)); do
        OMPI_MCA_io=$io "$src/tools/agxrun" -n "$n" --timeout 300 "$app" "$w" "$t/f.nc" "$scale" | times >> "$t/p"
        OMPI_MCA_io=$io "$src/tools/agxrun" -n "$n" --timeout 300 --preload "$lib" "$app" "$w" "$t/f.nc" "$scale" |
          times >> "$t/a"
        if [ -n "$base" ]; then
          OMPI_MCA_io=$io "$src/tools/agxrun" -n "$n" --timeout 300 --preload "$base/lib/libagx-preload.so" "$app" \
            "$w" "$t/f.nc" "$scale" | times >> "$t/e"
        else
          env "${ENGINE_ENV:-AGX_ADAPT=0}" OMPI_MCA_io=$io "$src/tools/agxrun" -n "$n" --timeout 300 --preload "$lib" \
            "$app" "$w" "$t/f.nc" "$scale" | times >> "$t/e"
        fi
      done
      for col in 1 2; do
        op=write; [ $col = 2 ] && op=read
        mp=$(cut -d' ' -f$col "$t/p" | med) ma=$(cut -d' ' -f$col "$t/a" | med) me=$(cut -d' ' -f$col "$t/e" | med)
        sp=$(awk -v a="${mp%% *}" -v b="${ma%% *}" 'BEGIN {printf "%.2f", a / b}')
        se=$(awk -v a="${mp%% *}" -v b="${me%% *}" 'BEGIN {printf "%.2f", a / b}')
        printf "%-9s %-6s %-5s %3s %22s %22s %22s %8s %8s\n" "$io" "$w" "$op" "$n" "$mp" "$ma" "$me" "$sp" "$se"
      done
      if [ -n "${PHASES:-}" ]; then
        AGX_VERBOSE=1 AGX_ADAPT=0 OMPI_MCA_io=$io "$src/tools/agxrun" -n "$n" --timeout 300 --preload "$lib" "$app" \
          "$w" "$t/f.nc" "$scale" 2>&1 | sed -n "s/^agx: .*(rank 0): \(.* through agx's engine: .*\)/#   \1/p"
      fi
    done
  done
done
