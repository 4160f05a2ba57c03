//! Check (d): per priority, the channel dependency graph is acyclic.

use super::Violation;
use rayon::prelude::*;
use rustc_hash::FxHashMap as HashMap;
use tagger_generators::{ChannelId, Topology};

/// Check (d) on same-priority dependencies `(priority, from, to)`, in any
/// order and with repeats: the distinct dependencies, and the first
/// priority's cycle if any priority has one.
///
/// Each priority's graph is counted into adjacency lists and peeled
/// ([`distinct_acyclic`]); only a priority with a cycle is sorted, for the
/// cycle reported. Sorting every dependency first (20M on fat-tree k=64
/// `kbounce:2`) was most of this check's time.
///
/// Complexity: O(D + C) for D dependencies over C channels, plus a sort of
/// the first cyclic priority's.
pub(super) fn priority_cycles(
    topo: &Topology,
    mut same: Vec<(u32, ChannelId, ChannelId)>,
) -> (u64, Option<Violation>) {
    let n = topo.channel_count();
    // By priority alone, in place (a handful of distinct keys).
    same.par_sort_unstable_by_key(|d| d.0);
    let (mut edges, mut first) = (0, None);
    for graph in same.chunk_by(|x, y| x.0 == y.0) {
        let p = graph[0].0;
        let (distinct, acyclic) = distinct_acyclic(n, graph);
        edges += distinct;
        if first.is_some() || acyclic {
            continue;
        }
        let mut list: Vec<(ChannelId, ChannelId)> = graph.iter().map(|d| (d.1, d.2)).collect();
        list.par_sort_unstable();
        list.dedup();
        if let Some(cycle) = find_cycle(n, &list) {
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

/// The number of distinct edges `(_, from, to)` of `edges` (repeats
/// allowed) over vertices `0..n`, and whether they are acyclic: adjacency lists by counting, each
/// list sorted and deduplicated on its own (in parallel), then Kahn's
/// peel.
fn distinct_acyclic(n: usize, edges: &[(u32, ChannelId, ChannelId)]) -> (u64, bool) {
    let mut off = vec![0usize; n + 1];
    for &(_, a, _) in edges {
        off[a as usize + 1] += 1;
    }
    for i in 0..n {
        off[i + 1] += off[i];
    }
    let mut heads = vec![0 as ChannelId; edges.len()];
    let mut fill = off.clone();
    for &(_, a, b) in edges {
        heads[fill[a as usize]] = b;
        fill[a as usize] += 1;
    }
    let mut lists: Vec<&mut [ChannelId]> = Vec::with_capacity(n);
    let mut rest = heads.as_mut_slice();
    for v in 0..n {
        let (list, tail) = rest.split_at_mut(off[v + 1] - off[v]);
        lists.push(list);
        rest = tail;
    }
    // Per vertex, its distinct out-neighbours first.
    let len: Vec<usize> = lists
        .into_par_iter()
        .map(|list| {
            list.sort_unstable();
            let mut k = 0;
            for i in 0..list.len() {
                if i == 0 || list[i] != list[k - 1] {
                    list[k] = list[i];
                    k += 1;
                }
            }
            k
        })
        .collect();
    let mut indeg = vec![0u32; n];
    for v in 0..n {
        for &w in &heads[off[v]..off[v] + len[v]] {
            indeg[w as usize] += 1;
        }
    }
    let mut stack: Vec<u32> = (0..n as u32).filter(|&v| indeg[v as usize] == 0).collect();
    let mut removed = 0;
    while let Some(v) = stack.pop() {
        removed += 1;
        for &w in &heads[off[v as usize]..off[v as usize] + len[v as usize]] {
            indeg[w as usize] -= 1;
            if indeg[w as usize] == 0 {
                stack.push(w);
            }
        }
    }
    (len.iter().map(|&l| l as u64).sum(), removed == n)
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        /// The counted peel agrees with the sorted, deduplicated edge list
        /// and the cycle search the report uses.
        #[test]
        fn distinct_acyclic_agrees_with_the_sorted_list(
            raw in proptest::collection::vec((0u32..12, 0u32..12), 0..50),
        ) {
            let mut list = raw.clone();
            list.sort_unstable();
            list.dedup();
            let tagged: Vec<(u32, u32, u32)> = raw.iter().map(|&(a, b)| (1, a, b)).collect();
            let (distinct, acyclic) = distinct_acyclic(12, &tagged);
            prop_assert_eq!(distinct, list.len() as u64);
            prop_assert_eq!(acyclic, find_cycle(12, &list).is_none());
        }
    }
}
