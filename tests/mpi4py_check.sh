#!/usr/bin/env bash
# The drop-in under a Python program (tests/preload/mpi4py_app.py, Debian's mpi4py and
# NumPy): its collectives reach agx through mpi4py's compiled module like a C program's.
# On 3 and 4 ranks the program runs plain, as users run the drop-in (AGX_ADAPT: windows
# time agx's candidates and the library's call) and with agx's own algorithms forced
# (AGX_ADAPT=0, one named algorithm per operation, and agx's progress thread, so its
# non-blocking calls are agx's requests: mpi4py asks for MPI_THREAD_MULTIPLE); each run
# must print the plain run's digest of every result, and the report at MPI_Finalize must
# count calls of the four operations taken by agx (and, forced, none of the non-blocking
# ones left to the library). The seed is printed.
#   mpi4py_check.sh SRCDIR BUILDDIR [SEED]
set -uo pipefail
src=$(realpath "$1") b=$(realpath "$2") seed=${3:-$((RANDOM + 1))}
py=/usr/bin/python3 app=$src/tests/preload/mpi4py_app.py lib=$b/lib/libagx-preload.so
run=("$src/tools/agxrun" --timeout 120)
"$py" -c "import mpi4py, numpy" 2> /dev/null ||
  { echo "mpi4py_check: no mpi4py or NumPy for $py (python3-mpi4py, python3-numpy): skipped"; exit 0; }
echo "mpi4py_check: seed $seed"
t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
fail=0 ok=0
forced="AGX_ALLGATHER_ALGORITHM=sparbit AGX_ALLGATHERV_ALGORITHM=bruck AGX_ALLTOALLV_ALGORITHM=pairwise"
forced4="AGX_ALLGATHER_ALGORITHM=loc_bruck AGX_ALLGATHERV_ALGORITHM=ring AGX_ALLTOALLV_ALGORITHM=balanced"
for n in 3 4; do
  "${run[@]}" -n "$n" "$py" "$app" "$seed" > "$t/out" 2>&1
  want=$(grep -o "digest=[0-9a-f]*" "$t/out")
  [ -n "$want" ] || { echo "FAIL: plain -n $n"; tail -5 "$t/out"; fail=1; continue; }
  f=$forced; [ "$n" = 4 ] && f=$forced4
  for mode in "AGX_ADAPT=1" "AGX_ADAPT=0 AGX_PROGRESS_THREAD=1 $f"; do
    env $mode AGX_STATS=1 "${run[@]}" -n "$n" --preload "$lib" "$py" "$app" "$seed" > "$t/out" 2>&1
    got=$(grep -o "digest=[0-9a-f]*" "$t/out") taken=0 unforced=""
    for op in allreduce allgather allgatherv alltoallv; do
      grep -q "^agx-preload: rank 0: $op [1-9][0-9]* calls through agx" "$t/out" && taken=$((taken + 1))
    done
    for kv in $mode; do # AGX_OP_ALGORITHM=name: op's calls ran name
      [[ $kv == *_ALGORITHM=* ]] || continue
      op=${kv#AGX_} op=${op%%_ALGORITHM=*} name=${kv#*=}
      grep -q "^agx-preload: rank 0: ${op,,} [0-9]* calls through agx.*: $name [1-9]" "$t/out" || unforced+=" ${op,,}"
    done
    [[ $mode == *AGX_PROGRESS_THREAD=1* ]] && grep -q "left to the library:.*non-blocking" "$t/out" &&
      unforced+=" (non-blocking calls left to the library)"
    if [ "$got" != "$want" ]; then
      echo "FAIL: -n $n $mode: '$got', plain '$want'"; tail -5 "$t/out"; fail=1
    elif [ "$taken" != 4 ]; then
      echo "FAIL: -n $n $mode: agx took $taken of the four operations"; grep agx-preload "$t/out"; fail=1
    elif [ -n "$unforced" ]; then
      echo "FAIL: -n $n $mode: the forced algorithm did not run for$unforced"; grep agx-preload "$t/out"; fail=1
    else
      ok=$((ok + 1)); echo "ok   -n $n $mode: the plain run's results ($(grep -c 'calls through agx' "$t/out") operations through agx)"
    fi
  done
done
echo "mpi4py_check: $ok ok, fail=$fail"
exit $fail
