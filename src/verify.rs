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

/// Per node, `(in_link, tag, out_link) -> (next_tag, priority, next_priority)`.
/// One small map per node: built in parallel, and looked up in parallel
/// without touching one large table.
type Table = Vec<HashMap<(Option<LinkId>, u32, LinkId), (u32, u32, u32)>>;

/// What the per-entry checks learn about a well-formed entry.
#[derive(Clone, Copy)]
struct Checked {
    c_in: Option<ChannelId>,
    c_out: ChannelId,
    next_node: NodeId,
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

/// What the switches the rules are for can hold.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Limits {
    /// Lossless queues per port: a rule set using more priorities is
    /// refused (`None`: no limit).
    pub max_priorities: Option<u32>,
}

/// Lossless queues per port on most switch ASICs (8 queues per port, and
/// at most all of them lossless): the `tagger verify` default.
pub const SWITCH_QUEUES: u32 = 8;

/// Bytes [`verify`] works with, before it starts: the replay's prefix
/// record per packet state (`states`, the tagging's count) and two copies
/// of the rule table.
pub fn estimate_bytes(topo: &Topology, elp: &ElpSet, states: usize, rules: &RuleSet) -> u64 {
    let per_state = std::mem::size_of::<crate::elp::Prefixes>() as u64
        + elp
            .shortest
            .as_ref()
            .map_or(0, |_| 8 * topo.endpoints().len().div_ceil(64) as u64);
    per_state * states as u64
        + 2 * crate::budget::bytes_of::<crate::rules::Entry>(rules.entries.len())
}

/// Verifies `rules` on `topo`; with `elp`, also replays its transitions.
/// No limit on priorities (see [`verify_within`]).
pub fn verify(topo: &Topology, rules: &RuleSet, elp: Option<&ElpSet>) -> Report {
    verify_within(topo, rules, elp, &Limits::default())
}

/// [`verify`], also checking the rule set against `limits`. Besides the
/// entries, every header field it reads is checked: the topology name
/// against `topo`'s, `priorities` against the entries', and `initial_tag`
/// (what hosts send) against the host-port entries, and the replay starts
/// from it.
pub fn verify_within(
    topo: &Topology,
    rules: &RuleSet,
    elp: Option<&ElpSet>,
    limits: &Limits,
) -> Report {
    let mut r = Report {
        entries: rules.entries.len(),
        ..Default::default()
    };
    // A topology file without a name is named by the path it was read
    // from, which differs between `run file:./net.json` and `verify
    // --topology /abs/net.json`: the same file name is the same topology.
    let same_topology = rules.topology == topo.name()
        || std::path::Path::new(&rules.topology).file_name()
            == std::path::Path::new(topo.name()).file_name()
            && (rules.topology.contains('/') || topo.name().contains('/'));
    if !same_topology {
        r.violate(
            "header",
            format!(
                "the rules are for topology '{}', but the topology is '{}'",
                rules.topology,
                topo.name()
            ),
        );
    }
    if rules.initial_tag == 0 {
        r.violate(
            "header",
            "initial_tag is 0: tags start at 1 (0 is the lossy class)".into(),
        );
    }
    if !rules.classes.is_empty()
        && (rules.classes[0] != rules.initial_tag || rules.classes.windows(2).any(|w| w[0] >= w[1]))
    {
        r.violate(
            "header",
            format!(
                "classes {:?} must rise strictly and start at initial_tag {}",
                rules.classes, rules.initial_tag
            ),
        );
    }
    let host_tags = rules.host_tags();
    let entries = &rules.entries;
    // Per-entry checks, in parallel. Only a flag per entry is kept: the
    // channels are cheap to recompute and the rule set can be large.
    let checked: Vec<Option<(&'static str, String)>> = entries
        .par_iter()
        .map(|e| check_entry(topo, e).err())
        .collect();
    let ok: Vec<bool> = checked.iter().map(Option::is_none).collect();
    // Every finding carries (entry, step) so that, sorted, they come in the
    // order a sequential pass over the entries would meet them: per entry,
    // its own checks (0, 1), its key (2), the state it matches (3), the
    // state it leads into (4), its priorities (5).
    type Finding = ((u32, u8), &'static str, String);
    let mut findings: Vec<Finding> = Vec::new();
    for (i, (e, c)) in entries.iter().zip(checked).enumerate() {
        let i = i as u32;
        match c {
            Some((kind, msg)) => findings.push(((i, 0), kind, msg)),
            None => {
                if e.priority == 0 || e.next_priority == 0 {
                    findings.push((
                        (i, 1),
                        "entry",
                        format!("{}: lossless priorities start at 1", show(e)),
                    ));
                } else if e.in_link.is_none() && !host_tags.contains(&e.tag) {
                    findings.push((
                        (i, 1),
                        "entry",
                        if rules.classes.is_empty() {
                            format!(
                                "{}: a host port's entry matches tag {}, but hosts send initial_tag {}",
                                show(e),
                                e.tag,
                                rules.initial_tag
                            )
                        } else {
                            format!(
                                "{}: a host port's entry matches tag {}, but hosts send one of the classes' tags {:?}",
                                show(e),
                                e.tag,
                                rules.classes
                            )
                        },
                    ));
                }
                if e.next_priority < e.priority {
                    findings.push((
                        (i, 5),
                        "decrease",
                        format!(
                            "{} lowers the priority from {} to {}",
                            show(e),
                            e.priority,
                            e.next_priority
                        ),
                    ));
                }
            }
        }
    }
    let n = topo.node_count();
    let channels = |i: u32| {
        let e = &entries[i as usize];
        ok[i as usize].then(|| check_entry(topo, e).ok()).flatten()
    };
    // Entries by their node, and by the node their packets arrive at.
    let (off, at) = group_by_node(n, entries.len(), |i| {
        ok[i as usize].then(|| entries[i as usize].node)
    });
    let (in_off, arriving) = group_by_node(n, entries.len(), |i| channels(i).map(|c| c.next_node));
    // Per node: (a) one action per key; (b) one queue per state the switch
    // can tell apart, over the entries that match it and those that lead
    // into it.
    let per_node: Vec<(HashMap<_, _>, Vec<Finding>)> = (0..n)
        .into_par_iter()
        .map(|v| {
            let mine = &at[off[v] as usize..off[v + 1] as usize];
            let incoming = &arriving[in_off[v] as usize..in_off[v + 1] as usize];
            let mut found: Vec<Finding> = Vec::new();
            let mut table = HashMap::with_capacity_and_hasher(mine.len(), Default::default());
            for &i in mine {
                let e = &entries[i as usize];
                let act = (e.next_tag, e.priority, e.next_priority);
                if let Some(prev) = table.insert((e.in_link, e.tag, e.out_link), act)
                    && prev != act
                {
                    found.push((
                        (i, 2),
                        "key",
                        format!(
                            "node {v}, in_link {}, tag {}, out_link {} has two actions: next_tag {} and {}",
                            e.in_link.map_or("null".to_string(), |l| l.to_string()), e.tag, e.out_link, prev.0, e.next_tag
                        ),
                    ));
                }
            }
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
            touches.sort_unstable_by_key(|t| t.0);
            let mut queue_of: HashMap<(Option<LinkId>, u32), u32> = HashMap::default();
            for (at, (link, tag), p) in touches {
                let q = *queue_of.entry((link, tag)).or_insert(p);
                if q != p {
                    found.push((
                        at,
                        "queue",
                        format!("packets at node {v} from link {} with tag {tag} are put in queues {q} and {p}", link.map_or("a host".to_string(), |l| l.to_string())),
                    ));
                }
            }
            (table, found)
        })
        .collect();
    let mut table: Table = Vec::with_capacity(n);
    for (t, f) in per_node {
        table.push(t);
        findings.extend(f);
    }
    findings.sort_by_key(|f| f.0);
    for (_, kind, msg) in findings {
        r.violate(kind, msg);
    }
    drop((off, at, in_off, arriving));
    let same: Vec<(u32, ChannelId, ChannelId)> = (0..entries.len() as u32)
        .into_par_iter()
        .filter_map(|i| {
            let e = &entries[i as usize];
            let c = channels(i)?;
            (e.priority == e.next_priority).then_some((e.priority, c.c_in?, c.c_out))
        })
        .collect();
    // (d) each priority acyclic.
    r.priorities = rules
        .entries
        .iter()
        .map(|e| e.next_priority.max(e.priority))
        .max()
        .unwrap_or(0);
    if rules.priorities != r.priorities {
        r.violate(
            "header",
            format!(
                "the header says {} priorities, the entries use {}",
                rules.priorities, r.priorities
            ),
        );
    }
    if let Some(max) = limits.max_priorities
        && r.priorities > max
    {
        r.violate(
            "priorities",
            format!(
                "the rules use {} lossless priorities; the switches have {max} lossless queues per port",
                r.priorities
            ),
        );
    }
    let (edges, cycle) = priority_cycles(topo, same);
    r.dependency_edges += edges;
    if let Some(m) = cycle {
        r.violate("cycle", m);
    }
    // (e) replay.
    // Every class's packets follow every ELP, from the tag its hosts send.
    if let Some(elp) = elp {
        for &tag in &host_tags {
            replay(topo, &table, elp, tag, &mut r);
        }
    }
    r
}

/// Check (d) on a subset of the entries: the same-priority dependencies
/// that the entries `used(i)` create are acyclic per priority. This is how
/// traffic the plan never anticipated (routes after a failure) is proven
/// safe: a packet no entry matches is lossy and creates no dependency, so
/// the entries it did use are all its dependencies.
///
/// # Returns
/// The number of distinct same-priority dependencies, or the cycle found
/// (as a message naming its channels).
pub fn check_used(
    topo: &Topology,
    rules: &RuleSet,
    used: impl Fn(usize) -> bool,
) -> std::result::Result<u64, String> {
    let same: Vec<(u32, ChannelId, ChannelId)> = rules
        .entries
        .iter()
        .enumerate()
        .filter(|&(i, e)| used(i) && e.priority == e.next_priority)
        .filter_map(|(_, e)| {
            let c = check_entry(topo, e).ok()?;
            Some((e.priority, c.c_in?, c.c_out))
        })
        .collect();
    match priority_cycles(topo, same) {
        (edges, None) => Ok(edges),
        (_, Some(cycle)) => Err(cycle),
    }
}

/// Check (d) on same-priority dependencies `(priority, from, to)`: the
/// distinct dependencies, and the first priority's cycle (as a message
/// naming its channels) if any priority has one.
fn priority_cycles(
    topo: &Topology,
    mut same: Vec<(u32, ChannelId, ChannelId)>,
) -> (u64, Option<String>) {
    same.par_sort_unstable();
    same.dedup();
    let mut graphs: BTreeMap<u32, Vec<(ChannelId, ChannelId)>> = BTreeMap::new();
    for (p, a, b) in same {
        graphs.entry(p).or_default().push((a, b));
    }
    let (mut edges, mut first) = (0, None);
    for (p, list) in graphs {
        edges += list.len() as u64;
        if first.is_some() {
            continue;
        }
        if let Some(cycle) = find_cycle(topo.channel_count(), &list) {
            let shown: Vec<String> = cycle
                .iter()
                .map(|&c| format!("({}->{})", topo.channel_src(c), topo.channel_dst(c)))
                .collect();
            first = Some(format!(
                "priority {p} has a cyclic buffer dependency: {}",
                shown.join(" -> ")
            ));
        }
    }
    (edges, first)
}

/// An entry as its JSON fields, for messages.
fn show(e: &Entry) -> String {
    format!(
        "entry {{node {}, in_link {}, tag {}, out_link {}, next_tag {}, priority {}, next_priority {}}}",
        e.node,
        e.in_link.map_or("null".to_string(), |l| l.to_string()),
        e.tag,
        e.out_link,
        e.next_tag,
        e.priority,
        e.next_priority
    )
}

/// The checks of one entry alone: its node and links exist and fit together.
fn check_entry(topo: &Topology, e: &Entry) -> std::result::Result<Checked, (&'static str, String)> {
    let node = e.node;
    if node as usize >= topo.node_count() {
        return Err((
            "entry",
            format!("{}: node {node} is not in the topology", show(e)),
        ));
    }
    let c_in = match e.in_link {
        Some(l) => Some(into(topo, l, node).ok_or_else(|| {
            (
                "entry",
                format!("{}: link {l} does not reach node {node}", show(e)),
            )
        })?),
        None => None,
    };
    let c_out = out_of(topo, e.out_link, node).ok_or_else(|| {
        (
            "entry",
            format!(
                "{}: link {} does not leave node {node}",
                show(e),
                e.out_link
            ),
        )
    })?;
    Ok(Checked {
        c_in,
        c_out,
        next_node: topo.channel_dst(c_out),
    })
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
///
/// States are split into partitions by channel, each with its own maps of
/// reached and explored prefixes, so that merging a hop's continuations
/// (unions of source bitsets, a large part of the work at Jellyfish scale)
/// runs in parallel while each partition still takes its continuations in
/// frontier order. Small networks keep one partition: splitting cost more
/// than it saved below a few thousand channels.
fn replay(topo: &Topology, table: &Table, elp: &ElpSet, initial_tag: u32, r: &mut Report) {
    type States = HashMap<(ChannelId, u32), Prefixes>;
    let parts = (topo.channel_count() / CHANNELS_PER_PART).clamp(1, MAX_PARTS);
    let part = |c: ChannelId| c as usize % parts;
    let mut seen: Vec<States> = (0..parts).map(|_| States::default()).collect();
    let mut frontier: Vec<((ChannelId, u32), Prefixes)> = Vec::new();
    for (c, mut p) in elp.initial(topo) {
        let node = topo.channel_src(c);
        r.transitions_replayed += 1;
        match table[node as usize].get(&(None, initial_tag, c >> 1)) {
            Some(&(t, _, _)) => {
                p.subtract_seen(seen[part(c)].entry((c, t)).or_default());
                frontier.push(((c, t), p));
            }
            None => r.violate(
                "replay",
                format!(
                    "a packet from a host at node {node} to link {} (tag {initial_tag}) has no lossless entry",
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
        type Found = (Vec<Vec<((ChannelId, u32), Prefixes)>>, Option<String>, u64);
        let mut next: Vec<States> = (0..parts).map(|_| States::default()).collect();
        for block in frontier.chunks(1 << 14) {
            let found: Vec<Found> = block
                .par_chunks(256)
                .map(|chunk| {
                    let (mut out, mut missing, mut n) = (vec![Vec::new(); parts], None, 0u64);
                    for ((c, t), p) in chunk {
                        let node = topo.channel_dst(*c);
                        for (c2, q) in elp.successors(topo, *c, hop, p) {
                            n += 1;
                            match table[node as usize].get(&(Some(c >> 1), *t, c2 >> 1)) {
                                Some(&(t2, _, _)) => out[part(c2)].push(((c2, t2), q)),
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
            let mut by_part: Vec<Vec<Vec<_>>> = (0..parts).map(|_| Vec::new()).collect();
            for (out, missing, n) in found {
                r.transitions_replayed += n;
                if let Some(m) = missing {
                    r.violate("replay", m);
                }
                for (list, lists) in out.into_iter().zip(&mut by_part) {
                    lists.push(list);
                }
            }
            next.par_iter_mut()
                .zip(by_part)
                .for_each(|(states, lists)| {
                    for (k, q) in lists.into_iter().flatten() {
                        states.entry(k).or_default().union(q);
                    }
                });
        }
        let parts: Vec<Vec<((ChannelId, u32), Prefixes)>> = next
            .into_par_iter()
            .zip(seen.par_iter_mut())
            .map(|(states, seen)| {
                states
                    .into_iter()
                    .filter_map(|(k, mut p)| {
                        p.subtract_seen(seen.entry(k).or_default());
                        (!p.is_empty()).then_some((k, p))
                    })
                    .collect()
            })
            .collect();
        frontier = parts.into_iter().flatten().collect();
        frontier.par_sort_unstable_by_key(|(k, _)| *k);
        hop += 1;
    }
}

/// The replay's state partitions: at most this many (a few per thread keep
/// the merge balanced), one per this many channels.
const MAX_PARTS: usize = 64;
const CHANNELS_PER_PART: usize = 4096;
