#!/usr/bin/env python3
"""unit.agx_tune: agx-tune's statistics on made-up launches, checked exactly.

- records are assigned to rounds by their position (a fallback's record, named by what
  ran, stays in its round);
- the score is the mean over the rounds of P50 / the round's fastest, so an algorithm
  that is fast under one placement and 1.75x slower under another loses to one that is
  always 1.2x (the median of the same rounds would pick the first);
- --tolerance keeps the previous size's winner;
- --verify's ratio is auto / best, round by round.
"""
import importlib.machinery
import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PATH = os.path.join(HERE, "..", "..", "tools", "agx-tune")
loader = importlib.machinery.SourceFileLoader("agx_tune", PATH)
spec = importlib.util.spec_from_loader("agx_tune", loader)
tune = importlib.util.module_from_spec(spec)
loader.exec_module(tune)

failures = 0


def check(what, got, want):
    global failures
    ok = got == want if not isinstance(want, float) else abs(got - want) < 1e-9
    print(("ok   " if ok else "FAIL ") + f"{what}: got {got!r}, want {want!r}")
    failures += not ok


def launch(rounds, size=8):
    """One launch's records: rounds = [[(name, p50), ...], ...] in run order."""
    return [{"bytes": size, "algorithm": name, "p50_us": t} for rnd in rounds for name, t in rnd]


ALGS = {"native", "rd", "kbruck"}

# 1. rounds by position: the second round's fallback record ('kbruck' asked for, 'native'
#    ran) stays in round 2 and does not displace round 2's own 'native'
recs = launch([[("native", 5.0), ("rd", 4.0), ("kbruck", 6.0), ("auto(rd)", 4.1)],
               [("native", 5.5), ("rd", 4.5), ("native", 9.0), ("auto(rd)", 4.4)]])
rows = tune.blocks([recs], ALGS)[8]
check("two rounds", len(rows), 2)
check("round 2 keeps its own native", rows[1]["native"], 5.5)
check("round 2 has no kbruck", "kbruck" in rows[1], False)
check("auto's choice", rows[0]["chose"], "rd")

# 2. placement: rd is 1.0 in 6 launches and 1.75 in 4; kbruck is always 1.2
launches = []
for k in range(10):
    slow = k >= 6
    launches.append(launch([[("native", 20.0), ("rd", 17.5 if slow else 10.0), ("kbruck", 12.0),
                             ("auto(kbruck)", 12.0)]]))
win = tune.winners(launches, ALGS, 0.0)[8]
check("mean ratio picks the steady algorithm", win[0], "kbruck")
check("its time is the median block", win[1], 12.0)
check("rd's median time is the fast mode", win[2]["rd"], 10.0)
check("auto / best, round by round (median)", win[3][2], 1.0)
check("auto / best, round by round (mean)", win[3][3], 1.0)
check("auto's choice", win[3][0], "kbruck")

# 3. tolerance: at 32 B 'native' is 1% slower than 'rd' but won at 8 B: it stays
two = launch([[("native", 1.0), ("rd", 2.0), ("kbruck", 3.0), ("auto(native)", 1.0)]], 8) + \
      launch([[("native", 1.01), ("rd", 1.0), ("kbruck", 3.0), ("auto(native)", 1.01)]], 32)
win = tune.winners([two], ALGS, 0.02)
check("8 B winner", win[8][0], "native")
check("32 B: the previous winner within 2% stays", win[32][0], "native")
win = tune.winners([two], ALGS, 0.0)
check("32 B without tolerance", win[32][0], "rd")
check("auto against the best", win[32][3][2], 1.01)

# 4. the rows a shape's winners make
rules = tune.rules_for("allgather", 4, 8, 1, {8: ("kbruck",), 32: ("kbruck",), 128: ("ring",)})
check("merged rows", [(r["bytes"], r["algorithm"]) for r in rules], [("0-511", "kbruck"), ("512-", "ring")])
check("communicator sizes", rules[0]["comm_size"], "4-7")

sys.exit(1 if failures else 0)
