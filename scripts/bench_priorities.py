#!/usr/bin/env python3
"""The fewest-priorities benchmark: greedy against `search` (and optionally
`exact`) on the Tagger paper's Jellyfish sizes, one process per run so that
each run's peak memory is its own.

    cargo build --release
    python3 scripts/bench_priorities.py                 # the full benchmark (about an hour)
    python3 scripts/bench_priorities.py --quick         # small instances, seconds (CI runs this)
    python3 scripts/bench_priorities.py --exact 600     # also try to prove the bound

Every instance runs under a 4 GiB memory budget and the search under a
10-minute cap (`time=600`), as the issue that set the targets asks. The
search's budget is in path evaluations (`--budget`, default 5e9, about 5
minutes at Jellyfish 500), so runs that end before the cap are
deterministic; a run the cap stopped says so (`stopped` column).

Prints a Markdown table (instance, greedy P, search P, bound, optimal,
residue at P-1, steps, seconds, peak memory) and writes every run's JSON
summary to `--out` (JSON lines). Standard library only.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

# (instance label, topology, ELP)
FULL = [
    ("Jellyfish 500/64 r=12 seed 1", "jellyfish:n=500,ports=64,r=12,seed=1", "shortest"),
    ("Jellyfish 500/64 r=12 seed 2", "jellyfish:n=500,ports=64,r=12,seed=2", "shortest"),
    ("Jellyfish 1000/64 r=12 seed 1", "jellyfish:n=1000,ports=64,r=12,seed=1", "shortest"),
    ("Jellyfish 1000/64 r=12 seed 2", "jellyfish:n=1000,ports=64,r=12,seed=2", "shortest"),
    ("Jellyfish 2000/64 r=12 seed 1", "jellyfish:n=2000,ports=64,r=12,seed=1", "shortest"),
    ("Jellyfish 2000/64 r=12 seed 2", "jellyfish:n=2000,ports=64,r=12,seed=2", "shortest"),
    (
        "Jellyfish 2000/64 r=12 seed 1 +random:20000",
        "jellyfish:n=2000,ports=64,r=12,seed=1",
        "shortest+random:20000,seed=9",
    ),
]
QUICK = [
    ("Jellyfish 100/32 r=12 seed 1", "jellyfish:n=100,ports=32,r=12,seed=1", "shortest"),
    ("Jellyfish 100/32 r=8 seed 1", "jellyfish:n=100,ports=32,r=8,seed=1", "shortest"),
    ("fat-tree k=4 kbounce:2", "fattree:k=4", "kbounce:2"),
]


def run(binary, topo, elp, algo, budget, max_tcs="none"):
    # The fewest priorities as the algorithms find them, as the paper
    # measured (--max-tcs none); --max-tcs profile measures plans held to
    # a switch's traffic classes instead.
    cmd = [binary, "run", topo, "--elp", elp, "--algo", algo, "--json"]
    if max_tcs != "profile":
        cmd += ["--max-tcs", max_tcs]
    if budget:
        cmd += ["--memory-budget", budget]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        return {"error": (p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[-1]}
    return json.loads(p.stdout)


def fmt_mem(b):
    return "-" if b is None else "%.2f GiB" % (b / 2**30) if b >= 2**30 else "%d MiB" % (b // 2**20)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--binary", default="target/release/tagger")
    ap.add_argument("--quick", action="store_true", help="small instances only (seconds)")
    ap.add_argument("--budget", default=None,
                    help="search budget in path evaluations (default 5e9; 1e8 with --quick)")
    ap.add_argument("--time", default="600", help="search wall-clock cap, seconds")
    ap.add_argument("--memory", default="4GiB", help="memory budget per run")
    ap.add_argument("--exact", metavar="S", help="also run exact:timeout=S")
    ap.add_argument("--max-tcs", default="none",
                    help="traffic classes per switch the plans are held to: none (default, the paper's measure), profile, or a number")
    ap.add_argument("--out", default=None, help="JSON lines of every run (default: a temp file)")
    a = ap.parse_args()
    if not os.path.exists(a.binary):
        sys.exit(f"bench_priorities: {a.binary} not found; run `cargo build --release` first")
    instances = QUICK if a.quick else FULL
    a.budget = a.budget or ("1e8" if a.quick else "5e9")
    search = f"search:paths=20000000,budget={a.budget},time={a.time}"
    algos = ["greedy", search] + ([f"exact:timeout={a.exact}"] if a.exact else [])
    out = a.out or os.path.join(tempfile.mkdtemp(prefix="bench-priorities-"), "runs.jsonl")
    rows = []
    with open(out, "w") as f:
        for label, topo, elp in instances:
            res = {}
            for algo in algos:
                r = run(a.binary, topo, elp, algo, a.memory, a.max_tcs)
                r["instance"] = label
                r["algo_spec"] = algo
                f.write(json.dumps(r, sort_keys=True) + "\n")
                f.flush()
                res[algo.split(":")[0]] = r
                if "error" in r:
                    print(f"{label} {algo}: {r['error']}", file=sys.stderr)
                elif r.get("verified") is not True:
                    sys.exit(f"bench_priorities: {label} {algo}: not verified")
            rows.append((label, res))
            print(f"done: {label}", file=sys.stderr, flush=True)

    cols = ["instance", "greedy P", "search P", "bound", "optimal", "residue at P-1",
            "steps", "search s", "peak memory", "stopped"]
    if a.exact:
        cols += ["exact P", "exact bound", "proof paths", "exact s", "exact memory"]
    print("| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))
    for label, res in rows:
        g, s = res["greedy"], res["search"]
        if "error" in s:
            cells = [label, str(g.get("priorities", "-")), "error: " + s["error"]] + [""] * (len(cols) - 3)
        else:
            cells = [
                label,
                str(g.get("priorities", "-")),
                str(s["priorities"]),
                str(s["priorities_lower_bound"]),
                "yes" if s["priorities_optimal"] else "no",
                f"{s['search_residue']:,}",
                f"{s['search_steps']:,}",
                "%.1f" % s["seconds"]["total"],
                fmt_mem(s.get("peak_rss_bytes")),
                "yes" if s["search_stopped_early"] else "no",
            ]
        if a.exact:
            e = res["exact"]
            if "error" in e:
                cells += ["error: " + e["error"], "", "", "", ""]
            else:
                cells += [
                    str(e["priorities"]),
                    str(e["priorities_lower_bound"]),
                    "-" if e["proof_paths"] is None else f"{e['proof_paths']:,}",
                    "%.1f" % e["seconds"]["total"],
                    fmt_mem(e.get("peak_rss_bytes")),
                ]
        print("| " + " | ".join(cells) + " |")
    print(f"\nevery run's summary: {out}", file=sys.stderr)
    # A search that used more priorities than greedy is a defect, not a result.
    worse = [l for l, r in rows if "error" not in r["search"] and "error" not in r["greedy"]
             and r["search"]["priorities"] > r["greedy"]["priorities"]]
    if worse:
        sys.exit(f"bench_priorities: search worse than greedy on {worse}")


if __name__ == "__main__":
    main()
