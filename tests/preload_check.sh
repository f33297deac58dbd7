#!/usr/bin/env bash
# libagx-preload.so under unmodified programs (tests/preload/): results equal to plain MPI
# and the calls provably through agx (AGX_STATS report at MPI_Finalize, AGX_VERBOSE lines);
# AGX_ENABLE=0 and an operation list; every registered algorithm forced by environment;
# Fortran callers as README.md says (MPICH: through agx; Open MPI: straight to PMPI).
#   preload_check.sh SRCDIR BUILDDIR [openmpi|mpich]
set -uo pipefail
src=$(realpath "$1") b=$(realpath "$2") mpi=${3:-openmpi}
lib=$b/lib/libagx-preload.so app=$b/bin/preload_app
run=("$src/tools/agxrun" --mpi "$mpi" --timeout 120)
t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
fail=0
bad() { echo "FAIL: $*"; sed 's/^/    /' "$t/out" | tail -20; fail=1; }

# 1. plain MPI, then through agx with the report
AGX_STATS=1 "${run[@]}" -n 5 "$app" > "$t/out" 2>&1 && ! grep -q "^agx" "$t/out" || bad "plain run"
for n in 1 5; do
  AGX_STATS=1 "${run[@]}" -n $n --preload "$lib" "$app" > "$t/out" 2>&1 || { bad "preload -n $n"; continue; }
  for op in allgather allgatherv allreduce alltoallv; do
    grep -q "^agx-preload: rank 0: $op [0-9]* calls through agx" "$t/out" || bad "-n $n: no report for $op"
  done
done
# 1b. MPI_Iallgather(v), MPI_Iallreduce: through agx while its progress thread runs (agx's request handed to
#     MPI as a generalized request, completed in MPI_Waitall beside point-to-point ones);
#     without the thread, the library's own (AGX_VERBOSE says why)
AGX_PROGRESS_THREAD=1 AGX_STATS=1 "${run[@]}" -n 4 --preload "$lib" "$app" --nonblocking > "$t/out" 2>&1 &&
  grep -q "^agx-preload: rank 0: allgather 4 calls through agx" "$t/out" &&
  grep -q "^agx-preload: rank 0: allgatherv 4 calls through agx" "$t/out" &&
  grep -q "^agx-preload: rank 0: allreduce 5 calls through agx" "$t/out" || bad "MPI_Iallgather(v), MPI_Iallreduce with the progress thread"
AGX_VERBOSE=1 AGX_STATS=1 "${run[@]}" -n 3 --preload "$lib" "$app" --nonblocking > "$t/out" 2>&1 &&
  ! grep -q "allgatherv\? [0-9]* calls through agx" "$t/out" && grep -q "^agx-preload: MPI_Iallgather(v) and MPI_Iallreduce go to the MPI library" "$t/out" ||
  bad "MPI_Iallgather(v) without the progress thread"
# 1c. MPI-4's persistent collectives (MPICH 4: MPI_..._init; Open MPI 4.1: MPIX_..._init):
#     through agx while its progress thread runs (the handle a persistent receive that
#     agx's completion fires, started with the program's persistent point-to-point
#     requests in one MPI_Startall; every start counted; the program's MPI_Test polling
#     must not keep the thread out of MPI: preload_progress.c); without the thread, the
#     library's own
if grep -q "persistent collectives" <("${run[@]}" -n 1 "$app" --persistent 2>&1); then
  echo "skipped: this MPI has no persistent collectives"
else
  AGX_PROGRESS_THREAD=1 AGX_STATS=1 "${run[@]}" -n 3 --preload "$lib" "$app" --persistent > "$t/out" 2>&1 &&
    grep -q "^agx-preload: rank 0: allgather 12 calls through agx" "$t/out" &&
    grep -q "^agx-preload: rank 0: allgatherv 6 calls through agx" "$t/out" &&
    grep -q "^agx-preload: rank 0: allreduce 13 calls through agx" "$t/out" &&
    grep -q "^agx-preload: rank 0: alltoallv 6 calls through agx" "$t/out" || bad "persistent collectives with the progress thread"
  AGX_STATS=1 "${run[@]}" -n 2 --preload "$lib" "$app" --persistent > "$t/out" 2>&1
  rc=$?
  if [ "$mpi" = mpich ] && [ $rc -ne 0 ] && grep -q "wrong (allgather [0-9]*, allgatherv 0, int sum 0, double max 0, alltoallv 0, split allgather [0-9]*, point-to-point 0, not freed 0, completions [0-9]*)" "$t/out"; then
    # MPICH 4.0.2's own persistent MPI_Allgather is wrong from its second start, and its
    # MPI_Testsome reports one completed persistent collective twice and never the next
    # (the same program without the preload fails alike); only the routing is checked here
    echo "note: MPICH's own persistent collectives failed as known (agx's, with the thread, did not)"
    rc=0
  fi
  [ $rc -eq 0 ] && grep -q "^agx-preload: rank 0: allreduce 1 calls through agx" "$t/out" &&
    ! grep -q "^agx-preload: rank 0: all\(gather\|toallv\)" "$t/out" || bad "persistent collectives without the progress thread"
fi
# 2. AGX_ENABLE=0: nothing through agx; a list: only those
AGX_ENABLE=0 AGX_STATS=1 "${run[@]}" -n 4 --preload "$lib" "$app" > "$t/out" 2>&1 && ! grep -q "through agx" "$t/out" ||
  bad "AGX_ENABLE=0"
AGX_ENABLE=allreduce,alltoallv AGX_STATS=1 "${run[@]}" -n 4 --preload "$lib" "$app" > "$t/out" 2>&1 &&
  grep -q "allreduce [0-9]* calls" "$t/out" && grep -q "alltoallv [0-9]* calls" "$t/out" &&
  ! grep -q "allgather" "$t/out" || bad "AGX_ENABLE=allreduce,alltoallv"
# 3. every intra algorithm of each operation forced by environment, the lists zipped (one
#    launch runs the i-th of each); the report names what ran (a forced algorithm that
#    cannot run here falls back, AGX_FALLBACK=silent)
"$b/bin/agx-bench" --list > "$t/list" 2>/dev/null || { echo "FAIL: agx-bench --list"; exit 1; }
names() { awk -v s="$1 (intra-communicator):" '$0 == s {f = 1; next} /^[a-z]/ {f = 0} f {print $1}' "$t/list"; }
mapfile -t AG < <(names allgather); mapfile -t AV < <(names allgatherv)
mapfile -t AR < <(names allreduce); mapfile -t A2 < <(names alltoallv)
max=${#AG[@]}; for l in ${#AV[@]} ${#AR[@]} ${#A2[@]}; do [ "$l" -gt "$max" ] && max=$l; done
[ "$max" -gt 0 ] || { echo "FAIL: no algorithms listed"; exit 1; }
ran=0
for ((i = 0; i < max; i++)); do
  ag=${AG[i % ${#AG[@]}]} av=${AV[i % ${#AV[@]}]} ar=${AR[i % ${#AR[@]}]} a2=${A2[i % ${#A2[@]}]}
  AGX_ALLGATHER_ALGORITHM=$ag AGX_ALLGATHERV_ALGORITHM=$av AGX_ALLREDUCE_ALGORITHM=$ar \
  AGX_ALLTOALLV_ALGORITHM=$a2 AGX_FALLBACK=silent AGX_STATS=1 \
    "${run[@]}" -n 5 --preload "$lib" "$app" > "$t/out" 2>&1 || { bad "forced $ag/$av/$ar/$a2"; continue; }
  for pair in "allgather:$ag" "allgatherv:$av" "allreduce:$ar" "alltoallv:$a2"; do
    grep -q "^agx-preload: rank 0: ${pair%%:*} [0-9]* calls through agx" "$t/out" || bad "forced: no ${pair%%:*} report"
    grep -q "^agx-preload: rank 0: ${pair%%:*} .*[:,] ${pair#*:} [0-9]" "$t/out" && ran=$((ran + 1))
  done
done
echo "forced algorithms: $max launches, $ran of $((4 * max)) forced choices ran as named (the rest fell back)"
[ "$ran" -ge "$max" ] || { echo "FAIL: too few forced algorithms ran as named"; fail=1; }
# 4. Fortran
fc=mpif90.$mpi
if command -v "$fc" > /dev/null && (cd "$t" && "$fc" -o "$t/pf" "$src/tests/preload/preload_f.f90") 2> "$t/out"; then
  AGX_VERBOSE=1 "${run[@]}" -n 3 --preload "$lib" "$t/pf" > "$t/out" 2>&1 && grep -q "preload_f: 0 wrong" "$t/out" ||
    bad "Fortran program"
  if [ "$mpi" = mpich ]; then
    grep -q "^agx: allgather on MPI_COMM_WORLD" "$t/out" || bad "MPICH Fortran: expected through agx"
  else
    ! grep -q "^agx: allgather" "$t/out" || bad "Open MPI Fortran: expected straight to PMPI"
  fi
  echo "Fortran ($mpi): as documented"
else
  echo "FAIL: no working $fc (gfortran is in tools/bootstrap's packages)"; fail=1
fi
[ $fail = 0 ] && echo "preload_check ($mpi): ok"
exit $fail
