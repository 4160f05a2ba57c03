//! The topology stage: re-exports of the generators crate plus the summary
//! that `tagger topo` prints.

use rayon::prelude::*;
use std::collections::BTreeMap;
use std::fmt;
pub use tagger_generators::*;

/// Largest hop distance between two endpoints, or `None` when some pair is
/// disconnected. One BFS per endpoint, in parallel.
///
/// Complexity: O(E * (V + L)).
pub fn endpoint_diameter(topo: &Topology) -> Option<u32> {
    let eps = topo.endpoints();
    eps.par_iter()
        .map_init(
            || (Vec::new(), Vec::new()),
            |(dist, queue), &s| {
                topo.bfs(s, dist, queue);
                eps.iter().map(|&d| dist[d as usize]).max().unwrap_or(0)
            },
        )
        .max()
        .and_then(|d| (d != u32::MAX).then_some(d))
}

/// What `tagger topo` prints: counts by kind and level, degrees, diameter.
#[derive(Clone, Debug)]
pub struct Summary {
    pub name: String,
    pub family: &'static str,
    /// (kind, level) -> count, in a stable order.
    pub by_kind_level: BTreeMap<(NodeKind, Option<u32>), usize>,
    pub switches: usize,
    pub servers: usize,
    pub links: usize,
    pub hosts: u64,
    pub endpoints: usize,
    pub min_degree: usize,
    pub max_degree: usize,
    pub connected: bool,
    pub diameter: Option<u32>,
}

impl Summary {
    pub fn of(topo: &Topology) -> Self {
        let mut by = BTreeMap::new();
        for n in topo.nodes() {
            *by.entry((n.kind, n.level)).or_insert(0) += 1;
        }
        let degs = (0..topo.node_count() as u32).map(|v| topo.degree(v));
        Summary {
            name: topo.name().to_string(),
            family: topo.family().name(),
            by_kind_level: by,
            switches: topo.count_kind(NodeKind::Switch),
            servers: topo.count_kind(NodeKind::Server),
            links: topo.link_count(),
            hosts: topo.total_hosts(),
            endpoints: topo.endpoints().len(),
            min_degree: degs.clone().min().unwrap_or(0),
            max_degree: degs.max().unwrap_or(0),
            connected: topo.is_connected(),
            diameter: endpoint_diameter(topo),
        }
    }
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "topology   {} ({})", self.name, self.family)?;
        writeln!(
            f,
            "nodes      {} switches, {} servers",
            self.switches, self.servers
        )?;
        for ((kind, level), n) in &self.by_kind_level {
            let lv = level.map_or("-".to_string(), |l| l.to_string());
            writeln!(f, "  {:<8} level {:<3} {n}", kind.as_str(), lv)?;
        }
        writeln!(f, "links      {}", self.links)?;
        writeln!(f, "hosts      {}", self.hosts)?;
        writeln!(f, "endpoints  {}", self.endpoints)?;
        writeln!(f, "degree     {}..={}", self.min_degree, self.max_degree)?;
        writeln!(
            f,
            "connected  {}",
            if self.connected { "yes" } else { "NO" }
        )?;
        match self.diameter {
            Some(d) => write!(f, "diameter   {d} links between endpoints"),
            None if self.endpoints < 2 => write!(f, "diameter   - (fewer than 2 endpoints)"),
            None => write!(f, "diameter   infinite (endpoints disconnected)"),
        }
    }
}
