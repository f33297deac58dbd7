#!/usr/bin/env bash
# Choice from data (docs/algorithms.md, "Selection"): rules files (AGX_TUNING_FILE), the
# environment's size-ranged form, agx-info, agx-tune.
#   - a good file chooses per shape, with its parameters, and results stay right (-c);
#   - a file with overlapping ranges, an unknown algorithm, an unknown key, a bad range or
#     parameter, a file row with an algorithm other than two_phase / native, "piece" in a
#     collective's row, malformed JSON, a missing file: a clear error naming the file and line
#     on every call it decides, never a crash or hang;
#   - a file missing or different on one rank: every rank fails alike (no hang);
#   - AGX_ALLGATHER_ALGORITHM=bruck:0-1K,ring chooses by size; a bad range is an error;
#   - agx-info prints the rules in force; agx-tune writes a file agx accepts.
#   rules_check.sh SRCDIR BUILDDIR [openmpi|mpich]
set -uo pipefail
src=$(realpath "$1") b=$(realpath "$2") mpi=${3:-openmpi}
run=("$src/tools/agxrun" --mpi "$mpi" --timeout 120)
bench=("$b/bin/agx-bench" allgather -m 8:4K --factor 8 -i 2 -x 0 -q -c)
t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
fail=0
bad() { echo "FAIL: $*"; sed 's/^/    /' "$t/out" | tail -15; fail=1; }
crashed() { grep -qiE "segmentation|signal [0-9]|core dumped|timed out|killed" "$t/out"; }

# 1. a good file: kbruck (radix 3) up to 1 KiB of result, ring above; allgatherv's own row
cat > "$t/good.json" <<'EOF'
{"format": "agx-rules-1", "generated_by": "rules_check.sh",
 "rules": [
  {"op": "allgather", "comm_size": "2-64", "bytes": "0-1K",
   "algorithm": "kbruck", "params": {"radix": 3}},
  {"op": "allgather", "comm_size": "2-64", "bytes": "1025-", "algorithm": "ring", "note": "long"},
  {"op": "allgatherv", "comm_size": 9, "algorithm": "neighbor_exchange"},
  {"op": "allreduce", "bytes": "0-64", "algorithm": "recursive_doubling"}
 ]}
EOF
AGX_VERBOSE=1 AGX_TUNING_FILE="$t/good.json" "${run[@]}" -n 9 "${bench[@]}" > "$t/out" 2>&1 || bad "good file"
grep -q "^agx: allgather .* 72 B .*: kbruck (rules file $t/good.json:3, radix=3)" "$t/out" || bad "row at line 3 not used"
grep -q "^agx: allgather .* 4608 B .*: ring (rules file $t/good.json:5)" "$t/out" || bad "row at line 5 not used"
[ "$(grep -c ' ok ' "$t/out")" -eq 4 ] || bad "results not checked right"
# its radix reaches kbruck: 9 ranks send 4 messages in radix 3 (5 in the default 4)
grep -q "^8 .*auto(kbruck) .* 4/0 " "$t/out" || bad "radix 3 from the file not used"
# the allgatherv row: 9 ranks is odd, neighbor_exchange cannot run; the default runs
AGX_VERBOSE=1 AGX_TUNING_FILE="$t/good.json" "${run[@]}" -n 9 "$b/bin/agx-bench" allgatherv -m 8 -i 1 -x 0 -q -c \
  > "$t/out" 2>&1 && grep -q "neighbor_exchange', which cannot run here.*the default rule runs" "$t/out" ||
  bad "a row that cannot run gives way to the default"

# 2. bad files: each a clear error naming the file and line, on every call it decides
expect() { # NAME EXPECTED-TEXT: the file $t/NAME.json fails with EXPECTED-TEXT
  AGX_TUNING_FILE="$t/$1.json" "${run[@]}" -n 3 "${bench[@]}" > "$t/out" 2>&1 && { bad "$1: no error"; return; }
  crashed && { bad "$1: crashed"; return; }
  grep -qF -- "$2" "$t/out" || bad "$1: expected '$2'"
}
printf '{"rules": [\n {"op": "allgather", "bytes": "0-8K", "algorithm": "bruck"},\n {"op": "allgather", "bytes": "4K-", "algorithm": "ring"}\n]}\n' > "$t/overlap.json"
expect overlap "overlap.json:3: this allgather rule's ranges overlap those of the rule at line 2"
printf '{"rules": [\n {"op": "allgather",\n  "algorithm": "bruk"}\n]}\n' > "$t/unknown.json"
expect unknown "unknown.json:2: unknown intra allgather algorithm 'bruk'; valid: native, ring"
printf '{"rules": [\n {"op": "allgather", "algorithm": "bruck",}\n]}\n' > "$t/malformed.json"
expect malformed "malformed.json:2:"
printf '{"rules": [\n\n {"op": "allgather", "algoritm": "bruck"}\n]}\n' > "$t/key.json"
expect key "key.json:3: unknown key 'algoritm'"
printf '{"rules": [{"op": "allgather", "bytes": "8-2", "algorithm": "bruck"}]}\n' > "$t/range.json"
expect range "range.json:1: \"bytes\" must be a range"
printf '{"rules": [\n {"op": "allgather", "algorithm": "kbruck", "params": {"radix": 1}}]}\n' > "$t/param.json"
expect param "param.json:2: parameter 'radix' of 'kbruck' must be an integer in [2, 64]"
printf '{"rules": [\n {"op": "file_write_all", "bytes": "1M-", "algorithm": "tam"}]}\n' > "$t/filerow.json"
expect filerow "filerow.json:2: a file row's algorithm is two_phase (agx's engine), two_phase_node (with intra-node aggregation) or native (the library's own)"
printf '{"rules": [\n {"op": "allgather", "piece": "8-", "algorithm": "ring"}]}\n' > "$t/piece.json"
expect piece "piece.json:2: \"piece\" belongs to file rows (file_write_all, file_read_all)"
printf '[1, 2]\n' > "$t/shape.json"
expect shape "shape.json:1: expected an object with a \"rules\" array"
expect missing "AGX_TUNING_FILE=$t/missing.json: cannot open: No such file or directory"
# the error on every call it decides (3 sizes) and every rank; a forced choice still runs
AGX_TUNING_FILE="$t/overlap.json" "${run[@]}" -n 3 "$b/bin/agx-bench" allgather -m 8:32 -i 1 -x 0 -q -c \
  > "$t/out" 2>&1; crashed && bad "overlap: crashed"
AGX_ALLGATHER_ALGORITHM=ring AGX_TUNING_FILE="$t/overlap.json" "${run[@]}" -n 3 "${bench[@]}" > "$t/out" 2>&1 ||
  bad "a forced choice does not read the file"

# 3. a file missing or different on one rank: every rank fails alike, none waits
case $mpi in mpich) rk='$PMI_RANK' ;; *) rk='$OMPI_COMM_WORLD_RANK' ;; esac
sed 's/"ring"/"bruck"/' "$t/good.json" > "$t/good.1.json"; cp "$t/good.json" "$t/good.0.json"; cp "$t/good.json" "$t/good.2.json"
"${run[@]}" -n 3 sh -c "AGX_TUNING_FILE=$t/good.$rk.json exec ${bench[*]}" > "$t/out" 2>&1 && bad "different files: no error"
crashed && bad "different files: crashed or hung"
grep -q "differs between the ranks" "$t/out" || bad "different files: no clear error"
rm "$t/good.1.json"
"${run[@]}" -n 3 sh -c "AGX_TUNING_FILE=$t/good.$rk.json exec ${bench[*]}" > "$t/out" 2>&1 && bad "missing on one rank: no error"
crashed && bad "missing on one rank: crashed or hung"
grep -q "AGX_TUNING_FILE: rank 1 could not use it" "$t/out" || bad "missing on one rank: the others not told"

# 4. the environment's size-ranged form; a bad range
AGX_VERBOSE=1 AGX_ALLGATHER_ALGORITHM=bruck:0-1K,ring "${run[@]}" -n 3 "${bench[@]}" > "$t/out" 2>&1 &&
  grep -q "24 B .*: bruck (AGX_ALLGATHER_ALGORITHM)" "$t/out" && grep -q "1536 B .*: ring (AGX_ALLGATHER_ALGORITHM)" "$t/out" ||
  bad "size-ranged environment"
AGX_ALLGATHER_ALGORITHM=bruck:0-1Q,ring "${run[@]}" -n 2 "${bench[@]}" > "$t/out" 2>&1 && bad "bad range: no error"
grep -q "'0-1Q' is no byte range" "$t/out" || bad "bad range: no clear error"

# 5. agx-info prints the rules in force
AGX_TUNING_FILE="$t/good.json" "${run[@]}" -n 2 "$b/bin/agx-info" > "$t/out" 2>&1 &&
  grep -q "^  2. rules file: $t/good.json" "$t/out" && grep -q "comm_size 2-64, bytes 0-1K .*-> kbruck (radix=3)  \[line 3\]" "$t/out" &&
  grep -q "^MPI: " "$t/out" && grep -q "MPI_COMM_WORLD: 2 ranks, 1 region" "$t/out" && grep -q "^    shm_notify" "$t/out" ||
  bad "agx-info"

# 6. agx-tune (one small shape) writes a file agx accepts and uses; --verify reports on it
(cd "$t" && AGX_MPI=$mpi "$src/tools/agx-tune" --build "$b" --np 3 --ops allgather,allreduce -m 8:64 --factor 8 -i 3 -x 1 \
  --out tuned.json > tune.out 2>&1) && cp "$t/tune.out" "$t/out" && grep -q '"algorithm"' "$t/tuned.json" ||
  bad "agx-tune"
AGX_VERBOSE=1 AGX_TUNING_FILE="$t/tuned.json" "${run[@]}" -n 3 "${bench[@]}" > "$t/out" 2>&1 &&
  grep -q "(rules file $t/tuned.json:" "$t/out" || bad "the tuned file is not used"
(cd "$t" && AGX_MPI=$mpi "$src/tools/agx-tune" --build "$b" --np 3 --ops allgather -m 8:64 --factor 8 -i 3 -x 1 \
  --verify tuned.json > out 2>&1) && grep -q "^worst default/best: " "$t/out" || bad "agx-tune --verify"

[ $fail -eq 0 ] && echo "rules_check ($mpi): all passed"
exit $fail
