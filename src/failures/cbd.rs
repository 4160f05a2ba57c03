//! Cyclic buffer dependency (CBD) of plain PFC: one lossless priority, so
//! every hop a route takes from one switch buffer into the next is a
//! dependency between the two channels.

use petgraph::algo::tarjan_scc;
use petgraph::graph::{DiGraph, NodeIndex};
use std::collections::VecDeque;

/// Vertices of non-trivial strongly connected components from which the
/// shortest cycle is searched (breadth-first, one search each): enough to
/// find the shortest cycle of the sparse graphs failures leave, bounded on
/// the dense ones (Jellyfish shortest paths) where cycles are everywhere.
pub const CYCLE_SEARCH_STARTS: usize = 256;

/// Whether the dependency graph on `vertices` channels with `edges` has a
/// cycle, and the length (in channels) of the shortest cycle found through
/// up to [`CYCLE_SEARCH_STARTS`] of its cyclic vertices (the lowest ids of
/// each component first, components in order of their lowest vertex).
///
/// Complexity: O(V + E) for the components (Tarjan), plus
/// O(CYCLE_SEARCH_STARTS * (V + E)) at most for the searches.
pub fn shortest_cycle(vertices: usize, edges: &[(u32, u32)]) -> Option<u32> {
    let mut g: DiGraph<(), ()> = DiGraph::with_capacity(vertices, edges.len());
    for _ in 0..vertices {
        g.add_node(());
    }
    let mut self_loop = false;
    for &(a, b) in edges {
        self_loop |= a == b;
        g.add_edge(NodeIndex::new(a as usize), NodeIndex::new(b as usize), ());
    }
    if self_loop {
        return Some(1);
    }
    let mut comp = vec![u32::MAX; vertices];
    let mut cyclic: Vec<Vec<u32>> = tarjan_scc(&g)
        .into_iter()
        .filter(|c| c.len() > 1)
        .map(|c| {
            let mut c: Vec<u32> = c.into_iter().map(|x| x.index() as u32).collect();
            c.sort_unstable();
            c
        })
        .collect();
    if cyclic.is_empty() {
        return None;
    }
    cyclic.sort_unstable();
    for (i, c) in cyclic.iter().enumerate() {
        for &v in c {
            comp[v as usize] = i as u32;
        }
    }
    // Round-robin over components so each gets searched.
    let mut starts = Vec::new();
    let mut depth = 0;
    while starts.len() < CYCLE_SEARCH_STARTS {
        let before = starts.len();
        for c in &cyclic {
            if let Some(&v) = c.get(depth) {
                starts.push(v);
                if starts.len() == CYCLE_SEARCH_STARTS {
                    break;
                }
            }
        }
        if starts.len() == before {
            break;
        }
        depth += 1;
    }
    let mut best = u32::MAX;
    let mut dist = vec![u32::MAX; vertices];
    let mut queue = VecDeque::new();
    let mut touched = Vec::new();
    for s in starts {
        // Shortest cycle through s: BFS inside its component back to s.
        dist[s as usize] = 0;
        touched.push(s);
        queue.push_back(s);
        'bfs: while let Some(v) = queue.pop_front() {
            let dv = dist[v as usize];
            if dv + 1 >= best {
                break;
            }
            for w in g.neighbors(NodeIndex::new(v as usize)) {
                let w = w.index() as u32;
                if w == s {
                    best = best.min(dv + 1);
                    break 'bfs;
                }
                if comp[w as usize] == comp[s as usize] && dist[w as usize] == u32::MAX {
                    dist[w as usize] = dv + 1;
                    touched.push(w);
                    queue.push_back(w);
                }
            }
        }
        queue.clear();
        for v in touched.drain(..) {
            dist[v as usize] = u32::MAX;
        }
    }
    Some(best)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_shortest_cycle() {
        assert_eq!(shortest_cycle(4, &[(0, 1), (1, 2), (2, 3)]), None);
        assert_eq!(shortest_cycle(3, &[(0, 1), (1, 2), (2, 0)]), Some(3));
        // A 5-cycle and a 2-cycle sharing vertex 0.
        let e = [(0, 1), (1, 2), (2, 3), (3, 4), (4, 0), (0, 5), (5, 0)];
        assert_eq!(shortest_cycle(6, &e), Some(2));
        assert_eq!(shortest_cycle(2, &[(1, 1)]), Some(1));
    }
}
