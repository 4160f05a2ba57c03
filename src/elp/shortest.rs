//! `shortest`: all shortest paths between every ordered pair of endpoints.

use crate::bits::Bits;
use rayon::prelude::*;
use tagger_generators::{ChannelId, Topology};

/// Per-source shortest-path DAGs, stored transposed for the tagging stage:
/// `reach(w, d)` is the set of sources `s` with `dist(s, w) = d` such that `w`
/// lies on a shortest path from `s` to some other endpoint. A prefix from `s`
/// ending at `v` after `h` hops continues to `w` exactly when `s` is in
/// `reach(w, h + 1)`, so one word-wise AND serves 64 sources at once.
#[derive(Debug)]
pub struct Shortest {
    words: usize,
    rows: usize,
    reach: Vec<u64>,
    /// Exact counts, computed while the DAGs are built.
    pub paths: u128,
    pub saturated: bool,
    pub longest: u32,
    pub pairs_covered: u64,
}

struct Chunk {
    rows: usize,
    col: Vec<u64>,
    paths: u128,
    saturated: bool,
    longest: u32,
    pairs: u64,
}

impl Shortest {
    /// Heap bytes held (for memory budgets).
    pub fn heap_bytes(&self) -> u64 {
        crate::budget::bytes_of::<u64>(self.reach.len())
    }

    /// Builds the DAGs with one BFS per endpoint, 64 endpoints per task.
    ///
    /// Complexity: O(E * (V + L)) time for E endpoints, O(V * D * E / 64)
    /// words of memory for diameter D.
    pub fn build(topo: &Topology) -> Result<Self, String> {
        let eps = topo.endpoints();
        let n = topo.node_count();
        let words = eps.len().div_ceil(64);
        let chunks: Vec<Chunk> = (0..words)
            .into_par_iter()
            .map(|j| {
                let mut dist = Vec::new();
                let mut order = Vec::new();
                let mut useful = vec![false; n];
                let mut sigma = vec![0u128; n];
                let mut stamp = vec![u32::MAX; n];
                let mut ch = Chunk {
                    rows: 0,
                    col: Vec::new(),
                    paths: 0,
                    saturated: false,
                    longest: 0,
                    pairs: 0,
                };
                let mut marks: Vec<(u32, u32, u32)> = Vec::new();
                for bit in 0..64 {
                    let i = j * 64 + bit;
                    if i >= eps.len() {
                        break;
                    }
                    let s = eps[i];
                    topo.bfs(s, &mut dist, &mut order);
                    for &w in order.iter().rev() {
                        let dw = dist[w as usize];
                        useful[w as usize] = (w != s && topo.is_endpoint(w))
                            || topo
                                .neighbors(w)
                                .any(|x| dist[x as usize] == dw + 1 && useful[x as usize]);
                    }
                    sigma[s as usize] = 1;
                    for &w in &order[1..] {
                        let dw = dist[w as usize];
                        let mut acc: u128 = 0;
                        for x in topo.neighbors(w) {
                            // Parallel links reach the same predecessor twice;
                            // paths are node sequences, so count it once.
                            if dist[x as usize] + 1 == dw && stamp[x as usize] != w {
                                stamp[x as usize] = w;
                                acc = acc.checked_add(sigma[x as usize]).unwrap_or_else(|| {
                                    ch.saturated = true;
                                    u128::MAX
                                });
                            }
                        }
                        for x in topo.neighbors(w) {
                            stamp[x as usize] = u32::MAX;
                        }
                        sigma[w as usize] = acc;
                        if topo.is_endpoint(w) {
                            ch.paths = ch.paths.checked_add(acc).unwrap_or_else(|| {
                                ch.saturated = true;
                                u128::MAX
                            });
                            ch.longest = ch.longest.max(dw);
                            ch.pairs += 1;
                        }
                        if useful[w as usize] {
                            marks.push((w, dw, bit as u32));
                            ch.rows = ch.rows.max(dw as usize + 1);
                        }
                    }
                    for &w in &order {
                        useful[w as usize] = false;
                        sigma[w as usize] = 0;
                    }
                }
                ch.col = vec![0; n * ch.rows];
                for (w, d, bit) in marks {
                    ch.col[w as usize * ch.rows + d as usize] |= 1 << bit;
                }
                ch
            })
            .collect();
        let rows = chunks.iter().map(|c| c.rows).max().unwrap_or(0).max(2);
        let mut reach = vec![0u64; n * rows * words];
        for (j, ch) in chunks.iter().enumerate() {
            for w in 0..n {
                for d in 0..ch.rows {
                    reach[(w * rows + d) * words + j] = ch.col[w * ch.rows + d];
                }
            }
        }
        let mut s = Shortest {
            words,
            rows,
            reach,
            paths: 0,
            saturated: false,
            longest: 0,
            pairs_covered: 0,
        };
        for ch in &chunks {
            s.saturated |= ch.saturated;
            s.paths = s.paths.checked_add(ch.paths).unwrap_or_else(|| {
                s.saturated = true;
                u128::MAX
            });
            s.longest = s.longest.max(ch.longest);
            s.pairs_covered += ch.pairs;
        }
        Ok(s)
    }

    fn row(&self, w: u32, d: usize) -> &[u64] {
        let at = (w as usize * self.rows + d) * self.words;
        &self.reach[at..at + self.words]
    }

    /// Sources whose shortest prefix `c` (one hop) is the first hop of an ELP.
    pub fn first_hop(&self, topo: &Topology, source: usize, c: ChannelId) -> Option<Bits> {
        let w = topo.channel_dst(c);
        let row = self.row(w, 1);
        (row[source / 64] >> (source % 64) & 1 == 1).then(|| Bits::single(self.words * 64, source))
    }

    /// Whether any source of `src` continues on `c2` ([`Shortest::step`]
    /// without building the set).
    pub fn continues(&self, topo: &Topology, src: &Bits, hop: u32, c2: ChannelId) -> bool {
        let d = hop as usize + 1;
        d < self.rows
            && src
                .words()
                .iter()
                .zip(self.row(topo.channel_dst(c2), d))
                .any(|(a, b)| a & b != 0)
    }

    /// Sources of `src` (prefixes of `hop` channels) that continue on `c2`.
    pub fn step(&self, topo: &Topology, src: &Bits, hop: u32, c2: ChannelId) -> Option<Bits> {
        let d = hop as usize + 1;
        if d >= self.rows {
            return None;
        }
        src.and_words(self.row(topo.channel_dst(c2), d))
    }
}
