//! The neutral per-switch table (`--format json`): the same classification
//! as the SONiC export without a target's numbering or limits, for other
//! switch targets (P4, vendor CLIs) to translate.

use super::classify::classify;
use super::dir::{Arrivals, check_arrivals, header, number, switch_files};
use super::port_names;
use crate::error::{Error, Result};
use crate::rules::{Entry, RuleSet, compress};
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use tagger_generators::{LinkId, Topology};

/// Format of a neutral table's `summary.json`.
pub const TABLE_FORMAT: &str = "tagger-switch-table/1";

/// Exports `rules` (verified for `topo`) as one neutral table per node with
/// lossless traffic:
///
/// - `ports`: each port's name and its link and peer (or `host`);
/// - `classes`: per class its arriving priority and, per egress port, the
///   next tag and priority (ports not listed: lossy);
/// - `ingress`: per (port, arriving tag) its class, its arriving priority;
/// - `entries`: the compressed rules, `(in ports, tag, out ports) -> next
///   tag`, the same rewrites as a match-action table.
///
/// Classes are not capped: `summary.json`'s `classes_max` says how many
/// one switch needs.
///
/// # Errors
/// [`Error::Export`] when an entry is a U-turn.
pub fn table(topo: &Topology, rules: &RuleSet) -> Result<super::Export> {
    let mut switches = Vec::new();
    for c in classify(topo, rules)? {
        let names = port_names(topo, c.node, c.ports());
        let name_of = |l: LinkId| names[c.port_of_link(l)].clone();
        let ports: Vec<Value> = names
            .iter()
            .enumerate()
            .map(|(i, n)| match c.link(i) {
                Some(l) => {
                    let [a, b] = topo.links()[l as usize];
                    json!({"name": n, "link": l, "peer": if a == c.node { b } else { a }})
                }
                None => json!({"name": n, "host": true}),
            })
            .collect();
        let classes: Vec<Value> = c
            .number
            .iter()
            .map(|((prio, egress), n)| {
                json!({
                    "class": n,
                    "priority": prio,
                    "egress": egress.iter().map(|&(l, t, p)| json!({"port": name_of(l), "tag": t, "priority": p})).collect::<Vec<_>>(),
                })
            })
            .collect();
        let mut ingress = Vec::new();
        for (i, n) in names.iter().enumerate() {
            for (tag, key) in &c.ingress[c.position(i)] {
                ingress.push(
                    json!({"port": n, "tag": tag, "priority": key.0, "class": c.number[key]}),
                );
            }
        }
        let host_names = &names[c.links.len()..];
        let entries: Vec<Value> = compress(c.entries)
            .iter()
            .map(|e| {
                let ins: Vec<String> = e
                    .in_links
                    .iter()
                    .flat_map(|&l| match l {
                        Some(l) => vec![name_of(l)],
                        None => host_names.to_vec(),
                    })
                    .collect();
                json!({
                    "in_ports": ins,
                    "tag": e.tag,
                    "out_ports": e.out_links.iter().map(|&l| name_of(l)).collect::<Vec<_>>(),
                    "next_tag": e.next_tag,
                    "priority": e.priority,
                    "next_priority": e.next_priority,
                })
            })
            .collect();
        let n = c.number.len();
        switches.push(super::Switch {
            node: c.node,
            config: json!({
                "node": c.node,
                "ports": ports,
                "classes": classes,
                "ingress": ingress,
                "entries": entries,
            }),
            tcs: n,
            needed_tcs: n,
            acl_rules: 0,
        });
    }
    let summary = json!({
        "format": TABLE_FORMAT,
        "topology": rules.topology,
        "algo": rules.algo,
        "priorities": rules.priorities,
        "initial_tag": rules.initial_tag,
        "classes": rules.classes,
        "classes_max": switches.iter().map(|s| s.tcs).max().unwrap_or(0),
        "switches": switches.iter().map(|s| json!({"node": s.node, "file": format!("{}.json", s.node), "classes": s.tcs, "entries": s.config["entries"].as_array().map_or(0, Vec::len)})).collect::<Vec<_>>(),
    });
    Ok(super::Export { switches, summary })
}

/// A neutral table's rule set, rebuilt from each switch's ingress
/// classification and class rewrites (as a pipeline applies them), and
/// checked against its compressed entries.
pub(super) fn read(
    topo: &Topology,
    dir: &Path,
    summary: &Value,
    bad: &dyn Fn(&str, String) -> Error,
) -> Result<RuleSet> {
    let mut all = Vec::new();
    let mut ingress_all: Vec<Vec<(u32, u32)>> = vec![Vec::new(); topo.node_count()];
    let mut arrivals = Arrivals::new();
    for found in switch_files(topo, dir, summary, bad)? {
        let (v, file, t) = found?;
        let bad = |r: String| bad(&file, r);
        let links: Vec<LinkId> = topo.out_channels(v).iter().map(|&c| c >> 1).collect();
        // Port name -> its link (None: a host port), as the file lists
        // them: each link port where the export puts it (the topology's
        // port name, its link and the peer at the link's other end), then
        // host ports under the topology's names for them.
        let listed = t["ports"].as_array().ok_or_else(|| {
            bad(format!(
                "ports = {} is not a list",
                super::dir::excerpt(&t["ports"].to_string())
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
        let mut port: BTreeMap<String, Option<LinkId>> = BTreeMap::new();
        for (i, p) in listed.iter().enumerate() {
            let name = p["name"]
                .as_str()
                .ok_or_else(|| bad(format!("ports[{i}] has no name")))?;
            let shown = super::dir::excerpt(name);
            if name != names[i] {
                return Err(bad(format!(
                    "ports[{i}] is named {shown}; the topology names that port {}",
                    names[i]
                )));
            }
            let link = match links.get(i) {
                Some(&l) => {
                    let [a, b] = topo.links()[l as usize];
                    let peer = if a == v { b } else { a };
                    if number(&p["link"]) != Some(l) || number(&p["peer"]) != Some(peer) {
                        return Err(bad(format!(
                            "port {shown}: link {} to peer {}, but in the topology it is link {l} to node {peer}",
                            p["link"], p["peer"]
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
            if port.insert(name.to_string(), link).is_some() {
                return Err(bad(format!("port {shown} is listed twice")));
            }
        }
        let port_of = |n: &Value| -> Result<Option<LinkId>> {
            let n = n.as_str().unwrap_or_default();
            port.get(n)
                .copied()
                .ok_or_else(|| bad(format!("port {n} is not in ports")))
        };
        let field = |x: &Value, k: &str| -> Result<u32> {
            number(&x[k]).ok_or_else(|| bad(format!("{x}: {k} is not a number")))
        };
        let mut classes: BTreeMap<u32, Vec<(LinkId, u32, u32)>> = BTreeMap::new();
        for c in t["classes"].as_array().into_iter().flatten() {
            let mut egress = Vec::new();
            for e in c["egress"].as_array().into_iter().flatten() {
                let l = port_of(&e["port"])?
                    .ok_or_else(|| bad(format!("class {c}: egress to a host port")))?;
                egress.push((l, field(e, "tag")?, field(e, "priority")?));
            }
            classes.insert(field(c, "class")?, egress);
        }
        let mut rebuilt = Vec::new();
        // Per host port, its rows: the plan treats a switch's host ports
        // alike, so they must all have the same.
        let mut host_rows: BTreeMap<&str, BTreeSet<(u32, u32, u32)>> = port
            .iter()
            .filter(|(_, l)| l.is_none())
            .map(|(n, _)| (n.as_str(), BTreeSet::new()))
            .collect();
        for i in t["ingress"].as_array().into_iter().flatten() {
            let in_link = port_of(&i["port"])?;
            let (tag, prio, class) = (field(i, "tag")?, field(i, "priority")?, field(i, "class")?);
            if in_link.is_none() {
                host_rows
                    .get_mut(i["port"].as_str().unwrap_or_default())
                    .expect("a listed host port")
                    .insert((tag, prio, class));
            }
            let egress = classes
                .get(&class)
                .ok_or_else(|| bad(format!("ingress {i}: class {class} is not defined")))?;
            ingress_all[v as usize].push((tag, prio));
            if let Some(l) = in_link {
                arrivals.entry((v, l)).or_default().insert(tag, prio);
            }
            for &(out_link, next_tag, next_priority) in egress {
                if in_link != Some(out_link) {
                    rebuilt.push(Entry {
                        node: v,
                        in_link,
                        tag,
                        out_link,
                        next_tag,
                        priority: prio,
                        next_priority,
                    });
                }
            }
        }
        let mut listed = Vec::new();
        for e in t["entries"].as_array().into_iter().flatten() {
            let list = |k: &str| -> Result<Vec<Option<LinkId>>> {
                e[k].as_array()
                    .ok_or_else(|| bad(format!("entry {e}: no {k}")))?
                    .iter()
                    .map(port_of)
                    .collect()
            };
            for in_link in list("in_ports")? {
                for out in list("out_ports")? {
                    let out_link =
                        out.ok_or_else(|| bad(format!("entry {e}: out_ports names a host port")))?;
                    listed.push(Entry {
                        node: v,
                        in_link,
                        tag: field(e, "tag")?,
                        out_link,
                        next_tag: field(e, "next_tag")?,
                        priority: field(e, "priority")?,
                        next_priority: field(e, "next_priority")?,
                    });
                }
            }
        }
        for x in [&mut rebuilt, &mut listed] {
            x.sort_unstable();
            x.dedup();
        }
        if rebuilt != listed {
            let diff = rebuilt
                .iter()
                .find(|e| !listed.contains(e))
                .map(|e| format!("the classes give {e:?}, which entries lack"))
                .or_else(|| {
                    listed
                        .iter()
                        .find(|e| !rebuilt.contains(e))
                        .map(|e| format!("entries list {e:?}, which the classes do not give"))
                })
                .unwrap_or_default();
            return Err(bad(format!("the classes and the entries disagree: {diff}")));
        }
        let mut hosts = host_rows.iter();
        if let Some((first, rows)) = hosts.next()
            && let Some((other, _)) = hosts.find(|(_, r)| *r != rows)
        {
            return Err(bad(format!(
                "host ports {first} and {other} have different ingress rows: the plan treats a switch's host ports alike"
            )));
        }
        all.extend(rebuilt);
    }
    all.sort_unstable();
    check_arrivals(topo, &all, &arrivals, bad)?;
    for m in &mut ingress_all {
        m.sort_unstable();
        m.dedup();
    }
    header(summary, bad, all, ingress_all)
}
