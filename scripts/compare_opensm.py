#!/usr/bin/env python3
"""Side by side with InfiniBand's deadlock-free routing engines.

For each fabric (a tagger topology spec), this writes it as an ibsim net
file, starts the ibsim fabric simulator, runs OpenSM once per routing
engine (DFSSSP, LASH, Nue with one and with eight virtual lanes), reads the engine's
forwarding tables and the virtual lanes (VLs) it reports, then runs tagger
on exactly those routes (`ibnet:` + `lfts:`) and records how many lossless
priorities they need. One row per fabric x engine goes to a Parquet file.

Needs Debian's `opensm ibsim-utils infiniband-diags` and pyarrow
(scripts/requirements.txt). Every subprocess runs in its own directory
and socket name, under a time limit, and is ended by its PID.

    python3 scripts/compare_opensm.py --out peers.parquet \
        jellyfish:n=32,ports=6,r=4,seed=1 jellyfish:n=64,ports=8,r=6,seed=1
"""
import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import deque

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from topology_to_ibnet import to_net  # noqa: E402

SIM = "/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so"
# engine label -> opensm routing arguments
ENGINES = {
    "dfsssp": ["-R", "dfsssp"],
    "lash": ["-R", "lash"],
    "nue-1vl": ["-R", "nue", "--nue_max_num_vls", "1"],
    # Every VL the fabric has (ibsim: 8); Nue does not say how many it used.
    "nue-8vl": ["-R", "nue", "--nue_max_num_vls", "8"],
}
# The VLs each Nue run was given.
NUE_VLS = {"nue-1vl": 1, "nue-8vl": 8}
DEFAULT_FABRICS = [
    "jellyfish:n=8,ports=4,r=3,seed=1",
    "jellyfish:n=32,ports=6,r=4,seed=1",
]


def need(tool):
    """The tool's path: on PATH, or in the sbin directories Debian puts
    opensm in (not on every user's PATH)."""
    found = shutil.which(tool) or shutil.which(tool, path="/usr/sbin:/sbin:/usr/bin")
    if found is None:
        sys.exit(f"{tool} is missing: apt-get install opensm ibsim-utils infiniband-diags")
    return found


def kill_group(p):
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    p.wait()


def run(cmd, cwd, env, timeout, log):
    """Runs cmd in its own process group; returns (exit code or None on
    timeout, seconds)."""
    t0 = time.monotonic()
    with open(log, "w") as out:
        p = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT,
                             start_new_session=True)
        try:
            code = p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            kill_group(p)
            code = None
    return code, time.monotonic() - t0


def lanes(engine, log_text, max_vls):
    """The VLs the engine reports (Nue given one: that one; given more, it
    does not say), and whether it failed or fell back to another engine."""
    name = ENGINES[engine][1]
    configured = re.findall(r"(\w+) tables configured on all switches", log_text)
    fell_back = bool(configured) and configured[-1] != name
    if name == "dfsssp":
        m = re.findall(r"Virtual Lanes needed: (\d+)", log_text)
    elif name == "lash":
        # Past the lanes it has, LASH names what it would need and stops.
        m = re.findall(r"Lanes needed: (\d+)|Lane requirements \((\d+)\) exceed", log_text)
        m = [a or b for a, b in m]
    else:
        m = [str(max_vls)] if max_vls == 1 else []
    vls = int(m[-1]) if m else None
    return vls, fell_back or not configured


def distances(topology):
    n = len(topology["nodes"])
    adj = [[] for _ in range(n)]
    for link in topology["links"]:
        a, b = link["ends"] if isinstance(link, dict) else link
        adj[a].append(b)
        adj[b].append(a)

    def bfs(s):
        d = [-1] * n
        d[s] = 0
        q = deque([s])
        while q:
            v = q.popleft()
            for w in adj[v]:
                if d[w] < 0:
                    d[w] = d[v] + 1
                    q.append(w)
        return d

    return bfs


def fabric_rows(spec, args, index):
    work = tempfile.mkdtemp(prefix="tagger-opensm-")
    rows = []
    try:
        topo_json = os.path.join(work, "t.json")
        subprocess.run([args.tagger, "topo", spec, "--out", topo_json], check=True,
                       stdout=subprocess.DEVNULL, timeout=args.timeout)
        with open(topo_json) as f:
            topology = json.load(f)
        net = os.path.join(work, "fabric.net")
        with open(net, "w") as f:
            f.write(to_net(topology))
        switches = len(topology["nodes"])
        env = dict(os.environ, IBSIM_SOCKNAME=f"tagger{os.getpid()}x{index}")
        sim_cmd = [args.ibsim, "-s", "-n", net] + (["-S", "512"] if switches > 256 else [])
        sim = subprocess.Popen(sim_cmd, cwd=work, env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
                               start_new_session=True)
        try:
            time.sleep(1.0)
            if sim.poll() is not None:
                sys.exit(f"{spec}: ibsim exited with {sim.returncode}")
            for engine in args.engines:
                rows.append(engine_row(spec, engine, topology, net, work, env, args))
        finally:
            kill_group(sim)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return rows


def engine_row(spec, engine, topology, net, work, env, args):
    dump = os.path.join(work, engine)
    os.makedirs(dump, exist_ok=True)
    log = os.path.join(dump, "opensm.log")
    osm_env = dict(env, LD_PRELOAD=SIM)
    cmd = [args.opensm, "-o", *ENGINES[engine], "-Q", "-D", "0x43", "-f", log,
           "--dump_files_dir", dump]
    code, osm_secs = run(cmd, work, osm_env, args.timeout, os.path.join(dump, "opensm.out"))
    text = open(log).read() if os.path.exists(log) else ""
    vls, failed = lanes(engine, text, NUE_VLS.get(engine))
    row = {
        "fabric": spec, "switches": len(topology["nodes"]), "links": len(topology["links"]),
        "hcas": sum(n["hosts"] for n in topology["nodes"]), "engine": engine,
        "engine_vls": vls, "engine_failed": failed or code != 0,
        "engine_seconds": round(osm_secs, 3), "routes": None, "longest_route": None,
        "stretch_mean": None, "stretch_max_extra_hops": None, "tagger_algo": None,
        "priorities": None, "lower_bound": None, "optimal": None, "verified": None,
        "tagger_seconds": None, "command": None, "tagger_command": None,
    }
    # A failed engine still leaves the routes OpenSM fell back to (minhop):
    # what the fabric then runs, planned like the others.
    lfts = os.path.join(dump, "opensm-lfts.dump")
    if not os.path.exists(lfts):
        return row
    paths = os.path.join(dump, "paths.txt")
    algo = args.algo if row["switches"] > args.exact_up_to else f"exact:timeout={args.timeout}"
    tcmd = [args.tagger, "run", f"ibnet:{net}", "--elp", f"lfts:{lfts}", "--require-coverage", "--algo", algo,
            "--max-tcs", "none", "--json", "--paths-out", paths]
    t0 = time.monotonic()
    out = subprocess.run(tcmd, capture_output=True, text=True, timeout=args.timeout * 3)
    row["tagger_seconds"] = round(time.monotonic() - t0, 3)
    # Temporary paths do not reproduce a row; this command does.
    row["command"] = f"python3 scripts/compare_opensm.py {spec} --engines {engine}"
    row["tagger_command"] = (f"tagger run ibnet:FABRIC.net --elp lfts:{engine}/opensm-lfts.dump --require-coverage"
                             f" --algo {algo} --max-tcs none")
    if out.returncode != 0:
        sys.stderr.write(f"{spec} {engine}: tagger failed: {out.stderr.strip()}\n")
        row["verified"] = False
        return row
    v = json.loads(out.stdout)
    row.update(tagger_algo=v["algo"], priorities=v["priorities"],
               lower_bound=v["priorities_lower_bound"], optimal=v["priorities_optimal"],
               verified=v["verified"], routes=v["paths"])
    bfs = distances(topology)
    cache, stretch, extra, longest = {}, [], 0, 0
    with open(paths) as f:
        for line in f:
            p = [int(x) for x in line.split()]
            if len(p) < 2:
                continue
            s, d = p[0], p[-1]
            if s not in cache:
                cache[s] = bfs(s)
            hops = len(p) - 1
            longest = max(longest, hops)
            stretch.append(hops / cache[s][d])
            extra = max(extra, hops - cache[s][d])
    row["longest_route"] = longest
    row["stretch_mean"] = round(sum(stretch) / len(stretch), 4) if stretch else None
    row["stretch_max_extra_hops"] = extra
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("fabrics", nargs="*", help="tagger topology specs (default: two small Jellyfish)")
    ap.add_argument("--out", default="opensm-peers.parquet", help="Parquet file of the rows")
    ap.add_argument("--tagger", default=os.path.join(os.path.dirname(__file__), "..", "target",
                                                      "release", "tagger"))
    ap.add_argument("--engines", default=",".join(ENGINES), type=lambda s: s.split(","))
    ap.add_argument("--algo", default="search", help="tagger's algorithm past --exact-up-to")
    ap.add_argument("--exact-up-to", type=int, default=64,
                    help="fabrics of at most this many switches are planned with exact")
    ap.add_argument("--timeout", type=int, default=120, help="seconds per subprocess")
    ap.add_argument("--keep", action="store_true", help="keep the working directories")
    args = ap.parse_args()
    for e in args.engines:
        if e not in ENGINES:
            sys.exit(f"unknown engine {e} (expected {', '.join(ENGINES)})")
    args.ibsim, args.opensm = need("ibsim"), need("opensm")
    if not os.path.exists(SIM):
        sys.exit(f"{SIM} is missing: apt-get install ibsim-utils")
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        sys.exit("pyarrow is missing: pip install -r scripts/requirements.txt")
    rows = []
    for i, spec in enumerate(args.fabrics or DEFAULT_FABRICS):
        for row in fabric_rows(spec, args, i):
            rows.append(row)
            print(f"{row['fabric']:<40} {row['engine']:<8} VLs {row['engine_vls']!s:<5}"
                  f"{' FAILED' if row['engine_failed'] else ''} tagger {row['priorities']}"
                  f" (bound {row['lower_bound']}, verified {row['verified']})", flush=True)
    table = pa.Table.from_pylist(rows)
    tmp = args.out + ".tmp"
    pq.write_table(table, tmp)
    os.replace(tmp, args.out)
    bad = [r for r in rows if r["tagger_seconds"] is not None and r["verified"] is not True]
    if bad:
        sys.exit(f"{len(bad)} row(s) did not verify")
    # An engine's layering is itself a plan with one priority per VL, so
    # the fewest priorities on its routes are never more than its VLs.
    over = [r for r in rows if r["verified"] and not r["engine_failed"]
            and r["engine_vls"] is not None and r["priorities"] > r["engine_vls"]]
    for r in over:
        print(f"{r['fabric']} {r['engine']}: {r['priorities']} priorities, more than the"
              f" engine's {r['engine_vls']} VLs ({r['tagger_algo']})", file=sys.stderr)
    if over:
        sys.exit(1)


if __name__ == "__main__":
    main()
