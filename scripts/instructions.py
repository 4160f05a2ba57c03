#!/usr/bin/env python3
"""Instructions per pipeline stage under valgrind, against a committed
baseline: a regression guard that does not depend on wall-clock noise.

For each scenario below, runs `benches/instructions.rs` (the pipeline up to
one stage, on one thread) under `valgrind --tool=cachegrind` once per
stage; a stage's instructions are the run up to it less the run up to the
stage before. Each figure is compared with `benches/instructions.json`;
the script fails when a stage does more than TOLERANCE more work, or
notably less (then the baseline is stale: update it). Update the baseline
on purpose, in its own commit, saying why:

    python3 scripts/instructions.py            # compare (CI runs this)
    python3 scripts/instructions.py --update   # rewrite the baseline

Needs valgrind (`apt-get install valgrind`) and cargo. Counts depend on the
compiler: a toolchain upgrade is a reason to update the baseline.
"""
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BASELINE = ROOT / "benches" / "instructions.json"
STAGES = ["topology", "elp", "tag", "rules", "verify"]
# (topology, ELP, algorithm): a random graph, a Clos with bounces under
# both of its algorithms, and a lattice; small enough for valgrind's 50x.
# Fat-tree k=16 `clos` (0.5M keys) is where the Clos tag stage's building
# of the keys and the verifier's table show, as they do at k=64.
SCENARIOS = [
    ("jellyfish:n=100,ports=32,r=8,seed=1", "shortest", "greedy"),
    ("fattree:k=8", "kbounce:2", "clos"),
    ("fattree:k=16", "kbounce:2", "clos"),
    ("fattree:k=8", "kbounce:2", "greedy"),
    ("hyperx:l=2,s=4,t=2", "shortest", "greedy"),
]
# More than this much more work in a stage fails; so does this much less
# (a stale baseline hides the next regression). Counts repeat within 0.02%
# run to run, but a change elsewhere in the crate moves a stage by up to 5%
# (the compiler splits and inlines the crate differently); the regression
# this guard was made for was +25% to +58% in the rules stage.
TOLERANCE = 0.10
# Stages below this many instructions are reported, never judged: their
# noise is the process's fixed start-up.
FLOOR = 2_000_000


def bench_binary() -> str:
    out = subprocess.run(
        ["cargo", "bench", "--bench", "instructions", "--no-run", "--message-format=json"],
        cwd=ROOT, check=True, capture_output=True, text=True,
    ).stdout
    for line in out.splitlines():
        msg = json.loads(line)
        if msg.get("reason") == "compiler-artifact" and msg.get("target", {}).get("name") == "instructions" and msg.get("executable"):
            return msg["executable"]
    sys.exit("instructions.py: cargo built no instructions bench")


def count(binary: str, stage: str, scenario) -> int:
    p = subprocess.run(
        ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null", binary, stage, *scenario],
        capture_output=True, text=True,
    )
    if p.returncode != 0:
        sys.exit(f"instructions.py: {stage} {' '.join(scenario)} failed:\n{p.stderr}")
    m = re.search(r"I\s+refs:\s+([\d,]+)", p.stderr)
    if not m:
        sys.exit(f"instructions.py: no instruction count in valgrind's output:\n{p.stderr}")
    return int(m.group(1).replace(",", ""))


def main() -> int:
    update = "--update" in sys.argv[1:]
    binary = bench_binary()
    measured = {}
    for sc in SCENARIOS:
        key = " ".join(sc)
        totals = [count(binary, st, sc) for st in STAGES]
        measured[key] = {st: totals[i] - (totals[i - 1] if i else 0) for i, st in enumerate(STAGES)}
    if update:
        BASELINE.write_text(json.dumps(measured, indent=2) + "\n")
        print(f"wrote {BASELINE.relative_to(ROOT)}")
        return 0
    base = json.loads(BASELINE.read_text())
    bad = []
    print(f"{'scenario':<52} {'stage':<9} {'baseline':>14} {'now':>14} {'change':>8}")
    for key, stages in measured.items():
        for st, now in stages.items():
            was = base.get(key, {}).get(st)
            if was is None:
                bad.append(f"{key} {st}: not in the baseline")
                continue
            change = (now - was) / was if was else 0.0
            judged = max(now, was) >= FLOOR
            flag = ""
            if judged and abs(change) > TOLERANCE:
                flag = "  MORE WORK" if change > 0 else "  less work: update the baseline"
                bad.append(f"{key} {st}: {was:,} -> {now:,} ({change:+.1%})")
            print(f"{key:<52} {st:<9} {was:>14,} {now:>14,} {change:>+8.1%}{flag}")
    if bad:
        print(f"\n{len(bad)} stage(s) beyond {TOLERANCE:.0%} of the baseline:", *bad, sep="\n  ", file=sys.stderr)
        print("If the change is intended, run scripts/instructions.py --update and commit the baseline on its own, saying why.", file=sys.stderr)
        return 1
    print(f"\nevery stage within {TOLERANCE:.0%} of benches/instructions.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
