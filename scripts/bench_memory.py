#!/usr/bin/env python3
"""How honest the memory budget is: each instance's deterministic estimate
(`memory_estimate_bytes`) against its measured peak RSS, and how much memory
a run refused by a budget of half its estimate held before it stopped.

    cargo build --release
    python3 scripts/bench_memory.py            # the README's table (a few minutes)
    python3 scripts/bench_memory.py --quick    # three small rows, seconds

One process per run, so each peak is its own (read from the child's rusage).
Prints a Markdown table: instance, estimate, peak RSS, estimate / RSS, the
peak RSS again with `MIMALLOC_PURGE_DELAY=0` (the allocator returns freed
pages at once instead of keeping them for reuse, which is most of the gap
between the estimate of live data and RSS), and, under a budget of half the
estimate, the stage that refused and the RSS the process reached. A budget
that holds up front refuses while the process is still below its full peak.
Standard library only.
"""

import argparse
import json
import os
import sys

# (topology, ELP, algo)
FULL = [
    ("fattree:k=32", "kbounce:2", "clos"),
    ("fattree:k=32", "kbounce:2", "greedy"),
    ("fattree:k=64", "kbounce:2", "clos"),
    ("leafspine:leaves=64,spines=32,hosts=1,links=1", "kbounce:2", "greedy"),
    ("jellyfish:n=2000,ports=64,r=12,seed=1", "shortest", "greedy"),
    ("jellyfish:n=2000,ports=64,r=12,seed=1", "shortest+random:200000", "greedy"),
    ("jellyfish:n=1000,ports=64,r=12,seed=1", "shortest", "search"),
    ("bcube:n=8,k=2", "dor", "greedy"),
    ("bcube:n=8,k=2", "shortest", "greedy"),
    ("hyperx:l=3,s=8,k=1,t=2", "shortest", "greedy"),
    ("hyperx:l=3,s=8,k=1,t=2", "dor", "greedy"),
]
QUICK = [
    ("fattree:k=16", "kbounce:2", "clos"),
    ("jellyfish:n=200,ports=32,r=12,seed=1", "shortest", "greedy"),
    ("hyperx:l=2,s=8,k=1,t=2", "dor", "greedy"),
]


def run(binary, topo, elp, algo, budget=None, env=None):
    """Runs one scenario; returns (JSON summary or error line, the child's
    own peak RSS in bytes, from wait4)."""
    # The planning algorithms' own memory, as measured before plans were held
    # to a switch's traffic classes (fitting replans within the same
    # budget checks).
    cmd = [binary, "run", topo, "--elp", elp, "--algo", algo, "--json", "--max-tcs", "none"]
    if budget is not None:
        cmd += ["--memory-budget", str(budget)]
    r_out, w_out = os.pipe()
    r_err, w_err = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.dup2(w_out, 1)
        os.dup2(w_err, 2)
        os.close(r_out)
        os.close(r_err)
        os.execve(binary, cmd, {**os.environ, **(env or {})})
    os.close(w_out)
    os.close(w_err)
    with os.fdopen(r_out) as fo, os.fdopen(r_err) as fe:
        # Small outputs (one JSON object, one error line): reading one pipe
        # to the end before the other cannot block the child.
        out = fo.read()
        err = fe.read()
    _, status, usage = os.wait4(pid, 0)
    rss = usage.ru_maxrss * 1024
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        lines = err.strip().splitlines() or ["exit %d" % code]
        return {"error": lines[-1]}, rss
    return json.loads(out), rss


def mib(b):
    return "%d MiB" % round(b / 2**20)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--binary", default="target/release/tagger")
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    if not os.path.exists(args.binary):
        sys.exit(f"{args.binary} not found: run `cargo build --release` first")
    rows = QUICK if args.quick else FULL
    print("| topology | ELP | algo | estimate | peak RSS | estimate / RSS "
          "| peak RSS, pages returned at once | budget | refused in | RSS at refusal |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    failures = 0
    for topo, elp, algo in rows:
        s, rss = run(args.binary, topo, elp, algo)
        if "error" in s:
            print(f"| {topo} | `{elp}` | {algo} | {s['error']} | | | | |")
            failures += 1
            continue
        est = s["memory_estimate_bytes"]
        _, eager_rss = run(args.binary, topo, elp, algo, env={"MIMALLOC_PURGE_DELAY": "0"})
        half, half_rss = run(args.binary, topo, elp, algo, budget=est // 2)
        if "error" in half and "memory budget exceeded in " in half["error"]:
            stage = half["error"].split("memory budget exceeded in ")[1].split(":")[0]
        elif half.get("search_skipped"):
            # `search` fits itself to the budget: it leaves out its local
            # search (and says why) rather than refusing the run.
            stage = "not refused: search skipped its local search"
        else:
            stage = "not refused"
            failures += 1
        print(f"| {topo} | `{elp}` | {algo} | {mib(est)} | {mib(rss)} | "
              f"{round(100 * est / rss)}% | {mib(eager_rss)} | {mib(est // 2)} | {stage} "
              f"| {mib(half_rss)} |")
        sys.stdout.flush()
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
