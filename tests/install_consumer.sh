#!/usr/bin/env bash
# Install agx into a temporary prefix, then build a tiny program against it twice:
# with CMake's find_package(agx) and with pkg-config. Both must build and run.
set -euo pipefail
src=$1 build=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" > /dev/null
mkdir -p "$tmp/app"
cat > "$tmp/app/main.c" <<'C'
#include <agx.h>
#include <stdio.h>
int main(int argc, char **argv) {
    int r, p, out[64];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    int rc = agx_allgather(&r, 1, MPI_INT, out, 1, MPI_INT, MPI_COMM_WORLD);
    for (int i = 0; i < p; i++) if (out[i] != i) rc = 1;
    MPI_Finalize();
    return rc;
}
C
cat > "$tmp/app/CMakeLists.txt" <<'C'
cmake_minimum_required(VERSION 3.25)
project(app C)
find_package(agx REQUIRED)
add_executable(app main.c)
target_link_libraries(app PRIVATE agx::agx)
C
cmake -S "$tmp/app" -B "$tmp/app/build" -DCMAKE_PREFIX_PATH="$tmp/prefix" -DMPI_C_COMPILER=mpicc.openmpi > /dev/null
cmake --build "$tmp/app/build" > /dev/null
LD_LIBRARY_PATH="$tmp/prefix/lib" "$src/tools/agxrun" -n 3 "$tmp/app/build/app"
echo "ok   find_package(agx)"
export PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig"
mpicc.openmpi "$tmp/app/main.c" $(pkg-config --cflags --libs agx) -o "$tmp/app/app_pc"
LD_LIBRARY_PATH="$tmp/prefix/lib" "$src/tools/agxrun" -n 2 "$tmp/app/app_pc"
echo "ok   pkg-config agx"
# agx.pc names the MPI: a plain compiler, no MPI wrapper, builds from pkg-config alone
pkg-config --print-requires agx | grep -Eq '^(ompi-c|mpich)' || { echo "FAIL: agx.pc requires no MPI"; exit 1; }
cc "$tmp/app/main.c" $(pkg-config --cflags --libs agx) -o "$tmp/app/app_cc"
LD_LIBRARY_PATH="$tmp/prefix/lib" "$src/tools/agxrun" -n 2 "$tmp/app/app_cc"
echo "ok   cc with pkg-config agx only (requires $(pkg-config --print-requires agx | head -n 1))"
# the installed tools: agx-bench finds libagx by its run path (no LD_LIBRARY_PATH),
# launched by the installed agxrun, its CSV plotted by the installed agx-plot
"$tmp/prefix/bin/agxrun" -n 2 --timeout 60 "$tmp/prefix/bin/agx-bench" allgather -m 8:64 -i 2 -x 1 -c \
    --csv "$tmp/b.csv" > "$tmp/bench.out"
grep -q ' ok' "$tmp/bench.out" || { cat "$tmp/bench.out"; echo "FAIL: installed agx-bench"; exit 1; }
"$tmp/prefix/bin/agx-plot" "$tmp/b.csv" "$tmp/b.svg" > /dev/null
echo "ok   installed agx-bench, agxrun and agx-plot"
echo "4 passed, 0 failed"
