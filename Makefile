# agx: the two commands. Both install what is missing (tools/bootstrap), configure and build.
#   make demo    short agx-bench comparison on this machine: table on stdout, CSV + plot in build/demo/
#   make check   every test (ctest), closing with ctest's summary
#   make sim     the SimGrid scenarios at paper scale, regenerating docs/RESULTS.md's section
BUILD ?= build
NP ?= 4
JOBS ?= 2
CTEST_ARGS ?= -LE long

SMPI_BUILD ?= build-smpi

.PHONY: all deps build demo check check-long install clean sim

all: build

deps:
	@tools/bootstrap

$(BUILD)/CMakeCache.txt: | deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMPI_C_COMPILER=mpicc.openmpi -DAGX_PC_MPI=ompi-c

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

demo: build
	@mkdir -p $(BUILD)/demo
	tools/agxrun -n $(NP) $(BUILD)/bin/agx-bench allgather \
	  -a native,ring,bruck,recursive_doubling,neighbor_exchange,gather_bcast \
	  -m 8:256K -i 50 -x 5 -c --csv $(BUILD)/demo/allgather.csv --json $(BUILD)/demo/allgather.json
	tools/agx-plot $(BUILD)/demo/allgather.csv $(BUILD)/demo/allgather.png

check: build
	cd $(BUILD) && ctest --output-on-failure -j 1 $(CTEST_ARGS)

check-long: build
	cd $(BUILD) && ctest --output-on-failure -j 1

# Every simulation scenario at paper scale (about 15 minutes on 2 cores), then the
# simulation section of docs/RESULTS.md is regenerated.
sim: deps
	cmake -S . -B $(SMPI_BUILD) -DCMAKE_C_COMPILER=smpicc -DMPI_C_COMPILER=smpicc -DAGX_SMPI=ON -DBUILD_TESTING=OFF
	cmake --build $(SMPI_BUILD) -j $(JOBS)
	tools/agx-sim all --build $(SMPI_BUILD) --results docs/RESULTS.md

install: build
	cmake --install $(BUILD)

clean:
	rm -rf $(BUILD)
