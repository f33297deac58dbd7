#!/usr/bin/env bash
# For every registered intra algorithm of allgather and allgatherv:
#   AGX_<OP>_ALGORITHM=<name> agxrun -n 5 agx-bench <op> -c
# must validate, and the JSON output must hold every documented key.
set -uo pipefail
src=$1 bench=$2
agxrun=$src/tools/agxrun
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
for op in allgather allgatherv; do
  names=$("$bench" --list | awk -v op="$op" '
    /^[a-z]/ { cur = ($0 ~ "^" op " [(]intra") } cur && /^  / { print $1 }')
  for name in $names; do
    var=AGX_$(echo "$op" | tr a-z A-Z)_ALGORITHM
    if env "$var=$name" "$agxrun" -n 5 --timeout 120 "$bench" "$op" -c -m 1:4K -i 3 -x 1 -q \
         --dist linear --json "$tmp/$op.$name.json" > "$tmp/out" 2>&1 \
       && python3 - "$tmp/$op.$name.json" <<'PY'
import json, sys
recs = json.load(open(sys.argv[1]))
keys = "op algorithm nprocs bytes iterations avg_us min_us max_us p50_us p99_us validated msgs_local msgs_nonlocal bytes_local bytes_nonlocal".split()
assert recs, "no records"
for r in recs:
    missing = [k for k in keys if k not in r]
    assert not missing, "missing keys %s" % missing
    assert r["validated"] is True, "not validated: %s" % r
PY
    then pass=$((pass + 1)); echo "ok   $op $name"
    else fail=$((fail + 1)); echo "FAIL $op $name"; cat "$tmp/out"; fi
  done
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
