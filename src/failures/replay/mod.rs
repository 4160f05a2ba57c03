//! What one failure trial does to traffic under installed rules, counted
//! per destination without listing paths.
//!
//! For each destination `t`, two breadth-first searches give the healthy
//! and the degraded distances to `t`. Every route to `t` is then a walk in
//! one of two acyclic graphs: the degraded shortest-path DAG toward `t`
//! (converged routing, and the tail of a deflected packet), and the healthy
//! one (a packet under local reroute before it meets a failure). A packet
//! state is `(channel, tag)`; the installed rules map it, per next channel,
//! to the next state or to nothing (the packet continues lossy). So one
//! backward pass per DAG counts, per state, the routes to `t` and the ones
//! that stay lossless, and one forward pass from every source marks the
//! states, channel transitions and rule entries that traffic uses. Work per
//! trial: O(E * (L + S * d)) for E endpoints, L links, S packet states and
//! degree d, split over the destinations in parallel.
//!

mod compiled;
mod dest;

use crate::bits;
use rayon::prelude::*;
use tagger_generators::{ChannelId, NodeId, Topology};

use super::spec::Routing;
pub use compiled::Compiled;

/// Marks "no state" / "no entry".
const NONE: u32 = u32::MAX;

/// What one trial did, summed over destinations.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    /// Ordered endpoint pairs `(s, t)`, `s != t`.
    pub pairs: u64,
    /// Pairs with no route (an endpoint failed, or no path is left).
    pub pairs_disconnected: u64,
    /// Connected pairs all of whose routes stay lossless.
    pub pairs_lossless: u64,
    /// Routes (link sequences) over all pairs, and those that stay lossless.
    pub paths: u128,
    /// Of those, routes that stay lossless under the installed rules.
    pub lossless_paths: u128,
    /// A count passed `u64::MAX` somewhere (the totals are then lower
    /// bounds).
    pub saturated: bool,
    /// Used hops (`transition` indices) as a bitset: every channel
    /// transition a route takes.
    pub used: Vec<u64>,
    /// Hops where a lossless packet found no rule and went lossy.
    pub fallback: Vec<u64>,
    /// Rule entries a lossless packet used, as a bitset.
    pub entries: Vec<u64>,
}

/// One trial as every destination's replay sees it: the topology, the
/// installed rules, what failed and how traffic is routed.
struct Trial<'a> {
    topo: &'a Topology,
    plan: &'a Compiled,
    dead_links: &'a [bool],
    dead_nodes: &'a [bool],
    routing: Routing,
}

/// Reusable per-destination buffers.
struct Work {
    dist_h: Vec<u32>,
    dist_d: Vec<u32>,
    order_h: Vec<NodeId>,
    order_d: Vec<NodeId>,
    /// Routes from a node to `t` over the degraded DAG.
    p_node: Vec<u64>,
    /// Lossless routes per state over the degraded DAG (tails).
    l_d: Vec<u64>,
    /// Local routing: routes per position and lossless per state from
    /// healthy mode.
    p_h: Vec<u64>,
    l_h: Vec<u64>,
    /// Of those, the routes (and lossless ones) whose length is the
    /// degraded distance: the ones a deflection onto the same channel
    /// would repeat.
    m_h: Vec<u64>,
    ml_h: Vec<u64>,
    /// Forward marks: states reached lossless, and positions reached at
    /// all / lossy, per mode (0 degraded, 1 healthy).
    reach_s: [Vec<bool>; 2],
    used_p: [Vec<bool>; 2],
    lossy_p: [Vec<bool>; 2],
    outs: Vec<ChannelId>,
    defl: Vec<ChannelId>,
    acc: Outcome,
}

/// Counts what trial `dead_links`/`dead_nodes` does to every route under
/// `routing`, with the rules `plan`.
pub fn analyze(
    topo: &Topology,
    plan: &Compiled,
    dead_links: &[bool],
    dead_nodes: &[bool],
    routing: Routing,
) -> Outcome {
    let n = topo.node_count();
    let positions = 2 * topo.link_count() + n;
    let tw = plan.transitions().div_ceil(64) as usize;
    let ew = plan.entries().div_ceil(64);
    let fresh = || Work {
        dist_h: Vec::new(),
        dist_d: Vec::new(),
        order_h: Vec::new(),
        order_d: Vec::new(),
        p_node: vec![0; n],
        l_d: vec![0; plan.states()],
        p_h: vec![0; positions],
        l_h: vec![0; plan.states()],
        m_h: vec![0; positions],
        ml_h: vec![0; plan.states()],
        reach_s: [vec![false; plan.states()], vec![false; plan.states()]],
        used_p: [vec![false; positions], vec![false; positions]],
        lossy_p: [vec![false; positions], vec![false; positions]],
        outs: Vec::new(),
        defl: Vec::new(),
        acc: Outcome {
            used: vec![0; tw],
            fallback: vec![0; tw],
            entries: vec![0; ew],
            ..Default::default()
        },
    };
    let eps = topo.endpoints();
    let trial = Trial {
        topo,
        plan,
        dead_links,
        dead_nodes,
        routing,
    };
    let parts: Vec<Outcome> = (0..eps.len())
        .into_par_iter()
        .fold(fresh, |mut w, i| {
            dest::destination(&trial, eps[i], &mut w);
            w
        })
        .map(|w| w.acc)
        .collect();
    let mut out = Outcome {
        used: vec![0; tw],
        fallback: vec![0; tw],
        entries: vec![0; ew],
        ..Default::default()
    };
    for p in parts {
        out.pairs += p.pairs;
        out.pairs_disconnected += p.pairs_disconnected;
        out.pairs_lossless += p.pairs_lossless;
        out.paths = out.paths.saturating_add(p.paths);
        out.lossless_paths = out.lossless_paths.saturating_add(p.lossless_paths);
        out.saturated |= p.saturated;
        bits::or_words(&mut out.used, &p.used);
        bits::or_words(&mut out.fallback, &p.fallback);
        bits::or_words(&mut out.entries, &p.entries);
    }
    out
}

/// Breadth-first search from `t` over live links (all of them when
/// `dead` is `None`); nothing is reached from a failed `t`.
fn bfs(
    topo: &Topology,
    t: NodeId,
    dead: Option<(&[bool], &[bool])>,
    dist: &mut Vec<u32>,
    order: &mut Vec<NodeId>,
) {
    match dead {
        Some((_, nodes)) if nodes[t as usize] => {
            dist.clear();
            dist.resize(topo.node_count(), u32::MAX);
            order.clear();
        }
        Some((links, _)) => topo.bfs_live(t, |l| !links[l as usize], dist, order),
        None => topo.bfs(t, dist, order),
    }
}

fn add(a: u64, b: u64, sat: &mut bool) -> u64 {
    a.checked_add(b).unwrap_or_else(|| {
        *sat = true;
        u64::MAX
    })
}
