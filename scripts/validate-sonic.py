#!/usr/bin/env python3
"""Validates a SONiC export (`tagger export` / `tagger run --export sonic:DIR`)
with libyang's yanglint, the way SONiC's own YANG validation reads config_db:
each switch file is translated to YANG JSON (RFC 7951: one list entry per
table key, keys split on '|', the map tables as nested lists), merged with
what the platform's config already holds (each port's lanes, the two lossless
buffer pools), and checked against the models: keys, types, patterns, ranges,
mandatory fields and every reference (a port, map or buffer profile named
but not defined fails).

    python3 scripts/validate-sonic.py EXPORT_DIR [--yang DIR] [--yanglint PATH]

--yang defaults to datasets/sonic-yang, this project's transcription of the
SONiC models the export uses (see its README); point it at a
sonic-buildimage checkout's src/sonic-yang-models/yang-models to validate
against the originals. Needs `yanglint` (Debian: libyang-tools). Exit 0 when
every file is valid; 1 naming each file that is not and yanglint's message.
"""
import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

# config_db table -> (YANG module, key leaves of its list, nested map or None).
# A nested map (key leaf, value leaf) turns {"name": {"k": "v"}} into
# {"name": ..., TABLE: [{key: k, value: v}]}, as SONiC's map tables are modelled.
TABLES = {
    "PORT": ("sonic-port", ["name"], None),
    "DSCP_TO_TC_MAP": ("sonic-dscp-tc-map", ["name"], ("dscp", "tc")),
    "TC_TO_QUEUE_MAP": ("sonic-tc-queue-map", ["name"], ("tc_num", "qindex")),
    "TC_TO_PRIORITY_GROUP_MAP": ("sonic-tc-priority-group-map", ["name"], ("tc_num", "pg_num")),
    "TC_TO_DSCP_MAP": ("sonic-tc-dscp-map", ["name"], ("tc_num", "dscp")),
    "PORT_QOS_MAP": ("sonic-port-qos-map", ["ifname"], None),
    "BUFFER_POOL": ("sonic-buffer-pool", ["name"], None),
    "BUFFER_PROFILE": ("sonic-buffer-profile", ["name"], None),
    "BUFFER_PG": ("sonic-buffer-pg", ["port", "pg_num"], None),
    "BUFFER_QUEUE": ("sonic-buffer-queue", ["port", "qindex"], None),
    "CABLE_LENGTH": ("sonic-cable-length", ["name"], ("port", "length")),
    "ACL_TABLE_TYPE": ("sonic-acl", ["ACL_TABLE_TYPE_NAME"], None),
    "ACL_TABLE": ("sonic-acl", ["ACL_TABLE_NAME"], None),
    "ACL_RULE": ("sonic-acl", ["ACL_TABLE_NAME", "RULE_NAME"], None),
}
# Integer leaves of 32 bits or fewer are JSON numbers in RFC 7951 (wider
# ones are strings, as config_db writes every value).
NUMBERS = {"speed", "mtu", "PRIORITY", "DSCP", "SET_DSCP", "SET_QUEUE"}
# What the platform's config holds that an export refers to without writing.
POOLS = {
    "ingress_lossless_pool": {"type": "ingress", "mode": "dynamic", "size": "33554432", "xoff": "0"},
    "egress_lossless_pool": {"type": "egress", "mode": "dynamic", "size": "33554432"},
}


def platform_base(db: dict) -> dict:
    """The export merged over a platform config: lanes per port, the pools."""
    out = {k: dict(v) for k, v in db.items()}
    out["PORT"] = {p: {"lanes": str(i), **f} for i, (p, f) in enumerate(db.get("PORT", {}).items())}
    if "BUFFER_PROFILE" in db:
        out["BUFFER_POOL"] = {**POOLS, **db.get("BUFFER_POOL", {})}
    return out


def leaf(name: str, value):
    if name in NUMBERS and isinstance(value, str) and value.lstrip("-").isdigit():
        return int(value)
    return value


def to_yang(db: dict) -> dict:
    """config_db JSON -> YANG JSON instance data."""
    modules: dict = {}
    for table, rows in db.items():
        if table not in TABLES:
            raise ValueError(f"table {table} has no model here: add it to TABLES and datasets/sonic-yang")
        module, keys, nested = TABLES[table]
        items = []
        for key, fields in rows.items():
            parts = key.split("|")
            if len(parts) != len(keys):
                raise ValueError(f"{table}|{key}: expected {len(keys)} key parts ({', '.join(keys)})")
            item = dict(zip(keys, parts))
            if nested:
                k, v = nested
                item[table] = [{k: a, v: b} for a, b in fields.items()]
            else:
                item.update({f: leaf(f, x) for f, x in fields.items()})
            items.append(item)
        modules.setdefault(module, {})[table] = {f"{table}_LIST": items}
    return {f"{m}:{m}": tables for m, tables in modules.items()}


def main() -> int:
    here = Path(__file__).resolve().parent.parent
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("export_dir", type=Path)
    ap.add_argument("--yang", type=Path, default=here / "datasets" / "sonic-yang")
    ap.add_argument("--yanglint", default="yanglint")
    a = ap.parse_args()
    summary = json.loads((a.export_dir / "summary.json").read_text())
    if not str(summary.get("format", "")).startswith("tagger-sonic/"):
        print(f"{a.export_dir}: not a SONiC export (format {summary.get('format')})", file=sys.stderr)
        return 1
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        for s in summary["switches"]:
            f = a.export_dir / s["file"]
            try:
                data = to_yang(platform_base(json.loads(f.read_text())))
            except ValueError as e:
                print(f"{f}: {e}", file=sys.stderr)
                bad += 1
                continue
            # Only the modules the file uses (and what they import) are loaded.
            used = sorted({m.split(":")[0] for m in data})
            inst = Path(tmp) / f"{s['node']}.json"
            inst.write_text(json.dumps(data))
            schemas = [str(a.yang / f"{m}.yang") for m in used]
            r = subprocess.run(
                [a.yanglint, "-p", str(a.yang), "-f", "json", "-t", "config", *schemas, str(inst)],
                capture_output=True,
                text=True,
            )
            if r.returncode != 0 or "err" in r.stderr.lower():
                print(f"{f}: {r.stderr.strip() or r.stdout.strip()}", file=sys.stderr)
                bad += 1
    n = len(summary["switches"])
    print(f"{n - bad} of {n} switch configs valid against {a.yang}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
