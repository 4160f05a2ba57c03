#!/usr/bin/env python3
# /// script
# requires-python = ">=3.9"
# dependencies = ["duckdb>=1.0"]
# ///
"""Paper-style summary of a sweep's runs.parquet.

Prints one line per (topology grid point, ELP, algorithm): switches, ports,
longest ELP, lossless priorities, their proven lower bound ("LB", the
smallest over trials) and how many trials are proven optimal ("opt"), and
max rules per switch, as medians over trials, plus failures. Reads a file or a directory of shard files.

    python3 scripts/summarize.py sweep-out/runs.parquet
    uv run scripts/summarize.py sweep-out            # a directory works too
"""
import signal
import sys
from pathlib import Path

import duckdb

# Exit quietly when the reader goes away (`... | head`).
signal.signal(signal.SIGPIPE, signal.SIG_DFL)


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    target = Path(sys.argv[1])
    pattern = str(target / "*runs*.parquet") if target.is_dir() else str(target)
    con = duckdb.connect()
    rows = con.execute(
        """
        SELECT topology_grid,
               elp,
               algo,
               count(*)                                             AS runs,
               sum(CASE WHEN status = 'failed' THEN 1 ELSE 0 END)    AS failed,
               median(switches)                                      AS switches,
               max(regexp_extract(topology_grid, 'ports=([0-9]+)', 1)) AS ports,
               median(longest_elp)                                   AS longest_elp,
               median(priorities)                                    AS priorities,
               max(priorities)                                       AS priorities_max,
               min(priorities_lower_bound)                           AS bound,
               sum(CASE WHEN priorities_optimal THEN 1 ELSE 0 END)   AS optimal,
               median(rules_max)                                     AS rules_max,
               median(seconds_total)                                 AS seconds
        FROM read_parquet(?)
        GROUP BY ALL
        ORDER BY min(scenario_id)
        """,
        [pattern],
    ).fetchall()
    header = f"{'topology':<34} {'elp':<22} {'algo':<10} {'runs':>4} {'fail':>4} {'switches':>8} {'ports':>5} {'longest':>7} {'P':>4} {'P max':>5} {'LB':>3} {'opt':>4} {'rules_max':>9} {'seconds':>8}"
    print(header)
    print("-" * len(header))
    for topo, elp, algo, runs, failed, sw, ports, longest, p, pmax, lb, opt, rmax, secs in rows:
        fmt = lambda x, d=0: "-" if x is None else f"{x:.{d}f}"
        print(
            f"{topo[:34]:<34} {elp[:22]:<22} {algo[:10]:<10} {runs:>4} {failed:>4} {fmt(sw):>8} {ports or '-':>5} "
            f"{fmt(longest):>7} {fmt(p):>4} {fmt(pmax):>5} {fmt(lb):>3} {opt or 0:>4} {fmt(rmax):>9} {fmt(secs, 3):>8}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
