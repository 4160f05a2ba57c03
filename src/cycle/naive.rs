//! The test oracle: a full DFS per insertion.

use super::IncrementalDag;

/// Accepts `a -> b` unless `a` is reachable from `b`, found by a plain DFS
/// with a fresh visited array. O(V + E) per insertion; for tests only.
#[derive(Debug)]
pub struct NaiveDag {
    out: Vec<Vec<u32>>,
    edges: usize,
}

impl IncrementalDag for NaiveDag {
    fn with_vertices(n: usize) -> Self {
        NaiveDag {
            out: vec![Vec::new(); n],
            edges: 0,
        }
    }

    fn try_add_edge(&mut self, a: u32, b: u32) -> bool {
        if self.out[a as usize].contains(&b) {
            return true;
        }
        let mut seen = vec![false; self.out.len()];
        let mut stack = vec![b];
        while let Some(v) = stack.pop() {
            if v == a {
                return false;
            }
            if !std::mem::replace(&mut seen[v as usize], true) {
                stack.extend(&self.out[v as usize]);
            }
        }
        self.out[a as usize].push(b);
        self.edges += 1;
        true
    }

    fn has_edge(&self, a: u32, b: u32) -> bool {
        self.out[a as usize].contains(&b)
    }

    fn remove_edge(&mut self, a: u32, b: u32) {
        if let Some(i) = self.out[a as usize].iter().position(|&x| x == b) {
            self.out[a as usize].swap_remove(i);
            self.edges -= 1;
        }
    }

    fn edge_count(&self) -> usize {
        self.edges
    }

    fn add_vertex(&mut self) -> u32 {
        self.out.push(Vec::new());
        (self.out.len() - 1) as u32
    }
}
