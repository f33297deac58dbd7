# agx: the two commands. Both install what is missing (tools/bootstrap), configure and build.
#   make demo    what agx buys over the MPI library (tools/agx-demo, about 2 minutes): simulated
#                allgather at 256 ranks and intergroup allgather, one run on this machine;
#                table on stdout, build/demo/demo.md, the figure build/demo/demo.png
#   make check   every test (ctest), closing with ctest's summary
#   make sim     the SimGrid scenarios at paper scale, regenerating docs/RESULTS.md's section
BUILD ?= build
NP ?= 8
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

# the demo's simulations need agx built with SimGrid's smpicc too (the build ctest -L sim uses)
$(BUILD)/smpi/CMakeCache.txt: | deps
	cmake -S . -B $(BUILD)/smpi -DCMAKE_C_COMPILER=smpicc -DMPI_C_COMPILER=smpicc -DAGX_SMPI=ON > /dev/null

demo: build $(BUILD)/smpi/CMakeCache.txt
	@cmake --build $(BUILD)/smpi -j $(JOBS) > $(BUILD)/smpi-build.log 2>&1 || \
	  { tail -30 $(BUILD)/smpi-build.log; echo "make demo: the SMPI build failed ($(BUILD)/smpi-build.log)"; false; }
	tools/agx-demo --build $(BUILD) --np $(NP)

check: build
	cd $(BUILD) && ctest --output-on-failure -j 1 $(CTEST_ARGS)

check-long: build
	cd $(BUILD) && ctest --output-on-failure -j 1

# Every simulation scenario at paper scale (about 15 minutes on 2 cores), then the
# simulation section of docs/RESULTS.md is regenerated.
sim: deps
	cmake -S . -B $(SMPI_BUILD) -DCMAKE_C_COMPILER=smpicc -DMPI_C_COMPILER=smpicc -DAGX_SMPI=ON
	cmake --build $(SMPI_BUILD) -j $(JOBS)
	tools/agx-sim all --build $(SMPI_BUILD) --results docs/RESULTS.md

install: build
	cmake --install $(BUILD)

clean:
	rm -rf $(BUILD)
