//! Switch configuration from a tagging: per node, the ingress map (tag ->
//! lossless queue) and egress entries `(in_port, tag, out_port) -> new tag`,
//! with a default entry that sends anything unmatched to the lossy class.

pub use crate::compress::{Compressed, Entry, NodeCounts, compress};

use crate::compress::node_counts;
use crate::error::{Error, Result};
use crate::tagging::Tagging;
use serde::Deserialize;
use std::path::Path;
use tagger_generators::Topology;

/// Format of a rules file.
pub const FORMAT: &str = "tagger-rules/1";

/// The full configuration, as exported by `--rules-out`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuleSet {
    /// The topology's name.
    pub topology: String,
    /// The algorithm that planned it.
    pub algo: String,
    /// Lossless priorities the entries use.
    pub priorities: u32,
    /// The tag hosts send.
    pub initial_tag: u32,
    /// With several application classes sharing the queues: the tag each
    /// class's hosts send, the first equal to `initial_tag` (empty: one
    /// class). Written as `"classes"` only when present.
    pub classes: Vec<u32>,
    /// Sorted by (node, in_link, tag, out_link).
    pub entries: Vec<Entry>,
    /// Per node, the ingress map: the distinct `(tag, lossless queue)` pairs
    /// of packets arriving at its ports, including packets delivered to
    /// hosts there. Under DSCP the queue is the tag; under TTL one entry
    /// matches a hop count on a set of ports.
    pub ingress: Vec<Vec<(u32, u32)>>,
}

impl RuleSet {
    /// The rule set a tagging decides: one entry per decided key, sorted, with each node's ingress map.
    pub fn from_tagging(topo: &Topology, t: &Tagging) -> Self {
        let entries = t.entries();
        let ingress = t.ingress(topo);
        RuleSet {
            topology: topo.name().to_string(),
            algo: t.algo.name(),
            priorities: t.priorities,
            initial_tag: 1,
            classes: Vec::new(),
            entries,
            ingress,
        }
    }

    /// Bytes a rule set built from `t` holds, before it is built: about
    /// one entry per key.
    pub fn estimate_bytes(t: &Tagging) -> u64 {
        crate::budget::bytes_of::<Entry>(t.keys.len())
    }

    /// Heap bytes held: entries and the ingress map.
    pub fn heap_bytes(&self) -> u64 {
        crate::budget::bytes_of::<Entry>(self.entries.len())
            + crate::budget::bytes_of::<(u32, u32)>(self.ingress.iter().map(Vec::len).sum())
    }

    /// The tags hosts send: one per application class.
    pub fn host_tags(&self) -> Vec<u32> {
        if self.classes.is_empty() {
            vec![self.initial_tag]
        } else {
            self.classes.clone()
        }
    }

    /// Lossless priorities present at `node`'s ingress ports.
    pub fn priorities_at(&self, node: usize) -> usize {
        let mut p: Vec<u32> = self
            .ingress
            .get(node)
            .map_or(Vec::new(), |v| v.iter().map(|x| x.1).collect());
        p.sort_unstable();
        p.dedup();
        p.len()
    }

    /// The entries as the tagging stage's keys (channels instead of
    /// links), sorted by (node, in channel, tag, out channel), for
    /// [`crate::tagging::traffic::classify`]. The rule set must be for
    /// `topo` (verified against it).
    ///
    /// # Errors
    /// [`Error::Export`] naming an entry whose links do not meet at its
    /// node.
    pub fn keys(&self, topo: &Topology) -> Result<Vec<crate::tagging::Key>> {
        let on = |l: u32, v: u32| -> Option<u32> {
            let [a, b] = *topo.links().get(l as usize)?;
            if a == v {
                Some(2 * l)
            } else if b == v {
                Some(2 * l + 1)
            } else {
                None
            }
        };
        let mut keys = self
            .entries
            .iter()
            .map(|e| {
                let bad = || Error::Export {
                    kind: crate::error::ExportKind::Plan,
                    reason: format!("entry {e:?}: its links do not meet at node {}", e.node),
                };
                Ok(crate::tagging::Key {
                    node: e.node,
                    in_channel: match e.in_link {
                        Some(l) => Some(on(l, e.node).ok_or_else(bad)? ^ 1),
                        None => None,
                    },
                    tag: e.tag,
                    out_channel: on(e.out_link, e.node).ok_or_else(bad)?,
                    next_tag: e.next_tag,
                    priority: e.priority,
                    next_priority: e.next_priority,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        keys.sort_unstable();
        Ok(keys)
    }

    /// Entries of each node, as slices of the sorted list.
    pub fn by_node(&self, nodes: usize) -> Vec<&[Entry]> {
        crate::compress::by_node(&self.entries, nodes)
    }

    /// Exact, compressed and queue counts per node.
    pub fn counts(&self, nodes: usize) -> Vec<NodeCounts> {
        use rayon::prelude::*;
        // Each node's compression is its own: in parallel, collected in
        // node order.
        self.by_node(nodes)
            .par_iter()
            .enumerate()
            .map(|(v, es)| node_counts(es, self.ingress.get(v).map_or(0, Vec::len)))
            .collect()
    }

    /// Renders `tagger-rules/1` JSON, one entry per line (see
    /// [`RuleSet::write_json`]).
    pub fn to_json(&self) -> String {
        let mut out = Vec::with_capacity(128 + self.entries.len() * 110);
        self.write_json(&mut out).expect("a Vec takes every write");
        String::from_utf8(out).expect("the JSON is UTF-8")
    }

    /// Writes `tagger-rules/1` JSON, one entry per line, to `w` as it goes:
    /// the whole text is not held (Jellyfish 10000: 705 MB).
    ///
    /// # Errors
    /// The writer's.
    pub fn write_json(&self, w: &mut dyn std::io::Write) -> std::io::Result<()> {
        // `classes` only with several application classes, so single-class
        // files stay as they were.
        let classes = if self.classes.is_empty() {
            String::new()
        } else {
            format!(
                ", \"classes\": {}",
                serde_json::to_string(&self.classes).expect("numbers serialise")
            )
        };
        write!(
            w,
            "{{\"format\": \"{FORMAT}\", \"topology\": {}, \"algo\": {}, \"priorities\": {}, \"initial_tag\": {}{classes},\n \"entries\": [",
            serde_json::to_string(&self.topology).expect("strings serialise"),
            // Escaped like the topology: a file read back may name its
            // algorithm with a quote or a control character.
            serde_json::to_string(&self.algo).expect("strings serialise"),
            self.priorities,
            self.initial_tag
        )?;
        for (i, e) in self.entries.iter().enumerate() {
            let sep = if i == 0 { "\n  " } else { ",\n  " };
            write!(w, "{sep}{{\"node\": {}, \"in_link\": ", e.node)?;
            match e.in_link {
                Some(l) => write!(w, "{l}")?,
                None => w.write_all(b"null")?,
            }
            write!(
                w,
                ", \"tag\": {}, \"out_link\": {}, \"next_tag\": {}, \"priority\": {}, \"next_priority\": {}}}",
                e.tag, e.out_link, e.next_tag, e.priority, e.next_priority
            )?;
        }
        w.write_all(b"]}\n")
    }

    /// Reads `tagger-rules/1` JSON. The ingress map is rebuilt from the
    /// entries (the file lists egress entries only).
    ///
    /// # Errors
    /// [`Error::RulesFile`] naming the line or field at fault.
    pub fn read(path: &Path) -> Result<Self> {
        let text = tagger_generators::file::read_input(path).map_err(|e| Error::io(path, e))?;
        Self::parse(&text, path)
    }

    /// Parses `tagger-rules/1` JSON text; `origin` names it in errors.
    ///
    /// # Errors
    /// [`Error::RulesFile`] naming the line or field at fault.
    pub fn parse(text: &str, origin: &Path) -> Result<Self> {
        let path = origin;
        #[derive(Deserialize)]
        struct Raw {
            format: String,
            topology: String,
            algo: String,
            priorities: u32,
            initial_tag: u32,
            #[serde(default)]
            classes: Vec<u32>,
            entries: Vec<Entry>,
        }
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let bad = |location: String, reason: String| Error::RulesFile {
            path: path.to_path_buf(),
            location,
            reason,
        };
        let raw: Raw = serde_json::from_str(text).map_err(|e| {
            let msg = e.to_string();
            let msg = msg
                .rfind(" at line ")
                .map_or(msg.clone(), |i| msg[..i].to_string());
            bad(format!("line {}, column {}", e.line(), e.column()), msg)
        })?;
        if raw.format != FORMAT {
            return Err(bad(
                "format".into(),
                format!("'{}' is not '{FORMAT}'", raw.format),
            ));
        }
        // Node ids size the ingress table: one past any topology's size is
        // an error, not a 100 GB allocation.
        if let Some((i, e)) = raw
            .entries
            .iter()
            .enumerate()
            .find(|(_, e)| e.node as u64 >= tagger_generators::model::MAX_NODES)
        {
            return Err(bad(
                format!("entries[{i}].node"),
                format!(
                    "{} is past the largest topology ({} nodes)",
                    e.node,
                    tagger_generators::model::MAX_NODES
                ),
            ));
        }
        let mut entries = raw.entries;
        entries.sort_unstable();
        let ingress = ingress_of(&entries);
        Ok(RuleSet {
            topology: raw.topology,
            algo: raw.algo,
            priorities: raw.priorities,
            initial_tag: raw.initial_tag,
            classes: raw.classes,
            entries,
            ingress,
        })
    }
}

/// The ingress map as a rules file gives it: per node, the distinct
/// `(tag, priority)` pairs of its own entries (nodes past the last entry's
/// have none).
pub(crate) fn ingress_of(entries: &[Entry]) -> Vec<Vec<(u32, u32)>> {
    let nodes = entries
        .iter()
        .map(|e| e.node as usize + 1)
        .max()
        .unwrap_or(0);
    let mut ingress = vec![Vec::new(); nodes];
    for e in entries {
        ingress[e.node as usize].push((e.tag, e.priority));
    }
    for v in &mut ingress {
        v.sort_unstable();
        v.dedup();
    }
    ingress
}

#[cfg(test)]
mod tests {
    use super::RuleSet;
    use std::path::Path;

    /// A rules file read back may name its algorithm with a quote, a
    /// backslash or a control character: written again, it is still JSON
    /// and reads back equal (the fuzz test found a carriage return
    /// written raw).
    #[test]
    fn an_algorithm_name_with_escapes_round_trips() {
        let text = r#"{"format": "tagger-rules/1", "topology": "t", "algo": "g\reedy \"x\" \\ \u0001", "priorities": 1, "initial_tag": 1,
 "entries": [{"node": 0, "in_link": null, "tag": 1, "out_link": 0, "next_tag": 1, "priority": 1, "next_priority": 1}]}"#;
        let r = RuleSet::parse(text, Path::new("t.json")).unwrap();
        assert_eq!(r.algo, "g\reedy \"x\" \\ \u{1}");
        let again = r.to_json();
        assert_eq!(RuleSet::parse(&again, Path::new("t.json")).unwrap(), r);
        assert!(
            again.contains(r#""algo": "g\reedy \"x\" \\ \u0001""#),
            "{again}"
        );
    }
}
