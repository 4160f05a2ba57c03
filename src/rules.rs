//! Switch configuration from a tagging: per node, the ingress map (tag ->
//! lossless queue) and egress entries `(in_port, tag, out_port) -> new tag`,
//! with a default entry that sends anything unmatched to the lossy class.

use crate::error::{Error, Result};
use crate::tagging::Tagging;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;
use tagger_generators::{LinkId, NodeId, Topology};

/// Format of a rules file.
pub const FORMAT: &str = "tagger-rules/1";

/// One lossless egress entry. `in_link` is `None` for packets from a host
/// port (or originated by a server). Under DSCP rewriting the priority is the
/// tag.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize)]
pub struct Entry {
    /// The switch.
    pub node: NodeId,
    /// The link the packet arrives on (`None`: from a host port).
    pub in_link: Option<LinkId>,
    /// The tag it carries.
    pub tag: u32,
    /// The link it leaves on.
    pub out_link: LinkId,
    /// The tag it leaves with.
    pub next_tag: u32,
    /// Its queue here (lossless priority, from 1).
    pub priority: u32,
    /// Its queue at the next switch.
    pub next_priority: u32,
}

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

/// Rule counts of one node.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NodeCounts {
    /// Exact-match ACL entries: one per (in port, tag, out port).
    pub acl_exact: u64,
    /// ACL entries after port-set compression ([`compress`]).
    pub acl_compressed: u64,
    /// Queue-mapping rules (one per arriving (port, tag)).
    pub queue_rules: u64,
}

impl NodeCounts {
    /// All table entries: ACL (compressed, as installed) plus queue map.
    pub fn rules(&self) -> u64 {
        self.acl_compressed + self.queue_rules
    }
}

/// A compressed entry: every (in port, out port) of the two sets, one action.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Compressed {
    /// In ports (`None`: host ports).
    pub in_links: Vec<Option<LinkId>>,
    /// The tag matched.
    pub tag: u32,
    /// Out ports.
    pub out_links: Vec<LinkId>,
    /// The tag written.
    pub next_tag: u32,
    /// The queue here.
    pub priority: u32,
    /// The queue at the next switch.
    pub next_priority: u32,
}

impl RuleSet {
    /// The rule set a tagging decides: one entry per decided key, sorted, with each node's ingress map.
    pub fn from_tagging(topo: &Topology, t: &Tagging) -> Self {
        let mut entries: Vec<Entry> = t
            .keys
            .iter()
            .map(|k| Entry {
                node: k.node,
                in_link: k.in_channel.map(|c| c >> 1),
                tag: k.tag,
                out_link: k.out_channel >> 1,
                next_tag: k.next_tag,
                priority: k.priority,
                next_priority: k.next_priority,
            })
            .collect();
        entries.sort_unstable();
        let mut ingress: Vec<Vec<(u32, u32)>> = vec![Vec::new(); topo.node_count()];
        for &(c, tag, p) in &t.states {
            ingress[topo.channel_dst(c) as usize].push((tag, p));
        }
        for k in t.keys.iter().filter(|k| k.in_channel.is_none()) {
            ingress[k.node as usize].push((k.tag, k.priority));
        }
        for v in &mut ingress {
            v.sort_unstable();
            v.dedup();
        }
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

    /// Entries of each node, as slices of the sorted list.
    pub fn by_node(&self, nodes: usize) -> Vec<&[Entry]> {
        let mut out = vec![&self.entries[..0]; nodes];
        let mut i = 0;
        while i < self.entries.len() {
            let v = self.entries[i].node;
            let j = i + self.entries[i..].partition_point(|e| e.node == v);
            if (v as usize) < nodes {
                out[v as usize] = &self.entries[i..j];
            }
            i = j;
        }
        out
    }

    /// Exact, compressed and queue counts per node.
    pub fn counts(&self, nodes: usize) -> Vec<NodeCounts> {
        self.by_node(nodes)
            .iter()
            .enumerate()
            .map(|(v, es)| NodeCounts {
                acl_exact: es.len() as u64,
                acl_compressed: compress(es).len() as u64,
                queue_rules: self.ingress.get(v).map_or(0, Vec::len) as u64,
            })
            .collect()
    }

    /// Renders `tagger-rules/1` JSON, one entry per line.
    pub fn to_json(&self) -> String {
        let mut s = String::with_capacity(128 + self.entries.len() * 110);
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
        let _ = write!(
            s,
            "{{\"format\": \"{FORMAT}\", \"topology\": {}, \"algo\": \"{}\", \"priorities\": {}, \"initial_tag\": {}{classes},\n \"entries\": [",
            serde_json::to_string(&self.topology).expect("strings serialise"),
            self.algo,
            self.priorities,
            self.initial_tag
        );
        for (i, e) in self.entries.iter().enumerate() {
            let sep = if i == 0 { "\n  " } else { ",\n  " };
            let inl = e.in_link.map_or("null".to_string(), |l| l.to_string());
            let _ = write!(
                s,
                "{sep}{{\"node\": {}, \"in_link\": {inl}, \"tag\": {}, \"out_link\": {}, \"next_tag\": {}, \"priority\": {}, \"next_priority\": {}}}",
                e.node, e.tag, e.out_link, e.next_tag, e.priority, e.next_priority
            );
        }
        s.push_str("]}\n");
        s
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
        let nodes = entries
            .iter()
            .map(|e| e.node as usize + 1)
            .max()
            .unwrap_or(0);
        let mut ingress = vec![Vec::new(); nodes];
        for e in &entries {
            ingress[e.node as usize].push((e.tag, e.priority));
        }
        for v in &mut ingress {
            v.sort_unstable();
            v.dedup();
        }
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

/// Compresses one node's entries into port-set entries, as TCAM port bitmaps
/// allow: per action (tag, next tag and queues), in ports with the same set
/// of out ports share one entry (and symmetrically; the smaller cover wins). Each
/// result is a biclique of the (in, out) relation and together they cover it
/// exactly once.
///
/// Complexity: O(m log m) for m entries.
pub fn compress(entries: &[Entry]) -> Vec<Compressed> {
    type Pairs = Vec<(Option<LinkId>, LinkId)>;
    let mut by_action: BTreeMap<(u32, u32, u32, u32), Pairs> = BTreeMap::new();
    for e in entries {
        by_action
            .entry((e.tag, e.next_tag, e.priority, e.next_priority))
            .or_default()
            .push((e.in_link, e.out_link));
    }
    let mut out = Vec::new();
    for ((tag, next_tag, priority, next_priority), pairs) in by_action {
        let mut by_in: BTreeMap<Option<LinkId>, Vec<LinkId>> = BTreeMap::new();
        let mut by_out: BTreeMap<LinkId, Vec<Option<LinkId>>> = BTreeMap::new();
        for &(i, o) in &pairs {
            by_in.entry(i).or_default().push(o);
            by_out.entry(o).or_default().push(i);
        }
        let mut in_groups: BTreeMap<Vec<LinkId>, Vec<Option<LinkId>>> = BTreeMap::new();
        for (i, mut outs) in by_in {
            outs.sort_unstable();
            outs.dedup();
            in_groups.entry(outs).or_default().push(i);
        }
        let mut out_groups: BTreeMap<Vec<Option<LinkId>>, Vec<LinkId>> = BTreeMap::new();
        for (o, mut ins) in by_out {
            ins.sort_unstable();
            ins.dedup();
            out_groups.entry(ins).or_default().push(o);
        }
        let groups: Vec<(Vec<Option<LinkId>>, Vec<LinkId>)> = if in_groups.len() <= out_groups.len()
        {
            in_groups
                .into_iter()
                .map(|(outs, ins)| (ins, outs))
                .collect()
        } else {
            out_groups.into_iter().collect()
        };
        out.extend(groups.into_iter().map(|(in_links, out_links)| Compressed {
            in_links,
            tag,
            out_links,
            next_tag,
            priority,
            next_priority,
        }));
    }
    out
}
