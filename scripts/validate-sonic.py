#!/usr/bin/env python3
"""Validates a SONiC export (`tagger export` / `tagger run --export sonic:DIR`)
with libyang's yanglint against SONiC's own YANG models, the way a SONiC
switch's YANG layer (sonic-yang-mgmt) checks config_db.

    python3 scripts/validate-sonic.py EXPORT_DIR [--yang DIR] [--yanglint PATH]

Each switch file (config_db JSON: the switch's base, its own configuration or
the stock one, with the plan written in) is checked to be what its patch
(`<node>.patch.json`, RFC 6902) makes of its base (`<node>.base.json`) when
applied with jsonpatch, the library SONiC's `config apply-patch` uses; then
it is validated as written, nothing added, translated into YANG instance data and validated by yanglint with every module of DIR loaded
and implemented: keys, types, patterns, ranges, mandatory leaves, `when` and
`must` conditions and every reference (a port, map, pool or buffer profile
named but not defined fails).

The translation is SONiC's, read off the models rather than written out per
table: config_db table T is the container T inside the top container of the
module that defines it (`sonic-port` for PORT); a key `a|b` is one entry of
the list in T with that many keys (`BUFFER_PG_LIST [port pg_num]`), or, for
a table of containers such as DEVICE_METADATA, the container named by the
key; a list holding a nested list is a map table, each field `k: v` of the
entry becoming one nested entry (`DSCP_TO_TC_MAP {"3": "1"}` -> dscp 3, tc
1); a leaf-list takes a JSON list or config_db's comma-joined `field@` form.
A table no module defines, or a field that is no leaf of its list, is
reported (SONiC's YANG layer would skip such a table, but nothing on the
switch would read it either).

Typed values. config_db holds every value as a string; SONiC's YANG layer
converts each one to the type of its leaf before libyang validates the tree
(an int32 leaf such as BUFFER_PROFILE's dynamic_th is checked as the number
7, not the string "7"). This script gets the same result by writing the
instance data as RFC 7950 XML (section 9: every built-in type has a lexical,
textual representation) instead of RFC 7951 JSON: in XML every value is text
and libyang parses it by its own leaf's resolved type, through typedef
chains across modules (stypes:tc_type is uint8 0..15), leafrefs (typed as
their target) and unions (each member type tried in order, as in BUFFER_PG's
`profile`, a buffer profile name or "NULL"). "7" for dynamic_th is therefore
the int32 7 and passes its range -8..7; "abc" or "8" fails, exactly as
after SONiC's conversion. The other way, converting values to JSON numbers
here (RFC 7951 section 6.1: integers up to 32 bits as numbers, 64-bit and
decimal64 as strings), was tried as well: it needs this script to resolve
every typedef, leafref target and union member type itself and is right
only as far as that resolution is, whereas XML leaves all of it to libyang.

Models. --yang defaults to ../shared/sonic-yang beside the repository (the
146 models sonic-buildimage builds, when that folder exists), else
datasets/sonic-yang (unmodified copies of the subset an export needs; see
its README). Every *.yang of the directory is loaded, as SONiC loads all its
models; yanglint's -i makes every imported module implemented, so no `when`
or `must` check is skipped for want of the module it refers to (the script
refuses to run if libyang reports one skipped anyway).

Needs `yanglint` (Debian: libyang-tools) and Python's `jsonpatch`
(scripts/requirements.txt).
Prints "N of M switch configs valid against DIR"; exit 0 when every file is
valid, 1 naming each file that is not with yanglint's message.
"""
import argparse
import json
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path


# ---------------------------------------------------------------- the models

TREE_LINE = re.compile(
    r"^(?P<indent>[ |]*)[+xo]--(?P<flags>rw|ro|-x|-n|:)\s*(?P<name>\([^)]*\)|[^\s\[?*!]+)"
    r"(?P<opt>[?*!]?)(?:\s+\[(?P<keys>[^\]]*)\])?(?:\s+(?P<type>\S.*))?$"
)


class Node:
    """A compiled schema node as yanglint's tree output shows it."""

    def __init__(self, name: str, kind: str, keys=None):
        self.name, self.kind, self.keys = name, kind, keys or []
        self.children: dict = {}

    def lists(self):
        return [c for c in self.children.values() if c.kind == "list"]


def parse_tree(text: str) -> dict:
    """yanglint -f tree output -> {module: [top-level config nodes]}.

    Choices and cases are schema-only, so their nodes are hung on the
    nearest data node; rpcs, notifications and read-only nodes are left out
    (a config_db file can hold none of them)."""
    modules: dict = {}
    module = None
    stack: list = []  # (indent, Node or None for a skipped subtree)
    for line in text.splitlines():
        if line.startswith("module: "):
            module = line[len("module: "):].strip()
            modules[module] = []
            stack = []
            continue
        m = TREE_LINE.match(line)
        if module is None or m is None:
            if line.strip().endswith(":"):  # "rpcs:", "notifications:", "augment ...:"
                stack = [(-1, None)]
            continue
        indent = len(m["indent"])
        while stack and stack[-1][0] >= indent:
            stack.pop()
        parent = stack[-1][1] if stack else "top"
        name = m["name"]
        if parent is None or m["flags"] not in ("rw", ":"):
            stack.append((indent, None))
            continue
        if m["flags"] == ":" or name.startswith("("):
            stack.append((indent, parent))  # choice or case: transparent
            continue
        if m["keys"] is not None:
            node = Node(name, "list", m["keys"].split())
        elif m["opt"] == "*":
            node = Node(name, "leaf-list")
        elif m["type"]:
            node = Node(name, "leaf")
        else:
            node = Node(name, "container")
        if parent == "top":
            modules[module].append(node)
        else:
            parent.children[name] = node
        stack.append((indent, node))
    return modules


def load_models(yang: Path, yanglint: str):
    """Every module of the directory: (files, {table: (module, node)}, {module: namespace})."""
    files = sorted(yang.glob("*.yang"))
    if not files:
        raise SystemExit(f"{yang}: no *.yang files")
    r = subprocess.run(
        [yanglint, "-i", "-p", str(yang), "-f", "tree", *map(str, files)],
        capture_output=True,
        text=True,
    )
    if r.returncode != 0 or "libyang err" in r.stderr:
        raise SystemExit(f"{yang}: yanglint cannot load the models:\n{r.stderr.strip()}")
    if "check skipped" in r.stderr:
        raise SystemExit(f"{yang}: libyang would skip checks (a referenced module is missing):\n{r.stderr.strip()}")
    tables: dict = {}
    for module, tops in parse_tree(r.stdout).items():
        for top in tops:
            for table in top.children.values():
                if table.kind == "container":
                    tables[table.name] = (module, top, table)
    namespaces = {}
    for f in files:
        text = f.read_text()
        mod = re.search(r"^\s*module\s+([\w.-]+)", text, re.M)
        ns = re.search(r"^\s*namespace\s+[\"']([^\"']+)[\"']", text, re.M)
        if mod and ns:
            namespaces[mod.group(1)] = ns.group(1)
    return files, tables, namespaces


# ------------------------------------------------------------ the translation


def add_leaves(elem, node: Node, where: str, fields: dict):
    """config_db fields -> leaf and leaf-list elements of a list entry or container."""
    for field, value in fields.items():
        name = field[:-1] if field.endswith("@") else field
        child = node.children.get(name)
        if child is None or child.kind not in ("leaf", "leaf-list"):
            raise ValueError(f"{where}: no leaf {name!r} in {node.name} of the models")
        if child.kind == "leaf-list":
            values = value if isinstance(value, list) else str(value).split(",")
        elif isinstance(value, list):
            raise ValueError(f"{where}: {name} is a leaf, not a leaf-list")
        else:
            values = [value]
        for v in values:
            ET.SubElement(elem, name).text = str(v)


def to_xml(db: dict, tables: dict, namespaces: dict) -> str:
    """config_db JSON -> YANG instance data in XML (RFC 7950)."""
    roots: dict = {}
    for table, rows in db.items():
        if table not in tables:
            raise ValueError(f"table {table} is defined by no module of the model directory")
        module, top, node = tables[table]
        if module not in roots:
            roots[module] = ET.Element(top.name, xmlns=namespaces[module])
        container = ET.SubElement(roots[module], table)
        for key, fields in rows.items():
            where = f"{table}|{key}"
            if not isinstance(fields, dict):
                raise ValueError(f"{where}: an entry is an object of fields")
            if key in node.children and node.children[key].kind == "container":
                add_leaves(ET.SubElement(container, key), node.children[key], where, fields)
                continue
            parts = key.split("|")
            lists = [l for l in node.lists() if len(l.keys) == len(parts)]
            if len(lists) != 1:
                shapes = " or ".join("|".join(l.keys) for l in node.lists()) or "no list"
                raise ValueError(f"{where}: key does not fit {table} ({shapes})")
            lst = lists[0]
            entry = ET.SubElement(container, lst.name)
            for k, v in zip(lst.keys, parts):
                ET.SubElement(entry, k).text = v
            nested = lst.lists()
            if nested:
                # A map table: each field is one entry of the nested list.
                inner = nested[0]
                values = [c for c in inner.children.values() if c.name not in inner.keys]
                if len(nested) != 1 or len(inner.keys) != 1 or len(values) != 1:
                    raise ValueError(f"{where}: {lst.name} is no key -> value map")
                for k, v in fields.items():
                    item = ET.SubElement(entry, inner.name)
                    ET.SubElement(item, inner.keys[0]).text = str(k)
                    ET.SubElement(item, values[0].name).text = str(v)
            else:
                add_leaves(entry, lst, where, fields)
    return "".join(ET.tostring(r, encoding="unicode") + "\n" for r in roots.values())


# ---------------------------------------------------------------- validation

CHUNK = 500  # data files per yanglint run, to keep its command line short
FAILED_FILE = re.compile(r'YANGLINT\[E\]: Failed to parse input data file "(.*)"')


def messages(stderr: str) -> str:
    """libyang's error messages (a message may span lines), without warnings,
    yanglint's own line naming the temporary XML file, or line numbers in it."""
    out, keep = [], False
    for line in stderr.splitlines():
        if line.startswith(("libyang ", "YANGLINT[")):
            keep = line.startswith("libyang err")
        if keep:
            out.append(re.sub(r", line number \d+\.\)", ".)", line))
    return "\n".join(out).strip() or "\n".join(l for l in stderr.splitlines() if l.startswith("YANGLINT[E]"))


def validate(yanglint: str, yang: Path, files: list, data: list) -> dict:
    """{data file: yanglint's message} for every invalid one.

    One yanglint run checks many files, each on its own (no --merge), and
    stops at the first invalid one, which it names; the run then resumes
    after it. If the name cannot be read, each file is run alone."""
    base = [yanglint, "-i", "-t", "config", "-p", str(yang), *map(str, files)]
    bad: dict = {}
    for i in range(0, len(data), CHUNK):
        bad.update(validate_chunk(base, data[i:i + CHUNK]))
    return bad


def validate_chunk(base: list, data: list) -> dict:
    bad: dict = {}
    rest = list(data)
    while rest:
        r = subprocess.run([*base, *map(str, rest)], capture_output=True, text=True)
        if r.returncode == 0 and "libyang err" not in r.stderr:
            break
        m = FAILED_FILE.search(r.stderr)
        named = [p for p in rest if m and str(p) == m.group(1)]
        if not named:
            for p in rest:
                r = subprocess.run([*base, str(p)], capture_output=True, text=True)
                if r.returncode != 0 or "libyang err" in r.stderr:
                    bad[p] = messages(r.stderr) or r.stdout.strip() or f"yanglint exit {r.returncode}"
            break
        bad[named[0]] = messages(r.stderr)
        rest = rest[rest.index(named[0]) + 1:]
    return bad


def applied(export_dir: Path, node, db: dict) -> dict:
    """The switch's configuration as `config apply-patch` leaves it: its
    base (`<node>.base.json`) with its patch (`<node>.patch.json`) applied
    by `jsonpatch`, the library SONiC's generic config updater applies
    patches with. It must be the switch file itself (`db`); a patch that
    does not apply, or makes another configuration, is an error."""
    try:
        import jsonpatch
    except ImportError:
        raise SystemExit("validate-sonic.py needs jsonpatch: python3 -m pip install -r scripts/requirements.txt")
    base_f, patch_f = export_dir / f"{node}.base.json", export_dir / f"{node}.patch.json"
    if not base_f.exists() or not patch_f.exists():
        raise ValueError(f"{base_f.name} or {patch_f.name} is missing")
    try:
        made = jsonpatch.apply_patch(json.loads(base_f.read_text()), json.loads(patch_f.read_text()))
    except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException) as e:
        raise ValueError(f"{patch_f.name} does not apply to {base_f.name}: {e}")
    if made != db:
        raise ValueError(f"{patch_f.name} applied to {base_f.name} is not the switch file")
    return db


def default_yang(repo: Path) -> Path:
    shared = repo.parent / "shared" / "sonic-yang"
    return shared if shared.is_dir() else repo / "datasets" / "sonic-yang"


def main() -> int:
    repo = Path(__file__).resolve().parent.parent
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("export_dir", type=Path)
    ap.add_argument("--yang", type=Path, default=None,
                    help="model directory (default: ../shared/sonic-yang if present, else datasets/sonic-yang)")
    ap.add_argument("--yanglint", default="yanglint")
    a = ap.parse_args()
    yang = a.yang or default_yang(repo)
    print(f"models: {yang}", flush=True)
    summary = json.loads((a.export_dir / "summary.json").read_text())
    if not str(summary.get("format", "")).startswith("tagger-sonic/"):
        print(f"{a.export_dir}: not a SONiC export (format {summary.get('format')})", file=sys.stderr)
        return 1
    files, tables, namespaces = load_models(yang, a.yanglint)
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        data = {}
        for i, s in enumerate(summary["switches"]):
            f = a.export_dir / s["file"]
            try:
                db = applied(a.export_dir, s["node"], json.loads(f.read_text()))
                xml = to_xml(db, tables, namespaces)
            except (ValueError, AttributeError) as e:
                print(f"{f}: {e}", file=sys.stderr)
                bad += 1
                continue
            if not xml:
                continue  # no table at all: nothing to check
            inst = Path(tmp) / f"{i}.xml"
            inst.write_text(xml)
            data[inst] = f
        for inst, msg in validate(a.yanglint, yang, files, list(data)).items():
            print(f"{data[inst]}: {msg}", file=sys.stderr)
            bad += 1
    n = len(summary["switches"])
    print(f"{n - bad} of {n} switch configs valid against {yang} "
          "(each file as written: its base with its patch applied by jsonpatch; nothing added)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
