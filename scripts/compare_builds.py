#!/usr/bin/env python3
"""Runs two tagger builds on the same scenarios and compares what they write.

A refactor must keep every output byte-identical, timings aside: rule and
topology files, path files, SONiC and neutral exports, `verify --exported`,
`run`/`failures`/`update` text and `--json`, update step directories and
step exports, Parquet rows of runs, failures, update and a small sweep, and
every `--help`. This script runs each scenario with OLD and NEW into two
directories and compares them file by file:

- text (stdout and stderr): lines saying seconds or memory (`seconds`,
  `memory`, `peak RSS`) are dropped and every number of seconds (`0.42 s`)
  masked; the temporary directory's path is replaced by `DIR`;
- JSON: keys naming seconds, memory or threads are dropped (see TIMING);
- Parquet: the same columns dropped, rows compared in order (pyarrow);
- every other file byte for byte.

Usage: python3 scripts/compare_builds.py OLD_BIN NEW_BIN [--keep DIR]
Exit status 1 when any scenario differs (each difference is printed).
Needs pyarrow (scripts/requirements.txt).
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

# Keys and columns whose values are measurements of the run, not results.
TIMING = re.compile(
    r"(seconds|secs|_ms$|^ms$|rss|elapsed|threads|memory_estimate|memory_budget|wall|_time|^time$)"
)
SECONDS = re.compile(r"\b\d+(\.\d+)? s\b")
DROP_LINE = re.compile(r"^\s*(seconds|memory)\b|peak RSS")

# (name, [commands]); each command is a list of arguments, with "{d}" the
# scenario's own directory. Commands run in order in that directory.
RUN_TOPOS = [
    ("fattree:k=4", "kbounce:1", "clos"),
    ("fattree:k=4", "kbounce:1", "greedy"),
    ("fattree:k=4", "kbounce:2", "auto"),
    ("fattree:k=6", "shortest", "search"),
    ("fattree:k=4", "shortest", "brute"),
    ("leafspine:leaves=4,spines=2,hosts=4", "shortest", "auto"),
    ("leafspine:leaves=6,spines=3,hosts=2,links=2", "kbounce:1", "clos"),
    ("bcube:n=4,k=1", "shortest", "greedy"),
    ("bcube:n=3,k=1", "dor", "auto"),
    ("hyperx:l=2,s=4,t=2", "dor", "greedy"),
    ("hyperx:l=2,s=3,k=2,t=1", "shortest", "search"),
    ("jellyfish:n=30,ports=8,r=4,seed=1", "shortest", "greedy"),
    ("jellyfish:n=40,ports=8,r=5,seed=2", "shortest", "auto"),
    ("jellyfish:n=50,ports=10,r=6,seed=3", "random:400", "search"),
    ("jellyfish:n=40,ports=8,r=5,seed=4", "ksp:2", "greedy"),
    ("jellyfish:n=64,ports=8,r=4,seed=11", "shortest", "search:budget=200000"),
    ("fattree:k=8", "kbounce:1", "clos"),
    ("jellyfish:n=100,ports=16,r=8,seed=1", "shortest", "auto"),
]
UPDATES = [
    ("jellyfish:n=40,ports=8,r=5,seed=1", "greedy", "shortest", "grow:switches=2,seed=3", []),
    ("jellyfish:n=40,ports=8,r=5,seed=2", "auto", "shortest", "grow:switches=3,seed=1", ["--near"]),
    ("jellyfish:n=60,ports=10,r=6,seed=3", "search", "shortest", "drain:links=3,seed=2", []),
    ("fattree:k=4", "clos", "kbounce:1", "drain:links=2,seed=1", []),
    ("leafspine:leaves=4,spines=2,hosts=4", "auto", "shortest", "grow:leaves=2", []),
    ("jellyfish:n=80,ports=12,r=8,seed=5", "auto", "shortest", "grow:switches=4,seed=2", ["--near"]),
    ("hyperx:l=2,s=4,t=2", "auto", "shortest", "drain:links=2,seed=3", []),
    ("leafspine:leaves=6,spines=3,hosts=2", "greedy", "shortest", "drain:links=1,seed=4", []),
]
FAILURES = [
    ("fattree:k=4", "kbounce:1", "clos", "links:1,trials=5"),
    ("jellyfish:n=40,ports=8,r=5,seed=2", "shortest", "greedy", "links:2,trials=4,seed=3"),
    ("leafspine:leaves=4,spines=2,hosts=4", "shortest", "auto", "switches:1,trials=3"),
]
SWEEPS = ["datasets/failures-small.toml"]


def scenarios():
    out = []
    for i, (topo, elp, algo) in enumerate(RUN_TOPOS):
        cmds = [
            ["run", topo, "--elp", elp, "--algo", algo, "--rules-out", "{d}/r.json",
             "--topology-out", "{d}/t.json", "--paths-out", "{d}/p.txt"],
            ["run", topo, "--elp", elp, "--algo", algo, "--json"],
            ["export", "{d}/t.json", "--rules", "{d}/r.json", "--elp", elp, "--format", "json",
             "--out", "{d}/neutral"],
            ["export", "{d}/t.json", "--rules", "{d}/r.json", "--elp", elp, "--out", "{d}/sonic",
             "--require-fit", "off"],
            ["verify", "{d}/t.json", "--rules", "{d}/r.json", "--elp", elp],
            ["verify", "{d}/t.json", "--exported", "{d}/sonic"],
            ["verify", "{d}/t.json", "--exported", "{d}/neutral"],
            ["elp", topo, "--elp", elp],
            ["topo", topo],
        ]
        out.append((f"run-{i}-{topo}-{elp}-{algo}", cmds))
    for i, (topo, algo, elp, change, extra) in enumerate(UPDATES):
        cmds = [
            ["run", topo, "--elp", elp, "--algo", algo, "--rules-out", "{d}/r.json"],
            ["update", topo, "--rules", "{d}/r.json", "--elp", elp, "--to", change, *extra,
             "--rules-out", "{d}/new.json", "--topology-out", "{d}/new-topo.json",
             "--steps-out", "{d}/steps", "--out", "{d}/update.parquet",
             "--export-steps", "sonic:{d}/xs"],
            ["update", topo, "--rules", "{d}/r.json", "--elp", elp, "--to", change, *extra,
             "--json", "--export-steps", "json:{d}/xj"],
        ]
        out.append((f"update-{i}-{topo}-{change}", cmds))
    for i, (topo, elp, algo, fail) in enumerate(FAILURES):
        cmds = [
            ["failures", topo, "--elp", elp, "--algo", algo, "--fail", fail,
             "--out", "{d}/f.parquet"],
            ["failures", topo, "--elp", elp, "--algo", algo, "--fail", fail, "--json"],
        ]
        out.append((f"failures-{i}-{topo}", cmds))
    for spec in SWEEPS:
        out.append((f"sweep-{os.path.basename(spec)}",
                    [["sweep", spec, "--out", "{d}/sw", "--no-report", "--jobs", "2"]]))
    helps = [["--help"]] + [[c, "--help"] for c in
                            ["topo", "elp", "run", "failures", "export", "verify", "update",
                             "schema", "merge", "report", "sweep"]]
    out.append(("help", helps + [["schema"]]))
    return out


def run_all(binary, root, repo):
    for name, cmds in scenarios():
        d = os.path.join(root, re.sub(r"[^A-Za-z0-9_.-]", "_", name))
        os.makedirs(d, exist_ok=True)
        for k, cmd in enumerate(cmds):
            args = [a.replace("{d}", d) for a in cmd]
            p = subprocess.run([binary, *args], cwd=repo, capture_output=True, text=True)
            for stream, text in (("out", p.stdout), ("err", p.stderr)):
                with open(os.path.join(d, f"cmd{k}.{stream}"), "w") as f:
                    f.write(text.replace(d, "DIR"))
            with open(os.path.join(d, f"cmd{k}.rc"), "w") as f:
                f.write(f"{p.returncode}\n")


def norm_text(text):
    out, col, width = [], None, 0
    for l in text.split("\n"):
        if DROP_LINE.search(l):
            continue
        words = l.split()
        # A table with a `seconds` column (the sweep's summary): that
        # column masked in its rows, until the table ends.
        if "seconds" in words:
            col, width = words.index("seconds"), len(words)
        elif not words:
            col = None
        elif col is not None and len(words) == width:
            words[col] = "#"
            l = " ".join(words)
        out.append(SECONDS.sub("# s", l))
    return "\n".join(out)


def norm_json(v):
    if isinstance(v, dict):
        return {k: norm_json(x) for k, x in v.items() if not TIMING.search(k)}
    if isinstance(v, list):
        return [norm_json(x) for x in v]
    return v


def load(path):
    if path.endswith(".parquet"):
        import pyarrow.parquet as pq

        t = pq.read_table(path)
        keep = [c for c in t.column_names if not TIMING.search(c)]
        return ("parquet", t.select(keep).to_pylist())
    data = open(path, "rb").read()
    if path.endswith((".out", ".err")):
        text = data.decode("utf-8", "replace")
        try:
            return ("json", norm_json(json.loads(text)))
        except ValueError:
            return ("text", norm_text(text))
    if path.endswith(".json"):
        try:
            return ("json", norm_json(json.loads(data)))
        except ValueError:
            pass
    return ("bytes", data)


def files(root):
    """Every output file but lock files (they hold the writer's pid)."""
    out = set()
    for dp, _, fs in os.walk(root):
        for f in fs:
            if not f.startswith(".lock-"):
                out.add(os.path.relpath(os.path.join(dp, f), root))
    return out


def main():
    args = sys.argv[1:]
    keep = None
    if "--keep" in args:
        i = args.index("--keep")
        keep = args[i + 1]
        del args[i : i + 2]
    if len(args) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    repo = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    base = keep or tempfile.mkdtemp(prefix="tagger-compare-")
    a, b = os.path.join(base, "old"), os.path.join(base, "new")
    bins = []
    for d, given in ((a, args[0]), (b, args[1])):
        shutil.rmtree(d, ignore_errors=True)
        shutil.rmtree(d + "-bin", ignore_errors=True)
        # Both named `tagger`: `--help` prints the program's name.
        os.makedirs(d + "-bin")
        os.symlink(os.path.abspath(given), os.path.join(d + "-bin", "tagger"))
        bins.append(os.path.join(d + "-bin", "tagger"))
    run_all(bins[0], a, repo)
    run_all(bins[1], b, repo)
    for d in (a, b):
        shutil.rmtree(d + "-bin", ignore_errors=True)
    fa, fb = files(a), files(b)
    diffs = [f"only in the old build's outputs: {f}" for f in sorted(fa - fb)]
    diffs += [f"only in the new build's outputs: {f}" for f in sorted(fb - fa)]
    for f in sorted(fa & fb):
        if load(os.path.join(a, f)) != load(os.path.join(b, f)):
            diffs.append(f"differs: {f}")
    n = len(scenarios())
    for d in diffs:
        print(d)
    print(f"{n} scenarios, {len(fa)} files: {len(diffs)} differences (outputs in {base})")
    if not keep and not diffs:
        shutil.rmtree(base, ignore_errors=True)
    sys.exit(1 if diffs else 0)


if __name__ == "__main__":
    main()
