#!/bin/sh
# agx-bench refuses bad input: exit status 2 and one line naming the bad flag or value,
# printed once (by rank 0) for every case; an unwritable --csv path fails before the run.
# usage: bench_cli.sh SOURCE_DIR AGX_BENCH
src=$1 bench=$2
fail=0
t=$(mktemp -d)
# check: a refusal of the arguments, in a singleton (0.4 s where a launch of 2 takes 1.4);
# check2: on 2 ranks, where only rank 0 may print and the others must fail alike (one
# argument error per mode, the files that rank 0 alone opens, the failures after MPI_Init)
check() { # expected-text args...
    NP=1 check2 "$@"
}
check2() { # expected-text args...
    want=$1; shift
    if [ "${NP:-2}" = 1 ]; then timeout 60 "$bench" "$@" > "$t/out" 2>&1
    else "$src/tools/agxrun" -n 2 --timeout 60 "$bench" "$@" > "$t/out" 2>&1; fi
    rc=$?
    n=$(grep -c "^agx-bench: " "$t/out")
    if [ $rc -eq 0 ] || [ "$n" -ne 1 ] || ! grep -q -- "$want" "$t/out"; then
        echo "FAIL: agx-bench $*: rc $rc, $n message lines, expected one naming '$want':"; cat "$t/out"; fail=1
    else
        echo "ok: agx-bench $*: $(grep '^agx-bench: ' "$t/out")"
    fi
}
check "-m 4G:4G" allgather -m 4G:4G
check "-m 8-1K" allgather -m 8-1K
check2 "-x -10" allgather -x -10
check "-i 5x" allgather -i 5x
check "--factor 1" allgather --factor 1
check "-f is OSU's full statistics, the size factor is --factor 8" allgather -f 8 -i 1
check "--dist bogus" allgatherv --dist bogus
check "--dist bogus" allgatherv --distribution bogus
check "--comm bogus" inter-allgather --comm bogus
check "--setting 9" inter-allgather --setting 9
check "--setting and --comm" allgather --setting 2
check "unknown option '--bogus'" allreduce --bogus
check "unexpected argument 'extra'" allreduce extra
check "unknown mode 'allgahter'" allgahter
check2 "cannot write /nonexistent-agx/x.csv" allgather -m 8:8 -i 1 --csv /nonexistent-agx/x.csv
check2 "allgather bogus 8 B failed: agx: unknown allgather algorithm 'bogus'" allgather -a bogus -m 8:8 -i 1
check "-M 1x" allgather -M 1x
check "--skew bogus:5" allgather --skew bogus:5
check "--skew random:5:x" allgather --skew random:5:x
check "--noise 2:5: RATE must be in" alltoallv --noise 2:5
# every arrival pattern (and noise) runs and validates; the header names it and its seed
for k in random:300 uniform:300 one:300 several:300:9; do
    "$src/tools/agxrun" -n 3 --timeout 60 "$bench" allgather -m 64:64 -i 3 -x 1 -c -a ring,auto --skew $k --noise 0.5:50 > "$t/out" 2>&1
    if [ "$(grep -c ' ok ' "$t/out")" -eq 2 ] && grep -q "^# skew=${k%%:*}:300us noise=0.5:50us seed=" "$t/out"; then
        echo "ok: --skew $k --noise 0.5:50 validates"
    else
        echo "FAIL: --skew $k:"; cat "$t/out"; fail=1
    fi
done
check2 "-M 10: 64 bytes per process need 256 bytes" allgather -M 10 -m 64:1K
"$src/tools/agxrun" -n 2 --timeout 60 "$bench" allgather -M 1K -m 8:1K -i 1 -x 0 > "$t/out" 2>&1
if grep -q "^# -M 1024: sizes up to 256 bytes" "$t/out" && ! grep -q "^512 " "$t/out" && grep -q "^256 " "$t/out"; then
    echo "ok: -M 1K at 2 ranks runs 8 to 256 bytes"
else
    echo "FAIL: -M 1K:"; cat "$t/out"; fail=1
fi
# a size that does not fit in memory: every rank learns it, none crashes or waits (issue 12:
# -m 1G:1G under a memory limit used to segfault)
(ulimit -v 1500000; "$src/tools/agxrun" -n 2 --timeout 60 "$bench" allgather -m 512M:512M -i 1 -x 0) > "$t/out" 2>&1
rc=$?
if [ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -q "^agx-bench: rank [01] cannot allocate" "$t/out" &&
   [ "$(grep -c "^agx-bench: allgather auto 536870912 B failed: MPI_ERR_NO_MEM" "$t/out")" -eq 1 ] &&
   ! grep -qi "segmentation\|signal" "$t/out"; then
    echo "ok: 512M:512M under a 1.5 GB address-space limit: refused at run time, status $rc"
else
    echo "FAIL: 512M:512M under ulimit -v (status $rc):"; cat "$t/out"; fail=1
fi
# progress: never when stderr is not a terminal (mpirun pipes it), unless --progress, and
# then as whole lines between result rows
p="pap -m 64 -i 2 -x 0 --max-delay 0 -a ring --compute 1ms"
"$src/tools/agxrun" -n 2 --timeout 60 "$bench" $p > "$t/quiet" 2>&1
"$src/tools/agxrun" -n 2 --timeout 60 "$bench" $p --progress > "$t/prog" 2>&1
if ! grep -q "agx-bench: pap N=" "$t/quiet" && grep -q "^agx-bench: pap N=32, max delay 0 ms, ring ..., [0-9]* s$" "$t/prog" &&
   grep -q "^32 *0.0ms ring " "$t/prog" && ! grep -v "^#\|^agx-bench: pap N=32, max\|^[0-9]" "$t/prog"; then
    echo "ok: progress only with --progress, as whole lines"
else
    echo "FAIL: progress:"; cat "$t/quiet" "$t/prog"; fail=1
fi
# -f is OSU's full statistics: without it the table has Avg(us) only (OSU's default)
"$src/tools/agxrun" -n 2 --timeout 60 "$bench" allgather -m 8:8 -i 2 -x 0 > "$t/plain" 2>&1
"$src/tools/agxrun" -n 2 --timeout 60 "$bench" allgather -m 8:8 -i 2 -x 0 -f > "$t/full" 2>&1
"$src/tools/agxrun" -n 2 --timeout 60 "$bench" alltoallv --bytes 8 -i 2 -x 0 -f > "$t/a2a" 2>&1
if grep -q "Avg(us)" "$t/plain" && ! grep -q "Min(us)" "$t/plain" &&
   grep -q "Avg(us) *Min(us) *Max(us) *P50(us) *P99(us) *Iters" "$t/full" && grep -q "^8  *auto([a-z_]*) .* 2 " "$t/full" &&
   grep -q "Avg(us) *Min(us) *Max(us) *P50(us) *P99(us) *Iters" "$t/a2a"; then
    echo "ok: -f adds min, max, p50, p99 and iterations (allgather, alltoallv)"
else
    echo "FAIL: -f:"; cat "$t/plain" "$t/full" "$t/a2a"; fail=1
fi
# every mode: the same one-line refusal, printed once (issue 12)
check2 "-i 5x" pap -i 5x
check "-x -1" pap --warmup -1
check "-m: '8-1K' is not a size" pap -m 8-1K
check "--compute 3parsecs" pap --compute 3parsecs
check "--max-delay: 'soon'" pap --max-delay 1ms,soon
check "unknown option '--bogus'" pap --bogus
check "--json needs a value" pap --json
check2 "cannot write /nonexistent-agx/p.json" pap -m 64 -i 1 -x 0 --max-delay 0 -a ring --json /nonexistent-agx/p.json
check "--pattern bogus" alltoallv --pattern bogus
check2 "-i 0" alltoallv -i 0
check "unknown option '--bogus'" alltoallv --bogus
check "--bytes: '1T' is not a size" alltoallv --bytes 64,1T
check2 "cannot write /nonexistent-agx/a.csv" alltoallv --bytes 64 -i 1 --csv /nonexistent-agx/a.csv
check "--cells 0" twophase --workload e3sm --no-write --cells 0
check "unknown workload 'bogus'" twophase --workload bogus --no-write
check2 "unknown option '-z'" twophase -z
check2 "cannot write /nonexistent-agx/t.json" twophase --workload e3sm --no-write -k tam -i 1 --cells 16 --json /nonexistent-agx/t.json
# --version, and JSON records that carry the run's context
v=$("$bench" --version) && echo "$v" | grep -q "^agx-bench (agx [0-9]" && echo "ok: $v" || { echo "FAIL: --version: $v"; fail=1; }
"$src/tools/agxrun" -n 2 --timeout 60 "$bench" allgather -m 8:16 -i 2 -x 1 --json "$t/r.json" > "$t/out" 2>&1
if python3 - "$t/r.json" <<'PY'
import json, sys
recs = json.load(open(sys.argv[1]))
c = recs[0]["context"]
assert len(recs) == 2 and all(r["context"] == c for r in recs), recs
assert "allgather -m 8:16" in c["command"] and c["host"] and c["date"][:2] == "20" and c["mpi"], c
assert c["warmup"] == 1 and c["nprocs"] == 2, c
print("ok: JSON records carry the context:", c["mpi"][:40], c["date"])
PY
then :; else echo "FAIL: JSON context"; cat "$t/out"; fail=1; fi
rm -rf "$t"
exit $fail
