//! Traffic classes: which (port, arriving tag) pairs of a switch can share
//! one ingress classification, so that egress maps alone decode every
//! rewrite exactly.

use crate::error::{Error, Result};
use crate::rules::{Entry, RuleSet};
use std::collections::BTreeMap;
use tagger_generators::{ChannelId, LinkId, NodeId, Topology};

/// What a class stands for: the arriving priority, and per out link the
/// next tag and priority (links absent: lossy there).
pub(crate) type ClassKey = (u32, Vec<(LinkId, u32, u32)>);

/// One switch's classification.
pub(crate) struct Classes<'a> {
    pub node: NodeId,
    /// The node's entries.
    pub entries: &'a [Entry],
    /// Its links in link-id order (its ports, before host ports).
    pub links: Vec<LinkId>,
    /// Host ports after the links.
    pub hosts: usize,
    /// Per position (each link, then one for all host ports): arriving tag
    /// -> its class.
    pub ingress: Vec<BTreeMap<u32, ClassKey>>,
    /// Class numbers from 1, in key order (so the output does not depend on
    /// the order ports were visited).
    pub number: BTreeMap<ClassKey, u32>,
}

impl Classes<'_> {
    /// The position of port `i` (links first, then host ports, which share
    /// one).
    pub fn position(&self, i: usize) -> usize {
        i.min(self.links.len())
    }

    /// The link of port `i` (`None`: a host port).
    pub fn link(&self, i: usize) -> Option<LinkId> {
        self.links.get(i).copied()
    }

    /// The port of link `l`, one of this switch's links.
    pub fn port_of_link(&self, l: LinkId) -> usize {
        self.links
            .iter()
            .position(|&x| x == l)
            .expect("a link of the switch")
    }

    pub fn ports(&self) -> usize {
        self.links.len() + self.hosts
    }
}

/// The classifier of a rule set: per node with lossless traffic, its
/// classes, asked for one node at a time (all of them at once would hold
/// every switch's maps together: 15% more peak memory on fat-tree k=32).
///
/// (port, tag) pairs of one arriving priority share a class when one egress
/// behaviour serves them all (the arriving tag is forgotten once
/// classified: the egress maps rewrite the tag outright): the merged
/// rewrite, minus the port's own link (a packet never leaves where it came
/// in), is each pair's rewrite exactly. Greedy, in (port, tag) order.
///
/// Complexity: O(E + sum over switches of P * T * G * D) for E entries, P
/// positions, T tags, G groups and D degree; switches are small.
///
/// # Errors
/// [`Error::Export`] when an entry sends a packet back out of the link it
/// came in on (per-port maps cannot encode it).
pub(crate) fn classifier<'a>(topo: &'a Topology, rules: &'a RuleSet) -> Result<Classifier<'a>> {
    for e in &rules.entries {
        if e.in_link == Some(e.out_link) {
            return Err(Error::Export {
                kind: crate::error::ExportKind::Plan,
                reason: format!(
                    "node {}: an entry sends tag {} back out of link {} it came in on; port maps cannot encode U-turns (an ACL fallback is not implemented)",
                    e.node, e.tag, e.out_link
                ),
            });
        }
    }
    let by_node = rules.by_node(topo.node_count());
    // What each channel carries into its head: the (next tag, next
    // priority) pairs the entries at its tail send over it, sorted per
    // channel. Bucketed by channel (a counting sort), then each bucket
    // sorted on its own, in parallel: a map per link end was most of the
    // rules stage on large fat-trees, and one sort of every entry's triple
    // still took 1.4 s of fat-tree k=64's 4.5 s (0.6 s now).
    use rayon::prelude::*;
    let channel = |e: &Entry| topo.channel_from(e.out_link, e.node) as usize;
    let nc = topo.channel_count();
    let mut start = vec![0usize; nc + 1];
    for e in &rules.entries {
        start[channel(e) + 1] += 1;
    }
    for c in 0..nc {
        start[c + 1] += start[c];
    }
    let mut bucketed = vec![(0u32, 0u32); rules.entries.len()];
    let mut next = start.clone();
    for e in &rules.entries {
        let c = channel(e);
        bucketed[next[c]] = (e.next_tag, e.next_priority);
        next[c] += 1;
    }
    let mut buckets: Vec<&mut [(u32, u32)]> = Vec::with_capacity(nc);
    let mut rest = bucketed.as_mut_slice();
    for c in 0..nc {
        let (b, r) = rest.split_at_mut(start[c + 1] - start[c]);
        buckets.push(b);
        rest = r;
    }
    let kept: Vec<usize> = buckets
        .into_par_iter()
        .map(|b| {
            b.sort_unstable();
            let mut k = 0;
            for i in 0..b.len() {
                if i == 0 || b[i] != b[k - 1] {
                    b[k] = b[i];
                    k += 1;
                }
            }
            k
        })
        .collect();
    let mut arriving = Vec::with_capacity(kept.iter().sum());
    for c in 0..nc {
        arriving.extend_from_slice(&bucketed[start[c]..start[c] + kept[c]]);
    }
    start[0] = 0;
    for c in 0..nc {
        start[c + 1] = start[c] + kept[c];
    }
    Ok(Classifier {
        topo,
        by_node,
        arriving,
        start,
    })
}

/// [`classifier`]'s nodes in id order, one at a time.
///
/// # Errors
/// As [`classifier`].
pub(crate) fn classify<'a>(
    topo: &'a Topology,
    rules: &'a RuleSet,
) -> Result<impl Iterator<Item = Classes<'a>> + 'a> {
    let c = classifier(topo, rules)?;
    Ok((0..topo.node_count() as NodeId).filter_map(move |v| c.node(v)))
}

/// What classifying a node needs of the whole rule set: each node's
/// entries, and what arrives at every port. Nodes are classified
/// independently ([`Classifier::node`]), so in parallel where only their
/// counts are wanted.
pub(crate) struct Classifier<'a> {
    topo: &'a Topology,
    by_node: Vec<&'a [Entry]>,
    /// Arriving (tag, priority) pairs per channel, sorted:
    /// `arriving[start[c]..start[c + 1]]` is what channel `c` carries.
    arriving: Vec<(u32, u32)>,
    start: Vec<usize>,
}

impl<'a> Classifier<'a> {
    /// The (tag, priority) pairs channel `c` carries into its head.
    fn carried(&self, c: ChannelId) -> &[(u32, u32)] {
        &self.arriving[self.start[c as usize]..self.start[c as usize + 1]]
    }

    /// Node `v`'s classes (`None`: no lossless traffic there).
    pub(crate) fn node(&self, v: NodeId) -> Option<Classes<'a>> {
        let entries = self.by_node[v as usize];
        let out = self.topo.out_channels(v);
        // A channel into v is the reverse of one out of it.
        let into = |c| self.carried(Topology::reverse(c));
        if entries.is_empty() && out.iter().all(|&c| into(c).is_empty()) {
            return None;
        }
        let links: Vec<LinkId> = out.iter().map(|&c| c >> 1).collect();
        let declared = self.topo.node(v).hosts as usize;
        let hosts = if entries.iter().any(|e| e.in_link.is_none()) {
            declared.max(1)
        } else {
            declared
        };
        let positions: Vec<Option<LinkId>> = links
            .iter()
            .map(|&l| Some(l))
            .chain((hosts > 0).then_some(None))
            .collect();
        type Rewrite = BTreeMap<LinkId, (u32, u32)>;
        // Per arriving priority: the (position, tag) pairs it arrives at,
        // each with its rewrite per out link.
        let mut per_prio: BTreeMap<u32, Vec<(usize, u32, Rewrite)>> = BTreeMap::new();
        for (pi, &pos) in positions.iter().enumerate() {
            // Entries are sorted by (in link, tag, out link, ...): the
            // position's entries are one run, and each tag's a run in it.
            let lo = entries.partition_point(|e| e.in_link < pos);
            let hi = entries.partition_point(|e| e.in_link <= pos);
            let here = &entries[lo..hi];
            let mut tags: Vec<(u32, u32)> = match pos {
                Some(_) => into(out[pi]).to_vec(),
                None => Vec::new(),
            };
            tags.extend(here.iter().map(|e| (e.tag, e.priority)));
            tags.sort_unstable();
            tags.dedup();
            for (tag, prio) in tags {
                let a = here.partition_point(|e| e.tag < tag);
                let b = here.partition_point(|e| e.tag <= tag);
                let f: Rewrite = here[a..b]
                    .iter()
                    .map(|e| (e.out_link, (e.next_tag, e.next_priority)))
                    .collect();
                per_prio.entry(prio).or_default().push((pi, tag, f));
            }
        }
        let mut number: BTreeMap<ClassKey, u32> = BTreeMap::new();
        let mut ingress: Vec<BTreeMap<u32, ClassKey>> = vec![BTreeMap::new(); positions.len()];
        for (prio, ports) in per_prio {
            // A group's rewrite minus each member's own link is that
            // member's rewrite exactly (a packet never leaves where it came
            // in, so a rewrite never holds its own link). Merging a pair
            // keeps that for the members when every link it adds is each
            // member's own, and holds for the pair when every link of the
            // group it lacks is its own.
            let mut groups: Vec<(Rewrite, Vec<(usize, u32)>)> = Vec::new();
            for (pi, tag, f) in &ports {
                let own = |i: usize| positions[i];
                let fits = |g: &(Rewrite, Vec<(usize, u32)>)| -> bool {
                    let mut added = Vec::new();
                    for (&l, &x) in f {
                        match g.0.get(&l) {
                            Some(&y) if y != x => return false,
                            Some(_) => {}
                            None => added.push(l),
                        }
                    }
                    added
                        .iter()
                        .all(|&l| g.1.iter().all(|&(r, _)| own(r) == Some(l)))
                        && g.0
                            .keys()
                            .all(|&l| f.contains_key(&l) || own(*pi) == Some(l))
                };
                match groups.iter().position(fits) {
                    Some(gi) => {
                        let g = &mut groups[gi];
                        for (&l, &x) in f {
                            g.0.insert(l, x);
                        }
                        g.1.push((*pi, *tag));
                    }
                    None => groups.push((f.clone(), vec![(*pi, *tag)])),
                }
            }
            for (m, members) in groups {
                let key: ClassKey = (prio, m.iter().map(|(&l, &(t, p))| (l, t, p)).collect());
                number.entry(key.clone()).or_insert(0);
                for (pi, tag) in members {
                    ingress[pi].insert(tag, key.clone());
                }
            }
        }
        for (i, n) in number.values_mut().enumerate() {
            *n = i as u32 + 1;
        }
        Some(Classes {
            node: v,
            entries,
            links,
            hosts,
            ingress,
            number,
        })
    }
}
