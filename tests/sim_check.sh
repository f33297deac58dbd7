#!/usr/bin/env bash
# ctest -L sim: build agx with SimGrid's smpicc (the same sources) and run the quick
# scenarios of tools/agx-sim, asserting what the models guarantee at that size. Without
# smpicc the test says so and is reported as skipped (exit 77), never silently passed.
set -uo pipefail
src=$1 bin=$2
if ! command -v smpicc >/dev/null || ! command -v smpirun >/dev/null; then
  echo "SKIPPED: smpicc/smpirun not found (tools/bootstrap installs libsimgrid-dev simgrid)"
  exit 77
fi
build=$bin/smpi
# configured as README says (testing on: the SMPI tree builds and runs the unit tests)
cmake -S "$src" -B "$build" -DCMAKE_C_COMPILER=smpicc -DMPI_C_COMPILER=smpicc -DAGX_SMPI=ON \
      > "$bin/smpi-configure.log" 2>&1 || { cat "$bin/smpi-configure.log"; exit 1; }
cmake --build "$build" -j 2 > "$bin/smpi-build.log" 2>&1 || { tail -30 "$bin/smpi-build.log"; exit 1; }
(cd "$build" && ctest -L unit -LE long > "$bin/smpi-unit.log" 2>&1) ||
  { tail -30 "$bin/smpi-unit.log"; echo "FAIL: the SMPI tree's unit tests"; exit 1; }
echo "the SMPI tree (configured with testing on): $(grep -o '[0-9]* tests passed.*' "$bin/smpi-unit.log")"
# ctest's build is build/smpi in `make check`: agx-sim must find it unaided there (issue 12)
if [ "$(cd "$build" && pwd)" = "$(cd "$src" && pwd)/build/smpi" ] && [ ! -e "$src/build-smpi/bin/agx-bench" ]; then
  exec "$src/tools/agx-sim" check
fi
exec "$src/tools/agx-sim" check --build "$build"
