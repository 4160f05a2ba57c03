//! The baseline: petgraph's `Acyclic` (Pearce-Kelly over a `DiGraph`).

use super::IncrementalDag;
use petgraph::acyclic::Acyclic;
use petgraph::graph::{DiGraph, NodeIndex};

/// [`IncrementalDag`](super::IncrementalDag) over petgraph's `Acyclic<StableDiGraph>`, the baseline the other backends are measured against.
pub struct PetgraphDag {
    g: Acyclic<DiGraph<(), (), u32>>,
    edges: usize,
}

impl std::fmt::Debug for PetgraphDag {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PetgraphDag({} edges)", self.edges)
    }
}

impl IncrementalDag for PetgraphDag {
    fn with_vertices(n: usize) -> Self {
        let mut graph = DiGraph::<(), (), u32>::with_capacity(n, 0);
        for _ in 0..n {
            graph.add_node(());
        }
        let g = Acyclic::try_from_graph(graph).expect("a graph without edges is acyclic");
        PetgraphDag { g, edges: 0 }
    }

    fn try_add_edge(&mut self, a: u32, b: u32) -> bool {
        let (a, b) = (NodeIndex::new(a as usize), NodeIndex::new(b as usize));
        if self.g.find_edge(a, b).is_some() {
            return true;
        }
        match self.g.try_add_edge(a, b, ()) {
            Ok(_) => {
                self.edges += 1;
                true
            }
            Err(_) => false,
        }
    }

    fn has_edge(&self, a: u32, b: u32) -> bool {
        self.g
            .find_edge(NodeIndex::new(a as usize), NodeIndex::new(b as usize))
            .is_some()
    }

    fn remove_edge(&mut self, a: u32, b: u32) {
        if let Some(e) = self
            .g
            .find_edge(NodeIndex::new(a as usize), NodeIndex::new(b as usize))
        {
            self.g.remove_edge(e);
            self.edges -= 1;
        }
    }

    fn edge_count(&self) -> usize {
        self.edges
    }

    fn add_vertex(&mut self) -> u32 {
        use petgraph::data::Build;
        self.g.add_node(()).index() as u32
    }
}
