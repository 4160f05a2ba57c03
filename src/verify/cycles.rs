//! Check (d): per priority, the channel dependency graph is acyclic.

use super::Violation;
use rayon::prelude::*;
use rustc_hash::FxHashMap as HashMap;
use std::collections::BTreeMap;
use tagger_generators::{ChannelId, Topology};

/// Check (d) on same-priority dependencies `(priority, from, to)`: the
/// distinct dependencies, and the first priority's cycle if any priority
/// has one.
pub(super) fn priority_cycles(
    topo: &Topology,
    mut same: Vec<(u32, ChannelId, ChannelId)>,
) -> (u64, Option<Violation>) {
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
            first = Some(Violation::Cycle {
                priority: p,
                channels: cycle
                    .iter()
                    .map(|&c| (c, topo.channel_src(c), topo.channel_dst(c)))
                    .collect(),
            });
        }
    }
    (edges, first)
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
