#!/usr/bin/env bash
# The drop-in engine's two ways into a file (docs/algorithms.md, "MPI-IO drop-in"): the
# file-view test at 3 ranks through agx's own POSIX descriptor (the default, where the
# scratch directory's file system is one agx takes) and through a second MPI handle
# (AGX_IO_POSIX=0); each must pass and AGX_VERBOSE must name the way it took.
#   io_paths_check.sh SRCDIR TEST_FILEVIEW
set -uo pipefail
src=$1 prog=$2
dir=$(mktemp -d "${AGX_TP_DIR:-/tmp}/agx-paths.XXXXXX") || { echo "io_paths_check: no scratch directory"; exit 1; }
trap 'rm -rf "$dir"' EXIT
case $(stat -f -c %T "$dir") in
  ext2/ext3|xfs|btrfs|tmpfs|overlayfs|zfs|f2fs|lustre|gpfs) posix="its own POSIX descriptor" ;;
  *) posix="" ;; # another file system: either way, said
esac
for v in 1 0; do
  out=$(AGX_TP_DIR=$dir AGX_IO_POSIX=$v AGX_VERBOSE=1 "$src/tools/agxrun" -n 3 --timeout 200 "$prog" --quick 2>&1)
  rc=$?
  want=$posix; [ $v = 0 ] && want="a second MPI handle"
  echo "$out" | grep -E "^(PASS|FAIL)|engine [a-z ]* the file through" | sed 's/.*(rank 0): //' | sort | uniq -c
  [ $rc -eq 0 ] || { echo "io_paths_check: AGX_IO_POSIX=$v: the test failed (rc=$rc)"; echo "$out" | tail -20; exit 1; }
  echo "$out" | grep -q "agx's engine [a-z ]* the file through $want" ||
    { echo "io_paths_check: AGX_IO_POSIX=$v: AGX_VERBOSE never said '$want'"; exit 1; }
  if [ $v = 0 ] && echo "$out" | grep -q "its own POSIX descriptor"; then
    echo "io_paths_check: AGX_IO_POSIX=0 and still a POSIX descriptor"; exit 1
  fi
done
echo "io_paths_check: ok"
