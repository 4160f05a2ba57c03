//! Rule entries and their port-set compression, below both the tagging
//! (whose `search` breaks ties by compressed rule count) and the rule sets
//! built from it ([`crate::rules`], which re-exports these types).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use tagger_generators::{LinkId, NodeId};

/// One lossless egress entry. `in_link` is `None` for packets from a host
/// port (or originated by a server). Under DSCP rewriting the priority is the
/// tag.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize, Serialize)]
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

/// Entries of each of `nodes` nodes, as slices of `entries` (sorted by
/// node; entries of nodes past `nodes` are left out).
pub fn by_node(entries: &[Entry], nodes: usize) -> Vec<&[Entry]> {
    let mut out = vec![&entries[..0]; nodes];
    let mut i = 0;
    while i < entries.len() {
        let v = entries[i].node;
        let j = i + entries[i..].partition_point(|e| e.node == v);
        if (v as usize) < nodes {
            out[v as usize] = &entries[i..j];
        }
        i = j;
    }
    out
}

/// The rule counts of one node from its entries (sorted or not) and the
/// size of its ingress map.
pub fn node_counts(entries: &[Entry], ingress: usize) -> NodeCounts {
    NodeCounts {
        acl_exact: entries.len() as u64,
        acl_compressed: compress(entries).len() as u64,
        queue_rules: ingress as u64,
    }
}
