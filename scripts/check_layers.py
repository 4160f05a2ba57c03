#!/usr/bin/env python3
"""Checks the library's module layering and file sizes (CI runs it).

The layer order is the numbered list under "# Layers" in src/lib.rs's module
docs: bottom first, each item naming its modules in backticks. A module may
use (`crate::NAME`) only modules of lower layers. Test code is outside the
layering (an oracle test may use a stage above the one it tests): files
declared `#[cfg(test)] mod NAME;` and inline `#[cfg(test)] mod NAME { ... }`
blocks are skipped, as are src/main.rs and the binary's src/cli/. Every
top-level module of src/ must be in the list, so a new one gets a place.

It also refuses a source file over MAX_LINES lines, test files aside,
unless it is listed in TOO_LONG below with the reason it still is.

Usage: python3 scripts/check_layers.py [REPO]   (exit status 1 on a finding)
"""

import os
import re
import sys

MAX_LINES = 900
# Files allowed past MAX_LINES for now, path -> the most lines they may
# have, each to be split: the check fails when one of them grows, when
# another file passes the limit, and when one is back under the limit but
# still listed. Empty: every source file is within the limit.
TOO_LONG = {}

OUTSIDE = {"lib", "main", "cli", "testing"}


def layers(lib_rs):
    """Module -> layer index, from the "# Layers" list of lib.rs's docs."""
    docs = [l[3:].strip() if l.startswith("//!") else None for l in lib_rs.split("\n")]
    out, on = {}, False
    for l in docs:
        if l is None:
            continue
        if l.startswith("#"):
            on = l == "# Layers"
            continue
        m = re.match(r"(\d+)\.\s", l)
        if on and m:
            level = int(m.group(1))
            # The item's modules: backticked names before the colon.
            head = l.split(":")[0]
            for name in re.findall(r"\[?`([a-z_]+)`\]?", head):
                out[name] = level
    return out


def test_files(root):
    """Files declared as test modules (`#[cfg(test)] mod NAME;`)."""
    out = set()
    for dp, _, fs in os.walk(root):
        for f in fs:
            if not f.endswith(".rs"):
                continue
            text = open(os.path.join(dp, f)).read()
            base = dp if f in ("mod.rs", "lib.rs", "main.rs") else os.path.join(dp, f[:-3])
            for m in re.finditer(r"#\[cfg\(test\)\]\s*(?:pub(?:\([a-z]+\))?\s+)?mod\s+(\w+)\s*;", text):
                out.add(os.path.join(base, m.group(1) + ".rs"))
                out.add(os.path.join(base, m.group(1), "mod.rs"))
    return out


def without_tests(text):
    """`text` less its inline `#[cfg(test)] mod NAME { ... }` blocks."""
    out, i = [], 0
    while True:
        m = re.compile(r"#\[cfg\(test\)\]\s*mod\s+\w+\s*\{").search(text, i)
        if not m:
            out.append(text[i:])
            return "".join(out)
        out.append(text[i : m.start()])
        j, depth = m.end(), 1
        while depth and j < len(text):
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            j += 1
        i = j


def code_of(text):
    """Source lines with comments (doc comments too) removed."""
    lines = []
    for l in text.split("\n"):
        s = l.strip()
        lines.append("" if s.startswith("//") else l.split(" //")[0])
    return "\n".join(lines)


def main():
    repo = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    root = os.path.join(repo, "src")
    order = layers(open(os.path.join(root, "lib.rs")).read())
    modules = sorted(
        f[:-3] if f.endswith(".rs") else f
        for f in os.listdir(root)
        if (f.endswith(".rs") or os.path.isdir(os.path.join(root, f)))
        and (f[:-3] if f.endswith(".rs") else f) not in OUTSIDE
    )
    findings = []
    for m in modules:
        if m not in order:
            findings.append(f"module `{m}` has no layer in src/lib.rs's \"# Layers\" list")
    for m in order:
        if m not in modules:
            findings.append(f"src/lib.rs's \"# Layers\" list names `{m}`, which is no module")
    tests = test_files(root)
    uses = {}
    for dp, _, fs in os.walk(root):
        for f in sorted(fs):
            path = os.path.join(dp, f)
            rel = os.path.relpath(path, repo)
            if not f.endswith(".rs"):
                continue
            test = path in tests or f == "tests.rs" or f.endswith("_tests.rs")
            n = sum(1 for _ in open(path))
            limit = TOO_LONG.get(rel)
            if not test and limit is None and n > MAX_LINES:
                findings.append(f"{rel}: {n} lines, over {MAX_LINES}: split it by concept")
            elif limit is not None and n > limit:
                findings.append(f"{rel}: {n} lines, past the {limit} it is allowed until it is split")
            elif limit is not None and n <= MAX_LINES:
                findings.append(f"{rel}: {n} lines, within {MAX_LINES}: take it off TOO_LONG")
            top = os.path.relpath(path, root).split(os.sep)[0].removesuffix(".rs")
            if test or top in OUTSIDE:
                continue
            code = code_of(without_tests(open(path).read()))
            for used in sorted(set(re.findall(r"\bcrate::([a-z_]+)", code))):
                if used != top and used in order and top in order:
                    uses.setdefault((top, used), []).append(rel)
    for (m, used), files in sorted(uses.items()):
        if order[used] >= order[m]:
            findings.append(
                f"`{m}` (layer {order[m]}) uses `{used}` (layer {order[used]}), "
                f"which is not below it: {', '.join(sorted(set(files)))}"
            )
    for f in findings:
        print(f)
    if findings:
        sys.exit(1)
    allowed = f" but the {len(TOO_LONG)} listed" if TOO_LONG else ""
    print(f"layers: {len(order)} modules in {len(set(order.values()))} layers, "
          f"{len(uses)} uses, every one downward; no source file over {MAX_LINES} lines{allowed}")


if __name__ == "__main__":
    main()
