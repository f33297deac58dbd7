#!/usr/bin/env bash
# The libraries export their public interface and nothing else (issue 35): libagx.so the
# functions include/agx.h declares, each of them; libagx-preload.so the MPI_* entries it
# defines. An internal name in the dynamic table could clash with a program's or another
# library's inside the programs the drop-in is preloaded into.
#   tests/symbols_check.sh SRC BUILD
set -uo pipefail
src=$1 build=$2
fail=0
public=$(grep -o '\bagx_[a-z_0-9]*(' "$src/include/agx.h" | tr -d '(' | sort -u)
exports() { nm -D --defined-only "$1" | awk '$2 ~ /^[TDBRVWiu]$/ && $3 !~ /^_/ {print $3}' | sort -u; }
got=$(exports "$build/lib/libagx.so")
extra=$(comm -23 <(echo "$got") <(echo "$public"))
missing=$(comm -13 <(echo "$got") <(echo "$public"))
echo "libagx.so: $(echo "$got" | grep -c .) exported, agx.h declares $(echo "$public" | grep -c .)"
[ -z "$extra" ] || { echo "FAIL: libagx.so exports names agx.h does not declare:"; echo "$extra" | head -20; fail=1; }
[ -z "$missing" ] || { echo "FAIL: agx.h declares functions libagx.so does not export:"; echo "$missing"; fail=1; }
pre=$build/lib/libagx-preload.so
if [ -f "$pre" ]; then
  defined=$(grep -o '^AGX_EXPORT int MPI_[A-Za-z_]*(' "$src/src/preload/agx_preload.c" | sed 's/.*int //; s/(//' | sort -u)
  got=$(exports "$pre")
  echo "libagx-preload.so: exports $(echo $got)"
  [ "$got" = "$defined" ] || { echo "FAIL: libagx-preload.so should export exactly: $(echo $defined)"; fail=1; }
fi
[ $fail -eq 0 ] && echo "ok: only the public interface is exported"
exit $fail
