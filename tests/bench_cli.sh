#!/bin/sh
# agx-bench refuses bad input: exit status 2 and one line naming the bad flag or value,
# printed once (by rank 0) for every case; an unwritable --csv path fails before the run.
# usage: bench_cli.sh SOURCE_DIR AGX_BENCH
src=$1 bench=$2
fail=0
t=$(mktemp -d)
check() { # expected-text args...
    want=$1; shift
    "$src/tools/agxrun" -n 2 --timeout 60 "$bench" "$@" > "$t/out" 2>&1
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
check "-x -10" allgather -x -10
check "-i 5x" allgather -i 5x
check "-f 1" allgather -f 1
check "--dist bogus" allgatherv --dist bogus
check "--dist bogus" allgatherv --distribution bogus
check "--comm bogus" inter-allgather --comm bogus
check "--setting 9" inter-allgather --setting 9
check "--setting and --comm" allgather --setting 2
check "unknown option '--bogus'" allreduce --bogus
check "unexpected argument 'extra'" allreduce extra
check "unknown mode 'allgahter'" allgahter
check "cannot write /nonexistent-agx/x.csv" allgather -m 8:8 -i 1 --csv /nonexistent-agx/x.csv
rm -rf "$t"
exit $fail
