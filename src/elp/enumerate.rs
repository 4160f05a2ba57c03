//! Enumeration of an ELP set's paths (for `--paths-out` and tests): a DFS
//! over the language from every first hop. A union of families yields each
//! node sequence once, because prefixes shared by several families travel
//! together.

use super::{ElpSet, Prefixes};
use crate::error::{Error, Result};
use std::collections::BTreeMap;
use tagger_generators::{ChannelId, NodeId, Topology};

/// Writes every path of `elp`, one line of node ids each, to `w` (the
/// `--paths-out` format, which `file:PATH` reads back); errors name
/// `shown`, the output's name.
///
/// # Errors
/// [`Error::Limit`] past `max` paths; [`Error::Io`] naming `shown`.
pub fn write_paths(
    w: &mut dyn std::io::Write,
    topo: &Topology,
    elp: &ElpSet,
    shown: &std::path::Path,
    max: u64,
) -> Result<()> {
    use std::io::Write as _;
    let mut w = std::io::BufWriter::new(w);
    for_each_path(topo, elp, max, |nodes| {
        let line: Vec<String> = nodes.iter().map(u32::to_string).collect();
        writeln!(w, "{}", line.join(" ")).map_err(|e| Error::io(shown, e))
    })?;
    w.flush().map_err(|e| Error::io(shown, e))
}

/// Calls `emit` with every ELP as a node sequence, sources in endpoint order
/// and continuations in channel order. Stops with [`Error::Limit`] once more
/// than `max` paths have been found.
///
/// Parallel links are merged: a path is a node sequence.
///
/// # Errors
/// [`Error::Limit`] past `max` paths, or whatever `emit` returns.
pub fn for_each_path(
    topo: &Topology,
    elp: &ElpSet,
    max: u64,
    mut emit: impl FnMut(&[NodeId]) -> Result<()>,
) -> Result<u64> {
    let mut count = 0u64;
    let mut nodes: Vec<NodeId> = Vec::new();
    // Group first hops by (source, next node) so parallel links merge.
    let mut firsts: BTreeMap<(NodeId, NodeId), (ChannelId, Prefixes)> = BTreeMap::new();
    for (c, p) in elp.initial(topo) {
        match firsts.entry((topo.channel_src(c), topo.channel_dst(c))) {
            std::collections::btree_map::Entry::Occupied(mut e) => e.get_mut().1.union(p),
            std::collections::btree_map::Entry::Vacant(e) => {
                e.insert((c, p));
            }
        }
    }
    for ((s, _), (c, p)) in firsts {
        nodes.clear();
        nodes.push(s);
        dfs(topo, elp, c, 1, p, &mut nodes, &mut count, max, &mut emit)?;
    }
    Ok(count)
}

#[allow(clippy::too_many_arguments)]
fn dfs(
    topo: &Topology,
    elp: &ElpSet,
    c: ChannelId,
    hop: u32,
    p: Prefixes,
    nodes: &mut Vec<NodeId>,
    count: &mut u64,
    max: u64,
    emit: &mut impl FnMut(&[NodeId]) -> Result<()>,
) -> Result<()> {
    nodes.push(topo.channel_dst(c));
    if elp.accepts(topo, c, hop, &p) {
        *count += 1;
        if *count > max {
            return Err(Error::Limit {
                what: "ELP paths",
                value: *count as u128,
                limit: max as u128,
            });
        }
        emit(nodes)?;
    }
    let mut next: BTreeMap<NodeId, (ChannelId, Prefixes)> = BTreeMap::new();
    for (c2, q) in elp.successors(topo, c, hop, &p) {
        match next.entry(topo.channel_dst(c2)) {
            std::collections::btree_map::Entry::Occupied(mut e) => e.get_mut().1.union(q),
            std::collections::btree_map::Entry::Vacant(e) => {
                e.insert((c2, q));
            }
        }
    }
    for (_, (c2, q)) in next {
        dfs(topo, elp, c2, hop + 1, q, nodes, count, max, emit)?;
    }
    nodes.pop();
    Ok(())
}

/// Channel sequences of an ELP set, flat: path `i` is
/// `channels[offsets[i]..offsets[i + 1]]`. The offsets are `u32` (a
/// set past 2^32 - 1 channels is refused as it is built): on Jellyfish
/// 2000 `shortest`, 14.3M maximal paths, 57 MB less than `usize` offsets
/// through a whole `search`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChannelPaths {
    /// Every path's channels, one path after another.
    pub channels: Vec<ChannelId>,
    /// Path `i` is `channels[offsets[i]..offsets[i + 1]]`; starts at 0.
    offsets: Vec<u32>,
}

/// A path set of `n` channels, past what `u32` offsets address.
fn too_many_channels(n: usize) -> Error {
    Error::Limit {
        what: "channels on the maximal ELP paths",
        value: n as u128,
        limit: u128::from(u32::MAX),
    }
}

impl Default for ChannelPaths {
    fn default() -> Self {
        ChannelPaths {
            channels: Vec::new(),
            offsets: vec![0],
        }
    }
}

impl ChannelPaths {
    /// Number of paths.
    pub fn len(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }
    /// Whether there is no path.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Path `i`'s channels.
    pub fn path(&self, i: usize) -> &[ChannelId] {
        &self.channels[self.offsets[i] as usize..self.offsets[i + 1] as usize]
    }
    /// Where path `i` starts in [`ChannelPaths::channels`].
    pub fn start(&self, i: usize) -> usize {
        self.offsets[i] as usize
    }
    /// Appends `path`.
    ///
    /// # Errors
    /// [`Error::Limit`] when the set would pass 2^32 - 1 channels.
    pub fn push(&mut self, path: &[ChannelId]) -> Result<()> {
        let end = self.channels.len() + path.len();
        let end = u32::try_from(end).map_err(|_| too_many_channels(end))?;
        self.channels.extend_from_slice(path);
        self.offsets.push(end);
        Ok(())
    }
    /// Heap bytes held (for memory budgets).
    pub fn heap_bytes(&self) -> u64 {
        crate::budget::bytes_of::<ChannelId>(self.channels.len())
            + crate::budget::bytes_of::<u32>(self.offsets.len())
    }

    /// The paths `keep` accepts, in order. Compacts in place: a copy
    /// would hold the paths twice at the largest moment of a `search` or
    /// `exact` run (on Jellyfish 2000 `shortest`, 17.3M paths: 460 MB more).
    /// The capacity is kept: shrinking would copy them anyway.
    pub fn retain(self, keep: impl Fn(&[ChannelId]) -> bool) -> Self {
        self.compact(|_, p| keep(p))
    }

    /// The paths `keep(index, path)` accepts, in order, compacted in place
    /// (see [`ChannelPaths::retain`]).
    fn compact(mut self, mut keep: impl FnMut(usize, &[ChannelId]) -> bool) -> Self {
        let (mut to, mut kept) = (0, 0);
        let mut a = self.start(0);
        for i in 0..self.len() {
            // Read before `offsets[kept]` (kept <= i + 1) is overwritten.
            let b = self.start(i + 1);
            if keep(i, &self.channels[a..b]) {
                self.channels.copy_within(a..b, to);
                to += b - a;
                kept += 1;
                // No longer than the offset it replaces.
                self.offsets[kept] = to as u32;
            }
            a = b;
        }
        self.channels.truncate(to);
        self.offsets.truncate(kept + 1);
        self
    }
}

/// The *maximal* ELPs as channel sequences (parallel links kept apart): a
/// path that is a prefix or a suffix of another ELP is left out, because
/// any plan that fits the longer path fits it (a suffix starts at a tag no
/// higher than the longer path has there, and tags only rise along a path).
/// Sources run in parallel; the result is in first-hop order whatever the
/// thread count. Stops with [`Error::Limit`] past `max` maximal paths.
///
/// # Errors
/// [`Error::Limit`] past `max` paths.
pub fn maximal_channel_paths(topo: &Topology, elp: &ElpSet, max: u64) -> Result<ChannelPaths> {
    maximal_paths_by(topo, elp, max, true)
}

/// [`maximal_channel_paths`]; `fast` allows the one-source path for
/// `shortest`-only ELPs (off in the test that checks it against the general
/// one).
fn maximal_paths_by(topo: &Topology, elp: &ElpSet, max: u64, fast: bool) -> Result<ChannelPaths> {
    use rayon::prelude::*;
    use std::sync::atomic::AtomicU64;
    // Path ids are `u32` downstream (the suffix removal's sort, the local
    // search's occurrences): no more paths than that are enumerated.
    let max = max.min(u64::from(u32::MAX));
    let found = AtomicU64::new(0);
    let only_shortest = fast && elp.shortest_alone();
    let parts: Vec<Result<ChannelPaths>> = elp
        .initial(topo)
        .into_par_iter()
        .map(|(c, p)| {
            let mut out = ChannelPaths::default();
            let mut stack = Vec::new();
            let single = p.shortest.as_ref().and_then(super::Sources::single);
            match (&elp.shortest, single) {
                // One source per first channel (its tail): test one bit per
                // step instead of building a source set (same paths, same
                // order). `search:paths=20000000` on Jellyfish-2000: tag
                // stage 13.9 s to 9.5 s.
                (Some(sp), Some(source)) if only_shortest => {
                    shortest_leaves(topo, sp, source, c, 1, &mut stack, &mut out, &found, max)?;
                }
                _ => {
                    leaves(topo, elp, c, 1, p, &mut stack, &mut out, &found, max)?;
                }
            }
            Ok(out)
        })
        .collect();
    let parts = parts.into_iter().collect::<Result<Vec<_>>>()?;
    // Sized once, each part freed as it is moved.
    let channels: usize = parts.iter().map(|p| p.channels.len()).sum();
    if u32::try_from(channels).is_err() {
        return Err(too_many_channels(channels));
    }
    let mut all = ChannelPaths {
        channels: Vec::with_capacity(channels),
        offsets: Vec::with_capacity(1 + parts.iter().map(ChannelPaths::len).sum::<usize>()),
    };
    all.offsets.push(0);
    for part in parts {
        // Below 2^32 (checked above).
        let base = all.channels.len() as u32;
        all.channels.extend_from_slice(&part.channels);
        all.offsets
            .extend(part.offsets[1..].iter().map(|o| o + base));
    }
    Ok(drop_suffixes(all))
}

/// DFS below `(c, hop, p)`; pushes the leaf paths (accepted, with no
/// accepted extension) and returns whether anything at or below was
/// accepted.
#[allow(clippy::too_many_arguments)]
fn leaves(
    topo: &Topology,
    elp: &ElpSet,
    c: ChannelId,
    hop: u32,
    p: Prefixes,
    stack: &mut Vec<ChannelId>,
    out: &mut ChannelPaths,
    found: &std::sync::atomic::AtomicU64,
    max: u64,
) -> Result<bool> {
    stack.push(c);
    let mut below = false;
    for (c2, q) in elp.successors(topo, c, hop, &p) {
        below |= leaves(topo, elp, c2, hop + 1, q, stack, out, found, max)?;
    }
    let here = elp.accepts(topo, c, hop, &p);
    if here && !below {
        emit_leaf(stack, out, found, max)?;
    }
    stack.pop();
    Ok(here || below)
}

/// Appends the path on `stack`, counting it against `max`.
fn emit_leaf(
    stack: &[ChannelId],
    out: &mut ChannelPaths,
    found: &std::sync::atomic::AtomicU64,
    max: u64,
) -> Result<()> {
    let n = found.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
    if n > max {
        return Err(Error::Limit {
            what: "maximal ELP paths",
            value: n as u128,
            limit: max as u128,
        });
    }
    out.push(stack)
}

/// [`leaves`] for a `shortest`-only ELP and one source.
#[allow(clippy::too_many_arguments)]
fn shortest_leaves(
    topo: &Topology,
    sp: &super::Shortest,
    source: usize,
    c: ChannelId,
    hop: u32,
    stack: &mut Vec<ChannelId>,
    out: &mut ChannelPaths,
    found: &std::sync::atomic::AtomicU64,
    max: u64,
) -> Result<bool> {
    stack.push(c);
    let v = topo.channel_dst(c);
    let mut below = false;
    for &c2 in topo.out_channels(v) {
        if sp.reaches(source, topo.channel_dst(c2), hop as usize + 1) {
            below |= shortest_leaves(topo, sp, source, c2, hop + 1, stack, out, found, max)?;
        }
    }
    let here = topo.is_endpoint(v);
    if here && !below {
        emit_leaf(stack, out, found, max)?;
    }
    stack.pop();
    Ok(here || below)
}

/// Removes every path that is a proper suffix of another path of the set,
/// and duplicates, keeping the first occurrence's order.
///
/// A path goes when it is another path's tail (that path without its first
/// channel), or equal to an earlier path. A dropped path is the tail of a
/// longer one, which is kept or is itself a tail: following the chain ends
/// at a kept path that dominates them all.
///
/// Paths and tails are matched by [`fingerprint`]: the paths' prints are
/// sorted once, the tails' a slice at a time, and the two merged, each
/// match confirmed channel by channel. Sorting path ids by content and
/// finding each tail by binary search did the same in 86 MB but cost two
/// cache misses per comparison, about 3 s of a `search` run's set-up on
/// Jellyfish 2000 (17.3M paths); hash sets of slices held 1.1 GB. A
/// print and its path id share 8 bytes ([`keyed`]); the tails' slice
/// takes 16 MB.
///
/// Complexity: O(n log n) fingerprint comparisons and O(total length)
/// hashing for n paths, in parallel.
fn drop_suffixes(all: ChannelPaths) -> ChannelPaths {
    use rayon::prelude::*;
    use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
    let n = all.len();
    let prints = sorted_prints(&all);
    let dropped: Vec<AtomicBool> = (0..n).map(|_| AtomicBool::new(false)).collect();
    // Duplicates: within a run of one print (by index), every path equal
    // to an earlier one of the run.
    prints
        .par_chunk_by(|&a, &b| print_of(a) == print_of(b))
        .for_each(|run| {
            for (k, &q) in run.iter().enumerate().skip(1) {
                let p = all.path(id_of(q) as usize);
                if run[..k].iter().any(|&j| all.path(id_of(j) as usize) == p) {
                    dropped[id_of(q) as usize].store(true, Relaxed);
                }
            }
        });
    // Tails: every path equal to another path's tail.
    for from in (0..n).step_by(PRINT_SLICE) {
        let mut tails: Vec<u64> = (from..n.min(from + PRINT_SLICE))
            .into_par_iter()
            .filter(|&q| all.path(q).len() >= 2)
            .map(|q| keyed(all.path(q)[1..].iter().copied(), q as u32))
            .collect();
        tails.par_sort_unstable();
        equal_prints(&prints, &tails, |x, q| {
            if all.path(x as usize) == &all.path(q as usize)[1..] {
                dropped[x as usize].store(true, Relaxed);
            }
        });
    }
    drop(prints);
    all.compact(|i, _| !dropped[i].load(Relaxed))
}

/// Paths whose tails (or reverses) are fingerprinted per slice: 16 MB of
/// prints at a time.
pub(crate) const PRINT_SLICE: usize = 1 << 21;

/// A 64-bit fingerprint of a channel sequence, the same on every machine.
/// Equal sequences have equal prints; callers confirm equal prints by
/// comparing the sequences.
pub(crate) fn fingerprint(channels: impl Iterator<Item = ChannelId>) -> u64 {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut h = K;
    let mut len = 0u64;
    for c in channels {
        h = (h ^ u64::from(c)).wrapping_mul(K);
        h ^= h >> 29;
        len += 1;
    }
    (h ^ len).wrapping_mul(0xBF58_476D_1CE4_E5B9) ^ (h >> 31)
}

/// `channels`' [`fingerprint`] and the id of its path in one `u64`: the
/// print's high 32 bits above the id, so that sorting sorts by print, then
/// id. Half the bytes of a `(u64, u32)` pair; the shorter print makes
/// more pairs of distinct paths match (about n^2 / 2^33 of n paths: 24k
/// of 14M), each refused when its sequences are compared.
pub(crate) fn keyed(channels: impl Iterator<Item = ChannelId>, id: u32) -> u64 {
    fingerprint(channels) & !u64::from(u32::MAX) | u64::from(id)
}

/// The print part of a [`keyed`] value.
fn print_of(k: u64) -> u64 {
    k >> 32
}

/// The path id of a [`keyed`] value.
fn id_of(k: u64) -> u32 {
    k as u32
}

/// Every path's [`keyed`] print, sorted.
pub(crate) fn sorted_prints(paths: &ChannelPaths) -> Vec<u64> {
    use rayon::prelude::*;
    let mut prints: Vec<u64> = (0..paths.len())
        .into_par_iter()
        .map(|i| keyed(paths.path(i).iter().copied(), i as u32))
        .collect();
    prints.par_sort_unstable();
    prints
}

/// Calls `found(a_id, b_id)` for every pair of entries of the sorted
/// [`keyed`] lists `a` and `b` with one print, in parallel over pieces of
/// `b`.
pub(crate) fn equal_prints(a: &[u64], b: &[u64], found: impl Fn(u32, u32) + Sync) {
    use rayon::prelude::*;
    // A run of one print split between two pieces still meets all of
    // `a`'s run from each: every pair is found once.
    b.par_chunks(1 << 12).for_each(|piece| {
        let mut i = a.partition_point(|&x| print_of(x) < print_of(piece[0]));
        for &y in piece {
            let h = print_of(y);
            while i < a.len() && print_of(a[i]) < h {
                i += 1;
            }
            for &x in a[i..].iter().take_while(|&&x| print_of(x) == h) {
                found(id_of(x), id_of(y));
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::elp::ElpSpec;

    /// The sorted suffix removal agrees with the hash-set version it
    /// replaced (the oracle, kept here) on random path sets full of tails
    /// and duplicates.
    #[test]
    fn drop_suffixes_matches_hash_sets() {
        use rand::{Rng, SeedableRng};
        use rustc_hash::FxHashSet;
        fn oracle(all: &ChannelPaths) -> Vec<Vec<ChannelId>> {
            let tails: FxHashSet<&[ChannelId]> = (0..all.len())
                .filter(|&i| all.path(i).len() > 1)
                .map(|i| &all.path(i)[1..])
                .collect();
            let mut seen: FxHashSet<&[ChannelId]> = FxHashSet::default();
            (0..all.len())
                .map(|i| all.path(i))
                .filter(|p| !tails.contains(p) && seen.insert(p))
                .map(<[ChannelId]>::to_vec)
                .collect()
        }
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
        for _ in 0..400 {
            let mut all = ChannelPaths::default();
            let mut made: Vec<Vec<ChannelId>> = Vec::new();
            for _ in 0..rng.random_range(0..25) {
                // New paths over few channels, or tails and copies of
                // earlier ones.
                let p: Vec<ChannelId> = match (made.last(), rng.random_range(0..3)) {
                    (Some(q), 0) if !q.is_empty() => q[1..].to_vec(),
                    (Some(q), 1) => q.clone(),
                    _ => (0..rng.random_range(0..5))
                        .map(|_| rng.random_range(0..4))
                        .collect(),
                };
                all.push(&p).unwrap();
                made.push(p);
            }
            let want = oracle(&all);
            let got = drop_suffixes(all);
            let got: Vec<Vec<ChannelId>> = (0..got.len()).map(|i| got.path(i).to_vec()).collect();
            assert_eq!(got, want);
        }
    }

    /// In-place `retain` keeps exactly the accepted paths, in order, as a
    /// copy of them would (random path sets and filters, including none
    /// and all kept).
    #[test]
    fn retain_in_place_matches_a_copy() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        for _ in 0..300 {
            let mut paths = ChannelPaths::default();
            for _ in 0..rng.random_range(0..12) {
                let p: Vec<ChannelId> = (0..rng.random_range(0..6))
                    .map(|_| rng.random_range(0..20))
                    .collect();
                paths.push(&p).unwrap();
            }
            let min = rng.random_range(0..7);
            let want: Vec<Vec<ChannelId>> = (0..paths.len())
                .map(|i| paths.path(i).to_vec())
                .filter(|p| p.len() >= min)
                .collect();
            let got = paths.retain(|p| p.len() >= min);
            assert_eq!(got.len(), want.len());
            for (i, w) in want.iter().enumerate() {
                assert_eq!(got.path(i), &w[..]);
            }
            assert_eq!(got.channels.len(), want.iter().map(Vec::len).sum::<usize>());
        }
    }

    /// The one-source enumeration of `shortest` gives the general one's
    /// paths in the same order.
    #[test]
    fn fast_shortest_enumeration_matches() {
        for topo in [
            "jellyfish:n=40,ports=8,r=5,seed=2",
            "bcube:n=3,k=1",
            "fattree:k=4",
        ] {
            let t = tagger_generators::TopologySpec::parse(topo)
                .unwrap()
                .build()
                .unwrap();
            let e = ElpSet::build(&t, &ElpSpec::parse("shortest").unwrap()).unwrap();
            let fast = maximal_paths_by(&t, &e, u64::MAX, true).unwrap();
            let slow = maximal_paths_by(&t, &e, u64::MAX, false).unwrap();
            assert!(fast.len() > 10, "{topo}");
            assert_eq!(fast, slow, "{topo}");
        }
    }

    /// Every maximal path is an ELP, and every ELP is a contiguous piece of
    /// some maximal path (checked as node sequences, on topologies without
    /// parallel links).
    #[test]
    fn maximal_paths_cover_every_elp() {
        for (topo, elp) in [
            (
                "jellyfish:n=20,ports=6,r=3,seed=2",
                "shortest+random:50,seed=3",
            ),
            ("fattree:k=4", "kbounce:1"),
            ("hyperx:l=2,s=3,t=1", "dor"),
        ] {
            let t = tagger_generators::TopologySpec::parse(topo)
                .unwrap()
                .build()
                .unwrap();
            let e = ElpSet::build(&t, &ElpSpec::parse(elp).unwrap()).unwrap();
            let max = maximal_channel_paths(&t, &e, u64::MAX).unwrap();
            let nodes = |p: &[ChannelId]| -> Vec<NodeId> {
                let mut v = vec![t.channel_src(p[0])];
                v.extend(p.iter().map(|&c| t.channel_dst(c)));
                v
            };
            let maximal: Vec<Vec<NodeId>> = (0..max.len()).map(|i| nodes(max.path(i))).collect();
            let mut all = std::collections::BTreeSet::new();
            for_each_path(&t, &e, u64::MAX, |p| {
                all.insert(p.to_vec());
                Ok(())
            })
            .unwrap();
            for m in &maximal {
                assert!(all.contains(m), "{topo} {elp}: {m:?} is not an ELP");
            }
            for p in &all {
                assert!(
                    maximal
                        .iter()
                        .any(|m| m.windows(p.len()).any(|w| w == &p[..])),
                    "{topo} {elp}: {p:?} is in no maximal path"
                );
            }
            assert!(max.len() < all.len(), "{topo} {elp}: nothing dropped");
        }
    }
}
