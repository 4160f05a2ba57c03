//! The topology stage's figures: the summary `tagger topo` prints, the
//! endpoint diameter and a topology's memory estimate. The topologies
//! themselves are the generators crate's ([`crate::generators`], with
//! [`crate::Topology`] and [`crate::TopologySpec`] at the top).

use rayon::prelude::*;
use std::collections::BTreeMap;
use std::fmt;
use tagger_generators::{NodeId, NodeKind, Topology};

/// Bytes a topology of `nodes` nodes and `channels` channels holds (32 per
/// node and 16 per channel: the node records and the adjacency), for
/// memory budgets; known before a generated family is built.
pub fn estimate_bytes(nodes: u64, channels: u64) -> u64 {
    nodes
        .saturating_mul(32)
        .saturating_add(channels.saturating_mul(16))
}

/// Largest hop distance between two endpoints, or `None` when some pair is
/// disconnected. Bit-parallel BFS: 64 sources at a time, one word per node
/// and level (as the `shortest` ELP builds its DAGs), chunks in parallel.
///
/// Complexity: O(E/64 * D * (V + L)) word operations for E endpoints,
/// diameter D, V nodes and L links; measured on Jellyfish n=20,000 r=16:
/// 0.6 s where one BFS per endpoint took 46 s.
pub fn endpoint_diameter(topo: &Topology) -> Option<u32> {
    let eps = topo.endpoints();
    let n = topo.node_count();
    let mut is_endpoint = vec![false; n];
    for &e in eps {
        is_endpoint[e as usize] = true;
    }
    let chunks: Vec<&[NodeId]> = eps.chunks(64).collect();
    let per_chunk: Vec<Option<u32>> = chunks
        .par_iter()
        .map(|chunk| {
            let full = u64::MAX >> (64 - chunk.len());
            let mut seen = vec![0u64; n];
            let mut frontier = vec![0u64; n];
            for (bit, &s) in chunk.iter().enumerate() {
                seen[s as usize] |= 1 << bit;
                frontier[s as usize] |= 1 << bit;
            }
            let mut next = vec![0u64; n];
            let (mut level, mut far) = (0u32, 0u32);
            // The nodes whose frontier word is set: a level scans every
            // node when many are, and only their neighbours when few are
            // (a long chain has a frontier of two nodes for thousands of
            // levels: scanning all nodes each level made it quadratic).
            let mut active: Vec<NodeId> = chunk.to_vec();
            active.sort_unstable();
            active.dedup();
            let mut touched: Vec<NodeId> = Vec::new();
            loop {
                touched.clear();
                let reach: usize = active.iter().map(|&v| topo.degree(v)).sum();
                if reach > n / 8 {
                    for (w, slot) in next.iter_mut().enumerate() {
                        let mut m = 0u64;
                        for v in topo.neighbors(w as NodeId) {
                            m |= frontier[v as usize];
                        }
                        m &= !seen[w];
                        *slot = m;
                        if m != 0 {
                            touched.push(w as NodeId);
                        }
                    }
                } else {
                    for &v in &active {
                        let f = frontier[v as usize];
                        for w in topo.neighbors(v) {
                            let m = f & !seen[w as usize];
                            if m != 0 {
                                if next[w as usize] == 0 {
                                    touched.push(w);
                                }
                                next[w as usize] |= m;
                            }
                        }
                    }
                }
                if touched.is_empty() {
                    break;
                }
                level += 1;
                for &v in &active {
                    frontier[v as usize] = 0;
                }
                for &w in &touched {
                    let m = std::mem::take(&mut next[w as usize]);
                    seen[w as usize] |= m;
                    frontier[w as usize] = m;
                    if is_endpoint[w as usize] {
                        far = level;
                    }
                }
                std::mem::swap(&mut active, &mut touched);
            }
            eps.iter()
                .all(|&e| seen[e as usize] & full == full)
                .then_some(far)
        })
        .collect();
    per_chunk
        .into_iter()
        .try_fold(0u32, |d, c| c.map(|c| d.max(c)))
        .filter(|_| !eps.is_empty())
}

/// What `tagger topo` prints: counts by kind and level, degrees, diameter.
#[derive(Clone, Debug)]
pub struct Summary {
    /// The topology's name.
    pub name: String,
    /// Its family.
    pub family: &'static str,
    /// (kind, level) -> count, in a stable order.
    pub by_kind_level: BTreeMap<(NodeKind, Option<u32>), usize>,
    /// Switch nodes.
    pub switches: usize,
    /// Server nodes.
    pub servers: usize,
    /// Links.
    pub links: usize,
    /// Hosts attached to switches.
    pub hosts: u64,
    /// Endpoints (nodes traffic starts and ends at).
    pub endpoints: usize,
    /// Smallest node degree.
    pub min_degree: usize,
    /// Largest node degree.
    pub max_degree: usize,
    /// Whether every endpoint reaches every other.
    pub connected: bool,
    /// Hops between the farthest endpoints (`None`: skipped as too costly).
    pub diameter: Option<u32>,
    /// True when the diameter was not computed: the network is past
    /// [`DIAMETER_MAX_WORK`] (see [`Summary::of`]).
    pub diameter_skipped: bool,
}

/// Word operations past which [`Summary::of`] skips the endpoint diameter
/// (about 10 s on one core); [`Summary::with_diameter`] computes it anyway.
pub const DIAMETER_MAX_WORK: u64 = 20_000_000_000;

/// What [`endpoint_diameter`] would cost, in word operations, and one
/// endpoint's eccentricity among the endpoints (`None`: some endpoint is
/// out of its reach, or there are none), from one breadth-first search.
/// The estimate runs the levels twice that eccentricity allows (a bound
/// on the diameter), at least 16, so that a long chain is not taken for a
/// fabric.
fn diameter_work(topo: &Topology) -> (u64, Option<u32>) {
    let eps = topo.endpoints();
    let (levels, ecc) = match eps.first() {
        Some(&s) => {
            let (mut dist, mut queue) = (Vec::new(), Vec::new());
            topo.bfs(s, &mut dist, &mut queue);
            let all = dist
                .iter()
                .filter(|&&d| d != u32::MAX)
                .max()
                .copied()
                .unwrap_or(0);
            let ecc = eps
                .iter()
                .map(|&e| dist[e as usize])
                .try_fold(0u32, |m, d| (d != u32::MAX).then(|| m.max(d)));
            ((2 * u64::from(all) + 1).max(16), ecc)
        }
        None => (16, None),
    };
    let work = (eps.len() as u64)
        .div_ceil(64)
        .saturating_mul(levels)
        .saturating_mul(topo.node_count() as u64 + 2 * topo.link_count() as u64);
    (work, ecc)
}

/// The endpoint diameter where computing it costs at most
/// [`DIAMETER_MAX_WORK`] word operations; past that, twice one endpoint's
/// eccentricity, which no endpoint distance exceeds (a 200,000-switch
/// chain gets its bound at the cost of one search). `None` when some pair
/// of endpoints is disconnected.
pub fn endpoint_diameter_or_bound(topo: &Topology) -> Option<u32> {
    match diameter_work(topo) {
        (work, _) if work <= DIAMETER_MAX_WORK => endpoint_diameter(topo),
        (_, ecc) => ecc.map(|e| 2 * e),
    }
}

impl Summary {
    /// The summary; the endpoint diameter only where it costs at most
    /// [`DIAMETER_MAX_WORK`] word operations, estimated from the endpoint,
    /// node and link counts and a bound on the levels the search runs:
    /// twice the eccentricity of one endpoint (one breadth-first search),
    /// at least 16, so that a long chain is not taken for a fabric.
    pub fn of(topo: &Topology) -> Self {
        Self::build(topo, diameter_work(topo).0 <= DIAMETER_MAX_WORK)
    }

    /// The summary with the endpoint diameter whatever it costs.
    pub fn with_diameter(topo: &Topology) -> Self {
        Self::build(topo, true)
    }

    fn build(topo: &Topology, diameter: bool) -> Self {
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
            diameter: diameter.then(|| endpoint_diameter(topo)).flatten(),
            diameter_skipped: !diameter,
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
            _ if self.diameter_skipped => write!(
                f,
                "diameter   - (skipped: {} endpoints; `tagger topo --diameter` computes it)",
                self.endpoints
            ),
            Some(d) => write!(f, "diameter   {d} links between endpoints"),
            None if self.endpoints < 2 => write!(f, "diameter   - (fewer than 2 endpoints)"),
            None => write!(f, "diameter   infinite (endpoints disconnected)"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tagger_generators::TopologySpec;

    /// One plain BFS per endpoint: the oracle.
    fn slow_diameter(topo: &Topology) -> Option<u32> {
        let eps = topo.endpoints();
        let (mut dist, mut queue) = (Vec::new(), Vec::new());
        let mut d = 0;
        for &s in eps {
            topo.bfs(s, &mut dist, &mut queue);
            for &e in eps {
                if dist[e as usize] == u32::MAX {
                    return None;
                }
                d = d.max(dist[e as usize]);
            }
        }
        Some(d)
    }

    /// A 20,000-switch chain: the estimate (from one search's
    /// eccentricity, levels times nodes) skips its diameter in a plain
    /// summary; the fabrics' estimate is as before.
    #[test]
    fn long_chains_skip_the_diameter() {
        let n = 20_000u32;
        let chain = crate::testing::chain(n);
        let s = Summary::of(&chain);
        assert!(s.diameter_skipped && s.diameter.is_none());
        let t = TopologySpec::parse("fattree:k=8").unwrap().build().unwrap();
        assert_eq!(Summary::of(&t).diameter, Some(4));
        // Where the diameter is skipped, a bound stands for it: at least
        // the diameter (n - 1), at most twice it.
        let bound = endpoint_diameter_or_bound(&chain).unwrap();
        assert!((n - 1..=2 * (n - 1)).contains(&bound), "{bound}");
        assert_eq!(endpoint_diameter_or_bound(&t), endpoint_diameter(&t));
        // random:N's default length comes from it: walks on the chain.
        let elp = crate::elp::ElpSet::build(&chain, &"random:20".parse().unwrap()).unwrap();
        assert_eq!(elp.explicit.as_ref().map(|p| p.len()), Some(20));
    }

    #[test]
    fn diameter_matches_one_bfs_per_endpoint() {
        for spec in [
            "fattree:k=4",
            "fattree:k=8",
            "leafspine:leaves=5,spines=3",
            "bcube:n=3,k=1",
            "hyperx:l=2,s=4,t=2",
            "jellyfish:n=150,ports=10,r=4,seed=3",
            "jellyfish:n=70,ports=6,r=2,seed=1",
        ] {
            let t = TopologySpec::parse(spec).unwrap().build().unwrap();
            assert_eq!(endpoint_diameter(&t), slow_diameter(&t), "{spec}");
        }
        // Long thin graphs, where a level touches few nodes.
        for n in [2, 3, 65, 300] {
            let t = crate::testing::chain(n);
            assert_eq!(endpoint_diameter(&t), slow_diameter(&t), "chain {n}");
        }
    }

    /// A 20,000-switch chain with hosts on every switch: its diameter is
    /// computed (`tagger topo --diameter`), visiting the few nodes each
    /// level reaches rather than every node at every level (#70: that
    /// took longer than two minutes).
    #[test]
    fn a_long_chains_diameter_is_computed() {
        let t = crate::testing::chain(20_000);
        assert_eq!(t.endpoints().len(), 20_000);
        assert_eq!(endpoint_diameter(&t), Some(19_999));
    }
}
