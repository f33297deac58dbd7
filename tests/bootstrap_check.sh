#!/bin/sh
# tools/bootstrap never blocks a machine that has what agx needs (issue 12): with
# AGX_NO_BOOTSTRAP=1 it does nothing; without apt-get it succeeds when every package is
# installed; without dpkg it checks the commands and names what is missing.
#   tests/bootstrap_check.sh SRC
src=$1 fail=0
t=$(mktemp -d)
mkdir "$t/none" "$t/dpkg" "$t/plain"
for c in bash env; do ln -s "$(command -v $c)" "$t/none/$c"; done
for c in bash env dpkg-query grep id; do ln -s "$(command -v $c)" "$t/dpkg/$c"; done
for c in bash env cc cmake mpicc python3; do ln -s "$(command -v $c)" "$t/plain/$c"; done
expect() { # want-status want-text description PATH [VAR=value]
    want=$1 text=$2 what=$3 path=$4; shift 4
    out=$(env -i PATH="$path" "$@" "$t/none/bash" "$src/tools/bootstrap" 2>&1)
    rc=$?
    if [ $rc -eq "$want" ] && printf '%s\n' "$out" | grep -q -- "$text"; then
        echo "ok: $what (status $rc)"
    else
        echo "FAIL: $what: status $rc, expected $want and '$text':"; echo "$out"; fail=1
    fi
}
expect 0 "" "AGX_NO_BOOTSTRAP=1 and no command at all" "$t/none" AGX_NO_BOOTSTRAP=1
expect 1 "set AGX_NO_BOOTSTRAP=1" "not Debian, no compiler: refused with the way out" "$t/none"
expect 0 "found cc, cmake, mpicc, python3" "not Debian, commands present" "$t/plain"
if command -v dpkg-query >/dev/null && dpkg-query -W -f='${Status}' libjansson-dev 2>/dev/null | grep -q "ok installed"; then
    expect 0 "" "Debian, every package installed, no apt-get" "$t/dpkg"
fi
rm -rf "$t"
exit $fail
