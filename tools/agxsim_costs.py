"""agxsim_costs: the scenario `costs` of tools/agx-sim: the locality-aware allgathers under
the per-message cost models of sim/platform.py (free: SMPI's default, none; calibrated:
this machine's measured MPI_Send / Isend / Recv cost; heavy: 0.3 us each), multilane's
fanout swept, and agx's default (auto) against its best algorithm at every shape.
"""
from agxsim import alg_of, fmt_bytes, loc_run, model_text

COST_MODELS = ["free", "calibrated", "heavy"]
COST_ALGS = ["bruck", "loc_bruck", "hierarchical", "multileader", "multilane", "auto"]
# 16, the default, is multilane's own row. At 64 x 16 every fanout >= 4 is one non-local
# round (K - 1 = min(r - 1, 16 F)), the same schedule as 16; 1 and 2 take two rounds, like
# each other. The free model at 64 x 16 is the locality scenario's sweep.
FANOUTS = ["2"]
FULL_MODELS = ["calibrated", "heavy"]


def costs(build, out, quick):
    res, lines = [], []
    shapes = [(16, 16, "4:1K")] if quick else [(64, 16, "4:64K")]
    models = COST_MODELS if quick else FULL_MODELS
    for n, ppn, sizes in shapes:
        for model in models:
            tag = f"cost-{n}x{ppn}-{model}"
            for r in loc_run(build, out, n, ppn, COST_ALGS, sizes, tag, model=model, check=quick) or []:
                a, chose = alg_of(r)
                res.append(dict(nodes=n, ppn=ppn, model=model, alg=a, chose=chose, bytes=int(r["bytes"]),
                                us=float(r["avg_us"]), ok=r["validated"]))
            for f in [] if quick else FANOUTS:
                for r in loc_run(build, out, n, ppn, ["multilane"], sizes, f"{tag}-F{f}", model=model, check=False,
                                 env={"AGX_MULTILANE_FANOUT": f}) or []:
                    res.append(dict(nodes=n, ppn=ppn, model=model, alg=f"multilane F={f}", chose="", bytes=int(r["bytes"]),
                                    us=float(r["avg_us"]), ok=r["validated"]))
            if not quick:
                rows = loc_run(build, out, n, ppn, ["native"], sizes, f"{tag}-smp_simple", smpi_alg="smp_simple",
                               check=False, timeout=600, model=model) or []
                for r in rows:
                    res.append(dict(nodes=n, ppn=ppn, model=model, alg="SMPI smp_simple", chose="",
                                    bytes=int(r["bytes"]), us=float(r["avg_us"]), ok=r["validated"]))
    cols = COST_ALGS[:-1] + [f"multilane F={f}" for f in ([] if quick else FANOUTS)] + \
        ([] if quick else ["SMPI smp_simple"])
    for n, ppn, _ in shapes:
        lines.append(f"{n} x {ppn} ranks, simulated us per call (every network factor 1; per-message cost "
                     f"{'; '.join(model_text(m) for m in models)}; multilane's default fanout is 16):")
        lines.append("")
        lines.append("| model | bytes/rank | " + " | ".join(cols) + " | auto ran | auto / best agx |")
        lines.append("|---|---|" + "---|" * (len(cols) + 2))
        for model in models:
            for b in sorted({r["bytes"] for r in res if r["nodes"] == n}):
                d = {r["alg"]: r for r in res if r["nodes"] == n and r["model"] == model and r["bytes"] == b}
                if "auto" not in d:
                    continue
                best = min(r["us"] for a, r in d.items() if a not in ("auto", "SMPI smp_simple"))
                lines.append(f"| {model} | {fmt_bytes(b)} | " + " | ".join(f"{d[c]['us']:.2f}" if c in d else "-"
                                                                          for c in cols) +
                             f" | {d['auto']['chose']} | {d['auto']['us'] / best:.2f} |")
        lines.append("")
    return res, lines


def default_within(res, model, limit=1.10):
    """[(nodes, bytes, auto / best agx)] of the runs under `model` where the default is
    more than `limit` times agx's best algorithm."""
    bad = []
    for n, b in sorted({(r["nodes"], r["bytes"]) for r in res if r["model"] == model}):
        d = {r["alg"]: r["us"] for r in res if r["model"] == model and r["nodes"] == n and r["bytes"] == b}
        best = min(v for a, v in d.items() if a not in ("auto", "SMPI smp_simple"))
        if d["auto"] > limit * best:
            bad.append((n, b, d["auto"] / best))
    return bad


# Shapes where the window's timing decides: the two fastest within 7% of each other
LEARN_SHAPES = [("heavy", 2048), ("calibrated", 4)]


def learned(build, out, n=16, ppn=16, warmup=48):
    """[(model, bytes, what the learned default ran, its us, the faster of loc_bruck and
    multilane, its us, every result validated)]: agx's default under AGX_ADAPT=1, its
    window held by the warm-up calls, against the two candidates that run closest there
    (simulated, deterministic). Both windows end after 32 calls (AGX_VERBOSE, 2026-11-28);
    48 leave room, at 64 s of wall time where the 96 used before took about 100. A window
    longer than the warm-up puts its calls in the timed one, and the check fails (with 16:
    96.2 us against 80.2, 17.3 against 4.55)."""
    res = []
    for model, b in LEARN_SHAPES:
        tag = f"learn-{model}-{b}"
        rows = loc_run(build, out, n, ppn, ["auto"], f"{b}:{b}", tag, model=model, env={"AGX_ADAPT": "1"},
                       warmup=warmup) or []
        algs = loc_run(build, out, n, ppn, ["loc_bruck", "multilane"], f"{b}:{b}", f"{tag}-algs", model=model) or []
        best = min(algs, key=lambda r: float(r["avg_us"]), default=None)
        for r in rows:
            res.append((model, b, alg_of(r)[1], float(r["avg_us"]), best and best["algorithm"],
                        best and float(best["avg_us"]), r["validated"] == "true"))
    return res
