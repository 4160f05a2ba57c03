//! Topological orders and cycle tests of whole graphs (Kahn's algorithm),
//! for the tagging stage's checks and order plans; the incremental
//! detectors are the other files of this module.

use tagger_generators::ChannelId;

/// True when the directed graph `edges` has a cycle: peeling vertices
/// without in-edges (Kahn's algorithm in any order) leaves some behind.
///
/// The plan checks run it on every key of a plan (30M edges on fat-tree
/// k=64 `kbounce:2`), so it builds the adjacency by counting instead of
/// sorting and peels from a stack: O(n + m) for m edges over n vertices,
/// duplicates allowed. [`topological_order`] is its oracle in the tests.
pub(crate) fn has_cycle(edges: Vec<(ChannelId, ChannelId)>) -> bool {
    let n = edges
        .iter()
        .map(|&(a, b)| a.max(b) as usize + 1)
        .max()
        .unwrap_or(0);
    let (start, heads, indeg) = adjacency(n, &edges);
    drop(edges);
    peel_leaves_some(indeg, |v| {
        heads[start[v as usize]..start[v as usize + 1]]
            .iter()
            .copied()
    })
}

/// Kahn's peel in any order: whether removing vertices without in-edges
/// leaves some behind (then the graph has a cycle). `indeg` holds every
/// vertex's in-degree, repeats counted; `heads(v)` lists `v`'s
/// out-neighbours, repeats as counted. Shared by [`has_cycle`] and the
/// plan checks, which read the heads from a plan's keys in place.
///
/// Complexity: O(n + m) for n vertices and m edges.
pub(crate) fn peel_leaves_some<I: IntoIterator<Item = ChannelId>>(
    mut indeg: Vec<u32>,
    heads: impl Fn(u32) -> I,
) -> bool {
    let n = indeg.len();
    let mut ready: Vec<u32> = (0..n as u32).filter(|&v| indeg[v as usize] == 0).collect();
    let mut peeled = 0;
    while let Some(v) = ready.pop() {
        peeled += 1;
        for w in heads(v) {
            indeg[w as usize] -= 1;
            if indeg[w as usize] == 0 {
                ready.push(w);
            }
        }
    }
    peeled < n
}

/// The out-neighbours of every vertex of `edges` over `0..n`, as
/// `heads[start[v]..start[v + 1]]` (duplicates kept, in edge order), and
/// every vertex's in-degree: built by counting, in linear time, where
/// sorting the edges was most of a whole-graph test's time.
fn adjacency(n: usize, edges: &[(ChannelId, ChannelId)]) -> (Vec<usize>, Vec<ChannelId>, Vec<u32>) {
    let mut start = vec![0usize; n + 1];
    let mut indeg = vec![0u32; n];
    for &(a, b) in edges {
        start[a as usize + 1] += 1;
        indeg[b as usize] += 1;
    }
    for i in 0..n {
        start[i + 1] += start[i];
    }
    let mut next = start.clone();
    let mut heads = vec![0 as ChannelId; edges.len()];
    for &(a, b) in edges {
        heads[next[a as usize]] = b;
        next[a as usize] += 1;
    }
    (start, heads, indeg)
}

/// One cycle of `edges` over vertices `0..n`, in edge order, or `None`
/// when they are acyclic. The vertices [`topological_order`] leaves out
/// lie on or behind a cycle, and each has a predecessor among them: walking
/// back from the smallest until a vertex repeats closes one.
///
/// Complexity: O((n + m) log n) for m edges.
pub(crate) fn find_cycle(n: usize, edges: Vec<(ChannelId, ChannelId)>) -> Option<Vec<u32>> {
    let order = topological_order(n, &edges);
    if order.len() == n {
        return None;
    }
    let mut placed = vec![false; n];
    for &x in &order {
        placed[x as usize] = true;
    }
    let mut pred: std::collections::BTreeMap<u32, u32> = Default::default();
    for &(a, b) in &edges {
        if !placed[a as usize] && !placed[b as usize] {
            pred.entry(b).or_insert(a);
        }
    }
    let start = *pred.keys().next().expect("a cycle has edges");
    let mut walk = vec![start];
    let mut seen = std::collections::BTreeSet::from([start]);
    let mut x = start;
    loop {
        x = pred[&x];
        if !seen.insert(x) {
            break;
        }
        walk.push(x);
    }
    let from = walk.iter().position(|&y| y == x).expect("repeated");
    let mut cycle: Vec<u32> = walk[from..].to_vec();
    cycle.reverse();
    Some(cycle)
}

/// Kahn's algorithm over vertices `0..n`: a topological order of `edges`
/// (duplicates allowed), smallest id first among the ready vertices, so the
/// order is deterministic. Vertices on or behind a cycle are left out.
///
/// Complexity: O(m + n log n) for m edges.
pub(crate) fn topological_order(n: usize, edges: &[(ChannelId, ChannelId)]) -> Vec<u32> {
    topological_order_by(n, edges, |_| 0)
}

/// [`topological_order`], taking the ready vertex of smallest `(key, id)`
/// first: with `key` a reference order, the result follows it wherever the
/// edges allow.
pub(crate) fn topological_order_by(
    n: usize,
    edges: &[(ChannelId, ChannelId)],
    key: impl Fn(u32) -> u64,
) -> Vec<u32> {
    // Duplicates count in the in-degrees and are peeled as often, so the
    // order is that of the distinct edges.
    let (start, heads, indeg) = adjacency(n, edges);
    kahn_order(
        indeg,
        |v| {
            heads[start[v as usize]..start[v as usize + 1]]
                .iter()
                .copied()
        },
        key,
    )
}

/// Kahn's peel of the graph on vertices `0..indeg.len()` whose in-degrees
/// are `indeg` and whose successors of `v` are `succ(v)` (each edge once
/// per count in `indeg`), taking the ready vertex of smallest `(key, id)`
/// first. Vertices on or behind a cycle are left out.
///
/// Complexity: O(m + n log n) for m edges over n vertices.
pub(crate) fn kahn_order<I: IntoIterator<Item = u32>>(
    mut indeg: Vec<u32>,
    succ: impl Fn(u32) -> I,
    key: impl Fn(u32) -> u64,
) -> Vec<u32> {
    use std::cmp::Reverse;
    let n = indeg.len();
    let mut ready: std::collections::BinaryHeap<Reverse<(u64, u32)>> = (0..n as u32)
        .filter(|&v| indeg[v as usize] == 0)
        .map(|v| Reverse((key(v), v)))
        .collect();
    let mut order = Vec::with_capacity(n);
    while let Some(Reverse((_, v))) = ready.pop() {
        order.push(v);
        for w in succ(v) {
            indeg[w as usize] -= 1;
            if indeg[w as usize] == 0 {
                ready.push(Reverse((key(w), w)));
            }
        }
    }
    order
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        /// The counting peel agrees with the sorted Kahn order, duplicates,
        /// self-loops and isolated vertices included.
        #[test]
        fn has_cycle_agrees_with_the_topological_order(
            n in 1usize..25,
            raw in proptest::collection::vec((0u32..25, 0u32..25), 0..60),
        ) {
            let edges: Vec<(u32, u32)> =
                raw.into_iter().map(|(a, b)| (a % n as u32, b % n as u32)).collect();
            let m = edges.iter().map(|&(a, b)| a.max(b) as usize + 1).max().unwrap_or(0);
            let oracle = topological_order(m, &edges).len() < m;
            prop_assert_eq!(has_cycle(edges.clone()), oracle);
            prop_assert_eq!(find_cycle(m, edges).is_some(), oracle);
        }
    }

    #[test]
    fn has_cycle_of_small_graphs() {
        assert!(!has_cycle(vec![]));
        assert!(has_cycle(vec![(3, 3)]));
        assert!(!has_cycle(vec![(0, 1), (0, 1), (1, 2), (0, 2)]));
        assert!(has_cycle(vec![(0, 1), (1, 2), (2, 0), (5, 6)]));
    }
}
