//! Mutated exports: `verify --exported` (the reader, then the verifier with
//! the ELP) must accept exactly the directories the switches would run as
//! the plan promises, as judged by an independent model of the switches
//! written here from SONiC's semantics (and the neutral table's own), not
//! from the reader's code.
//!
//! The model decodes each switch into the function it applies to every
//! packet. SONiC: a port's binding (`PORT_QOS_MAP`) applies only when every
//! map it names exists; a packet arriving with a DSCP goes to the TC its
//! port's `DSCP_TO_TC_MAP` gives (unlisted: TC 0) and the priority group of
//! `TC_TO_PRIORITY_GROUP_MAP`; the group is lossless when it is in the
//! port's `pfc_enable`, and then it needs a `BUFFER_PG` whose profile is in
//! the lossless ingress pool and holds the headroom SONiC's formula gives
//! for the port's speed and cable under the profile the export records. At
//! an out port the TC goes to the queue of `TC_TO_QUEUE_MAP` and leaves
//! with the DSCP of `TC_TO_DSCP_MAP` (unlisted, or no map: unchanged); the
//! queue stops when paused when it is in `pfc_enable`, and then it needs a
//! `BUFFER_QUEUE` in the lossless egress pool. The neutral table: a listed
//! (port, tag) is lossless in its class's priority; a class sends each
//! listed port its tag and priority, other link ports lossy with tag 0, and
//! delivers to hosts in its priority; anything unlisted is lossy, tag 0.
//!
//! The standard the model holds the directory to:
//!
//! - what is lossless carries a tag of the plan in one of its priorities,
//!   from hosts a tag they send; no ACL table;
//! - a packet the next switch classifies lossless left in the queue it
//!   pauses (not lossy, not another priority);
//! - a lossless packet delivered to a host leaves in a paused queue of its
//!   own priority;
//! - priorities never fall on a lossless transition, and the most in use
//!   is the summary's;
//! - the graph of buffer dependencies of every packet, any routing, U-turns
//!   included, has no cycle;
//! - each switch's traffic classes, lossless queues per port and headroom
//!   fit the recorded profile, and agree with summary.json; host ports act
//!   alike; a neutral table's entries are what its classes do;
//! - every ELP path, from every host port of its first switch, is lossless
//!   at every hop.
//!
//! One file past 600 lines on purpose: the independent switch model the
//! fuzzing judges by must be read whole, apart from the reader it checks.

use proptest::prelude::*;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use tagger::elp::{ElpSet, ElpSpec, enumerate};
use tagger::rules::RuleSet;
use tagger::sonic::{Options, export, read, table, write};
use tagger::topo::{Topology, TopologySpec};

/// A number written as a JSON number or a string.
fn num(v: &Value) -> Option<u32> {
    v.as_u64()
        .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
        .and_then(|x| u32::try_from(x).ok())
}

/// A broken promise: the directory is not installable as a plan.
#[derive(Debug)]
struct Broken(String);

fn broken<T>(why: String) -> Result<T, Broken> {
    Err(Broken(why))
}

/// How a packet arrives at a port: its class and, when lossless there, its
/// priority group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Arrive {
    class: u32,
    group: Option<u32>,
}

/// What a class does at a port: the queue, the header value it leaves with
/// (`None`: as it came), whether the queue stops when paused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Leave {
    queue: u32,
    value: Option<u32>,
    paused: bool,
}

/// One switch as the model runs it.
struct Model {
    /// Port name -> link (`None`: a host port).
    ports: BTreeMap<String, Option<u32>>,
    /// Per port, per header value 0..64.
    arrive: BTreeMap<String, Vec<Arrive>>,
    /// Per class, per port.
    leave: BTreeMap<u32, BTreeMap<String, Leave>>,
}

/// What `summary.json` says, as the model reads it.
struct Summary {
    tag_of: Box<dyn Fn(u32) -> Option<u32>>,
    priority_of: Box<dyn Fn(u32) -> Option<u32>>,
    host_values: Vec<u32>,
    host_tags: Vec<u32>,
    priorities: u32,
}

/// SONiC's headroom formula (Mellanox, sonic-swss buffer_headroom_mellanox.lua)
/// or the Tagger drafts' estimate, from the profile's TOML alone.
fn headroom(p: &toml::Table, speed_gbps: f64, cable_m: f64) -> (u64, u64) {
    let f = |k: &str| -> f64 {
        match p.get(k) {
            Some(toml::Value::Integer(i)) => *i as f64,
            Some(toml::Value::Float(x)) => *x,
            _ => 0.0,
        }
    };
    let ceil_1024 = |x: f64| ((x / 1024.0).ceil() * 1024.0) as u64;
    if p.get("headroom").and_then(|v| v.as_str()) == Some("sonic") {
        let cell = f("cell_bytes");
        let wcf = if cell > 128.0 {
            cell / 64.0
        } else {
            2.0 * cell / (1.0 + cell)
        };
        let spp = f("small_packet_percent");
        let occ = (100.0 - spp + spp * wcf) / 100.0;
        let quanta = [
            (10.0, 67.0),
            (25.0, 80.0),
            (40.0, 118.0),
            (50.0, 147.0),
            (100.0, 394.0),
            (200.0, 453.0),
            (400.0, 905.0),
        ];
        let peer = quanta
            .iter()
            .find(|(s, _)| *s == speed_gbps)
            .map_or(f("peer_response_bytes"), |(_, q)| q * 512.0 / 8.0);
        let bps = speed_gbps * 1e9;
        let cable = 2.0 * cable_m * bps / 198e6 / 8.0;
        let gearbox = bps * f("gearbox_delay_ns") * 1e-9 / 8.0;
        let prop = f("port_mtu") + cable + 2.0 * gearbox + f("mac_phy_delay_bytes") + peer;
        (
            ceil_1024(f("lossless_mtu") + prop * occ),
            ceil_1024(f("pipeline_latency_bytes")),
        )
    } else {
        let bytes_per_s = speed_gbps * 1e9 / 8.0;
        let x =
            2.0 * (f("lossless_mtu") + 64.0 + bytes_per_s * cable_m * 5e-9) + 60.0 * 512.0 / 8.0;
        (x.ceil() as u64, 0)
    }
}

/// A SONiC switch file decoded, its buffers and fit checked against the
/// recorded profile.
fn sonic_switch(v: u32, db: &Value, profile: &toml::Table) -> Result<Model, Broken> {
    for t in ["ACL_TABLE", "ACL_RULE", "ACL_TABLE_TYPE"] {
        if !db[t].is_null() {
            return broken(format!("node {v}: {t}"));
        }
    }
    let mut ports = BTreeMap::new();
    for (name, p) in db["PORT"].as_object().into_iter().flatten() {
        let d = p["description"].as_str().unwrap_or("");
        if d == "host port" {
            ports.insert(name.clone(), None);
        } else if let Some(rest) = d.strip_prefix("link ") {
            ports.insert(name.clone(), rest.split(' ').next().unwrap().parse().ok());
        }
    }
    let load =
        |table: &str, name: &Value, keys: u32, vals: u32| -> Result<BTreeMap<u32, u32>, Broken> {
            let Some(m) = name.as_str().and_then(|n| db[table][n].as_object()) else {
                return broken(format!("node {v}: {table} {name} does not load"));
            };
            m.iter()
                .map(|(k, x)| match (k.parse::<u32>().ok(), num(x)) {
                    (Some(k), Some(x)) if k <= keys && x <= vals => Ok((k, x)),
                    _ => broken(format!("node {v}: {table} {name}: {k} -> {x}")),
                })
                .collect()
        };
    let int = |k: &str| -> u64 { profile.get(k).and_then(|x| x.as_integer()).unwrap_or(0) as u64 };
    let shared = profile
        .get("shared_headroom_pool")
        .and_then(|x| x.as_bool())
        .unwrap_or(false);
    let oversub = profile
        .get("oversubscription")
        .and_then(|x| x.as_float())
        .unwrap_or(1.0);
    let mut arrive = BTreeMap::new();
    let mut egress_maps = BTreeMap::new();
    let (mut xoff_sum, mut xon_sum, mut most) = (0u64, 0u64, 0usize);
    let mut pfcs = BTreeMap::new();
    for (name, link) in &ports {
        let b = &db["PORT_QOS_MAP"][name.as_str()];
        if b.is_null() {
            if link.is_some() {
                return broken(format!("node {v}: link port {name} without a binding"));
            }
            // A host port with no maps bound: SONiC puts everything it
            // takes in TC 0, and with no pfc_enable nothing leaves it
            // paused. Still a host port, so the paths from it are judged.
            arrive.insert(
                name.clone(),
                vec![
                    Arrive {
                        class: 0,
                        group: None
                    };
                    64
                ],
            );
            egress_maps.insert(name.clone(), ((0..16).map(|tc| (tc, 0)).collect(), None));
            pfcs.insert(name.clone(), BTreeSet::new());
            continue;
        }
        for k in ["dscp_to_tc_map", "tc_to_pg_map", "tc_to_queue_map"] {
            if b[k].is_null() {
                return broken(format!("node {v}: {name} binds no {k}"));
            }
        }
        let d2t = load("DSCP_TO_TC_MAP", &b["dscp_to_tc_map"], 63, 15)?;
        let t2g = load("TC_TO_PRIORITY_GROUP_MAP", &b["tc_to_pg_map"], 15, 7)?;
        let t2q = load("TC_TO_QUEUE_MAP", &b["tc_to_queue_map"], 15, 7)?;
        let t2d = if b["tc_to_dscp_map"].is_null() {
            None
        } else {
            Some(load("TC_TO_DSCP_MAP", &b["tc_to_dscp_map"], 15, 63)?)
        };
        let text = match &b["pfc_enable"] {
            Value::Null => "",
            Value::String(t) => t.as_str(),
            _ => return broken(format!("node {v}: {name} pfc_enable")),
        };
        let mut pfc = BTreeSet::new();
        if !text.is_empty() {
            for x in text.split(',') {
                match x.as_bytes() {
                    [d @ b'0'..=b'7'] => {
                        pfc.insert(u32::from(d - b'0'));
                    }
                    _ => return broken(format!("node {v}: {name} pfc_enable {text}")),
                }
            }
        }
        // The headroom this port needs per lossless group.
        let speed = num(&db["PORT"][name.as_str()]["speed"]).filter(|&s| s > 0);
        let cable = db["CABLE_LENGTH"]["AZURE"][name.as_str()]
            .as_str()
            .and_then(|t| t.strip_suffix('m'))
            .and_then(|t| t.parse::<f64>().ok());
        let mut row = Vec::with_capacity(64);
        let mut groups = BTreeSet::new();
        for d in 0..64u32 {
            let tc = d2t.get(&d).copied().unwrap_or(0);
            let Some(&g) = t2g.get(&tc) else {
                return broken(format!("node {v}: {name}: TC {tc} has no group"));
            };
            let lossless = g != 0 && pfc.contains(&g);
            if lossless {
                let buf = db["BUFFER_PG"][format!("{name}|{g}")]["profile"]
                    .as_str()
                    .map(|p| &db["BUFFER_PROFILE"][p]);
                let (Some(prof), Some(s), Some(c)) = (buf.filter(|p| p.is_object()), speed, cable)
                else {
                    return broken(format!("node {v}: {name} group {g} unbuffered"));
                };
                let (xoff, xon) = headroom(profile, f64::from(s) / 1000.0, c);
                let size_need = if shared { xon } else { xoff + xon };
                let got = |k: &str| num(&prof[k]).map(u64::from);
                if prof["pool"] != json!("ingress_lossless_pool")
                    || got("xoff").is_none_or(|x| x < xoff)
                    || got("xon").is_none_or(|x| x < xon)
                    || got("size").is_none_or(|x| x < size_need)
                {
                    return broken(format!("node {v}: {name} group {g} headroom"));
                }
                if groups.insert(g) {
                    xoff_sum += xoff;
                    xon_sum += xon;
                }
            }
            row.push(Arrive {
                class: tc,
                group: lossless.then_some(g),
            });
        }
        let queues: BTreeSet<u32> = t2q.values().copied().filter(|q| pfc.contains(q)).collect();
        most = most.max(groups.union(&queues).count());
        arrive.insert(name.clone(), row);
        egress_maps.insert(name.clone(), (t2q, t2d));
        pfcs.insert(name.clone(), pfc);
    }
    let used: BTreeSet<u32> = arrive.values().flatten().map(|a| a.class).collect();
    let mut leave: BTreeMap<u32, BTreeMap<String, Leave>> = BTreeMap::new();
    for &tc in &used {
        for (name, (t2q, t2d)) in &egress_maps {
            let Some(&q) = t2q.get(&tc) else {
                return broken(format!("node {v}: {name}: TC {tc} has no queue"));
            };
            let paused = q != 0 && pfcs[name].contains(&q);
            if paused {
                let pool = db["BUFFER_QUEUE"][format!("{name}|{q}")]["profile"]
                    .as_str()
                    .map(|p| &db["BUFFER_PROFILE"][p]["pool"]);
                if pool != Some(&json!("egress_lossless_pool")) {
                    return broken(format!("node {v}: {name} queue {q} unbuffered"));
                }
            }
            leave.entry(tc).or_default().insert(
                name.clone(),
                Leave {
                    queue: q,
                    value: t2d.as_ref().and_then(|m| m.get(&tc).copied()),
                    paused,
                },
            );
        }
    }
    // The fit to the recorded profile.
    let reserved = if shared {
        xon_sum + (xoff_sum as f64 / oversub).ceil() as u64
    } else {
        xoff_sum + xon_sum
    };
    if most as u64 > int("lossless_queues") || reserved > int("lossless_buffer_bytes") {
        return broken(format!("node {v}: does not fit"));
    }
    let tcs = used.iter().filter(|&&k| k != 0).count() as u64;
    if tcs + 1 > int("traffic_classes").max(8) {
        return broken(format!("node {v}: {tcs} traffic classes"));
    }
    let ports = ports
        .into_iter()
        .filter(|(n, _)| arrive.contains_key(n))
        .collect();
    Ok(Model {
        ports,
        arrive,
        leave,
    })
}

/// A neutral table decoded; its entries must be what its classes do.
fn table_switch(v: u32, t: &Value) -> Result<Model, Broken> {
    let mut ports = BTreeMap::new();
    for p in t["ports"].as_array().into_iter().flatten() {
        ports.insert(
            p["name"].as_str().unwrap_or("").to_string(),
            num(&p["link"]),
        );
    }
    let lossy = Leave {
        queue: 0,
        value: Some(0),
        paused: false,
    };
    let mut leave: BTreeMap<u32, BTreeMap<String, Leave>> = BTreeMap::new();
    leave.insert(0, ports.keys().map(|n| (n.clone(), lossy)).collect());
    let mut prio_of = BTreeMap::new();
    for c in t["classes"].as_array().into_iter().flatten() {
        let (Some(k), Some(p)) = (num(&c["class"]), num(&c["priority"])) else {
            return broken(format!("node {v}: class {c}"));
        };
        if k == 0 || p == 0 || leave.contains_key(&k) {
            return broken(format!("node {v}: class {c}"));
        }
        let mut row: BTreeMap<String, Leave> = ports
            .iter()
            .map(|(n, l)| {
                let x = match l {
                    Some(_) => lossy,
                    None => Leave {
                        queue: p,
                        value: None,
                        paused: true,
                    },
                };
                (n.clone(), x)
            })
            .collect();
        for e in c["egress"].as_array().into_iter().flatten() {
            let name = e["port"].as_str().unwrap_or("");
            match (ports.get(name), num(&e["tag"]), num(&e["priority"])) {
                (Some(Some(_)), Some(tag), Some(q)) if tag > 0 && q > 0 && tag < 64 => {
                    row.insert(
                        name.to_string(),
                        Leave {
                            queue: q,
                            value: Some(tag),
                            paused: true,
                        },
                    );
                }
                _ => return broken(format!("node {v}: class {k} egress {e}")),
            }
        }
        prio_of.insert(k, p);
        leave.insert(k, row);
    }
    let none = Arrive {
        class: 0,
        group: None,
    };
    let mut arrive: BTreeMap<String, Vec<Arrive>> =
        ports.keys().map(|n| (n.clone(), vec![none; 64])).collect();
    for r in t["ingress"].as_array().into_iter().flatten() {
        let name = r["port"].as_str().unwrap_or("");
        let (Some(row), Some(tag), Some(p), Some(k)) = (
            arrive.get_mut(name),
            num(&r["tag"]),
            num(&r["priority"]),
            num(&r["class"]),
        ) else {
            return broken(format!("node {v}: ingress {r}"));
        };
        if tag == 0 || tag >= 64 || prio_of.get(&k) != Some(&p) || row[tag as usize] != none {
            return broken(format!("node {v}: ingress {r}"));
        }
        row[tag as usize] = Arrive {
            class: k,
            group: Some(p),
        };
    }
    // The entries: what the classes do, on the listed ports.
    for e in t["entries"].as_array().into_iter().flatten() {
        let names = |k: &str| -> Vec<String> {
            e[k].as_array()
                .into_iter()
                .flatten()
                .filter_map(|x| x.as_str().map(str::to_string))
                .collect()
        };
        let (Some(tag), Some(t2), Some(p), Some(p2)) = (
            num(&e["tag"]),
            num(&e["next_tag"]),
            num(&e["priority"]),
            num(&e["next_priority"]),
        ) else {
            return broken(format!("node {v}: entry {e}"));
        };
        for i in names("in_ports") {
            for o in names("out_ports") {
                let a = arrive.get(&i).and_then(|r| r.get(tag as usize)).copied();
                let l = a.and_then(|a| leave[&a.class].get(&o).copied());
                let ok = matches!((a, l), (Some(a), Some(l))
                    if a.group == Some(p) && l.paused && l.queue == p2 && l.value == Some(t2)
                        && ports.get(&o).is_some_and(Option::is_some));
                if !ok {
                    return broken(format!("node {v}: entry {e} is not what its classes do"));
                }
            }
        }
    }
    Ok(Model {
        ports,
        arrive,
        leave,
    })
}

/// The independent judgement: does the exported directory keep its
/// promise and run every ELP path losslessly, deadlock-free?
fn switch_would_run(topo: &Topology, dir: &std::path::Path, paths: &[Vec<u32>]) -> bool {
    judge(topo, dir, paths).is_ok()
}

fn judge(topo: &Topology, dir: &std::path::Path, paths: &[Vec<u32>]) -> Result<(), Broken> {
    let summary: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap();
    let sonic = summary["format"] == json!("tagger-sonic/3");
    let most_tag = num(&summary["tags"]).unwrap();
    let host_tags: Vec<u32> = match summary["classes"].as_array() {
        Some(a) if !a.is_empty() => a.iter().map(|x| num(x).unwrap()).collect(),
        _ => vec![num(&summary["initial_tag"]).unwrap()],
    };
    let s = if sonic {
        let list = |k: &str| -> Vec<u32> {
            summary["mapping"][k]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| num(x).unwrap())
                .collect()
        };
        let (dscp, queues) = (list("dscp_of_tag"), list("queue_of_priority"));
        let host_values = host_tags.iter().map(|&t| dscp[t as usize - 1]).collect();
        let d2 = dscp.clone();
        Summary {
            tag_of: Box::new(move |d| {
                d2.iter()
                    .position(|&x| x == d)
                    .map(|i| i as u32 + 1)
                    .filter(|&t| t <= most_tag)
            }),
            priority_of: Box::new(move |q| {
                queues.iter().position(|&x| x == q).map(|i| i as u32 + 1)
            }),
            host_values,
            host_tags: host_tags.clone(),
            priorities: num(&summary["priorities"]).unwrap(),
        }
    } else {
        Summary {
            tag_of: Box::new(move |x| (x > 0 && x <= most_tag).then_some(x)),
            priority_of: Box::new(|g| (g > 0).then_some(g)),
            host_values: host_tags.clone(),
            host_tags: host_tags.clone(),
            priorities: num(&summary["priorities"]).unwrap(),
        }
    };
    let profile: Option<toml::Table> = summary["switch_profile"].as_str().map(|t| {
        let doc: toml::Table = toml::from_str(t).unwrap();
        doc.values().next().unwrap().as_table().unwrap().clone()
    });
    let mut models: BTreeMap<u32, Model> = BTreeMap::new();
    for sw in summary["switches"].as_array().unwrap() {
        let v = num(&sw["node"]).unwrap();
        let text = std::fs::read_to_string(dir.join(format!("{v}.json"))).unwrap();
        let db: Value = match serde_json::from_str(&text) {
            Ok(x) => x,
            Err(_) => return broken(format!("node {v}: not JSON")),
        };
        let m = match &profile {
            Some(p) => sonic_switch(v, &db, p)?,
            None => table_switch(v, &db)?,
        };
        // The summary's per-switch counts agree.
        let classes = m.leave.keys().filter(|&&k| k != 0).count() as u32;
        let (key, want) = if sonic {
            (
                "tcs",
                m.arrive
                    .values()
                    .flatten()
                    .map(|a| a.class)
                    .filter(|&k| k != 0)
                    .collect::<BTreeSet<_>>()
                    .len() as u32,
            )
        } else {
            ("classes", classes)
        };
        if num(&sw[key]) != Some(want) {
            return broken(format!("node {v}: summary {key}"));
        }
        if !sonic && num(&sw["entries"]) != db["entries"].as_array().map(|a| a.len() as u32) {
            return broken(format!("node {v}: summary entries"));
        }
        models.insert(v, m);
    }
    let peer = |v: u32, l: u32| {
        let [a, b] = topo.links()[l as usize];
        if a == v { b } else { a }
    };
    let channel = |from: u32, l: u32| -> u32 {
        let [a, _] = topo.links()[l as usize];
        2 * l + u32::from(a != from)
    };
    // How switch w takes value x over link l.
    let at = |w: u32, l: u32, x: u32| -> Option<Arrive> {
        let m = models.get(&w)?;
        let port = m.ports.iter().find(|(_, k)| **k == Some(l))?.0;
        m.arrive[port].get(x as usize).copied()
    };
    let mut edges: BTreeSet<((u32, u32), (u32, u32))> = BTreeSet::new();
    let mut used = 0;
    for (&v, m) in &models {
        // Per header value: its group and what leaves on each link.
        type HostView = Vec<(u32, Option<u32>, Vec<(u32, Leave)>)>;
        let mut host_view: Option<HostView> = None;
        for (name, &link) in &m.ports {
            let mut view = Vec::new();
            for (x, a) in m.arrive[name].iter().enumerate() {
                let x = x as u32;
                let row = &m.leave[&a.class];
                if let Some(g) = a.group {
                    let Some(tag) = (s.tag_of)(x) else {
                        return broken(format!("node {v}: {name}: {x} lossless, no tag"));
                    };
                    let Some(p) = (s.priority_of)(g) else {
                        return broken(format!("node {v}: {name}: group {g} not lossless"));
                    };
                    if link.is_none() && !s.host_tags.contains(&tag) {
                        return broken(format!("node {v}: host port takes tag {tag}"));
                    }
                    // Delivered to hosts in a paused queue of its group.
                    for (h, hl) in &m.ports {
                        if hl.is_none() {
                            let out = row[h];
                            if !(out.paused && out.queue == g) {
                                return broken(format!("node {v}: delivery at {h}"));
                            }
                        }
                    }
                    used = used.max(p);
                }
                let mut outs = Vec::new();
                for (o, &ol) in &m.ports {
                    let Some(lo) = ol else { continue };
                    let out = row[o];
                    outs.push((lo, out));
                    let x2 = out.value.unwrap_or(x);
                    let w = peer(v, lo);
                    let there = at(w, lo, x2);
                    let Some(gw) = there.and_then(|t| t.group) else {
                        continue;
                    };
                    if !(out.paused && out.queue == gw) {
                        return broken(format!(
                            "node {v} -> {w} on link {lo}: {x2} arrives in {gw} from queue {} (paused {})",
                            out.queue, out.paused
                        ));
                    }
                    let Some(g) = a.group else { continue };
                    let (p, p2) = ((s.priority_of)(g).unwrap(), (s.priority_of)(gw).unwrap());
                    if p2 < p {
                        return broken(format!("node {v}: priority {p} -> {p2}"));
                    }
                    used = used.max(p2);
                    if (s.tag_of)(x2).is_none() {
                        return broken(format!("node {w}: {x2} lossless, no tag"));
                    }
                    if let Some(l) = link {
                        edges.insert(((channel(w_of(topo, v, l), l), g), (channel(v, lo), gw)));
                    }
                }
                // Dependencies through a paused queue whose group at the
                // next switch is lossless for other packets.
                if let (Some(g), Some(l)) = (a.group, link) {
                    for (o, &ol) in &m.ports {
                        let Some(lo) = ol else { continue };
                        let out = row[o];
                        if !out.paused {
                            continue;
                        }
                        let w = peer(v, lo);
                        let lossless_there = models.get(&w).is_some_and(|wm| {
                            wm.ports
                                .iter()
                                .find(|(_, k)| **k == Some(lo))
                                .is_some_and(|(wp, _)| {
                                    wm.arrive[wp].iter().any(|a| a.group == Some(out.queue))
                                })
                        });
                        if lossless_there {
                            edges.insert((
                                (channel(w_of(topo, v, l), l), g),
                                (channel(v, lo), out.queue),
                            ));
                        }
                    }
                }
                if link.is_none() {
                    view.push((x, a.group, outs));
                }
            }
            if link.is_none() {
                match &host_view {
                    None => host_view = Some(view),
                    Some(h) if *h != view => return broken(format!("node {v}: host ports differ")),
                    Some(_) => {}
                }
            }
        }
    }
    if used != 0 && used != s.priorities {
        return broken(format!("{used} priorities in use"));
    }
    // Kahn's algorithm over the dependency graph.
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
        return broken("a cycle".into());
    }
    // Every ELP path, from every host port of its first switch.
    for p in paths {
        let Some(first) = models.get(&p[0]) else {
            return broken(format!("path {p:?}: no file"));
        };
        for (host, hl) in &first.ports {
            if hl.is_some() {
                continue;
            }
            let mut x = s.host_values[0];
            let mut port = host.clone();
            for (i, &v) in p.iter().enumerate() {
                let m = models
                    .get(&v)
                    .ok_or_else(|| Broken(format!("path {p:?}: no file for {v}")))?;
                let a = m.arrive[&port][x as usize];
                if a.group.is_none() {
                    return broken(format!("path {p:?}: lossy at {v}"));
                }
                if i + 1 == p.len() {
                    break;
                }
                let (o, lo) = m
                    .ports
                    .iter()
                    .find_map(|(n, &l)| l.filter(|&l| peer(v, l) == p[i + 1]).map(|l| (n, l)))
                    .unwrap();
                let out = m.leave[&a.class][o];
                if !out.paused {
                    return broken(format!("path {p:?}: lossy out of {v}"));
                }
                x = out.value.unwrap_or(x);
                let w = p[i + 1];
                port = models
                    .get(&w)
                    .and_then(|wm| wm.ports.iter().find(|(_, k)| **k == Some(lo)))
                    .map(|(n, _)| n.clone())
                    .ok_or_else(|| Broken(format!("path {p:?}: no file for {w}")))?;
            }
        }
    }
    Ok(())
}

/// The node at the other end of link `l` from `v`.
fn w_of(topo: &Topology, v: u32, l: u32) -> u32 {
    let [a, b] = topo.links()[l as usize];
    if a == v { b } else { a }
}

/// One edit of one SONiC switch file: a field an export writes, or one of
/// the edits a careful operator (or a wrong translator) might make.
fn mutate(db: &mut Value, pick: &mut impl FnMut(usize) -> usize) {
    let ports: Vec<String> = db["PORT_QOS_MAP"]
        .as_object()
        .map(|o| o.keys().cloned().collect())
        .unwrap_or_default();
    let port = ports[pick(ports.len())].clone();
    // A private copy of `port`'s map `key`, edited by `f`.
    let own = |db: &mut Value, key: &str, table: &str, f: &dyn Fn(&mut Value)| {
        let Some(name) = db["PORT_QOS_MAP"][&port][key].as_str().map(str::to_string) else {
            return;
        };
        let mut m = db[table][&name].clone();
        f(&mut m);
        let mine = format!("EDIT_{}_{key}", port.replace('/', "_"));
        db[table][&mine] = m;
        db["PORT_QOS_MAP"][&port][key] = json!(mine);
    };
    match pick(12) {
        // A U-turn kept: what arrives at the port with some DSCP leaves
        // back on it with that DSCP, in its group's queue.
        0 => {
            let d2t = db["PORT_QOS_MAP"][&port]["dscp_to_tc_map"]
                .as_str()
                .map(str::to_string);
            let Some(d2t) = d2t else { return };
            let pairs: Vec<(String, String)> = db["DSCP_TO_TC_MAP"][&d2t]
                .as_object()
                .map(|o| {
                    o.iter()
                        .map(|(k, v)| (k.clone(), v.as_str().unwrap_or("0").to_string()))
                        .collect()
                })
                .unwrap_or_default();
            if pairs.is_empty() {
                return;
            }
            let (d, tc) = pairs[pick(pairs.len())].clone();
            let g = db["TC_TO_PRIORITY_GROUP_MAP"]
                .as_object()
                .and_then(|o| o.values().next())
                .map(|m| m[&tc].clone())
                .unwrap_or(json!("0"));
            own(db, "tc_to_queue_map", "TC_TO_QUEUE_MAP", &|m| {
                m[&tc] = g.clone()
            });
            own(db, "tc_to_dscp_map", "TC_TO_DSCP_MAP", &|m| {
                m[&tc] = json!(d.clone())
            });
        }
        // Best effort leaves as a tag.
        1 => {
            let d = ["3", "4", "5"][pick(3)];
            own(db, "tc_to_dscp_map", "TC_TO_DSCP_MAP", &|m| {
                m["0"] = json!(d)
            });
        }
        // A DSCP that is no tag (or one hosts do not send) taken lossless.
        2 => {
            let (d, tc) = (["10", "4", "0"][pick(3)], ["1", "2", "3"][pick(3)]);
            own(db, "dscp_to_tc_map", "DSCP_TO_TC_MAP", &|m| {
                m[d] = json!(tc)
            });
        }
        // A port's classes sent out in the lossy queue or queue 7.
        3 => {
            let q = ["0", "7"][pick(2)];
            own(db, "tc_to_queue_map", "TC_TO_QUEUE_MAP", &|m| {
                for (k, v) in m.as_object_mut().unwrap() {
                    if k != "0" {
                        *v = json!(q);
                    }
                }
            });
        }
        // The buffers.
        4 => {
            let profiles: Vec<String> = db["BUFFER_PROFILE"]
                .as_object()
                .map(|o| o.keys().cloned().collect())
                .unwrap_or_default();
            if profiles.is_empty() {
                return;
            }
            let p = profiles[pick(profiles.len())].clone();
            let (k, x) = [
                ("xoff", "1"),
                ("xon", "0"),
                ("size", "1000"),
                ("pool", "ingress_lossy_pool"),
                ("pool", "egress_lossy_pool"),
                ("pool", "no_such_pool"),
                ("xoff", "99999999"),
            ][pick(7)];
            db["BUFFER_PROFILE"][&p][k] = json!(x);
        }
        5 => db["PORT"][&port]["speed"] = json!(["400000", "10000", "x"][pick(3)]),
        6 => db["CABLE_LENGTH"]["AZURE"][&port] = json!(["40000m", "1m", "3"][pick(3)]),
        // An ACL table bound to the ports.
        7 => {
            db["ACL_TABLE"] = json!({"MINE": {"type": "L3", "stage": "egress", "ports": [port]}});
            db["ACL_RULE"] = json!({"MINE|R1": {"PRIORITY": "1", "PACKET_ACTION": "DROP"}});
        }
        8 => {
            db["PORT_QOS_MAP"][&port]["pfc_enable"] =
                json!(["", "3", "4", "3,4,9", "3,5", "0,3,4", "3,4,5"][pick(7)]);
        }
        9 => {
            let key = [
                "dscp_to_tc_map",
                "tc_to_queue_map",
                "tc_to_pg_map",
                "tc_to_dscp_map",
            ][pick(4)];
            db["PORT_QOS_MAP"][&port][key] = json!("MISSING");
        }
        // Delete an entry of some table.
        10 => {
            let tables = [
                "PORT_QOS_MAP",
                "BUFFER_PG",
                "BUFFER_QUEUE",
                "BUFFER_PROFILE",
                "DSCP_TO_TC_MAP",
            ];
            let t = tables[pick(tables.len())];
            let keys: Vec<String> = db[t]
                .as_object()
                .map(|o| o.keys().cloned().collect())
                .unwrap_or_default();
            if !keys.is_empty() {
                let k = keys[pick(keys.len())].clone();
                db[t].as_object_mut().unwrap().remove(&k);
            }
        }
        // A map's value.
        _ => {
            let tables = [
                "DSCP_TO_TC_MAP",
                "TC_TO_PRIORITY_GROUP_MAP",
                "TC_TO_QUEUE_MAP",
                "TC_TO_DSCP_MAP",
            ];
            let t = tables[pick(tables.len())];
            let names: Vec<String> = db[t]
                .as_object()
                .map(|o| o.keys().cloned().collect())
                .unwrap_or_default();
            if names.is_empty() {
                return;
            }
            let n = names[pick(names.len())].clone();
            let inner: Vec<String> = db[t][&n]
                .as_object()
                .map(|o| o.keys().cloned().collect())
                .unwrap_or_default();
            if !inner.is_empty() {
                let k = inner[pick(inner.len())].clone();
                let max = if t == "TC_TO_DSCP_MAP" { 64 } else { 8 };
                db[t][&n][&k] = json!(pick(max).to_string());
            }
        }
    }
}

/// One edit of one neutral table.
fn mutate_table(t: &mut Value, pick: &mut impl FnMut(usize) -> usize) {
    let n = |t: &Value, k: &str| t[k].as_array().map_or(0, Vec::len);
    match pick(7) {
        0 if n(t, "classes") > 0 => {
            let i = pick(n(t, "classes"));
            let p = t["classes"][i]["priority"].as_u64().unwrap_or(1);
            t["classes"][i]["priority"] = json!(if p > 1 { p - 1 } else { p + 1 });
        }
        // Every class folded to priority 1, ingress rows too.
        1 => {
            for c in t["classes"].as_array_mut().into_iter().flatten() {
                c["priority"] = json!(1);
            }
            for r in t["ingress"].as_array_mut().into_iter().flatten() {
                r["priority"] = json!(1);
            }
        }
        2 if n(t, "ingress") > 0 => {
            let i = pick(n(t, "ingress"));
            t["ingress"].as_array_mut().unwrap().remove(i);
        }
        3 if n(t, "classes") > 0 => {
            let i = pick(n(t, "classes"));
            let e = n(&t["classes"][i], "egress");
            if e > 0 {
                let j = pick(e);
                let tag = t["classes"][i]["egress"][j]["tag"].as_u64().unwrap_or(1);
                t["classes"][i]["egress"][j]["tag"] = json!(tag % 3 + 1);
            }
        }
        4 => t["entries"] = json!([]),
        5 if n(t, "entries") > 0 => {
            let i = pick(n(t, "entries"));
            t["entries"][i]["next_tag"] = json!(pick(3) + 1);
        }
        _ if n(t, "classes") > 0 => {
            // A U-turn kept at one port: a class sends its own arrivals
            // back at their priority.
            let i = pick(n(t, "ingress").max(1));
            let r = t["ingress"][i].clone();
            if let (Some(c), Some(p)) = (r["class"].as_u64(), r["priority"].as_u64()) {
                for cl in t["classes"].as_array_mut().unwrap() {
                    if cl["class"].as_u64() == Some(c) {
                        let port = r["port"].clone();
                        if let Some(eg) = cl["egress"].as_array_mut() {
                            eg.retain(|e| e["port"] != port);
                            eg.push(json!({"port": port, "tag": r["tag"], "priority": p}));
                        }
                    }
                }
            }
        }
        _ => {}
    }
}

struct Plan {
    topo: Topology,
    elp: ElpSet,
    elp_text: String,
    rules: RuleSet,
    paths: Vec<Vec<u32>>,
}

fn plan(topo: &str, elp: &str, algo: &str) -> Plan {
    let t = TopologySpec::parse(topo).unwrap().build().unwrap();
    let e = ElpSet::build(&t, &ElpSpec::parse(elp).unwrap()).unwrap();
    let budget = tagger::budget::Budget::unlimited();
    let control = tagger::tagging::Control::new();
    let cx = tagger::tagging::Context::new(&t, &e, &budget, &control).with_max_tcs(Some(7));
    let tg = tagger::tagging::tag_in(&cx, algo.parse().unwrap()).unwrap();
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
        elp_text: elp.to_string(),
        rules,
        paths,
    }
}

/// Options whose profile has room for every plan here (queues, buffer).
fn options(p: &Plan) -> Options {
    let mut o = Options {
        elp: Some(p.elp_text.clone()),
        ..Default::default()
    };
    o.profile.lossless_queues = 8;
    o
}

/// What `tagger verify --exported DIR` decides: the read-back, then the
/// verifier with the ELP the export records.
fn verified(p: &Plan, dir: &std::path::Path) -> bool {
    match read(&p.topo, dir) {
        Ok(r) => tagger::verify::verify(&p.topo, &r.rules, Some(&p.elp)).ok(),
        Err(_) => false,
    }
}

fn why(p: &Plan, dir: &std::path::Path) -> String {
    read(&p.topo, dir)
        .map(|r| tagger::verify::verify(&p.topo, &r.rules, Some(&p.elp)).to_string())
        .unwrap_or_else(|e| e.to_string())
}

fn plans() -> &'static [Plan] {
    static PLANS: std::sync::OnceLock<Vec<Plan>> = std::sync::OnceLock::new();
    PLANS.get_or_init(|| {
        vec![
            plan("fattree:k=4", "kbounce:1", "clos"),
            plan("jellyfish:n=20,ports=6,r=4,seed=1", "shortest", "brute"),
            plan("leafspine:leaves=4,spines=2,hosts=1", "kbounce:1", "search"),
            plan("jellyfish:n=16,ports=6,r=4,seed=3", "shortest", "greedy"),
        ]
    })
}

/// The unmutated exports, SONiC and neutral: both sides accept.
#[test]
fn exports_run_as_verified() {
    for p in plans() {
        for ex in [
            export(&p.topo, &p.rules, &options(p)).unwrap(),
            table(&p.topo, &p.rules, Some(&p.elp_text)).unwrap(),
        ] {
            let d = tempfile::tempdir().unwrap();
            let dir = d.path().join("ex");
            write(&dir, &ex).unwrap();
            assert!(verified(p, &dir), "{}: {}", p.topo.name(), why(p, &dir));
            let j = judge(&p.topo, &dir, &p.paths);
            assert!(j.is_ok(), "{}: {:?}", p.topo.name(), j.err());
        }
    }
}

/// Edits `n` random switch files of an export of plan `which` with
/// `edit`, then compares the two verdicts.
fn fuzz_one(which: usize, seeds: &[u64], neutral: bool) -> Result<(), TestCaseError> {
    let p = &plans()[which];
    let ex = if neutral {
        table(&p.topo, &p.rules, Some(&p.elp_text)).unwrap()
    } else {
        export(&p.topo, &p.rules, &options(p)).unwrap()
    };
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("ex");
    write(&dir, &ex).unwrap();
    let mut edits = Vec::new();
    for &seed in seeds {
        let mut x = seed;
        let mut pick = |n: usize| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((x >> 33) as usize) % n.max(1)
        };
        let s = &ex.switches[pick(ex.switches.len())];
        let f = dir.join(format!("{}.json", s.node));
        let mut db: Value = serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
        let before = db.clone();
        if neutral {
            mutate_table(&mut db, &mut pick);
        } else {
            mutate(&mut db, &mut pick);
        }
        edits.push((s.node, diff(&before, &db)));
        std::fs::write(&f, db.to_string()).unwrap();
    }
    let model = switch_would_run(&p.topo, &dir, &p.paths);
    let verdict = verified(p, &dir);
    // FUZZ_SHOW=1 prints each verdict: how the cases split between
    // accepted and refused, and why.
    if std::env::var_os("FUZZ_SHOW").is_some() {
        eprintln!(
            "VERDICT neutral={neutral} which={which} accept={verdict} why={}",
            why(p, &dir).lines().next().unwrap_or("")
        );
    }
    let judged = judge(&p.topo, &dir, &p.paths).err();
    prop_assert_eq!(
        verdict,
        model,
        "{} edits {:?}: verify: {}; model: {:?}",
        p.topo.name(),
        edits,
        why(p, &dir),
        judged.map(|b| b.0)
    );
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: std::env::var("FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(160), ..ProptestConfig::default() })]

    /// One or two random edits of random SONiC switch files: the verifier
    /// accepts exactly when the switch model says the network runs as the
    /// plan promises.
    #[test]
    fn verify_exported_accepts_exactly_what_runs(
        which in 0usize..4,
        seeds in proptest::collection::vec(any::<u64>(), 1..=2),
    ) {
        fuzz_one(which, &seeds, false)?;
    }

    /// The same for the neutral table.
    #[test]
    fn verify_exported_tables_accept_exactly_what_runs(
        which in 0usize..4,
        seeds in proptest::collection::vec(any::<u64>(), 1..=2),
    ) {
        fuzz_one(which, &seeds, true)?;
    }
}

/// The tables an edit changed, for the failure message.
fn diff(a: &Value, b: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let empty = serde_json::Map::new();
    for (t, x) in a.as_object().unwrap() {
        if b.get(t) != Some(x) {
            match (x.as_object(), b[t].as_object()) {
                (Some(xo), Some(yo)) => {
                    for k in xo.keys().chain(yo.keys()).collect::<BTreeSet<_>>() {
                        if xo.get(k) != yo.get(k) {
                            out.push(format!(
                                "{t}|{k}: {} -> {}",
                                xo.get(k).map_or("none".into(), |v| v.to_string()),
                                yo.get(k).map_or("deleted".into(), |v| v.to_string())
                            ));
                        }
                    }
                }
                _ => out.push(format!("{t}: {x} -> {}", b[t])),
            }
        }
    }
    for (t, y) in b.as_object().unwrap_or(&empty) {
        if a.get(t).is_none() {
            out.push(format!("{t}: added {y}"));
        }
    }
    out
}
