#!/usr/bin/env bash
# README's first screen runs as written (issue 54): its drop-in lines, ./your_app replaced
# by an unmodified MPI program of the suite, must take its collectives through agx (the
# AGX_STATS report). The MPICH line runs where an MPICH build exists (mpich_check.sh makes
# it). Run from the source directory, as a newcomer would.
#   tests/readme_check.sh SRCDIR BUILDDIR
set -uo pipefail
src=$(realpath "$1") b=$(realpath "$2")
cd "$src" || exit 1
block=$(awk '/^The drop-in/ {f = 1} f && /^```sh/ {g = 1; next} g && /^```/ {exit} g' README.md)
[ -n "$block" ] || { echo "FAIL: README has no drop-in block after 'The drop-in'"; exit 1; }
head -40 README.md | grep -q 'LD_PRELOAD=$PWD/build/lib/libagx-preload.so' || { echo "FAIL: the preload command is not in README's first 40 lines"; exit 1; }
fail=0
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
while IFS= read -r line; do
  cmd=${line%%#*}
  case "$cmd" in
    mpirun.mpich*) [ -e "$src/build/mpich/lib/libagx-preload.so" ] && [ -e "$src/build/mpich/bin/preload_app" ] ||
                     { echo "skipped (no MPICH build here): $cmd"; continue; }
                   app=$src/build/mpich/bin/preload_app;;
    mpirun*) app=$b/bin/preload_app;;
    *) echo "not run here (a build step): $cmd"; continue;;
  esac
  cmd=${cmd//.\/your_app/$app}
  cmd=${cmd//-n 8/-n 3}
  echo "README: $cmd"
  out=$(AGX_STATS=1 timeout 120 bash -c "$cmd" < /dev/null 2>&1)
  if grep -q "^agx-preload: rank 0: allreduce [0-9]* calls through agx" <<< "$out"; then
    echo "  ok: the program's collectives went through agx"
  else
    echo "FAIL: README's line did not take the program through agx:"; echo "$out" | tail -8; fail=1
  fi
done <<< "$block"
exit $fail
