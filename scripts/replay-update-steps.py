#!/usr/bin/env python3
"""Replays an update's SONiC steps the way an operator applies them: each
step directory's patches, in the order the steps' summary.json lists them,
applied with jsonpatch (the library SONiC's `config apply-patch` uses) to
what each switch holds, starting from the installed export.

    python3 scripts/replay-update-steps.py INSTALLED_DIR STEPS_DIR

INSTALLED_DIR is the export the switches run (`tagger run --export
sonic:DIR`), STEPS_DIR what `tagger update --export-steps sonic:DIR` wrote.
For every switch file of every step: its `<node>.base.json` must be what the
switch holds at that point (the installed file, or the last step's that
changed it), and its `<node>.patch.json` applied to that must give exactly
its `<node>.json`, so that nothing stale stays. Prints how many patches were
replayed; exit 1 naming the first that fails. Needs jsonpatch
(scripts/requirements.txt).
"""
import json
import sys
from pathlib import Path


def load(p: Path):
    return json.loads(p.read_text())


def main() -> int:
    try:
        import jsonpatch
    except ImportError:
        sys.exit("replay-update-steps.py needs jsonpatch: python3 -m pip install -r scripts/requirements.txt")
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    installed, steps = Path(sys.argv[1]), Path(sys.argv[2])
    holds = {}
    for f in installed.glob("*.json"):
        if f.stem.isdigit():
            holds[f.stem] = load(f)
    replayed = 0
    for step in load(steps / "summary.json")["steps"]:
        d = steps / step["dir"]
        for sw in load(d / "summary.json")["switches"]:
            v = str(sw["node"])
            base, patch, want = (load(d / f"{v}{s}.json") for s in (".base", ".patch", ""))
            if v in holds and holds[v] != base:
                print(f"{d}/{v}.base.json is not what switch {v} holds before {step['dir']}", file=sys.stderr)
                return 1
            now = jsonpatch.apply_patch(holds.get(v, base), patch)
            if now != want:
                print(f"{d}/{v}.patch.json applied to what switch {v} holds is not {v}.json", file=sys.stderr)
                return 1
            holds[v] = now
            replayed += 1
    print(f"{replayed} patches replayed over {installed}: every step's configuration reached exactly")
    return 0


if __name__ == "__main__":
    sys.exit(main())
