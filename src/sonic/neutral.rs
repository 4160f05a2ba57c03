//! The neutral per-switch table (`--format json`): the same classes as the
//! SONiC export without a target's numbering, buffers or limits, for other
//! switch targets (P4, vendor CLIs) to translate.

use super::dir::{Source, excerpt, header, host_tags, number, switch_files};
use super::function::{In, Out, Port, ReadBack, Reading, SwitchFn, judge};
use super::port_names;
use crate::error::{Error, Result};
use crate::rules::{Entry, RuleSet, compress};
use crate::tagging::traffic::classify;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use tagger_generators::{LinkId, Topology};

/// Format of a neutral table's `summary.json`.
pub const TABLE_FORMAT: &str = "tagger-switch-table/2";

/// Header values a neutral table's tags range over (a DSCP field's).
const VALUES: u32 = 64;

/// Exports `rules` (verified for `topo`) as one neutral table per node with
/// lossless traffic, describing what the switch does to every packet:
///
/// - `ports`: each port's name and its link and peer (or `host`);
/// - `classes`: per class its arriving priority and, per egress port, the
///   next tag and priority; a port a class does not list sends it on lossy
///   with tag 0, and a host port delivers it in its arriving priority;
/// - `ingress`: per (port, arriving tag) its class and arriving priority;
///   a (port, tag) not listed is lossy and leaves with tag 0;
/// - `entries`: the plan's own rules, compressed, `(in ports, tag, out
///   ports) -> next tag`: what the classes do on the ELP's transitions.
///
/// The classes are the plan's traffic classes
/// ([`crate::tagging::traffic`]), not capped: `summary.json`'s
/// `classes_max` says how many one switch needs.
///
/// # Errors
/// As [`crate::rules::RuleSet::keys`] and the classification.
pub fn table(topo: &Topology, rules: &RuleSet, elp: Option<&str>) -> Result<super::Export> {
    table_classified(topo, rules, elp, &classify(topo, &rules.keys(topo)?)?)
}

/// [`table`] with the plan's traffic classes given.
pub(crate) fn table_classified(
    topo: &Topology,
    rules: &RuleSet,
    elp: Option<&str>,
    classes: &crate::tagging::traffic::Classification,
) -> Result<super::Export> {
    let by_node = rules.by_node(topo.node_count());
    let mut switches = Vec::new();
    for nc in &classes.nodes {
        let v = nc.node;
        let outs = topo.out_channels(v);
        let links = outs.len();
        let declared = topo.node(v).hosts as usize;
        let hosts = if nc.ingress.iter().any(|x| x.0.is_none()) {
            declared.max(1)
        } else {
            declared
        };
        let names = port_names(topo, v, links + hosts);
        let ports: Vec<Value> = names
            .iter()
            .enumerate()
            .map(|(i, n)| {
                if i < links {
                    let l = outs[i] >> 1;
                    json!({"name": n, "link": l, "peer": topo.channel_dst(outs[i])})
                } else {
                    json!({"name": n, "host": true})
                }
            })
            .collect();
        let class_list: Vec<Value> = nc
            .classes
            .iter()
            .enumerate()
            .map(|(k, c)| {
                let egress: Vec<Value> = c
                    .egress
                    .iter()
                    .enumerate()
                    .filter_map(|(j, e)| {
                        e.map(|(t, p)| json!({"port": names[j], "tag": t, "priority": p}))
                    })
                    .collect();
                json!({"class": k + 1, "priority": c.priority, "egress": egress})
            })
            .collect();
        let mut ingress = Vec::new();
        for (i, n) in names.iter().enumerate() {
            let from = (i < links).then(|| outs[i] ^ 1);
            for &(f, tag, k) in &nc.ingress {
                if f == from {
                    ingress.push(json!({
                        "port": n,
                        "tag": tag,
                        "priority": nc.classes[k as usize].priority,
                        "class": k + 1,
                    }));
                }
            }
        }
        let host_names = &names[links..];
        let name_of_link = |l: LinkId| -> String {
            let j = outs
                .iter()
                .position(|&c| c >> 1 == l)
                .expect("a link of the node");
            names[j].clone()
        };
        let entries: Vec<Value> = compress(by_node[v as usize])
            .iter()
            .map(|e| {
                let ins: Vec<String> = e
                    .in_links
                    .iter()
                    .flat_map(|&l| match l {
                        Some(l) => vec![name_of_link(l)],
                        None => host_names.to_vec(),
                    })
                    .collect();
                json!({
                    "in_ports": ins,
                    "tag": e.tag,
                    "out_ports": e.out_links.iter().map(|&l| name_of_link(l)).collect::<Vec<_>>(),
                    "next_tag": e.next_tag,
                    "priority": e.priority,
                    "next_priority": e.next_priority,
                })
            })
            .collect();
        let n = nc.classes.len();
        switches.push(super::Switch {
            base: None,
            patch: None,
            node: v,
            config: json!({
                "node": v,
                "ports": ports,
                "classes": class_list,
                "ingress": ingress,
                "entries": entries,
            }),
            tcs: n,
            fit: None,
        });
    }
    let summary = json!({
        "format": TABLE_FORMAT,
        "topology": rules.topology,
        "algo": rules.algo,
        "elp": elp,
        "priorities": rules.priorities,
        "tags": super::export::max_tag(rules),
        "initial_tag": rules.initial_tag,
        "classes": rules.classes,
        "classes_max": switches.iter().map(|s| s.tcs).max().unwrap_or(0),
        "switches": switches.iter().map(|s| json!({"node": s.node, "file": format!("{}.json", s.node), "classes": s.tcs, "entries": s.config["entries"].as_array().map_or(0, Vec::len)})).collect::<Vec<_>>(),
    });
    Ok(super::Export { switches, summary })
}

/// A neutral table decoded into the complete function it describes (see
/// [`table`]), its classes checked against its entries and `summary.json`,
/// then judged as a whole.
pub(super) fn read(
    topo: &Topology,
    src: &Source<'_>,
    summary: &Value,
    bad: &dyn Fn(&str, String) -> Error,
) -> Result<ReadBack> {
    let mut switches = Vec::new();
    for found in switch_files(topo, src, summary, bad)? {
        let (v, file, t, listed) = found?;
        let shown = src.show(&file);
        let bad = |r: String| bad(&file, r);
        let (f, _) = src.decoded(v, || Ok((decode(topo, v, &t, &shown, &bad)?, None)))?;
        let used = f.egress.keys().filter(|&&k| k != 0).count();
        if number(&listed["classes"]).is_some_and(|n| n as usize != used) {
            return Err(bad(format!(
                "summary.json says the switch has {} classes; its table has {used}",
                listed["classes"]
            )));
        }
        let entries = t["entries"].as_array().map_or(0, Vec::len);
        if number(&listed["entries"]).is_some_and(|n| n as usize != entries) {
            return Err(bad(format!(
                "summary.json says the switch has {} entries; its table has {entries}",
                listed["entries"]
            )));
        }
        switches.push(f);
    }
    let host_tags = host_tags(summary, bad)?;
    let most = super::dir::max_tag(summary, bad)?;
    let tag_of = |x: u32| (x > 0 && x <= most).then_some(x);
    let priority_of = |g: u32| (g > 0).then_some(g);
    let reading = Reading {
        tag_of: &tag_of,
        priority_of: &priority_of,
        value_name: "tag",
    };
    let (entries, ingress): (Vec<Entry>, _) = judge(topo, &switches, &reading, &host_tags)?;
    let rules = header(summary, bad, entries, ingress)?;
    Ok(ReadBack {
        rules,
        elp: summary["elp"].as_str().map(str::to_string),
        profile: None,
        misfits: Vec::new(),
    })
}

/// One switch's table as its function; its entries must be what its
/// classes do.
fn decode(
    topo: &Topology,
    v: u32,
    t: &Value,
    file: &str,
    bad: &dyn Fn(String) -> Error,
) -> Result<SwitchFn> {
    if number(&t["node"]) != Some(v) {
        return Err(bad(format!(
            "node = {}, but the file is switch {v}'s: a table is read for the switch its file is named after",
            excerpt(&t["node"].to_string())
        )));
    }
    let table = Table {
        ports: read_ports(topo, v, t, bad)?,
        bad,
    };
    let (egress, class_priority) = table.classes(t)?;
    let ingress = table.ingress(t, &class_priority)?;
    table.check_entries(t, &ingress, &egress)?;
    Ok(SwitchFn {
        node: v,
        file: file.to_string(),
        ports: table.ports,
        ingress,
        egress,
    })
}

/// The ports as the file lists them: each link port where the export puts
/// it (the topology's port name, its link and the peer at the link's other
/// end), then host ports under the topology's names.
fn read_ports(
    topo: &Topology,
    v: u32,
    t: &Value,
    bad: &dyn Fn(String) -> Error,
) -> Result<Vec<Port>> {
    let outs = topo.out_channels(v);
    let links: Vec<LinkId> = outs.iter().map(|&c| c >> 1).collect();
    let listed = t["ports"].as_array().ok_or_else(|| {
        bad(format!(
            "ports = {} is not a list",
            excerpt(&t["ports"].to_string())
        ))
    })?;
    if listed.len() < links.len() {
        return Err(bad(format!(
            "ports lists {} ports; node {v} has {} links",
            listed.len(),
            links.len()
        )));
    }
    let names = port_names(topo, v, listed.len());
    let mut ports: Vec<Port> = Vec::new();
    for (i, p) in listed.iter().enumerate() {
        let name = p["name"]
            .as_str()
            .ok_or_else(|| bad(format!("ports[{i}] has no name")))?;
        let shown = excerpt(name);
        if name != names[i] {
            return Err(bad(format!(
                "ports[{i}] is named {shown}; the topology names that port {}",
                names[i]
            )));
        }
        let link = match links.get(i) {
            Some(&l) => {
                let peer = topo.channel_dst(outs[i]);
                if number(&p["link"]) != Some(l) || number(&p["peer"]) != Some(peer) {
                    return Err(bad(format!(
                        "port {shown}: link {} to peer {}, but in the topology it is link {l} to node {peer}",
                        excerpt(&p["link"].to_string()),
                        excerpt(&p["peer"].to_string())
                    )));
                }
                Some(l)
            }
            None => {
                if p["host"] != Value::Bool(true) || !p["link"].is_null() {
                    return Err(bad(format!(
                        "port {shown}: node {v} has {} links, so ports[{i}] is a host port",
                        links.len()
                    )));
                }
                None
            }
        };
        if ports.iter().any(|x| x.name == name) {
            return Err(bad(format!("port {shown} is listed twice")));
        }
        ports.push(Port {
            name: name.to_string(),
            link,
        });
    }
    Ok(ports)
}

/// Per class, what it sends out of each port.
type Egress = BTreeMap<u32, Vec<Out>>;

/// A switch's ports while its table is read, and how its faults are told.
struct Table<'a> {
    ports: Vec<Port>,
    bad: &'a dyn Fn(String) -> Error,
}

impl Table<'_> {
    fn port_of(&self, n: &Value) -> Result<usize> {
        let n = n.as_str().unwrap_or_default();
        self.ports
            .iter()
            .position(|p| p.name == n)
            .ok_or_else(|| (self.bad)(format!("port {} is not in ports", excerpt(n))))
    }

    /// Field `k` of `x`, a number up to `max`.
    fn field(&self, x: &Value, k: &str, max: u32) -> Result<u32> {
        number(&x[k]).filter(|&n| n <= max).ok_or_else(|| {
            (self.bad)(format!(
                "{}: {k} is not a number from 0 to {max}",
                excerpt(&x.to_string())
            ))
        })
    }

    /// The classes: per class its egress per port, and its priority.
    fn classes(&self, t: &Value) -> Result<(Egress, BTreeMap<u32, u32>)> {
        let (ports, bad) = (&self.ports, self.bad);
        // Class 0 is the lossy one: out on every port lossy, with tag 0.
        let lossy = Out {
            queue: 0,
            value: Some(0),
            pausable: false,
        };
        let mut egress: BTreeMap<u32, Vec<Out>> = BTreeMap::new();
        let mut class_priority: BTreeMap<u32, u32> = BTreeMap::new();
        egress.insert(0, vec![lossy; ports.len()]);
        for c in t["classes"].as_array().into_iter().flatten() {
            let k = self.field(c, "class", u32::MAX - 1)?;
            if k == 0 || egress.contains_key(&k) {
                return Err(bad(format!(
                    "class {k} is {}",
                    if k == 0 {
                        "0, the lossy class's"
                    } else {
                        "defined twice"
                    }
                )));
            }
            let prio = self.field(c, "priority", VALUES - 1)?;
            if prio == 0 {
                return Err(bad(format!("class {k} has priority 0 (lossy)")));
            }
            let mut row: Vec<Out> = ports
                .iter()
                .map(|p| match p.link {
                    Some(_) => lossy,
                    // A host port delivers in the priority the packet arrived
                    // with, its tag unchanged.
                    None => Out {
                        queue: prio,
                        value: None,
                        pausable: true,
                    },
                })
                .collect();
            for e in c["egress"].as_array().into_iter().flatten() {
                let o = self.port_of(&e["port"])?;
                if ports[o].link.is_none() {
                    return Err(bad(format!(
                        "class {k}: egress to host port {}",
                        ports[o].name
                    )));
                }
                let (tag, p) = (
                    self.field(e, "tag", VALUES - 1)?,
                    self.field(e, "priority", VALUES - 1)?,
                );
                if tag == 0 || p == 0 {
                    return Err(bad(format!(
                        "class {k}: egress to {} with tag {tag} priority {p}: 0 is lossy, so leave the port out",
                        ports[o].name
                    )));
                }
                row[o] = Out {
                    queue: p,
                    value: Some(tag),
                    pausable: true,
                };
            }
            class_priority.insert(k, prio);
            egress.insert(k, row);
        }
        Ok((egress, class_priority))
    }

    /// Per port and tag, the class a packet is put in and its lossless
    /// priority.
    fn ingress(&self, t: &Value, class_priority: &BTreeMap<u32, u32>) -> Result<Vec<Vec<In>>> {
        let (ports, bad) = (&self.ports, self.bad);
        let lossless_in = In {
            class: 0,
            lossless: None,
        };
        let mut ingress: Vec<Vec<In>> = vec![vec![lossless_in; VALUES as usize]; ports.len()];
        for i in t["ingress"].as_array().into_iter().flatten() {
            let p = self.port_of(&i["port"])?;
            let (tag, prio, k) = (
                self.field(i, "tag", VALUES - 1)?,
                self.field(i, "priority", VALUES - 1)?,
                self.field(i, "class", u32::MAX - 1)?,
            );
            let cp = *class_priority
                .get(&k)
                .ok_or_else(|| bad(format!("ingress {i}: class {k} is not defined")))?;
            // A translator may read either; they must agree.
            if cp != prio {
                return Err(bad(format!(
                    "ingress {}: priority {prio}, but class {k} has priority {cp}",
                    excerpt(&i.to_string())
                )));
            }
            if tag == 0 || ingress[p][tag as usize].class != 0 {
                return Err(bad(format!(
                    "ingress {}: {}",
                    excerpt(&i.to_string()),
                    if tag == 0 {
                        "tag 0 is the lossy class's"
                    } else {
                        "the port lists this tag twice"
                    }
                )));
            }
            ingress[p][tag as usize] = In {
                class: k,
                lossless: Some(prio),
            };
        }
        Ok(ingress)
    }

    /// The entries are what the classes do on the plan's transitions.
    fn check_entries(&self, t: &Value, ingress: &[Vec<In>], egress: &Egress) -> Result<()> {
        let (ports, bad) = (&self.ports, self.bad);
        for e in t["entries"].as_array().into_iter().flatten() {
            // Each port once: a list naming one twice is refused, so that an
            // entry costs at most ports x ports checks, not its length squared.
            let list = |k: &str| -> Result<Vec<usize>> {
                let mut l: Vec<usize> = e[k]
                    .as_array()
                    .ok_or_else(|| bad(format!("entry {}: no {k}", excerpt(&e.to_string()))))?
                    .iter()
                    .map(|n| self.port_of(n))
                    .collect::<Result<_>>()?;
                l.sort_unstable();
                if let Some(w) = l.windows(2).find(|w| w[0] == w[1]) {
                    return Err(bad(format!(
                        "entry {}: {k} names port {} twice",
                        excerpt(&e.to_string()),
                        ports[w[0]].name
                    )));
                }
                Ok(l)
            };
            let tag = self.field(e, "tag", VALUES - 1)?;
            let want = (
                self.field(e, "next_tag", VALUES - 1)?,
                self.field(e, "priority", VALUES - 1)?,
                self.field(e, "next_priority", VALUES - 1)?,
            );
            let (ins, outs) = (list("in_ports")?, list("out_ports")?);
            for &i in &ins {
                for &o in &outs {
                    let a = ingress[i][tag as usize];
                    let out = egress[&a.class][o];
                    let got = (
                        out.value.unwrap_or(tag),
                        a.lossless.unwrap_or(0),
                        if out.pausable { out.queue } else { 0 },
                    );
                    if ports[o].link.is_none() || got != want {
                        return Err(bad(format!(
                            "entry {}: from {} to {} its classes give next tag {}, priority {} to {}, not the entry's",
                            excerpt(&e.to_string()),
                            ports[i].name,
                            ports[o].name,
                            got.0,
                            got.1,
                            got.2
                        )));
                    }
                }
            }
        }
        Ok(())
    }
}
