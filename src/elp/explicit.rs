//! Explicit ELP families (`random`, `file`): paths stored as one flat node
//! array plus offsets.

use crate::error::{Error, Result};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::path::Path;
use tagger_generators::{ChannelId, NodeId, Topology};

/// Distinct explicit paths, sorted, as node sequences.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PathList {
    nodes: Vec<NodeId>,
    offsets: Vec<u32>,
}

/// Walks per path before `random` gives up on a pair.
const MAX_WALKS: u32 = 200_000;

impl PathList {
    /// Heap bytes held (for memory budgets).
    pub fn heap_bytes(&self) -> u64 {
        crate::budget::bytes_of::<NodeId>(self.nodes.len())
            + crate::budget::bytes_of::<u32>(self.offsets.len())
    }

    pub(crate) fn from_paths(mut paths: Vec<Vec<NodeId>>) -> Self {
        paths.sort_unstable();
        paths.dedup();
        let mut list = PathList {
            nodes: Vec::with_capacity(paths.iter().map(Vec::len).sum()),
            offsets: Vec::with_capacity(paths.len() + 1),
        };
        list.offsets.push(0);
        for p in paths {
            list.nodes.extend(p);
            list.offsets.push(list.nodes.len() as u32);
        }
        list
    }

    /// Number of paths.
    pub fn len(&self) -> usize {
        self.offsets.len() - 1
    }
    /// Whether there is no path.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Path `id`'s nodes.
    pub fn path(&self, id: u32) -> &[NodeId] {
        &self.nodes[self.offsets[id as usize] as usize..self.offsets[id as usize + 1] as usize]
    }
    /// Length in links.
    pub fn len_of(&self, id: u32) -> u32 {
        self.offsets[id as usize + 1] - self.offsets[id as usize] - 1
    }
    /// The paths in order.
    pub fn iter(&self) -> impl Iterator<Item = &[NodeId]> {
        (0..self.len() as u32).map(|i| self.path(i))
    }

    /// Union of several lists, deduplicated.
    pub fn union(_topo: &Topology, lists: Vec<PathList>) -> PathList {
        let all = lists
            .iter()
            .flat_map(|l| l.iter().map(<[NodeId]>::to_vec))
            .collect();
        PathList::from_paths(all)
    }

    /// `N` paths, each between a uniformly random ordered pair of distinct
    /// endpoints, grown as a uniformly random walk that never revisits a node
    /// and stops at the destination; a walk that gets stuck or exceeds
    /// `maxlen` links is redrawn for the same pair. Path `i` draws from its own
    /// ChaCha8 stream (seed mixed with `i`), so the result is the same at any
    /// thread count. `maxlen` defaults to twice the endpoint diameter (twice
    /// its bound where computing it would take over about 10 s:
    /// [`crate::topo::endpoint_diameter_or_bound`]).
    ///
    /// Complexity: O(N x walks x maxlen x degree); a long walk checks
    /// revisits in a per-node mark, not by scanning the path.
    ///
    /// # Errors
    /// [`super::Mismatch::NoWalk`] when a pair finds no walk within
    /// `maxlen` after many tries, [`super::Mismatch::Disconnected`] when
    /// the endpoints are not connected.
    pub(crate) fn random(
        topo: &Topology,
        n: u32,
        maxlen: Option<u32>,
        seed: u64,
    ) -> Result<Self, super::Mismatch> {
        let eps = topo.endpoints();
        let maxlen = match maxlen {
            Some(m) => m,
            None => {
                2 * crate::topo::endpoint_diameter_or_bound(topo)
                    .ok_or(super::Mismatch::Disconnected)?
            }
        };
        let nodes = topo.node_count();
        let paths: Vec<Vec<NodeId>> = (0..n)
            .into_par_iter()
            .map_init(
                || Marks::new(nodes),
                |marks, i| {
                    let mut rng = ChaCha8Rng::seed_from_u64(crate::seed::mix(seed, i as u64));
                    let s = eps[rng.random_range(0..eps.len() as u64) as usize];
                    let d = loop {
                        let d = eps[rng.random_range(0..eps.len() as u64) as usize];
                        if d != s {
                            break d;
                        }
                    };
                    let mut path = Vec::with_capacity((maxlen as usize).min(nodes) + 1);
                    let mut cand = Vec::new();
                    for _ in 0..MAX_WALKS {
                        path.clear();
                        path.push(s);
                        let walk = marks.next();
                        marks.set(s, walk);
                        let mut u = s;
                        while path.len() <= maxlen as usize {
                            cand.clear();
                            let step = marks.next();
                            for w in topo.neighbors(u) {
                                // Not on the path, and not yet a candidate
                                // (parallel links name a neighbour twice).
                                if marks.get(w) != walk && marks.get(w) != step {
                                    marks.set(w, step);
                                    cand.push(w);
                                }
                            }
                            if cand.is_empty() {
                                break;
                            }
                            u = cand[rng.random_range(0..cand.len() as u64) as usize];
                            marks.set(u, walk);
                            path.push(u);
                            if u == d {
                                return Ok(path);
                            }
                        }
                    }
                    Err(super::Mismatch::NoWalk {
                        from: s,
                        to: d,
                        maxlen,
                        tries: MAX_WALKS,
                    })
                },
            )
            .collect::<Result<_, super::Mismatch>>()?;
        Ok(PathList::from_paths(paths))
    }

    /// Reads paths, one per line as node ids separated by spaces; blank lines
    /// and lines starting with `#` are skipped.
    ///
    /// # Errors
    /// [`Error::PathFile`] naming the line of the first path that is not a
    /// path of the topology.
    pub fn read(topo: &Topology, path: &Path) -> Result<Self> {
        let text = tagger_generators::file::read_input(path).map_err(|e| Error::io(path, e))?;
        Self::parse(topo, &text, path)
    }

    /// Parses a path file (one path per line, node ids separated by spaces, `#` comments); `origin` names it in errors.
    pub fn parse(topo: &Topology, text: &str, origin: &Path) -> Result<Self> {
        let mut paths = Vec::new();
        let n = topo.node_count();
        for (i, line) in tagger_generators::file::text_lines(text) {
            let bad = |reason: String| Error::PathFile {
                path: origin.to_path_buf(),
                line: i,
                reason,
            };
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let mut p = Vec::new();
            for tok in line.split_whitespace() {
                let v: u64 = tok
                    .parse()
                    .map_err(|_| bad(format!("'{tok}' is not a node id")))?;
                if v >= n as u64 {
                    return Err(bad(format!(
                        "node {v} does not exist (the topology's {n} nodes are numbered from 0)"
                    )));
                }
                p.push(v as NodeId);
            }
            if p.len() < 2 {
                return Err(bad("a path needs at least two nodes".into()));
            }
            for w in p.windows(2) {
                if !topo.neighbors(w[0]).any(|x| x == w[1]) {
                    return Err(bad(format!("nodes {} and {} are not linked", w[0], w[1])));
                }
            }
            for &end in [p[0], *p.last().unwrap()].iter() {
                if !topo.is_endpoint(end) {
                    return Err(bad(format!(
                        "node {end} is not an endpoint (no hosts, not a server)"
                    )));
                }
            }
            if p[0] == *p.last().unwrap() {
                return Err(bad(format!("path starts and ends at node {}", p[0])));
            }
            paths.push(p);
        }
        Ok(PathList::from_paths(paths))
    }

    /// Channels from `u` to `v` (several with parallel links).
    fn channels(topo: &Topology, u: NodeId, v: NodeId) -> impl Iterator<Item = ChannelId> + '_ {
        topo.out_channels(u)
            .iter()
            .copied()
            .filter(move |&c| topo.channel_dst(c) == v)
    }

    /// First channels with the ids of the paths starting on them.
    pub fn first_hops(&self, topo: &Topology) -> Vec<(ChannelId, Vec<u32>)> {
        let mut m: BTreeMap<ChannelId, Vec<u32>> = BTreeMap::new();
        for id in 0..self.len() as u32 {
            let p = self.path(id);
            for c in Self::channels(topo, p[0], p[1]) {
                m.entry(c).or_default().push(id);
            }
        }
        m.into_iter().collect()
    }

    /// Next channels of paths `ids` that have crossed `hop` channels.
    pub fn step(&self, topo: &Topology, ids: &[u32], hop: u32) -> Vec<(ChannelId, Vec<u32>)> {
        let mut m: BTreeMap<ChannelId, Vec<u32>> = BTreeMap::new();
        for &id in ids {
            if self.len_of(id) > hop {
                let p = self.path(id);
                for c in Self::channels(topo, p[hop as usize], p[hop as usize + 1]) {
                    m.entry(c).or_default().push(id);
                }
            }
        }
        m.into_iter().collect()
    }
}

/// Per-node marks for random walks: a node is on the current walk, or a
/// candidate of the current step, when its mark is that walk's or step's
/// number (so nothing is cleared between walks).
struct Marks {
    mark: Vec<u32>,
    last: u32,
}

impl Marks {
    fn new(nodes: usize) -> Self {
        Marks {
            mark: vec![0; nodes],
            last: 0,
        }
    }

    /// A fresh number, no node's mark yet.
    fn next(&mut self) -> u32 {
        if self.last == u32::MAX {
            self.mark.fill(0);
            self.last = 0;
        }
        self.last += 1;
        self.last
    }

    fn get(&self, v: NodeId) -> u32 {
        self.mark[v as usize]
    }

    fn set(&mut self, v: NodeId, to: u32) {
        self.mark[v as usize] = to;
    }
}
