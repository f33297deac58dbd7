#!/usr/bin/env bash
# The drop-in under programs nobody here wrote, Debian's, built on Open MPI: ScaLAPACK's
# test drivers and the BLACS tester (scalapack-mpi-test), MUMPS's examples (mumps-test),
# the HPC Challenge benchmark (hpcc) and LAMMPS (lammps), 3-4 ranks. BLACS reduces over
# its grids' row, column and whole communicators (MPI_Comm_split per grid, freed at grid
# exit) with predefined and its own user ops, on 4 B to a few KiB, thousands of times.
# - The BLACS tester, its C driver and its Fortran one (xCbtest, xFbtest), its combine
#   tests (BLACS's reductions: MPI_Allreduce) in three precisions and its auxiliary
#   tests (its point-to-point and broadcast tests, which agx does not take, are left
#   out: beside two busy processes they took the tester past two minutes), as users
#   run it (C) and with AGX_ADAPT=0 (Fortran): every group
#   that begins must end with no failure (the repeatable-sum test may say SKIPPED: the
#   sums came out the same whatever order the ranks arrived in). The tester ends in
#   BLACS_ABORT by design, so its exit status is not read.
# - Five ScaLAPACK drivers (LU, QR, inverse, least squares, banded LU): run plain, as
#   users run it and with AGX_ADAPT=0; the same number of tests must pass the residual
#   checks and none fail, and agx must have taken allreduces. Their iterative refinement
#   is off (the last line of LU.dat): xdllt's hangs in it in most plain runs here, and
#   xdlu's hung once in a plain run beside two busy processes. Neither xdllt nor xdsep
#   (one residual check failed in most plain runs) is in the list.
# - MUMPS's example drivers (Fortran programs, so their MPI calls reach agx through its
#   Fortran entry points), real and complex, 4 and 3 ranks: the solution the same as
#   plain's, digit for digit as users run it (floating-point reductions are the
#   library's), within 1e-12 with AGX_ADAPT=0 (agx's own algorithms on every allreduce).
# - HPC Challenge (HPL, PTRANS, RandomAccess, FFT, DGEMM, STREAM, latency and bandwidth;
#   its example input, 4 ranks; hundreds of allreduces), as users run it and with
#   AGX_ADAPT=0: its own checks must pass (HPL's residual, RandomAccess's errors, FFT's
#   error, its Success line) and agx must have taken allreduces.
# - LAMMPS (a C++ program; Lennard-Jones melt, 16,384 atoms, 500 steps, 4 ranks; its
#   thermodynamic sums are floating-point allreduces): its thermo rows the same as
#   plain's, digit for digit as users run it, within 1e-6 with AGX_ADAPT=0.
# - CP2K (Fortran, `use mpi`; two water molecules, DFT with plane waves, 3 MD steps, 4
#   ranks; its 3D FFTs transpose by MPI_Alltoallv, ~800 MB a run): its energies the same
#   as plain's, digit for digit as users run it and within 1e-10 with AGX_ADAPT=0, and agx
#   must have taken alltoallvs as well as allreduces.
# - NWChem (Fortran, over Global Arrays' MPI layer; a water molecule's SCF energy and
#   gradient, 4 ranks): the energy and the gradient as plain's, digit for digit as users
#   run it, within 2e-6 with AGX_ADAPT=0 (the gradient is printed to 1e-6).
# A program that is not installed is said and skipped; tools/bootstrap installs them all.
#   apps_check.sh SRCDIR BUILDDIR
set -uo pipefail
src=$(realpath "$1") b=$(realpath "$2")
tdir=$(ls -d /usr/lib/*/scalapack/openmpi-tests 2>/dev/null | head -1) mdir=/usr/lib/mumps hpcc=/usr/bin/hpcc
lmp=/usr/bin/lmp cp2k=/usr/bin/cp2k.psmp nwchem=/usr/bin/nwchem.openmpi
lib=$b/lib/libagx-preload.so
run=("$src/tools/agxrun" --timeout 300 -n 4) # a launch took 74 s beside two busy processes
t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
cd "$t" || exit 1
fail=0 ok=0 skipped=""
if [ -n "$tdir" ]; then
  cp "$tdir"/*.dat "$tdir"/BLACS/*.dat . || exit 1
  printf "%s\n" "'agx: the combines and the auxiliary tests'" 6 "'blacstest.out'" "'F'" "'F'" "'T'" "'T'" 3 \
    "'I' 'S' 'Z'" 0 > bt.dat # comment, device out, output file, SDRV, BSBR, COMB, AUX, precisions, verbosity
  sed -i '$ s/^T/F/' LU.dat # no condition estimate and iterative refinement
else
  skipped+=" ScaLAPACK"
fi
[ -x "$mdir/dsimpletest" ] || { skipped+=" MUMPS"; mdir=""; }
[ -x "$hpcc" ] || { skipped+=" HPCC"; hpcc=""; }
[ -x "$lmp" ] || { skipped+=" LAMMPS"; lmp=""; }
[ -x "$cp2k" ] || { skipped+=" CP2K"; cp2k=""; }
[ -x "$nwchem" ] || { skipped+=" NWChem"; nwchem=""; }
[ -z "$skipped" ] || echo "not installed, skipped:$skipped"
taken() { # what ran, the ok line's words: passed if agx took allreduces in it
  if grep -q "^agx-preload: rank 0: allreduce [1-9][0-9]* calls through agx" out; then
    ok=$((ok + 1)); echo "ok   $1: $2 ($(grep -o 'allreduce [0-9]* calls through agx' out | head -1))"
  else
    echo "FAIL: $1: agx took no allreduce"; grep agx-preload out; fail=1
  fi
}

blacs() { # driver, environment
  env $2 AGX_VERBOSE=1 "${run[@]}" --preload "$lib" "$tdir/BLACS/$1" > out 2>&1
  local sums aux begun
  begun=$(grep -c "TESTS: BEGIN" out)
  sums=$(grep -c "TESTS: *[0-9]* TESTS; *[0-9]* PASSED, *[0-9]* SKIPPED, *0 FAILED" out)
  aux=$(grep -c "^ PASSED  " out)
  if [ "$sums" -lt 6 ] || [ "$sums" != $((begun - 1)) ] || grep -q "^ FAILED\|TESTS:.* [1-9][0-9]* FAILED" out ||
     ! grep -q "DONE BLACS_GRIDEXIT" out || [ "$aux" -lt 5 ] || ! grep -q "^ \(PASSED  \|SKIPPED \)REPEATABLE SUM TEST" out; then
    echo "FAIL: $1 ($2): $sums of $((begun - 1)) test groups without failures, $aux auxiliary tests passed"
    grep "FAILED\|ERROR\|error" out | head -5; fail=1
  elif ! grep -q "^agx: allreduce on a communicator of 4 ranks" out; then
    echo "FAIL: $1 ($2): agx took no allreduce"; fail=1
  elif [ "$2" = AGX_ADAPT=0 ] && ! grep -q "^agx: allreduce on a communicator of [2-4] ranks.*: \(dissemination\|recursive_doubling\|rabenseifner\) (default rule)" out; then
    echo "FAIL: $1 ($2): none of agx's own algorithms ran"; grep "^agx: allreduce" out | head -3; fail=1
  else
    ok=$((ok + 1)); echo "ok   $1 ($2): $sums test groups and $aux auxiliary tests passed"
  fi
}
if [ -n "$tdir" ]; then
  blacs xCbtest AGX_ADAPT=1
  blacs xFbtest AGX_ADAPT=0
fi

count() { grep -o "[0-9]* tests completed and $1" out | awk '{s += $1} END {print s + 0}'; }
# Lines of 2k numbers on stdin (NF fields each, when NF is not 0), the first k against
# the last k: each within TOL, absolute or (REL 1) relative to the first's magnitude.
#   within TOL REL NF
within() {
  awk -v tol="$1" -v rel="$2" -v nf="$3" '{k = NF / 2; bad = bad || NF % 2 || (nf && NF != nf)
    for (i = 1; i <= k; i++) { d = $i - $(i + k); m = rel ? ($i < 0 ? -$i : $i) + 1e-300 : 1; bad = bad || d / m > tol || d / m < -tol } }
    END {exit bad}'
}
for x in ${tdir:+xdlu xzqr xdinv xdls xdgblu}; do
  "${run[@]}" "$tdir/$x" > out 2>&1 || { echo "FAIL: $x plain: exit status $?"; fail=1; continue; }
  want=$(count passed)
  [ "$want" -gt 0 ] && [ "$(count failed)" = 0 ] || { echo "FAIL: $x plain: $want passed"; fail=1; continue; }
  for env in AGX_ADAPT=1 AGX_ADAPT=0; do
    env $env AGX_STATS=1 "${run[@]}" --preload "$lib" "$tdir/$x" > out 2>&1 ||
      { echo "FAIL: $x ($env): exit status $?"; tail -5 out; fail=1; continue; }
    if [ "$(count passed)" != "$want" ] || [ "$(count failed)" != 0 ]; then
      echo "FAIL: $x ($env): $(count passed) passed, $(count failed) failed (plain: $want passed)"; fail=1
    else
      taken "$x ($env)" "$want passed, as plain"
    fi
  done
done

solution() { grep -o "Solution is.*" out | sed 's/Solution is//' | tr -d '()' | tr ',' ' '; }
for c in ${mdir:+"dsimpletest input_simpletest_real 4" "zsimpletest input_simpletest_cmplx 3"}; do
  set -- $c
  prog=$mdir/$1 input=$mdir/$2
  mrun=("$src/tools/agxrun" --timeout 300 -n "$3")
  "${mrun[@]}" sh -c "$prog < $input" > out 2>&1
  want=$(solution)
  [ -n "$want" ] || { echo "FAIL: $1 plain: no solution"; tail -5 out; fail=1; continue; }
  for env in AGX_ADAPT=1 AGX_ADAPT=0; do
    env $env AGX_STATS=1 "${mrun[@]}" --preload "$lib" sh -c "$prog < $input" > out 2>&1
    got=$(solution)
    if [ -z "$got" ] || { [ "$env" = AGX_ADAPT=1 ] && [ "$got" != "$want" ]; }; then
      echo "FAIL: $1 ($env): '$got', plain '$want'"; fail=1
    elif ! echo "$want" "$got" | within 1e-12 0 0; then
      echo "FAIL: $1 ($env): '$got', plain '$want'"; fail=1
    else
      taken "$1 ($env, $3 ranks)" "the solution as plain's"
    fi
  done
done

for env in ${hpcc:+AGX_ADAPT=1 AGX_ADAPT=0}; do
  cp /usr/share/doc/hpcc/examples/_hpccinf.txt hpccinf.txt || { echo "FAIL: hpcc: no example input"; fail=1; break; }
  rm -f hpccoutf.txt
  env $env AGX_STATS=1 "${run[@]}" --preload "$lib" "$hpcc" > out 2>&1 ||
    { echo "FAIL: hpcc ($env): exit status $?"; tail -5 out; fail=1; continue; }
  r=hpccoutf.txt err=$(sed -n 's/^MPIFFT_maxErr=//p' hpccoutf.txt)
  if ! grep -q "^Success=1" $r || ! grep -q "\.\.\.\.\.\. PASSED" $r || grep -q "\.\.\.\.\.\. FAILED" $r ||
     ! grep -q "^MPIRandomAccess_ErrorsFraction=0$" $r || ! awk -v e="$err" 'BEGIN {exit !(e != "" && e + 0 < 1e-10)}'; then
    echo "FAIL: hpcc ($env): $(grep -E '^(Success|MPIRandomAccess_ErrorsFraction|MPIFFT_maxErr)=' $r | tr '\n' ' ')"
    fail=1
  else
    taken "hpcc ($env)" "its checks passed"
  fi
done
thermo() { awk '/^ *Step/ {on = 1; next} /^Loop time/ {on = 0} on && $1 ~ /^[0-9]+$/' "$1"; }
if [ -n "$lmp" ]; then
  printf "%s\n" "units lj" "atom_style atomic" "lattice fcc 0.8442" "region box block 0 16 0 16 0 16" \
    "create_box 1 box" "create_atoms 1 box" "mass 1 1.0" "velocity all create 1.44 87287 loop geom" \
    "pair_style lj/cut 2.5" "pair_coeff 1 1 1.0 1.0 2.5" "neighbor 0.3 bin" "neigh_modify delay 0 every 20 check no" \
    "fix 1 all nve" "thermo 10" "run 500" > in.lj
  "${run[@]}" "$lmp" -in in.lj -log plain.log > out 2>&1 && [ "$(thermo plain.log | wc -l)" = 51 ] ||
    { echo "FAIL: lammps plain: exit status or thermo rows"; tail -5 out; fail=1; lmp=""; }
fi
for env in ${lmp:+AGX_ADAPT=1 AGX_ADAPT=0}; do
  env $env AGX_STATS=1 "${run[@]}" --preload "$lib" "$lmp" -in in.lj -log agx.log > out 2>&1 ||
    { echo "FAIL: lammps ($env): exit status $?"; tail -5 out; fail=1; continue; }
  if [ "$env" = AGX_ADAPT=1 ] && [ "$(thermo agx.log)" != "$(thermo plain.log)" ]; then
    echo "FAIL: lammps ($env): thermo rows differ from plain's"; diff <(thermo plain.log) <(thermo agx.log) | head -4; fail=1
  elif ! paste <(thermo plain.log) <(thermo agx.log) | within 1e-6 1 12; then
    echo "FAIL: lammps ($env): thermo rows beyond 1e-6 of plain's"; diff <(thermo plain.log) <(thermo agx.log) | head -4; fail=1
  else
    taken "lammps ($env)" "51 thermo rows as plain's"
  fi
done
# A program's numbers (lines of NAME's awk) against plain's: identical as users run it
# (AGX_ADAPT=1), within TOL (REL 1: relative) with AGX_ADAPT=0; agx must have taken
# allreduces (and, where ALSO names it, that operation too).
#   numbers_as_plain NAME TOL REL ALSO prog args...
numbers_as_plain() {
  local name=$1 tol=$2 rel=$3 also=$4 app=${1%%_*}; shift 4
  "${run[@]}" "$@" > plain.out 2>&1 && [ -n "$($name plain.out)" ] ||
    { echo "FAIL: $app plain: exit status or no numbers"; tail -5 plain.out; fail=1; return; }
  for env in AGX_ADAPT=1 AGX_ADAPT=0; do
    env $env AGX_STATS=1 "${run[@]}" --preload "$lib" "$@" > out 2>&1 ||
      { echo "FAIL: $app ($env): exit status $?"; tail -5 out; fail=1; continue; }
    if { [ "$env" = AGX_ADAPT=1 ] && [ "$($name out)" != "$($name plain.out)" ]; } ||
       [ "$($name out | wc -l)" != "$($name plain.out | wc -l)" ] ||
       ! paste -d' ' <($name plain.out) <($name out) | within "$tol" "$rel" 0; then
      echo "FAIL: $app ($env): its numbers differ from plain's"; diff <($name plain.out) <($name out) | head -4; fail=1
    elif [ -n "$also" ] && ! grep -q "^agx-preload: rank 0: $also [1-9][0-9]* calls through agx" out; then
      echo "FAIL: $app ($env): agx took no $also"; grep agx-preload out; fail=1
    else
      taken "$app ($env)" "$($name plain.out | wc -l) lines of numbers as plain's${also:+, $(grep -o "$also [0-9]* calls through agx" out)}"
    fi
  done
}
cp2k_energies() { grep "^ ENERGY| Total FORCE_EVAL" "$1" | awk '{print $NF}'; }
if [ -n "$cp2k" ]; then
  printf "%s\n" "&GLOBAL" "PROJECT h2o" "RUN_TYPE MD" "PRINT_LEVEL LOW" "&END GLOBAL" "&FORCE_EVAL" \
    "METHOD Quickstep" "&DFT" "BASIS_SET_FILE_NAME /usr/share/cp2k/BASIS_MOLOPT" \
    "POTENTIAL_FILE_NAME /usr/share/cp2k/GTH_POTENTIALS" "&MGRID" "CUTOFF 200" "REL_CUTOFF 30" "&END MGRID" \
    "&QS" "EPS_DEFAULT 1.0E-10" "&END QS" "&SCF" "EPS_SCF 1.0E-6" "MAX_SCF 30" "SCF_GUESS ATOMIC" "&END SCF" \
    "&XC" "&XC_FUNCTIONAL PBE" "&END XC_FUNCTIONAL" "&END XC" "&END DFT" "&SUBSYS" "&CELL" "ABC 8.0 8.0 8.0" \
    "&END CELL" "&COORD" "O 0.000 0.000 0.000" "H 0.757 0.586 0.000" "H -0.757 0.586 0.000" \
    "O 2.800 0.000 0.300" "H 3.557 0.586 0.300" "H 2.043 0.586 0.800" "&END COORD" \
    "&KIND H" "BASIS_SET DZVP-MOLOPT-SR-GTH" "POTENTIAL GTH-PBE-q1" "&END KIND" \
    "&KIND O" "BASIS_SET DZVP-MOLOPT-SR-GTH" "POTENTIAL GTH-PBE-q6" "&END KIND" "&END SUBSYS" "&END FORCE_EVAL" \
    "&MOTION" "&MD" "STEPS 3" "TIMESTEP 0.5" "&END MD" "&END MOTION" > h2o.inp
  OMP_NUM_THREADS=1 numbers_as_plain cp2k_energies 1e-10 1 alltoallv "$cp2k" -i h2o.inp
fi
nwchem_numbers() { # the SCF energies and the gradient's rows
  sed -n 's/^ *Total SCF energy = *//p; /ENERGY GRADIENTS/,/^ *-----/{s/^ *[0-9][0-9]* [A-Z][a-z]* *//p}' "$1"
}
if [ -n "$nwchem" ]; then
  printf "%s\n" "start h2o" "geometry units angstrom" "O 0.000 0.000 0.000" "H 0.757 0.586 0.000" \
    "H -0.757 0.586 0.000" "end" "basis" "* library 6-31g*" "end" "scf" "thresh 1e-8" "end" "task scf gradient" > h2o.nw
  numbers_as_plain nwchem_numbers 2e-6 0 "" "$nwchem" h2o.nw
fi
echo "apps_check: $ok ok, fail=$fail"
exit $fail
