//! `ksp:K[,pairs=N,seed=X]`: the K shortest simple paths per ordered endpoint
//! pair (Yen), as Jellyfish's own routing uses.

use super::explicit::PathList;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use std::collections::BTreeSet;
use tagger_generators::{NodeId, Topology};

/// The K shortest simple paths (node sequences, by hop count) between each
/// ordered pair of distinct endpoints, or between `pairs` distinct pairs
/// sampled uniformly with the ChaCha8 stream of `seed`.
///
/// Yen's algorithm with BFS as the shortest-path routine; neighbours are
/// visited in ascending node order and candidates kept ordered by (length,
/// node sequence), so ties break the same way on every machine and thread
/// count.
///
/// Reference: J. Y. Yen, "Finding the K shortest loopless paths in a
/// network", Management Science 17(11), 1971.
///
/// Complexity: O(P * K * L * (V + E)) for P pairs and paths of L hops.
pub fn ksp(topo: &Topology, k: u32, pairs: Option<u64>, seed: u64) -> PathList {
    let eps = topo.endpoints();
    let e = eps.len() as u64;
    let total = e * (e - 1);
    let chosen: Vec<(NodeId, NodeId)> = match pairs {
        Some(n) if n < total => {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let mut set = BTreeSet::new();
            while (set.len() as u64) < n {
                let i = rng.random_range(0..total);
                set.insert(i);
            }
            set.into_iter().map(|i| pair_at(eps, i)).collect()
        }
        _ => (0..total).map(|i| pair_at(eps, i)).collect(),
    };
    let nbrs: Vec<Vec<NodeId>> = (0..topo.node_count() as u32)
        .map(|v| {
            let mut n: Vec<NodeId> = topo.neighbors(v).collect();
            n.sort_unstable();
            n.dedup();
            n
        })
        .collect();
    let paths: Vec<Vec<NodeId>> = chosen
        .par_iter()
        .flat_map_iter(|&(s, d)| yen(&nbrs, s, d, k as usize))
        .collect();
    PathList::from_paths(paths)
}

/// The `i`-th ordered pair of distinct endpoints.
fn pair_at(eps: &[NodeId], i: u64) -> (NodeId, NodeId) {
    let n = eps.len() as u64 - 1;
    let (s, mut d) = (i / n, i % n);
    if d >= s {
        d += 1;
    }
    (eps[s as usize], eps[d as usize])
}

/// Shortest path from `s` to `d` avoiding `blocked` nodes and `cut` edges.
/// Not [`Topology::bfs`]: Yen's spur search needs the path (parents) and
/// removes nodes and directed edges, which that distance search does not
/// take.
fn bfs(
    nbrs: &[Vec<NodeId>],
    s: NodeId,
    d: NodeId,
    blocked: &[bool],
    cut: &[(NodeId, NodeId)],
) -> Option<Vec<NodeId>> {
    let mut parent = vec![u32::MAX; nbrs.len()];
    parent[s as usize] = s;
    let mut queue = std::collections::VecDeque::from([s]);
    while let Some(v) = queue.pop_front() {
        if v == d {
            let mut path = vec![d];
            let mut x = d;
            while x != s {
                x = parent[x as usize];
                path.push(x);
            }
            path.reverse();
            return Some(path);
        }
        for &w in &nbrs[v as usize] {
            if parent[w as usize] == u32::MAX && !blocked[w as usize] && !cut.contains(&(v, w)) {
                parent[w as usize] = v;
                queue.push_back(w);
            }
        }
    }
    None
}

fn yen(nbrs: &[Vec<NodeId>], s: NodeId, d: NodeId, k: usize) -> Vec<Vec<NodeId>> {
    let mut blocked = vec![false; nbrs.len()];
    let Some(first) = bfs(nbrs, s, d, &blocked, &[]) else {
        return Vec::new();
    };
    let mut a: Vec<Vec<NodeId>> = vec![first];
    let mut b: BTreeSet<(usize, Vec<NodeId>)> = BTreeSet::new();
    while a.len() < k {
        let prev = a.last().unwrap().clone();
        for i in 0..prev.len() - 1 {
            let root = &prev[..=i];
            let cut: Vec<(NodeId, NodeId)> = a
                .iter()
                .filter(|p| p.len() > i + 1 && &p[..=i] == root)
                .map(|p| (p[i], p[i + 1]))
                .collect();
            for &v in &root[..i] {
                blocked[v as usize] = true;
            }
            if let Some(spur) = bfs(nbrs, prev[i], d, &blocked, &cut) {
                let mut total = root[..i].to_vec();
                total.extend(spur);
                if !a.contains(&total) {
                    b.insert((total.len(), total));
                }
            }
            for &v in &root[..i] {
                blocked[v as usize] = false;
            }
        }
        match b.pop_first() {
            Some((_, p)) => a.push(p),
            None => break,
        }
    }
    a
}
