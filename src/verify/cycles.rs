//! Check (d): per priority, the channel dependency graph is acyclic.

use super::Violation;
use crate::rules::Entry;
use rayon::prelude::*;
use rustc_hash::FxHashMap as HashMap;
use tagger_generators::{ChannelId, Topology};

/// Same-priority dependency of an entry.
type Dep = (ChannelId, ChannelId);

/// The same-priority dependencies `(from, to)` of the well-formed entries
/// `i` of `entries` with `used(i)`, per priority (rising, those with any),
/// in entry order. Bucketed by priority in parallel
/// ([`crate::bucket::bucket`]) where the priorities span under 2^16
/// values, as any plan's do; sorted by priority otherwise.
pub(super) fn same_by_priority(
    topo: &Topology,
    entries: &[Entry],
    used: impl Fn(usize) -> bool + Sync,
) -> Vec<(u32, Vec<Dep>)> {
    let dep = |i: usize| -> Option<(u32, Dep)> {
        let e = &entries[i];
        if e.priority != e.next_priority || !used(i) {
            return None;
        }
        let c = super::entries::check_entry(topo, e).ok()?;
        Some((e.priority, (c.c_in?, c.c_out)))
    };
    let Some((lo, hi)) = entries
        .par_iter()
        .filter(|e| e.priority == e.next_priority)
        .map(|e| (e.priority, e.priority))
        .reduce_with(|a, b| (a.0.min(b.0), a.1.max(b.1)))
    else {
        return Vec::new();
    };
    if hi - lo < 1 << 16 {
        let width = (hi - lo) as usize + 1;
        let chunk = crate::bucket::chunk_for(entries.len());
        return crate::bucket::bucket(entries.len(), width, chunk, |i| {
            dep(i).map(|(p, d)| ((p - lo) as usize, d))
        })
        .into_iter()
        .enumerate()
        .filter(|(_, deps)| !deps.is_empty())
        .map(|(b, deps)| (lo + b as u32, deps))
        .collect();
    }
    let mut all: Vec<(u32, Dep)> = (0..entries.len()).into_par_iter().filter_map(dep).collect();
    all.par_sort_by_key(|d| d.0);
    all.chunk_by(|x, y| x.0 == y.0)
        .map(|g| (g[0].0, g.iter().map(|d| d.1).collect()))
        .collect()
}

/// Check (d) on same-priority dependencies per priority (rising, as
/// [`same_by_priority`] gives them; any order and repeats within one):
/// the distinct dependencies, and the first priority's cycle if any
/// priority has one.
///
/// Each priority's graph is counted into adjacency lists and peeled
/// ([`distinct_acyclic`]), the priorities in parallel; only a priority
/// with a cycle is sorted, for the cycle reported. Sorting every
/// dependency first (20M on fat-tree k=64 `kbounce:2`) was most of this
/// check's time.
///
/// Complexity: O(D + C) for D dependencies over C channels per priority,
/// plus a sort of the first cyclic priority's.
pub(super) fn priority_cycles(
    topo: &Topology,
    graphs: &[(u32, Vec<Dep>)],
) -> (u64, Option<Violation>) {
    let n = topo.channel_count();
    let peeled: Vec<(u64, bool)> = graphs
        .par_iter()
        .map(|(_, graph)| distinct_acyclic(n, graph))
        .collect();
    let (mut edges, mut first) = (0, None);
    for ((p, graph), (distinct, acyclic)) in graphs.iter().zip(peeled) {
        edges += distinct;
        if first.is_some() || acyclic {
            continue;
        }
        let mut list = graph.clone();
        list.par_sort_unstable();
        list.dedup();
        if let Some(cycle) = find_cycle(n, &list) {
            first = Some(Violation::Cycle {
                priority: *p,
                channels: cycle
                    .iter()
                    .map(|&c| (c, topo.channel_src(c), topo.channel_dst(c)))
                    .collect(),
            });
        }
    }
    (edges, first)
}

/// The number of distinct edges `(from, to)` of `edges` (repeats
/// allowed) over vertices `0..n`, and whether they are acyclic: adjacency lists by counting, each
/// list sorted and deduplicated on its own (in parallel), then Kahn's
/// peel.
fn distinct_acyclic(n: usize, edges: &[Dep]) -> (u64, bool) {
    let mut off = vec![0usize; n + 1];
    for &(a, _) in edges {
        off[a as usize + 1] += 1;
    }
    for i in 0..n {
        off[i + 1] += off[i];
    }
    let mut heads = vec![0 as ChannelId; edges.len()];
    let mut fill = off.clone();
    for &(a, b) in edges {
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
            let (distinct, acyclic) = distinct_acyclic(12, &raw);
            prop_assert_eq!(distinct, list.len() as u64);
            prop_assert_eq!(acyclic, find_cycle(12, &list).is_none());
        }
    }
}
