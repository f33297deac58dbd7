#!/usr/bin/env bash
# Differential test of the locality-aware algorithms against PMPI over region layouts:
# region sizes {1, 2, 3, 4, 8} x region counts {1, ..., 5}, the last region one rank
# short when there are several (uneven), plus round-robin regions and 3 leaders per
# region. One launch per layout; test_diff loops over shapes and datatypes inside.
set -uo pipefail
src=$1 diff=$2
pass=0 fail=0
out=$(mktemp); trap 'rm -f "$out"' EXIT
run() { # label env... -- np args...
  local label=$1; shift
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  local np=$1; shift
  if env "${envs[@]}" "$src/tools/agxrun" -n "$np" --timeout 300 "$diff" --algs loc_bruck,hierarchical,multileader "$@" \
       > "$out" 2>&1 && grep -q " 0 failed" "$out"; then
    pass=$((pass + 1)); echo "ok   $label p=$np"
  else
    fail=$((fail + 1)); echo "FAIL $label p=$np"; grep -E "FAIL|seed" "$out" | head -5
  fi
}
for size in 1 2 3 4 8; do
  for count in 1 2 3 4 5; do
    np=$((size * count))
    [ "$size" -gt 1 ] && [ "$count" -gt 1 ] && np=$((np - 1))   # uneven last region
    quick=(); [ "$np" -gt 16 ] && quick=(--quick)
    run "AGX_REGION_SIZE=$size ($count regions)" AGX_REGION_SIZE=$size -- "$np" "${quick[@]}"
  done
done
run "AGX_REGIONS=round_robin:3" AGX_REGIONS=round_robin:3 -- 10
run "AGX_REGION_SIZE=6 AGX_LEADERS=3" AGX_REGION_SIZE=6 AGX_LEADERS=3 -- 17 --quick
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
