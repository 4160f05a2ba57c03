#!/usr/bin/env python3
# /// script
# requires-python = ">=3.9"
# dependencies = ["duckdb>=1.0"]
# ///
"""Checks a sweep directory the way a user's DuckDB session would see it:
every table readable (failures.parquet and growth.parquet when present), with exactly the columns
`tagger schema` documents,
in order and with their types, and every scenario verified. Exit status 0
when all holds. Used by .ci/run.

    python3 scripts/check_sweep.py sweep-out [--tagger target/release/tagger]
"""
import argparse
import json
import subprocess
import sys
from pathlib import Path

try:
    import duckdb
except ImportError:
    sys.exit(f"{Path(__file__).name} needs duckdb: pip install -r scripts/requirements.txt")

# `tagger schema` types as DuckDB reads them from Parquet.
DUCKDB = {"string": "VARCHAR", "u64": "UBIGINT", "u32": "UINTEGER", "i64": "BIGINT", "f64": "DOUBLE", "bool": "BOOLEAN"}


def schema(tagger: str) -> dict:
    """{file name: [(column, DuckDB type)]} from `tagger schema --format json`."""
    out = subprocess.run([tagger, "schema", "--format", "json"], check=True, capture_output=True, text=True).stdout
    return {f: [(c["name"], DUCKDB[c["type"]]) for c in cols] for f, cols in json.loads(out).items()}


def check(con, path: Path, want: list) -> list:
    got = con.execute("SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM read_parquet(?))", [str(path)]).fetchall()
    if got == want:
        return []
    errors = [f"{path.name}: missing column {c} {t}" for c, t in want if (c, t) not in got]
    errors += [f"{path.name}: unexpected column {c} {t}" for c, t in got if (c, t) not in want]
    if not errors:
        errors.append(f"{path.name}: columns out of order: {[c for c, _ in got]}")
    return errors


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir", type=Path)
    ap.add_argument("--tagger", default=str(Path(__file__).resolve().parent.parent / "target/release/tagger"))
    args = ap.parse_args()
    d = args.dir
    want = schema(args.tagger)
    con = duckdb.connect()
    errors = check(con, d / "runs.parquet", want["runs.parquet"]) + check(con, d / "switches.parquet", want["switches.parquet"])
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
    # A sweep with failures: its trials join their runs, and every trial,
    # and every run's aggregate, verified.
    trials = 0
    fp = d / "failures.parquet"
    if fp.exists():
        errors += check(con, fp, want["failures.parquet"])
        trials, joined, bad = con.execute(
            "SELECT count(*), count(r.scenario_id), count(*) FILTER (NOT f.verified) FROM read_parquet(?) f LEFT JOIN read_parquet(?) r USING (scenario_id)",
            [str(fp), str(d / "runs.parquet")],
        ).fetchone()
        want_trials = con.execute(
            "SELECT coalesce(sum(failures_trials), 0) FROM read_parquet(?)", [str(d / "runs.parquet")]
        ).fetchone()[0]
        if trials != joined:
            errors.append(f"{trials - joined} failure trials join no run")
        if trials != want_trials:
            errors.append(f"failures.parquet has {trials} trials, runs.parquet counts {want_trials}")
        if bad:
            errors.append(f"{bad} failure trials not verified")
    # A sweep with growth paths: every step joins its run, steps count
    # from 1 without gaps, and every step verified, at no fewer
    # priorities than its proven bound.
    steps = 0
    gp = d / "growth.parquet"
    if gp.exists():
        errors += check(con, gp, want["growth.parquet"])
        steps, joined, bad, below = con.execute(
            "SELECT count(*), count(r.scenario_id), count(*) FILTER (NOT g.growth_verified), "
            "count(*) FILTER (g.growth_priorities < g.growth_lower_bound) "
            "FROM read_parquet(?) g LEFT JOIN read_parquet(?) r USING (scenario_id)",
            [str(gp), str(d / "runs.parquet")],
        ).fetchone()
        gaps = con.execute(
            "SELECT count(*) FROM (SELECT scenario_id, max(growth_step) AS m, count(*) AS c "
            "FROM read_parquet(?) GROUP BY scenario_id) WHERE m != c",
            [str(gp)],
        ).fetchone()[0]
        # The extension's local search: a known outcome, a proof count
        # exactly with 'forced', and 'kept' only when the step kept the
        # plan's priorities from before it (the run's, at step 1).
        odd, unkept = con.execute(
            "SELECT count(*) FILTER (growth_reorder NOT IN ('kept', 'forced', 'stalled', 'budget', 'stopped', 'skipped') "
            "  OR (growth_reorder = 'forced') != (growth_forced_paths IS NOT NULL)), "
            "count(*) FILTER (growth_reorder = 'kept' AND growth_priorities != before) "
            "FROM (SELECT g.*, coalesce(lag(g.growth_priorities) OVER (PARTITION BY scenario_id ORDER BY growth_step), "
            "  r.priorities) AS before "
            "  FROM read_parquet(?) g JOIN read_parquet(?) r USING (scenario_id))",
            [str(gp), str(d / "runs.parquet")],
        ).fetchone()
        # A step that moved to the near plan has its priorities and churn.
        astray = con.execute(
            "SELECT count(*) FILTER (growth_near_taken AND (growth_near_priorities IS DISTINCT FROM growth_priorities "
            "  OR growth_near_churn_entries IS DISTINCT FROM growth_churn_entries)) FROM read_parquet(?)",
            [str(gp)],
        ).fetchone()[0]
        if astray:
            errors.append(f"{astray} growth steps moved to the near plan but report another plan")
        if odd:
            errors.append(f"{odd} growth steps with an unknown reorder outcome or a proof count without a proof")
        if unkept:
            errors.append(f"{unkept} growth steps say the search kept the priorities but did not")
        if steps == 0:
            errors.append("growth.parquet has no rows")
        if steps != joined:
            errors.append(f"{steps - joined} growth steps join no run")
        if bad:
            errors.append(f"{bad} growth steps not verified")
        if below:
            errors.append(f"{below} growth steps below their lower bound")
        if gaps:
            errors.append(f"{gaps} scenarios' growth steps are not 1..n")
    for e in errors:
        print("check_sweep:", e, file=sys.stderr)
    extra = f", {trials} failure trials" if fp.exists() else ""
    extra += f", {steps} growth steps" if gp.exists() else ""
    print(f"check_sweep: {n} runs ({ok} ok, {verified} verified), {nodes} switch rows{extra}, {len(errors)} problems")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
