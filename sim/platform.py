#!/usr/bin/env python3
"""Write a SimGrid platform and hostfile for a cluster of N nodes x PPN cores.

    sim/platform.py N PPN OUTDIR      -> OUTDIR/platform.xml, OUTDIR/hostfile

Parameters are those of NERSC's Cori (Cray XC40), the machine of KangTraff19:
  - inter-node: Cray Aries, "0.25 us to 3.7 us MPI latency, ~8GB/sec MPI bandwidth"
    (NERSC, Cori configuration, http://www.nersc.gov/users/computational-systems/cori/configuration/).
    Modelled as a full-duplex 8 GB/s link per node with 0.75 us latency, crossed twice
    (the sender's up, the receiver's down): 1.5 us end to end, inside NERSC's range. No
    backbone: Aries' dragonfly has ample global bandwidth for these sizes, so the network
    between the node links is not a bottleneck. (A fat-pipe backbone of 100 TB/s and
    0.5 us behind 0.5 us links gives the same simulated times to the nanosecond, but it
    puts every inter-node flow into one constraint of SimGrid's max-min solver, which then
    re-solves all of them at every event: an all-to-many exchange at 256 ranks took 19 s
    of wall time with it and 2.4 s without.)
  - intra-node: 0.25 us, the low end of NERSC's range (an on-node MPI message), and
    68 GB/s, the memory bandwidth of one Cori node socket (Intel Xeon E5-2698 v3,
    ark.intel.com); every on-node flow gets it (SimGrid's loopback is a fat pipe),
    which is optimistic for many concurrent flows.
Ranks are placed PPN per node, node by node, so MPI_COMM_TYPE_SHARED groups = nodes.
"""
import os
import sys

INTER_BW, INTER_LAT = "8GBps", "0.75us"
INTRA_BW, INTRA_LAT = "68GBps", "0.25us"


def write(n, ppn, outdir):
    os.makedirs(outdir, exist_ok=True)
    xml = f"""<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<!-- {n} nodes x {ppn} cores; parameters: sim/platform.py (NERSC Cori, Cray Aries) -->
<platform version="4.1">
  <cluster id="cori" prefix="node-" suffix="" radical="0-{n - 1}" speed="1Gf" core="{ppn}"
           bw="{INTER_BW}" lat="{INTER_LAT}" sharing_policy="SPLITDUPLEX"
           loopback_bw="{INTRA_BW}" loopback_lat="{INTRA_LAT}"/>
</platform>
"""
    with open(os.path.join(outdir, "platform.xml"), "w") as f:
        f.write(xml)
    with open(os.path.join(outdir, "hostfile"), "w") as f:
        for i in range(n):
            f.write(f"node-{i}:{ppn}\n")


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    write(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3])
