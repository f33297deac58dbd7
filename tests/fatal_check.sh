#!/usr/bin/env bash
# Bad input under MPI_ERRORS_ARE_FATAL: the job must end (never hang: every case runs
# under a timeout), with a non-zero status and agx's message on stderr.
#   tests/fatal_check.sh SRC TEST_BADINPUT [agxrun options...]
set -u
src=$1 bin=$2; shift 2
cases=("negative sendcount:intra" "uncommitted sendtype:intra"
       "uncommitted sendtype, one rank:inter" "send size differs on one rank:inter"
       "negative colour, one rank:split" "recvcounts[0] wrong, one rank:split")
fail=0
for c in "${cases[@]}"; do
  out=$("$src/tools/agxrun" -n 4 --timeout 60 "$@" "$bin" --fatal "${c%%:*}" "${c##*:}" 2>&1)
  rc=$?
  if [ $rc -eq 0 ] || [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
    echo "FAIL: '$c' ended with status $rc (0: returned; 124/137: hung)"; fail=1
  elif ! grep -q "agx: " <<<"$out"; then
    echo "FAIL: '$c' ended (status $rc) without agx's message:"; echo "$out" | tail -5; fail=1
  else
    echo "ok: '$c' aborted (status $rc): $(grep -m1 'agx: ' <<<"$out")"
  fi
done
exit $fail
