#!/usr/bin/env bash
# The layers call downward only (issue 35): from the objects the build made, every call
# (and data reference) from a file of one folder to a file of another must go to a lower
# layer; siblings (two operations' folders, src/api and src/io) do not call each other.
# Together with the build's include directories (an upward include does not compile),
# this proves there is no loop of calls between folders.
#   patterns < core < select < pat < coll/<op> < coll < api, io < preload
#   tests/layers_check.sh BUILD
set -uo pipefail
build=$1
rank_of() {
  case $1 in
    src/patterns) echo 0 ;; src/core) echo 1 ;; src/select) echo 2 ;; src/pat) echo 3 ;;
    src/coll/*) echo 4 ;; src/coll) echo 5 ;; src/api|src/io) echo 6 ;; src/preload) echo 7 ;;
    *) echo -1 ;;
  esac
}
# the layers' object libraries (agx_core.dir, agx_coll_allgather.dir, ...) and the preload
objs=$(find "$build/CMakeFiles" -name '*.c.o' -regextype posix-extended \
         -regex '.*/(agx_(patterns|core|select|pat|coll_[a-z]+|api|io)|agx-preload)\.dir/src/.*' | sort)
[ -n "$objs" ] || { echo "FAIL: no objects under $build/CMakeFiles"; exit 1; }
declare -A def
for o in $objs; do
  f=${o#*.dir/}; f=${f%.o}
  for s in $(nm --defined-only "$o" | awk '$2 ~ /^[TDBRC]$/ {print $3}'); do def[$s]=$f; done
done
fail=0 calls=0
for o in $objs; do
  f=${o#*.dir/}; f=${f%.o}; d=$(dirname "$f"); rd=$(rank_of "$d")
  for s in $(nm -u "$o" | awk '{print $2}' | grep '^agx_'); do
    g=${def[$s]:-}; [ -n "$g" ] || continue
    e=$(dirname "$g"); [ "$e" = "$d" ] && continue
    re=$(rank_of "$e"); calls=$((calls + 1))
    if [ "$re" -ge "$rd" ]; then
      echo "FAIL: $f ($d, layer $rd) -> $s in $g ($e, layer $re)"; fail=1
    fi
  done
done
echo "$(echo "$objs" | wc -l) objects, $calls references between folders"
[ $fail -eq 0 ] && echo "ok: every reference between folders goes to a lower layer"
exit $fail
