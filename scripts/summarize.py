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

When the sweep varies the switch profile or the cable length (or with
--capacity), a second table shows how each plan fits each switch model:
the application classes (M), one class's priorities (P) and the lossless
queues the classes share (Q), priorities at the busiest switch, its
headroom, the smallest buffer margin,
switches over their buffer or lossless queues, and the longest
switch-to-switch cable at which every switch fits.

    python3 scripts/summarize.py sweep-out/runs.parquet
    uv run scripts/summarize.py sweep-out            # a directory works too
    python3 scripts/summarize.py sweep-out --capacity

When the sweep ran failure what-ifs (`failures`), a third table shows, per
plan, failure spec and routing model, how often plain PFC would deadlock
and how much traffic the installed Tagger rules keep lossless.
"""
import signal
import sys
from pathlib import Path

try:
    import duckdb
except ImportError:
    sys.exit(f"{Path(__file__).name} needs duckdb: pip install -r scripts/requirements.txt")

# Exit quietly when the reader goes away (`... | head`).
signal.signal(signal.SIGPIPE, signal.SIG_DFL)


def main() -> int:
    args = [a for a in sys.argv[1:] if a != "--capacity"]
    if len(args) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    target = Path(args[0])
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
    fmt = lambda x, d=0: "-" if x is None else f"{x:.{d}f}"
    table(
        ["topology", "elp", "algo", "runs", "fail", "switches", "ports", "longest", "P", "P max", "LB", "opt", "rules_max", "seconds"],
        [
            [topo, elp, algo, runs, failed, fmt(sw), ports or "-", fmt(longest), fmt(p), fmt(pmax), fmt(lb), opt or 0, fmt(rmax), fmt(secs, 3)]
            for topo, elp, algo, runs, failed, sw, ports, longest, p, pmax, lb, opt, rmax, secs in rows
        ],
        left=3,
    )
    settings = con.execute(
        "SELECT count(DISTINCT (switch_profile, cable_m, port_speed_gbps, headroom_model, classes)) FROM read_parquet(?)",
        [pattern],
    ).fetchone()[0]
    if settings > 1 or "--capacity" in sys.argv:
        capacity(con, pattern)
    cols = {r[0] for r in con.execute("DESCRIBE SELECT * FROM read_parquet(?)", [pattern]).fetchall()}
    if "failures_spec" in cols and con.execute(
        "SELECT count(failures_spec) FROM read_parquet(?)", [pattern]
    ).fetchone()[0]:
        failures(con, pattern)
    return 0


def failures(con, pattern: str) -> None:
    """One line per (topology, plan, failures, routing): the share of trials
    where plain PFC has a cyclic buffer dependency, and the share of routes
    (median and worst trial) and of endpoint pairs (worst trial) that the
    installed Tagger rules keep lossless; the priorities of the plan, of the
    most demanding replanned trial, and of the failure-aware plan."""
    rows = con.execute(
        """
        SELECT topology_grid, elp, algo, failures_spec, failures_routing,
               max(priorities), sum(failures_trials),
               avg(failures_cbd_rate), median(failures_lossless_paths_median),
               min(failures_lossless_paths_min), min(failures_lossless_pairs_min),
               max(failures_replanned_priorities_max), max(failures_aware_priorities),
               bool_and(failures_verified)
        FROM read_parquet(?)
        WHERE failures_spec IS NOT NULL
        GROUP BY ALL
        ORDER BY min(scenario_id)
        """,
        [pattern],
    ).fetchall()
    print()
    pct = lambda x: "-" if x is None else f"{int(x * 10000) / 100:.2f}"
    num = lambda x: "-" if x is None else str(x)
    table(
        ["topology", "elp", "algo", "failures", "routing", "P", "trials", "CBD %", "lossless %", "min %", "pairs min %", "replan P", "aware P", "ok"],
        [
            [topo, elp, algo, spec, routing, p, trials, f"{cbd * 100:.0f}", pct(med), pct(mn), pct(pairs), num(repl), num(aware), "yes" if ok else "NO"]
            for topo, elp, algo, spec, routing, p, trials, cbd, med, mn, pairs, repl, aware, ok in rows
        ],
        left=5,
    )


def capacity(con, pattern: str) -> None:
    rows = con.execute(
        """
        SELECT topology_grid, elp, algo, switch_profile, cable_m, classes,
               median(priorities)                 AS p,
               max(queues_shared)                 AS shared,
               max(priorities_per_switch_max)     AS p_switch,
               max(lossless_queues)               AS queues,
               max(headroom_total_max_bytes)      AS headroom,
               min(buffer_margin_min_bytes)       AS margin,
               max(switches_over_buffer)          AS over_buffer,
               max(switches_over_queues)          AS over_queues,
               min(max_cable_m_fit)               AS max_cable,
               count(*) FILTER (status = 'failed') AS failed
        FROM read_parquet(?)
        GROUP BY ALL
        ORDER BY min(scenario_id)
        """,
        [pattern],
    ).fetchall()
    print()
    mib = lambda x: "-" if x is None else f"{x / 2**20:.1f}"
    body = []
    for topo, elp, algo, sw, cable, m, p, shared, psw, q, head, margin, ob, oq, mc, failed in rows:
        if failed:
            body.append([topo, elp, algo, sw or "-", "failed"] + [""] * 10)
            continue
        cable_fit = "-" if mc is None else ("any" if mc >= 100000 else f"{mc:.1f}")
        body.append([topo, elp, algo, sw, f"{cable:.0f}", m, f"{p:.0f}", shared, psw, q, mib(head), mib(margin), ob, oq, cable_fit])
    table(
        ["topology", "elp", "algo", "switch", "cable m", "M", "P", "Q", "P/sw", "queues", "headroom MiB", "margin MiB", "over buf", "over q", "max cable m"],
        body,
        left=4,
    )


def table(header: list, rows: list, left: int) -> None:
    """Prints rows under a header and a rule, every column as wide as its
    widest cell (labels are never cut); the first `left` columns are
    left-aligned, the rest right-aligned."""
    cells = [[str(c) for c in r] for r in [header] + rows]
    width = [max(len(r[i]) for r in cells) for i in range(len(header))]
    lines = [
        " ".join(c.ljust(width[i]) if i < left else c.rjust(width[i]) for i, c in enumerate(r)).rstrip()
        for r in cells
    ]
    print(lines[0])
    print("-" * len(lines[0]))
    for line in lines[1:]:
        print(line)


if __name__ == "__main__":
    sys.exit(main())
