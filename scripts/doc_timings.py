#!/usr/bin/env python3
"""The run times the documentation quotes, measured: every "how long does
this take" in README.md and docs/ that is not a benchmark figure comes from
here, with the machine and the date beside it (docs/timings.md).

    cargo build --release
    python3 scripts/doc_timings.py                    # writes docs/timings.md
    python3 scripts/doc_timings.py --out target/t.md  # CI: measure, write elsewhere
    python3 scripts/doc_timings.py --long             # also datasets/failures.toml (long)

Each command runs once, in a fresh temporary directory, from the
repository's root; its wall time is what the table says. A command that
fails stops the script (exit 1) naming it. Standard library only.
"""

import argparse
import datetime
import os
import platform
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def example_spec():
    """The sweep spec docs/formats.md tells the reader to save as example.toml."""
    text = open(os.path.join(ROOT, "docs", "formats.md"), encoding="utf-8").read()
    m = re.search(r"```toml file:example.toml\n(.*?)```", text, re.S)
    if not m:
        sys.exit("doc_timings.py: docs/formats.md has no example.toml block")
    return m.group(1)


def commands(tagger, long):
    """(what, where the docs quote it, argv, env, files to write first)."""
    out = [
        ("the built-in sweep (`tagger sweep`)", "README.md", [tagger, "sweep", "--out", "o"], {}, {}),
        (
            "`tagger sweep datasets/capacity.toml`",
            "docs/guide.md (capacity planning)",
            [tagger, "sweep", os.path.join(ROOT, "datasets", "capacity.toml"), "--out", "o"],
            {},
            {},
        ),
        (
            "`tagger sweep example.toml` (the spec in formats.md)",
            "docs/formats.md (sweep spec)",
            [tagger, "sweep", "example.toml", "--out", "o"],
            {},
            {"example.toml": example_spec()},
        ),
        (
            "`tagger sweep datasets/growth.toml`",
            "docs/update.md (growth paths)",
            [tagger, "sweep", os.path.join(ROOT, "datasets", "growth.toml"), "--out", "o"],
            {},
            {},
        ),
        (
            "`tagger failures fattree:k=32 --elp kbounce:1 --algo clos --fail links:1,trials=10 --no-replan --no-aware` (10 trials, one routing model)",
            "docs/model.md (failure what-if)",
            [
                tagger, "failures", "fattree:k=32", "--elp", "kbounce:1", "--algo", "clos",
                "--fail", "links:1,trials=10", "--no-replan", "--no-aware",
            ],
            {},
            {},
        ),
        (
            "`PROPTEST_CASES=100000 cargo test --release --test fuzz_parsers` (built already)",
            "docs/reliability.md (parsers never panic)",
            ["cargo", "test", "--release", "--quiet", "--test", "fuzz_parsers"],
            {"PROPTEST_CASES": "100000"},
            {},
        ),
    ]
    if long:
        out.append(
            (
                "`tagger sweep datasets/failures.toml`",
                "docs/guide.md (failure what-if)",
                [tagger, "sweep", os.path.join(ROOT, "datasets", "failures.toml"), "--out", "o"],
                {},
                {},
            )
        )
    return out


def machine():
    cpu = platform.processor() or "unknown CPU"
    try:
        for line in open("/proc/cpuinfo", encoding="utf-8"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{os.cpu_count()} cores ({cpu}), {platform.system()} {platform.release()}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tagger", default=os.path.join(ROOT, "target", "release", "tagger"))
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "timings.md"))
    ap.add_argument("--long", action="store_true", help="also the failure sweep (far longer than the rest)")
    a = ap.parse_args()
    tagger = os.path.abspath(a.tagger)
    if not os.access(tagger, os.X_OK):
        sys.exit(f"doc_timings.py: {tagger} is not built (cargo build --release)")
    rows = []
    for what, where, argv, env, files in commands(tagger, a.long):
        with tempfile.TemporaryDirectory() as d:
            for name, text in files.items():
                with open(os.path.join(d, name), "w", encoding="utf-8") as f:
                    f.write(text)
            cwd = ROOT if argv[0] == "cargo" else d
            t0 = time.monotonic()
            p = subprocess.run(
                argv, cwd=cwd, env={**os.environ, **env}, stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE, text=True,
            )
            secs = time.monotonic() - t0
        if p.returncode != 0:
            sys.exit(f"doc_timings.py: {what} failed (exit {p.returncode}):\n{p.stderr[-2000:]}")
        print(f"{secs:8.1f} s  {what}", flush=True)
        rows.append((what, where, secs))
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip() or "unknown"
    today = datetime.date.today().isoformat()
    lines = [
        "# Timings",
        "",
        "How long the commands the documentation mentions take, measured by",
        "`python3 scripts/doc_timings.py` (CI runs it on every change; this page is",
        "its output from the run below). Wall time of one run each, release build.",
        "",
        f"Measured {today} at commit {commit} on {machine()}.",
        "",
        "| command | seconds | quoted in |",
        "|---|---:|---|",
    ]
    for what, where, secs in rows:
        lines.append(f"| {what} | {secs:.1f} | {where} |")
    if not a.long:
        lines += ["", "`datasets/failures.toml`, far longer than the rest, is measured with `--long` only."]
    tmp = a.out + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(tmp, a.out)
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
