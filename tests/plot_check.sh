#!/bin/sh
# tools/agx-plot: PNG, SVG and PDF by the output's extension (checked by the files' magic
# bytes); a CSV that is not agx-bench's, a missing column, a bad row or an unknown
# extension is refused with exit status 2, one message, and no output file (issue 12).
# usage: plot_check.sh SOURCE_DIR
src=$1
plot=$src/tools/agx-plot
t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
fail=0
cat > "$t/ok.csv" <<'CSV'
op,algorithm,nprocs,bytes,iterations,avg_us,min_us,max_us,p50_us,p99_us,validated
allgather,bruck,4,8,10,3.5,3.1,4.0,3.4,4.0,true
allgather,bruck,4,1024,10,9.25,8.0,11.0,9.0,11.0,true
allgather,ring,4,8,10,4.5,4.0,5.0,4.4,5.0,true
allgather,ring,4,1024,10,7.0,6.5,8.0,7.0,8.0,true
CSV
magic() { # file expected-first-bytes
    head -c 16 "$1" | grep -q "$2"
}
for ext in png:PNG svg:'<?xml' pdf:%PDF; do
    e=${ext%%:*} m=${ext#*:}
    if "$plot" "$t/ok.csv" "$t/out.$e" --y p50_us > "$t/log" 2>&1 && magic "$t/out.$e" "$m"; then
        echo "ok: agx-plot writes .$e"
    else
        echo "FAIL: agx-plot .$e:"; cat "$t/log"; fail=1
    fi
done
refuse() { # expected-text args...
    want=$1; shift
    rm -f "$t/bad.png"
    "$plot" "$@" > "$t/log" 2>&1
    rc=$?
    if [ $rc -ne 2 ] || ! grep -q -- "$want" "$t/log" || [ -e "$t/bad.png" ]; then
        echo "FAIL: agx-plot $*: rc $rc, expected 2 and '$want', no output:"; cat "$t/log"; fail=1
    else
        echo "ok: agx-plot $*: $(head -n 1 "$t/log")"
    fi
}
printf 'name,value\nx,1\ny,2\n' > "$t/other.csv"
refuse "no column 'op'" "$t/other.csv" "$t/bad.png"
refuse "no column 'p42_us'" "$t/ok.csv" "$t/bad.png" --y p42_us
sed 's/9.25/fast/' "$t/ok.csv" > "$t/nan.csv"
refuse "are not numbers" "$t/nan.csv" "$t/bad.png"
refuse "extension names its format" "$t/ok.csv" "$t/bad.jpg"
refuse "cannot read" "$t/missing.csv" "$t/bad.png"
refuse "unknown option '--bogus'" "$t/ok.csv" "$t/bad.png" --bogus
exit $fail
