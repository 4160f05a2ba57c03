//! The way back: the rule set an exported directory encodes, rebuilt from
//! what the switches are configured with.
//!
//! One file past 600 lines on purpose: the SONiC semantics the read-back
//! applies (maps, PFC, buffers, ACL tables and rules) are one model of a
//! switch, kept together so it can be checked against SONiC's as a whole;
//! the directory reading both formats share is in `dir.rs`.

use super::dir::{Arrivals, check_arrivals, excerpt, header, load, number, switch_files};
use super::{FORMAT, Mapping, TABLE_FORMAT, port_names};
use crate::error::{Error, Result};
use crate::rules::{Entry, RuleSet};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use tagger_generators::{LinkId, NodeId, Topology};

/// Whether a `BUFFER_PG` / `BUFFER_QUEUE` key (`port|n` or `port|lo-hi`)
/// covers `port`'s priority group or queue `n`.
fn covers(key: &str, port: &str, n: u32) -> bool {
    let Some((p, range)) = key.split_once('|') else {
        return false;
    };
    let (lo, hi) = range.split_once('-').unwrap_or((range, range));
    p == port
        && matches!((lo.parse::<u32>(), hi.parse::<u32>()), (Ok(lo), Ok(hi)) if (lo..=hi).contains(&n))
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
        kind: crate::error::ExportKind::ReadBack,
        reason: format!("{}: {reason}", dir.join(file).display()),
    };
    match summary["format"].as_str() {
        Some(FORMAT) => {}
        Some(TABLE_FORMAT) => return super::neutral::read(topo, dir, &summary, &bad),
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
    let mut arrivals = Arrivals::new();
    for found in switch_files(topo, dir, &summary, &bad)? {
        let (v, file, db) = found?;
        let bad = |reason: String| bad(&file, reason);
        let sw = SwitchDb { db: &db, bad: &bad };
        let found = sw.rules(topo, v, &mapping)?;
        ingress[v as usize] = found.ingress;
        entries.extend(found.entries);
        for (l, m) in found.classified {
            if let Some(l) = l {
                arrivals.insert((v, l), m);
            }
        }
    }
    entries.sort_unstable();
    entries.dedup();
    check_arrivals(topo, &entries, &arrivals, &bad)?;
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

/// What an ACL rule does to the packets it matches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum AclAction {
    /// Forward, with this DSCP and in this queue.
    Rewrite { set_dscp: u32, queue: u32 },
    /// Drop (or anything but a plain forward): not lossless.
    Drop,
}

/// The ACL rule deciding a key: its name (`TABLE|RULE`), priority and
/// action.
#[derive(Clone, Debug)]
struct AclRule {
    name: String,
    priority: u32,
    action: AclAction,
}

/// Per key (in port, DSCP, out port), the ACL rule that decides it.
type AclDecisions = BTreeMap<(Option<LinkId>, u32, LinkId), AclRule>;

struct Found {
    entries: Vec<Entry>,
    ingress: Vec<(u32, u32)>,
    /// Per arriving link: tag -> the priority it is classified in.
    classified: BTreeMap<Option<LinkId>, BTreeMap<u32, u32>>,
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
    /// SONiC's pattern for it, `([0-7](,[0-7])*)?`, is enforced: a value
    /// the switch's YANG layer would refuse enables nothing.
    fn pfc(&self, port: &str, b: &Value) -> Result<BTreeSet<u32>> {
        let text = match &b["pfc_enable"] {
            Value::Null => "",
            Value::String(t) => t.as_str(),
            other => {
                return Err((self.bad)(format!(
                    "{port}: pfc_enable {other} is not a string"
                )));
            }
        };
        if text.is_empty() {
            return Ok(BTreeSet::new());
        }
        text.split(',')
            .map(|x| match x.as_bytes() {
                [d @ b'0'..=b'7'] => Ok(u32::from(d - b'0')),
                _ => Err((self.bad)(format!(
                    "{port}: pfc_enable '{}' does not match SONiC's pattern ([0-7](,[0-7])*)?",
                    excerpt(text)
                ))),
            })
            .collect()
    }

    /// Whether `port`'s lossless queue `q` has a `BUFFER_QUEUE` (keys
    /// `port|q` or `port|lo-hi`) whose `BUFFER_PROFILE` is defined: without
    /// it the queue shares the lossy egress buffer and may drop.
    fn queue_buffer(&self, port: &str, q: u32) -> Result<()> {
        let bad = self.bad;
        let entry = self.db["BUFFER_QUEUE"]
            .as_object()
            .into_iter()
            .flatten()
            .find(|(k, _)| covers(k, port, q))
            .ok_or_else(|| {
                bad(format!(
                    "{port}: lossless queue {q} has no BUFFER_QUEUE (no lossless egress buffer)"
                ))
            })?;
        let prof = entry.1["profile"].as_str().unwrap_or_default();
        if self.db["BUFFER_PROFILE"][prof].is_object() {
            Ok(())
        } else {
            Err(bad(format!(
                "{port}: BUFFER_QUEUE|{} names BUFFER_PROFILE|{}, which is not defined",
                entry.0,
                excerpt(prof)
            )))
        }
    }

    /// Whether `port`'s priority group `pg` has a `BUFFER_PG` with xoff
    /// headroom (keys `port|pg` or `port|lo-hi`).
    fn headroom(&self, port: &str, pg: u32) -> Result<()> {
        let bad = self.bad;
        let entry = self.db["BUFFER_PG"]
            .as_object()
            .into_iter()
            .flatten()
            .find(|(k, _)| covers(k, port, pg))
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
            None if !self.db["BUFFER_PROFILE"][prof].is_object() => Err(bad(format!(
                "{port}: BUFFER_PG|{} names BUFFER_PROFILE|{}, which is not defined",
                entry.0,
                excerpt(prof)
            ))),
            None => Err(bad(format!(
                "{port}: BUFFER_PROFILE|{} of priority group {pg} has xoff {}, not a size in bytes",
                excerpt(prof),
                excerpt(&xoff.to_string())
            ))),
        }
    }

    /// The ACL rules as a switch applies them, per key (in port, DSCP, out
    /// port) the rule that decides it:
    ///
    /// - a rule `TABLE|NAME` acts only through a table `ACL_TABLE|TABLE`
    ///   that exists, at stage `egress` (its rules match the out port,
    ///   known only there), whose type is declared in `ACL_TABLE_TYPE`
    ///   with the matches (`IN_PORTS`, `OUT_PORTS`, `DSCP`) and actions
    ///   (`SET_DSCP`, `SET_QUEUE`, `PACKET_ACTION`) the rule uses and bind
    ///   point `PORT`, and that is bound to every out port the rule names;
    ///   SONiC's built-in table types cannot rewrite DSCP and queue. A rule
    ///   the switch would not apply as written is an error, not skipped:
    ///   the export never writes one;
    /// - `PRIORITY` is an integer 1-65535, and the highest wins; two rules
    ///   of one priority that match one key with different actions are
    ///   ambiguous (the ASIC's order decides), an error;
    /// - a rule with `PACKET_ACTION` other than `FORWARD` drops (or
    ///   redirects) the packet: a key it decides is not lossless, and a
    ///   drop above a rewrite of the same key is an error naming both.
    fn acl_rules(
        &self,
        port_of: &dyn Fn(&str) -> Result<Option<LinkId>>,
        links: &[LinkId],
        host_ports: &[String],
    ) -> Result<AclDecisions> {
        let bad = self.bad;
        let mut decided = AclDecisions::new();
        let rules = match &self.db["ACL_RULE"] {
            Value::Null => return Ok(decided),
            Value::Object(m) => m,
            other => {
                return Err(bad(format!(
                    "ACL_RULE = {} is not a table",
                    excerpt(&other.to_string())
                )));
            }
        };
        for (key, r) in rules {
            let shown = excerpt(key);
            let what = format!("ACL_RULE|{shown}");
            let (table, _) = key
                .split_once('|')
                .ok_or_else(|| bad(format!("{what}: the key is not TABLE|RULE")))?;
            let t = &self.db["ACL_TABLE"][table];
            if !t.is_object() {
                return Err(bad(format!(
                    "{what}: ACL_TABLE|{} is not defined: the switch would not apply this rule",
                    excerpt(table)
                )));
            }
            let stage = t["stage"].as_str().unwrap_or("ingress");
            if !stage.eq_ignore_ascii_case("egress") {
                return Err(bad(format!(
                    "{what}: table {} is at stage {}: the rule matches the out port, known only at egress",
                    excerpt(table),
                    excerpt(stage)
                )));
            }
            let ty = t["type"].as_str().unwrap_or_default();
            let declared = &self.db["ACL_TABLE_TYPE"][ty];
            if !declared.is_object() {
                return Err(bad(format!(
                    "{what}: table type {} is not declared in ACL_TABLE_TYPE (SONiC's built-in types cannot set DSCP and queue)",
                    excerpt(ty)
                )));
            }
            let listed = |k: &str| -> BTreeSet<String> {
                declared[k]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|x| x.as_str().map(str::to_ascii_uppercase))
                    .collect()
            };
            let (matches, actions, binds) =
                (listed("MATCHES"), listed("ACTIONS"), listed("BIND_POINTS"));
            if !binds.contains("PORT") {
                return Err(bad(format!(
                    "{what}: table type {} does not bind to ports",
                    excerpt(ty)
                )));
            }
            let fields = r
                .as_object()
                .ok_or_else(|| bad(format!("{what} is not an object")))?;
            for f in fields.keys() {
                let known = match f.as_str() {
                    "PRIORITY" => true,
                    "IN_PORTS" | "OUT_PORTS" | "DSCP" => matches.contains(f.as_str()),
                    "SET_DSCP" | "SET_QUEUE" | "PACKET_ACTION" => actions.contains(f.as_str()),
                    _ => false,
                };
                if !known {
                    return Err(bad(format!(
                        "{what}: field {} is not one the table type {} allows (or not one an export writes)",
                        excerpt(f),
                        excerpt(ty)
                    )));
                }
            }
            let priority = match number(&r["PRIORITY"]) {
                Some(p) if (1..=65535).contains(&p) => p,
                _ => {
                    return Err(bad(format!(
                        "{what}: PRIORITY {} is not an integer from 1 to 65535",
                        excerpt(&r["PRIORITY"].to_string())
                    )));
                }
            };
            let field = |k: &str| -> Result<u32> {
                number(&r[k]).ok_or_else(|| {
                    bad(format!(
                        "{what}: {k} {} is not a number",
                        excerpt(&r[k].to_string())
                    ))
                })
            };
            let forward = match &r["PACKET_ACTION"] {
                Value::Null => true,
                Value::String(a) => a.eq_ignore_ascii_case("FORWARD"),
                _ => false,
            };
            let action = if forward {
                AclAction::Rewrite {
                    set_dscp: field("SET_DSCP")?,
                    queue: field("SET_QUEUE")?,
                }
            } else {
                AclAction::Drop
            };
            let bound: BTreeSet<&str> = t["ports"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            let list = |k: &str| -> Result<Vec<(String, Option<LinkId>)>> {
                let mut v: Vec<(String, Option<LinkId>)> = r[k]
                    .as_str()
                    .ok_or_else(|| bad(format!("{what} has no {k}")))?
                    .split(',')
                    .map(|n| Ok((n.trim().to_string(), port_of(n)?)))
                    .collect::<Result<_>>()?;
                v.dedup_by_key(|x| x.1);
                Ok(v)
            };
            let dscp = field("DSCP")?;
            // Host ports are one in port to the plan: a rule names all of
            // them or none.
            let named_hosts: BTreeSet<String> = r["IN_PORTS"]
                .as_str()
                .unwrap_or_default()
                .split(',')
                .map(|n| n.trim().to_string())
                .filter(|n| host_ports.contains(n))
                .collect();
            if !named_hosts.is_empty() && named_hosts.len() != host_ports.len() {
                return Err(bad(format!(
                    "{what}: IN_PORTS names some host ports but not all ({}): the plan treats a switch's host ports alike",
                    host_ports.join(",")
                )));
            }
            let ins = list("IN_PORTS")?;
            for (out_name, out) in list("OUT_PORTS")? {
                let out_link =
                    out.ok_or_else(|| bad(format!("{what}: OUT_PORTS names a host port")))?;
                debug_assert!(links.contains(&out_link));
                if !bound.contains(out_name.as_str()) {
                    return Err(bad(format!(
                        "{what}: table {} is not bound to port {}: the rule never acts there",
                        excerpt(table),
                        excerpt(&out_name)
                    )));
                }
                for (_, in_link) in &ins {
                    let rule = AclRule {
                        name: shown.clone(),
                        priority,
                        action,
                    };
                    let k = (*in_link, dscp, out_link);
                    match decided.get(&k) {
                        None => {
                            decided.insert(k, rule);
                        }
                        Some(old) if old.priority == priority && old.action != action => {
                            return Err(bad(format!(
                                "{what} and ACL_RULE|{} have PRIORITY {priority} and match the same packets with different actions: the order is the ASIC's",
                                old.name
                            )));
                        }
                        Some(old) if old.priority >= priority => {
                            if matches!(old.action, AclAction::Drop)
                                && matches!(rule.action, AclAction::Rewrite { .. })
                            {
                                return Err(bad(format!(
                                    "ACL_RULE|{} (PACKET_ACTION not FORWARD, PRIORITY {}) overrides {what}'s lossless rewrite: the switch drops those packets",
                                    old.name, old.priority
                                )));
                            }
                        }
                        Some(old) => {
                            if matches!(rule.action, AclAction::Drop)
                                && matches!(old.action, AclAction::Rewrite { .. })
                            {
                                return Err(bad(format!(
                                    "{what} (PACKET_ACTION not FORWARD, PRIORITY {priority}) overrides ACL_RULE|{}'s lossless rewrite: the switch drops those packets",
                                    old.name
                                )));
                            }
                            decided.insert(k, rule);
                        }
                    }
                }
            }
        }
        Ok(decided)
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
                // No rewrite map: packets keep their DSCP.
                if b["tc_to_dscp_map"].is_null() {
                    BTreeMap::new()
                } else {
                    self.map("TC_TO_DSCP_MAP", &b["tc_to_dscp_map"])?
                },
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
        let mut host_sig: Option<(String, BTreeMap<u32, u32>, Vec<Entry>)> = None;
        for (name, b) in qos {
            let in_link = port_of(name)?;
            let d2t = self.map("DSCP_TO_TC_MAP", &b["dscp_to_tc_map"])?;
            let pg = self.map("TC_TO_PRIORITY_GROUP_MAP", &b["tc_to_pg_map"])?;
            let pfc = self.pfc(name, b)?;
            // SONiC applies a port's binding only once every map it names
            // exists: a host port's egress maps too.
            for (t, k) in [
                ("TC_TO_QUEUE_MAP", "tc_to_queue_map"),
                ("TC_TO_DSCP_MAP", "tc_to_dscp_map"),
            ] {
                if !b[k].is_null() {
                    self.map(t, &b[k])?;
                }
            }
            // What this port classifies and the entries it gives.
            let mut port_classified: BTreeMap<u32, u32> = BTreeMap::new();
            let mut port_entries: Vec<Entry> = Vec::new();
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
                port_classified.insert(tag, prio);
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
                    self.queue_buffer(out, qn)?;
                    // A TC the map does not list keeps its DSCP.
                    let next_dscp = dm.get(&tc).copied().unwrap_or(d);
                    let next_tag = mapping.tag_of(next_dscp).ok_or_else(|| {
                        bad(format!(
                            "{out}: TC {tc} is queued lossless but leaves with DSCP {next_dscp}, no tag's value"
                        ))
                    })?;
                    port_entries.push(Entry {
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
            // The plan treats every host port of a switch alike (one set
            // of entries for "from a host"): they must classify and
            // forward alike, or the rule set would speak for ports that do
            // something else.
            if in_link.is_none() {
                match &host_sig {
                    None => {
                        host_sig =
                            Some((name.clone(), port_classified.clone(), port_entries.clone()))
                    }
                    Some((first, c, e)) => {
                        if *c != port_classified || *e != port_entries {
                            return Err(bad(format!(
                                "host ports {first} and {name} are configured differently: the plan treats a switch's host ports alike"
                            )));
                        }
                        continue;
                    }
                }
            }
            ingress.extend(port_classified.iter().map(|(&t, &p)| (t, p)));
            classified.insert(in_link, port_classified);
            entries.extend(port_entries);
        }
        if host_sig.is_some() {
            let hosts = topo.node(v).hosts as usize;
            if let Some(missing) = names[links.len()..links.len() + hosts]
                .iter()
                .find(|n| !qos.contains_key(n.as_str()))
            {
                return Err(bad(format!(
                    "host port {missing} has no PORT_QOS_MAP: the hosts there send without lossless treatment"
                )));
            }
        }
        // ACL rules, as the switch applies them (see `acl_rules`): per
        // (in port, DSCP, out port) the highest-priority rule decides; a
        // rewrite makes the key an entry, a drop ends its losslessness.
        let hosts = topo.node(v).hosts as usize;
        let host_ports = &names[links.len()..links.len() + hosts];
        for (key, rule) in self.acl_rules(&port_of, &links, host_ports)? {
            let (in_link, dscp, out_link) = key;
            let AclAction::Rewrite { set_dscp, queue } = rule.action else {
                continue;
            };
            let what = format!("ACL_RULE|{}", rule.name);
            let tag = tag_of(dscp, &what)?;
            let next_tag = tag_of(set_dscp, &what)?;
            let next_priority = mapping
                .priority_of(queue)
                .ok_or_else(|| bad(format!("{what}: SET_QUEUE {queue} is not lossless")))?;
            let prio = *classified
                .get(&in_link)
                .and_then(|m| m.get(&tag))
                .ok_or_else(|| {
                    bad(format!(
                        "{what}: DSCP {dscp} is not classified lossless on its in ports"
                    ))
                })?;
            let j = links.iter().position(|&l| l == out_link).expect("a port");
            if !egress[j].2.contains(&queue) {
                return Err(bad(format!(
                    "{}: lossless queue {queue} ({what}) is not in pfc_enable: it would not stop when paused",
                    names[j]
                )));
            }
            self.queue_buffer(&names[j], queue)?;
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
        Ok(Found {
            entries,
            ingress,
            classified,
        })
    }
}
