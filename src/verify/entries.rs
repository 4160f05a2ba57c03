//! The checks over the entries themselves: each entry well-formed on its
//! own, (a) one action per key, (b) one queue per packet state, (c) no
//! priority decrease. They also build what the later checks read: the
//! lookup table the replay uses and the same-priority dependencies.

use super::{Table, Violation, entry_key};
use crate::rules::{Entry, RuleSet};
use rayon::prelude::*;
use rustc_hash::FxHashMap as HashMap;
use tagger_generators::{ChannelId, LinkId, NodeId, Topology};

/// What the per-entry checks learn about a well-formed entry.
#[derive(Clone, Copy)]
pub(super) struct Checked {
    pub c_in: Option<ChannelId>,
    pub c_out: ChannelId,
    pub next_node: NodeId,
}

/// What the entry checks leave for the later ones.
pub(super) struct Entries<'a> {
    /// Per node, the entries' actions by key.
    pub table: Table<'a>,
    /// Same-priority dependencies `(from, to)` of the well-formed entries,
    /// per priority.
    pub same: Vec<(u32, Vec<(ChannelId, ChannelId)>)>,
    /// What was found, in the order a sequential pass over the entries
    /// would meet it.
    pub findings: Vec<Violation>,
}

/// Indices `0..m` grouped by `node_of` (skipping `None`), each group in
/// index order: (offsets per node, indices). Two counting passes, no pairs.
fn group_by_node(
    n: usize,
    m: usize,
    node_of: impl Fn(u32) -> Option<NodeId>,
) -> (Vec<u32>, Vec<u32>) {
    let mut off = vec![0u32; n + 1];
    for i in 0..m as u32 {
        if let Some(v) = node_of(i) {
            off[v as usize + 1] += 1;
        }
    }
    for i in 0..n {
        off[i + 1] += off[i];
    }
    let mut fill = off.clone();
    let mut out = vec![0u32; off[n] as usize];
    for i in 0..m as u32 {
        if let Some(v) = node_of(i) {
            out[fill[v as usize] as usize] = i;
            fill[v as usize] += 1;
        }
    }
    (off, out)
}

/// The channel that enters `node` over `link`, if `node` is on `link`.
fn into(topo: &Topology, link: LinkId, node: NodeId) -> Option<ChannelId> {
    let [a, b] = *topo.links().get(link as usize)?;
    if b == node {
        Some(2 * link)
    } else if a == node {
        Some(2 * link + 1)
    } else {
        None
    }
}

fn out_of(topo: &Topology, link: LinkId, node: NodeId) -> Option<ChannelId> {
    into(topo, link, node).map(|c| c ^ 1)
}

/// The checks of one entry alone: its node and links exist and fit together.
pub(super) fn check_entry(topo: &Topology, e: &Entry) -> Result<Checked, Violation> {
    let bad = |reason: String| Violation::Entry { entry: *e, reason };
    let node = e.node;
    if node as usize >= topo.node_count() {
        return Err(bad(format!("node {node} is not in the topology")));
    }
    let c_in = match e.in_link {
        Some(l) => Some(
            into(topo, l, node)
                .ok_or_else(|| bad(format!("link {l} does not reach node {node}")))?,
        ),
        None => None,
    };
    let c_out = out_of(topo, e.out_link, node)
        .ok_or_else(|| bad(format!("link {} does not leave node {node}", e.out_link)))?;
    Ok(Checked {
        c_in,
        c_out,
        next_node: topo.channel_dst(c_out),
    })
}

/// Runs the entry checks in parallel; the findings come in a deterministic
/// order whatever the thread count.
///
/// Complexity: O(E log E) for E entries (the findings' sort), the rest
/// linear, in parallel per entry and per node.
pub(super) fn check<'a>(topo: &Topology, rules: &'a RuleSet, host_tags: &[u32]) -> Entries<'a> {
    let entries = &rules.entries;
    // Per-entry checks, in parallel. Only a flag per entry is kept, and the
    // malformed entries' violations: the channels are cheap to recompute
    // and the rule set can be large (a violation per entry would be 64
    // bytes each).
    // The node each well-formed entry's packets arrive at (`MALFORMED`
    // where the entry is not well-formed): the grouping passes below read
    // it instead of checking every entry again, sequentially.
    const MALFORMED: NodeId = NodeId::MAX;
    let next_node: Vec<NodeId> = entries
        .par_iter()
        .map(|e| check_entry(topo, e).map_or(MALFORMED, |c| c.next_node))
        .collect();
    let malformed: Vec<(u32, Violation)> = next_node
        .iter()
        .enumerate()
        .filter(|&(_, &v)| v == MALFORMED)
        .filter_map(|(i, _)| check_entry(topo, &entries[i]).err().map(|v| (i as u32, v)))
        .collect();
    let ok = |i: u32| next_node[i as usize] != MALFORMED;
    let mut findings = entry_findings(rules, host_tags, malformed);
    let n = topo.node_count();
    // Entries by their node, and by the node their packets arrive at.
    let (off, at) = group_by_node(n, entries.len(), |i| {
        ok(i).then(|| entries[i as usize].node)
    });
    let (in_off, arriving) =
        group_by_node(n, entries.len(), |i| ok(i).then(|| next_node[i as usize]));
    // Per node: (a) one action per key; (b) one queue per state the switch
    // can tell apart, over the entries that match it and those that lead
    // into it.
    // Each node's table is made in place in its part of `at` (sorted by
    // key, one per key kept at the front), so the grouping becomes the
    // lookup table without a copy of it beside.
    let mut at = at;
    let mut parts: Vec<&mut [u32]> = Vec::with_capacity(n);
    let mut rest = at.as_mut_slice();
    for v in 0..n {
        let (part, tail) = rest.split_at_mut((off[v + 1] - off[v]) as usize);
        parts.push(part);
        rest = tail;
    }
    let per_node: Vec<(usize, Vec<Finding>)> = parts
        .into_par_iter()
        .enumerate()
        .map(|(v, mine)| {
            let incoming = &arriving[in_off[v] as usize..in_off[v + 1] as usize];
            // Before `key_table` reorders `mine`: the queue check reads
            // it in entry order.
            let mut found = queue_findings(entries, v as NodeId, mine, incoming);
            let (kept, f) = key_table(entries, v as NodeId, mine);
            found.extend(f);
            (kept, found)
        })
        .collect();
    let mut table = Table {
        entries,
        off: Vec::with_capacity(n + 1),
        idx: Vec::new(),
    };
    table.off.push(0);
    let mut len = 0usize;
    for (v, (kept, f)) in per_node.into_iter().enumerate() {
        // Repeated keys leave gaps: close them (nothing moves otherwise).
        let start = off[v] as usize;
        if start != len {
            at.copy_within(start..start + kept, len);
        }
        len += kept;
        table.off.push(len as u32);
        findings.extend(f);
    }
    at.truncate(len);
    table.idx = at;
    findings.sort_by_key(|f| f.0);
    drop((off, in_off, arriving, next_node));
    let same = super::cycles::same_by_priority(topo, entries, |_| true);
    Entries {
        table,
        same,
        findings: findings.into_iter().map(|(_, v)| v).collect(),
    }
}

/// A violation with where a sequential pass over the entries would meet
/// it, (entry, step), so that sorted they come in that order: per entry,
/// its own checks (0, 1), its key (2), the state it matches (3), the state
/// it leads into (4), its priorities (5).
type Finding = ((u32, u8), Violation);

/// Each entry's own findings: malformed (from `malformed`, sorted by
/// entry), a lossless priority of 0, a host entry matching a tag hosts do
/// not send, a priority that decreases.
fn entry_findings(
    rules: &RuleSet,
    host_tags: &[u32],
    malformed: Vec<(u32, Violation)>,
) -> Vec<Finding> {
    let entries = &rules.entries;
    let mut malformed = malformed.into_iter().peekable();
    let mut findings: Vec<Finding> = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        let i = i as u32;
        if let Some((_, v)) = malformed.next_if(|(j, _)| *j == i) {
            findings.push(((i, 0), v));
            continue;
        }
        let bad = |reason: String| ((i, 1), Violation::Entry { entry: *e, reason });
        if e.priority == 0 || e.next_priority == 0 {
            findings.push(bad("lossless priorities start at 1".into()));
        } else if e.in_link.is_none() && !host_tags.contains(&e.tag) {
            findings.push(bad(if rules.classes.is_empty() {
                format!(
                    "a host port's entry matches tag {}, but hosts send initial_tag {}",
                    e.tag, rules.initial_tag
                )
            } else {
                format!(
                    "a host port's entry matches tag {}, but hosts send one of the classes' tags {:?}",
                    e.tag, rules.classes
                )
            }));
        }
        if e.next_priority < e.priority {
            findings.push(((i, 5), Violation::Decrease { entry: *e }));
        }
    }
    findings
}

/// Node `v`'s entries `mine` by key, the last of each key kept for the
/// lookups, with a finding where a repeated key's action differs: the
/// table is written in place, to the first `kept` of `mine`.
fn key_table(entries: &[Entry], v: NodeId, mine: &mut [u32]) -> (usize, Vec<Finding>) {
    let mut found: Vec<Finding> = Vec::new();
    // By key, then file order: a repeated key's entries side by
    // side, each compared with the one before it in the file, and
    // the last one kept for the lookups.
    mine.sort_unstable_by_key(|&i| (entry_key(&entries[i as usize]), i));
    let mut kept = 0usize;
    let act = |e: &Entry| (e.next_tag, e.priority, e.next_priority);
    for j in 0..mine.len() {
        let i = mine[j];
        let e = &entries[i as usize];
        match kept.checked_sub(1).map(|k| &mut mine[k]) {
            Some(last) if entry_key(&entries[*last as usize]) == entry_key(e) => {
                let prev = &entries[*last as usize];
                if act(prev) != act(e) {
                    found.push((
                        (i, 2),
                        Violation::Key {
                            node: v,
                            in_link: e.in_link,
                            tag: e.tag,
                            out_link: e.out_link,
                            next_tags: [prev.next_tag, e.next_tag],
                        },
                    ));
                }
                *last = i;
            }
            _ => {
                mine[kept] = i;
                kept += 1;
            }
        }
    }
    (kept, found)
}

/// One queue per state node `v` can tell apart, over the entries that
/// match it (`mine`) and those that lead into it (`incoming`).
fn queue_findings(entries: &[Entry], v: NodeId, mine: &[u32], incoming: &[u32]) -> Vec<Finding> {
    let mut found: Vec<Finding> = Vec::new();
    // Touches of this node's states in the order a sequential pass
    // meets them.
    type Touch = ((u32, u8), (Option<LinkId>, u32), u32);
    let mut touches: Vec<Touch> = mine
        .iter()
        .map(|&i| {
            let e = &entries[i as usize];
            ((i, 3), (e.in_link, e.tag), e.priority)
        })
        .chain(incoming.iter().map(|&i| {
            let e = &entries[i as usize];
            ((i, 4), (Some(e.out_link), e.next_tag), e.next_priority)
        }))
        .collect();
    // Two runs, each in entry order: a stable sort merges them in linear
    // time (positions are distinct, so it orders as any sort would).
    touches.sort_by_key(|t| t.0);
    let mut queue_of: HashMap<(Option<LinkId>, u32), u32> = HashMap::default();
    for (at, (link, tag), p) in touches {
        let q = *queue_of.entry((link, tag)).or_insert(p);
        if q != p {
            found.push((
                at,
                Violation::Queue {
                    node: v,
                    in_link: link,
                    tag,
                    queues: [q, p],
                },
            ));
        }
    }
    found
}
