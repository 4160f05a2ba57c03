//! `shortest`: all shortest paths between every ordered pair of endpoints.

use super::Sources;
use rayon::prelude::*;
use tagger_generators::{ChannelId, LinkId, NodeId, Topology};

/// Per-source shortest-path DAGs, stored transposed for the tagging stage:
/// `reach(w, d)` is the set of sources `s` with `dist(s, w) = d` such that `w`
/// lies on a shortest path from `s` to some other endpoint. A prefix from `s`
/// ending at `v` after `h` hops continues to `w` exactly when `s` is in
/// `reach(w, h + 1)`, so one word-wise AND serves 64 sources at once.
///
/// Built on a degraded network ([`Shortest::build_masked`]) it keeps the
/// healthy network's channel ids and forbids the failed links; several such
/// builds side by side ([`Shortest::union`]) hold the shortest paths of
/// several failure scenarios at once, one block of source bits per
/// scenario, which is how a plan anticipates failures.
#[derive(Debug)]
pub struct Shortest {
    words: usize,
    rows: usize,
    reach: Vec<u64>,
    /// Where the fabric is deep (a long chain), the rows each node has,
    /// instead of `reach`: a node holds few of the `rows` distances, and
    /// a dense table of every node at every distance grows with the
    /// square of the length.
    sparse: Option<SparseRows>,
    /// Words per block (one block per failure scenario; `words` when one).
    block_words: usize,
    /// `(link, block)`: links failed in a block, sorted.
    dead: Vec<(LinkId, u32)>,
    /// Exact counts, computed while the DAGs are built.
    pub paths: u128,
    /// Whether `paths` passed `u128::MAX` and stopped counting.
    pub saturated: bool,
    /// Hops of the longest shortest path (the endpoint diameter).
    pub longest: u32,
    /// Ordered endpoint pairs connected.
    pub pairs_covered: u64,
}

#[derive(Default)]
struct Chunk {
    rows: usize,
    col: Vec<u64>,
    /// Sparse builds: `(node, distance, sources)` of the chunk's nonzero
    /// rows, sorted by node and distance (`col` stays empty).
    marks: Vec<(NodeId, u32, u64)>,
    paths: u128,
    saturated: bool,
    longest: u32,
    pairs: u64,
}

/// The rows of a sparse [`Shortest`]: node `w`'s distances are
/// `dist[start[w]..start[w + 1]]` (increasing), the row of its `i`-th
/// `words` words at `data[i * words..]`; any other row is zero.
#[derive(Debug)]
struct SparseRows {
    start: Vec<u32>,
    dist: Vec<u32>,
    data: Vec<u64>,
    /// A row of zeros, what an absent row reads as.
    zero: Vec<u64>,
}

/// Eccentricity of the first endpoint past which the shortest-path table
/// is built sparse ([`Shortest::is_deep`]): every fabric of the sweeps is
/// far below it (Jellyfish, fat-trees, HyperX and BCube reach their
/// endpoints in under 10 hops), so they keep the dense table and its
/// bit-parallel build.
pub(crate) const SPARSE_FROM: u32 = 64;

impl Shortest {
    /// Heap bytes held (for memory budgets).
    pub fn heap_bytes(&self) -> u64 {
        use crate::budget::bytes_of;
        bytes_of::<u64>(self.reach.len())
            + self.sparse.as_ref().map_or(0, |r| {
                bytes_of::<u32>(r.start.len() + r.dist.len())
                    + bytes_of::<u64>(r.data.len() + r.zero.len())
            })
    }

    /// Bytes building the table works with at its peak, an upper bound:
    /// the endpoint diameter is at most twice the first endpoint's
    /// eccentricity (one BFS), so a table has at most that many rows plus
    /// one.
    ///
    /// - dense: the chunks' columns and the merged table coexist at the
    ///   end (twice `nodes x rows x words` words), and each thread's chunk
    ///   works with its levels and useful rows (`2 x nodes x rows` words)
    ///   and its `u128` path counts (64 per node);
    /// - deep fabrics ([`Shortest::is_deep`]), sparse: each node has a row
    ///   at most at one distance per endpoint (`nodes x min(endpoints,
    ///   rows)` rows of `words` words and a distance), and the chunks'
    ///   marks (16 bytes per node and distance a chunk marks, at most 64
    ///   per node), with a thread's search arrays and its chunk's marks
    ///   before they are merged.
    pub fn estimate_bytes(topo: &Topology) -> u64 {
        let (deep, ecc) = Self::is_deep(topo);
        let n = topo.node_count() as u64;
        let e = topo.endpoints().len() as u64;
        if e == 0 {
            return 0;
        }
        let words = e.div_ceil(64);
        let rows = (2 * u64::from(ecc)).min(n.saturating_sub(1)) + 1;
        // Chunks in flight at once: counted for two threads whatever the
        // machine has, so that the estimate (a column of runs.parquet) is
        // the same at any thread count; the term is small beside the
        // table on every fabric measured.
        let threads = words.min(2);
        let sat = |a: u64, b: u64| a.saturating_mul(b);
        if !deep {
            let table = sat(8, sat(n, sat(rows, words)));
            let chunk = sat(8, sat(2 * n, rows)) + sat(n, 64 * 16) + 4 * n;
            return sat(2, table).saturating_add(sat(threads, chunk));
        }
        let entries = sat(n, e.min(rows));
        let table = sat(entries, sat(8, words) + 4) + 4 * (n + 1) + 8 * words;
        let marks = sat(16, sat(words, sat(n, rows.min(64))));
        let search = sat(n, 4 + 1 + 16 + 4) + sat(16, sat(n, 64.min(e)));
        // The per-node distance lists while the table is laid out.
        let lists = sat(entries, 4) + sat(n, 24);
        table
            .saturating_add(marks)
            .saturating_add(sat(threads, search))
            .saturating_add(lists)
    }

    /// Whether `topo` is deep enough that its table is built sparse: the
    /// first endpoint's eccentricity among the endpoints (one BFS, which
    /// [`crate::elp::ElpSpec::estimate_bytes`] runs too) passes
    /// `SPARSE_FROM` (64). Returns that eccentricity too.
    pub fn is_deep(topo: &Topology) -> (bool, u32) {
        let eps = topo.endpoints();
        let Some(&e0) = eps.first() else {
            return (false, 0);
        };
        let (mut dist, mut queue) = (Vec::new(), Vec::new());
        topo.bfs(e0, &mut dist, &mut queue);
        let ecc = eps
            .iter()
            .map(|&e| dist[e as usize])
            .filter(|&d| d != u32::MAX)
            .max()
            .unwrap_or(0);
        (ecc > SPARSE_FROM, ecc)
    }

    /// Builds the DAGs 64 endpoints at a time with a bit-parallel BFS
    /// (Then et al., "The more the merrier: efficient multi-source graph
    /// traversal", VLDB 2014): one `u64` per node holds the chunk's sources
    /// that reach it at the current distance, so a level costs one pass
    /// over the edges for all 64. The DAG rows fall out of the levels by a
    /// backward pass of the same kind; only the exact path counts need a
    /// number per source, summed over each node's predecessors.
    ///
    /// Complexity: O(E / 64 * (V + L) * D) word operations for the rows and
    /// O(E * L) additions for the counts, for E endpoints, V nodes, L links
    /// and diameter D; O(V * D * E / 64) words of memory.
    pub(crate) fn build(topo: &Topology) -> Self {
        Self::build_inner(topo, None)
    }

    /// The shortest-path language (as `ElpSet::build` makes it) on `topo` with the links `failed[l]` removed
    /// (the shortest paths routing converges to after those failures),
    /// keeping `topo`'s channel ids. Pairs the failures disconnect have no
    /// paths.
    pub fn build_masked(topo: &Topology, failed: &[bool]) -> Self {
        let mut s = Self::build_inner(topo, Some(failed));
        s.dead = (0..topo.link_count() as LinkId)
            .filter(|&l| failed[l as usize])
            .map(|l| (l, 0))
            .collect();
        s
    }

    /// The union of several builds on one topology: a prefix from a
    /// source continues wherever it does in any part. Each part's source
    /// bits form one block, so the parts' failed links stay apart. Path
    /// counts are the parts' sums (paths shared by parts count once per
    /// part).
    pub fn union(parts: Vec<Shortest>) -> Self {
        let bw = parts.first().map_or(0, |p| p.words);
        assert!(
            parts
                .iter()
                .all(|p| p.words == bw && p.block_words == p.words)
        );
        if parts.iter().any(|p| p.sparse.is_some()) {
            return Self::union_sparse(parts);
        }
        let rows = parts.iter().map(|p| p.rows).max().unwrap_or(2);
        let n = parts
            .first()
            .map_or(0, |p| p.reach.len() / (p.rows * p.words.max(1)));
        let words = bw * parts.len();
        let mut reach = vec![0u64; n * rows * words];
        let mut s = Shortest {
            words,
            rows,
            reach: Vec::new(),
            sparse: None,
            block_words: bw,
            dead: Vec::new(),
            paths: 0,
            saturated: false,
            longest: 0,
            pairs_covered: 0,
        };
        for (b, p) in parts.iter().enumerate() {
            for w in 0..n {
                for d in 0..p.rows {
                    let at = (w * rows + d) * words + b * bw;
                    reach[at..at + bw].copy_from_slice(p.row(w as NodeId, d));
                }
            }
            s.dead.extend(p.dead.iter().map(|&(l, _)| (l, b as u32)));
            s.saturated |= p.saturated;
            s.paths = s.paths.saturating_add(p.paths);
            s.longest = s.longest.max(p.longest);
            s.pairs_covered = s.pairs_covered.max(p.pairs_covered);
        }
        s.reach = reach;
        s.dead.sort_unstable();
        s
    }

    /// Blocks in which link `l` has failed (a run of `dead`).
    fn dead_blocks(&self, l: LinkId) -> &[(LinkId, u32)] {
        if self.dead.is_empty() {
            return &[];
        }
        let lo = self.dead.partition_point(|&(x, _)| x < l);
        let hi = self.dead.partition_point(|&(x, _)| x <= l);
        &self.dead[lo..hi]
    }

    /// Row `(w, d)` as seen over channel `c2`: the blocks where `c2`'s
    /// link failed are cleared.
    fn row_over(&self, w: NodeId, d: usize, c2: ChannelId) -> std::borrow::Cow<'_, [u64]> {
        let row = self.row(w, d);
        let dead = self.dead_blocks(c2 >> 1);
        if dead.is_empty() {
            return std::borrow::Cow::Borrowed(row);
        }
        let mut own = row.to_vec();
        for &(_, b) in dead {
            let at = b as usize * self.block_words;
            own[at..at + self.block_words].fill(0);
        }
        std::borrow::Cow::Owned(own)
    }

    fn build_inner(topo: &Topology, failed: Option<&[bool]>) -> Self {
        Self::build_as(topo, failed, Self::is_deep(topo).0)
    }

    /// [`Shortest::build_inner`] dense or (`sparse`) per source, sparse.
    fn build_as(topo: &Topology, failed: Option<&[bool]>, sparse: bool) -> Self {
        let live = Live { topo, failed };
        let words = topo.endpoints().len().div_ceil(64);
        if sparse {
            let chunks: Vec<Chunk> = (0..words)
                .into_par_iter()
                .map(|j| live.chunk_per_source(j))
                .collect();
            return Self::assemble_sparse(topo.node_count(), &chunks);
        }
        let chunks: Vec<Chunk> = (0..words).into_par_iter().map(|j| live.chunk(j)).collect();
        Self::assemble(topo.node_count(), &chunks)
    }

    /// The table of a deep fabric from its chunks' marks: per node, the
    /// distances any chunk marks, each row's word `j` chunk `j`'s sources.
    fn assemble_sparse(n: usize, chunks: &[Chunk]) -> Self {
        let words = chunks.len();
        // Per node, its distances over all chunks (each chunk's marks are
        // sorted by node, then distance).
        let mut per_node: Vec<Vec<u32>> = vec![Vec::new(); n];
        for ch in chunks {
            for &(w, d, _) in &ch.marks {
                per_node[w as usize].push(d);
            }
        }
        let mut start = Vec::with_capacity(n + 1);
        let mut dist = Vec::new();
        start.push(0u32);
        for ds in &mut per_node {
            ds.sort_unstable();
            ds.dedup();
            dist.extend_from_slice(ds);
            start.push(dist.len() as u32);
            *ds = Vec::new();
        }
        let mut data = vec![0u64; dist.len() * words];
        for (j, ch) in chunks.iter().enumerate() {
            for &(w, d, m) in &ch.marks {
                let ds = &dist[start[w as usize] as usize..start[w as usize + 1] as usize];
                let i = start[w as usize] as usize + ds.binary_search(&d).expect("listed");
                data[i * words + j] = m;
            }
        }
        let mut s = Self::assemble(0, chunks);
        s.rows = chunks.iter().map(|c| c.rows).max().unwrap_or(0).max(2);
        s.words = words;
        s.block_words = words;
        s.sparse = Some(SparseRows {
            start,
            dist,
            data,
            zero: vec![0; words],
        });
        s
    }

    /// [`Shortest::union`] where some part is sparse: sparse too, each
    /// node's distances those of any part.
    fn union_sparse(parts: Vec<Shortest>) -> Self {
        let bw = parts.first().map_or(0, |p| p.words);
        let rows = parts.iter().map(|p| p.rows).max().unwrap_or(2);
        let n = parts.first().map_or(0, Shortest::nodes);
        let words = bw * parts.len();
        let mut start = Vec::with_capacity(n + 1);
        let mut dist: Vec<u32> = Vec::new();
        start.push(0u32);
        for w in 0..n as NodeId {
            let mut ds: Vec<u32> = parts.iter().flat_map(|p| p.distances(w)).collect();
            ds.sort_unstable();
            ds.dedup();
            dist.extend(ds);
            start.push(dist.len() as u32);
        }
        let mut data = vec![0u64; dist.len() * words];
        for w in 0..n {
            let (lo, hi) = (start[w] as usize, start[w + 1] as usize);
            for (i, &d) in dist.iter().enumerate().take(hi).skip(lo) {
                for (b, p) in parts.iter().enumerate() {
                    let at = i * words + b * bw;
                    data[at..at + bw].copy_from_slice(p.row(w as NodeId, d as usize));
                }
            }
        }
        let mut s = Shortest {
            words,
            rows,
            reach: Vec::new(),
            sparse: Some(SparseRows {
                start,
                dist,
                data,
                zero: vec![0; words],
            }),
            block_words: bw,
            dead: Vec::new(),
            paths: 0,
            saturated: false,
            longest: 0,
            pairs_covered: 0,
        };
        for (b, p) in parts.iter().enumerate() {
            s.dead.extend(p.dead.iter().map(|&(l, _)| (l, b as u32)));
            s.saturated |= p.saturated;
            s.paths = s.paths.saturating_add(p.paths);
            s.longest = s.longest.max(p.longest);
            s.pairs_covered = s.pairs_covered.max(p.pairs_covered);
        }
        s.dead.sort_unstable();
        s
    }

    /// Nodes the table covers.
    fn nodes(&self) -> usize {
        match &self.sparse {
            Some(r) => r.start.len() - 1,
            None => self.reach.len() / (self.rows * self.words).max(1),
        }
    }

    /// The distances at which node `w` has a row (a dense table: every
    /// distance).
    fn distances(&self, w: NodeId) -> Vec<u32> {
        match &self.sparse {
            Some(r) => {
                r.dist[r.start[w as usize] as usize..r.start[w as usize + 1] as usize].to_vec()
            }
            None => (0..self.rows as u32).collect(),
        }
    }

    /// Lays the per-chunk columns out as rows of `words` words per
    /// `(node, distance)` and sums the chunks' counts.
    fn assemble(n: usize, chunks: &[Chunk]) -> Self {
        let words = chunks.len();
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
            sparse: None,
            block_words: words,
            dead: Vec::new(),
            paths: 0,
            saturated: false,
            longest: 0,
            pairs_covered: 0,
        };
        for ch in chunks {
            s.saturated |= ch.saturated;
            s.paths = s.paths.checked_add(ch.paths).unwrap_or_else(|| {
                s.saturated = true;
                u128::MAX
            });
            s.longest = s.longest.max(ch.longest);
            s.pairs_covered += ch.pairs;
        }
        s
    }

    fn row(&self, w: u32, d: usize) -> &[u64] {
        if let Some(r) = &self.sparse {
            let (lo, hi) = (
                r.start[w as usize] as usize,
                r.start[w as usize + 1] as usize,
            );
            return match r.dist[lo..hi].binary_search(&(d as u32)) {
                Ok(i) => &r.data[(lo + i) * self.words..(lo + i + 1) * self.words],
                Err(_) => &r.zero,
            };
        }
        let at = (w as usize * self.rows + d) * self.words;
        &self.reach[at..at + self.words]
    }

    /// Whether a shortest prefix from endpoint number `source` may have
    /// node `w` as its `d`-th hop (one bit of the rows [`Shortest::step`]
    /// ANDs).
    pub fn reaches(&self, source: usize, w: tagger_generators::NodeId, d: usize) -> bool {
        d < self.rows && self.row(w, d)[source / 64] >> (source % 64) & 1 == 1
    }

    /// Sources whose shortest prefix `c` (one hop) is the first hop of an ELP.
    pub fn first_hop(&self, topo: &Topology, source: usize, c: ChannelId) -> Option<Sources> {
        if self.rows < 2 {
            return None;
        }
        let row = self.row_over(topo.channel_dst(c), 1, c);
        let ids: Vec<u32> = (0..self.words / self.block_words.max(1))
            .map(|b| b * self.block_words * 64 + source)
            .filter(|&i| row[i / 64] >> (i % 64) & 1 == 1)
            .map(|i| i as u32)
            .collect();
        (!ids.is_empty()).then(|| Sources::from_sorted(self.words, ids))
    }

    /// Whether any source of `src` continues on `c2` ([`Shortest::step`]
    /// without building the set).
    pub fn continues(&self, topo: &Topology, src: &Sources, hop: u32, c2: ChannelId) -> bool {
        let d = hop as usize + 1;
        d < self.rows && src.meets(&self.row_over(topo.channel_dst(c2), d, c2))
    }

    /// Whether any source of `src` continues to node `w` over some link
    /// (every [`Shortest::continues`] over a link to `w` implies it).
    pub fn continues_to(&self, src: &Sources, hop: u32, w: NodeId) -> bool {
        let d = hop as usize + 1;
        d < self.rows && src.meets(self.row(w, d))
    }

    /// [`Shortest::step`] of the union of `sets`: each set's step ANDs
    /// the same row, so the union's step is the union of the steps, here
    /// one OR per set into a bitset and one AND, where stepping each set
    /// and merging the results builds a set per step.
    pub fn step_union<'s>(
        &self,
        topo: &Topology,
        sets: impl IntoIterator<Item = &'s Sources>,
        hop: u32,
        c2: ChannelId,
    ) -> Option<Sources> {
        let d = hop as usize + 1;
        if d >= self.rows {
            return None;
        }
        ACC.with_borrow_mut(|acc| {
            acc.clear();
            acc.resize(self.words, 0);
            for src in sets {
                src.or_into(acc);
            }
            Sources::words_and_row(acc, &self.row_over(topo.channel_dst(c2), d, c2))
        })
    }

    /// Sources of `src` (prefixes of `hop` channels) that continue on `c2`.
    pub fn step(&self, topo: &Topology, src: &Sources, hop: u32, c2: ChannelId) -> Option<Sources> {
        let d = hop as usize + 1;
        if d >= self.rows {
            return None;
        }
        src.and_row(&self.row_over(topo.channel_dst(c2), d, c2))
    }
}

thread_local! {
    /// A thread's bitset for [`Shortest::step_union`].
    static ACC: std::cell::RefCell<Vec<u64>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The set bits of a word, lowest first.
struct Ones(u64);

impl Iterator for Ones {
    type Item = usize;
    fn next(&mut self) -> Option<usize> {
        (self.0 != 0).then(|| {
            let b = self.0.trailing_zeros() as usize;
            self.0 &= self.0 - 1;
            b
        })
    }
}

/// The topology over its live links (all of them on a healthy network).
struct Live<'a> {
    topo: &'a Topology,
    failed: Option<&'a [bool]>,
}

impl Live<'_> {
    /// Neighbours of `w` over live links.
    fn neighbors(&self, w: u32) -> impl Iterator<Item = NodeId> + '_ {
        self.topo
            .out_channels(w)
            .iter()
            .filter(move |&&c| self.failed.is_none_or(|f| !f[(c >> 1) as usize]))
            .map(move |&c| self.topo.channel_dst(c))
    }

    /// Chunk `j`: the 64 endpoints from `64 j` as sources.
    fn chunk(&self, j: usize) -> Chunk {
        let (topo, eps, n) = (self.topo, self.topo.endpoints(), self.topo.node_count());
        let bits = (eps.len() - j * 64).min(64);
        // `own[w]`: the bit of `w` when it is a source of this chunk.
        let mut own = vec![0u64; n];
        for bit in 0..bits {
            let s = eps[j * 64 + bit] as usize;
            own[s] |= 1 << bit;
        }
        let levels = self.levels(&own, u64::MAX >> (64 - bits));
        let endpoint = |w: usize| {
            if topo.is_endpoint(w as u32) {
                !own[w]
            } else {
                0
            }
        };
        let useful = self.useful(&levels, endpoint);
        let mut ch = Chunk::default();
        ch.rows = useful
            .iter()
            .rposition(|row| row.iter().any(|&m| m != 0))
            .filter(|&d| d > 0)
            .map_or(0, |d| d + 1);
        ch.col = vec![0; n * ch.rows];
        for (d, row) in useful.iter().enumerate().take(ch.rows).skip(1) {
            for (w, &m) in row.iter().enumerate() {
                ch.col[w * ch.rows + d] = m;
            }
        }
        self.count_paths(&own, &levels, &mut ch);
        ch
    }

    /// Chunk `j` of a deep fabric, one breadth-first search per source:
    /// its rows as marks (memory linear in the nodes each source makes
    /// useful, where the bit-parallel [`Live::chunk`] keeps every node at
    /// every distance), and the same counts.
    ///
    /// Complexity: O(64 (V + L)) per chunk.
    fn chunk_per_source(&self, j: usize) -> Chunk {
        let (topo, eps, n) = (self.topo, self.topo.endpoints(), self.topo.node_count());
        let mut dist = vec![u32::MAX; n];
        let mut order: Vec<NodeId> = Vec::new();
        let mut useful = vec![false; n];
        let mut sigma = vec![0u128; n];
        let mut stamp = vec![u32::MAX; n];
        let mut ch = Chunk::default();
        for bit in 0..64 {
            let Some(&s) = eps.get(j * 64 + bit) else {
                break;
            };
            order.clear();
            order.push(s);
            dist[s as usize] = 0;
            let mut head = 0;
            while let Some(&v) = order.get(head) {
                head += 1;
                for x in self.neighbors(v) {
                    if dist[x as usize] == u32::MAX {
                        dist[x as usize] = dist[v as usize] + 1;
                        order.push(x);
                    }
                }
            }
            // Useful: on a shortest path from s to another endpoint.
            for &w in order.iter().rev() {
                let dw = dist[w as usize];
                useful[w as usize] = (w != s && topo.is_endpoint(w))
                    || self
                        .neighbors(w)
                        .any(|x| dist[x as usize] == dw + 1 && useful[x as usize]);
            }
            sigma[s as usize] = 1;
            for &w in &order[1..] {
                let dw = dist[w as usize];
                let mut acc: u128 = 0;
                for x in self.neighbors(w) {
                    // Parallel links reach the same predecessor twice;
                    // paths are node sequences, so it counts once.
                    if dist[x as usize] + 1 == dw && stamp[x as usize] != w {
                        stamp[x as usize] = w;
                        acc = acc.checked_add(sigma[x as usize]).unwrap_or_else(|| {
                            ch.saturated = true;
                            u128::MAX
                        });
                    }
                }
                for x in self.neighbors(w) {
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
                    ch.marks.push((w, dw, 1 << bit));
                    ch.rows = ch.rows.max(dw as usize + 1);
                }
            }
            for &w in &order {
                useful[w as usize] = false;
                sigma[w as usize] = 0;
                dist[w as usize] = u32::MAX;
            }
        }
        ch.marks.sort_unstable_by_key(|&(w, d, _)| (w, d));
        ch.marks.dedup_by(|b, a| {
            let same = (a.0, a.1) == (b.0, b.1);
            if same {
                a.2 |= b.2;
            }
            same
        });
        ch
    }

    /// `levels[d][w]`: the sources (bits of `own`) at distance `d` from
    /// `w`, until every node has seen all of them (`full`) or no more are
    /// reached.
    fn levels(&self, own: &[u64], full: u64) -> Vec<Vec<u64>> {
        let n = own.len();
        let mut seen = own.to_vec();
        let mut levels = vec![own.to_vec()];
        loop {
            let prev = levels.last().expect("level 0");
            let mut next = vec![0u64; n];
            let mut any = 0;
            for (w, m) in next.iter_mut().enumerate() {
                if seen[w] == full {
                    continue;
                }
                let mut reach = 0;
                for x in self.neighbors(w as u32) {
                    reach |= prev[x as usize];
                }
                *m = reach & !seen[w];
                seen[w] |= *m;
                any |= *m;
            }
            if any == 0 {
                break;
            }
            levels.push(next);
        }
        levels
    }

    /// `useful[d][w]`: sources at distance `d` from `w` for which `w` lies
    /// on a shortest path to another endpoint (`endpoint(w)`: the sources
    /// `w` is another endpoint for).
    fn useful(&self, levels: &[Vec<u64>], endpoint: impl Fn(usize) -> u64) -> Vec<Vec<u64>> {
        let (n, depth) = (self.topo.node_count(), levels.len());
        let mut useful = vec![Vec::new(); depth];
        useful[depth - 1] = (0..n).map(|w| levels[depth - 1][w] & endpoint(w)).collect();
        for d in (1..depth - 1).rev() {
            let above = &useful[d + 1];
            useful[d] = (0..n)
                .map(|w| {
                    let at = levels[d][w];
                    if at == 0 {
                        return 0;
                    }
                    let mut via = endpoint(w);
                    for x in self.neighbors(w as u32) {
                        via |= above[x as usize];
                    }
                    at & via
                })
                .collect();
        }
        useful
    }

    /// Path counts per source into `ch`: `sigma[w * 64 + bit]` sums sigma
    /// over the distinct predecessors of `w` one level closer to the
    /// source. Parallel links reach the same predecessor twice; paths are
    /// node sequences, so it is counted once.
    ///
    /// Counted in `u64` first, which holds every count of the networks
    /// measured and halves the table the adds read (Jellyfish 10000: the
    /// counts were nine tenths of the ELP stage); a chunk whose counts
    /// pass `u64::MAX` is counted again in `u128`, so the counts are the
    /// same either way.
    fn count_paths(&self, own: &[u64], levels: &[Vec<u64>], ch: &mut Chunk) {
        if self.count_paths_in::<u64>(own, levels, ch).is_none() {
            (ch.paths, ch.saturated, ch.pairs, ch.longest) = (0, false, 0, 0);
            self.count_paths_in::<u128>(own, levels, ch);
        }
    }

    /// [`Live::count_paths`] with counts of type `T`; `None` when a count
    /// passes `T`'s range and `T` is not the widest (the widest saturates,
    /// setting `ch.saturated`).
    fn count_paths_in<T: Count>(
        &self,
        own: &[u64],
        levels: &[Vec<u64>],
        ch: &mut Chunk,
    ) -> Option<()> {
        let (topo, n) = (self.topo, self.topo.node_count());
        let mut sigma = vec![T::ZERO; n * 64];
        let mut stamp = vec![u32::MAX; n];
        for (w, &m) in own.iter().enumerate() {
            for bit in Ones(m) {
                sigma[w * 64 + bit] = T::ONE;
            }
        }
        for d in 1..levels.len() {
            let (lower, at) = (&levels[d - 1], &levels[d]);
            for w in 0..n {
                let m = at[w];
                if m == 0 {
                    continue;
                }
                for x in self.neighbors(w as u32) {
                    let x = x as usize;
                    if stamp[x] == w as u32 {
                        continue;
                    }
                    stamp[x] = w as u32;
                    for bit in Ones(m & lower[x]) {
                        let add = sigma[x * 64 + bit];
                        let acc = &mut sigma[w * 64 + bit];
                        *acc = match acc.checked_add(add) {
                            Some(v) => v,
                            None if T::WIDEST => {
                                ch.saturated = true;
                                T::MAX
                            }
                            None => return None,
                        };
                    }
                }
                for x in self.neighbors(w as u32) {
                    stamp[x as usize] = u32::MAX;
                }
                if topo.is_endpoint(w as u32) {
                    for bit in Ones(m) {
                        ch.paths = ch
                            .paths
                            .checked_add(sigma[w * 64 + bit].wide())
                            .unwrap_or_else(|| {
                                ch.saturated = true;
                                u128::MAX
                            });
                    }
                    ch.pairs += u64::from(m.count_ones());
                    ch.longest = ch.longest.max(d as u32);
                }
            }
        }
        Some(())
    }
}

/// A path count's type: `u64` first, `u128` where that overflows.
trait Count: Copy {
    const ZERO: Self;
    const ONE: Self;
    const MAX: Self;
    /// Whether no wider type follows (a count past it saturates).
    const WIDEST: bool;
    fn checked_add(self, other: Self) -> Option<Self>;
    fn wide(self) -> u128;
}

impl Count for u64 {
    const ZERO: Self = 0;
    const ONE: Self = 1;
    const MAX: Self = u64::MAX;
    const WIDEST: bool = false;
    fn checked_add(self, other: Self) -> Option<Self> {
        u64::checked_add(self, other)
    }
    fn wide(self) -> u128 {
        u128::from(self)
    }
}

impl Count for u128 {
    const ZERO: Self = 0;
    const ONE: Self = 1;
    const MAX: Self = u128::MAX;
    const WIDEST: bool = true;
    fn checked_add(self, other: Self) -> Option<Self> {
        u128::checked_add(self, other)
    }
    fn wide(self) -> u128 {
        self
    }
}

#[cfg(test)]
mod tests;
