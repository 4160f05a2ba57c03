//! The SONiC `config_db` writer.

use super::classify::{ClassKey, Classes, classifier, classify};
use super::{EGRESS_POOL, FORMAT, FREE_TCS, INGRESS_POOL, Mapping, Options, port_names};
use crate::capacity::{PortHeadroom, port_headroom};
use crate::error::{Error, Result};
use crate::rules::RuleSet;
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use tagger_generators::{NodeId, Topology};

/// Buffer profile of the lossless queues (SONiC's egress lossless default:
/// no reserve, the pool's dynamic threshold 7).
const EGRESS_PROFILE: &str = "TAGGER_EGRESS_LOSSLESS";

/// One switch's export.
#[derive(Debug)]
pub struct Switch {
    /// The switch.
    pub node: NodeId,
    /// Its `config_db` object (or neutral table).
    pub config: Value,
    /// Traffic classes used besides the lossy one.
    pub tcs: usize,
    /// Traffic classes the port maps alone would need.
    pub needed_tcs: usize,
    /// ACL rules written when that is more than the switch has (0
    /// otherwise, and when only [`traffic_classes`] are counted).
    pub acl_rules: usize,
}

impl Switch {
    /// Whether the port maps alone need more traffic classes than the
    /// switch has (its rewrites are then ACL rules).
    pub fn over(&self) -> bool {
        self.needed_tcs > FREE_TCS
    }
}

/// A plan's export.
#[derive(Debug)]
pub struct Export {
    /// One per switch with lossless traffic, in node order.
    pub switches: Vec<Switch>,
    /// `summary.json`: the rule set's header, the mapping and buffer settings, per-switch counts.
    pub summary: Value,
}

/// Exports `rules` (verified for `topo`) as one `config_db` object per
/// node with lossless traffic.
///
/// ```
/// use tagger::sonic::{Options, export, read, write};
/// let t = tagger::TopologySpec::parse("fattree:k=4")?.build()?;
/// let elp = tagger::elp::ElpSet::build(&t, &tagger::elp::ElpSpec::parse("kbounce:1")?)?;
/// let tagging = tagger::tagging::tag(&t, &elp, "clos".parse()?, Default::default())?;
/// let rules = tagger::rules::RuleSet::from_tagging(&t, &tagging);
/// let ex = export(&t, &rules, &Options::default())?;
/// assert!(ex.switches.iter().all(|s| s.tcs <= 4)); // no ACL needed
/// let dir = std::env::temp_dir().join("tagger-doc-export");
/// write(&dir, &ex)?;
/// assert_eq!(read(&t, &dir)?.entries, rules.entries); // the maps decode exactly
/// # std::fs::remove_dir_all(&dir).ok();
/// # Ok::<(), tagger::Error>(())
/// ```
///
/// # Errors
/// [`Error::Export`] when a priority has no queue or a tag no DSCP value
/// in `opts.mapping`, or an entry is a U-turn.
pub fn export(topo: &Topology, rules: &RuleSet, opts: &Options) -> Result<Export> {
    export_inner(topo, rules, opts)
}

/// Traffic classes the export of `rules` needs: (most needed at one switch
/// by the port maps alone, switches over the [`FREE_TCS`] that therefore
/// use ACL rules), without writing the maps.
///
/// # Errors
/// As [`export`] with the default options.
pub fn traffic_classes(topo: &Topology, rules: &RuleSet) -> Result<(usize, usize)> {
    use rayon::prelude::*;
    check_mapping(rules, &Options::default().mapping)?;
    let classes = classifier(topo, rules)?;
    // Nodes are classified independently; the max and the count do not
    // depend on the order they finish in.
    let needed: Vec<usize> = (0..topo.node_count() as NodeId)
        .into_par_iter()
        .filter_map(|v| classes.node(v).map(|c| c.number.len()))
        .collect();
    Ok((
        needed.iter().copied().max().unwrap_or(0),
        needed.iter().filter(|&&n| n > FREE_TCS).count(),
    ))
}

fn check_mapping(rules: &RuleSet, m: &Mapping) -> Result<()> {
    for e in &rules.entries {
        m.queue_of(e.priority)?;
        m.queue_of(e.next_priority)?;
        m.dscp_of(e.tag)?;
        m.dscp_of(e.next_tag)?;
    }
    Ok(())
}

fn export_inner(topo: &Topology, rules: &RuleSet, opts: &Options) -> Result<Export> {
    check_mapping(rules, &opts.mapping)?;
    let mut switches = Vec::new();
    for mut c in classify(topo, rules)? {
        let needed = c.number.len();
        // Too many for the switch: classify by arriving priority only (one
        // TC each, its egress maps lossy) and let ACL rules do the rewrite.
        let acl = needed > FREE_TCS;
        if acl {
            let mut by_prio: BTreeMap<ClassKey, u32> = BTreeMap::new();
            for m in &mut c.ingress {
                for key in m.values_mut() {
                    *key = (key.0, Vec::new());
                    by_prio.insert(key.clone(), 0);
                }
            }
            for (i, tc) in by_prio.values_mut().enumerate() {
                *tc = i as u32 + 1;
            }
            c.number = by_prio;
        }
        let (config, acl_rules) = switch_config(topo, &c, opts, acl);
        switches.push(Switch {
            node: c.node,
            config,
            tcs: c.number.len(),
            needed_tcs: needed,
            acl_rules,
        });
    }
    let p = &opts.profile;
    let summary = json!({
        "format": FORMAT,
        "topology": rules.topology,
        "algo": rules.algo,
        "priorities": rules.priorities,
        "initial_tag": rules.initial_tag,
        "classes": rules.classes,
        "mapping": opts.mapping.to_json(),
        "buffer": {
            "profile": p.name,
            "headroom_model": p.headroom.name(),
            "shared_headroom_pool": p.shared_headroom_pool,
            "ingress_pool": INGRESS_POOL,
            "egress_pool": EGRESS_POOL,
        },
        "sonic_tcs_max": switches.iter().map(|s| s.needed_tcs).max().unwrap_or(0),
        "sonic_switches_over_tcs": switches.iter().filter(|s| s.over()).count(),
        "switches": switches.iter().map(|s| json!({"node": s.node, "file": format!("{}.json", s.node), "tcs": s.tcs, "needed_tcs": s.needed_tcs, "acl_rules": s.acl_rules})).collect::<Vec<_>>(),
    });
    Ok(Export { switches, summary })
}

/// Cable lengths as SONiC's `CABLE_LENGTH` writes them: whole metres,
/// rounded up (the buffers are sized for the exact length).
fn cable_text(m: f64) -> String {
    format!("{}m", m.ceil() as u64)
}

/// One switch's `config_db` object and its ACL rule count. The mapping was
/// checked against every entry, so lookups cannot fail.
fn switch_config(topo: &Topology, c: &Classes, opts: &Options, acl: bool) -> (Value, usize) {
    let m = &opts.mapping;
    let q = |p: u32| m.queue_of(p).expect("checked");
    let d = |t: u32| m.dscp_of(t).expect("checked");
    let names = port_names(topo, c.node, c.ports());
    let mut db = Map::new();
    let mut tables: BTreeMap<&str, Map<String, Value>> = BTreeMap::new();
    // Identical maps are written once and shared by name.
    let mut named = |table: &'static str, prefix: &str, m: Map<String, Value>| -> String {
        let t = tables.entry(table).or_default();
        if let Some((k, _)) = t.iter().find(|(_, x)| **x == Value::Object(m.clone())) {
            return k.clone();
        }
        let name = format!("TAGGER_{prefix}_{}", t.len());
        t.insert(name.clone(), Value::Object(m));
        name
    };
    let mut pg = Map::new();
    pg.insert("0".into(), json!("0"));
    for ((prio, _), tc) in &c.number {
        pg.insert(tc.to_string(), json!(q(*prio).to_string()));
    }
    let pg_name = named("TC_TO_PRIORITY_GROUP_MAP", "TC_TO_PG", pg);
    let p = &opts.profile;
    let mut port_qos = Map::new();
    let mut ports = Map::new();
    let mut cable = Map::new();
    let mut buffer_pg = Map::new();
    let mut buffer_queue = Map::new();
    let mut profiles = Map::new();
    for (i, name) in names.iter().enumerate() {
        let link = c.link(i);
        let mut d2t = Map::new();
        // Priority groups arriving here, and queues leaving.
        let mut arriving: BTreeSet<u32> = BTreeSet::new();
        for (tag, key) in &c.ingress[c.position(i)] {
            d2t.insert(d(*tag).to_string(), json!(c.number[key].to_string()));
            arriving.insert(q(key.0));
        }
        // A packet delivered to a host keeps its tag and leaves in the
        // queue of the priority it arrived with (hosts only sink traffic,
        // so no cycle runs through them).
        let leaving: BTreeSet<u32> = match link {
            Some(l) => c
                .entries
                .iter()
                .filter(|e| e.out_link == l)
                .map(|e| q(e.next_priority))
                .collect(),
            None => c.number.keys().map(|k| q(k.0)).collect(),
        };
        let mut tq = Map::new();
        let mut td = Map::new();
        tq.insert("0".into(), json!("0"));
        td.insert("0".into(), json!("0"));
        for (key, tc) in &c.number {
            let (queue_n, dscp_n) = match link {
                None => (q(key.0), 0),
                Some(l) => match key.1.iter().find(|x| x.0 == l) {
                    Some(&(_, next_tag, next_prio)) => (q(next_prio), d(next_tag)),
                    None => (0, 0),
                },
            };
            tq.insert(tc.to_string(), json!(queue_n.to_string()));
            td.insert(tc.to_string(), json!(dscp_n.to_string()));
        }
        let pfc: Vec<String> = arriving.union(&leaving).map(u32::to_string).collect();
        let mut bind = Map::new();
        bind.insert(
            "dscp_to_tc_map".into(),
            json!(named("DSCP_TO_TC_MAP", "DSCP_TO_TC", d2t)),
        );
        bind.insert("tc_to_pg_map".into(), json!(pg_name.clone()));
        bind.insert(
            "tc_to_queue_map".into(),
            json!(named("TC_TO_QUEUE_MAP", "TC_TO_QUEUE", tq)),
        );
        // Host ports keep the DSCP the packet arrived with.
        if link.is_some() {
            bind.insert(
                "tc_to_dscp_map".into(),
                json!(named("TC_TO_DSCP_MAP", "TC_TO_DSCP", td)),
            );
        }
        bind.insert("pfc_enable".into(), json!(pfc.join(",")));
        bind.insert("pfcwd_sw_enable".into(), json!(pfc.join(",")));
        port_qos.insert(name.clone(), Value::Object(bind));
        let (speed, cable_m) = match link {
            Some(l) => p.link(topo, l),
            None => (p.host_speed_gbps, p.host_cable_m),
        };
        // SONiC writes port speeds in Mb/s.
        let speed_mbps = (speed * 1000.0).round() as u64;
        // Headroom for each arriving lossless priority group, sized for
        // this port's speed and cable by the capacity model (once per
        // speed and cable: ports share a profile).
        if !arriving.is_empty() {
            let prof = format!("TAGGER_PG_LOSSLESS_{speed_mbps}_{cable_m}m");
            profiles.entry(prof.clone()).or_insert_with(|| {
                lossless_profile(port_headroom(p, speed, cable_m), p.shared_headroom_pool)
            });
            for pg in &arriving {
                buffer_pg.insert(format!("{name}|{pg}"), json!({ "profile": prof }));
            }
        }
        for queue in &leaving {
            buffer_queue.insert(
                format!("{name}|{queue}"),
                json!({ "profile": EGRESS_PROFILE }),
            );
        }
        cable.insert(name.clone(), json!(cable_text(cable_m)));
        let mut port = Map::new();
        port.insert(
            "description".into(),
            json!(match link {
                Some(l) => {
                    let [a, b] = topo.links()[l as usize];
                    format!("link {l} to node {}", if a == c.node { b } else { a })
                }
                None => "host port".to_string(),
            }),
        );
        port.insert("speed".into(), json!(speed_mbps.to_string()));
        port.insert("mtu".into(), json!(p.port_mtu.to_string()));
        ports.insert(name.clone(), Value::Object(port));
    }
    if !buffer_queue.is_empty() {
        profiles.insert(
            EGRESS_PROFILE.into(),
            json!({"pool": EGRESS_POOL, "size": "0", "dynamic_th": "7"}),
        );
    }
    let mut acl_rules = 0;
    if acl {
        // One rule per compressed entry (port sets, one action).
        let compressed = crate::rules::compress(c.entries);
        acl_rules = compressed.len();
        let name_of = |l: Option<tagger_generators::LinkId>| -> Vec<String> {
            match l {
                Some(l) => {
                    vec![names[c.port_of_link(l)].clone()]
                }
                None => names[c.links.len()..].to_vec(),
            }
        };
        let mut rules_t = Map::new();
        for (i, e) in compressed.iter().enumerate() {
            let ins: Vec<String> = e.in_links.iter().flat_map(|&l| name_of(l)).collect();
            let outs: Vec<String> = e.out_links.iter().flat_map(|&l| name_of(Some(l))).collect();
            rules_t.insert(
                format!("TAGGER_REWRITE|RULE_{i}"),
                json!({
                    "PRIORITY": (9999 - i.min(9998)).to_string(),
                    "IN_PORTS": ins.join(","),
                    "DSCP": d(e.tag).to_string(),
                    "OUT_PORTS": outs.join(","),
                    "SET_DSCP": d(e.next_tag).to_string(),
                    "SET_QUEUE": q(e.next_priority).to_string(),
                    "PACKET_ACTION": "FORWARD",
                }),
            );
        }
        // The rules match in and out ports and DSCP, and set DSCP and
        // queue: a custom table type declares that (SONiC 202205 and later).
        db.insert(
            "ACL_TABLE_TYPE".into(),
            json!({"TAGGER_REWRITE": {
                "MATCHES": ["IN_PORTS", "OUT_PORTS", "DSCP"],
                "ACTIONS": ["PACKET_ACTION", "SET_DSCP", "SET_QUEUE"],
                "BIND_POINTS": ["PORT"],
            }}),
        );
        db.insert(
            "ACL_TABLE".into(),
            json!({"TAGGER_REWRITE": {
                "policy_desc": "tagger: lossless tag rewrite (in port, DSCP, out port) -> DSCP and queue",
                "type": "TAGGER_REWRITE",
                "stage": "egress",
                "ports": names,
            }}),
        );
        db.insert("ACL_RULE".into(), Value::Object(rules_t));
    }
    db.insert("PORT".into(), Value::Object(ports));
    for (t, m) in tables {
        db.insert(t.into(), Value::Object(m));
    }
    db.insert("PORT_QOS_MAP".into(), Value::Object(port_qos));
    db.insert("CABLE_LENGTH".into(), json!({ "AZURE": cable }));
    if !profiles.is_empty() {
        db.insert("BUFFER_PROFILE".into(), Value::Object(profiles));
    }
    if !buffer_pg.is_empty() {
        db.insert("BUFFER_PG".into(), Value::Object(buffer_pg));
    }
    if !buffer_queue.is_empty() {
        db.insert("BUFFER_QUEUE".into(), Value::Object(buffer_queue));
    }
    (Value::Object(db), acl_rules)
}

/// A lossless priority group's profile: xoff absorbs what is in flight
/// after a pause, xon what arrives before traffic resumes. With a shared
/// headroom pool the group reserves only its xon and the xoff is drawn
/// from the pool.
fn lossless_profile(h: PortHeadroom, shared: bool) -> Value {
    let size = if shared { h.xon } else { h.size() };
    json!({
        "pool": INGRESS_POOL,
        "xoff": h.xoff.to_string(),
        "xon": h.xon.to_string(),
        "size": size.to_string(),
        "dynamic_th": "0",
    })
}

/// Writes `DIR/<node>.json` per switch and `DIR/summary.json`: into a
/// temporary sibling directory that then replaces `DIR` whole, so a reader
/// never sees a half-written export or files of an earlier one. `DIR` must
/// be new, empty or an earlier export ([`replaceable`]).
///
/// # Errors
/// [`Error::OutputDir`] for a directory that is not an export; I/O errors
/// naming the file.
pub fn write(dir: &Path, ex: &Export) -> Result<()> {
    let mut staging = crate::output::Staging::default();
    staging.dir(dir, replaceable, |tmp| write_files(tmp, ex));
    staging.commit()
}

/// Writes the export's files into the (empty) directory `dir`: one
/// `<node>.json` per switch and `summary.json`.
///
/// # Errors
/// [`Error::Io`] naming the file.
pub fn write_files(dir: &Path, ex: &Export) -> Result<()> {
    for s in &ex.switches {
        let text = serde_json::to_string_pretty(&s.config).expect("JSON values serialise");
        crate::output::write_string(&dir.join(format!("{}.json", s.node)), &(text + "\n"))?;
    }
    let text = serde_json::to_string_pretty(&ex.summary).expect("JSON values serialise");
    crate::output::write_string(&dir.join("summary.json"), &(text + "\n"))
}

/// Whether an export may replace the directory `dir`: it does not exist,
/// is empty, or holds an earlier export (its `summary.json` names a
/// `tagger-` format). Anything else is refused, so an export never mixes
/// with or deletes files it did not write.
///
/// # Errors
/// [`Error::OutputDir`] saying why.
pub fn replaceable(dir: &Path) -> Result<()> {
    let refuse = |reason: &str| {
        Err(Error::OutputDir {
            path: dir.to_path_buf(),
            reason: reason.into(),
        })
    };
    let meta = match std::fs::metadata(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(Error::io(dir, e)),
        Ok(m) => m,
    };
    if !meta.is_dir() {
        return refuse("exists and is not a directory");
    }
    let mut entries = std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))?;
    if entries.next().is_none() {
        return Ok(());
    }
    let summary = dir.join("summary.json");
    let ours = std::fs::metadata(&summary).is_ok_and(|m| m.is_file() && m.len() < 1 << 20)
        && std::fs::read_to_string(&summary)
            .ok()
            .and_then(|t| serde_json::from_str::<Value>(&t).ok())
            .and_then(|v| v["format"].as_str().map(|f| f.starts_with("tagger-")))
            .unwrap_or(false);
    if ours {
        Ok(())
    } else {
        refuse(
            "holds files that are not a tagger export (no summary.json of one): an export replaces its directory whole, so give a new or empty directory",
        )
    }
}
