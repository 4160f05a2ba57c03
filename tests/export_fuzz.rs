//! Mutated SONiC exports: `verify --exported` (the reader, then the
//! verifier with the ELP) must accept exactly the directories a switch
//! would run losslessly and deadlock-free, as judged by an independent
//! model of the switches written here from SONiC's semantics, not from the
//! reader's code.
//!
//! A port's binding (`PORT_QOS_MAP`) applies only when every map it names
//! exists. A packet arriving with a DSCP goes to the TC its port's
//! `DSCP_TO_TC_MAP` gives (none, or TC 0: lossy) and the priority group of
//! `TC_TO_PRIORITY_GROUP_MAP`; at the out port, the highest-priority ACL
//! rule that the switch applies (a defined table at egress, of a declared
//! type allowing the rule's fields, bound to the out port) sets its queue
//! and DSCP or drops it; otherwise `TC_TO_QUEUE_MAP` (none, or queue 0:
//! lossy) and `TC_TO_DSCP_MAP` (a TC it does not list keeps its DSCP).
//!
//! An export is a plan's promise that each lossless class is lossless, so
//! the model refuses a directory that breaks the promise anywhere, even
//! for traffic no ELP sends:
//!
//! - a non-zero TC whose group or queue is not one of the mapping's
//!   lossless queues, or is one but lacks PFC (`pfc_enable`, SONiC's
//!   pattern), headroom (`BUFFER_PG` with xoff) or a `BUFFER_QUEUE`; a
//!   lossless class whose DSCP is no tag's value; an ACL rule the switch
//!   would not apply, a tie between rules of one priority, a drop above a
//!   rewrite; a port binding naming a missing map, a link port without
//!   one, host ports configured differently;
//! - a lossless transition whose packet arrives at the next switch in
//!   another priority, or lossy (PFC pauses a priority: the queue it left
//!   from would never be paused);
//! - a transition that lowers the priority (the plan's rule consistency),
//!   a cycle in the graph of all lossless transitions (channel and
//!   priority to channel and priority), or more priorities in use than the
//!   summary says.
//!
//! It accepts when nothing is broken and every ELP path, from every host
//! port of its first switch, is lossless at every hop.
//!
//! One file past 600 lines on purpose: the independent switch model the
//! fuzzing judges by must be read whole, apart from the reader it checks.

use proptest::prelude::*;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use tagger::elp::{ElpSet, ElpSpec, enumerate};
use tagger::rules::RuleSet;
use tagger::sonic::{Options, export, read, write};
use tagger::topo::{Topology, TopologySpec};

/// A number written as a JSON number or a string.
fn num(v: &Value) -> Option<u32> {
    v.as_u64()
        .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
        .and_then(|x| u32::try_from(x).ok())
}

/// A map table's entry as the switch loads it: all keys and values
/// numbers, or nothing.
fn map(db: &Value, table: &str, name: &Value) -> Option<BTreeMap<u32, u32>> {
    db[table][name.as_str()?]
        .as_object()?
        .iter()
        .map(|(k, v)| Some((k.parse().ok()?, num(v)?)))
        .collect()
}

/// `pfc_enable` under SONiC's pattern `([0-7](,[0-7])*)?`; `None` when
/// the value does not match it.
fn pfc(port: &Value) -> Option<BTreeSet<u32>> {
    let text = match &port["pfc_enable"] {
        Value::Null => "",
        Value::String(t) => t.as_str(),
        _ => return None,
    };
    if text.is_empty() {
        return Some(BTreeSet::new());
    }
    text.split(',')
        .map(|x| match x.as_bytes() {
            [d @ b'0'..=b'7'] => Some(u32::from(d - b'0')),
            _ => None,
        })
        .collect()
}

/// Whether a `BUFFER_PG` / `BUFFER_QUEUE` key covers `port`'s `n`.
fn covers(key: &str, port: &str, n: u32) -> bool {
    let Some((p, r)) = key.split_once('|') else {
        return false;
    };
    let (lo, hi) = r.split_once('-').unwrap_or((r, r));
    p == port
        && matches!((lo.parse::<u32>(), hi.parse::<u32>()), (Ok(a), Ok(b)) if a <= n && n <= b)
}

/// A broken promise: the directory is not installable as a plan.
#[derive(Debug)]
struct Broken(String);

/// The mapping of `summary.json`.
struct Mapping {
    dscp_of: Vec<u32>,
    queues: Vec<u32>,
}

impl Mapping {
    fn priority(&self, q: u32) -> Option<u32> {
        self.queues
            .iter()
            .position(|&x| x == q)
            .map(|p| p as u32 + 1)
    }
    fn is_tag(&self, d: u32) -> bool {
        self.dscp_of.contains(&d)
    }
}

/// One switch as it would run its config_db.
struct Switch {
    db: Value,
    /// Link -> port name, and the host ports, from the PORT table's
    /// descriptions.
    link_port: BTreeMap<u32, String>,
    host_ports: Vec<String>,
}

/// A packet's treatment at an out port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Out {
    /// Lossless in this queue, leaving with this DSCP.
    Queue(u32, u32),
    Lossy,
}

/// An ACL rule as the switch would apply it.
#[derive(Clone, Debug)]
struct Rule {
    name: String,
    priority: u32,
    ins: Vec<String>,
    outs: Vec<String>,
    dscp: u32,
    /// `None`: drops.
    action: Option<(u32, u32)>,
}

impl Switch {
    fn load(db: Value) -> Switch {
        let mut link_port = BTreeMap::new();
        let mut host_ports = Vec::new();
        for (name, p) in db["PORT"].as_object().into_iter().flatten() {
            let d = p["description"].as_str().unwrap_or("");
            if d == "host port" {
                host_ports.push(name.clone());
            } else if let Some(rest) = d.strip_prefix("link ") {
                let l: u32 = rest.split(' ').next().unwrap().parse().unwrap();
                link_port.insert(l, name.clone());
            }
        }
        Switch {
            db,
            link_port,
            host_ports,
        }
    }

    fn binding(&self, port: &str) -> &Value {
        &self.db["PORT_QOS_MAP"][port]
    }

    /// A port's binding, checked: every map it names exists, pfc_enable
    /// matches; `Ok(None)` for a port without one.
    fn port(&self, port: &str) -> Result<Option<BTreeSet<u32>>, Broken> {
        let b = self.binding(port);
        if b.is_null() {
            return Ok(None);
        }
        for (t, k) in [
            ("DSCP_TO_TC_MAP", "dscp_to_tc_map"),
            ("TC_TO_PRIORITY_GROUP_MAP", "tc_to_pg_map"),
            ("TC_TO_QUEUE_MAP", "tc_to_queue_map"),
            ("TC_TO_DSCP_MAP", "tc_to_dscp_map"),
        ] {
            if !b[k].is_null() && map(&self.db, t, &b[k]).is_none() {
                return Err(Broken(format!("{port}: {k} does not load")));
            }
        }
        pfc(b)
            .map(Some)
            .ok_or_else(|| Broken(format!("{port}: pfc_enable")))
    }

    /// The lossless priority a packet with `dscp` arriving on `port`
    /// takes, with its TC; `None`: lossy by design.
    fn ingress(&self, port: &str, dscp: u32, m: &Mapping) -> Result<Option<(u32, u32)>, Broken> {
        let Some(enabled) = self.port(port)? else {
            return Ok(None);
        };
        let b = self.binding(port);
        let d2t = map(&self.db, "DSCP_TO_TC_MAP", &b["dscp_to_tc_map"])
            .ok_or_else(|| Broken(format!("{port}: no dscp_to_tc_map")))?;
        let Some(&tc) = d2t.get(&dscp) else {
            return Ok(None);
        };
        if tc == 0 {
            return Ok(None);
        }
        let broken = |why: &str| Err(Broken(format!("{port}: DSCP {dscp} TC {tc}: {why}")));
        if !m.is_tag(dscp) {
            return broken("lossless, but no tag's value");
        }
        let Some(pg) = map(&self.db, "TC_TO_PRIORITY_GROUP_MAP", &b["tc_to_pg_map"])
            .and_then(|x| x.get(&tc).copied())
        else {
            return broken("no priority group");
        };
        let Some(prio) = m.priority(pg) else {
            return broken("group not lossless");
        };
        if !enabled.contains(&pg) {
            return broken("no PFC");
        }
        let xoff = self.db["BUFFER_PG"]
            .as_object()
            .and_then(|o| o.iter().find(|(k, _)| covers(k, port, pg)))
            .and_then(|(_, e)| e["profile"].as_str())
            .and_then(|p| num(&self.db["BUFFER_PROFILE"][p]["xoff"]));
        if xoff.is_none_or(|x| x == 0) {
            return broken("no headroom");
        }
        Ok(Some((prio, tc)))
    }

    /// The ACL rules, as the switch would apply them; any rule it would
    /// not apply as written breaks the promise.
    fn rules(&self) -> Result<Vec<Rule>, Broken> {
        let mut out = Vec::new();
        let Some(rules) = self.db["ACL_RULE"].as_object() else {
            return Ok(out);
        };
        for (key, r) in rules {
            let broken = |why: &str| Err(Broken(format!("ACL_RULE|{key}: {why}")));
            let Some((table, _)) = key.split_once('|') else {
                return broken("key");
            };
            let t = &self.db["ACL_TABLE"][table];
            if !t.is_object() {
                return broken("no table");
            }
            if !t["stage"]
                .as_str()
                .is_some_and(|s| s.eq_ignore_ascii_case("egress"))
            {
                return broken("stage");
            }
            let ty = &self.db["ACL_TABLE_TYPE"][t["type"].as_str().unwrap_or("")];
            let has = |list: &str, f: &str| {
                ty[list]
                    .as_array()
                    .is_some_and(|a| a.iter().any(|x| x.as_str() == Some(f)))
            };
            if !has("BIND_POINTS", "PORT") {
                return broken("bind points");
            }
            let fields_ok = r.as_object().is_some_and(|o| {
                o.keys().all(|f| match f.as_str() {
                    "PRIORITY" => true,
                    "IN_PORTS" | "OUT_PORTS" | "DSCP" => has("MATCHES", f),
                    "SET_DSCP" | "SET_QUEUE" | "PACKET_ACTION" => has("ACTIONS", f),
                    _ => false,
                })
            });
            if !fields_ok {
                return broken("fields");
            }
            let Some(priority) = num(&r["PRIORITY"]).filter(|p| (1..=65535).contains(p)) else {
                return broken("priority");
            };
            let list = |k: &str| -> Vec<String> {
                r[k].as_str()
                    .unwrap_or("")
                    .split(',')
                    .map(|x| x.trim().to_string())
                    .filter(|x| !x.is_empty())
                    .collect()
            };
            let (ins, outs) = (list("IN_PORTS"), list("OUT_PORTS"));
            let bound: BTreeSet<&str> = t["ports"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            if outs.iter().any(|o| !bound.contains(o.as_str())) {
                return broken("unbound out port");
            }
            let hosts_named = ins.iter().filter(|p| self.host_ports.contains(p)).count();
            if hosts_named != 0 && hosts_named != self.host_ports.len() {
                return broken("some host ports");
            }
            let Some(dscp) = num(&r["DSCP"]) else {
                return broken("DSCP");
            };
            let forward = match &r["PACKET_ACTION"] {
                Value::Null => true,
                Value::String(a) => a.eq_ignore_ascii_case("FORWARD"),
                _ => false,
            };
            let action = if forward {
                match (num(&r["SET_DSCP"]), num(&r["SET_QUEUE"])) {
                    (Some(d), Some(q)) => Some((d, q)),
                    _ => return broken("a forward without DSCP and queue"),
                }
            } else {
                None
            };
            out.push(Rule {
                name: key.clone(),
                priority,
                ins,
                outs,
                dscp,
                action,
            });
        }
        Ok(out)
    }

    /// What happens at out port `out` to a packet that came in on `inp`
    /// with `dscp` in `tc`.
    fn egress(
        &self,
        rules: &[Rule],
        inp: &str,
        dscp: u32,
        tc: u32,
        out: &str,
        m: &Mapping,
    ) -> Result<Out, Broken> {
        let Some(enabled) = self.port(out)? else {
            return Err(Broken(format!("{out}: a link port without a binding")));
        };
        let matching: Vec<&Rule> = rules
            .iter()
            .filter(|r| {
                r.dscp == dscp && r.ins.iter().any(|p| p == inp) && r.outs.iter().any(|p| p == out)
            })
            .collect();
        let top = matching.iter().map(|r| r.priority).max();
        let decided: Vec<&&Rule> = matching
            .iter()
            .filter(|r| Some(r.priority) == top)
            .collect();
        if decided.iter().any(|r| r.action != decided[0].action) {
            return Err(Broken(format!(
                "{out}: a tie between {} and {}",
                decided[0].name, decided[1].name
            )));
        }
        if let Some(r) = decided.first()
            && r.action.is_none()
            && matching.iter().any(|x| x.action.is_some())
        {
            return Err(Broken(format!("{out}: {} drops over a rewrite", r.name)));
        }
        let (queue, next) = match decided.first().map(|r| r.action) {
            Some(None) => return Ok(Out::Lossy),
            Some(Some((d, q))) => {
                if !m.is_tag(dscp) {
                    return Err(Broken(format!(
                        "{out}: an ACL rule for DSCP {dscp}, no tag"
                    )));
                }
                (q, d)
            }
            None => {
                let b = self.binding(out);
                let q = map(&self.db, "TC_TO_QUEUE_MAP", &b["tc_to_queue_map"])
                    .ok_or_else(|| Broken(format!("{out}: no tc_to_queue_map")))?
                    .get(&tc)
                    .copied()
                    .unwrap_or(0);
                if q == 0 {
                    return Ok(Out::Lossy);
                }
                let d = if b["tc_to_dscp_map"].is_null() {
                    dscp
                } else {
                    map(&self.db, "TC_TO_DSCP_MAP", &b["tc_to_dscp_map"])
                        .and_then(|x| x.get(&tc).copied())
                        .unwrap_or(dscp)
                };
                (q, d)
            }
        };
        let broken = |why: &str| Err(Broken(format!("{out}: queue {queue}: {why}")));
        if m.priority(queue).is_none() {
            return broken("not lossless");
        }
        if !enabled.contains(&queue) {
            return broken("no PFC");
        }
        let buffered = self.db["BUFFER_QUEUE"].as_object().is_some_and(|o| {
            o.iter().any(|(k, e)| {
                covers(k, out, queue)
                    && e["profile"]
                        .as_str()
                        .is_some_and(|p| self.db["BUFFER_PROFILE"][p].is_object())
            })
        });
        if !buffered {
            return broken("no BUFFER_QUEUE");
        }
        if !m.is_tag(next) {
            return broken("leaves with no tag's DSCP");
        }
        Ok(Out::Queue(queue, next))
    }
}

/// What a host port does with one DSCP: its class, if lossless, and its
/// treatment at each link port.
type HostView = (u32, Option<(u32, u32)>, Vec<Out>);

/// The independent judgement: does the exported directory keep its
/// promise and run every ELP path losslessly, deadlock-free?
fn switch_would_run(topo: &Topology, dir: &std::path::Path, paths: &[Vec<u32>]) -> bool {
    judge(topo, dir, paths).is_ok()
}

fn judge(topo: &Topology, dir: &std::path::Path, paths: &[Vec<u32>]) -> Result<(), Broken> {
    let summary: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap();
    let list = |k: &str| -> Vec<u32> {
        summary["mapping"][k]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| num(x).unwrap())
            .collect()
    };
    let m = Mapping {
        dscp_of: list("dscp_of_tag"),
        queues: list("queue_of_priority"),
    };
    let first_dscp = m.dscp_of[num(&summary["initial_tag"]).unwrap() as usize - 1];
    let mut switches: BTreeMap<u32, (Switch, Vec<Rule>)> = BTreeMap::new();
    for s in summary["switches"].as_array().unwrap() {
        let v = num(&s["node"]).unwrap();
        let text = std::fs::read_to_string(dir.join(format!("{v}.json"))).unwrap();
        let sw = Switch::load(serde_json::from_str(&text).unwrap());
        let rules = sw.rules()?;
        switches.insert(v, (sw, rules));
    }
    let channel = |from: u32, link: u32| -> u32 {
        topo.out_channels(from)
            .iter()
            .copied()
            .find(|&c| c >> 1 == link)
            .unwrap()
    };
    let peer = |v: u32, l: u32| {
        let [a, b] = topo.links()[l as usize];
        if a == v { b } else { a }
    };
    // Every configured lossless transition, checked; edges between
    // (channel, priority) nodes.
    let mut edges: BTreeSet<((u32, u32), (u32, u32))> = BTreeSet::new();
    let mut used = 0;
    for (&v, (sw, rules)) in &switches {
        // Host ports alike: what each classifies and forwards.
        let mut host_view: Option<Vec<HostView>> = None;
        let ins: Vec<(Option<u32>, &String)> = sw
            .link_port
            .iter()
            .map(|(&l, p)| (Some(l), p))
            .chain(sw.host_ports.iter().map(|p| (None, p)))
            .collect();
        let configured_hosts = sw
            .host_ports
            .iter()
            .filter(|p| !sw.binding(p).is_null())
            .count();
        if configured_hosts != 0 && configured_hosts != sw.host_ports.len() {
            return Err(Broken(format!("node {v}: a host port without a binding")));
        }
        for (lin, inp) in ins {
            let mut view = Vec::new();
            for dscp in 0..64 {
                let Some((prio, tc)) = sw.ingress(inp, dscp, &m)? else {
                    if lin.is_none() {
                        view.push((dscp, None, Vec::new()));
                    }
                    continue;
                };
                let mut outs = Vec::new();
                for (&lout, out) in &sw.link_port {
                    if Some(lout) == lin {
                        continue;
                    }
                    let o = sw.egress(rules, inp, dscp, tc, out, &m)?;
                    outs.push(o);
                    let Out::Queue(q, d) = o else {
                        continue;
                    };
                    let next = m.priority(q).unwrap();
                    used = used.max(next).max(prio);
                    if next < prio {
                        return Err(Broken(format!("node {v}: priority {prio} -> {next}")));
                    }
                    // It must arrive in the priority it left in.
                    let w = peer(v, lout);
                    let Some((wsw, _)) = switches.get(&w) else {
                        return Err(Broken(format!(
                            "node {w}: no file, lossless traffic arrives"
                        )));
                    };
                    let arriving = wsw.ingress(&wsw.link_port[&lout], d, &m)?;
                    if arriving.map(|x| x.0) != Some(next) {
                        return Err(Broken(format!(
                            "node {v} -> {w} on link {lout}: leaves in {next}, arrives {arriving:?}"
                        )));
                    }
                    if let Some(l) = lin {
                        edges.insert(((channel(peer(v, l), l), prio), (channel(v, lout), next)));
                    }
                }
                if lin.is_none() {
                    view.push((dscp, Some((prio, tc)), outs));
                }
            }
            if lin.is_none() && !sw.binding(inp).is_null() {
                let seen: Vec<HostView> = view
                    .into_iter()
                    .map(|(d, c, o)| (d, c.map(|x| (x.0, 0)), o))
                    .collect();
                match &host_view {
                    None => host_view = Some(seen),
                    Some(h) if *h != seen => {
                        return Err(Broken(format!("node {v}: host ports differ")));
                    }
                    Some(_) => {}
                }
            }
        }
    }
    if used != 0 && Some(used) != num(&summary["priorities"]) {
        return Err(Broken(format!("{used} priorities in use")));
    }
    // Kahn's algorithm over the transition graph.
    let mut indeg: BTreeMap<(u32, u32), usize> = BTreeMap::new();
    let mut next: BTreeMap<(u32, u32), Vec<(u32, u32)>> = BTreeMap::new();
    for &(a, b) in &edges {
        indeg.entry(a).or_default();
        *indeg.entry(b).or_default() += 1;
        next.entry(a).or_default().push(b);
    }
    let mut ready: Vec<(u32, u32)> = indeg
        .iter()
        .filter(|(_, d)| **d == 0)
        .map(|(k, _)| *k)
        .collect();
    let mut done = 0;
    while let Some(x) = ready.pop() {
        done += 1;
        for y in next.get(&x).into_iter().flatten() {
            let d = indeg.get_mut(y).unwrap();
            *d -= 1;
            if *d == 0 {
                ready.push(*y);
            }
        }
    }
    if done != indeg.len() {
        return Err(Broken("a cycle".into()));
    }
    // Every ELP path from every host port of its first switch.
    for p in paths {
        let Some((first, _)) = switches.get(&p[0]) else {
            return Err(Broken(format!("path {p:?}: no file")));
        };
        for host in &first.host_ports {
            let mut dscp = first_dscp;
            for (i, &v) in p.iter().enumerate() {
                let (sw, rules) = &switches
                    .get(&v)
                    .ok_or_else(|| Broken(format!("path {p:?}: no file for {v}")))?;
                let inp = if i == 0 {
                    host.clone()
                } else {
                    let l = sw
                        .link_port
                        .keys()
                        .copied()
                        .find(|&l| peer(v, l) == p[i - 1])
                        .unwrap();
                    sw.link_port[&l].clone()
                };
                let Some((_, tc)) = sw.ingress(&inp, dscp, &m)? else {
                    return Err(Broken(format!("path {p:?}: lossy at {v}")));
                };
                if i + 1 == p.len() {
                    break;
                }
                let l = sw
                    .link_port
                    .keys()
                    .copied()
                    .find(|&l| peer(v, l) == p[i + 1])
                    .unwrap();
                match sw.egress(rules, &inp, dscp, tc, &sw.link_port[&l], &m)? {
                    Out::Queue(_, d) => dscp = d,
                    Out::Lossy => return Err(Broken(format!("path {p:?}: lossy out of {v}"))),
                }
            }
        }
    }
    Ok(())
}

/// One edit of one switch file, drawn from the fields an export writes.
fn mutate(db: &mut Value, pick: &mut impl FnMut(usize) -> usize) {
    let tables = [
        "PORT_QOS_MAP",
        "DSCP_TO_TC_MAP",
        "TC_TO_PRIORITY_GROUP_MAP",
        "TC_TO_QUEUE_MAP",
        "TC_TO_DSCP_MAP",
        "BUFFER_PG",
        "BUFFER_QUEUE",
        "BUFFER_PROFILE",
        "ACL_RULE",
        "ACL_TABLE",
    ];
    let present: Vec<&str> = tables
        .iter()
        .copied()
        .filter(|t| db[*t].as_object().is_some_and(|o| !o.is_empty()))
        .collect();
    let table = present[pick(present.len())];
    let keys: Vec<String> = db[table].as_object().unwrap().keys().cloned().collect();
    let key = keys[pick(keys.len())].clone();
    let entry = &mut db[table][&key];
    match (table, pick(4)) {
        // Delete the entry.
        (_, 0) => {
            db[table].as_object_mut().unwrap().remove(&key);
        }
        ("PORT_QOS_MAP", 1) => {
            entry["pfc_enable"] = json!(["", "3", "4", "3,4,9", "3,5", "0,3,4"][pick(6)]);
        }
        ("PORT_QOS_MAP", _) => {
            entry["dscp_to_tc_map"] = json!("MISSING");
        }
        ("BUFFER_PROFILE", _) => entry["xoff"] = json!(["0", "x", "1000"][pick(3)]),
        ("BUFFER_PG" | "BUFFER_QUEUE", _) => entry["profile"] = json!("MISSING"),
        ("ACL_RULE", 1) => entry["PACKET_ACTION"] = json!("DROP"),
        ("ACL_RULE", 2) => entry["PRIORITY"] = json!(["NaN", "0", "9999", "1"][pick(4)]),
        ("ACL_RULE", _) => {
            let q = ["1", "2", "3", "4", "5"][pick(5)];
            entry["SET_QUEUE"] = json!(q);
        }
        ("ACL_TABLE", 1) => entry["stage"] = json!("ingress"),
        ("ACL_TABLE", _) => {
            if let Some(a) = entry["ports"].as_array_mut()
                && !a.is_empty()
            {
                let i = pick(a.len());
                a.remove(i);
            }
        }
        // A map's value.
        (_, _) => {
            let inner: Vec<String> = entry
                .as_object()
                .map(|o| o.keys().cloned().collect())
                .unwrap_or_default();
            if !inner.is_empty() {
                let k = inner[pick(inner.len())].clone();
                let max = if table == "TC_TO_DSCP_MAP" { 64 } else { 8 };
                entry[&k] = json!(pick(max).to_string());
            }
        }
    }
}

struct Plan {
    topo: Topology,
    elp: ElpSet,
    rules: RuleSet,
    paths: Vec<Vec<u32>>,
}

fn plan(topo: &str, elp: &str, algo: &str) -> Plan {
    let t = TopologySpec::parse(topo).unwrap().build().unwrap();
    let e = ElpSet::build(&t, &ElpSpec::parse(elp).unwrap()).unwrap();
    let tg = tagger::tagging::tag(&t, &e, algo.parse().unwrap(), Default::default()).unwrap();
    let rules = RuleSet::from_tagging(&t, &tg);
    let mut paths = Vec::new();
    enumerate::for_each_path(&t, &e, 1_000_000, |p| {
        paths.push(p.to_vec());
        Ok(())
    })
    .unwrap();
    Plan {
        topo: t,
        elp: e,
        rules,
        paths,
    }
}

/// What `tagger verify --exported DIR --paths` decides.
fn verified(p: &Plan, dir: &std::path::Path) -> bool {
    match read(&p.topo, dir) {
        Ok(r) => tagger::verify::verify(&p.topo, &r, Some(&p.elp)).ok(),
        Err(_) => false,
    }
}

fn plans() -> &'static [Plan] {
    static PLANS: std::sync::OnceLock<Vec<Plan>> = std::sync::OnceLock::new();
    PLANS.get_or_init(|| {
        vec![
            plan("fattree:k=4", "kbounce:1", "clos"),
            // Over the traffic classes: ACL rules.
            plan("jellyfish:n=20,ports=6,r=4,seed=1", "shortest", "brute"),
            plan("leafspine:leaves=4,spines=2,hosts=1", "kbounce:1", "search"),
            plan("jellyfish:n=16,ports=6,r=4,seed=3", "shortest", "greedy"),
        ]
    })
}

/// The unmutated exports: both sides accept.
#[test]
fn exports_run_as_verified() {
    for p in plans() {
        let ex = export(&p.topo, &p.rules, &Options::default()).unwrap();
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().join("ex");
        write(&dir, &ex).unwrap();
        assert!(verified(p, &dir), "{}", p.topo.name());
        assert!(
            switch_would_run(&p.topo, &dir, &p.paths),
            "{}",
            p.topo.name()
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: std::env::var("FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(160), ..ProptestConfig::default() })]

    /// One or two random edits of random switch files: the verifier
    /// accepts exactly when the switch model says the network runs every
    /// ELP losslessly and deadlock-free.
    #[test]
    fn verify_exported_accepts_exactly_what_runs(
        which in 0usize..4,
        seeds in proptest::collection::vec(any::<u64>(), 1..=2),
    ) {
        let p = &plans()[which];
        let ex = export(&p.topo, &p.rules, &Options::default()).unwrap();
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().join("ex");
        write(&dir, &ex).unwrap();
        let mut edits = Vec::new();
        for seed in seeds {
            let mut x = seed;
            let mut pick = |n: usize| {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                ((x >> 33) as usize) % n.max(1)
            };
            let s = &ex.switches[pick(ex.switches.len())];
            let f = dir.join(format!("{}.json", s.node));
            let mut db: Value = serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
            let before = db.clone();
            mutate(&mut db, &mut pick);
            edits.push((s.node, diff(&before, &db)));
            std::fs::write(&f, db.to_string()).unwrap();
        }
        let model = switch_would_run(&p.topo, &dir, &p.paths);
        let verdict = verified(p, &dir);
        let why = read(&p.topo, &dir)
            .map(|r| tagger::verify::verify(&p.topo, &r, Some(&p.elp)).to_string())
            .unwrap_or_else(|e| e.to_string());
        let judged = judge(&p.topo, &dir, &p.paths).err();
        prop_assert_eq!(verdict, model, "{} edits {:?}: verify: {}; model: {:?}", p.topo.name(), edits, why, judged.map(|b| b.0));
    }
}

/// The tables an edit changed, for the failure message.
fn diff(a: &Value, b: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for (t, x) in a.as_object().unwrap() {
        if b.get(t) != Some(x) {
            for (k, y) in x.as_object().into_iter().flatten() {
                if b[t].get(k) != Some(y) {
                    out.push(format!(
                        "{t}|{k}: {y} -> {}",
                        b[t].get(k).map_or("deleted".into(), |v| v.to_string())
                    ));
                }
            }
        }
    }
    out
}

/// The neutral table as a switch implementing it would run: ingress rows
/// (port, tag) -> priority and class, each class's egress per port (tag,
/// priority), and the listed entries, which must be that table expanded.
/// The same promise as for SONiC: host ports alike, every lossless
/// transition arrives in its priority, priorities never fall, no cycle,
/// the summary's priorities; then every ELP path lossless.
fn judge_table(topo: &Topology, dir: &std::path::Path, paths: &[Vec<u32>]) -> Result<(), Broken> {
    let summary: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap();
    let initial = num(&summary["initial_tag"]).unwrap();
    type Transition = (String, u32, String, u32, u32, u32);
    struct Table {
        link_port: BTreeMap<u32, String>,
        host_ports: Vec<String>,
        ingress: BTreeMap<(String, u32), (u32, u32)>,
        transitions: BTreeSet<Transition>,
    }
    let mut tables: BTreeMap<u32, Table> = BTreeMap::new();
    for sw in summary["switches"].as_array().unwrap() {
        let v = num(&sw["node"]).unwrap();
        let t: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join(format!("{v}.json"))).unwrap())
                .unwrap();
        let broken = |why: String| Err(Broken(format!("node {v}: {why}")));
        let mut link_port = BTreeMap::new();
        let mut host_ports = Vec::new();
        for p in t["ports"].as_array().into_iter().flatten() {
            let name = p["name"].as_str().unwrap_or("").to_string();
            match num(&p["link"]) {
                Some(l) => {
                    link_port.insert(l, name);
                }
                None => host_ports.push(name),
            }
        }
        let mut ingress = BTreeMap::new();
        for r in t["ingress"].as_array().into_iter().flatten() {
            let (Some(tag), Some(prio), Some(class)) =
                (num(&r["tag"]), num(&r["priority"]), num(&r["class"]))
            else {
                return broken(format!("ingress row {r}"));
            };
            let port = r["port"].as_str().unwrap_or("").to_string();
            if let Some(old) = ingress.insert((port, tag), (prio, class))
                && old != (prio, class)
            {
                return broken(format!("ingress row {r} twice"));
            }
        }
        let mut classes: BTreeMap<u32, Vec<(String, u32, u32)>> = BTreeMap::new();
        for c in t["classes"].as_array().into_iter().flatten() {
            let Some(id) = num(&c["class"]) else {
                return broken(format!("class {c}"));
            };
            let mut out = Vec::new();
            for e in c["egress"].as_array().into_iter().flatten() {
                let (Some(tag), Some(prio)) = (num(&e["tag"]), num(&e["priority"])) else {
                    return broken(format!("class {id} egress {e}"));
                };
                let port = e["port"].as_str().unwrap_or("").to_string();
                if !link_port.values().any(|p| *p == port) {
                    return broken(format!("class {id} egress to {port}, no link port"));
                }
                out.push((port, tag, prio));
            }
            classes.insert(id, out);
        }
        let mut transitions = BTreeSet::new();
        for ((port, tag), (prio, class)) in &ingress {
            let Some(out) = classes.get(class) else {
                return broken(format!("class {class} undefined"));
            };
            for (q, t2, p2) in out {
                if q != port {
                    transitions.insert((port.clone(), *tag, q.clone(), *t2, *prio, *p2));
                }
            }
        }
        let mut listed = BTreeSet::new();
        for e in t["entries"].as_array().into_iter().flatten() {
            let f = |k: &str| num(&e[k]);
            let (Some(tag), Some(t2), Some(p), Some(p2)) =
                (f("tag"), f("next_tag"), f("priority"), f("next_priority"))
            else {
                return broken(format!("entry {e}"));
            };
            let names = |k: &str| -> Vec<String> {
                e[k].as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|x| x.as_str().map(str::to_string))
                    .collect()
            };
            for i in names("in_ports") {
                for o in names("out_ports") {
                    listed.insert((i.clone(), tag, o, t2, p, p2));
                }
            }
        }
        if listed != transitions {
            return broken("the entries are not the table expanded".into());
        }
        // Host ports alike.
        let from = |h: &str| -> BTreeSet<(u32, String, u32, u32, u32)> {
            transitions
                .iter()
                .filter(|x| x.0 == h)
                .map(|x| (x.1, x.2.clone(), x.3, x.4, x.5))
                .collect()
        };
        let rows = |h: &str| -> BTreeSet<(u32, u32)> {
            ingress
                .iter()
                .filter(|((p, _), _)| p == h)
                .map(|((_, t), (pr, _))| (*t, *pr))
                .collect()
        };
        if let Some(h0) = host_ports.first()
            && host_ports
                .iter()
                .any(|h| from(h) != from(h0) || rows(h) != rows(h0))
        {
            return broken("host ports differ".into());
        }
        tables.insert(
            v,
            Table {
                link_port,
                host_ports,
                ingress,
                transitions,
            },
        );
    }
    let peer = |v: u32, l: u32| {
        let [a, b] = topo.links()[l as usize];
        if a == v { b } else { a }
    };
    let channel = |from: u32, link: u32| -> u32 {
        topo.out_channels(from)
            .iter()
            .copied()
            .find(|&c| c >> 1 == link)
            .unwrap()
    };
    let mut edges: BTreeSet<((u32, u32), (u32, u32))> = BTreeSet::new();
    let mut used = 0;
    for (&v, t) in &tables {
        let link_of = |name: &str| {
            t.link_port
                .iter()
                .find(|(_, p)| *p == name)
                .map(|(l, _)| *l)
        };
        for (inp, _, out, t2, p, p2) in &t.transitions {
            used = used.max(*p).max(*p2);
            if p2 < p {
                return Err(Broken(format!("node {v}: priority {p} -> {p2}")));
            }
            let lout = link_of(out).unwrap();
            let w = peer(v, lout);
            let arriving = tables
                .get(&w)
                .and_then(|wt| wt.ingress.get(&(wt.link_port[&lout].clone(), *t2)))
                .map(|x| x.0);
            if arriving != Some(*p2) {
                return Err(Broken(format!(
                    "node {v} -> {w}: arrives {arriving:?}, left in {p2}"
                )));
            }
            if let Some(lin) = link_of(inp) {
                edges.insert(((channel(peer(v, lin), lin), *p), (channel(v, lout), *p2)));
            }
        }
    }
    if used != 0 && Some(used) != num(&summary["priorities"]) {
        return Err(Broken(format!("{used} priorities in use")));
    }
    let mut indeg: BTreeMap<(u32, u32), usize> = BTreeMap::new();
    let mut next: BTreeMap<(u32, u32), Vec<(u32, u32)>> = BTreeMap::new();
    for &(a, b) in &edges {
        indeg.entry(a).or_default();
        *indeg.entry(b).or_default() += 1;
        next.entry(a).or_default().push(b);
    }
    let mut ready: Vec<(u32, u32)> = indeg
        .iter()
        .filter(|(_, d)| **d == 0)
        .map(|(k, _)| *k)
        .collect();
    let mut done = 0;
    while let Some(x) = ready.pop() {
        done += 1;
        for y in next.get(&x).into_iter().flatten() {
            let d = indeg.get_mut(y).unwrap();
            *d -= 1;
            if *d == 0 {
                ready.push(*y);
            }
        }
    }
    if done != indeg.len() {
        return Err(Broken("a cycle".into()));
    }
    for p in paths {
        let first = tables
            .get(&p[0])
            .ok_or_else(|| Broken(format!("path {p:?}: no file")))?;
        for host in &first.host_ports {
            let mut tag = initial;
            let mut inp = host.clone();
            for (i, &v) in p.iter().enumerate() {
                let t = tables
                    .get(&v)
                    .ok_or_else(|| Broken(format!("path {p:?}: no file for {v}")))?;
                if i > 0 {
                    let l = t
                        .link_port
                        .keys()
                        .copied()
                        .find(|&l| peer(v, l) == p[i - 1])
                        .unwrap();
                    inp = t.link_port[&l].clone();
                }
                if !t.ingress.contains_key(&(inp.clone(), tag)) {
                    return Err(Broken(format!("path {p:?}: lossy into {v}")));
                }
                if i + 1 == p.len() {
                    break;
                }
                let l = t
                    .link_port
                    .keys()
                    .copied()
                    .find(|&l| peer(v, l) == p[i + 1])
                    .unwrap();
                let out = &t.link_port[&l];
                let Some(x) = t
                    .transitions
                    .iter()
                    .find(|x| x.0 == inp && x.1 == tag && x.2 == *out)
                else {
                    return Err(Broken(format!("path {p:?}: lossy out of {v}")));
                };
                tag = x.3;
            }
        }
    }
    Ok(())
}

/// One edit of a neutral table's switch file.
fn mutate_table(t: &mut Value, pick: &mut impl FnMut(usize) -> usize) {
    let len = |t: &Value, k: &str| t[k].as_array().map_or(0, Vec::len);
    match pick(6) {
        0 if len(t, "ingress") > 0 => {
            let i = pick(len(t, "ingress"));
            t["ingress"].as_array_mut().unwrap().remove(i);
        }
        1 if len(t, "ingress") > 0 => {
            let i = pick(len(t, "ingress"));
            t["ingress"][i]["priority"] = json!(1 + pick(3));
        }
        2 if len(t, "classes") > 0 => {
            let c = pick(len(t, "classes"));
            let n = len(&t["classes"][c], "egress");
            if n > 0 {
                let i = pick(n);
                t["classes"][c]["egress"].as_array_mut().unwrap().remove(i);
            }
        }
        3 if len(t, "classes") > 0 => {
            let c = pick(len(t, "classes"));
            let n = len(&t["classes"][c], "egress");
            if n > 0 {
                let i = pick(n);
                let k = ["tag", "priority"][pick(2)];
                t["classes"][c]["egress"][i][k] = json!(1 + pick(3));
            }
        }
        4 if len(t, "entries") > 0 => {
            let i = pick(len(t, "entries"));
            t["entries"].as_array_mut().unwrap().remove(i);
        }
        _ if len(t, "entries") > 0 => {
            let i = pick(len(t, "entries"));
            t["entries"][i]["next_tag"] = json!(1 + pick(3));
        }
        _ => {}
    }
}

/// The unmutated neutral tables: both sides accept.
#[test]
fn tables_run_as_verified() {
    for p in plans() {
        let ex = tagger::sonic::table(&p.topo, &p.rules).unwrap();
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().join("ex");
        write(&dir, &ex).unwrap();
        assert!(verified(p, &dir), "{}", p.topo.name());
        judge_table(&p.topo, &dir, &p.paths).unwrap();
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: std::env::var("FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(160), ..ProptestConfig::default() })]

    /// The neutral table under one or two random edits: the verifier
    /// accepts exactly what the table's switch model runs.
    #[test]
    fn verify_exported_tables_accept_exactly_what_runs(
        which in 0usize..4,
        seeds in proptest::collection::vec(any::<u64>(), 1..=2),
    ) {
        let p = &plans()[which];
        let ex = tagger::sonic::table(&p.topo, &p.rules).unwrap();
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().join("ex");
        write(&dir, &ex).unwrap();
        let mut edits = Vec::new();
        for seed in seeds {
            let mut x = seed;
            let mut pick = |n: usize| {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                ((x >> 33) as usize) % n.max(1)
            };
            let s = &ex.switches[pick(ex.switches.len())];
            let f = dir.join(format!("{}.json", s.node));
            let mut t: Value = serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
            let before = t.clone();
            mutate_table(&mut t, &mut pick);
            edits.push((s.node, before != t));
            std::fs::write(&f, t.to_string()).unwrap();
        }
        let judged = judge_table(&p.topo, &dir, &p.paths);
        let verdict = verified(p, &dir);
        let why = read(&p.topo, &dir)
            .map(|r| tagger::verify::verify(&p.topo, &r, Some(&p.elp)).to_string())
            .unwrap_or_else(|e| e.to_string());
        prop_assert_eq!(verdict, judged.is_ok(), "{} edits {:?}: verify: {}; model: {:?}", p.topo.name(), edits, why, judged.err().map(|b| b.0));
    }
}
