//! Reading an exported directory, SONiC or neutral alike: `summary.json`'s
//! header and switch list, each switch's file, and the check that every
//! lossless transition arrives lossless at the next switch.

use crate::error::{Error, Result};
use crate::rules::{Entry, RuleSet};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use tagger_generators::{LinkId, NodeId, Topology};

/// A directory's JSON file, parsed.
pub(super) fn load(p: &Path) -> Result<Value> {
    let text = tagger_generators::file::read_input(p).map_err(|e| Error::io(p, e))?;
    serde_json::from_str(&text).map_err(|e| Error::Export {
        kind: crate::error::ExportKind::ReadBack,
        reason: format!("{}: {e}", p.display()),
    })
}

/// What an error quotes of a value read from an export: 80 characters,
/// escaped ([`crate::error::excerpt`]).
pub(super) fn excerpt(text: &str) -> String {
    crate::error::excerpt(text, 80)
}

/// A number written as a JSON number or a string (SONiC writes strings).
pub(super) fn number(v: &Value) -> Option<u32> {
    v.as_u64()
        .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
        .and_then(|x| u32::try_from(x).ok())
}

/// Each switch `summary.json` lists: its node (checked against the
/// topology), its file's name and the file parsed; an error up front when
/// `switches` is not a list.
pub(super) fn switch_files<'a>(
    topo: &'a Topology,
    dir: &'a Path,
    summary: &'a Value,
    bad: &'a dyn Fn(&str, String) -> Error,
) -> Result<impl Iterator<Item = Result<(NodeId, String, Value)>> + 'a> {
    let list = summary["switches"].as_array().ok_or_else(|| {
        bad(
            "summary.json",
            format!(
                "switches = {} is not a list",
                excerpt(&summary["switches"].to_string())
            ),
        )
    })?;
    Ok(list.iter().map(move |s| {
        let v = number(&s["node"])
            .filter(|&v| (v as usize) < topo.node_count())
            .ok_or_else(|| {
                bad(
                    "summary.json",
                    format!(
                        "node {} is not in the topology",
                        excerpt(&s["node"].to_string())
                    ),
                )
            })?;
        let file = format!("{v}.json");
        let db = load(&dir.join(&file))?;
        Ok((v, file, db))
    }))
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
    let text = |k: &str| {
        summary[k].as_str().map(str::to_string).ok_or_else(|| {
            bad(
                "summary.json",
                format!("{k} = {} is not a string", summary[k]),
            )
        })
    };
    // Absent: one class; present, it must be a list of tags.
    let classes = match &summary["classes"] {
        Value::Null => Vec::new(),
        Value::Array(a) => a
            .iter()
            .map(|x| {
                number(x).ok_or_else(|| bad("summary.json", format!("classes: {x} is not a tag")))
            })
            .collect::<Result<_>>()?,
        other => {
            return Err(bad(
                "summary.json",
                format!("classes = {other} is not a list of tags"),
            ));
        }
    };
    Ok(RuleSet {
        topology: text("topology")?,
        algo: text("algo")?,
        priorities: num("priorities")?,
        initial_tag: num("initial_tag")?,
        classes,
        entries,
        ingress,
    })
}

/// Per (node, arriving link): tag -> the lossless priority the node
/// classifies it in.
pub(super) type Arrivals = BTreeMap<(NodeId, LinkId), BTreeMap<u32, u32>>;

/// Every lossless transition must arrive lossless: what node `u` sends on
/// link `l` with tag `t` in priority `p` must be classified at the link's
/// other end as tag `t` in priority `p`. PFC pauses the priority a packet
/// arrives in: if that is lossy or another priority, the queue the packet
/// left from is never paused for it and the downstream buffer can drop.
/// (A rule set alone cannot show this for a packet's last hop, delivered to
/// a host, so the exported directory is checked here.)
///
/// # Errors
/// [`Error::Export`] naming the downstream switch's file, the link and
/// the tag.
pub(super) fn check_arrivals(
    topo: &Topology,
    entries: &[Entry],
    arrivals: &Arrivals,
    bad: &dyn Fn(&str, String) -> Error,
) -> Result<()> {
    for e in entries {
        let [a, b] = topo.links()[e.out_link as usize];
        let v = if a == e.node { b } else { a };
        let got = arrivals
            .get(&(v, e.out_link))
            .and_then(|m| m.get(&e.next_tag));
        if got != Some(&e.next_priority) {
            return Err(bad(
                &format!("{v}.json"),
                format!(
                    "node {} sends tag {} in lossless priority {} on link {}, which node {v} classifies {}: its upstream queue would never be paused",
                    e.node,
                    e.next_tag,
                    e.next_priority,
                    e.out_link,
                    got.map_or("lossy".to_string(), |p| format!("in priority {p}"))
                ),
            ));
        }
    }
    Ok(())
}
