"""agxsim: what agx-sim's scenarios and agx-demo share: running agx-bench under SimGrid SMPI on
sim/platform.py's machines (smpirun, with folding and a wall limit), the locality runs, and
formatting. Imported by tools/agx-sim, its scenarios (agxsim_scenarios.py) and tools/agx-demo
(both put tools/ on sys.path).
"""
import csv
import importlib.util
import os
import signal
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
RESUME = False  # --resume: reuse the CSV (or the wall-limit marker) a previous run left


def max_size(sizes):
    """The largest size of an agx-bench -m value ("8:1M" -> 1048576; K, M, G suffixes)."""
    m = sizes.split(":")[-1]
    return int(m.rstrip("KMG")) << {"K": 10, "M": 20, "G": 30}.get(m[-1], 0)


def fold_block(ranks, args):
    """The folding block size (a power of two, at least 1 MiB) that keeps the mappings of
    every rank's folded buffers, about (ranks + 2) times the largest -m size each, under
    90% of vm.max_map_count (64 x 16 ranks at 1 MiB: 2 MiB blocks under a limit of 1048576)."""
    big = max_size(args[args.index("-m") + 1] if "-m" in args else "1M")
    try:
        with open("/proc/sys/vm/max_map_count") as f:
            limit = int(f.read())
    except OSError:
        limit = 65530
    block = 1 << 20
    while ranks * (ranks + 2) * big / block > 0.9 * limit and block < 1 << 30:
        block *= 2
    return block


def smpirun(build, out, n, ppn, args, selector="mpich", fold=False, tag="run", env=None, cfg=(), timeout=None,
            may_fail=False, factors="smpi", model="free", net="aries"):
    """Run agx-bench on n nodes x ppn cores (extra environment `env`, extra smpirun options
    `cfg`, SMPI's network factors `factors`, per-message cost `model` and network `net`:
    sim/platform.py);
    return the CSV rows, or None when it ran past `timeout` seconds of wall time (or failed,
    with may_fail: SMPI's own algorithms; else a failure ends agx-sim)."""
    plat = os.path.join(out, f"plat-{n}x{ppn}" + ("" if factors == "smpi" else f"-{factors}") +
                        ("" if model == "free" else f"-{model}") + ("" if net == "aries" else f"-{net}"))
    if not os.path.exists(os.path.join(plat, "platform.xml")):
        subprocess.run([sys.executable, os.path.join(ROOT, "sim", "platform.py"), str(n), str(ppn), plat,
                        "--factors", factors, "--model", model, "--net", net], check=True)
    csvf = os.path.join(out, f"{tag}.csv")
    marker = os.path.join(out, f"{tag}.timeout")
    if RESUME and os.path.exists(csvf) and os.path.getsize(csvf) > 0:
        with open(csvf) as f:
            rows = list(csv.DictReader(f))
        if rows:
            print(f"agx-sim: --resume: reusing {csvf}", flush=True)
            return [dict(r, selector=selector) for r in rows]
    if RESUME and may_fail and os.path.exists(os.path.join(out, f"{tag}.failed")):
        print(f"agx-sim: --resume: {tag} failed before, skipped", flush=True)
        return None
    if RESUME and timeout and os.path.exists(marker):
        with open(marker) as f:
            if float(f.read() or 0) >= timeout:
                print(f"agx-sim: --resume: {tag} ran past {timeout} s before, skipped", flush=True)
                return None
    cmd = ["smpirun", "-np", str(n * ppn), "-platform", os.path.join(plat, "platform.xml"),
           "-hostfile", os.path.join(plat, "hostfile"),
           "--cfg=smpi/simulate-computation:0", "--cfg=smpi/privatization:1",
           f"--cfg=smpi/coll-selector:{selector}", "--cfg=smpi/display-timing:0"]
    if fold:
        # fold big buffers (1 MiB blocks: 256 ranks x 64 MiB stay under vm.max_map_count;
        # larger blocks made the runs many times slower, so only where they must be larger)
        cmd.append("--cfg=smpi/auto-shared-malloc-thresh:65536")
        block = fold_block(n * ppn, args)
        if block > 1 << 20:
            cmd.append(f"--cfg=smpi/shared-malloc-blocksize:{block}")
    cmd += list(cfg) + [os.path.join(build, "bin", "agx-bench")] + args + ["-q"] + ["--csv", csvf]
    log = os.path.join(out, f"{tag}.log")
    with open(log, "w") as f:
        # smpirun leaves smpitmp-hostf* temporaries in its working directory: run it in out
        # its own process group: smpirun is a script, the simulation its child
        r = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, cwd=out, env=dict(os.environ, **(env or {})),
                             start_new_session=True)
        try:
            r.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(r.pid, signal.SIGKILL)
            r.wait()
            with open(marker, "w") as f:
                f.write(f"{timeout}\n")
            return None
    if (r.returncode != 0 or not os.path.exists(csvf)) and may_fail:  # SMPI stalls exit 0
        open(os.path.join(out, f"{tag}.failed"), "w").close()
        print(f"agx-sim: {tag} failed (rc {r.returncode}), see {log}", flush=True)
        return None
    if r.returncode != 0:
        sys.exit(f"agx-sim: {' '.join(cmd)} failed (rc {r.returncode}), see {log}")
    with open(csvf) as f:
        rows = list(csv.DictReader(f))
    for row in rows:
        row["selector"] = selector
    return rows


# SMPI's mpich selector gives every new communicator an init_smp whose ring allgather has
# p - 1 rounds (through bcast__mpich at creation, allreduce__mpich at first use): at 1920
# ranks that alone took minutes per communicator. agx's runs (which create a few
# communicators and call MPI collectives only outside the timed loop) pick these instead.
AGX_CFG = ["--cfg=smpi/bcast:binomial_tree", "--cfg=smpi/reduce:binomial", "--cfg=smpi/allreduce:rdb"]


def model_text(model):
    """What sim/platform.py's per-message cost `model` charges, in words."""
    spec = importlib.util.spec_from_file_location("agx_sim_platform", os.path.join(ROOT, "sim", "platform.py"))
    plat = importlib.util.module_from_spec(spec)  # sim/platform.py under its own name (not the standard module)
    spec.loader.exec_module(plat)
    o = plat.OVERHEAD.get(model)
    return f"{model}: none" if not o else \
        f"{model}: MPI_Send / Isend / Recv {o['os'] * 1e6:.3f} / {o['ois'] * 1e6:.3f} / {o['or'] * 1e6:.3f} us each"


def fmt_bytes(b):
    b = int(b)
    for unit, k in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= k and b % k == 0:
            return f"{b // k} {unit}"
    return f"{b} B"


def gnuplot(script):
    subprocess.run(["gnuplot"], input=script, text=True, check=False)


def loc_run(build, out, nodes, ppn, algs, sizes, tag, sel="mpich", smpi_alg=None, check=True, timeout=None,
            model="free", env=None, warmup=1):
    cfg = AGX_CFG + ([f"--cfg=smpi/allgather:{smpi_alg}"] if smpi_alg else [])
    args = ["allgather", "-a", ",".join(algs), "-m", sizes, "--factor", "8", "-i", "1", "-x", str(warmup),
            "--sync", "window"]
    big = max_size(sizes) > 65536
    return smpirun(build, out, nodes, ppn, args + (["-c"] if check and not big else []), selector=sel, fold=big,
                   tag=tag, cfg=cfg, factors="none", timeout=timeout, may_fail=smpi_alg is not None or timeout,
                   model=model, env=env)


def alg_of(r):
    """(algorithm, what auto chose): agx-bench writes auto's row as auto(NAME)."""
    a = r["algorithm"]
    return ("auto", a[5:-1]) if a.startswith("auto(") else (a, a)
