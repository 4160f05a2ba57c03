//! The way back: the rule set an exported directory encodes, rebuilt from
//! what the switches are configured with.

use super::{FORMAT, Mapping, TABLE_FORMAT, port_names};
use crate::error::{Error, Result};
use crate::rules::{Entry, RuleSet};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use tagger_generators::{LinkId, NodeId, Topology};

/// A directory's JSON file, parsed.
pub(super) fn load(p: &Path) -> Result<Value> {
    let text = tagger_generators::file::read_input(p).map_err(|e| Error::io(p, e))?;
    serde_json::from_str(&text).map_err(|e| Error::Export {
        reason: format!("{}: {e}", p.display()),
    })
}

/// A number written as a JSON number or a string (SONiC writes strings).
pub(super) fn number(v: &Value) -> Option<u32> {
    v.as_u64()
        .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
        .and_then(|x| u32::try_from(x).ok())
}

/// Each switch `summary.json` lists: its node (checked against the
/// topology), its file's name and the file parsed.
pub(super) fn switch_files<'a>(
    topo: &'a Topology,
    dir: &'a Path,
    summary: &'a Value,
    bad: &'a dyn Fn(&str, String) -> Error,
) -> impl Iterator<Item = Result<(NodeId, String, Value)>> + 'a {
    summary["switches"]
        .as_array()
        .into_iter()
        .flatten()
        .map(move |s| {
            let v = number(&s["node"])
                .filter(|&v| (v as usize) < topo.node_count())
                .ok_or_else(|| {
                    bad(
                        "summary.json",
                        format!("node {} is not in the topology", s["node"]),
                    )
                })?;
            let file = format!("{v}.json");
            let db = load(&dir.join(&file))?;
            Ok((v, file, db))
        })
}

/// The rule set's header from `summary.json`.
pub(super) fn header(
    summary: &Value,
    bad: &dyn Fn(&str, String) -> Error,
    entries: Vec<Entry>,
    ingress: Vec<Vec<(u32, u32)>>,
) -> Result<RuleSet> {
    let num = |k: &str| {
        number(&summary[k]).ok_or_else(|| bad("summary.json", format!("{k} is not a number")))
    };
    Ok(RuleSet {
        topology: summary["topology"].as_str().unwrap_or_default().to_string(),
        algo: summary["algo"].as_str().unwrap_or_default().to_string(),
        priorities: num("priorities")?,
        initial_tag: num("initial_tag")?,
        classes: summary["classes"]
            .as_array()
            .map(|a| a.iter().filter_map(number).collect())
            .unwrap_or_default(),
        entries,
        ingress,
    })
}

/// The rule set an exported directory encodes: a SONiC export rebuilt from
/// its port maps and ACL rules alone (for each port, each lossless DSCP
/// value and each egress port, the queue and DSCP the packet leaves with,
/// as the ASIC computes them), or a neutral table rebuilt from its ingress
/// classification and class rewrites.
///
/// A SONiC export is also checked for what makes the decoded priorities
/// lossless on the switch: every arriving lossless priority group and
/// every leaving lossless queue is in its port's `pfc_enable`, and every
/// arriving group has a `BUFFER_PG` whose `BUFFER_PROFILE` reserves xoff
/// headroom.
///
/// # Errors
/// [`Error::Export`] naming the file, table and port at fault.
pub fn read(topo: &Topology, dir: &Path) -> Result<RuleSet> {
    let summary = load(&dir.join("summary.json"))?;
    let bad = |file: &str, reason: String| Error::Export {
        reason: format!("{}: {reason}", dir.join(file).display()),
    };
    match summary["format"].as_str() {
        Some(FORMAT) => {}
        Some(TABLE_FORMAT) => return super::table::read(topo, dir, &summary, &bad),
        Some("tagger-sonic/1") => {
            return Err(bad(
                "summary.json",
                "format tagger-sonic/1 was written by an older tagger, without buffer settings: export the plan again".into(),
            ));
        }
        _ => {
            return Err(bad(
                "summary.json",
                format!(
                    "format {} is neither {FORMAT} nor {TABLE_FORMAT}",
                    summary["format"]
                ),
            ));
        }
    }
    let mapping = Mapping::from_json(&summary["mapping"]).map_err(|r| bad("summary.json", r))?;
    let mut entries = Vec::new();
    let mut ingress: Vec<Vec<(u32, u32)>> = vec![Vec::new(); topo.node_count()];
    for found in switch_files(topo, dir, &summary, &bad) {
        let (v, file, db) = found?;
        let bad = |reason: String| bad(&file, reason);
        let sw = SwitchDb { db: &db, bad: &bad };
        let found = sw.rules(topo, v, &mapping)?;
        ingress[v as usize] = found.ingress;
        entries.extend(found.entries);
    }
    entries.sort_unstable();
    entries.dedup();
    for m in &mut ingress {
        m.sort_unstable();
        m.dedup();
    }
    header(&summary, &bad, entries, ingress)
}

/// One switch's `config_db`.
struct SwitchDb<'a> {
    db: &'a Value,
    bad: &'a dyn Fn(String) -> Error,
}

struct Found {
    entries: Vec<Entry>,
    ingress: Vec<(u32, u32)>,
}

impl SwitchDb<'_> {
    /// Map `name` of `table` (a reference from `PORT_QOS_MAP`).
    fn map(&self, table: &str, name: &Value) -> Result<BTreeMap<u32, u32>> {
        let bad = self.bad;
        let name = name
            .as_str()
            .ok_or_else(|| bad(format!("a {table} reference is missing")))?;
        let m = self.db[table][name]
            .as_object()
            .ok_or_else(|| bad(format!("{table}|{name} is referenced but not defined")))?;
        m.iter()
            .map(|(k, x)| {
                let k2 = k
                    .parse::<u32>()
                    .map_err(|_| bad(format!("{table}|{name}: key {k} is not a number")))?;
                let x = number(x)
                    .ok_or_else(|| bad(format!("{table}|{name}[{k}] = {x} is not a number")))?;
                Ok((k2, x))
            })
            .collect()
    }

    /// The priorities of a port's `pfc_enable`.
    fn pfc(&self, port: &str, b: &Value) -> Result<BTreeSet<u32>> {
        let text = b["pfc_enable"].as_str().unwrap_or_default();
        text.split(',')
            .filter(|x| !x.is_empty())
            .map(|x| {
                x.parse::<u32>()
                    .map_err(|_| (self.bad)(format!("{port}: pfc_enable '{text}' is not a list")))
            })
            .collect()
    }

    /// Whether `port`'s priority group `pg` has a `BUFFER_PG` with xoff
    /// headroom (keys `port|pg` or `port|lo-hi`).
    fn headroom(&self, port: &str, pg: u32) -> Result<()> {
        let bad = self.bad;
        let entry = self.db["BUFFER_PG"]
            .as_object()
            .into_iter()
            .flatten()
            .find(|(k, _)| {
                let Some((p, range)) = k.split_once('|') else {
                    return false;
                };
                let (lo, hi) = range.split_once('-').unwrap_or((range, range));
                p == port
                    && matches!((lo.parse::<u32>(), hi.parse::<u32>()), (Ok(lo), Ok(hi)) if (lo..=hi).contains(&pg))
            })
            .ok_or_else(|| {
                bad(format!(
                    "{port}: lossless priority group {pg} has no BUFFER_PG (no headroom: it would drop)"
                ))
            })?;
        let prof = entry.1["profile"].as_str().unwrap_or_default();
        let xoff = self.db["BUFFER_PROFILE"][prof]["xoff"].clone();
        match number(&xoff) {
            Some(x) if x > 0 => Ok(()),
            Some(_) => Err(bad(format!(
                "{port}: BUFFER_PROFILE|{prof} of priority group {pg} reserves no xoff headroom"
            ))),
            None => Err(bad(format!(
                "{port}: BUFFER_PG|{} names BUFFER_PROFILE|{prof}, which is not defined or has no xoff",
                entry.0
            ))),
        }
    }

    fn rules(&self, topo: &Topology, v: NodeId, mapping: &Mapping) -> Result<Found> {
        let bad = self.bad;
        let links: Vec<LinkId> = topo.out_channels(v).iter().map(|&c| c >> 1).collect();
        let qos = self.db["PORT_QOS_MAP"]
            .as_object()
            .ok_or_else(|| bad("no PORT_QOS_MAP".into()))?;
        // Ports are named as the export names them (the topology's names,
        // or EthernetN); a host port beyond the topology's is `Host`.
        let names = port_names(topo, v, links.len() + topo.node(v).hosts as usize + 1);
        let index: BTreeMap<&str, usize> = names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.as_str(), i))
            .collect();
        let port_of = |n: &str| -> Result<Option<LinkId>> {
            let i = index
                .get(n.trim())
                .ok_or_else(|| bad(format!("port {n} is not a port of node {v}")))?;
            Ok(links.get(*i).copied())
        };
        // Egress maps and PFC of the link ports, by position.
        let mut egress = Vec::new();
        for name in &names[..links.len()] {
            let b = qos
                .get(name)
                .ok_or_else(|| bad(format!("PORT_QOS_MAP has no {name}")))?;
            egress.push((
                self.map("TC_TO_QUEUE_MAP", &b["tc_to_queue_map"])?,
                self.map("TC_TO_DSCP_MAP", &b["tc_to_dscp_map"])?,
                self.pfc(name, b)?,
            ));
        }
        let tag_of = |d: u32, what: &str| {
            mapping
                .tag_of(d)
                .ok_or_else(|| bad(format!("{what}: DSCP {d} is no tag's value")))
        };
        let mut entries = Vec::new();
        let mut ingress = Vec::new();
        // Per in position: tag -> priority as classified, for ACL rules.
        let mut classified: BTreeMap<Option<LinkId>, BTreeMap<u32, u32>> = BTreeMap::new();
        let mut seen_host = false;
        for (name, b) in qos {
            let in_link = port_of(name)?;
            let d2t = self.map("DSCP_TO_TC_MAP", &b["dscp_to_tc_map"])?;
            let pg = self.map("TC_TO_PRIORITY_GROUP_MAP", &b["tc_to_pg_map"])?;
            let pfc = self.pfc(name, b)?;
            // Host ports all carry the same maps: one set of entries.
            let first = in_link.is_some() || !seen_host;
            seen_host |= in_link.is_none();
            for (&d, &tc) in &d2t {
                if tc == 0 {
                    continue;
                }
                let tag = tag_of(d, name)?;
                let group = *pg
                    .get(&tc)
                    .ok_or_else(|| bad(format!("{name}: TC {tc} has no priority group")))?;
                let prio = mapping.priority_of(group).ok_or_else(|| {
                    bad(format!(
                        "{name}: TC {tc} is in priority group {group}, which is not lossless"
                    ))
                })?;
                if !pfc.contains(&group) {
                    return Err(bad(format!(
                        "{name}: lossless priority group {group} (DSCP {d}) is not in pfc_enable: the port would never pause its upstream"
                    )));
                }
                self.headroom(name, group)?;
                if !first {
                    continue;
                }
                ingress.push((tag, prio));
                classified.entry(in_link).or_default().insert(tag, prio);
                for (j, (q, dm, out_pfc)) in egress.iter().enumerate() {
                    // A packet never leaves where it came in.
                    if in_link == Some(links[j]) {
                        continue;
                    }
                    let Some(&qn) = q.get(&tc).filter(|&&x| x != 0) else {
                        continue;
                    };
                    let out = &names[j];
                    let next_priority = mapping
                        .priority_of(qn)
                        .ok_or_else(|| bad(format!("{out}: queue {qn} is not lossless")))?;
                    if !out_pfc.contains(&qn) {
                        return Err(bad(format!(
                            "{out}: lossless queue {qn} is not in pfc_enable: it would not stop when paused"
                        )));
                    }
                    let next_tag =
                        dm.get(&tc)
                            .and_then(|&x| mapping.tag_of(x))
                            .ok_or_else(|| {
                                bad(format!(
                                    "{out}: TC {tc} is queued lossless but rewritten to no tag"
                                ))
                            })?;
                    entries.push(Entry {
                        node: v,
                        in_link,
                        tag,
                        out_link: links[j],
                        next_tag,
                        priority: prio,
                        next_priority,
                    });
                }
            }
        }
        // ACL rules: every (in port, out port) of a rule, its action.
        for (name, r) in self.db["ACL_RULE"].as_object().into_iter().flatten() {
            let field = |k: &str| -> Result<u32> {
                number(&r[k]).ok_or_else(|| bad(format!("ACL_RULE|{name}: {k} is not a number")))
            };
            let what = format!("ACL_RULE|{name}");
            let tag = tag_of(field("DSCP")?, &what)?;
            let next_tag = tag_of(field("SET_DSCP")?, &what)?;
            let queue = field("SET_QUEUE")?;
            let next_priority = mapping
                .priority_of(queue)
                .ok_or_else(|| bad(format!("{what}: SET_QUEUE {queue} is not lossless")))?;
            let list = |k: &str| -> Result<Vec<Option<LinkId>>> {
                let mut v: Vec<Option<LinkId>> = r[k]
                    .as_str()
                    .ok_or_else(|| bad(format!("{what} has no {k}")))?
                    .split(',')
                    .map(port_of)
                    .collect::<Result<_>>()?;
                v.dedup();
                Ok(v)
            };
            for in_link in list("IN_PORTS")? {
                let prio = *classified
                    .get(&in_link)
                    .and_then(|m| m.get(&tag))
                    .ok_or_else(|| {
                        bad(format!(
                            "{what}: DSCP {} is not classified lossless on its in ports",
                            field("DSCP").unwrap_or_default()
                        ))
                    })?;
                for out in list("OUT_PORTS")? {
                    let out_link =
                        out.ok_or_else(|| bad(format!("{what}: OUT_PORTS names a host port")))?;
                    let j = links.iter().position(|&l| l == out_link).expect("a port");
                    if !egress[j].2.contains(&queue) {
                        return Err(bad(format!(
                            "{}: lossless queue {queue} ({what}) is not in pfc_enable: it would not stop when paused",
                            names[j]
                        )));
                    }
                    entries.push(Entry {
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
        Ok(Found { entries, ingress })
    }
}
