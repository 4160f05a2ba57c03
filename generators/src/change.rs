//! Changes to a fabric that already runs, as an operator makes them: grow
//! it by switches, or drain links. Every change keeps the ids of the nodes
//! it does not add (new switches come last), so a plan installed on the
//! old topology can be read on the new one node by node.
//!
//! `grow:switches=N,seed=S` is Jellyfish's incremental expansion (Singla
//! et al., "Jellyfish: networking data centers randomly", NSDI 2012, §4.2):
//! each new switch takes over random links `(x, y)` between switches, one
//! per pair of its network ports, removes each and joins both `x` and `y`
//! to itself; only the taken-over links are recabled. `grow:leaves=N` adds
//! `N` leaves to a tiered fabric (a leaf-spine gaining racks): each copies
//! the first leaf, its hosts and its uplinks, so on a leaf-spine it joins
//! every spine. `drain:links=N,seed=S` takes `N` random switch-to-switch
//! links out of service, never one whose loss would disconnect the network.

use crate::error::{Result, TopologyError};
use crate::model::{Family, LinkId, NodeId, NodeKind, Topology};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Most switches one `grow` adds, and most links one `drain` takes out: a
/// typo (`switches=1000000`) is refused before any work.
pub const MAX_CHANGE: u32 = 100_000;

/// One change to a running fabric.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Change {
    /// Add `switches` switches, each taking over random links.
    Grow {
        /// Switches to add.
        switches: u32,
        /// Seed of the link choices.
        seed: u64,
    },
    /// Add `leaves` leaves to a tiered fabric, each a copy of the first
    /// leaf (its hosts and its uplinks); nothing is drawn at random.
    AddLeaves {
        /// Leaves to add.
        leaves: u32,
    },
    /// Take `links` random switch-to-switch links out of service.
    Drain {
        /// Links to drain.
        links: u32,
        /// Seed of the link choices.
        seed: u64,
    },
    /// Take the links between chosen pairs of switches out of service
    /// (maintenance): each `A-B`, a node's name or id at either end; every
    /// link between the two goes.
    DrainChosen {
        /// The pairs as given (`A-B`), in order.
        links: Vec<String>,
    },
}

impl Change {
    /// The same change drawn with another seed (the same change when it
    /// draws nothing).
    pub fn with_seed(self, seed: u64) -> Self {
        match self {
            Change::Grow { switches, .. } => Change::Grow { switches, seed },
            Change::AddLeaves { .. } | Change::DrainChosen { .. } => self,
            Change::Drain { links, .. } => Change::Drain { links, seed },
        }
    }

    /// The seed of the link choices (0 when the change draws nothing).
    pub fn seed(&self) -> u64 {
        match self {
            Change::Grow { seed, .. } | Change::Drain { seed, .. } => *seed,
            Change::AddLeaves { .. } | Change::DrainChosen { .. } => 0,
        }
    }

    /// Whether the change needs a tiered topology (nodes with levels) and
    /// keeps its levels (`grow:leaves`), rather than needing none (`grow:
    /// switches`, which would break them) or working on any (`drain`).
    pub fn tiers(&self) -> Option<bool> {
        match self {
            Change::Grow { .. } => Some(false),
            Change::AddLeaves { .. } => Some(true),
            Change::Drain { .. } | Change::DrainChosen { .. } => None,
        }
    }

    /// Parses `grow:switches=N[,seed=S]`, `grow:leaves=N`,
    /// `drain:links=N[,seed=S]` (seed 1 when not given) or
    /// `drain:link=A-B[+C-D...]` (the links between switches A and B, each
    /// a node's name or id). `Ok(None)` when `spec` names none of them (it
    /// is then a topology spec).
    ///
    /// ```
    /// use tagger_generators::change::Change;
    /// assert_eq!(
    ///     Change::parse("drain:links=4,seed=2").unwrap(),
    ///     Some(Change::Drain { links: 4, seed: 2 })
    /// );
    /// assert_eq!(
    ///     Change::parse("grow:leaves=2").unwrap(),
    ///     Some(Change::AddLeaves { leaves: 2 })
    /// );
    /// assert_eq!(Change::parse("fattree:k=4").unwrap(), None);
    /// assert_eq!(
    ///     Change::parse("drain:link=spine-1-leaf-2+3-7").unwrap(),
    ///     Some(Change::DrainChosen { links: vec!["spine-1-leaf-2".into(), "3-7".into()] })
    /// );
    /// assert!(Change::parse("grow:switch=3").is_err());
    /// assert!(Change::parse("grow:leaves=2,seed=3").is_err());
    /// ```
    ///
    /// # Errors
    /// [`TopologyError::Param`] naming the parameter at fault.
    pub fn parse(spec: &str) -> Result<Option<Change>> {
        let (kind, rest) = spec.trim().split_once(':').unwrap_or((spec.trim(), ""));
        // `grow` counts switches unless it names leaves.
        let leaves = rest
            .split(',')
            .any(|kv| kv.split('=').next().map(str::trim) == Some("leaves"));
        if kind.trim() == "drain"
            && let Some(list) = rest.trim().strip_prefix("link=")
        {
            return chosen(list).map(Some);
        }
        let (family, count_key): (&'static str, &str) = match kind.trim() {
            "grow" if leaves => ("grow", "leaves"),
            "grow" => ("grow", "switches"),
            "drain" => ("drain", "links"),
            _ => return Ok(None),
        };
        let bad = |param: &str, value: String, reason: String| TopologyError::Param {
            family,
            param: param.to_string(),
            value,
            reason,
        };
        let mut p = crate::params::Params::parse(rest, Some(count_key)).map_err(|e| {
            TopologyError::Spec {
                spec: spec.to_string(),
                reason: e.to_string(),
            }
        })?;
        let mut number = |key: &str| -> Result<Option<u64>> {
            match p.take(key) {
                None => Ok(None),
                Some(v) => crate::params::non_negative(&v).map(Some).ok_or_else(|| {
                    let reason = crate::params::not_a_count(&v).to_string();
                    bad(key, v, reason)
                }),
            }
        };
        let count = number(count_key)?.ok_or_else(|| {
            bad(
                count_key,
                "(missing)".into(),
                format!("required, e.g. {family}:{count_key}=4,seed=1"),
            )
        })?;
        if count == 0 || count > MAX_CHANGE as u64 {
            return Err(bad(
                count_key,
                count.to_string(),
                format!("must be in 1..={MAX_CHANGE}"),
            ));
        }
        if leaves {
            if let Some((k, v)) = p.first() {
                return Err(bad(
                    k,
                    v.to_string(),
                    "unknown parameter (grow:leaves=N takes no other key: it draws nothing at random)"
                        .into(),
                ));
            }
            return Ok(Some(Change::AddLeaves {
                leaves: count as u32,
            }));
        }
        let seed = number("seed")?.unwrap_or(1);
        if let Some((k, v)) = p.first() {
            return Err(bad(
                k,
                v.to_string(),
                format!("unknown parameter (keys: {count_key}, seed)"),
            ));
        }
        let count = count as u32;
        Ok(Some(match family {
            "grow" => Change::Grow {
                switches: count,
                seed,
            },
            _ => Change::Drain { links: count, seed },
        }))
    }

    /// The change's canonical text.
    pub fn canonical(&self) -> String {
        match self {
            Change::Grow { switches, seed } => format!("grow:switches={switches},seed={seed}"),
            Change::AddLeaves { leaves } => format!("grow:leaves={leaves}"),
            Change::Drain { links, seed } => format!("drain:links={links},seed={seed}"),
            Change::DrainChosen { links } => format!("drain:link={}", links.join("+")),
        }
    }

    /// Applies the change to `topo`. The result is named `NAME+CHANGE` and
    /// is a [`Family::File`] topology: it no longer has the generator's
    /// regular structure.
    ///
    /// # Errors
    /// [`TopologyError::Construction`] when the change cannot be made
    /// (too few links to take over, draining would disconnect the network,
    /// or leaves added to a topology without levels).
    pub fn apply(&self, topo: &Topology) -> Result<Topology> {
        match *self {
            Change::Grow { switches, seed } => grow(topo, switches, seed),
            Change::AddLeaves { leaves } => add_leaves(topo, leaves),
            Change::Drain { links, seed } => drain(topo, links, seed),
            Change::DrainChosen { ref links } => drain_chosen(topo, links),
        }
        .and_then(|(nodes, links)| {
            let name = format!("{}+{}", topo.name(), self.canonical());
            let ends: Vec<[NodeId; 2]> = links.iter().map(|l| l.ends).collect();
            let mut t = Topology::new(name, Family::File, nodes, ends)?;
            if topo.has_link_props() {
                let props = links.iter().map(|l| topo.link_props(l.from)).collect();
                t = t.with_link_props(props)?;
            }
            if (0..topo.node_count() as NodeId).any(|v| topo.port_names(v).is_some()) {
                let names = port_names(topo, &t, &links);
                t = t.with_port_names(names)?;
            }
            if topo.has_node_names() {
                let names = node_names(topo, t.node_count());
                t = t.with_node_names(names)?;
            }
            Ok(t)
        })
    }
}

/// Node names of the changed topology: a change keeps every old node's id,
/// and so its name; a node it adds is `added-ID` (with a `+` per clash
/// with an old name).
fn node_names(old: &Topology, nodes: usize) -> Vec<String> {
    let mut names: Vec<String> = (0..old.node_count() as NodeId)
        .map(|v| old.node_name(v).unwrap_or_default().to_string())
        .collect();
    let taken: std::collections::BTreeSet<String> = names.iter().cloned().collect();
    for v in old.node_count()..nodes {
        let mut n = format!("added-{v}");
        while taken.contains(&n) {
            n.push('+');
        }
        names.push(n);
    }
    names
}

/// A link of the changed topology and the old link it is made from: the
/// same link, or (growth) the link it took over, whose cable and ports at
/// the old ends it reuses. A new leaf's uplink is `fresh`: it copies the
/// first leaf's link's cable, but its port at the old end is a new one.
#[derive(Clone, Copy, Debug)]
struct Made {
    ends: [NodeId; 2],
    from: LinkId,
    fresh: bool,
}

type Parts = (Vec<crate::model::Node>, Vec<Made>);

/// Port names of the changed topology: an old switch's port keeps its name
/// on whichever link now uses it (a taken-over link's port is recabled to
/// the new switch), then its host ports; a new switch has none.
fn port_names(old: &Topology, new: &Topology, links: &[Made]) -> Vec<Vec<String>> {
    (0..new.node_count() as NodeId)
        .map(|v| {
            let Some(names) = old
                .port_names(v)
                .filter(|_| (v as usize) < old.node_count())
            else {
                return Vec::new();
            };
            let old_port = |l: LinkId| {
                old.out_channels(v)
                    .iter()
                    .position(|&c| c >> 1 == l)
                    .map(|p| names[p].clone())
            };
            let mut list: Vec<String> = Vec::new();
            for &c in new.out_channels(v) {
                // A new port has no name: the switch's ports go back to
                // positional names rather than borrow one.
                let made = links[(c >> 1) as usize];
                match old_port(made.from).filter(|_| !made.fresh) {
                    Some(n) => list.push(n),
                    None => return Vec::new(),
                }
            }
            list.extend(names[old.degree(v)..].iter().cloned());
            list
        })
        .collect()
}

fn is_switch_link(topo: &Topology, [a, b]: [NodeId; 2]) -> bool {
    topo.node(a).kind == NodeKind::Switch && topo.node(b).kind == NodeKind::Switch
}

/// Each new switch copies switch 0's hosts, and has as many network ports
/// as switch 0 has switch links (Jellyfish's `r`), taking over `r / 2`
/// links. Surviving links keep their order; new ones come last.
fn grow(topo: &Topology, switches: u32, seed: u64) -> Result<Parts> {
    let fail = |reason: String| TopologyError::Construction {
        family: "grow",
        reason,
    };
    let first = (0..topo.node_count() as NodeId)
        .find(|&v| topo.node(v).kind == NodeKind::Switch)
        .ok_or_else(|| fail("the topology has no switch to copy".into()))?;
    let r = topo
        .neighbors(first)
        .filter(|&u| topo.node(u).kind == NodeKind::Switch)
        .count();
    if r < 2 {
        return Err(fail(format!(
            "switch {first} has {r} switch links: a new switch needs at least 2 to take one over"
        )));
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut nodes = topo.nodes().to_vec();
    // `None` marks a link taken over; new links are appended.
    let mut links: Vec<Option<Made>> = topo
        .links()
        .iter()
        .enumerate()
        .map(|(l, &ends)| {
            Some(Made {
                ends,
                from: l as LinkId,
                fresh: false,
            })
        })
        .collect();
    for _ in 0..switches {
        let u = nodes.len() as NodeId;
        nodes.push(*topo.node(first));
        let mut taken: Vec<NodeId> = Vec::new();
        for _ in 0..r / 2 {
            // Links between switches, neither end already joined to `u`.
            let candidates: Vec<usize> = links
                .iter()
                .enumerate()
                .filter_map(|(i, l)| {
                    let [a, b] = (*l)?.ends;
                    let ok = (a as usize) < nodes.len()
                        && (b as usize) < nodes.len()
                        && nodes[a as usize].kind == NodeKind::Switch
                        && nodes[b as usize].kind == NodeKind::Switch
                        && !taken.contains(&a)
                        && !taken.contains(&b)
                        && a != u
                        && b != u;
                    ok.then_some(i)
                })
                .collect();
            if candidates.is_empty() {
                return Err(fail(format!(
                    "new switch {u} found no link to take over ({} taken)",
                    taken.len() / 2
                )));
            }
            let i = candidates[rng.random_range(0..candidates.len())];
            let Made {
                ends: [a, b], from, ..
            } = links[i].take().expect("a candidate is present");
            taken.extend([a, b]);
            links.push(Some(Made {
                ends: [a, u],
                from,
                fresh: false,
            }));
            links.push(Some(Made {
                ends: [b, u],
                from,
                fresh: false,
            }));
        }
    }
    Ok((nodes, links.into_iter().flatten().collect()))
}

/// `drain:link=`'s list: `A-B` pairs joined by `+`.
fn chosen(list: &str) -> Result<Change> {
    let links: Vec<String> = list.split('+').map(|l| l.trim().to_string()).collect();
    let bad = |value: &str, reason: &str| TopologyError::Param {
        family: "drain",
        param: "link".into(),
        value: value.to_string(),
        reason: reason.to_string(),
    };
    if links.len() > MAX_CHANGE as usize {
        return Err(bad(list, &format!("more than {MAX_CHANGE} links")));
    }
    for l in &links {
        if l.is_empty() || !l.contains('-') || l.starts_with('-') || l.ends_with('-') {
            return Err(bad(
                l,
                "expected A-B, the switches at the link's two ends (names or ids), e.g. drain:link=3-7 or drain:link=spine1-leaf2+3-7",
            ));
        }
    }
    Ok(Change::DrainChosen { links })
}

/// The node `text` names: its name, else its id.
fn node_named(topo: &Topology, text: &str) -> Option<NodeId> {
    (0..topo.node_count() as NodeId)
        .find(|&v| topo.node_name(v) == Some(text))
        .or_else(|| {
            text.parse::<NodeId>()
                .ok()
                .filter(|&v| (v as usize) < topo.node_count())
        })
}

/// The two switches of `pair` (`A-B`; a name may hold `-`: every split
/// is tried and exactly one must name two nodes).
fn ends_of(topo: &Topology, pair: &str) -> Result<[NodeId; 2]> {
    let mut found: Vec<[NodeId; 2]> = pair
        .match_indices('-')
        .filter_map(|(i, _)| {
            Some([
                node_named(topo, &pair[..i])?,
                node_named(topo, &pair[i + 1..])?,
            ])
        })
        .collect();
    found.dedup();
    let fail = |reason: String| TopologyError::Construction {
        family: "drain",
        reason: format!("link '{pair}': {reason}"),
    };
    match found.as_slice() {
        [] => Err(fail(format!(
            "no split of it names two nodes of {} (names or ids 0 to {})",
            topo.name(),
            topo.node_count().saturating_sub(1)
        ))),
        [ends] => Ok(*ends),
        _ => Err(fail(format!(
            "it names more than one pair of nodes ({}): use ids",
            found
                .iter()
                .map(|[a, b]| format!("{a}-{b}"))
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

/// Drains every link between each chosen pair of switches; refused, naming
/// the pair, where there is no such link or the network would come apart.
fn drain_chosen(topo: &Topology, pairs: &[String]) -> Result<Parts> {
    let mut dead = vec![false; topo.link_count()];
    for pair in pairs {
        let [a, b] = ends_of(topo, pair)?;
        let fail = |reason: String| TopologyError::Construction {
            family: "drain",
            reason: format!("link '{pair}' (nodes {a} and {b}): {reason}"),
        };
        if !is_switch_link(topo, [a, b]) {
            return Err(fail("both ends must be switches".into()));
        }
        let mut any = false;
        for (l, &[x, y]) in topo.links().iter().enumerate() {
            if (x, y) == (a, b) || (x, y) == (b, a) {
                any |= !dead[l];
                dead[l] = true;
            }
        }
        if !any {
            return Err(fail("no link joins them (or it was listed already)".into()));
        }
        let (mut dist, mut queue) = (Vec::new(), Vec::new());
        if !connected(topo, &dead, &mut dist, &mut queue) {
            return Err(fail("draining it would disconnect the network".into()));
        }
    }
    Ok(without(topo, &dead))
}

/// `topo`'s nodes and its links but the `dead` ones, in order.
fn without(topo: &Topology, dead: &[bool]) -> Parts {
    let links = topo
        .links()
        .iter()
        .enumerate()
        .filter(|&(l, _)| !dead[l])
        .map(|(l, &ends)| Made {
            ends,
            from: l as LinkId,
            fresh: false,
        })
        .collect();
    (topo.nodes().to_vec(), links)
}

/// Drains `count` switch-to-switch links, chosen in a seeded random order,
/// skipping any whose removal would disconnect the network.
fn drain(topo: &Topology, count: u32, seed: u64) -> Result<Parts> {
    let mut order: Vec<usize> = (0..topo.link_count())
        .filter(|&l| is_switch_link(topo, topo.links()[l]))
        .collect();
    order.shuffle(&mut ChaCha8Rng::seed_from_u64(seed));
    let mut dead = vec![false; topo.link_count()];
    let mut drained = 0;
    let (mut dist, mut queue) = (Vec::new(), Vec::new());
    for l in order {
        if drained == count {
            break;
        }
        dead[l] = true;
        if connected(topo, &dead, &mut dist, &mut queue) {
            drained += 1;
        } else {
            dead[l] = false;
        }
    }
    if drained < count {
        return Err(TopologyError::Construction {
            family: "drain",
            reason: format!(
                "only {drained} of {count} links can be drained without disconnecting the network"
            ),
        });
    }
    Ok(without(topo, &dead))
}

/// Each new leaf copies the first switch of the lowest level (its hosts),
/// with a link to each switch that switch links to, in the same order and
/// multiplicity (on a leaf-spine: every spine). Old links keep their order;
/// new ones come last.
fn add_leaves(topo: &Topology, leaves: u32) -> Result<Parts> {
    let fail = |reason: String| TopologyError::Construction {
        family: "grow",
        reason,
    };
    if !topo.has_levels() {
        return Err(fail(format!(
            "grow:leaves adds leaves to a tiered fabric, and '{}' has no levels (grow:switches grows a Jellyfish)",
            topo.name()
        )));
    }
    // The lowest level's first switch.
    let (_, first) = (0..topo.node_count() as NodeId)
        .filter(|&v| topo.node(v).kind == NodeKind::Switch)
        .filter_map(|v| topo.level(v).map(|l| (l, v)))
        .min()
        .ok_or_else(|| fail("the topology has no switch to copy".into()))?;
    let uplinks: Vec<(NodeId, LinkId)> = topo
        .out_channels(first)
        .iter()
        .map(|&c| (topo.channel_dst(c), c >> 1))
        .filter(|&(u, _)| topo.node(u).kind == NodeKind::Switch)
        .collect();
    if uplinks.is_empty() {
        return Err(fail(format!(
            "leaf {first} links to no switch: a copy of it would be cut off"
        )));
    }
    let mut nodes = topo.nodes().to_vec();
    let mut links: Vec<Made> = topo
        .links()
        .iter()
        .enumerate()
        .map(|(l, &ends)| Made {
            ends,
            from: l as LinkId,
            fresh: false,
        })
        .collect();
    for _ in 0..leaves {
        let u = nodes.len() as NodeId;
        nodes.push(*topo.node(first));
        for &(up, from) in &uplinks {
            // Ends in the first leaf's link's order.
            let ends = if topo.links()[from as usize][0] == first {
                [u, up]
            } else {
                [up, u]
            };
            links.push(Made {
                ends,
                from,
                fresh: true,
            });
        }
    }
    Ok((nodes, links))
}

/// Whether every node is reachable from node 0 over the live links.
fn connected(topo: &Topology, dead: &[bool], dist: &mut Vec<u32>, queue: &mut Vec<NodeId>) -> bool {
    topo.bfs_live(0, |l| !dead[l as usize], dist, queue);
    dist.iter().all(|&d| d != u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::build;
    use proptest::prelude::*;

    #[test]
    fn parse_errors_name_the_parameter() {
        let e = Change::parse("grow:switches=0").unwrap_err().to_string();
        assert!(e.contains("switches") && e.contains("1..="), "{e}");
        let e = Change::parse("drain:links=2,sed=1")
            .unwrap_err()
            .to_string();
        assert!(e.contains("sed") && e.contains("unknown"), "{e}");
        let e = Change::parse("drain:seed=1").unwrap_err().to_string();
        assert!(e.contains("links") && e.contains("required"), "{e}");
        assert_eq!(
            Change::parse("grow:3").unwrap(),
            Some(Change::Grow {
                switches: 3,
                seed: 1
            })
        );
    }

    #[test]
    fn drain_refuses_to_disconnect() {
        let t = build("leafspine:leaves=2,spines=1,hosts=1").unwrap();
        let e = Change::Drain { links: 1, seed: 1 }.apply(&t).unwrap_err();
        assert!(e.to_string().contains("only 0 of 1"), "{e}");
    }

    /// `drain:link=A-B` takes out exactly the links between A and B (all
    /// of them, parallel ones too), by id or by name, and names what it
    /// cannot do.
    #[test]
    fn chosen_links_are_drained_and_nothing_else() {
        // Leaves 0-3, spines 4-5, two links between each leaf and spine.
        let t = build("leafspine:leaves=4,spines=2,hosts=1,links=2").unwrap();
        let joins = |t: &Topology, a: NodeId, b: NodeId| {
            t.links()
                .iter()
                .filter(|&&[x, y]| (x, y) == (a, b) || (x, y) == (b, a))
                .count()
        };
        let c = Change::parse("drain:link=0-4+5-3").unwrap().unwrap();
        assert_eq!(c.canonical(), "drain:link=0-4+5-3");
        let d = c.apply(&t).unwrap();
        assert_eq!(d.link_count(), t.link_count() - 4);
        assert_eq!((joins(&d, 0, 4), joins(&d, 3, 5)), (0, 0));
        assert_eq!((joins(&d, 0, 5), joins(&d, 1, 4)), (2, 2));
        // Names, one of them holding the separator.
        let names: Vec<String> = (0..t.node_count())
            .map(|v| {
                if v < 4 {
                    format!("leaf-{v}")
                } else {
                    format!("spine{v}")
                }
            })
            .collect();
        let named = t.clone().with_node_names(names).unwrap();
        let d = Change::parse("drain:link=leaf-1-spine5")
            .unwrap()
            .unwrap()
            .apply(&named)
            .unwrap();
        assert_eq!((joins(&d, 1, 5), joins(&d, 1, 4)), (0, 2));
        for (spec, says) in [
            ("drain:link=0-1", "no link joins them"),
            ("drain:link=0-4+0-4", "listed already"),
            ("drain:link=0-99", "no split of it names two nodes"),
            ("drain:link=0-4+0-5", "disconnect"),
        ] {
            let e = Change::parse(spec).unwrap().unwrap().apply(&t).unwrap_err();
            assert!(e.to_string().contains(says), "{spec}: {e}");
        }
        for spec in [
            "drain:link=",
            "drain:link=04",
            "drain:link=-4",
            "drain:link=0-4+",
        ] {
            let e = Change::parse(spec).unwrap_err().to_string();
            assert!(e.contains("expected A-B"), "{spec}: {e}");
        }
    }

    /// Node names stay with their nodes; added ones get fresh names.
    #[test]
    fn node_names_stay_with_their_nodes() {
        let t = build("jellyfish:n=10,ports=6,r=4,seed=3").unwrap();
        let mut names: Vec<String> = (0..10).map(|v| format!("sw{v}")).collect();
        names[9] = "added-10".into();
        let t = t.with_node_names(names).unwrap();
        for change in ["grow:switches=2", "drain:links=2"] {
            let c = Change::parse(change).unwrap().unwrap().apply(&t).unwrap();
            for v in 0..10 {
                assert_eq!(c.node_name(v), t.node_name(v), "{change}");
            }
            if change.starts_with("grow") {
                assert_eq!(c.node_name(10), Some("added-10+"));
                assert_eq!(c.node_name(11), Some("added-11"));
            }
        }
        let plain = build("fattree:k=4").unwrap();
        let c = Change::AddLeaves { leaves: 1 }.apply(&plain).unwrap();
        assert_eq!(c.node_name(0), None, "no names where the input had none");
    }

    /// Port names and cable lengths follow the ports: a taken-over link's
    /// ports are recabled to the new switch and keep their names; drained
    /// links' names go.
    #[test]
    fn port_names_and_props_follow_the_ports() {
        let t = build("jellyfish:n=10,ports=6,r=4,seed=3").unwrap();
        let names: Vec<Vec<String>> = (0..t.node_count())
            .map(|v| {
                (0..t.degree(v as NodeId) + 2)
                    .map(|p| format!("e{v}-{p}"))
                    .collect()
            })
            .collect();
        let props = (0..t.link_count())
            .map(|l| crate::model::LinkProps {
                speed_gbps: None,
                cable_m: Some(l as f64),
            })
            .collect();
        let t = t
            .with_port_names(names)
            .unwrap()
            .with_link_props(props)
            .unwrap();
        let sorted = |t: &Topology, v: NodeId| {
            let mut n = t.port_names(v).unwrap().to_vec();
            n.sort();
            n
        };
        let g = Change::Grow {
            switches: 2,
            seed: 4,
        }
        .apply(&t)
        .unwrap();
        for v in 0..10 {
            assert_eq!(sorted(&g, v), sorted(&t, v), "switch {v}");
        }
        assert!(g.port_names(10).is_none() && g.port_names(11).is_none());
        let d = Change::Drain { links: 2, seed: 4 }.apply(&t).unwrap();
        for l in 0..d.link_count() as LinkId {
            let [a, b] = d.links()[l as usize];
            let old = t.links().iter().position(|&x| x == [a, b]).unwrap();
            assert_eq!(d.link_props(l), t.link_props(old as LinkId));
        }
        let gone: usize = (0..10).map(|v| t.degree(v) - d.degree(v)).sum();
        assert_eq!(gone, 4);
        assert_eq!(d.port_names(0).unwrap().len(), d.degree(0) + 2);
    }

    /// Added leaves copy the first leaf: its hosts, its level and a link
    /// to every spine (parallel links too), so the result is the
    /// generator's leaf-spine with more leaves, up to node order; cable
    /// lengths follow, and a spine's new port has no name (its ports go
    /// back to positional names). Topologies without levels are refused.
    #[test]
    fn added_leaves_copy_the_first_leaf() {
        let t = build("leafspine:leaves=4,spines=3,hosts=5,links=2").unwrap();
        let g = Change::AddLeaves { leaves: 2 }.apply(&t).unwrap();
        let want = build("leafspine:leaves=6,spines=3,hosts=5,links=2").unwrap();
        assert_eq!(g.node_count(), want.node_count());
        assert_eq!(g.link_count(), want.link_count());
        let kinds = |t: &Topology| {
            let mut v: Vec<(Option<u32>, u32, usize)> = (0..t.node_count() as NodeId)
                .map(|v| (t.level(v), t.node(v).hosts, t.degree(v)))
                .collect();
            v.sort();
            v
        };
        assert_eq!(kinds(&g), kinds(&want));
        for v in 0..t.node_count() as NodeId {
            assert_eq!(g.node(v), t.node(v), "node {v} kept");
        }
        assert!(g.is_connected() && g.has_levels());
        assert_eq!(g.name(), format!("{}+grow:leaves=2", t.name()));

        let props = (0..t.link_count())
            .map(|l| crate::model::LinkProps {
                speed_gbps: None,
                cable_m: Some(l as f64),
            })
            .collect();
        let names: Vec<Vec<String>> = (0..t.node_count())
            .map(|v| {
                (0..t.degree(v as NodeId) + t.node(v as NodeId).hosts as usize)
                    .map(|p| format!("p{v}-{p}"))
                    .collect()
            })
            .collect();
        let t = t
            .with_link_props(props)
            .unwrap()
            .with_port_names(names)
            .unwrap();
        let g = Change::AddLeaves { leaves: 1 }.apply(&t).unwrap();
        let new_leaf = t.node_count() as NodeId;
        let cable = |t: &Topology, c: u32| (t.channel_dst(c), t.link_props(c >> 1).cable_m);
        let copied: Vec<_> = g
            .out_channels(new_leaf)
            .iter()
            .map(|&c| cable(&g, c))
            .collect();
        let first: Vec<_> = t.out_channels(0).iter().map(|&c| cable(&t, c)).collect();
        assert_eq!(copied, first);
        // Leaves keep their names; spines gained a port and lost theirs.
        assert_eq!(g.port_names(1), t.port_names(1));
        assert!(g.port_names(4).is_none());

        let e = Change::AddLeaves { leaves: 1 }
            .apply(&build("jellyfish:n=10,ports=6,r=4,seed=3").unwrap())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("no levels") && e.contains("grow:switches"),
            "{e}"
        );
        let e = Change::parse("grow:leaves=0").unwrap_err().to_string();
        assert!(e.contains("leaves") && e.contains("1..="), "{e}");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]
        /// Growth keeps degrees (old switches keep theirs, new ones get
        /// r), adds r/2 * 2 links net of the r/2 taken per switch, keeps
        /// every old node's id and kind, and stays connected.
        #[test]
        fn grow_keeps_degrees(n in 8u32..30, add in 1u32..6, seed in 0u64..1000) {
            let n = n - n % 2;
            let t = build(&format!("jellyfish:n={n},ports=8,r=4,seed={seed}")).unwrap();
            let g = Change::Grow { switches: add, seed }.apply(&t).unwrap();
            prop_assert_eq!(g.node_count(), t.node_count() + add as usize);
            prop_assert_eq!(g.link_count(), t.link_count() + 2 * add as usize);
            for v in 0..g.node_count() as NodeId {
                prop_assert_eq!(g.degree(v), 4);
                prop_assert_eq!(g.node(v).hosts, 4);
            }
            prop_assert!(g.is_connected());
            let again = Change::Grow { switches: add, seed }.apply(&t).unwrap();
            prop_assert_eq!(g.links(), again.links());
        }

        /// Draining removes exactly that many switch links and never
        /// disconnects.
        #[test]
        fn drain_keeps_connected(k in 2u32..4, links in 1u32..6, seed in 0u64..1000) {
            let t = build(&format!("fattree:k={}", 2 * k)).unwrap();
            let d = Change::Drain { links, seed }.apply(&t).unwrap();
            prop_assert_eq!(d.link_count() + links as usize, t.link_count());
            prop_assert!(d.is_connected());
            prop_assert_eq!(d.node_count(), t.node_count());
        }
    }
}
