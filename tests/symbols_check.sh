#!/usr/bin/env bash
# The libraries export their public interface and nothing else (issue 35): libagx.so the
# functions include/agx.h declares, each of them; libagx-preload.so the MPI_* entries it
# defines (agx_preload.c's and preload_progress.c's; preload_persist.c's, INIT(Op) as
# MPI_Op_init or Open MPI 4.1's MPIX_Op_init with MPI_Start, _Startall and _Request_free,
# only where it intercepts persistent collectives) and the Fortran names of
# build/generated/preload_fortran_names.h. An
# internal name in the dynamic table could clash with a program's or another library's
# inside the programs the drop-in is preloaded into.
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
  got=$(exports "$pre")
  # preload_persist.c's entries (the inits, MPI_Start, _Startall, _Request_free) exist
  # where it intercepts this MPI's persistent collectives
  persist=0; echo "$got" | grep -q '^MPIX\?_[A-Za-z]*_init$' && persist=1
  defined=$( { grep -ho '^AGX_EXPORT int MPI_[A-Za-z_]*(' "$src/src/preload/agx_preload.c" "$src/src/preload/preload_progress.c" | sed 's/.*int //; s/(//'
               [ $persist -eq 1 ] && grep -o '^AGX_EXPORT int MPI_[A-Za-z_]*(' "$src/src/preload/preload_persist.c" |
                 sed 's/.*int //; s/(//'
               for op in $(grep -ho '^AGX_EXPORT int INIT([A-Za-z]*)' "$src"/src/preload/*.c | sed 's/.*INIT(//; s/)//'); do
                 echo "$got" | grep -x "MPIX\?_${op}_init"
               done
               # the Fortran entries: the names cmake/fortran_names.cmake read from the
               # MPI library's Fortran libraries
               grep -o 'X(f_[a-z_]*, [A-Za-z_0-9]*)' "$build/generated/preload_fortran_names.h" 2>/dev/null |
                 sed 's/.*, //; s/)//'; } | sort -u)
  n_init=$(grep -c '^AGX_EXPORT int INIT(' "$src"/src/preload/*.c | awk -F: '{s += $2} END {print s + 0}')
  n_got=$(echo "$got" | grep -c '^MPIX\?_[A-Za-z]*_init$')
  if [ "$n_got" -ne 0 ] && [ "$n_got" -ne "$n_init" ]; then # all or none (preload_check: all where the MPI has them)
    echo "FAIL: libagx-preload.so exports $n_got persistent inits, preload_persist.c defines $n_init"; fail=1
  fi
  echo "libagx-preload.so: exports $(echo $got)"
  [ "$got" = "$defined" ] || { echo "FAIL: libagx-preload.so should export exactly: $(echo $defined)"; fail=1; }
fi
# libagx.so calls none of the entries the preload defines (their PMPI_ forms instead): a
# call to one would come back into agx under the preload (MPI_Iallreduce in agx's own
# agreement recursed until the stack ran out)
if [ -f "$pre" ]; then
  back=$(comm -12 <(nm -D --undefined-only "$build/lib/libagx.so" | awk '{print $2}' | sort -u) <(exports "$pre"))
  [ -z "$back" ] || { echo "FAIL: libagx.so calls entries the preload defines: $(echo $back)"; fail=1; }
fi
[ $fail -eq 0 ] && echo "ok: only the public interface is exported"
exit $fail
