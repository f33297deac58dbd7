#!/usr/bin/env python3
"""The on-line choice measured as a user meets it (docs/RESULTS.md, "On-line choice").

For every operation agx intercepts (allreduce, allgather, allgatherv, alltoallv), every
process count asked and every size, agx-bench times agx's default with AGX_ADAPT=1
('auto', its warm-up longer than a learning window), the MPI library's own call
('mpi': the library's blocking call, nothing of agx in between), agx's path to it
('native': the library's call inside agx's, with its checks and, for alltoallv, its
per-call agreement) and every agx algorithm of the table, in one launch per (operation,
count), repeated; per shape it prints the medians' ratios
  default/library   the default's time over the library's (<= 1.05: never slower)
  default/best      over the fastest of the library and every agx row
  window            what the learning window cost, as a share of 1000 calls at the
                    default's pace (from AGX_VERBOSE's 'learned' line), in the launch
                    that runs every row (the rows before the default's made the
                    communicator's connections, schedules and shared segments)
  window, the default first   the same in a launch of the default and the library's
                    call alone, the default first: as a program's first calls meet it,
                    the window paying those setups
  bench/adapt_bench.py --build build [--np 2,4,8] [--repeats 3] [--nodes K] [--out DIR]
"""
import argparse
import csv
import os
import re
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
AGXRUN = os.path.join(HERE, "..", "tools", "agxrun")


def algorithms(bench, op):
    """The intra algorithms of op's table (agx-bench --list), but native and the PAP-aware
    ones (they need a PAT session and fall back without one)."""
    out = subprocess.run([bench, "--list"], capture_output=True, text=True, check=True).stdout
    algs, cur = [], None
    for line in out.splitlines():
        m = re.match(r"^(\w+) \((intra|inter)-communicator\):", line)
        if m:
            cur = (m.group(1), m.group(2))
            continue
        m = re.match(r"^  (\w+)\s", line)
        if m and cur == (op, "intra") and m.group(1) not in ("native", "bdr", "bslb"):
            algs.append(m.group(1))
    return algs


def run_once(args, op, np, algs, outdir, rep, first=False):
    csvf = os.path.join(outdir, f"{op}_np{np}_r{rep}{'_first' if first else ''}.csv")
    env = dict(os.environ, AGX_ADAPT="1", AGX_VERBOSE="1")
    bench = os.path.join(args.build, "bin", "agx-bench")
    cmd = [AGXRUN, "-n", str(np), "--timeout", "900"]
    if args.nodes:
        cmd += ["--nodes", str(args.nodes)]
    # the rows' order turns with the repeat: a row's place in a run matters at the smallest
    # sizes (the same algorithm three times in one run at 2 ranks, 8 B: 1.09, 0.60, 1.10 us)
    names = ["auto", "mpi", "native"] + algs
    alist = ",".join(names[rep % len(names):] + names[:rep % len(names)])
    if first:  # the default first, as a program's first calls meet it: its window pays the setups
        alist = "auto,mpi"
    if op == "alltoallv":
        cmd += [bench, "alltoallv", "--pattern", "uniform", "--bytes", args.a2a_bytes, "-a", alist]
    else:
        cmd += [bench, op, "-m", args.sizes, "--factor", "8", "-a", alist]
    cmd += ["-i", str(args.iterations), "-x", str(args.warmup), "-f", "-q", "--csv", csvf]
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if p.returncode != 0:
        sys.stderr.write(p.stdout[-2000:] + p.stderr[-2000:])
        raise SystemExit(f"adapt_bench: {' '.join(cmd)} failed")
    windows = {}
    for line in p.stderr.splitlines():
        m = re.match(r"agx: (\w+) learned on \d+ ranks, (\d+)-\d+ B: .*window of (\d+) calls(?: \([^)]*\))? took ([\d.]+) us, "
                     r"([+-][\d.]+) us", line)
        if m and m.group(1) == op:
            windows[int(m.group(2))] = float(m.group(5))
    rows = {}
    with open(csvf) as f:
        for r in csv.DictReader(f):
            name = r["algorithm"].split("(")[0]
            rows[(int(r["bytes"]), name)] = float(r["p50_us"])
    return rows, windows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--np", default="2,4,8")
    ap.add_argument("--ops", default="allreduce,allgather,allgatherv,alltoallv")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--nodes", type=int, default=0, help="emulated nodes (tools/agxrun --nodes)")
    ap.add_argument("--sizes", default="8:1M")
    ap.add_argument("--a2a-bytes", default="8,64,512,4K,32K,256K")
    ap.add_argument("-i", "--iterations", type=int, default=100)
    ap.add_argument("-x", "--warmup", type=int, default=104)  # > a class's 8 first calls and its window (88 at most)
    ap.add_argument("--out", default="adapt_bench")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    bench = os.path.join(args.build, "bin", "agx-bench")
    print("| op | ranks | bytes | default (us) | library (us) | best agx (us) | default/library | default/best | "
          "window (% of 1000 calls) | window, the default first (%) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    worst = 0.0
    for op in args.ops.split(","):
        algs = algorithms(bench, op)
        for np in [int(n) for n in args.np.split(",")]:
            reps = [run_once(args, op, np, algs, args.out, r) for r in range(args.repeats)]
            firsts = [run_once(args, op, np, algs, args.out, r, first=True) for r in range(args.repeats)]
            sizes = sorted({b for rows, _ in reps for (b, _a) in rows})
            for b in sizes:
                med = {}
                for a in ["auto", "mpi", "native"] + algs:
                    v = [rows[(b, a)] for rows, _ in reps if (b, a) in rows]
                    if v:
                        med[a] = statistics.median(v)
                agx_best = min((med[a] for a in ["native"] + algs if a in med), default=float("nan"))
                best = min(agx_best, med.get("mpi", float("inf")))
                d = med.get("auto", float("nan"))
                key = b if op == "allreduce" else b * np  # the class counts what a rank holds in all
                win = [w[key] for _, w in reps if key in w]
                cost = statistics.median(win) / (1000 * d) * 100 if win and d == d else 0.0
                win1 = [w[key] for _, w in firsts if key in w]
                cost1 = statistics.median(win1) / (1000 * d) * 100 if win1 and d == d else 0.0
                worst = max(worst, d / best) if d == d else worst
                print(f"| {op} | {np} | {b} | {d:.2f} | {med.get('mpi', float('nan')):.2f} | {agx_best:.2f} | "
                      f"{d / med['mpi']:.2f} | {d / best:.2f} | {cost:.1f} | {cost1:.1f} |")
    print(f"\nworst default/best: {worst:.2f}")


if __name__ == "__main__":
    main()
