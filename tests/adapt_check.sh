#!/usr/bin/env bash
# The on-line choice's outputs (docs/algorithms.md, "On-line choice"):
#   - AGX_ADAPT=1 with AGX_VERBOSE=1 says what each class learned; AGX_TUNING_OUT writes a
#     rules file of it at MPI_Finalize, which AGX_TUNING_FILE reads back: agx-info lists its
#     rows, and a second run chooses from them without learning again;
#   - AGX_ADAPT=bogus is a clear error, never a crash;
#   - the drop-in learns by default (an unmodified program under libagx-preload.so), and
#     AGX_ADAPT=0 turns it off;
#   - a file's choice between agx's write, with or without intra-node aggregation, and the
#     library's is written as a file_write_all row and read back the same way;
#   - alltoallv settles on the library's call, and a re-check unsettles it for a new class;
#     its window charges agx's kernels the agreement that a settled call skips;
#   - a class does not look at candidates a near class found far slower than its winner;
#   - a kernel that beats the library's call must beat it again in a rematch.
#   adapt_check.sh SRCDIR BUILDDIR
set -uo pipefail
src=$(realpath "$1") b=$(realpath "$2")
run=("$src/tools/agxrun" --timeout 120)
t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
fail=0
bad() { echo "FAIL: $*"; sed 's/^/    /' "$t/out" | tail -15; fail=1; }
bench=("$b/bin/agx-bench" allreduce -m 8:4K --factor 8 -i 40 -x 104 -q -c) # -x: 8 first calls, a window (88)

# 1. learning said, and written
AGX_ADAPT=1 AGX_VERBOSE=1 AGX_TUNING_OUT="$t/learned.json" "${run[@]}" -n 4 "${bench[@]}" > "$t/out" 2>&1 &&
  [ "$(grep -c '^agx: allreduce learned on 4 ranks' "$t/out")" -eq 4 ] && ! grep -q FAIL "$t/out" ||
  bad "AGX_ADAPT=1 AGX_VERBOSE=1: four learned classes"
[ -s "$t/learned.json" ] && [ "$(grep -c '"note": "learned on the run' "$t/learned.json")" -eq 4 ] &&
  grep -q '"format": "agx-rules-1"' "$t/learned.json" || { cp "$t/learned.json" "$t/out" 2>/dev/null; bad "AGX_TUNING_OUT's file"; }
# 2. read back: agx-info lists the rows, the second run chooses from them and learns nothing
AGX_TUNING_FILE="$t/learned.json" "${run[@]}" -n 4 "$b/bin/agx-info" > "$t/out" 2>&1 &&
  [ "$(grep -c 'comm_size 4, ppn 4, nodes 1, bytes' "$t/out")" -eq 4 ] || bad "agx-info with the learned file"
AGX_ADAPT=1 AGX_VERBOSE=1 AGX_TUNING_FILE="$t/learned.json" "${run[@]}" -n 4 "${bench[@]}" > "$t/out" 2>&1 &&
  [ "$(grep -c "rules file $t/learned.json" "$t/out")" -eq 4 ] && ! grep -q "learned on" "$t/out" ||
  bad "a second run from the learned file"
# 3. a malformed value: one clear error, exit status non-zero, no crash
AGX_ADAPT=bogus "${run[@]}" -n 2 "${bench[@]}" > "$t/out" 2>&1
if [ $? -ne 0 ] && grep -q "AGX_ADAPT='bogus' in the environment is none of 0, 1, any" "$t/out" &&
   ! grep -qiE "segmentation|core dumped" "$t/out"; then :; else bad "AGX_ADAPT=bogus"; fi
AGX_ADAPT=1 AGX_ADAPT_AFTER=-3 "${run[@]}" -n 2 "${bench[@]}" > "$t/out" 2>&1
if [ $? -ne 0 ] && grep -q "AGX_ADAPT_AFTER='-3' in the environment is not a count of calls" "$t/out" &&
   ! grep -qiE "segmentation|core dumped" "$t/out"; then :; else bad "AGX_ADAPT_AFTER=-3"; fi
# 4. the drop-in learns by default, and not with AGX_ADAPT=0; a class's first 8 calls are
#    the library's, untimed, so a program of 8 calls of a class has no window (AGX_STATS)
AGX_STATS=1 "${run[@]}" -n 3 --preload "$b/lib/libagx-preload.so" "$b/bin/comm_steps" 1 8 4096 allreduce dup \
  > "$t/out" 2>&1 && grep -q "^agx-preload: rank 0: allreduce [0-9]* calls through agx ([0-9]* B received): native [0-9]*$" "$t/out" &&
  ! grep -q "learning windows" "$t/out" || bad "a class's first 8 calls: the library's, no window"
AGX_VERBOSE=1 "${run[@]}" -n 3 --preload "$b/lib/libagx-preload.so" "$b/bin/preload_app" > "$t/out" 2>&1 &&
  grep -q "allreduce on MPI_COMM_WORLD, 3 ranks (intra), 4 B (class < 8 B): native (AGX_ADAPT: a class's first calls, the library's, untimed; then learning)" "$t/out" ||
  bad "the preload learns by default"
AGX_ADAPT=0 AGX_VERBOSE=1 "${run[@]}" -n 3 --preload "$b/lib/libagx-preload.so" "$b/bin/preload_app" > "$t/out" 2>&1 &&
  ! grep -q "learn" "$t/out" || bad "AGX_ADAPT=0 under the preload"
#    the windows' cost in the report at MPI_Finalize; AGX_VERBOSE says a window's start once
#    (a line per candidate made the forwarding of stderr a part of the window's time)
AGX_STATS=1 AGX_VERBOSE=1 "${run[@]}" -n 3 --preload "$b/lib/libagx-preload.so" "$b/bin/comm_steps" 1 200 4096 \
  allreduce dup > "$t/out" 2>&1 && [ "$(grep -c '4096 B (class < 8192 B): [a-z_]* (learning on the run)' "$t/out")" -eq 1 ] &&
  grep -q "^agx-preload: rank 0: learning windows: allreduce 1 classes, [0-9]* calls, [0-9.]* us, [-+][0-9.]* us" \
    "$t/out" || bad "the learning windows in the report"
# 5. collective writes: a file's decision written as a file_write_all row, and a second run
#    starting from it (every write the library's from the first, no write timed)
fl=("$b/bin/test_filelearn" --expect library --cb)
AGX_ADAPT=1 AGX_TEST_FLEARN_SKEW=2:0:1000 AGX_TUNING_OUT="$t/files.json" "${run[@]}" -n 4 "${fl[@]}" > "$t/out" 2>&1 &&
  grep -q '"op": "file_write_all", "comm_size": "4-4", "bytes": "[0-9]*-[0-9]*", "piece": "[0-9]*-[0-9]*", "algorithm": "native"' \
    "$t/files.json" || { cat "$t/files.json" >> "$t/out" 2>/dev/null; bad "AGX_TUNING_OUT's file_write_all row"; }
AGX_ADAPT=1 AGX_TUNING_FILE="$t/files.json" "${run[@]}" -n 4 "${fl[@]}" --decided > "$t/out" 2>&1 ||
  bad "a second run's writes from the file_write_all row"
#    ... and over two emulated nodes, the engine with intra-node aggregation as the winner
AGX_ADAPT=1 AGX_REGION_SIZE=2 AGX_TEST_FLEARN_SKEW=1:01:1000 AGX_TUNING_OUT="$t/node.json" "${run[@]}" -n 4 \
  "$b/bin/test_filelearn" --expect node --cb > "$t/out" 2>&1 &&
  grep -q '"op": "file_write_all", "comm_size": "4-4", .*"algorithm": "two_phase_node"' "$t/node.json" ||
  { cat "$t/node.json" >> "$t/out" 2>/dev/null; bad "AGX_TUNING_OUT's two_phase_node row"; }
AGX_ADAPT=1 AGX_REGION_SIZE=2 AGX_TUNING_FILE="$t/node.json" "${run[@]}" -n 4 "$b/bin/test_filelearn" --expect node \
  --cb --decided > "$t/out" 2>&1 || bad "a second run's writes from the two_phase_node row"
# 6. alltoallv settles on the library's call where it won every class (one rank's clock
#    makes every other candidate 1000x slower), and a class a re-check finds unsettles it
AGX_ADAPT=1 AGX_VERBOSE=1 AGX_TEST_LEARN_SKEW=1:1000:native "${run[@]}" -n 3 "$b/bin/test_adapt" > "$t/out" 2>&1 &&
  [ "$(grep -c "^agx: alltoallv on 3 ranks: the library's own call won every class" "$t/out")" -ge 2 ] &&
  grep -q "^agx: alltoallv on 3 ranks: a class the library's call has not won" "$t/out" ||
  bad "alltoallv settling (AGX_VERBOSE)"
# 7. the window charges agx's kernels the agreement that the library's call, settled,
#    skips: isend_all timed fastest (every other candidate 10^6 times slower on one rank:
#    1000x let a loaded machine's stalls decide) wins alltoallv's classes, and with an
#    agreement of 10^9 s (AGX_TEST_LEARN_AGREE; 5 s was within a stalled native's 1000x)
#    it loses
sk=1:1000000:isend_all
AGX_ADAPT=1 AGX_VERBOSE=1 AGX_TEST_LEARN_SKEW=$sk "${run[@]}" -n 3 "$b/bin/test_adapt" > "$t/out" 2>&1 &&
  grep -q "^agx: alltoallv learned on 3 ranks, .*; runs isend_all" "$t/out" || bad "isend_all timed fastest"
AGX_ADAPT=1 AGX_VERBOSE=1 AGX_TEST_LEARN_SKEW=$sk AGX_TEST_LEARN_AGREE=1e9 "${run[@]}" -n 3 "$b/bin/test_adapt" \
  > "$t/out" 2>&1 && ! grep -q "^agx: alltoallv learned on 3 ranks, .*; runs isend_all" "$t/out" &&
  grep -q "^agx: alltoallv on 3 ranks: the library's own call won every class" "$t/out" ||
  bad "isend_all charged the agreement (AGX_TEST_LEARN_AGREE)"
# 8. a candidate that a class found far slower than its winner (one rank's clock makes all
#    but native 10^6 times slower: a loaded machine's stall of a few ms in native's one
#    timed call at 8 B must not bring a 1000x slower one within reach) gets no look in a class up to 3 size classes away (8 B, then
#    64 B: the default's choice and native only), and one farther away looks at every one;
#    the 64 B class's final of those two ends at its first half: the default's choice far
#    slower there (8 first calls, then 2 rounds of 2 candidates, 2 calls a turn: 16 calls)
ab=("$b/bin/agx-bench" allreduce -i 10 -x 104 -q) # -x: 8 first calls, a window (88)
AGX_ADAPT=1 AGX_VERBOSE=1 AGX_TEST_LEARN_SKEW=1:1000000:native "${run[@]}" -n 3 "${ab[@]}" -m 8:64 --factor 8 \
  > "$t/out" 2>&1 &&
  grep -qE "^agx: allreduce learned on 3 ranks, 64-64 B: [a-z_]+ [0-9.]+ us, native [0-9.]+ us; runs native \(window of 16 calls" \
  "$t/out" || bad "no look at candidates a near class found far slower, or a final not cut at its half"
AGX_ADAPT=1 AGX_VERBOSE=1 AGX_TEST_LEARN_SKEW=1:1000000:native "${run[@]}" -n 3 "${ab[@]}" -m 8:512 --factor 64 \
  > "$t/out" 2>&1 && grep -qE "^agx: allreduce learned on 3 ranks, 512-512 B: ([a-z_]+ [0-9.]+ us, ){3,}native" \
  "$t/out" || bad "every candidate looked at where the learned class is far"
# 9. a kernel that beats the library's call by less than 2x meets it again in a rematch, and
#    keeps the class only if it wins that too: one rank's clock makes all but bruck 10^6
#    times slower (1000x let a loaded machine's stall of 5 ms in the others' one timed call
#    beat it), so bruck wins; with ":flip" it makes bruck alone 10^6 times slower in the rematch,
#    so native does where a rematch is run (AGX_TEST_LEARN_CLEAR: whatever the margin), and
#    bruck keeps the class where it won by more than 2x (no rematch, the default)
ag=("$b/bin/agx-bench" allgather -m 8 -i 10 -x 104 -q)
AGX_ADAPT=1 AGX_VERBOSE=1 AGX_TEST_LEARN_SKEW=1:1000000:bruck AGX_TEST_LEARN_CLEAR=1e9 "${run[@]}" -n 3 "${ag[@]}" \
  > "$t/out" 2>&1 && grep -qE "^agx: allgather learned on 3 ranks, 24-24 B: .*; runs bruck" "$t/out" ||
  bad "bruck timed fastest twice"
AGX_ADAPT=1 AGX_VERBOSE=1 AGX_TEST_LEARN_SKEW=1:1000000:bruck:flip AGX_TEST_LEARN_CLEAR=1e9 "${run[@]}" -n 3 "${ag[@]}" \
  > "$t/out" 2>&1 && grep -qE "^agx: allgather learned on 3 ranks, 24-24 B: .*bruck [0-9]{4,}\.[0-9]+ us; runs native" \
  "$t/out" || bad "the library's call wins the rematch"
AGX_ADAPT=1 AGX_VERBOSE=1 AGX_TEST_LEARN_SKEW=1:1000000:bruck:flip "${run[@]}" -n 3 "${ag[@]}" > "$t/out" 2>&1 &&
  grep -qE "^agx: allgather learned on 3 ranks, 24-24 B: .*; runs bruck" "$t/out" ||
  bad "no rematch for a winner by more than 2x"
# 10. the library's call stays in the window after a first look one rank's clock made
#    10^6 times slower (a call descheduled on a busy node; ":look"), where every other
#    candidate is 10^6 times slower from then on: it wins, with no rematch (AGX_TEST_LEARN_CLEAR=0;
#    before, cut at that one call, it left the class to a kernel 10^6 times slower)
AGX_ADAPT=1 AGX_VERBOSE=1 AGX_TEST_LEARN_SKEW=1:1000000:native:look AGX_TEST_LEARN_CLEAR=0 "${run[@]}" -n 3 "${ab[@]}" \
  -m 8:8 > "$t/out" 2>&1 && grep -qE "^agx: allreduce learned on 3 ranks, 8-8 B: .*; runs native" "$t/out" ||
  bad "the library's call not cut at a descheduled first look"
[ $fail = 0 ] && echo "adapt_check: every check passed"
exit $fail
