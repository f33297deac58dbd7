#!/usr/bin/env bash
# agx-bench inter-allgather: every setting of KangTraff19 (1-8) validates with -c on 9 ranks,
# on an inter-communicator and on a colour split, and prints the Eq. 5 ratio line.
set -uo pipefail
src=$1 bench=$2
pass=0 fail=0
out=$(mktemp); trap 'rm -f "$out"' EXIT
for comm in inter color; do
  for s in 1 2 3 4 5 6 7 8; do
    if "$src/tools/agxrun" -n 9 --timeout 120 "$bench" inter-allgather --setting "$s" --comm "$comm" \
         -c -m 4K:16K -i 3 -x 1 -q > "$out" 2>&1 \
       && ! grep -q FAIL "$out" && grep -q "Eq. 5 predicts" "$out"; then
      pass=$((pass + 1)); echo "ok   setting $s on $comm"
    else
      fail=$((fail + 1)); echo "FAIL setting $s on $comm"; cat "$out"
    fi
  done
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
