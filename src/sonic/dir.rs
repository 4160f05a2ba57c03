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

/// Where an export is read from: its directory, or an export still in
/// memory (an update step's running configuration, judged before anything
/// is written).
pub(super) enum Source<'a> {
    /// A directory written by [`super::write_files`].
    Dir(&'a Path),
    /// An export in memory; `label` names it in errors.
    Memory {
        /// What errors call the export.
        label: &'a str,
        /// Its `summary.json`.
        summary: &'a Value,
        /// Each switch's file, by node, with an id that changes whenever
        /// the file does (what `cache` is keyed by).
        files: &'a std::collections::BTreeMap<NodeId, (&'a Value, u64)>,
        /// Switch functions decoded before, by (node, id): a sequence of
        /// configurations that differ in a few switches decodes each
        /// file once.
        cache: Option<&'a DecodeCache>,
    },
}

/// Decoded switch functions with the reason each does not fit (if it does
/// not), by (node, file id): see [`Source::Memory`].
#[derive(Debug, Default)]
pub(crate) struct DecodeCache(
    std::cell::RefCell<std::collections::HashMap<(NodeId, u64), Decoded>>,
);

/// A switch's function, and why it does not fit its profile (if not).
type Decoded = (super::function::SwitchFn, Option<String>);

impl Source<'_> {
    /// Switch `v`'s function decoded by `decode`, or as decoded before.
    pub(super) fn decoded(
        &self,
        v: NodeId,
        decode: impl FnOnce() -> Result<Decoded>,
    ) -> Result<Decoded> {
        let Source::Memory {
            files,
            cache: Some(cache),
            ..
        } = self
        else {
            return decode();
        };
        let Some(&(_, id)) = files.get(&v) else {
            return decode();
        };
        if let Some(hit) = cache.0.borrow().get(&(v, id)) {
            return Ok(hit.clone());
        }
        let d = decode()?;
        cache.0.borrow_mut().insert((v, id), d.clone());
        Ok(d)
    }

    /// How errors name `file` of the export.
    pub(super) fn show(&self, file: &str) -> String {
        match self {
            Source::Dir(d) => d.join(file).display().to_string(),
            Source::Memory { label, .. } => format!("{label}/{file}"),
        }
    }

    /// `summary.json`, parsed.
    pub(super) fn summary(&self) -> Result<std::borrow::Cow<'_, Value>> {
        match self {
            Source::Dir(d) => load(&d.join("summary.json")).map(std::borrow::Cow::Owned),
            Source::Memory { summary, .. } => Ok(std::borrow::Cow::Borrowed(summary)),
        }
    }

    /// Every switch file present, `<node>.json` (a node id written as
    /// `summary.json` writes it: no sign, no leading zero), by node;
    /// another name that reads as a number (`007.json`) is a switch file
    /// too, under `u32::MAX` (no node has that id).
    fn switch_file_names(&self) -> Result<Vec<(NodeId, String)>> {
        match self {
            Source::Dir(d) => {
                let mut out = Vec::new();
                for e in std::fs::read_dir(d).map_err(|e| Error::io(d, e))? {
                    let e = e.map_err(|x| Error::io(d, x))?;
                    let name = e.file_name().to_string_lossy().into_owned();
                    let Some(stem) = name.strip_suffix(".json") else {
                        continue;
                    };
                    if stem.is_empty() || !stem.bytes().all(|b| b.is_ascii_digit()) {
                        continue;
                    }
                    let v = stem
                        .parse::<NodeId>()
                        .ok()
                        .filter(|v| v.to_string() == stem)
                        .unwrap_or(NodeId::MAX);
                    out.push((v, name));
                }
                out.sort();
                Ok(out)
            }
            Source::Memory { files, .. } => {
                Ok(files.keys().map(|&v| (v, format!("{v}.json"))).collect())
            }
        }
    }

    /// Switch `v`'s file, parsed.
    fn switch(&self, v: NodeId, file: &str) -> Result<std::borrow::Cow<'_, Value>> {
        match self {
            Source::Dir(d) => {
                let p = d.join(file);
                if std::fs::symlink_metadata(&p).is_err() {
                    return Err(Error::Export {
                        kind: crate::error::ExportKind::ReadBack,
                        reason: format!(
                            "{}: summary.json lists switch {v}, but its file is missing",
                            self.show(file)
                        ),
                    });
                }
                load(&p).map(std::borrow::Cow::Owned)
            }
            Source::Memory { files, .. } => files
                .get(&v)
                .map(|x| std::borrow::Cow::Borrowed(x.0))
                .ok_or_else(|| Error::Export {
                    kind: crate::error::ExportKind::ReadBack,
                    reason: format!(
                        "{}: summary.json lists it; there is no such file",
                        self.show(file)
                    ),
                }),
        }
    }
}

/// A switch's node, file name, parsed file and entry in `summary.json`.
pub(super) type Found<'a> = (NodeId, String, std::borrow::Cow<'a, Value>, &'a Value);

/// Each switch `summary.json` lists: its node (checked against the
/// topology, each once), its file's name, the file parsed, and its entry
/// in the list; an error up front when `switches` is not a list.
pub(super) fn switch_files<'a>(
    topo: &'a Topology,
    src: &'a Source<'a>,
    summary: &'a Value,
    bad: &'a dyn Fn(&str, String) -> Error,
) -> Result<impl Iterator<Item = Result<Found<'a>>> + 'a> {
    let list = summary["switches"].as_array().ok_or_else(|| {
        bad(
            "summary.json",
            format!(
                "switches = {} is not a list",
                excerpt(&summary["switches"].to_string())
            ),
        )
    })?;
    // Every entry is checked before any file is read, so that the files
    // the summary does not list are known.
    let mut nodes = std::collections::BTreeSet::new();
    let mut checked = Vec::with_capacity(list.len());
    for s in list {
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
        if !nodes.insert(v) {
            return Err(bad("summary.json", format!("switch {v} is listed twice")));
        }
        // A switch's file is its node's: a summary naming another (a
        // deploy script trusting it would load one switch's configuration
        // on another) is refused.
        if !s["file"].is_null() && s["file"].as_str() != Some(format!("{v}.json").as_str()) {
            return Err(bad(
                "summary.json",
                format!(
                    "switch {v}'s file is {}, not {v}.json",
                    excerpt(&s["file"].to_string())
                ),
            ));
        }
        checked.push(v);
    }
    // Every switch file present is judged: one the summary does not list
    // would still be loaded on its switch.
    if let Some(file) = src
        .switch_file_names()?
        .into_iter()
        .find(|(v, _)| !nodes.contains(v))
        .map(|(_, f)| f)
    {
        return Err(bad(
            &file,
            "is a switch file that summary.json does not list: every switch file of an export is judged, so list it in summary.json's switches or remove it".into(),
        ));
    }
    Ok(list.iter().zip(checked).map(move |(s, v)| {
        let file = format!("{v}.json");
        let db = src.switch(v, &file)?;
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
    // The priorities the switches use, as decoded; the summary may
    // record more (a configuration between update steps records the most
    // of those it mixes), never fewer.
    let used = entries
        .iter()
        .map(|e| e.priority.max(e.next_priority))
        .max()
        .unwrap_or(0);
    let said = num("priorities")?;
    if said < used {
        return Err(bad(
            "summary.json",
            format!("priorities = {said}, but the switches use priority {used}"),
        ));
    }
    Ok(RuleSet {
        topology: text("topology")?,
        algo: text("algo")?,
        priorities: used.max(1),
        initial_tag: num("initial_tag")?,
        classes,
        entries,
        ingress,
    })
}

/// Checks that switch `v`'s patch (`<v>.patch.json`), applied to its base
/// (`<v>.base.json`) as `config apply-patch` applies it, gives exactly
/// its configuration `db` (`<v>.json`): the read-back judges that
/// configuration, so it must be what the patch makes of the base.
///
/// # Errors
/// [`Error::Export`] naming the file missing, the patch that does not
/// apply, or the first table where the result differs.
pub(super) fn check_patch(dir: &Path, v: NodeId, db: &Value) -> Result<()> {
    let bad = |file: String, reason: String| Error::Export {
        kind: crate::error::ExportKind::ReadBack,
        reason: format!("{}: {reason}", dir.join(file).display()),
    };
    let (pf, bf) = (format!("{v}.patch.json"), format!("{v}.base.json"));
    for f in [&pf, &bf] {
        if std::fs::symlink_metadata(dir.join(f)).is_err() {
            return Err(bad(
                f.clone(),
                "is missing: every switch's export is its base, the patch and the configuration they make".into(),
            ));
        }
    }
    let patch: json_patch::Patch = serde_json::from_value(load(&dir.join(&pf))?)
        .map_err(|e| bad(pf.clone(), format!("is not an RFC 6902 JSON Patch: {e}")))?;
    let mut base = load(&dir.join(&bf))?;
    json_patch::patch(&mut base, &patch)
        .map_err(|e| bad(pf.clone(), format!("does not apply to {bf}: {e}")))?;
    if base != *db {
        let tables: std::collections::BTreeSet<&String> = base
            .as_object()
            .into_iter()
            .flatten()
            .chain(db.as_object().into_iter().flatten())
            .map(|(k, _)| k)
            .collect();
        let first = tables
            .into_iter()
            .find(|t| base.get(t.as_str()) != db.get(t.as_str()))
            .map_or("the document".to_string(), |t| excerpt(t));
        return Err(bad(
            format!("{v}.json"),
            format!(
                "is not what {pf} makes of {bf} (they differ in {first}): a switch would hold another configuration than the one judged"
            ),
        ));
    }
    Ok(())
}

/// Rewrites switch `v`'s patch to make its `<v>.json` of its base, after
/// a test edited the configuration: the read-back then judges the edit
/// itself, not the stale patch.
#[cfg(test)]
pub(crate) fn repatch(dir: &Path, v: NodeId) {
    let db = load(&dir.join(format!("{v}.json"))).unwrap();
    let base_file = dir.join(format!("{v}.base.json"));
    let Ok(base) = load(&base_file) else { return };
    let patch = json_patch::diff(&base, &db);
    std::fs::write(
        dir.join(format!("{v}.patch.json")),
        serde_json::to_string(&patch).unwrap(),
    )
    .unwrap();
}
