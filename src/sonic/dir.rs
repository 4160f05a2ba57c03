//! Reading an exported directory, SONiC or neutral alike: `summary.json`'s
//! header and switch list, and each switch's file.

use crate::error::{Error, Result};
use crate::rules::{Entry, RuleSet};
use serde_json::Value;
use std::path::Path;
use tagger_generators::{NodeId, Topology};

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
/// topology, each once), its file's name, the file parsed, and its entry
/// in the list; an error up front when `switches` is not a list.
pub(super) fn switch_files<'a>(
    topo: &'a Topology,
    dir: &'a Path,
    summary: &'a Value,
    bad: &'a dyn Fn(&str, String) -> Error,
) -> Result<impl Iterator<Item = Result<(NodeId, String, Value, &'a Value)>> + 'a> {
    let list = summary["switches"].as_array().ok_or_else(|| {
        bad(
            "summary.json",
            format!(
                "switches = {} is not a list",
                excerpt(&summary["switches"].to_string())
            ),
        )
    })?;
    let mut seen = std::collections::BTreeSet::new();
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
        if !seen.insert(v) {
            return Err(bad("summary.json", format!("switch {v} is listed twice")));
        }
        let file = format!("{v}.json");
        let db = load(&dir.join(&file))?;
        Ok((v, file, db, s))
    }))
}

/// The tags hosts send, from `summary.json`: `classes` when it lists
/// several, else `initial_tag`.
pub(super) fn host_tags(summary: &Value, bad: &dyn Fn(&str, String) -> Error) -> Result<Vec<u32>> {
    let classes = classes(summary, bad)?;
    if !classes.is_empty() {
        return Ok(classes);
    }
    number(&summary["initial_tag"])
        .map(|t| vec![t])
        .ok_or_else(|| bad("summary.json", "initial_tag is not a number".into()))
}

/// The largest tag of the plan, from `summary.json` (`tags`; without it,
/// `priorities`: tags are priorities in DSCP plans).
pub(super) fn max_tag(summary: &Value, bad: &dyn Fn(&str, String) -> Error) -> Result<u32> {
    let key = if summary["tags"].is_null() {
        "priorities"
    } else {
        "tags"
    };
    number(&summary[key]).ok_or_else(|| bad("summary.json", format!("{key} is not a number")))
}

fn classes(summary: &Value, bad: &dyn Fn(&str, String) -> Error) -> Result<Vec<u32>> {
    // Absent: one class; present, it must be a list of tags.
    match &summary["classes"] {
        Value::Null => Ok(Vec::new()),
        Value::Array(a) => a
            .iter()
            .map(|x| {
                number(x).ok_or_else(|| bad("summary.json", format!("classes: {x} is not a tag")))
            })
            .collect(),
        other => Err(bad(
            "summary.json",
            format!("classes = {other} is not a list of tags"),
        )),
    }
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
    let classes = classes(summary, bad)?;
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
