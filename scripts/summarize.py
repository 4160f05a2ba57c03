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

import duckdb

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
    header = f"{'topology':<34} {'elp':<22} {'algo':<10} {'runs':>4} {'fail':>4} {'switches':>8} {'ports':>5} {'longest':>7} {'P':>4} {'P max':>5} {'LB':>3} {'opt':>4} {'rules_max':>9} {'seconds':>8}"
    print(header)
    print("-" * len(header))
    for topo, elp, algo, runs, failed, sw, ports, longest, p, pmax, lb, opt, rmax, secs in rows:
        fmt = lambda x, d=0: "-" if x is None else f"{x:.{d}f}"
        print(
            f"{topo[:34]:<34} {elp[:22]:<22} {algo[:10]:<10} {runs:>4} {failed:>4} {fmt(sw):>8} {ports or '-':>5} "
            f"{fmt(longest):>7} {fmt(p):>4} {fmt(pmax):>5} {fmt(lb):>3} {opt or 0:>4} {fmt(rmax):>9} {fmt(secs, 3):>8}"
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
    header = (f"{'topology':<38} {'elp':<10} {'algo':<7} {'failures':<28} {'routing':<9} {'P':>2} {'trials':>6} "
              f"{'CBD %':>6} {'lossless %':>10} {'min %':>7} {'pairs min %':>11} {'replan P':>8} {'aware P':>7} {'ok':>3}")
    print(header)
    print("-" * len(header))
    pct = lambda x: "-" if x is None else f"{int(x * 10000) / 100:.2f}"
    num = lambda x: "-" if x is None else str(x)
    for topo, elp, algo, spec, routing, p, trials, cbd, med, mn, pairs, repl, aware, ok in rows:
        print(
            f"{topo[:38]:<38} {elp[:10]:<10} {algo[:7]:<7} {spec[:28]:<28} {routing:<9} {p:>2} {trials:>6} "
            f"{cbd * 100:>6.0f} {pct(med):>10} {pct(mn):>7} {pct(pairs):>11} {num(repl):>8} {num(aware):>7} {'yes' if ok else 'NO':>3}"
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
    header = (f"{'topology':<34} {'elp':<10} {'algo':<8} {'switch':<11} {'cable m':>7} {'M':>2} {'P':>3} {'Q':>3} {'P/sw':>4} "
              f"{'queues':>6} {'headroom MiB':>12} {'margin MiB':>10} {'over buf':>8} {'over q':>6} {'max cable m':>11}")
    print(header)
    print("-" * len(header))
    mib = lambda x: "-" if x is None else f"{x / 2**20:.1f}"
    for topo, elp, algo, sw, cable, m, p, shared, psw, q, head, margin, ob, oq, mc, failed in rows:
        if failed:
            print(f"{topo[:34]:<34} {elp[:10]:<10} {algo[:8]:<8} {sw[:11] if sw else '-':<11} {'failed':>7}")
            continue
        cable_fit = "-" if mc is None else ("any" if mc >= 100000 else f"{mc:.1f}")
        print(
            f"{topo[:34]:<34} {elp[:10]:<10} {algo[:8]:<8} {sw[:11]:<11} {cable:>7.0f} {m:>2} {p:>3.0f} {shared:>3} {psw:>4} "
            f"{q:>6} {mib(head):>12} {mib(margin):>10} {ob:>8} {oq:>6} {cable_fit:>11}"
        )


if __name__ == "__main__":
    sys.exit(main())
