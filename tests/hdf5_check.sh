#!/usr/bin/env bash
# The MPI-IO drop-in under an unmodified parallel HDF5 program (tests/preload/hdf5_app.c:
# HDF5's own file and memory types from hyperslab selections, its views set and reset
# around each collective transfer, collective metadata writes, a chunked dataset, ranks
# that select nothing). Each run writes the file plain and under libagx-preload.so; the
# two files must be byte-identical (cmp), the program's read-back of every value must
# pass, and the report at MPI_Finalize must count collective writes and reads taken by
# agx's two-phase engine. Both of Open MPI's MPI-IO implementations (OMPIO, ROMIO via
# OMPI_MCA_io=romio321); 1-8 ranks; every data / metadata kernel forced through the
# file's hints (the program passes them as its MPI_Info) with 1-3 aggregators and
# collective buffers small enough for several rounds, every write through the engine
# (AGX_ADAPT=0); and no hints at all, as users run it (AGX_ADAPT: each file's first
# calls time the library's own).
# Debian's parallel HDF5 for Open MPI (libhdf5-openmpi-dev), so not in an MPICH tree.
#   hdf5_check.sh SRCDIR BUILDDIR
set -uo pipefail
src=$(realpath "$1") b=$(realpath "$2")
app=$b/bin/hdf5_app lib=$b/lib/libagx-preload.so
run=("$src/tools/agxrun" --timeout 120)
t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
kernels=(default issend_all spread_out balanced pairwise tam default)
nps=(3 1 4 5 7 8 6)
fail=0 ok=0
for io in ompio romio321; do
  for i in "${!kernels[@]}"; do
    k=${kernels[i]} n=${nps[i]} sc=$((1 + i % 3))
    hints="agx_data_kernel=$k;agx_meta_kernel=$k;cb_nodes=$((1 + i % 3));cb_buffer_size=$((2048 << (i % 3)))"
    adapt=0
    [ "$k" = default ] && hints="" adapt=1
    what="$io -n $n scale $sc${hints:+, $hints}"
    OMPI_MCA_io=$io "${run[@]}" -n "$n" "$app" "$t/plain.h5" "$sc" > "$t/out" 2>&1 ||
      { echo "FAIL: plain $what"; cat "$t/out"; fail=1; continue; }
    OMPI_MCA_io=$io AGX_ADAPT=$adapt AGX_STATS=1 "${run[@]}" -n "$n" --preload "$lib" "$app" "$t/agx.h5" "$sc" \
      "$hints" > "$t/out" 2>&1 || { echo "FAIL: preloaded $what"; cat "$t/out"; fail=1; continue; }
    if ! grep -q "read_back=ok" "$t/out"; then
      echo "FAIL: $what: no read-back line"; cat "$t/out"; fail=1
    elif ! grep -q "^agx-preload: rank 0: file_write_all [0-9]* calls through agx.* two_phase/[a-z_]* [1-9]" "$t/out"; then
      echo "FAIL: $what: no collective write went through agx's engine"; grep agx-preload "$t/out"; fail=1
    elif ! grep -q "^agx-preload: rank 0: file_read_all [0-9]* calls through agx.* two_phase/[a-z_]* [1-9]" "$t/out"; then
      echo "FAIL: $what: no collective read went through agx's engine"; grep agx-preload "$t/out"; fail=1
    elif [ "$k" != default ] && ! grep -q "^agx-preload: rank 0: file_write_all.* two_phase/$k [1-9]" "$t/out"; then
      echo "FAIL: $what: the forced kernel did not run"; grep agx-preload "$t/out"; fail=1
    elif ! cmp -s "$t/plain.h5" "$t/agx.h5"; then
      echo "FAIL: $what: the files differ"; cmp "$t/plain.h5" "$t/agx.h5" | head -2; fail=1
    else
      ok=$((ok + 1))
      echo "ok   $what: identical ($(grep -o 'file_write_all [0-9]* calls' "$t/out" | head -1))"
    fi
  done
done
echo "hdf5_check: $ok identical, fail=$fail"
exit $fail
