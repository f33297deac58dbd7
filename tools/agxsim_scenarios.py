"""agxsim_scenarios: the scenarios of tools/agx-sim (its docstring says what each runs), each
a function (build, out, quick) -> (records, markdown lines) over agxsim's runners.
"""
import os
import re
import sys

from agxsim import AGX_CFG, alg_of, fmt_bytes, gnuplot, loc_run, smpirun


# ---- intergroup ---------------------------------------------------------------------------
def intergroup(build, out, quick):
    res, lines = [], []
    # 256 nodes: settings 1-4 only. The allgatherv settings there ran over 10 minutes of wall
    # time without finishing, inside SimGrid's max-min bandwidth solver
    # (lmm::MaxMin::do_solve, seen with gdb), at 64 KiB as at 512 KiB.
    configs = [(32, [1, 2, 5], "64K:256K", 4)] if quick else \
        [(64, list(range(1, 9)), "64K:8M", 2), (256, [1, 2, 3, 4], "64K:512K", 8)]
    for nodes, settings, sizes, mult in configs:
        for s in settings:
            seg = "segmented" if s <= 4 else "segmented_v"
            args = ["inter-allgather", "--setting", str(s), "--comm", "color", "-a", f"root_gather,{seg}",
                    "-m", sizes, "--factor", str(mult), "-i", "1", "-x", "1"] + (["-c"] if quick else [])
            rows = smpirun(build, out, nodes, 1, args, fold=not quick, tag=f"inter-n{nodes}-s{s}")
            by = {}
            for r in rows:
                by.setdefault(int(r["bytes"]), {})[r["algorithm"]] = r
            for b in sorted(by):
                d = by[b]
                res.append(dict(nodes=nodes, setting=s, bytes=b, p=d[seg]["p"], q=d[seg]["q"],
                                root=float(d["root_gather"]["avg_us"]), seg=float(d[seg]["avg_us"]),
                                eq5=float(d[seg]["eq5_ratio"])))
    lines.append("| nodes | setting | p:q | block | T_root_gather (us) | T_segmented (us) | ratio | Eq. 5 |")
    lines.append("|---|---|---|---|---|---|---|---|")
    for r in res:
        lines.append(f"| {r['nodes']} | {r['setting']} | {r['p']}:{r['q']} | {fmt_bytes(r['bytes'])} | "
                     f"{r['root']:.1f} | {r['seg']:.1f} | {r['root'] / r['seg']:.2f} | {r['eq5']:.2f} |")
    for nodes in sorted({r["nodes"] for r in res}):
        dat = os.path.join(out, f"inter-ratio-{nodes}.dat")
        with open(dat, "w") as f:
            for s in sorted({r["setting"] for r in res}):
                for r in res:
                    if r["nodes"] == nodes and r["setting"] == s:
                        f.write(f"{r['bytes']} {r['root'] / r['seg']:.4f}\n")
                f.write("\n\n")
        sets = sorted({r["setting"] for r in res if r["nodes"] == nodes})
        plots = ", ".join(f"'{dat}' index {i} with linespoints title 'setting {s}'" for i, s in enumerate(sets))
        gnuplot(f"set terminal pngcairo size 900,560 noenhanced\nset output '{out}/../intergroup-{nodes}.png'\n"
                f"set title 'Simulated T_root_gather / T_segmented, {nodes} nodes (Cori-like platform)'\n"
                f"set logscale x 2\nset xlabel 'largest block per process (bytes)'\nset ylabel 'ratio'\n"
                f"set grid\nset key outside right\nplot {plots}\n")
    return res, lines


# ---- locality -----------------------------------------------------------------------------
# Every factor 1 (sim/platform.py --factors none): the platform's alpha and beta are the cost
# model's, so the bandwidth bound below is exact. A common start time (agx-bench --sync
# window): the barrier's exit skew, about 5 us at 1024 ranks, is not the algorithm's.
LOC_ALGS = ["bruck", "loc_bruck", "hierarchical", "multileader", "multilane", "auto"]
LOC_SMPI = [("mpich", None), ("ompi", None), ("mpich", "mvapich2_smp"), ("mpich", "smp_simple")]
LOC_SWEEP = ["loc_bruck", "hierarchical", "multileader", "multilane", "auto"]
INTER_BW = 8e9  # bytes/s of a node's link (sim/platform.py)


def locality(build, out, quick):
    res, lines = [], []
    ppn = 4 if quick else 16
    nodes_4b = [16] if quick else [16, 64, 128, 256]
    for n in nodes_4b:
        for r in loc_run(build, out, n, ppn, LOC_ALGS, "4:4", f"loc-n{n}x{ppn}") or []:
            a, chose = alg_of(r)
            res.append(dict(part="4b", nodes=n, ppn=ppn, alg=a, bytes=4, us=float(r["avg_us"]),
                            nl=r["msgs_nonlocal"], model=r["model_msgs_nonlocal"], ok=r["validated"], chose=chose))
        for sel, alg in ([] if quick else LOC_SMPI):
            name = f"SMPI {alg or sel}"
            rows = loc_run(build, out, n, ppn, ["native"], "4:4", f"loc-n{n}x{ppn}-{alg or sel}", sel=sel,
                           smpi_alg=alg, timeout=900)
            for r in rows or []:
                res.append(dict(part="4b", nodes=n, ppn=ppn, alg=name, bytes=4, us=float(r["avg_us"]), ok=r["validated"]))
    lines.append(f"4 B per process, {ppn} processes per node; simulated us per call (SMPI's own algorithms: "
                 "`-a native` under the selector named; '-' = did not finish in 15 minutes of wall time):")
    lines.append("")
    smpi_names = [f"SMPI {a or s}" for s, a in LOC_SMPI] if not quick else []
    lines.append("| nodes x PPN | ranks | " + " | ".join(LOC_ALGS + smpi_names) + " | best SMPI / best agx | bruck / best agx |")
    lines.append("|---|---|" + "---|" * (len(LOC_ALGS) + len(smpi_names) + 2))
    for n in nodes_4b:
        d = {r["alg"]: r for r in res if r["part"] == "4b" and r["nodes"] == n}
        cells = " | ".join(f"{d[a]['us']:.2f}" if a in d else "-" for a in LOC_ALGS + smpi_names)
        agx = [d[a]["us"] for a in LOC_ALGS if a in d and a not in ("auto", "bruck")]
        smpi = [d[a]["us"] for a in smpi_names if a in d]
        best = min(agx) if agx else float("nan")
        lines.append(f"| {n} x {ppn} | {n * ppn} | {cells} | "
                     f"{(min(smpi) / best) if smpi else float('nan'):.2f} | {d['bruck']['us'] / best:.2f} |")
    # sizes: against the bandwidth bound (a node receives (r-1) p_l s bytes over its link)
    sweeps = [(4, 4)] if quick else [(16, 16), (64, 16)]
    for n, q in sweeps:
        sizes = "8:512" if quick else "8:1M"
        for r in loc_run(build, out, n, q, LOC_SWEEP, sizes, f"loc-sweep-n{n}x{q}") or []:
            a, chose = alg_of(r)
            res.append(dict(part="sweep", nodes=n, ppn=q, alg=a, bytes=int(r["bytes"]), us=float(r["avg_us"]),
                            ok=r["validated"], chose=chose))
        lines.append("")
        lines.append(f"{n} x {q} ranks, by size (simulated us per call; bound = the bytes a node receives, "
                     f"(r-1) p_l s, over its {INTER_BW / 1e9:.0f} GB/s link):")
        lines.append("")
        lines.append("| bytes/process | " + " | ".join(LOC_SWEEP) + " | bound | best / bound | auto / best |")
        lines.append("|---|" + "---|" * (len(LOC_SWEEP) + 3))
        for b in sorted({r["bytes"] for r in res if r["part"] == "sweep" and r["nodes"] == n}):
            d = {r["alg"]: r["us"] for r in res if r["part"] == "sweep" and r["nodes"] == n and r["bytes"] == b}
            bound = (n - 1) * q * b / INTER_BW * 1e6
            best = min(v for a, v in d.items() if a != "auto")
            lines.append(f"| {fmt_bytes(b)} | " + " | ".join(f"{d[a]:.2f}" if a in d else "-" for a in LOC_SWEEP) +
                         f" | {bound:.2f} | {best / bound:.2f} | {d['auto'] / best:.2f} |")
    return res, lines


# ---- baselines ----------------------------------------------------------------------------
BASE_ALGS = ["ring", "bruck", "recursive_doubling", "neighbor_exchange", "native"]


def baselines(build, out, quick):
    res, lines = [], []
    nodes, ppn = (4, 16) if quick else (8, 32)
    # up to 512 KiB: at 1 MiB the folded buffers of 256 ranks exceed vm.max_map_count
    sizes = ["8:2K"] if quick else ["8:32K", "256K:512K"]
    for sel in ("mpich", "ompi"):
        algs = BASE_ALGS if sel == "mpich" else ["native"]
        for i, m in enumerate(sizes):
            big = m.startswith("256K")
            rows = smpirun(build, out, nodes, ppn, ["allgather", "-a", ",".join(algs), "-m", m,
                                                     "--factor", "2" if big else "16", "-i", "1", "-x", "1"]
                           + ([] if big else ["-c"]), selector=sel, fold=big, tag=f"base-{sel}-{i}")
            for r in rows:
                res.append(dict(bytes=int(r["bytes"]), alg=r["algorithm"] if sel == "mpich" or r["algorithm"] != "native"
                                else "native", sel=sel, us=float(r["avg_us"])))
    names = [a for a in BASE_ALGS if a != "native"] + ["SMPI mpich", "SMPI ompi"]
    lines.append(f"{nodes * ppn} ranks ({nodes} nodes x {ppn} cores), simulated time per call (us):\n")
    lines.append("| bytes/rank | " + " | ".join(names) + " | best agx / best SMPI |")
    lines.append("|---|" + "---|" * (len(names) + 1))
    for b in sorted({r["bytes"] for r in res}):
        d = {}
        for r in res:
            if r["bytes"] == b:
                d["SMPI " + r["sel"] if r["alg"] == "native" else r["alg"]] = r["us"]
        agx = min(d[a] for a in names[:4] if a in d)
        smpi = min(d[a] for a in names[4:] if a in d)
        lines.append(f"| {fmt_bytes(b)} | " + " | ".join(f"{d[a]:.1f}" if a in d else "-" for a in names) +
                     f" | {smpi / agx:.2f} |")
    return res, lines


# ---- alltoallv: KangRoss20's all-to-many kernels ------------------------------------------
A2A_ALGS = ["issend_all", "isend_all", "spread_out", "balanced", "pairwise", "tam"]


def a2a_table(lines, title, rows, cols, key, fmt=lambda r: f"{r['us']:.1f}"):
    lines.append(title + "\n")
    lines.append("| " + " | ".join(["bytes/pair"] + cols) + " |")
    lines.append("|---|" + "---|" * len(cols))
    for b in sorted({r["bytes"] for r in rows}):
        d = {key(r): r for r in rows if r["bytes"] == b}
        lines.append(f"| {fmt_bytes(b)} | " + " | ".join(fmt(d[c]) if c in d else "-" for c in cols) + " |")
    lines.append("")


def alltoallv(build, out, quick):
    """All-to-many at 16 ppn: every kernel against SMPI's alltoallv (mpich and ompi
    selectors), the throttle sweep (Fig. 4), and spread_out vs balanced with the receivers
    crowded on the low ranks (Fig. 1a's straggler case)."""
    res, lines = [], []
    ppn, plans = 16, ([(4, 4)] if quick else [(16, 16), (16, 4)] + ([(64, 64)] if os.environ.get("AGX_SIM_BIG") else []))
    sizes = "64,4K" if quick else "64,4K,64K"

    # not folded: tam keeps its lists and data in one buffer, which SMPI's shared (folded)
    # malloc would overwrite; so 64 KiB per pair only at 256 ranks (16 MiB per receiver)
    def run(n, args, tag, sel="mpich", env=None):
        rows = smpirun(build, out, n, ppn, ["alltoallv", "-i", "1", "-x", "1", "--bytes",
                                            sizes if n * ppn < 1024 else "64,4K"] + args,
                       selector=sel, tag=tag, env=env)
        for r in rows:
            r.update(nodes=n, bytes=int(r["bytes"]), us=float(r["avg_us"]), sel=sel)
        res.extend(rows)
        return rows

    for n, nr in plans:
        big = n * ppn >= 1024
        tag = f"{n}x{ppn}-r{nr}"
        rows = run(n, ["--pattern", "all-to-many", "--receivers", str(nr), "-a",
                       ",".join(A2A_ALGS if not big else ["issend_all", "spread_out", "balanced", "tam"])], tag)
        for sel in ([] if big else ["mpich", "ompi"]):
            rows += [dict(r, algorithm="SMPI " + sel) for r in run(n, ["--pattern", "all-to-many", "--receivers",
                                                                        str(nr), "-a", "native"], f"{tag}-{sel}", sel)]
        cols = [a for a in A2A_ALGS if any(r["algorithm"] == a for r in rows)] + \
            [c for c in ("SMPI mpich", "SMPI ompi") if any(r["algorithm"] == c for r in rows)]
        a2a_table(lines, f"All-to-many, {n * ppn} ranks ({n} nodes x {ppn}), {nr} receivers spread evenly "
                  f"({'one per node' if nr == n else f'one per {n // nr} nodes'}), throttle 32, Issend; "
                  "simulated us per call:", rows, cols, lambda r: r["algorithm"])
    n, nr = plans[0]
    sweep = []
    for t in ("0", "8", "32", "128"):
        for r in run(n, ["--pattern", "all-to-many", "--receivers", str(nr), "-a", "spread_out,balanced"],
                     f"throttle-{t}", env={"AGX_ALLTOALLV_THROTTLE": t}):
            sweep.append(dict(r, col=f"{r['algorithm']} T={t}"))
    a2a_table(lines, f"Throttle sweep (Fig. 4), {n * ppn} ranks, {nr} receivers; simulated us per call "
              "(T = receives per Waitall round, 0 = all at once):", sweep,
              [f"{a} T={t}" for a in ("spread_out", "balanced") for t in ("0", "8", "32", "128")], lambda r: r["col"])
    crowd = run(n, ["--pattern", "all-to-many", "--receivers", str(nr), "--stride", "4", "-a",
                    "issend_all,spread_out,balanced,tam"], "crowded")
    a2a_table(lines, f"Straggler case (Fig. 1a): {nr} receivers at ranks 0, 4, 8, ... (the first quarter), "
              f"{n * ppn} ranks; simulated us per call, and the receivers' mean first / latest last arrival (us):",
              crowd, ["issend_all", "spread_out", "balanced", "tam"], lambda r: r["algorithm"],
              lambda r: f"{r['us']:.1f} ({float(r['first_arrival_us'] or 0):.1f} / {float(r['last_arrival_us'] or 0):.1f})")
    return res, lines


# ---- twophase: KangRoss20's end-to-end case ------------------------------------------------
TP_RUNS = ["issend_all", "isend_all", "spread_out", "balanced", "pairwise", "tam", "hybrid"]
# scaled down from the paper's datasets (Table I) so a run fits this machine; sizes per process
TP_ARGS = {"e3sm": ["--cells", "512"], "flash": ["--block", "4"], "btio": ["--cells", "64"]}


def twophase(build, out, quick):
    """The two-phase write's exchanges (--no-write: metadata, data rounds, agreements) for
    the three workloads at 16 ranks per node, one aggregator per node, every kernel and
    hybrid: Figure 5's breakdown of communication time."""
    res, lines = [], []
    ppn = 16
    nodes = [4] if quick else [int(n) for n in os.environ.get("AGX_SIM_TP_NODES", "64").split(",")]
    limit = int(os.environ.get("AGX_SIM_TP_LIMIT", "600"))  # wall seconds per run
    kernels = os.environ.get("AGX_SIM_TP_KERNELS", ",".join(TP_RUNS)).split(",")
    bad = [k for k in kernels if k not in TP_RUNS]
    if bad:
        sys.exit(f"agx-sim: AGX_SIM_TP_KERNELS: unknown {', '.join(bad)} (known: {', '.join(TP_RUNS)})")
    for n in nodes:
        for w in ("e3sm", "flash", "btio"):
            for k in kernels:
                # one run per kernel: a failing or slow kernel does not take the others along
                rows = smpirun(build, out, n, ppn, ["twophase", "--workload", w, "--no-write", "-i", "1", "-k", k]
                               + TP_ARGS[w], tag=f"tp-{w}-{n}x{ppn}-{k}", cfg=AGX_CFG, timeout=limit)
                if rows is None:
                    print(f"agx-sim: twophase {w} {n}x{ppn} {k}: no result in {limit} s", flush=True)
                    rows = [dict(run=k, timeout=True)]
                for r in rows:
                    r.update(nodes=n, workload=w)
                    res.append(r)
    lines.append("Simulated ms per call (max over ranks), exchanges only; meta = the offset/length "
                 "exchange, data = the data rounds, other = the rest (sorting, agreements and the "
                 "waiting in them); 16 ranks per node, one aggregator per node, even domains, 16 MiB "
                 "rounds. Sizes per process: E3SM " + " ".join(TP_ARGS["e3sm"]) + ", FLASH "
                 + " ".join(TP_ARGS["flash"]) + ", BTIO grid " + " ".join(TP_ARGS["btio"]) + ".\n")
    lines.append("| workload | nodes x ppn | requests (rank 0) | rounds | " + " | ".join(TP_RUNS) + " | best |")
    lines.append("|---|---|---|---|" + "---|" * (len(TP_RUNS) + 1))
    for n in nodes:
        for w in ("e3sm", "flash", "btio"):
            d = {r["run"]: r for r in res if r["nodes"] == n and r["workload"] == w}
            if not d:
                continue
            done = {k: r for k, r in d.items() if not r.get("timeout")}
            first = next(iter(done.values()), {"requests_rank0": "-", "rounds": "-"})
            cell = lambda r: f"> {limit} s wall" if r.get("timeout") else \
                f"{float(r['total_ms']):.3f} ({float(r['meta_ms']):.3f} / {float(r['data_ms']):.3f})"
            best = min(done, key=lambda k: float(done[k]["total_ms"])) if done else "-"
            lines.append(f"| {w} | {n} x {ppn} | {first['requests_rank0']} | {first['rounds']} | "
                         + " | ".join(cell(d[k]) if k in d else "-" for k in TP_RUNS) + f" | {best} |")
    lines.append(f"\nCells: total (meta / data); \"> {limit} s wall\": the simulation did not finish in that "
                 "much wall time (SimGrid's max-min solver with every flow of an unthrottled exchange in flight).")
    for n in nodes:
        dat = os.path.join(out, f"tp-{n}.dat")
        with open(dat, "w") as f:
            for w in ("e3sm", "flash", "btio"):
                for k in TP_RUNS:
                    for r in res:
                        if r["nodes"] == n and r["workload"] == w and r["run"] == k and not r.get("timeout"):
                            f.write(f"{k} {r['meta_ms']} {r['data_ms']} "
                                    f"{max(0.0, float(r['total_ms']) - float(r['meta_ms']) - float(r['data_ms'])):.3f}\n")
                f.write("\n\n")
        panels = "".join(
            f"set title '{w}, {n} nodes x {ppn}'\nplot '{dat}' index {i} using 2:xtic(1) title 'meta', "
            f"'' index {i} using 3 title 'data', '' index {i} using 4 title 'other'\n"
            for i, w in enumerate(("e3sm", "flash", "btio"))
            if any(r["nodes"] == n and r["workload"] == w and not r.get("timeout") for r in res))
        gnuplot(f"set terminal pngcairo size 1500,480 noenhanced\nset output '{out}/../twophase-{n}.png'\n"
                f"set multiplot layout 1,3\nset style data histograms\nset style histogram rowstacked\n"
                f"set style fill solid 0.8 border -1\nset boxwidth 0.7\nset xtics rotate by -45\n"
                f"set ylabel 'simulated ms'\nset grid y\nset key top left\n{panels}unset multiplot\n")
    return res, lines


# ---- allreduce: SharedNotify Sec. III-B ---------------------------------------------------
AR_AGX = ["dissemination", "dissemination_node", "recursive_doubling", "rabenseifner", "reduce_bcast"]
# SMPI's own: its selectors, then single algorithms (rab1 and smp_rsag_rab need a power of
# two number of ranks; never here: 12 per node)
AR_SEL = ["mpich", "ompi", "mvapich2", "impi"]
AR_SMPI = ["rdb", "smp_rdb", "smp_binomial", "redbcast", "smp_rsag", "mvapich2_two_level", "rab_rdb", "lr",
           "ompi_ring_segmented"]
AR_SMALL = 1024  # the target's range: 8 B .. 1 KiB


def allreduce(build, out, quick):
    """MPI_UNSIGNED sums at 12 ranks per node (the paper's Salomon nodes: 2 x 12 cores, here
    one 12-core node per host) on 16, 64 and 160 nodes (192-1920 ranks), every agx
    algorithm against SMPI's selectors and algorithms. Up to 1 MiB on 16 and 64 nodes; on
    160, 4 B to 1 KiB (the target), the agx algorithms that compete there, SMPI's mpich,
    mvapich2 and impi selectors, rdb and mvapich2_two_level (a call takes seconds of wall
    time at 1920 ranks). dissemination_shm is not run: SMPI has no shared windows, so it
    would run dissemination_node."""
    res, lines, failed = [], [], []
    ppn = 12
    scales = [(4, "4:16K")] if quick else [(16, "4:1M"), (64, "4:1M"), (160, "4:1K")]
    if not quick and os.environ.get("AGX_SIM_AR_NODES"):  # a subset of the node counts
        keep = [int(x) for x in os.environ["AGX_SIM_AR_NODES"].split(",")]
        scales = [sc for sc in scales if sc[0] in keep]
    for n, m in scales:
        big = m.endswith("M")
        # simulated times are deterministic: one timed call is enough where a call takes
        # seconds of wall time (160 nodes: the target's sizes, the algorithms that compete)
        huge = n >= 160
        it = "1" if huge else "2"
        base = ["allreduce", "-m", m, "--factor", "4", "-i", it, "-x", "1"] + ([] if big else ["-c"])
        agx = AR_AGX[:3] if huge else AR_AGX
        smpi = AR_SMPI if big else ["rdb", "mvapich2_two_level"] if huge else AR_SMPI[:6]
        # (160 nodes: SMPI's ompi selector, 9.2 us slower than the best at 64 nodes, left out:
        # at 1920 ranks it ran 8 minutes of wall time without finishing its first size)
        sels = [x for x in AR_SEL if x != "ompi"] if huge else AR_SEL
        runs = [("agx", "mpich", agx, AGX_CFG)] + [(f"SMPI {s}", s, ["native"], ()) for s in sels] + \
               [(f"SMPI {a}", "mpich", ["native"], (f"--cfg=smpi/allreduce:{a}",)) for a in smpi]
        # ring: up to 16 KiB, unfolded (its schedule of 2(p-1) rounds is larger than the fold
        # threshold, and SMPI would fold it too); dissemination_radix, a short-vector
        # algorithm, up to 16 KiB
        small = [("ring", "mpich", ["ring"], AGX_CFG)] if n <= 16 else []
        small += [("radix", "mpich", ["dissemination_radix"], AGX_CFG)]
        for label, sel, a, cfg in (small + runs if huge else runs + small):  # agx's first where slow
            tag = f"ar-{n}x{ppn}-{label.replace(' ', '_')}"
            args = base + ["-a", ",".join(a)] if (label, sel, a, cfg) not in small else \
                ["allreduce", "-m", m if huge else "4:16K", "--factor", "4", "-i", it, "-x", "1", "-c", "-a", ",".join(a)]
            rows = smpirun(build, out, n, ppn, args, selector=sel, fold=big and label not in ("ring", "radix"), tag=tag,
                           cfg=cfg, timeout=int(os.environ.get("AGX_SIM_AR_LIMIT", "1800")), may_fail=label != "agx")
            if rows is None:  # crashed, stalled or too slow: the rows it printed before
                with open(os.path.join(out, f"{tag}.log")) as f:
                    rows = [dict(bytes=x[0], algorithm=x[1], avg_us=x[2])
                            for x in re.findall(r"^(\d+) +(\w+) +([\d.]+)", f.read(), re.M)]
                failed.append(f"{label} on {n} nodes ({len(rows)} sizes before it failed)")
            for r in rows:
                res.append(dict(nodes=n, bytes=int(r["bytes"]), us=float(r["avg_us"]), ok=r.get("validated", "-"),
                                alg=r["algorithm"] if label in ("agx", "ring", "radix") else label))
    for n, _ in scales:
        cols = [c for c in AR_AGX + ["dissemination_radix", "ring"] + [f"SMPI {s}" for s in AR_SEL + AR_SMPI]
                if any(r["nodes"] == n and r["alg"] == c for r in res)]
        lines.append(f"\n{n} nodes x {ppn} ({n * ppn} ranks), simulated us per call:\n")
        lines.append("| bytes | " + " | ".join(cols) + " | best SMPI | dissemination_node vs best SMPI "
                     "| best agx vs best SMPI |")
        lines.append("|---|" + "---|" * (len(cols) + 3))
        for b in sorted({r["bytes"] for r in res if r["nodes"] == n}):
            d = {r["alg"]: r["us"] for r in res if r["nodes"] == n and r["bytes"] == b}
            smpi = {k: v for k, v in d.items() if k.startswith("SMPI")}
            best = min(smpi, key=smpi.get) if smpi else None
            ratio = f"{smpi[best] / d['dissemination_node']:.2f}x" if best and "dissemination_node" in d else "-"
            agx = {k: v for k, v in d.items() if not k.startswith("SMPI")}
            abest = min(agx, key=agx.get) if agx else None
            aratio = f"{smpi[best] / agx[abest]:.2f}x ({abest})" if best and abest else "-"
            lines.append(f"| {fmt_bytes(b)} | " + " | ".join(f"{d[c]:.1f}" if c in d else "-" for c in cols)
                         + f" | {best[5:] if best else '-'} | {ratio} | {aratio} |")
        dat = os.path.join(out, f"ar-{n}.dat")
        with open(dat, "w") as f:
            for c in cols:
                for r in sorted((r for r in res if r["nodes"] == n and r["alg"] == c), key=lambda r: r["bytes"]):
                    f.write(f"{r['bytes']} {r['us']}\n")
                f.write("\n\n")
        plots = ", ".join(f"'{dat}' index {i} with linespoints title '{c}'" + (" lw 3" if c == "dissemination_node" else "")
                          for i, c in enumerate(cols))
        gnuplot(f"set terminal pngcairo size 1000,600 noenhanced\nset output '{out}/../allreduce-{n}.png'\n"
                f"set title 'Simulated allreduce, {n} nodes x {ppn} (Cori-like platform)'\nset logscale xy\n"
                f"set xlabel 'bytes per process'\nset ylabel 'time (us)'\nset grid\nset key top left\nplot {plots}\n")
    if failed:
        lines.append("\nSMPI's own algorithm crashed or stalled inside SimGrid's code (agx-bench only calls "
                     "MPI_Allreduce there; not investigated further), or ran past the wall-time limit "
                     f"(AGX_SIM_AR_LIMIT, here {os.environ.get('AGX_SIM_AR_LIMIT', '1800')} s): "
                     + "; ".join(failed) + ".")
    lines.append(f"\nThe target (SharedNotify Sec. III-B: 1.5x at large, 2.5x at small scale against the best "
                 f"vendor algorithm) is read at {fmt_bytes(4)} .. {fmt_bytes(AR_SMALL)}.")
    return res, lines


from agxsim_costs import costs  # noqa: E402  (its own module: this one is near 400 lines)
from agxsim_pap import pap  # noqa: E402

SCENARIOS = {"intergroup": intergroup, "locality": locality, "baselines": baselines, "alltoallv": alltoallv,
             "twophase": twophase, "allreduce": allreduce, "costs": costs, "pap": pap}
