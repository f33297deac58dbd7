#!/usr/bin/env python3
"""Write a SimGrid platform and hostfile for a cluster of N nodes x PPN cores.

    sim/platform.py N PPN OUTDIR [--factors smpi|none] [--model free|calibrated|heavy]
                                 [--net aries|gige]     -> OUTDIR/platform.xml, OUTDIR/hostfile

SMPI multiplies every message's latency and bandwidth by size-dependent factors
(smpi/lat-factor, smpi/bw-factor), calibrated on a 2009 Ethernet cluster. The platform
states them explicitly (a <config> block), so no figure depends on a hidden default:
  --factors smpi   SimGrid 3.32's defaults, written out (latency x2.01 below 257 B, up to
                   x11.64 from 64 KiB; bandwidth x0.34 to x1.09 below 64 KiB, x0.94 above);
                   the intergroup, baselines, alltoallv, twophase and allreduce scenarios
  --factors none   every factor 1: the platform's numbers are the model's alpha and beta
                   (the locality scenario, whose targets are the cost model's bounds)

The processor's cost per message (LogGP's o; SMPI charges none unless told):
  --model free        none: SMPI's default, every figure before 2026-11-24
  --model calibrated  smpi/os, smpi/ois, smpi/or: the time a process spends in MPI_Send,
                      MPI_Isend and MPI_Recv of a small message, charged on its simulated
                      processor for every message, on the node and off it: OVERHEAD
                      below, measured on the development machine by bench/msg_overhead.c
                      (Open MPI's shared-memory path; docs/RESULTS.md, "Cost model")
  --model heavy       0.3 us on each of the three: a NIC path's software costing several
                      times the shared-memory one (the probe of the issue that added
                      these models); what a default must also survive

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
The network (--net):
  aries  the default: the Cori parameters below
  gige   the cluster of Proficz21 (48 nodes of the Tryton supercomputer, "Ethernet
         without any hardware acceleration", 1 Gbps): a full-duplex 125 MB/s link per node
         and 12.5 us per crossing, 25 us end to end, a common figure for MPI over TCP on
         Gigabit Ethernet (the paper gives no latency: a choice, docs/algorithms.md);
         intra-node as below. Used with SMPI's own factors, which were calibrated on a
         Gigabit Ethernet cluster.
Ranks are placed PPN per node, node by node, so MPI_COMM_TYPE_SHARED groups = nodes.
"""
import os
import sys

INTER_BW, INTER_LAT = "8GBps", "0.75us"
NETS = {"aries": (INTER_BW, INTER_LAT), "gige": ("125MBps", "12.5us")}
INTRA_BW, INTRA_LAT = "68GBps", "0.25us"
# seconds per message, any size: msg_overhead's medians of 7 runs (4 B; Open MPI 4.1.4 on
# the 2-core development VM, 2026-11-24; docs/RESULTS.md, "Cost model")
OVERHEAD = {"calibrated": {"os": 0.041e-6, "ois": 0.037e-6, "or": 0.060e-6},
            "heavy": {"os": 0.3e-6, "ois": 0.3e-6, "or": 0.3e-6}}
MODELS = ("free", "calibrated", "heavy")
FACTORS = {
    "smpi": ("65472:0.940694;15424:0.697866;9376:0.58729;5776:1.08739;3484:0.77493;1426:0.608902;"
             "732:0.341987;257:0.338112;0:0.812084",
             "65472:11.6436;15424:3.48845;9376:2.59299;5776:2.18796;3484:1.88101;1426:1.61075;"
             "732:1.9503;257:1.95341;0:2.01467"),
    "none": ("0:1", "0:1"),
}


def write(n, ppn, outdir, factors="smpi", model="free", net="aries"):
    os.makedirs(outdir, exist_ok=True)
    inter_bw, inter_lat = NETS[net]
    bw, lat = FACTORS[factors]
    # SMPI's piecewise form: "size:seconds:seconds per byte" from that size on
    cost = "".join(f'\n    <prop id="smpi/{k}" value="0:{v:.3e}:0"/>' for k, v in OVERHEAD.get(model, {}).items())
    xml = f"""<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<!-- {n} nodes x {ppn} cores; parameters: sim/platform.py (network {net});
     SMPI's network factors: {factors}; per-message processor cost: {model} -->
<platform version="4.1">
  <config>
    <prop id="smpi/bw-factor" value="{bw}"/>
    <prop id="smpi/lat-factor" value="{lat}"/>{cost}
  </config>
  <cluster id="cori" prefix="node-" suffix="" radical="0-{n - 1}" speed="1Gf" core="{ppn}"
           bw="{inter_bw}" lat="{inter_lat}" sharing_policy="SPLITDUPLEX"
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
    opts = {"--factors": "smpi", "--model": "free", "--net": "aries"}
    choices = {"--factors": FACTORS, "--model": MODELS, "--net": NETS}
    if len(a) < 3 or len(a) % 2 == 0:
        sys.exit(__doc__)
    for k, v in zip(a[3::2], a[4::2]):
        if k not in opts or v not in choices[k]:
            sys.exit(__doc__)
        opts[k] = v
    write(int(a[0]), int(a[1]), a[2], opts["--factors"], opts["--model"], opts["--net"])
