//! Plans in *order form*: one channel order per priority. Key `(c1, t, c2)`
//! keeps tag `t` when `c1` comes before `c2` in priority `t`'s order, and
//! moves to `t + 1` otherwise.
//!
//! Such a plan is rule-consistent (the decision depends on the key alone)
//! and deadlock-free by construction (priority `t`'s dependencies all point
//! forward in its order). Nothing is lost by the form: a topological order
//! of each priority graph of any valid plan gives an order plan whose tag,
//! along every path, never exceeds the original's (induction over hops; see
//! `docs/priorities.md`). So the question "does a P-priority plan exist" is
//! a search over P orders, and that is what `search` and `exact` do.

use super::Key;
use super::engine::{self, Decider, Walk};
use crate::budget::Budget;
use crate::elp::ElpSet;
use crate::error::Result;
use tagger_generators::{ChannelId, NodeId, Topology};

/// One position per channel for each priority. Positions may tie; a key
/// whose channels tie moves up a priority, so ties never create an edge.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OrderPlan {
    /// `pos[t - 1][c]`: channel `c`'s position in priority `t`'s order.
    pub pos: Vec<Vec<u64>>,
}

impl OrderPlan {
    /// The next tag of key `(c1, t, c2)`. Tags past the last order use the
    /// last order, so a plan of P orders still tags every path; a path that
    /// needs more than P shows as a tag above P.
    #[inline]
    pub fn next_tag(&self, c1: ChannelId, t: u32, c2: ChannelId) -> u32 {
        let o = &self.pos[(t as usize).min(self.pos.len()) - 1];
        if o[c1 as usize] < o[c2 as usize] {
            t
        } else {
            t + 1
        }
    }

    /// Tags `elp` with this plan: the walk every algorithm shares, deciding
    /// each key where it meets it (in parallel).
    ///
    /// # Errors
    /// [`crate::Error::MemoryBudget`] when the walk outgrows `budget`.
    pub fn walk(&self, topo: &Topology, elp: &ElpSet, budget: &Budget) -> Result<Walk> {
        engine::walk(
            topo,
            elp,
            None,
            Decider::Independent(&|c1, t, c2| Ok(self.next_tag(c1, t, c2))),
            budget,
        )
    }

    /// The order plan of an existing plan: priority `t`'s order is a
    /// topological order of its same-priority dependencies (Kahn's
    /// algorithm, smallest channel id first among the ready ones), for
    /// every priority of `keys`. Along every path its tags never exceed the
    /// plan's.
    pub fn from_keys(channels: usize, keys: &[Key], priorities: u32) -> Self {
        let pos = (1..=priorities.max(1))
            .map(|p| {
                let edges: Vec<(ChannelId, ChannelId)> = keys
                    .iter()
                    .filter(|k| k.priority == p && k.next_priority == p)
                    .filter_map(|k| Some((k.in_channel?, k.out_channel)))
                    .collect();
                topological_positions(channels, edges)
            })
            .collect();
        OrderPlan { pos }
    }

    /// The order plan of per-priority edge sets (each acyclic): priority
    /// `t`'s order is a topological order of `edges[t - 1]` that follows
    /// `near`'s order `t` wherever the edges leave a choice (so paths the
    /// edges do not speak for keep the tags `near` gave them, mostly).
    pub fn from_edges(
        channels: usize,
        edges: Vec<Vec<(ChannelId, ChannelId)>>,
        near: &OrderPlan,
    ) -> Self {
        OrderPlan {
            pos: edges
                .into_iter()
                .enumerate()
                .map(|(t, e)| {
                    let o = &near.pos[t.min(near.pos.len() - 1)];
                    positions(
                        channels,
                        super::topological_order_by(channels, &e, |v| o[v as usize]),
                    )
                })
                .collect(),
        }
    }

    /// Up*/down* for every priority: with switches ranked by `rank`, a
    /// channel that climbs (to a higher rank) comes before every channel
    /// that descends, climbing channels by rising rank and descending ones
    /// by falling rank. A path keeps its priority while it goes up, then
    /// down; each valley (down, then up) costs one priority. `levels` = the
    /// orders given (all the same).
    pub fn mountain(topo: &Topology, rank: &[u64], levels: usize) -> Self {
        let n = rank.iter().copied().max().unwrap_or(0) + 1;
        let order: Vec<u64> = (0..topo.channel_count() as ChannelId)
            .map(|c| {
                let (u, v) = (topo.channel_src(c), topo.channel_dst(c));
                let (ru, rv) = (rank[u as usize], rank[v as usize]);
                if rv > ru { ru } else { 2 * n - ru }
            })
            .collect();
        OrderPlan {
            pos: vec![order; levels.max(1)],
        }
    }

    /// Alternating runs: odd priorities order channels by the rank of the
    /// switch they enter (a path keeps them while ranks rise), even ones by
    /// minus the rank of the switch they leave (kept while ranks fall). Any
    /// path of at most 3 links fits in 2 priorities (its two inner switches
    /// either rise or fall), whatever the ranking.
    pub fn alternating(topo: &Topology, rank: &[u64], levels: usize) -> Self {
        let n = rank.iter().copied().max().unwrap_or(0) + 1;
        let rising: Vec<u64> = (0..topo.channel_count() as ChannelId)
            .map(|c| rank[topo.channel_dst(c) as usize])
            .collect();
        let falling: Vec<u64> = (0..topo.channel_count() as ChannelId)
            .map(|c| n - rank[topo.channel_src(c) as usize])
            .collect();
        OrderPlan {
            pos: (0..levels.max(1))
                .map(|i| {
                    if i % 2 == 0 {
                        rising.clone()
                    } else {
                        falling.clone()
                    }
                })
                .collect(),
        }
    }

    /// Keeps the first `p` orders.
    pub fn truncated(&self, p: usize) -> Self {
        OrderPlan {
            pos: self.pos[..p.min(self.pos.len()).max(1)].to_vec(),
        }
    }
}

/// Positions in a topological order of `edges` over `channels` vertices
/// (see [`super::topological_order`]); vertices on a cycle (none, for a
/// valid plan) go last, by id.
fn topological_positions(channels: usize, edges: Vec<(ChannelId, ChannelId)>) -> Vec<u64> {
    positions(channels, super::topological_order(channels, &edges))
}

/// Positions of a (partial) order of `0..channels`; vertices it leaves out
/// go last, by id.
fn positions(channels: usize, order: Vec<u32>) -> Vec<u64> {
    let mut pos = vec![u64::MAX; channels];
    for (i, &v) in order.iter().enumerate() {
        pos[v as usize] = i as u64;
    }
    let left_out = pos.iter_mut().filter(|p| **p == u64::MAX);
    for (next, p) in (order.len() as u64..).zip(left_out) {
        *p = next;
    }
    pos
}

/// Switch rankings the constructions start from, each a strict order of
/// the nodes (`rank[v]` distinct, in `0..n`), with a name. Deterministic.
///
/// - `levels`, where the topology has levels: by level, then id (on a
///   Clos, up*/down* by level is the bounce tagging);
/// - `central`: by closeness (the sum of BFS distances, smaller is higher),
///   then id, from every node when the graph is small, else from 64 nodes
///   spread over the ids;
/// - `id`: node ids.
pub fn rankings(topo: &Topology) -> Vec<(String, Vec<u64>)> {
    let n = topo.node_count();
    let strict = |key: &dyn Fn(NodeId) -> u64| -> Vec<u64> {
        let mut ids: Vec<NodeId> = (0..n as NodeId).collect();
        ids.sort_by_key(|&v| (key(v), v));
        let mut rank = vec![0u64; n];
        for (r, v) in ids.into_iter().enumerate() {
            rank[v as usize] = r as u64;
        }
        rank
    };
    let mut out = Vec::new();
    if topo.has_levels() {
        out.push((
            "levels".to_string(),
            strict(&|v| topo.level(v).unwrap_or(0) as u64),
        ));
    }
    let sources: Vec<NodeId> = if (n as u64) * (topo.channel_count() as u64) <= 200_000_000 {
        (0..n as NodeId).collect()
    } else {
        (0..64).map(|i| (i * n / 64) as NodeId).collect()
    };
    let mut total = vec![0u64; n];
    {
        use rayon::prelude::*;
        let dists: Vec<Vec<u32>> = sources.par_iter().map(|&s| bfs(topo, s)).collect();
        for d in dists {
            for (t, x) in total.iter_mut().zip(d) {
                *t += x as u64;
            }
        }
    }
    let far = total.iter().copied().max().unwrap_or(0);
    out.push(("central".to_string(), strict(&|v| far - total[v as usize])));
    out.push(("id".to_string(), (0..n as u64).collect()));
    out
}

/// Hops from `s` to every node ([`Topology::bfs`]).
fn bfs(topo: &Topology, s: NodeId) -> Vec<u32> {
    let (mut dist, mut queue) = (Vec::new(), Vec::new());
    topo.bfs(s, &mut dist, &mut queue);
    // Unreachable nodes count as one step past the farthest.
    let far = dist
        .iter()
        .filter(|&&d| d != u32::MAX)
        .max()
        .copied()
        .unwrap_or(0)
        + 1;
    dist.iter()
        .map(|&d| if d == u32::MAX { far } else { d })
        .collect()
}
