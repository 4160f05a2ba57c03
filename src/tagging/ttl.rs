//! `greedy-ttl`: the Tagger paper's node-level greedy (Algorithm 2) as
//! written, realised with rules that match the hop count (TTL).

use super::{Scheme, Tagging, build, engine};
use crate::cycle::{CycleBackend, IncrementalDag};
use crate::elp::ElpSet;
use crate::error::Result;
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use tagger_generators::{ChannelId, Topology};

/// Merges the brute-force tagged graph's nodes `(channel, hop)`, hop by hop,
/// into a current level `L`: a node joins `L` when the edges from its
/// predecessors already at `L` keep level `L`'s channel graph acyclic, else it
/// goes to `L + 1` (its edges are rolled back); after a hop in which any node
/// went up, `L` rises. Within a hop, nodes are taken in channel order.
///
/// Several hops of one channel can share a level, so the priority is a
/// function of (ingress port, hop count), not of a rewritable tag: the rules
/// match the TTL. `dscp_conflicts` counts the keys that would clash if the
/// levels were used as DSCP tags (the drafts' flaw, docs/model.md).
///
/// Reference: Hu et al., "Tagger: Practical PFC Deadlock Prevention in Data
/// Center Networks", CoNEXT 2017, Algorithm 2.
///
/// Complexity: one brute-force walk plus one incremental cycle check per
/// tagged-graph edge.
pub fn greedy_ttl<D: IncrementalDag>(
    topo: &Topology,
    elp: &ElpSet,
    cycle: CycleBackend,
    budget: &crate::budget::Budget,
) -> Result<Tagging> {
    let walk = super::tagged_graph(topo, elp, budget)?;
    let mut preds: HashMap<(ChannelId, u32), Vec<ChannelId>> = HashMap::default();
    for ((c1, _, c2), t2) in walk.keys(topo) {
        if c1 != engine::HOST {
            preds.entry((c2, t2)).or_default().push(c1);
        }
    }
    let mut nodes: Vec<(u32, ChannelId)> = walk.states.iter().map(|&(c, h)| (h, c)).collect();
    nodes.sort_unstable();
    let n = topo.channel_count();
    let mut dags: Vec<D> = vec![D::with_vertices(n)];
    let mut level = 1u32;
    let mut prio: HashMap<(ChannelId, u32), u32> = HashMap::default();
    let (mut hop, mut bumped) = (1u32, false);
    let mut added = Vec::new();
    for (h, c) in nodes {
        if h != hop {
            if bumped {
                level += 1;
                dags.push(D::with_vertices(n));
            }
            hop = h;
            bumped = false;
        }
        let mut ps: Vec<ChannelId> = preds
            .get(&(c, h))
            .map(|v| {
                v.iter()
                    .copied()
                    .filter(|&p| prio.get(&(p, h - 1)) == Some(&level))
                    .collect()
            })
            .unwrap_or_default();
        ps.sort_unstable();
        ps.dedup();
        let dag = &mut dags[level as usize - 1];
        added.clear();
        let mut fits = true;
        for p in ps {
            if dag.has_edge(p, c) {
                continue;
            }
            if dag.try_add_edge(p, c) {
                added.push(p);
            } else {
                fits = false;
                break;
            }
        }
        if fits {
            prio.insert((c, h), level);
        } else {
            for &p in &added {
                dag.remove_edge(p, c);
            }
            prio.insert((c, h), level + 1);
            bumped = true;
        }
    }
    // The finding: keys that clash when levels are used as rewritten tags.
    let mut as_dscp: HashMap<(ChannelId, u32, ChannelId), u32> = HashMap::default();
    let mut clashing: HashSet<(ChannelId, u32, ChannelId)> = HashSet::default();
    for ((c1, t, c2), t2) in walk.keys(topo) {
        if c1 == engine::HOST {
            continue;
        }
        let key = (c1, prio[&(c1, t)], c2);
        let next = prio[&(c2, t2)];
        if *as_dscp.entry(key).or_insert(next) != next {
            clashing.insert(key);
        }
    }
    let conflicts = clashing.len() as u64;
    build(
        topo,
        super::Algo::GreedyTtl,
        cycle,
        Scheme::Ttl,
        walk,
        |c, t| prio[&(c, t)],
        Some(conflicts),
        budget,
    )
}

/// `greedy-ttl` on the chosen cycle detection backend.
///
/// # Errors
/// As [`super::tag_in`].
pub(super) fn plan(cx: &super::Context<'_>) -> Result<super::Tagging> {
    use crate::cycle::{NaiveDag, OrderedDag, PearceKelly, PetgraphDag};
    let (topo, elp, cycle, budget) = (cx.topo, cx.elp, cx.cycle, cx.budget);
    match cycle {
        CycleBackend::Ordered => greedy_ttl::<OrderedDag>(topo, elp, cycle, budget),
        CycleBackend::Pk => greedy_ttl::<PearceKelly>(topo, elp, cycle, budget),
        CycleBackend::Petgraph => greedy_ttl::<PetgraphDag>(topo, elp, cycle, budget),
        CycleBackend::Naive => greedy_ttl::<NaiveDag>(topo, elp, cycle, budget),
    }
}
