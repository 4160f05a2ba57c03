#!/usr/bin/env python3
# /// script
# requires-python = ">=3.9"
# dependencies = ["duckdb>=1.0"]
# ///
"""Checks a sweep directory the way a user's DuckDB session would see it:
both tables readable, the documented columns present with real types, every
scenario verified. Exit status 0 when all holds. Used by .ci/run.

    python3 scripts/check_sweep.py sweep-out
"""
import sys
from pathlib import Path

import duckdb

RUNS = {
    "sweep": "VARCHAR", "scenario_id": "UBIGINT", "group": "VARCHAR", "trial": "UBIGINT",
    "seed": "UBIGINT", "topology": "VARCHAR", "family": "VARCHAR", "elp": "VARCHAR",
    "algo": "VARCHAR", "cycle": "VARCHAR", "switches": "UBIGINT", "servers": "UBIGINT",
    "hosts": "UBIGINT", "links": "UBIGINT", "endpoints": "UBIGINT", "paths": "UBIGINT",
    "longest_elp": "UINTEGER", "priorities": "UINTEGER",
    "priorities_lower_bound": "UINTEGER", "priorities_optimal": "BOOLEAN",
    "search_steps": "UBIGINT", "search_residue": "UBIGINT", "search_stopped_early": "BOOLEAN", "proof_paths": "UBIGINT", "acl_exact_total": "UBIGINT",
    "acl_exact_max": "UBIGINT", "acl_exact_p50": "UBIGINT", "acl_exact_p99": "UBIGINT",
    "acl_compressed_total": "UBIGINT", "acl_compressed_max": "UBIGINT",
    "rules_total": "UBIGINT", "rules_max": "UBIGINT", "rules_p50": "UBIGINT",
    "rules_p99": "UBIGINT", "headroom_max_bytes": "UBIGINT", "dscp_conflicts": "UBIGINT", "verified": "BOOLEAN", "status": "VARCHAR", "error": "VARCHAR",
    "seconds_generate": "DOUBLE", "seconds_elp": "DOUBLE", "seconds_tag": "DOUBLE",
    "seconds_rules": "DOUBLE", "seconds_verify": "DOUBLE", "seconds_total": "DOUBLE",
    "memory_budget_bytes": "UBIGINT", "memory_estimate_bytes": "UBIGINT",
    "peak_rss_bytes": "UBIGINT", "threads": "UBIGINT", "version": "VARCHAR",
}
SWITCHES = {
    "scenario_id": "UBIGINT", "node": "UINTEGER", "kind": "VARCHAR", "level": "UINTEGER",
    "degree": "UINTEGER", "hosts": "UINTEGER", "acl_exact": "UBIGINT",
    "acl_compressed": "UBIGINT", "queue_rules": "UBIGINT", "rules": "UBIGINT",
    "priorities": "UINTEGER",
}


def check(con, path: Path, want: dict) -> list:
    got = dict(con.execute("SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM read_parquet(?))", [str(path)]).fetchall())
    errors = [f"{path.name}: missing column {c}" for c in want if c not in got]
    errors += [f"{path.name}: column {c} is {got[c]}, expected {t}" for c, t in want.items() if c in got and got[c] != t]
    return errors


def main() -> int:
    d = Path(sys.argv[1])
    con = duckdb.connect()
    errors = check(con, d / "runs.parquet", RUNS) + check(con, d / "switches.parquet", SWITCHES)
    n, ok, verified = con.execute(
        "SELECT count(*), count(*) FILTER (status = 'ok'), count(*) FILTER (verified) FROM read_parquet(?)",
        [str(d / "runs.parquet")],
    ).fetchone()
    nodes = con.execute(
        "SELECT count(*) FROM read_parquet(?) s JOIN read_parquet(?) r USING (scenario_id)",
        [str(d / "switches.parquet"), str(d / "runs.parquet")],
    ).fetchone()[0]
    meta = {k.decode(): v for k, v in con.execute("SELECT key, value FROM parquet_kv_metadata(?)", [str(d / "runs.parquet")]).fetchall()}
    if n == 0:
        errors.append("runs.parquet has no rows")
    if ok != n or verified != n:
        errors.append(f"{n - ok} scenarios failed, {n - verified} unverified")
    if nodes == 0:
        errors.append("switches.parquet has no rows joining runs.parquet")
    for key in ("tagger.spec", "tagger.version"):
        if key not in meta:
            errors.append(f"runs.parquet metadata lacks {key}")
    for e in errors:
        print("check_sweep:", e, file=sys.stderr)
    print(f"check_sweep: {n} runs ({ok} ok, {verified} verified), {nodes} switch rows, {len(errors)} problems")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
