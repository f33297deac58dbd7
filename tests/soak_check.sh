#!/usr/bin/env bash
# The soak before a release (ctest -L soak): test_stress's random calls, many of them,
# on a loaded machine (two busy processes), on every shape the node-shared protocols
# take: one region, regions of 2 (even and uneven), emulated nodes, then the same on
# MPICH (its own build of agx, BUILD/mpich); then test_nbc's outstanding non-blocking and
# persistent calls (AGX_SOAK_CALLS / 20 rounds of 2-8 calls), agx's, handed to MPI and
# through the preload (AGX_ADAPT=0: agx's non-blocking calls untimed, always agx's); and
# the random calls by MPI's names through the preload as users run it (test_stress --mpi:
# its on-line choice, communicators made and freed), on both MPIs.
# AGX_SOAK_CALLS (default 20000) per shape.
#   tests/soak_check.sh SRC BUILD TEST_STRESS
set -u
src=$1 build=$2 prog=$3 calls=${AGX_SOAK_CALLS:-20000}
load="$src/tests/stress_check.sh 2"
run="$src/tools/agxrun --timeout 3000"
fail=0
step() { echo "== $*"; "$@" || { echo "FAIL: $*"; fail=1; }; }
step $load $run -n 3 "$prog" --calls "$calls"
step $load env AGX_REGION_SIZE=2 $run -n 4 "$prog" --calls "$calls"
step $load env AGX_REGION_SIZE=2 $run -n 7 "$prog" --calls "$calls"
step $load $run -n 6 --nodes 3 "$prog" --calls "$calls"
nbc=$(dirname "$prog")/test_nbc rounds=$((calls / 20))
step $load env AGX_REGION_SIZE=2 $run -n 5 "$nbc" --rounds "$rounds"
step $load env AGX_REGION_SIZE=2 AGX_PROGRESS_THREAD=1 $run -n 4 --threads "$nbc" --rounds "$rounds"
step $load env AGX_REGION_SIZE=2 AGX_PROGRESS_THREAD=1 AGX_ADAPT=0 $run -n 4 --threads --preload \
  "$build/lib/libagx-preload.so" "$nbc" --mpi --rounds "$rounds"
step $load $run -n 6 --nodes 2 --preload "$build/lib/libagx-preload.so" "$prog" --mpi --comms 50 --calls "$calls"
if command -v mpicc.mpich >/dev/null; then
  b=$build/mpich
  cmake -S "$src" -B "$b" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMPI_C_COMPILER=mpicc.mpich -DAGX_PC_MPI=mpich \
    > "$b.log" 2>&1 && cmake --build "$b" -j 2 --target test_stress test_nbc agx-preload >> "$b.log" 2>&1 ||
    { tail -20 "$b.log"; echo "FAIL: building agx with MPICH"; exit 1; }
  step $load env AGX_REGION_SIZE=2 $run --mpi mpich -n 4 "$b/bin/test_stress" --calls "$((calls / 4))"
  step $load $run --mpi mpich -n 4 --nodes 2 "$b/bin/test_stress" --calls "$((calls / 4))"
  step $load $run --mpi mpich -n 4 --preload "$b/lib/libagx-preload.so" "$b/bin/test_stress" --mpi --comms 50 \
    --calls "$((calls / 4))"
  step $load env AGX_PROGRESS_THREAD=1 $run --mpi mpich -n 3 "$b/bin/test_nbc" --rounds "$((rounds / 4))"
  step $load env AGX_PROGRESS_THREAD=1 AGX_ADAPT=0 $run --mpi mpich -n 3 --preload "$b/lib/libagx-preload.so" \
    "$b/bin/test_nbc" --mpi --rounds "$((rounds / 4))"
fi
exit $fail
