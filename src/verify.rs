//! Independent verification of a rule set. It reads only the topology, the
//! entries and (for replay) the ELP language; it shares no code with the
//! tagging algorithms or their cycle detection.
//!
//! Checks: (a) each key `(node, in_link, tag, out_link)` has one action;
//! (b) the queue of a packet state is a function of `(node, in_link, tag)`;
//! (c) priorities never decrease along an entry; (d) per priority, the
//! channel dependency graph that the entries allow is acyclic (on failure one
//! cycle is printed); (e) every ELP transition (or every given path, on every
//! parallel link) finds a lossless entry from its first hop to its last.

use crate::elp::{ElpSet, Prefixes};
use crate::rules::{Entry, RuleSet};
use rayon::prelude::*;
use rustc_hash::FxHashMap as HashMap;
use std::collections::BTreeMap;
use std::fmt;
use tagger_generators::{ChannelId, LinkId, NodeId, Topology};

/// Outcome of verification: the first violation of each kind, if any.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Report {
    pub entries: usize,
    pub priorities: u32,
    pub dependency_edges: u64,
    pub transitions_replayed: u64,
    /// (kind, message) of the first violation of each kind, in check order.
    pub violations: Vec<(&'static str, String)>,
}

impl Report {
    pub fn ok(&self) -> bool {
        self.violations.is_empty()
    }
    fn violate(&mut self, kind: &'static str, msg: String) {
        if !self.violations.iter().any(|(k, _)| *k == kind) {
            self.violations.push((kind, msg));
        }
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.ok() {
            write!(
                f,
                "verified: deadlock-free with {} lossless priorities ({} entries, {} same-priority dependencies, {} ELP transitions replayed)",
                self.priorities, self.entries, self.dependency_edges, self.transitions_replayed
            )
        } else {
            write!(f, "NOT verified:")?;
            for (kind, msg) in &self.violations {
                write!(f, "\n  [{kind}] {msg}")?;
            }
            Ok(())
        }
    }
}

type Table = HashMap<(NodeId, Option<LinkId>, u32, LinkId), (u32, u32, u32)>;

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

/// Verifies `rules` on `topo`; with `elp`, also replays its transitions.
pub fn verify(topo: &Topology, rules: &RuleSet, elp: Option<&ElpSet>) -> Report {
    let mut r = Report {
        entries: rules.entries.len(),
        ..Default::default()
    };
    let mut table: Table =
        HashMap::with_capacity_and_hasher(rules.entries.len(), Default::default());
    let mut queue_of: HashMap<(NodeId, Option<LinkId>, u32), u32> = HashMap::default();
    let mut graphs: BTreeMap<u32, Vec<(ChannelId, ChannelId)>> = BTreeMap::new();
    for e in &rules.entries {
        let Entry {
            node,
            in_link,
            tag,
            out_link,
            next_tag,
            priority,
            next_priority,
        } = *e;
        if node as usize >= topo.node_count() {
            r.violate(
                "entry",
                format!("{e:?}: node {node} is not in the topology"),
            );
            continue;
        }
        let c_in = match in_link {
            Some(l) => match into(topo, l, node) {
                Some(c) => Some(c),
                None => {
                    r.violate(
                        "entry",
                        format!("{e:?}: link {l} does not reach node {node}"),
                    );
                    continue;
                }
            },
            None => None,
        };
        let Some(c_out) = out_of(topo, out_link, node) else {
            r.violate(
                "entry",
                format!("{e:?}: link {out_link} does not leave node {node}"),
            );
            continue;
        };
        if priority == 0 || next_priority == 0 {
            r.violate("entry", format!("{e:?}: lossless priorities start at 1"));
        }
        // (a) one action per key.
        match table.insert((node, in_link, tag, out_link), (next_tag, priority, next_priority)) {
            Some(prev) if prev != (next_tag, priority, next_priority) => r.violate(
                "key",
                format!(
                    "node {node}, in_link {in_link:?}, tag {tag}, out_link {out_link} has two actions: next_tag {} and {next_tag}",
                    prev.0
                ),
            ),
            _ => {}
        }
        // (b) the queue of a state is a function of what the switch sees.
        let next_node = topo.channel_dst(c_out);
        for (state, p) in [
            ((node, in_link, tag), priority),
            ((next_node, Some(out_link), next_tag), next_priority),
        ] {
            let q = *queue_of.entry(state).or_insert(p);
            if q != p {
                r.violate(
                    "queue",
                    format!("packets at node {} from link {:?} with tag {} are put in queues {q} and {p}", state.0, state.1, state.2),
                );
            }
        }
        // (c) priorities never decrease.
        if next_priority < priority {
            r.violate(
                "decrease",
                format!("{e:?} lowers the priority from {priority} to {next_priority}"),
            );
        }
        if let Some(c_in) = c_in
            && priority == next_priority
        {
            graphs.entry(priority).or_default().push((c_in, c_out));
        }
    }
    // (d) each priority acyclic.
    r.priorities = rules
        .entries
        .iter()
        .map(|e| e.next_priority.max(e.priority))
        .max()
        .unwrap_or(0);
    for (p, mut edges) in graphs {
        edges.sort_unstable();
        edges.dedup();
        r.dependency_edges += edges.len() as u64;
        if let Some(cycle) = find_cycle(topo.channel_count(), &edges) {
            let shown: Vec<String> = cycle
                .iter()
                .map(|&c| format!("({}->{})", topo.channel_src(c), topo.channel_dst(c)))
                .collect();
            r.violate(
                "cycle",
                format!(
                    "priority {p} has a cyclic buffer dependency: {}",
                    shown.join(" -> ")
                ),
            );
        }
    }
    // (e) replay.
    if let Some(elp) = elp {
        replay(topo, &table, elp, &mut r);
    }
    r
}

/// Kahn's algorithm; if some vertices remain, walk predecessors inside the
/// remainder until one repeats, which yields a cycle.
fn find_cycle(n: usize, edges: &[(ChannelId, ChannelId)]) -> Option<Vec<ChannelId>> {
    let mut indeg = vec![0u32; n];
    let mut off = vec![0u32; n + 1];
    for &(a, b) in edges {
        indeg[b as usize] += 1;
        off[a as usize + 1] += 1;
    }
    for i in 0..n {
        off[i + 1] += off[i];
    }
    let mut adj = vec![0; edges.len()];
    let mut fill = off.clone();
    for &(a, b) in edges {
        adj[fill[a as usize] as usize] = b;
        fill[a as usize] += 1;
    }
    let mut stack: Vec<u32> = (0..n as u32).filter(|&v| indeg[v as usize] == 0).collect();
    let mut removed = 0;
    while let Some(v) = stack.pop() {
        removed += 1;
        for &w in &adj[off[v as usize] as usize..off[v as usize + 1] as usize] {
            indeg[w as usize] -= 1;
            if indeg[w as usize] == 0 {
                stack.push(w);
            }
        }
    }
    if removed == n {
        return None;
    }
    // Every remaining vertex has a remaining predecessor.
    let mut pred = vec![u32::MAX; n];
    for &(a, b) in edges {
        if indeg[a as usize] > 0 && indeg[b as usize] > 0 {
            pred[b as usize] = a;
        }
    }
    let start = (0..n).find(|&v| indeg[v] > 0)? as u32;
    let mut pos = HashMap::default();
    let mut walk = Vec::new();
    let mut v = start;
    while !pos.contains_key(&v) {
        pos.insert(v, walk.len());
        walk.push(v);
        v = pred[v as usize];
    }
    let mut cycle = walk[pos[&v]..].to_vec();
    cycle.reverse();
    Some(cycle)
}

/// Replays every ELP transition through the table, hop by hop from the first
/// hop with the initial tag 1; each state's prefix classes are replayed once.
fn replay(topo: &Topology, table: &Table, elp: &ElpSet, r: &mut Report) {
    let mut seen: HashMap<(ChannelId, u32), Prefixes> = HashMap::default();
    let mut frontier: Vec<((ChannelId, u32), Prefixes)> = Vec::new();
    for (c, mut p) in elp.initial(topo) {
        let node = topo.channel_src(c);
        r.transitions_replayed += 1;
        match table.get(&(node, None, 1, c >> 1)) {
            Some(&(t, _, _)) => {
                p.subtract_seen(seen.entry((c, t)).or_default());
                frontier.push(((c, t), p));
            }
            None => r.violate(
                "replay",
                format!(
                    "a packet from a host at node {node} to link {} (tag 1) has no lossless entry",
                    c >> 1
                ),
            ),
        }
    }
    let mut hop = 1;
    while !frontier.is_empty() {
        // Continuations and their table lookups in parallel (the table is
        // read-only); per chunk the first missing entry, in frontier order.
        // Blocks of the frontier bound the continuations held at once.
        type Found = (Vec<((ChannelId, u32), Prefixes)>, Option<String>, u64);
        let mut next: HashMap<(ChannelId, u32), Prefixes> = HashMap::default();
        for block in frontier.chunks(1 << 14) {
            let found: Vec<Found> = block
                .par_chunks(256)
                .map(|chunk| {
                    let (mut out, mut missing, mut n) = (Vec::new(), None, 0u64);
                    for ((c, t), p) in chunk {
                        let node = topo.channel_dst(*c);
                        for (c2, q) in elp.successors(topo, *c, hop, p) {
                            n += 1;
                            match table.get(&(node, Some(c >> 1), *t, c2 >> 1)) {
                                Some(&(t2, _, _)) => out.push(((c2, t2), q)),
                                None => {
                                    missing.get_or_insert_with(|| {
                                        format!(
                                            "an ELP at node {node} from link {} (tag {t}) to link {} has no lossless entry",
                                            c >> 1,
                                            c2 >> 1
                                        )
                                    });
                                }
                            }
                        }
                    }
                    (out, missing, n)
                })
                .collect();
            for (out, missing, n) in found {
                r.transitions_replayed += n;
                if let Some(m) = missing {
                    r.violate("replay", m);
                }
                for (k, q) in out {
                    next.entry(k).or_default().union(q);
                }
            }
        }
        let mut next: Vec<((ChannelId, u32), Prefixes)> = next.into_iter().collect();
        next.par_sort_unstable_by_key(|(k, _)| *k);
        frontier.clear();
        for (k, mut p) in next {
            p.subtract_seen(seen.entry(k).or_default());
            if !p.is_empty() {
                frontier.push((k, p));
            }
        }
        hop += 1;
    }
}
