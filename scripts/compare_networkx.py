#!/usr/bin/env python3
# /// script
# requires-python = ">=3.9"
# dependencies = ["networkx>=3.0"]
# ///
"""Times networkx on the work the engine's first stages do, in one run:

1. generation: networkx's random_regular_graph(r, n) against the engine's
   Jellyfish generator (same n and r);
2. all-shortest-path counting between endpoints: networkx's BFS with path
   counts (the routine behind betweenness centrality) from every node of the
   engine's own graph (exported as an edge list), against `tagger elp
   --elp shortest`, which builds the per-source shortest-path DAGs and counts.

The path totals must agree exactly; the script fails if they do not. Prints
each time and the engine/networkx ratio.

    cargo build --release
    python3 scripts/compare_networkx.py --n 1000 --ports 64 --r 12
"""
import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import networkx as nx
from networkx.algorithms.centrality.betweenness import _single_source_shortest_path_basic


def tagger(binary: str, *args: str) -> str:
    return subprocess.run([binary, *args], check=True, capture_output=True, text=True).stdout


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--ports", type=int, default=64)
    ap.add_argument("--r", type=int, default=12)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--tagger", default=str(Path(__file__).resolve().parent.parent / "target/release/tagger"))
    a = ap.parse_args()
    spec = f"jellyfish:n={a.n},ports={a.ports},r={a.r},seed={a.seed}"

    with tempfile.TemporaryDirectory() as d:
        edges = Path(d) / "g.txt"
        out = tagger(a.tagger, "topo", spec, "--format", "edgelist", "--out", str(edges))
        engine_gen = float(re.search(r"seconds\s+build ([0-9.]+)", out).group(1))
        elp = json.loads(tagger(a.tagger, "elp", spec, "--elp", "shortest", "--json"))
        engine_count = elp["seconds"]["build"] + elp["seconds"]["count"]
        G = nx.read_edgelist(edges, nodetype=int)

    t = time.perf_counter()
    nx.random_regular_graph(a.r, a.n, seed=a.seed)
    nx_gen = time.perf_counter() - t

    t = time.perf_counter()
    total = 0
    for s in G.nodes:
        _, _, sigma, _ = _single_source_shortest_path_basic(G, s)
        total += sum(int(v) for k, v in sigma.items() if k != s)
    nx_count = time.perf_counter() - t

    if total != elp["paths"]:
        print(f"MISMATCH: networkx counts {total} shortest paths, tagger {elp['paths']}", file=sys.stderr)
        return 1
    print(f"{spec}: {total} shortest paths between {a.n * (a.n - 1)} ordered endpoint pairs (both agree)")
    print(f"{'stage':<34} {'tagger s':>10} {'networkx s':>11} {'networkx/tagger':>16}")
    for name, e, n in [
        ("generate random regular graph", engine_gen, nx_gen),
        ("count all shortest paths", engine_count, nx_count),
    ]:
        print(f"{name:<34} {e:>10.4f} {n:>11.3f} {n / max(e, 1e-9):>15.0f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
