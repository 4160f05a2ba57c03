#!/usr/bin/env python3
"""Write a tagger topology (tagger-topology/1 JSON, e.g. from `tagger topo
SPEC --out t.json`) as an ibsim net file: the fabric OpenSM's routing
engines run on under the ibsim simulator (see datasets/ib/README.md).

Each switch becomes `Switch P "S<id>"`, its links ports 1.. in link-id
order, then one port per host, each cabled to its own single-port HCA
`H<id>-<i>`. The HCAs come first: the subnet manager attaches to the
first port in the file. Standard library only.

    python3 scripts/topology_to_ibnet.py t.json > fabric.net
"""
import json
import sys


def to_net(topology):
    nodes, links = topology["nodes"], topology["links"]
    ends = [l["ends"] if isinstance(l, dict) else l for l in links]
    used = {n["id"]: 0 for n in nodes}
    cables = []
    for a, b in ends:
        used[a] += 1
        used[b] += 1
        cables.append((a, used[a], b, used[b]))
    hosts = {}
    for n in nodes:
        for _ in range(n["hosts"]):
            used[n["id"]] += 1
            hosts.setdefault(n["id"], []).append(used[n["id"]])
    if used and max(used.values()) > 254:
        sys.exit("a switch has more than 254 ports, past what ibsim models")
    records = []
    for v, ports in hosts.items():
        for i, p in enumerate(ports):
            records.append(f'Hca 1 "H{v}-{i}"\n[1] "S{v}"[{p}]')
    for n in nodes:
        v = n["id"]
        lines = [f'Switch {max(used[v], 1)} "S{v}"']
        for a, pa, b, pb in cables:
            if a == v:
                lines.append(f'[{pa}] "S{b}"[{pb}]')
            if b == v:
                lines.append(f'[{pb}] "S{a}"[{pa}]')
        for i, p in enumerate(hosts.get(v, [])):
            lines.append(f'[{p}] "H{v}-{i}"[1]')
        records.append("\n".join(lines))
    return "\n\n".join(records) + "\n"


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: topology_to_ibnet.py TOPOLOGY.json > FABRIC.net")
    with open(sys.argv[1]) as f:
        topology = json.load(f)
    if any(n["kind"] != "switch" for n in topology["nodes"]):
        sys.exit("only switch nodes are supported (servers forwarding, as in BCube, are not)")
    sys.stdout.write(to_net(topology))


if __name__ == "__main__":
    main()
