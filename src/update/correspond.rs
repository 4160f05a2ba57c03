//! Which node and link of the new topology is which of the old, and the
//! topology the fabric is while it changes: the new one plus the old links
//! it drops (they are still cabled, and still carry traffic, until the
//! last step).

use crate::error::{Error, Result};
use crate::rules::{Entry, RuleSet};
use tagger_generators::model::Family;
use tagger_generators::{ChannelId, LinkId, NodeId, NodeKind, Topology};

/// The old topology's nodes and links in the new one, and the union of both.
#[derive(Debug)]
pub struct Correspondence {
    /// Per old node, its id in the new topology.
    pub node: Vec<NodeId>,
    /// Per new node, its old id (`None`: a node the change adds).
    pub old_node: Vec<Option<NodeId>>,
    /// Per old link, its id in [`Correspondence::union`].
    pub link: Vec<LinkId>,
    /// Per union link, its old id (`None`: a link the change adds).
    pub old_link: Vec<Option<LinkId>>,
    /// The new topology's links first (same ids), then the old links it
    /// drops.
    pub union: Topology,
    /// Links of the new topology: union links `0..new_links`.
    pub new_links: usize,
    /// Per union link, whether it is a dropped link whose ports are
    /// recabled: an end of it gains a link in the change (growth takes
    /// links over this way). Ports are not identified across topologies,
    /// so every dropped link at a switch that gains one counts: its entries
    /// must go, and the routing off it, before the new link carries any.
    pub recabled: Vec<bool>,
    /// Whether nodes were matched by name (both topologies name them)
    /// rather than by kind, tier and rank.
    pub by_name: bool,
}

/// How a node is told apart from its peers: its kind and, on a tiered
/// topology, its level. Nodes match by this key and their rank among the
/// nodes sharing it, so a leaf-spine with a leaf added (whose spines all
/// get new ids) matches leaf to leaf and spine to spine.
fn class(t: &Topology, v: NodeId, tiered: bool) -> (u8, Option<u32>) {
    let kind = match t.node(v).kind {
        NodeKind::Switch => 0,
        _ => 1,
    };
    (kind, if tiered { t.level(v) } else { None })
}

/// Per old node, the new node of its name.
fn match_by_name(old: &Topology, new: &Topology) -> Result<Vec<NodeId>> {
    let index: std::collections::BTreeMap<&str, NodeId> = (0..new.node_count() as NodeId)
        .filter_map(|w| Some((new.node_name(w)?, w)))
        .collect();
    (0..old.node_count() as NodeId)
        .map(|v| {
            let name = old.node_name(v).unwrap_or_default();
            let kind = old.node(v).kind;
            match index.get(name) {
                Some(&w) if new.node(w).kind == kind => Ok(w),
                Some(&w) => Err(Error::Update {
                    reason: format!(
                        "old node {v} '{name}' is a {} and new node {w} of that name a {}",
                        kind.as_str(),
                        new.node(w).kind.as_str()
                    ),
                }),
                None => Err(Error::Update {
                    reason: format!(
                        "old node {v} '{name}' ({}) has no node of that name in the new topology: take a switch out by draining its links",
                        kind.as_str()
                    ),
                }),
            }
        })
        .collect()
}

/// Per old node, the new node of its class and rank ([`class`]).
fn match_by_rank(old: &Topology, new: &Topology) -> Result<Vec<NodeId>> {
    let tiered = old.has_levels() && new.has_levels();
    let mut by_class: std::collections::BTreeMap<(u8, Option<u32>), Vec<NodeId>> =
        Default::default();
    for v in 0..new.node_count() as NodeId {
        by_class.entry(class(new, v, tiered)).or_default().push(v);
    }
    let mut taken: std::collections::BTreeMap<(u8, Option<u32>), usize> = Default::default();
    let mut node = Vec::with_capacity(old.node_count());
    for v in 0..old.node_count() as NodeId {
        let c = class(old, v, tiered);
        let rank = taken.entry(c).or_default();
        let Some(&w) = by_class.get(&c).and_then(|l| l.get(*rank)) else {
            return Err(Error::Update {
                reason: format!(
                    "old node {v} ({}{}) has no counterpart in the new topology, which has {} such nodes: take a switch out by draining its links",
                    old.node(v).kind.as_str(),
                    c.1.map_or(String::new(), |l| format!(" at level {l}")),
                    by_class.get(&c).map_or(0, Vec::len)
                ),
            });
        };
        *rank += 1;
        node.push(w);
    }
    Ok(node)
}

/// Matches `old` into `new`.
///
/// Where both topologies name their nodes, nodes match by name (a fabric
/// numbered anew is the same fabric). Otherwise they match by kind (and
/// level, when both topologies have levels) and rank among the nodes of
/// that kind, i.e. by id where the change appends nodes. Links match by
/// their matched ends, parallel links in id order.
///
/// # Errors
/// [`Error::Update`] when an old node has no counterpart (no node of its
/// name, or the new topology has fewer nodes of its kind): a switch is
/// taken out by draining its links, not by deleting it; or when a name
/// names a node of another kind.
pub fn correspond(old: &Topology, new: &Topology) -> Result<Correspondence> {
    let by_name = old.has_node_names() && new.has_node_names();
    let node = if by_name {
        match_by_name(old, new)?
    } else {
        match_by_rank(old, new)?
    };
    let mut old_node = vec![None; new.node_count()];
    for (v, &w) in node.iter().enumerate() {
        old_node[w as usize] = Some(v as NodeId);
    }
    // New links by their ends, parallel ones in id order.
    let key = |[a, b]: [NodeId; 2]| (a.min(b), a.max(b));
    let mut new_by_ends: std::collections::BTreeMap<(NodeId, NodeId), Vec<LinkId>> =
        Default::default();
    for (l, &ends) in new.links().iter().enumerate() {
        new_by_ends.entry(key(ends)).or_default().push(l as LinkId);
    }
    for list in new_by_ends.values_mut() {
        list.reverse();
    }
    let mut links = new.links().to_vec();
    let mut old_link = vec![None; new.link_count()];
    let mut link = Vec::with_capacity(old.link_count());
    for (l, &[a, b]) in old.links().iter().enumerate() {
        let ends = [node[a as usize], node[b as usize]];
        let u = match new_by_ends.get_mut(&key(ends)).and_then(Vec::pop) {
            Some(u) => u,
            None => {
                links.push(ends);
                old_link.push(None);
                (links.len() - 1) as LinkId
            }
        };
        old_link[u as usize] = Some(l as LinkId);
        link.push(u);
    }
    let mut union = Topology::new(
        format!("{} during the change from {}", new.name(), old.name()),
        Family::File,
        new.nodes().to_vec(),
        links,
    )?;
    // Every link keeps its speed and cable through the change: a kept or
    // added link as the new topology gives it (what it does not say, as
    // the old one did), a dropped link as the old one did. The exports of
    // the steps size headroom from them.
    if old.has_link_props() || new.has_link_props() {
        let props = (0..union.link_count())
            .map(|u| {
                let was = old_link[u].map(|l| old.link_props(l)).unwrap_or_default();
                if u < new.link_count() {
                    let now = new.link_props(u as LinkId);
                    tagger_generators::model::LinkProps {
                        speed_gbps: now.speed_gbps.or(was.speed_gbps),
                        cable_m: now.cable_m.or(was.cable_m),
                    }
                } else {
                    was
                }
            })
            .collect();
        union = union.with_link_props(props)?;
    }
    let names = union_port_names(old, new, &union, &old_node, &old_link);
    union = union.with_port_names(names)?;
    if new.has_node_names() {
        let names = (0..new.node_count() as NodeId)
            .map(|w| new.node_name(w).unwrap_or_default().to_string())
            .collect();
        union = union.with_node_names(names)?;
    }
    let mut gains = vec![false; union.node_count()];
    for (u, &[a, b]) in union.links()[..new.link_count()].iter().enumerate() {
        if old_link[u].is_none() {
            gains[a as usize] = true;
            gains[b as usize] = true;
        }
    }
    let recabled = (0..union.link_count())
        .map(|u| {
            let [a, b] = union.links()[u];
            u >= new.link_count() && (gains[a as usize] || gains[b as usize])
        })
        .collect();
    Ok(Correspondence {
        recabled,
        node,
        old_node,
        link,
        old_link,
        union,
        new_links: new.link_count(),
        by_name,
    })
}

/// The union's port names, as the running switches have them: a port that
/// exists before the change keeps the name it was installed under (the
/// old topology file's, or `EthernetN` by its position there), through
/// every step; a port the change adds gets a name none of the switch's
/// installed ports has (`EthernetN` past the highest), never another's; a
/// switch the change adds names its ports as the new topology does (or
/// by position, as its peers were named).
fn union_port_names(
    old: &Topology,
    new: &Topology,
    union: &Topology,
    old_node: &[Option<NodeId>],
    old_link: &[Option<LinkId>],
) -> Vec<Vec<String>> {
    let export_names = |t: &Topology, v: NodeId| {
        crate::sonic::port_names(t, v, t.degree(v) + t.node(v).hosts as usize)
    };
    (0..union.node_count() as NodeId)
        .map(|w| {
            let Some(v) = old_node[w as usize] else {
                // A new switch: the new topology's names, by position.
                let mine = export_names(new, w);
                let links = union.degree(w);
                let mut list: Vec<String> = mine[..new.degree(w).min(links)].to_vec();
                // Its links beyond the new topology's: none (a new switch
                // has no dropped link), but stay total.
                while list.len() < links {
                    list.push(format!("Ethernet{}", 4 * list.len()));
                }
                list.extend(mine[new.degree(w)..].iter().cloned());
                return list;
            };
            let installed = export_names(old, v);
            let old_pos = |l: LinkId| old.out_channels(v).iter().position(|&c| c >> 1 == l);
            let mut used: std::collections::BTreeSet<String> = installed.iter().cloned().collect();
            let mut next = 0u32;
            let mut fresh = |used: &mut std::collections::BTreeSet<String>| loop {
                let n = format!("Ethernet{}", 4 * next);
                next += 1;
                if used.insert(n.clone()) {
                    return n;
                }
            };
            let mut list = Vec::new();
            for &c in union.out_channels(w) {
                let u = c >> 1;
                let name = match old_link[u as usize].and_then(old_pos) {
                    Some(p) => installed[p].clone(),
                    None => fresh(&mut used),
                };
                list.push(name);
            }
            // Host ports: the installed ones under their names, any the
            // change adds under new ones.
            let old_hosts = &installed[old.degree(v)..];
            for h in 0..new.node(w).hosts as usize {
                list.push(match old_hosts.get(h) {
                    Some(n) => n.clone(),
                    None => fresh(&mut used),
                });
            }
            list
        })
        .collect()
}

impl Correspondence {
    /// Links of the old topology the new one keeps (both ends matched and
    /// linked there).
    pub fn links_kept(&self) -> usize {
        self.link
            .iter()
            .filter(|&&l| (l as usize) < self.new_links)
            .count()
    }

    /// Links the change drops (union links past the new topology's), in
    /// union id order.
    pub fn dropped(&self) -> Vec<LinkId> {
        (self.new_links..self.union.link_count())
            .map(|u| u as LinkId)
            .collect()
    }

    /// Links the change adds (new links with no old counterpart), in id
    /// order.
    pub fn added(&self) -> Vec<LinkId> {
        (0..self.new_links)
            .filter(|&u| self.old_link[u].is_none())
            .map(|u| u as LinkId)
            .collect()
    }

    /// Union link `u` named by its ends as the running switches know them:
    /// `A PORT -- B PORT`, a node by its name where the topology names
    /// nodes (else `switch N` with N its new id), a port by its installed
    /// name.
    pub fn link_name(&self, u: LinkId) -> String {
        let t = &self.union;
        let end = |v: NodeId| {
            let node = t
                .node_name(v)
                .map_or_else(|| format!("switch {v}"), str::to_string);
            let pos = t.out_channels(v).iter().position(|&c| c >> 1 == u);
            match (pos, t.port_names(v)) {
                (Some(p), Some(names)) => format!("{node} {}", names[p]),
                _ => node,
            }
        };
        let [a, b] = t.links()[u as usize];
        format!("{} -- {}", end(a), end(b))
    }

    /// Union node `v` as the running switches know it: its name where the
    /// topology names nodes, else its id (the new topology's).
    pub fn node_label(&self, v: NodeId) -> String {
        self.union
            .node_name(v)
            .map_or_else(|| v.to_string(), str::to_string)
    }

    /// The old switches whose id differs in the new topology, as (old, new)
    /// pairs in old id order.
    pub fn renumbered(&self) -> Vec<(NodeId, NodeId)> {
        self.node
            .iter()
            .enumerate()
            .map(|(v, &w)| (v as NodeId, w))
            .filter(|&(v, w)| v != w && self.union.node(w).kind == NodeKind::Switch)
            .collect()
    }

    /// A warning when the new topology keeps under half the old links:
    /// without node names, nodes are matched by kind, tier and rank as the
    /// files number them, so the same fabric numbered anew reads as a
    /// rebuild.
    pub fn mismatch(&self) -> Option<String> {
        let (kept, old) = (self.links_kept(), self.link.len());
        (old > 0 && 2 * kept < old).then(|| {
            if self.by_name {
                format!(
                    "the new topology keeps only {kept} of the old topology's {old} links between the nodes of the same names: this plans a rebuild"
                )
            } else {
                format!(
                    "the new topology keeps only {kept} of the old topology's {old} links (nodes are matched by kind, tier and their order in the file where not both files name their nodes): if it is the same fabric numbered anew, give both files node names (\"name\") or number it as the old one, or this plans a rebuild"
                )
            }
        })
    }

    /// The new topology with the port names the switches have after the
    /// change (the union's, less the dropped links' ports), so that what
    /// is exported from it later names ports as they run.
    ///
    /// # Errors
    /// As [`Topology::with_port_names`] (none for a union built here).
    pub fn new_named(&self, new: &Topology) -> Result<Topology> {
        let names: Vec<Vec<String>> = (0..new.node_count() as NodeId)
            .map(|w| {
                let all = self.union.port_names(w).unwrap_or_default();
                let mut list = Vec::new();
                for (i, &c) in self.union.out_channels(w).iter().enumerate() {
                    if ((c >> 1) as usize) < self.new_links {
                        list.push(all[i].clone());
                    }
                }
                list.extend(all[self.union.degree(w)..].iter().cloned());
                list
            })
            .collect();
        Ok(new.clone().with_port_names(names)?)
    }

    /// `rules` (on the old topology) on the union topology.
    pub fn old_on_union(&self, rules: &RuleSet) -> RuleSet {
        self.rename(rules, |e| {
            Some(Entry {
                node: self.node[e.node as usize],
                in_link: e.in_link.map(|l| self.link[l as usize]),
                out_link: self.link[e.out_link as usize],
                ..*e
            })
        })
    }

    /// `rules` (on the new topology) on the union topology: the same ids.
    pub fn new_on_union(&self, rules: &RuleSet) -> RuleSet {
        self.rename(rules, |e| Some(*e))
    }

    /// The entries of `rules` (on the union) that the old topology has,
    /// in its ids.
    pub fn union_on_old(&self, rules: &RuleSet, old: &Topology) -> RuleSet {
        let mut r = self.rename(rules, |e| {
            let link = |l: LinkId| self.old_link[l as usize];
            Some(Entry {
                node: self.old_node[e.node as usize]?,
                in_link: match e.in_link {
                    Some(l) => Some(link(l)?),
                    None => None,
                },
                out_link: link(e.out_link)?,
                ..*e
            })
        });
        r.topology = old.name().to_string();
        r
    }

    /// The entries of `rules` (on the union) that the new topology has.
    pub fn union_on_new(&self, rules: &RuleSet, new: &Topology) -> RuleSet {
        let n = self.new_links as LinkId;
        let mut r = self.rename(rules, |e| {
            (e.out_link < n && e.in_link.is_none_or(|l| l < n)).then_some(*e)
        });
        r.topology = new.name().to_string();
        r
    }

    /// Traffic classes chosen on the old topology (`c`, as `tagger run
    /// --export` chose them for the installed plan) on the union: the
    /// same classes with the same members and the same behaviour on every
    /// old port, nothing lossless on a port the change adds (what the
    /// switches run before any step).
    pub(crate) fn classes_on_union(
        &self,
        old: &Topology,
        c: &crate::tagging::traffic::Classification,
    ) -> crate::tagging::traffic::Classification {
        use crate::tagging::traffic::{Class, Classification, NodeClasses};
        let u = &self.union;
        let channel = |ch: ChannelId| -> ChannelId {
            let l = self.link[(ch >> 1) as usize];
            u.channel_from(l, self.node[old.channel_src(ch) as usize])
        };
        let mut nodes: Vec<NodeClasses> = c
            .nodes
            .iter()
            .map(|nc| {
                let (v, w) = (nc.node, self.node[nc.node as usize]);
                // Per union port of w, the old port it was (if any).
                let old_port: Vec<Option<usize>> = u
                    .out_channels(w)
                    .iter()
                    .map(|&uc| {
                        let l = self.old_link[(uc >> 1) as usize]?;
                        let oc = old.channel_from(l, v);
                        old.out_channels(v).iter().position(|&x| x == oc)
                    })
                    .collect();
                let classes = nc
                    .classes
                    .iter()
                    .map(|k| Class {
                        priority: k.priority,
                        egress: old_port
                            .iter()
                            .map(|p| p.and_then(|i| k.egress[i]))
                            .collect(),
                    })
                    .collect();
                let mut ingress: Vec<(Option<ChannelId>, u32, u32)> = nc
                    .ingress
                    .iter()
                    .map(|&(f, t, k)| (f.map(channel), t, k))
                    .collect();
                ingress.sort_unstable();
                NodeClasses {
                    node: w,
                    classes,
                    ingress,
                }
            })
            .collect();
        nodes.sort_by_key(|n| n.node);
        Classification { nodes }
    }

    /// `rules` with every entry mapped by `f` (dropped on `None`), sorted,
    /// deduplicated, with its ingress map rebuilt, named for the union.
    fn rename(&self, rules: &RuleSet, f: impl Fn(&Entry) -> Option<Entry>) -> RuleSet {
        let mut entries: Vec<Entry> = rules.entries.iter().filter_map(f).collect();
        entries.sort_unstable();
        entries.dedup();
        with_entries(rules, self.union.name(), entries)
    }
}

/// A rule set with `rules`' header (topology renamed) and `entries`
/// (sorted), its ingress map rebuilt from them and its priority count
/// taken from them.
pub fn with_entries(rules: &RuleSet, topology: &str, entries: Vec<Entry>) -> RuleSet {
    let ingress = crate::rules::ingress_of(&entries);
    RuleSet {
        topology: topology.to_string(),
        algo: rules.algo.clone(),
        priorities: entries
            .iter()
            .map(|e| e.priority.max(e.next_priority))
            .max()
            .unwrap_or(0),
        initial_tag: rules.initial_tag,
        classes: rules.classes.clone(),
        entries,
        ingress,
    }
}
