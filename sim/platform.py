#!/usr/bin/env python3
"""Write a SimGrid platform and hostfile for a cluster of N nodes x PPN cores.

    sim/platform.py N PPN OUTDIR [--factors smpi|none]   -> OUTDIR/platform.xml, OUTDIR/hostfile

SMPI multiplies every message's latency and bandwidth by size-dependent factors
(smpi/lat-factor, smpi/bw-factor), calibrated on a 2009 Ethernet cluster. The platform
states them explicitly (a <config> block), so no figure depends on a hidden default:
  --factors smpi   SimGrid 3.32's defaults, written out (latency x2.01 below 257 B, up to
                   x11.64 from 64 KiB; bandwidth x0.34 to x1.09 below 64 KiB, x0.94 above);
                   the intergroup, baselines, alltoallv, twophase and allreduce scenarios
  --factors none   every factor 1: the platform's numbers are the model's alpha and beta
                   (the locality scenario, whose targets are the cost model's bounds)

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
FACTORS = {
    "smpi": ("65472:0.940694;15424:0.697866;9376:0.58729;5776:1.08739;3484:0.77493;1426:0.608902;"
             "732:0.341987;257:0.338112;0:0.812084",
             "65472:11.6436;15424:3.48845;9376:2.59299;5776:2.18796;3484:1.88101;1426:1.61075;"
             "732:1.9503;257:1.95341;0:2.01467"),
    "none": ("0:1", "0:1"),
}


def write(n, ppn, outdir, factors="smpi"):
    os.makedirs(outdir, exist_ok=True)
    bw, lat = FACTORS[factors]
    xml = f"""<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<!-- {n} nodes x {ppn} cores; parameters: sim/platform.py (NERSC Cori, Cray Aries);
     SMPI's network factors: {factors} -->
<platform version="4.1">
  <config>
    <prop id="smpi/bw-factor" value="{bw}"/>
    <prop id="smpi/lat-factor" value="{lat}"/>
  </config>
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
    a = sys.argv[1:]
    f = "smpi"
    if len(a) == 5 and a[3] == "--factors" and a[4] in FACTORS:
        f = a[4]
    elif len(a) != 3:
        sys.exit(__doc__)
    write(int(a[0]), int(a[1]), a[2], f)
