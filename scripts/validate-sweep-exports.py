#!/usr/bin/env python3
"""Exports every verified plan of a sweep to SONiC and validates each export
against SONiC's YANG models (scripts/validate-sonic.py), checking that none
holds an ACL table; reads every export back (SONiC and neutral).

    python3 scripts/validate-sweep-exports.py SWEEP_DIR [--yang DIR] [--tagger PATH] [--jobs N]

Each `ok` row of SWEEP_DIR/runs.parquet is planned again with `tagger run`
(its topology, ELP, algorithm, switch profile, cable, speed, headroom model,
application classes and traffic-class limit, so the plan is the row's) and
exported with `--export sonic:DIR --require-fit off` (the question here is
what SONiC accepts, not whether the buffers fit). A plan that needs more
traffic classes than the switch has, or more priorities than it has queues,
cannot be exported to SONiC at all: those rows are counted as skipped, with
the reason. Every plan is also exported as the neutral table (`tagger export
--format json`), and both exports are read back with `tagger verify
--exported` (every packet at every switch, the row's ELP replayed). Exit 0
when every export was written, valid and read back; 1 naming each row that
was not. Needs duckdb (scripts/requirements.txt) and yanglint.
"""
import argparse
import concurrent.futures
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def rows(sweep: Path):
    try:
        import duckdb
    except ImportError:
        sys.exit("validate-sweep-exports.py needs duckdb: pip install -r scripts/requirements.txt")
    q = f"""
        SELECT scenario_id, topology, elp, algo, cycle, switch_profile, cable_m,
               port_speed_gbps, headroom_model, classes, max_tcs, switches_over_tcs
        FROM read_parquet('{sweep / "runs.parquet"}')
        WHERE status = 'ok' ORDER BY scenario_id"""
    return duckdb.sql(q).fetchall()


def one(tagger: str, out: Path, yang, row):
    (sid, topo, elp, algo, cycle, profile, cable, speed, headroom, classes, max_tcs, over) = row
    d = out / str(sid)
    topo_file, rules_file = out / f"{sid}.topology.json", out / f"{sid}.rules.json"
    switch = [
        "--switch", profile, "--cable-m", repr(cable), "--speed-gbps", repr(speed),
        "--headroom", headroom,
    ]
    args = [
        tagger, "run", topo, "--elp", elp, "--algo", algo, "--cycle", cycle, *switch,
        "--classes", str(classes), "--max-tcs", "none" if max_tcs is None else str(max_tcs),
        "--topology-out", str(topo_file), "--rules-out", str(rules_file),
    ]
    if not over:
        args += ["--export", f"sonic:{d}", "--require-fit", "off"]
    r = subprocess.run(args, capture_output=True, text=True)
    skipped = None
    if over:
        skipped = f"{over} switches need more traffic classes than the switch has"
    elif r.returncode != 0:
        msg = (r.stderr or r.stdout).strip().splitlines()[-1:]
        msg = msg[0] if msg else f"exit {r.returncode}"
        if ("has no queue" not in msg and "more traffic classes" not in msg) or not rules_file.exists():
            return sid, "failed", f"tagger run: {msg}"
        skipped = msg

    def verify(directory: Path, what: str):
        # The read-back: what every switch does to every packet, judged
        # over the whole fabric, with the ELP replayed. Exported with
        # --require-fit off, a switch may have fewer lossless queues than
        # the plan's priorities: the fit is not the question here.
        v = subprocess.run(
            [tagger, "verify", str(topo_file), "--exported", str(directory), "--elp", elp,
             "--max-priorities", "8"],
            capture_output=True, text=True,
        )
        if v.returncode != 0:
            return f"verify --exported of the {what} export: {(v.stderr or v.stdout).strip()[:2000]}"
        return None

    # The neutral table expresses every plan, within the classes or not.
    n = out / f"{sid}.json"
    e = subprocess.run(
        [tagger, "export", str(topo_file), "--rules", str(rules_file), "--format", "json",
         "--out", str(n), *switch],
        capture_output=True, text=True,
    )
    if e.returncode != 0:
        return sid, "failed", f"tagger export --format json: {(e.stderr or e.stdout).strip()[:2000]}"
    why = verify(n, "neutral")
    if why:
        return sid, "failed", why
    if skipped:
        return sid, "skipped", skipped
    for f in d.glob("*.json"):
        if "ACL_" in f.read_text():
            return sid, "failed", f"{f.name} holds an ACL table"
    v = [sys.executable, str(HERE / "validate-sonic.py"), str(d)]
    if yang:
        v += ["--yang", str(yang)]
    r = subprocess.run(v, capture_output=True, text=True)
    if r.returncode != 0:
        return sid, "failed", (r.stderr or r.stdout).strip()[:2000]
    why = verify(d, "SONiC")
    if why:
        return sid, "failed", why
    return sid, "valid", r.stdout.strip().splitlines()[-1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sweep", type=Path)
    ap.add_argument("--yang", type=Path, help="model directory (default: validate-sonic.py's)")
    ap.add_argument("--tagger", default=str(ROOT / "target" / "release" / "tagger"))
    ap.add_argument("--jobs", type=int, default=2)
    a = ap.parse_args()
    todo = rows(a.sweep)
    counts = {"valid": 0, "skipped": 0, "failed": 0}
    with tempfile.TemporaryDirectory() as tmp:
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as pool:
            done = pool.map(lambda r: one(a.tagger, Path(tmp), a.yang, r), todo)
            for sid, status, why in done:
                counts[status] += 1
                if status == "failed":
                    print(f"scenario {sid}: {why}", file=sys.stderr)
                elif status == "skipped":
                    print(f"scenario {sid}: skipped: {why}")
    print(
        f"{a.sweep}: {counts['valid']} exports valid against SONiC's models, "
        f"{counts['skipped']} plans not exportable to SONiC, {counts['failed']} failed "
        f"(each plan's neutral export and each SONiC export read back with verify --exported)"
    )
    return 1 if counts["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
