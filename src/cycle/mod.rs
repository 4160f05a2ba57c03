//! Incremental cycle detection: "add edge `a -> b` to this graph unless it
//! closes a cycle", asked millions of times by greedy tagging on graphs that
//! only grow. Four backends give identical answers (tested):
//!
//! * [`OrderedDag`] (`ordered`, default): two-way ordered search over an
//!   order-maintenance list; moves only the vertices whose order must
//!   change.
//! * [`PearceKelly`] (`pk`; `bitset` is its old name and still accepted):
//!   Pearce-Kelly with a bidirectional search, search stamps and reused
//!   queues (no per-query allocation or clearing).
//! * [`PetgraphDag`] (`petgraph`): `petgraph::acyclic::Acyclic`, the baseline.
//! * [`NaiveDag`] (`naive`): a full DFS per insertion, the oracle.

mod arena;
mod naive;
mod petgraph_dag;
mod pk;
mod radix_heap;
mod topo_order;
mod two_way;

pub use naive::NaiveDag;
pub use petgraph_dag::PetgraphDag;
pub use pk::PearceKelly;
pub(crate) use topo_order::{
    find_cycle, has_cycle, peel_leaves_some, topological_order, topological_order_by,
};
pub use two_way::OrderedDag;

use std::fmt;
use std::str::FromStr;

/// A directed acyclic graph on vertices `0..n` that refuses cycle-closing
/// edges.
pub trait IncrementalDag: Send {
    /// An empty graph on vertices `0..n`.
    fn with_vertices(n: usize) -> Self
    where
        Self: Sized;
    /// Adds `a -> b` and returns true, or returns false (graph unchanged)
    /// when the edge would close a cycle. Adding an existing edge is a no-op
    /// that returns true.
    fn try_add_edge(&mut self, a: u32, b: u32) -> bool;
    /// [`IncrementalDag::try_add_edge`] where the check may give up: past
    /// about `work` arcs scanned it returns false, graph unchanged, as for
    /// a cycle. For callers to whom a refusal is safe (a heuristic choosing
    /// among valid answers), so that an adversarial graph (a long chain
    /// walked once per insertion) costs O(work) per edge. The default
    /// checks in full.
    fn try_add_edge_within(&mut self, a: u32, b: u32, _work: usize) -> bool {
        self.try_add_edge(a, b)
    }
    /// [`IncrementalDag::try_add_edge`] of each edge in turn; the answers in
    /// the same order. A backend may decide some of them in parallel, as
    /// long as every answer is the one the edges in turn would get.
    fn try_add_edges(&mut self, edges: &[(u32, u32)]) -> Vec<bool> {
        edges
            .iter()
            .map(|&(a, b)| self.try_add_edge(a, b))
            .collect()
    }
    /// Whether `a -> b` is in the graph.
    fn has_edge(&self, a: u32, b: u32) -> bool;
    /// Removes `a -> b` if present (an acyclic graph stays acyclic).
    fn remove_edge(&mut self, a: u32, b: u32);
    /// Edges in the graph.
    fn edge_count(&self) -> usize;
    /// Adds a vertex without edges and returns its id (the next after the
    /// last).
    fn add_vertex(&mut self) -> u32;

    /// A likely topological order of the final graph, as a rank per vertex
    /// (ties by id), given before the first edge. Affects speed only, never
    /// an answer; the default ignores it.
    fn hint_order(&mut self, _rank: &[u32]) {}

    /// The graph of `edges` on vertices `0..n`, laid out along their
    /// topological order with the smallest ready id first
    /// (Kahn's algorithm, given to [`IncrementalDag::hint_order`]),
    /// then each edge added in turn; `None` when they have a cycle. A
    /// backend may build it some faster way, as long as the graph it gives
    /// answers every later insertion as this one would.
    fn from_acyclic(n: usize, edges: &[(u32, u32)]) -> Option<Self>
    where
        Self: Sized,
    {
        from_acyclic_in_turn(n, edges)
    }

    /// Heap bytes held, for memory budgets (0 where a backend does not
    /// count them: the baselines).
    fn heap_bytes(&self) -> u64 {
        0
    }
}

/// [`IncrementalDag::from_acyclic`]'s default: the order as a hint, then
/// each edge in turn.
fn from_acyclic_in_turn<D: IncrementalDag>(n: usize, edges: &[(u32, u32)]) -> Option<D> {
    let rank = rank_of(&topological_order(n, edges), n)?;
    let mut d = D::with_vertices(n);
    d.hint_order(&rank);
    edges
        .iter()
        .all(|&(a, b)| d.try_add_edge(a, b))
        .then_some(d)
}

/// Each vertex's place in `order`, a topological order of vertices
/// `0..n`; `None` when it leaves some out (they lie on or behind a cycle).
fn rank_of(order: &[u32], n: usize) -> Option<Vec<u32>> {
    if order.len() < n {
        return None;
    }
    let mut rank = vec![0u32; n];
    for (i, &v) in order.iter().enumerate() {
        rank[v as usize] = i as u32;
    }
    Some(rank)
}

/// Replays recorded `(priority, from, to)` insertions into fresh graphs of
/// backend `D` over `n` vertices; returns how many were accepted.
pub fn replay<D: IncrementalDag>(n: usize, seq: &[(u32, u32, u32)]) -> usize {
    let mut dags: Vec<D> = Vec::new();
    let mut accepted = 0;
    for &(p, a, b) in seq {
        while dags.len() < p as usize {
            dags.push(D::with_vertices(n));
        }
        accepted += usize::from(dags[p as usize - 1].try_add_edge(a, b));
    }
    accepted
}

/// Which backend to use (`--cycle`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum CycleBackend {
    #[default]
    /// Two-way search over a maintained topological order (the default).
    Ordered,
    /// Pearce-Kelly dynamic topological order over bitsets (alias `bitset`).
    Pk,
    /// petgraph's `Acyclic` wrapper (the baseline).
    Petgraph,
    /// A DFS from the edge's head on every insertion (the oracle).
    Naive,
}

impl CycleBackend {
    /// Every backend, the default first.
    pub const ALL: [CycleBackend; 4] = [
        CycleBackend::Ordered,
        CycleBackend::Pk,
        CycleBackend::Petgraph,
        CycleBackend::Naive,
    ];
    /// The backend's name as `--cycle` takes it.
    pub fn as_str(self) -> &'static str {
        match self {
            CycleBackend::Ordered => "ordered",
            CycleBackend::Pk => "pk",
            CycleBackend::Petgraph => "petgraph",
            CycleBackend::Naive => "naive",
        }
    }
}

impl fmt::Display for CycleBackend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for CycleBackend {
    type Err = crate::Error;
    fn from_str(s: &str) -> Result<Self, crate::Error> {
        match s {
            "ordered" => Ok(CycleBackend::Ordered),
            // `bitset` named the Pearce-Kelly backend before `ordered` came.
            "pk" | "bitset" => Ok(CycleBackend::Pk),
            "petgraph" => Ok(CycleBackend::Petgraph),
            "naive" => Ok(CycleBackend::Naive),
            _ => Err(crate::Error::Choice {
                what: "cycle backend",
                value: s.to_string(),
                expected: "ordered, pk, petgraph or naive",
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Inserts `edges` in order; every third accepted edge is removed again
    /// right away, so removal is exercised against the oracle too.
    fn run<D: IncrementalDag>(n: usize, edges: &[(u32, u32)], rank: &[u32]) -> Vec<bool> {
        let mut d = D::with_vertices(n);
        d.hint_order(&rank[..n.min(rank.len())]);
        let mut accepted = 0;
        edges
            .iter()
            .map(|&(a, b)| {
                let fresh = !d.has_edge(a, b);
                let ok = d.try_add_edge(a, b);
                if ok && fresh {
                    accepted += 1;
                    if accepted % 3 == 0 {
                        d.remove_edge(a, b);
                        assert!(!d.has_edge(a, b));
                    }
                }
                ok
            })
            .collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        #[test]
        fn backends_agree(
            n in 2usize..30,
            raw in proptest::collection::vec((0u32..30, 0u32..30), 0..150),
            rank in proptest::collection::vec(0u32..8, 30),
        ) {
            let edges: Vec<(u32, u32)> = raw.into_iter().map(|(a, b)| (a % n as u32, b % n as u32)).collect();
            let oracle = run::<NaiveDag>(n, &edges, &rank);
            prop_assert_eq!(&run::<OrderedDag>(n, &edges, &rank), &oracle);
            prop_assert_eq!(&run::<PearceKelly>(n, &edges, &rank), &oracle);
            prop_assert_eq!(&run::<PetgraphDag>(n, &edges, &rank), &oracle);
            // An order hint changes speed only, never an answer.
            prop_assert_eq!(&run::<OrderedDag>(n, &edges, &[]), &oracle);
            prop_assert_eq!(&run::<PearceKelly>(n, &edges, &[]), &oracle);
        }
    }

    /// Lists grow through several blocks and shrink back to empty (where a
    /// block is left for a new one) without losing or inventing an edge.
    #[test]
    fn lists_grow_shrink_and_regrow() {
        let mut d = PearceKelly::with_vertices(40);
        let mut o = NaiveDag::with_vertices(40);
        let mut script: Vec<(bool, u32)> = (1..20).map(|b| (true, b)).collect();
        script.extend((1..20).rev().map(|b| (false, b)));
        script.extend((1..40).step_by(3).map(|b| (true, b)));
        script.extend([(false, 4), (false, 7), (true, 5), (true, 4), (true, 2)]);
        for (add, b) in script {
            if add {
                assert_eq!(d.try_add_edge(0, b), o.try_add_edge(0, b));
                assert_eq!(d.try_add_edge(b, 0), o.try_add_edge(b, 0));
            } else {
                d.remove_edge(0, b);
                o.remove_edge(0, b);
            }
            for x in 0..40 {
                assert_eq!(d.has_edge(0, x), o.has_edge(0, x), "edge 0 -> {x}");
                assert_eq!(d.has_edge(x, 0), o.has_edge(x, 0), "edge {x} -> 0");
            }
            assert_eq!(d.edge_count(), o.edge_count());
        }
    }

    /// The counted backends report their vertex tables from the start and
    /// grow with their edges (the budget charges greedy's graphs by it).
    #[test]
    fn heap_bytes_grow_with_edges() {
        fn check<D: IncrementalDag>() {
            let mut d = D::with_vertices(1000);
            let empty = d.heap_bytes();
            assert!(empty >= 1000 * 8);
            for v in 0..999 {
                assert!(d.try_add_edge(v, v + 1));
                assert!(d.try_add_edge(v / 2, v + 1));
            }
            assert!(d.heap_bytes() >= empty + 2 * 4 * d.edge_count() as u64);
        }
        check::<OrderedDag>();
        check::<PearceKelly>();
    }

    #[test]
    fn backend_names() {
        assert_eq!(CycleBackend::default(), CycleBackend::Ordered);
        for b in CycleBackend::ALL {
            assert_eq!(b.as_str().parse::<CycleBackend>().unwrap(), b);
        }
        // Specs written before `ordered` existed keep their meaning.
        assert_eq!("bitset".parse::<CycleBackend>().unwrap(), CycleBackend::Pk);
        let e = "fast".parse::<CycleBackend>().unwrap_err();
        assert!(
            matches!(&e, crate::Error::Choice { what: "cycle backend", value, .. } if value == "fast"),
            "{e}"
        );
        assert!(e.to_string().contains("ordered, pk"), "{e}");
    }

    #[test]
    fn basic_cycle() {
        let mut d = PearceKelly::with_vertices(4);
        assert!(d.try_add_edge(0, 1));
        assert!(d.try_add_edge(1, 2));
        assert!(d.try_add_edge(2, 3));
        assert!(!d.try_add_edge(3, 0));
        assert!(!d.try_add_edge(2, 2));
        assert!(d.try_add_edge(0, 3));
        assert!(d.try_add_edge(0, 3));
        assert_eq!(d.edge_count(), 4);
    }
}
