//! Traffic classes: the fewest classes a switch needs to carry a plan with
//! per-port QoS maps alone, and what each class does to every packet.
//!
//! A switch that rewrites tags with port maps (SONiC's `DSCP_TO_TC_MAP` at
//! ingress, `TC_TO_QUEUE_MAP` and `TC_TO_DSCP_MAP` at egress) puts each
//! arriving (port, tag) into a traffic class, and the class alone decides,
//! on every egress port, the queue and the tag a packet leaves with. A class
//! is therefore a whole egress function, and *every* packet classified into
//! it gets that function: the plan's rewrite on the transitions its ELPs
//! take, and the class's choice on every other port (a U-turn, a port no
//! ELP continues on from there). Two (port, tag) pairs, the *members*, can
//! share a class when one function serves both, so the question per switch
//! is how few functions cover its members.
//!
//! A member's transitions that the plan decides are fixed. Every other
//! egress port is *free*, and the class may give it:
//!
//! - lossy (always safe: a lossy packet pauses no one);
//! - a higher priority `q > p` (DSCP plans: tag = priority), also always
//!   safe: an edge between two priorities cannot close a same-priority
//!   cycle, and priorities never fall;
//! - the member's own priority `p` (DSCP plans), a new same-priority
//!   dependency `(in channel, p) -> (out channel, p)`: allowed only while
//!   priority `p`'s graph, the plan's dependencies plus every such
//!   completion made so far, stays acyclic (incremental cycle detection, as
//!   greedy tagging uses). From a host port no cycle can start, so it is
//!   always allowed there.
//!
//! So the complete function the classes define, over every packet and not
//! only ELP traffic, is deadlock-free under any routing by construction,
//! U-turns included; the read-back of an export checks it again
//! independently.
//!
//! Members are placed first-fit (greedy colouring of their conflicts:
//! Welsh and Powell, "An upper bound for the chromatic number of a graph",
//! 1967), per priority, in the order (node, in port with host ports first,
//! tag); a class left free on a port by all its members leaves it lossy.
//! Plans whose tags are not their priorities (`greedy-ttl`) get no
//! completions: their classes leave every free port lossy.
//!
//! Complexity: O(K + sum over nodes of M * G * D) for K keys, M members, G
//! classes and D ports of a node, plus one incremental cycle check per
//! same-priority completion tried.

use crate::cycle::{IncrementalDag, OrderedDag};
use crate::error::{Error, Result};
use tagger_generators::{ChannelId, NodeId, Topology};

use super::Key;

/// What one traffic class does: the priority its packets arrived with
/// (their priority group) and, per egress port, what they leave with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Class {
    /// The lossless priority the class's packets arrived with.
    pub priority: u32,
    /// Per out channel of the node, in port order
    /// ([`Topology::out_channels`]): the `(next tag, next priority)` a
    /// packet leaves with, or `None`: lossy there.
    pub egress: Vec<Option<(u32, u32)>>,
}

/// One node's classes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeClasses {
    /// The node.
    pub node: NodeId,
    /// Its classes, numbered from 0 in this order (by arriving priority).
    pub classes: Vec<Class>,
    /// Per arriving `(in channel, or None for its host ports; tag)`: the
    /// index of its class; sorted.
    pub ingress: Vec<(Option<ChannelId>, u32, u32)>,
}

impl NodeClasses {
    /// The class of packets arriving on `from` (None: a host port) with
    /// `tag`, if they are lossless here.
    pub fn class_of(&self, from: Option<ChannelId>, tag: u32) -> Option<&Class> {
        self.ingress
            .binary_search_by(|&(c, t, _)| (c, t).cmp(&(from, tag)))
            .ok()
            .map(|i| &self.classes[self.ingress[i].2 as usize])
    }
}

/// Every node's classes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Classification {
    /// Nodes with lossless traffic (a member), in id order.
    pub nodes: Vec<NodeClasses>,
}

impl Classification {
    /// The most classes one node needs (0 without lossless traffic).
    pub fn max(&self) -> usize {
        self.nodes
            .iter()
            .map(|n| n.classes.len())
            .max()
            .unwrap_or(0)
    }

    /// Nodes needing more than `budget` classes, with what each needs.
    pub fn over(&self, budget: usize) -> Vec<(NodeId, usize)> {
        self.nodes
            .iter()
            .filter(|n| n.classes.len() > budget)
            .map(|n| (n.node, n.classes.len()))
            .collect()
    }

    /// Classes per node, for every node of a topology of `nodes` nodes (0
    /// where none is needed).
    pub fn per_node(&self, nodes: usize) -> Vec<u32> {
        let mut out = vec![0u32; nodes];
        for n in &self.nodes {
            out[n.node as usize] = n.classes.len() as u32;
        }
        out
    }

    /// Heap bytes held.
    pub fn heap_bytes(&self) -> u64 {
        use crate::budget::bytes_of;
        self.nodes
            .iter()
            .map(|n| {
                bytes_of::<NodeClasses>(1)
                    + bytes_of::<(Option<ChannelId>, u32, u32)>(n.ingress.len())
                    + n.classes
                        .iter()
                        .map(|c| {
                            bytes_of::<Class>(1) + bytes_of::<Option<(u32, u32)>>(c.egress.len())
                        })
                        .sum::<u64>()
            })
            .sum()
    }
}

/// Bytes [`classify`] works with for `keys` on `topo`, about: the keys'
/// members, one dependency graph per priority, and the result.
pub fn estimate_bytes(topo: &Topology, keys: usize, priorities: u32) -> u64 {
    use crate::budget::bytes_of;
    bytes_of::<(u64, u64)>(keys * 3)
        + u64::from(priorities.max(1)) * bytes_of::<[u64; 4]>(topo.channel_count())
}

/// Whether free ports may take a lossless value: only where the tag is the
/// priority on every key (DSCP plans), so that a packet's tag says its
/// priority at the next node too.
fn completes(keys: &[Key]) -> bool {
    keys.iter()
        .all(|k| k.tag == k.priority && k.next_tag == k.next_priority)
}

/// One member: packets arriving at a node on one in port with one tag.
struct Member {
    from: Option<ChannelId>,
    tag: u32,
    /// The plan's decisions, `(port of the node, value)` by port: a member
    /// of a node with thousands of ports decides a few of them.
    fixed: Vec<(usize, (u32, u32))>,
}

/// Ports past which a node's classes put their completions through a hub
/// vertex. Either way gives the same classes (the graphs have the same
/// paths among channels) wherever no check reaches [`CHECK_WORK`]; direct
/// edges search faster on small nodes, hubs keep a node with 20,000
/// parallel links near-linear (3.7 s, where direct edges took minutes).
const HUB_PORTS: usize = 16;

/// Arcs a completion's cycle check may scan before the member is refused
/// the class (as if the completion closed a cycle; it then founds or joins
/// another, so the classes stay valid). The largest check on the shipped
/// fabrics scans under 900 (Jellyfish 2000/64 `shortest`: 650); on a
/// 20,000-switch chain every check walked the chain back to the last
/// accepted U-turn, 19,000 checks of up to 78,000 arcs (10 s), now about
/// 0.5 s with the same one class a switch.
const CHECK_WORK: usize = 1 << 12;

/// No hub: the class's completions are direct edges.
const NO_HUB: u32 = u32::MAX;

/// A class being built: per port what it gives, and its members.
struct Group {
    state: Vec<Option<(u32, u32)>>,
    members: Vec<usize>,
    /// Ports whose value no member free there may take.
    strict: usize,
    /// At a node of more than [`HUB_PORTS`] ports, with completions: the
    /// vertex standing for every same-priority completion of the class
    /// ([`NO_HUB`] elsewhere, where each completion is its own edge). A
    /// class's completions are all pairs (a member's in channel, a port it
    /// gives the class's own priority), a complete bipartite graph; the
    /// edges in channel -> hub -> port have the same paths among channels
    /// with one edge per member and per port instead of their product.
    hub: u32,
}

/// The traffic classes of the plan `keys` on `topo` (see the module
/// documentation).
///
/// Arguments: the topology, and a verified plan's keys (any order; every
/// key's `in_channel` enters its `node`, its `out_channel` leaves it).
///
/// Returns: per node with lossless traffic, its classes and which class
/// each arriving (port, tag) is in. Deterministic: the same keys give the
/// same classes on any number of threads.
///
/// Complexity: see the module documentation; priorities are classified in
/// parallel, each on its own graph.
///
/// # Errors
/// [`Error::SelfCheck`] when a priority's dependencies in `keys` already
/// have a cycle (the plan was not verified).
pub fn classify(topo: &Topology, keys: &[Key]) -> Result<Classification> {
    classify_with::<OrderedDag>(topo, keys)
}

/// [`classify`] over cycle-detection backend `D`. Every backend gives the
/// same classes wherever no completion's check reaches [`CHECK_WORK`]
/// arcs (tested against the naive one, which always checks in full);
/// past it only `OrderedDag` gives up.
pub(crate) fn classify_with<D: IncrementalDag>(
    topo: &Topology,
    keys: &[Key],
) -> Result<Classification> {
    classify_hubs::<D>(topo, keys, HUB_PORTS)
}

/// [`classify_with`] with hubs at nodes of more than `hub_ports` ports
/// (tests: the classes do not depend on it).
pub(crate) fn classify_hubs<D: IncrementalDag>(
    topo: &Topology,
    keys: &[Key],
    hub_ports: usize,
) -> Result<Classification> {
    Ok(classify_states::<D>(topo, &[], None, &[keys], hub_ports)?
        .pop()
        .expect("one state"))
}

/// The classes of several plans that switches may run side by side (the
/// states of an update): each plan's classes are [`classify`]'s, but every
/// completion is checked against the dependencies of *all* the plans and
/// the completions of all the others, so that switches configured from
/// different states, and packets decided by any of them, never close a
/// cycle together.
///
/// # Errors
/// [`Error::SelfCheck`] when the plans' dependencies together have a cycle
/// at some priority (they cannot all run at once).
pub fn classify_all(topo: &Topology, states: &[&[Key]]) -> Result<Vec<Classification>> {
    classify_states::<OrderedDag>(topo, &[], None, states, HUB_PORTS)
}

/// [`classify_all`] beside what switches already run: `running` lists the
/// same-priority dependencies `(priority, in channel, out channel)` of the
/// configuration in place (its plan's and its classes' completions alike),
/// and every completion is checked against them too. A switch whose
/// members are those it runs with, classified from the same dependencies,
/// gets the classes it has. With `first_within` (sorted), the first
/// state's completions are kept to those dependencies: its classes then
/// add no dependency to them (a configuration to pass through on the way
/// from one that has them).
///
/// # Errors
/// [`Error::SelfCheck`] when the running dependencies and the plans'
/// together have a cycle at some priority.
pub fn classify_all_from(
    topo: &Topology,
    running: &[(u32, ChannelId, ChannelId)],
    first_within: Option<&[(u32, ChannelId, ChannelId)]>,
    states: &[&[Key]],
) -> Result<Vec<Classification>> {
    classify_states::<OrderedDag>(topo, running, first_within, states, HUB_PORTS)
}

/// A packet state arriving at a node: (priority, node, in channel, tag).
type Arrival = (u32, NodeId, Option<ChannelId>, u32);

/// The states `keys` send packets into, sorted and distinct: the members
/// of the nodes they reach, with the keys that decide them, and the
/// arrivals no key at the node continues (delivered to its hosts).
///
/// Deduplicated per node first: a node's keys send few distinct (channel,
/// tag) pairs, and sorting one arrival per key was most of the
/// classification's preparation (30M on fat-tree k=64 `kbounce:2`).
fn arrivals(topo: &Topology, keys: &[Key]) -> Vec<Arrival> {
    use rayon::prelude::*;
    let mut arrivals: Vec<Arrival> = keys
        .par_chunk_by(|a, b| a.node == b.node)
        .flat_map_iter(|run| {
            let mut a: Vec<Arrival> = run
                .iter()
                .map(|k| {
                    (
                        k.next_priority,
                        topo.channel_dst(k.out_channel),
                        Some(k.out_channel),
                        k.next_tag,
                    )
                })
                .collect();
            a.sort_unstable();
            a.dedup();
            a
        })
        .collect();
    arrivals.par_sort_unstable();
    arrivals.dedup();
    arrivals
}

fn classify_states<D: IncrementalDag>(
    topo: &Topology,
    running: &[(u32, ChannelId, ChannelId)],
    first_within: Option<&[(u32, ChannelId, ChannelId)]>,
    states: &[&[Key]],
    hub_ports: usize,
) -> Result<Vec<Classification>> {
    use rayon::prelude::*;
    let complete = states.iter().all(|k| completes(k));
    let top = states
        .iter()
        .flat_map(|k| k.iter())
        .map(|k| k.next_priority.max(k.priority))
        .max()
        .unwrap_or(0);
    // Per state: its keys sorted by (node, from, tag, out) (as plans and
    // rule sets hold them: borrowed; else a sorted copy), and the states
    // arriving ([`arrivals`]). Each priority picks its keys out of a
    // node's run as it classifies the node: bucketing the keys by priority
    // first wrote a reference per key (fat-tree k=64: peak 3.14-3.20 ->
    // 2.97-2.99 GiB without them, in the same time).
    let prepared: Vec<(std::borrow::Cow<'_, [Key]>, Vec<Arrival>)> = states
        .iter()
        .map(|&keys| {
            let sorted = if keys.is_sorted() {
                std::borrow::Cow::Borrowed(keys)
            } else {
                let mut own = keys.to_vec();
                own.par_sort_unstable();
                std::borrow::Cow::Owned(own)
            };
            (sorted, arrivals(topo, keys))
        })
        .collect();
    let per_priority: Vec<Result<Vec<Vec<NodeClasses>>>> = (1..=top)
        .into_par_iter()
        .map(|p| {
            let slices: Vec<(&[Key], &[Arrival])> = prepared
                .iter()
                .map(|(sorted, arrivals)| {
                    let alo = arrivals.partition_point(|a| a.0 < p);
                    let ahi = arrivals.partition_point(|a| a.0 <= p);
                    (&sorted[..], &arrivals[alo..ahi])
                })
                .collect();
            let seed: Vec<(ChannelId, ChannelId)> = running
                .iter()
                .filter(|e| e.0 == p)
                .map(|e| (e.1, e.2))
                .collect();
            let within: Option<Vec<(ChannelId, ChannelId)>> = first_within.map(|w| {
                let lo = w.partition_point(|e| e.0 < p);
                let hi = w.partition_point(|e| e.0 <= p);
                w[lo..hi].iter().map(|e| (e.1, e.2)).collect()
            });
            classify_priority::<D>(
                topo,
                p,
                &seed,
                within.as_deref(),
                &slices,
                complete,
                hub_ports,
            )
        })
        .collect();
    let mut out: Vec<Vec<NodeClasses>> = vec![Vec::new(); states.len()];
    let mut index: Vec<Vec<u32>> = vec![vec![u32::MAX; topo.node_count()]; states.len()];
    for part in per_priority {
        for (si, nodes) in part?.into_iter().enumerate() {
            let (by_node, index) = (&mut out[si], &mut index[si]);
            for nc in nodes {
                // Each node's classes in priority order.
                let i = index[nc.node as usize];
                if i == u32::MAX {
                    index[nc.node as usize] = by_node.len() as u32;
                    by_node.push(nc);
                } else {
                    let n = &mut by_node[i as usize];
                    let shift = n.classes.len() as u32;
                    n.classes.extend(nc.classes);
                    n.ingress
                        .extend(nc.ingress.into_iter().map(|(c, t, k)| (c, t, k + shift)));
                }
            }
        }
    }
    Ok(out
        .into_iter()
        .map(|mut by_node| {
            for n in &mut by_node {
                n.ingress.sort_unstable();
            }
            by_node.sort_unstable_by_key(|n| n.node);
            Classification { nodes: by_node }
        })
        .collect())
}

/// Priority `p`'s classes at every node, for each state: its keys (of
/// every priority) sorted by (node, from, tag, out), and the `(p, node,
/// from, tag)` states arriving at `p`, sorted. One graph holds the
/// dependencies of every state, and each state's completions in turn.
#[allow(clippy::type_complexity)]
fn classify_priority<D: IncrementalDag>(
    topo: &Topology,
    p: u32,
    running: &[(ChannelId, ChannelId)],
    first_within: Option<&[(ChannelId, ChannelId)]>,
    states: &[(&[Key], &[Arrival])],
    complete: bool,
    hub_ports: usize,
) -> Result<Vec<Vec<NodeClasses>>> {
    // The plans' own dependencies at p, and those of what runs, laid out
    // along a topological order (so each costs no search); completions
    // are checked against them. Plans without completions need no graph.
    let n = topo.channel_count();
    let mut dag = if complete {
        let mut edges: Vec<(ChannelId, ChannelId)> =
            Vec::with_capacity(states.iter().map(|s| s.0.len()).sum::<usize>() + running.len());
        edges.extend(
            states
                .iter()
                .flat_map(|(keys, _)| keys.iter())
                .filter(|k| k.priority == p && k.next_priority == p)
                .filter_map(|k| Some((k.in_channel?, k.out_channel)))
                .chain(running.iter().copied()),
        );
        if states.len() > 1 || !running.is_empty() {
            edges.sort_unstable();
            edges.dedup();
        }
        D::from_acyclic(n, &edges).ok_or_else(|| Error::SelfCheck {
            stage: "traffic classes",
            reason: format!("priority {p}'s dependencies have a cycle"),
        })?
    } else {
        D::with_vertices(n)
    };
    // Each channel's port at the node it leaves (a binary search per key
    // over the node's ports was a fifth of the members' building).
    let mut port_of = vec![0u32; n];
    for v in 0..topo.node_count() as NodeId {
        for (j, &c) in topo.out_channels(v).iter().enumerate() {
            port_of[c as usize] = j as u32;
        }
    }
    let mut all = Vec::with_capacity(states.len());
    for (si, &(keys, arrivals)) in states.iter().enumerate() {
        let within = if si == 0 { first_within } else { None };
        let mut out = Vec::new();
        // A node's keys at p, in the keys' order.
        let mut here: Vec<&Key> = Vec::new();
        // Nodes in id order: the keys' and the arrivals' runs merged; a
        // node with neither keys nor arrivals at p has no classes at p.
        let (mut ki, mut ai) = (0usize, 0usize);
        loop {
            let kn = keys.get(ki).map(|k| k.node);
            let an = arrivals.get(ai).map(|a| a.1);
            let v = match (kn, an) {
                (None, None) => break,
                (Some(x), None) | (None, Some(x)) => x,
                (Some(x), Some(y)) => x.min(y),
            };
            let kend = ki + keys[ki..].partition_point(|k| k.node == v);
            let aend = ai + arrivals[ai..].partition_point(|a| a.1 == v);
            here.clear();
            here.extend(keys[ki..kend].iter().filter(|k| k.priority == p));
            let astart = ai;
            ki = kend;
            ai = aend;
            if here.is_empty() && astart == aend {
                continue;
            }
            out.push(classify_node(
                topo,
                v,
                p,
                &here,
                &arrivals[astart..aend],
                complete,
                topo.out_channels(v).len() > hub_ports,
                within,
                &port_of,
                &mut dag,
            ));
        }
        all.push(out);
    }
    Ok(all)
}

/// Node `v`'s classes at priority `p`.
#[allow(clippy::too_many_arguments)]
fn classify_node<D: IncrementalDag>(
    topo: &Topology,
    v: NodeId,
    p: u32,
    keys: &[&Key],
    arrivals: &[Arrival],
    complete: bool,
    hubs: bool,
    within: Option<&[(ChannelId, ChannelId)]>,
    port_of: &[u32],
    dag: &mut D,
) -> NodeClasses {
    let outs = topo.out_channels(v);
    let port = |c: ChannelId| -> usize {
        debug_assert_eq!(
            topo.channel_src(c),
            v,
            "a key's out channel leaves its node"
        );
        port_of[c as usize] as usize
    };
    // Members in (from, tag) order, host ports first (None < Some).
    let mut members: Vec<Member> = Vec::new();
    let mut i = 0;
    let mut ids: Vec<(Option<ChannelId>, u32)> = keys
        .iter()
        .map(|k| (k.in_channel, k.tag))
        .chain(arrivals.iter().map(|a| (a.2, a.3)))
        .collect();
    ids.sort_unstable();
    ids.dedup();
    for (from, tag) in ids {
        let mut fixed = Vec::new();
        while i < keys.len() && (keys[i].in_channel, keys[i].tag) < (from, tag) {
            i += 1;
        }
        while i < keys.len() && (keys[i].in_channel, keys[i].tag) == (from, tag) {
            let k = keys[i];
            fixed.push((port(k.out_channel), (k.next_tag, k.next_priority)));
            i += 1;
        }
        fixed.sort_unstable();
        fixed.dedup_by_key(|e| e.0);
        members.push(Member { from, tag, fixed });
    }
    let mut groups: Vec<Group> = Vec::new();
    let mut added: Vec<(u32, u32)> = Vec::new();
    for m in 0..members.len() {
        let mut placed = false;
        for g in &mut groups {
            if join(&members, m, g, outs, p, complete, within, dag, &mut added) {
                placed = true;
                break;
            }
        }
        if !placed {
            groups.push(found(&members[m], outs, p, complete, hubs, dag, m));
        }
    }
    let mut ingress = Vec::with_capacity(members.len());
    for (gi, g) in groups.iter().enumerate() {
        for &m in &g.members {
            ingress.push((members[m].from, members[m].tag, gi as u32));
        }
    }
    NodeClasses {
        node: v,
        classes: groups
            .into_iter()
            .map(|g| Class {
                priority: p,
                egress: g.state,
            })
            .collect(),
        ingress,
    }
}

/// What a member free on a port accepts there, when its class gives
/// `value`: a higher priority always, its own priority when the
/// dependency it adds keeps the graph acyclic (`Some(true)`: needs that
/// check; `None`: refused).
fn accepts(value: (u32, u32), p: u32, complete: bool) -> Option<bool> {
    let (tag, prio) = value;
    if !complete || tag != prio || prio < p {
        None
    } else {
        Some(prio == p)
    }
}

/// A class of member `me` (index `m`) alone: its decisions, and with
/// `hub` (which needs completions) its hub, whose edges stand for the
/// plan's own dependencies of `me` (so they close no cycle).
fn found<D: IncrementalDag>(
    me: &Member,
    outs: &[ChannelId],
    p: u32,
    complete: bool,
    hub: bool,
    dag: &mut D,
    m: usize,
) -> Group {
    let mut state = vec![None; outs.len()];
    let mut strict = 0;
    for &(j, b) in &me.fixed {
        state[j] = Some(b);
        strict += usize::from(accepts(b, p, complete).is_none());
    }
    let hub = if complete && hub {
        let hub = dag.add_vertex();
        // In-edge first: the hub has no out-edge yet, and each out-edge's
        // head is one the member's channel already reaches.
        let mut ok = me.from.is_none_or(|c| dag.try_add_edge(c, hub));
        for &(j, b) in &me.fixed {
            if accepts(b, p, complete) == Some(true) {
                ok &= dag.try_add_edge(hub, outs[j]);
            }
        }
        debug_assert!(ok, "a class's own decisions close no cycle");
        hub
    } else {
        NO_HUB
    };
    Group {
        state,
        members: vec![m],
        strict,
        hub,
    }
}

/// Puts member `m` into group `g` if one function serves all: every port
/// agrees, and the same-priority completions that needs are added to
/// `dag` (all of them, or none): each completion as an edge, or with a
/// hub, `m`'s in channel into it and it into each port `m` newly gives
/// the class's priority.
///
/// Complexity: with a hub O(|m's decisions| + the cycle checks), else (or
/// with `within`) O(ports + the completions + their checks).
#[allow(clippy::too_many_arguments)]
fn join<D: IncrementalDag>(
    members: &[Member],
    m: usize,
    g: &mut Group,
    outs: &[ChannelId],
    p: u32,
    complete: bool,
    within: Option<&[(ChannelId, ChannelId)]>,
    dag: &mut D,
    added: &mut Vec<(u32, u32)>,
) -> bool {
    let me = &members[m];
    // Every port m decides agrees with the class, or the class leaves it
    // free and all its members accept m's value there; every port the
    // class decides and m leaves free takes a value m accepts.
    let mut strict_matched = 0;
    for &(j, b) in &me.fixed {
        match g.state[j] {
            Some(a) if a != b => return false,
            Some(a) => strict_matched += usize::from(accepts(a, p, complete).is_none()),
            None if accepts(b, p, complete).is_none() => return false,
            None => {}
        }
    }
    if strict_matched < g.strict {
        return false;
    }
    if !complete {
        admit(me, g, m);
        return true;
    }
    let direct = (g.hub == NO_HUB || within.is_some())
        .then(|| completions(members, me, g, outs, p, complete));
    if let (Some(w), Some(need)) = (within, &direct)
        && need.iter().any(|e| w.binary_search(e).is_err())
    {
        return false;
    }
    let edges: Vec<(u32, u32)> = match direct {
        Some(need) if g.hub == NO_HUB => need
            .into_iter()
            .filter(|&(a, b)| !dag.has_edge(a, b))
            .collect(),
        _ => me
            .from
            .map(|c| (c, g.hub))
            .into_iter()
            .chain(
                me.fixed
                    .iter()
                    .filter(|&&(j, b)| {
                        g.state[j].is_none() && accepts(b, p, complete) == Some(true)
                    })
                    .map(|&(j, _)| (g.hub, outs[j])),
            )
            .collect(),
    };
    added.clear();
    for (a, b) in edges {
        if dag.try_add_edge_within(a, b, CHECK_WORK) {
            added.push((a, b));
        } else {
            for &(x, y) in added.iter() {
                dag.remove_edge(x, y);
            }
            return false;
        }
    }
    admit(me, g, m);
    true
}

/// Records member `m` (`me`) in `g`, its decisions in the class's.
fn admit(me: &Member, g: &mut Group, m: usize) {
    for &(j, b) in &me.fixed {
        g.state[j] = Some(b);
    }
    g.members.push(m);
}

/// The same-priority completions member `me` joining `g` adds, in port
/// order: its in channel to a port the class gives its priority and `me`
/// leaves free, and every member's in channel to a port `me` newly gives
/// it.
fn completions(
    members: &[Member],
    me: &Member,
    g: &Group,
    outs: &[ChannelId],
    p: u32,
    complete: bool,
) -> Vec<(ChannelId, ChannelId)> {
    let same = |v: (u32, u32)| accepts(v, p, complete) == Some(true);
    let mut need = Vec::new();
    let mut mine = me.fixed.iter().peekable();
    for (j, &o) in outs.iter().enumerate() {
        let decided = mine.next_if(|e| e.0 == j).map(|e| e.1);
        match (g.state[j], decided) {
            (Some(a), None) if same(a) => need.extend(me.from.map(|c| (c, o))),
            (None, Some(b)) if same(b) => need.extend(
                g.members
                    .iter()
                    .filter_map(|&x| members[x].from)
                    .map(|c| (c, o)),
            ),
            _ => {}
        }
    }
    need
}

#[cfg(test)]
mod tests;
