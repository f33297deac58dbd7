#!/usr/bin/env bash
# The MPI-IO drop-in under an unmodified PnetCDF program (tests/preload/pnetcdf_app.c, the
# shapes of KangRoss20's E3SM, FLASH and BTIO): each workload written plain and under
# libagx-preload.so must give byte-identical files (cmp), with AGX_VERBOSE showing that
# agx's two-phase write ran and the report at MPI_Finalize counting it; the program then
# reads every write back collectively (get_varn_all, iget + wait_all, get_vara_all with a
# halo memory type) and checks each value (exit 1 if one differs), and the reads must
# have gone through agx's two-phase read too. Both of Open MPI's MPI-IO implementations (OMPIO, ROMIO via
# OMPI_MCA_io=romio321); every data / metadata kernel, forced through PnetCDF's
# PNETCDF_HINTS (agx_data_kernel, agx_meta_kernel), with 1-4 aggregators (cb_nodes),
# striped domains, and collective buffers small enough for several rounds; 1-8 ranks; and
# no hints at all, as users run it (FLASH's writes: each rank its own; AGX_ADAPT timing
# the library's write in each file's first writes).
# Then PnetCDF's own ncmpidiff and ncmpidump read those files through the drop-in (below).
# Debian's PnetCDF is built on Open MPI, so MPICH is not run here (test_fileview is).
#   pnetcdf_check.sh SRCDIR BUILDDIR
set -uo pipefail
src=$(realpath "$1") b=$(realpath "$2")
app=$b/bin/pnetcdf_app lib=$b/lib/libagx-preload.so
run=("$src/tools/agxrun" --timeout 120)
t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
kernels=(auto issend_all isend_all spread_out balanced pairwise tam hybrid default)
nps=(1 3 4 8 2 5 4 6 4)
fail=0 ok=0
for io in ompio romio321; do
  for w in e3sm flash btio; do
    for i in "${!kernels[@]}"; do
      k=${kernels[i]} n=${nps[i]}
      hints="agx_data_kernel=$k;agx_meta_kernel=$k;cb_nodes=$((1 + i % 4));cb_buffer_size=$((4096 << (i % 3)))"
      [ $((i % 2)) -eq 1 ] && hints="$hints;striping_unit=2048;striping_factor=3"
      [ "$k" = default ] && hints="" # as users run it: agx's plan (FLASH: each rank its own) and AGX_ADAPT
      # the reference: the library with the striping hints only (PnetCDF aligns its header
      # to striping_unit) and its own buffer sizes: OMPIO 4.1.4 with cb_buffer_size=4096
      # lost a written element of e3sm at 4 ranks in 1 of 3 runs here
      plain=$t/plain.nc ph=""
      [ $((i % 2)) -eq 1 ] && ph="striping_unit=2048;striping_factor=3"
      sc=1; [ "$k" = default ] && sc=4 # FLASH's blocks then 48 KiB per rank and variable
      OMPI_MCA_io=$io PNETCDF_HINTS="$ph" "${run[@]}" -n "$n" "$app" "$w" "$plain" $sc > "$t/out" 2>&1 ||
        { echo "FAIL: plain $io $w -n $n"; cat "$t/out"; fail=1; continue; }
      # a forced kernel runs every write (AGX_ADAPT=0): the library's own write, timed while
      # learning, would run OMPIO with these small buffers (see above)
      adapt=0; [ "$k" = default ] && adapt=1
      OMPI_MCA_io=$io PNETCDF_HINTS="$hints" AGX_ADAPT=$adapt AGX_VERBOSE=1 "${run[@]}" -n "$n" --preload "$lib" "$app" "$w" \
        "$t/agx.nc" $sc > "$t/out" 2>&1 || { echo "FAIL: preloaded $io $w -n $n ($hints)"; cat "$t/out"; fail=1; continue; }
      what="$io $w -n $n, $hints"
      if ! grep -q "agx's two-phase write" "$t/out"; then
        echo "FAIL: $what: the engine did not run"; grep agx "$t/out" | head -5; fail=1
      elif ! grep -q "^agx-preload: rank 0: file_write_all [0-9]* calls through agx ([0-9]* B written):.* two_phase/$(case $k in auto | hybrid | default) echo '[a-z_]*' ;; *) echo "$k" ;; esac) [1-9]" "$t/out"; then
        echo "FAIL: $what: the report does not count the two-phase writes"; grep agx-preload "$t/out"; fail=1
      elif ! grep -q "agx's two-phase read" "$t/out" || ! grep -q "^agx-preload: rank 0: file_read_all [0-9]* calls through agx.* two_phase/" "$t/out"; then
        echo "FAIL: $what: the reads did not go through agx's engine"; grep "agx-preload\|read" "$t/out" | head -5; fail=1
      elif [ "$k" = default ] && [ "$w" = flash ] && ! grep -q "^agx-preload: rank 0: file_write_all.* two_phase/own [1-9]" "$t/out"; then
        echo "FAIL: $what: FLASH's large blocks were not written by their ranks"; grep agx-preload "$t/out"; fail=1
      elif ! cmp -s "$plain" "$t/agx.nc"; then
        echo "FAIL: $what: the files differ"; cmp "$plain" "$t/agx.nc" | head -2; fail=1
      else
        ok=$((ok + 1)); echo "ok   $what: identical ($(grep -o 'kernels [a-z_]* / [a-z_]*' "$t/out" | head -1))"
        [ "$io$w$k" = ompioe3smdefault ] && cp "$plain" "$t/e3sm_plain.nc" && cp "$t/agx.nc" "$t/e3sm_agx.nc"
      fi
    done
  done
done
# PnetCDF's own tools (pnetcdf-bin) reading through the drop-in: ncmpidiff (each rank
# reads its part of every variable collectively) must find the E3SM files above the same,
# and in a copy with one byte of its data changed the same difference as plain's
# ncmpidiff, word for word; ncmpidump must print what plain's prints.
if [ -x /usr/bin/ncmpidiff ] && [ -f "$t/e3sm_plain.nc" ]; then
  cp "$t/e3sm_plain.nc" "$t/bad.nc"
  at=$(( $(stat -c %s "$t/bad.nc") * 3 / 4 )) # in the data, past the header
  printf '\x5a' | dd of="$t/bad.nc" bs=1 seek="$at" conv=notrunc status=none
  cmp -s "$t/bad.nc" "$t/e3sm_plain.nc" && printf '\xa5' | dd of="$t/bad.nc" bs=1 seek="$at" conv=notrunc status=none
  diffs() { grep "^DIFF\|differences\|are the same" "$t/out"; }
  "${run[@]}" -n 3 /usr/bin/ncmpidiff "$t/e3sm_plain.nc" "$t/bad.nc" > "$t/out" 2>&1
  want=$(diffs)
  "${run[@]}" -n 1 /usr/bin/ncmpidump "$t/e3sm_plain.nc" > "$t/dump.plain" 2>&1
  for env in AGX_ADAPT=1 AGX_ADAPT=0; do
    env $env AGX_STATS=1 "${run[@]}" -n 3 --preload "$lib" /usr/bin/ncmpidiff "$t/e3sm_plain.nc" "$t/e3sm_agx.nc" \
      > "$t/out" 2>&1
    same=$? reads=$(grep -c "^agx-preload: rank 0: file_read_all [1-9][0-9]* calls through agx" "$t/out")
    env $env "${run[@]}" -n 3 --preload "$lib" /usr/bin/ncmpidiff "$t/e3sm_plain.nc" "$t/bad.nc" > "$t/out" 2>&1
    got=$(diffs)
    env $env "${run[@]}" -n 1 --preload "$lib" /usr/bin/ncmpidump "$t/e3sm_plain.nc" > "$t/dump.agx" 2>&1
    if [ $same != 0 ] || [ "$reads" != 1 ]; then
      echo "FAIL: ncmpidiff ($env): the files differ, or agx took no read (exit status $same)"; fail=1
    elif ! echo "$want" | grep -q "^DIFF" || [ "$got" != "$want" ]; then
      echo "FAIL: ncmpidiff ($env): '$got' against plain's '$want'"; fail=1
    elif ! cmp -s "$t/dump.plain" "$t/dump.agx"; then
      echo "FAIL: ncmpidump ($env): not what plain's printed"; diff "$t/dump.plain" "$t/dump.agx" | head -4; fail=1
    else
      ok=$((ok + 1)); echo "ok   ncmpidiff, ncmpidump ($env): the same files, the same difference as plain's ($(echo "$want" | head -1 | cut -c1-60)...)"
    fi
  done
else
  echo "ncmpidiff not installed (pnetcdf-bin) or no E3SM file: PnetCDF's tools skipped"
fi
echo "pnetcdf_check: $ok identical, fail=$fail"
exit $fail
