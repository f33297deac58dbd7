#!/usr/bin/env bash
# Run an MPI test under valgrind memcheck on 2 ranks (AGX_VALGRIND_NP to change) and fail on any error record
# (invalid access, uninitialised use, definite leak) whose stack passes through agx
# (a frame in one of libagx's source files under src/). Records inside MPI_Init / MPI_Finalize are
# the MPI library's own (Open MPI leaks at start-up) and are ignored; the count of
# leak records is printed for information.
#   valgrind_check.sh SRCDIR PROGRAM [ARGS...]
# AGX_VALGRIND_AGXRUN adds launch flags (e.g. --threads).
set -uo pipefail
src=$1; shift
agxrun=$src/tools/agxrun
# libagx's source files, as valgrind names them in stack frames ("engine.c:42")
files=$(cd "$src" && find src -name '*.c' -printf '%f\n' | sed 's/\./\\./' | paste -sd'|')
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT
supp=/usr/share/openmpi/openmpi-valgrind.supp
sarg=(--suppressions="$src/tests/valgrind-mpi.supp"); [ -f "$supp" ] && sarg+=(--suppressions="$supp")
"$agxrun" -n "${AGX_VALGRIND_NP:-2}" ${AGX_VALGRIND_AGXRUN:-} --timeout 600 valgrind --leak-check=full --show-leak-kinds=definite \
  --errors-for-leak-kinds=definite --num-callers=30 "${sarg[@]}" \
  --log-file="$log/vg.%p" "$@"
rc=$?
[ $rc -eq 0 ] || { echo "valgrind_check: the program failed (rc=$rc)"; cat "$log"/vg.* | tail -50; exit 1; }
# Records are separated by blank '==pid== ' lines; keep those that are errors and touch agx.
bad=$(awk -v files="$files" '
  /^==[0-9]+== *$/ { if (rec != "" && err && agx && !lib) print rec; rec = ""; err = 0; agx = 0; lib = 0; next }
  { rec = rec "\n" $0 }
  /Invalid (read|write|free)|uninitialised|Conditional jump|definitely lost|Mismatched free|overlap/ { err = 1 }
  $0 ~ ("[(](" files "):[0-9]+[)]") || /libagx/ { agx = 1 }
  /MPI_Init|mpi_init|MPI_Finalize|mpi_finalize/ { lib = 1 }
  END { if (rec != "" && err && agx && !lib) print rec }
' "$log"/vg.*)
other=$(grep -hc "definitely lost in loss record" "$log"/vg.* | awk '{s += $1} END {print s + 0}')
if [ -n "$bad" ]; then
  echo "valgrind_check: errors in agx code:"
  echo "$bad"
  echo "0 passed, 1 failed"
  exit 1
fi
echo "valgrind_check: no memory errors or leaks in agx code ($other leak records inside the MPI library ignored)"
echo "1 passed, 0 failed"
