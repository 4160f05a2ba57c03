#!/usr/bin/env python3
"""Plans within the switches' traffic classes, against the same plans
without the limit, and against a baseline build, in one run.

Each scenario runs `tagger run ... --json` with the build under test and,
with --baseline, with that build, in turn (A B A B ...), so that a
machine whose speed drifts moves both alike. Printed per scenario and
build: priorities (and the most traffic classes at one switch), the tag
stage's seconds and the whole run's (min-max over the runs), and the peak
RSS the run reports of itself (`peak_rss_bytes`).

    python3 scripts/bench_classes.py --tagger target/release/tagger \
        --baseline /tmp/tagger-before --runs 3 [--large]

`--large` adds Jellyfish 10000/64 r=16 (two minutes a run or more).
Standard library only.
"""

import argparse
import json
import os
import subprocess
import sys
import time

JF2000 = "jellyfish:n=2000,ports=64,r=12,seed=1"
SCENARIOS = [
    (JF2000, "shortest", "greedy", ["--max-tcs", "none"]),
    (JF2000, "shortest", "greedy", []),
    (JF2000, "shortest", "auto", []),
    ("jellyfish:n=1000,ports=64,r=12,seed=1", "shortest", "greedy", ["--max-tcs", "none"]),
    ("jellyfish:n=1000,ports=64,r=12,seed=1", "shortest", "greedy", []),
    ("jellyfish:n=300,ports=64,r=12,seed=1", "shortest", "greedy", []),
    ("jellyfish:n=300,ports=64,r=12,seed=3", "shortest", "greedy", []),
    ("fattree:k=32", "kbounce:2", "greedy", ["--max-tcs", "none"]),
    ("fattree:k=32", "kbounce:2", "greedy", []),
]
LARGE = [
    ("jellyfish:n=10000,ports=64,r=16,seed=1", "shortest", "greedy", ["--max-tcs", "none", "--memory-budget", "none"]),
    ("jellyfish:n=10000,ports=64,r=16,seed=1", "shortest", "greedy", ["--memory-budget", "none"]),
]


def run(binary, scenario):
    topo, elp, algo, extra = scenario
    cmd = [binary, "run", topo, "--elp", elp, "--algo", algo, "--json", *extra]
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = proc.communicate()
    wall = time.monotonic() - start
    if proc.returncode != 0:
        return {"error": err.decode(errors="replace").strip()[:200], "wall": wall}
    d = json.loads(out)
    return {
        "priorities": d["priorities"],
        "tcs_max": d.get("tcs_max"),
        "tag": d["seconds"]["tag"],
        "wall": wall,
        "peak": d.get("peak_rss_bytes"),
    }


def span(values, fmt):
    values = [v for v in values if v is not None]
    if not values:
        return "-"
    lo, hi = min(values), max(values)
    return fmt.format(lo) if lo == hi else (fmt + "-" + fmt).format(lo, hi)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tagger", default="target/release/tagger")
    ap.add_argument("--baseline", help="a build to run in turn with --tagger")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--large", action="store_true")
    args = ap.parse_args()
    builds = [("now", args.tagger)] + ([("baseline", args.baseline)] if args.baseline else [])
    for b in builds:
        if not os.access(b[1], os.X_OK):
            sys.exit(f"error: {b[0]} build {b[1]!r} is not an executable file")
    scenarios = SCENARIOS + (LARGE if args.large else [])
    print("| scenario | build | priorities (classes at the busiest switch) | tag stage s | whole run s | peak RSS MiB |")
    print("|---|---|---|---|---|---|")
    for sc in scenarios:
        results = {name: [] for name, _ in builds}
        for _ in range(args.runs):
            for name, binary in builds:
                results[name].append(run(binary, sc))
        label = f"`{sc[0]} --elp {sc[1]} --algo {sc[2]}{' ' + ' '.join(sc[3]) if sc[3] else ''}`"
        for name, _ in builds:
            rs = results[name]
            errors = [r["error"] for r in rs if "error" in r]
            if errors:
                print(f"| {label} | {name} | failed: {errors[0]} | | {span([r['wall'] for r in rs], '{:.1f}')} | |")
                continue
            prios = sorted({(r["priorities"], r["tcs_max"]) for r in rs})
            p = ", ".join(f"{a} ({b})" if b is not None else f"{a}" for a, b in prios)
            peaks = [r["peak"] / 2**20 if r["peak"] else None for r in rs]
            print(
                f"| {label} | {name} | {p} | {span([r['tag'] for r in rs], '{:.2f}')} | "
                f"{span([r['wall'] for r in rs], '{:.2f}')} | {span(peaks, '{:.0f}')} |"
            )
        sys.stdout.flush()


if __name__ == "__main__":
    main()
