//! Check (e): every ELP transition finds a lossless entry, replayed hop by
//! hop from the tag hosts send.

use super::{Report, Table, Violation};
use crate::elp::{ElpSet, KbSources, Prefixes};
use rayon::prelude::*;
use rustc_hash::FxHashMap as HashMap;
use tagger_generators::{ChannelId, Topology};

/// Replays every ELP transition through the table, hop by hop from the first
/// hop with the initial tag 1; each state's prefix classes are replayed once.
///
/// States are split into partitions by ranges of channels, each merging
/// the states it reaches ([`Merge`]) and keeping its own map of explored
/// prefixes, so that merging a hop's continuations
/// (unions of source bitsets, a large part of the work at Jellyfish scale)
/// runs in parallel while each partition still takes its continuations in
/// frontier order. Small networks keep one partition: splitting cost more
/// than it saved below a few thousand channels.
///
/// A k-bounce ELP alone carries its prefixes as [`KbSources`] (36 bytes,
/// no heap) instead of whole [`Prefixes`] records (104 bytes): the 30M
/// continuations of fat-tree k=64 `kbounce:2` are written and merged as
/// such.
pub(super) fn replay(
    topo: &Topology,
    table: &Table<'_>,
    elp: &ElpSet,
    initial_tag: u32,
    r: &mut Report,
) {
    let kbounce_only = elp.shortest.is_none()
        && elp.dor.is_none()
        && elp.explicit.is_none()
        && elp.kbounce.is_some();
    if kbounce_only {
        replay_as(topo, table, elp, initial_tag, r, |p: Prefixes| p.kbounce);
    } else {
        replay_as(topo, table, elp, initial_tag, r, |p: Prefixes| p);
    }
}

/// [`replay`] with each state's prefixes carried as `R`, made from the
/// ELP's initial ones by `of`.
fn replay_as<R: Record>(
    topo: &Topology,
    table: &Table<'_>,
    elp: &ElpSet,
    initial_tag: u32,
    r: &mut Report,
    of: impl Fn(Prefixes) -> R,
) {
    type States<R> = HashMap<(ChannelId, u32), R>;
    let parts = (topo.channel_count() / CHANNELS_PER_PART).clamp(1, MAX_PARTS);
    // Each partition holds a range of channels, so that it can merge what
    // reaches its states in arrays over the range.
    let per = topo.channel_count().div_ceil(parts).max(1);
    let part = |c: ChannelId| c as usize / per;
    let mut seen: Vec<States<R>> = (0..parts).map(|_| States::default()).collect();
    // Only the k-bounce and dimension-order prefixes are recorded as
    // explored (see `Prefixes::subtract_seen`): without them the record
    // stays empty, and is not kept (an empty record per state, about 80
    // bytes each).
    let records = elp.kbounce.is_some() || elp.dor.is_some();
    let mut frontier: Vec<((ChannelId, u32), R)> = Vec::new();
    for (c, p) in elp.initial(topo) {
        let mut p = of(p);
        let node = topo.channel_src(c);
        r.transitions_replayed += 1;
        match table.get(node as usize, (None, initial_tag, c >> 1)) {
            Some((t, _, _)) => {
                if records {
                    p.subtract_seen(seen[part(c)].entry((c, t)).or_default());
                }
                frontier.push(((c, t), p));
            }
            None => r.violate(Violation::Replay {
                node,
                in_link: None,
                tag: initial_tag,
                out_link: c >> 1,
            }),
        }
    }
    let mut hop = 1;
    while !frontier.is_empty() {
        // Continuations and their table lookups in parallel (the table is
        // read-only); per chunk the first missing entry, in frontier order.
        // Blocks of the frontier bound the continuations held at once, and
        // a state's prefix set is freed once expanded, so that this hop's
        // sets and the next's are not all held together (Jellyfish 10000:
        // peak 2.52 GiB, reached here).
        let mut next: Vec<Merge<R>> = (0..parts)
            .map(|i| Merge::new((i * per) as ChannelId, per))
            .collect();
        for block in frontier.chunks_mut(1 << 14) {
            let found: Vec<Found<R>> = block
                .par_chunks_mut(256)
                .map(|chunk| expand_chunk(topo, table, elp, hop, chunk, parts, &part))
                .collect();
            let mut by_part: Vec<Vec<Vec<_>>> = (0..parts).map(|_| Vec::new()).collect();
            for (out, missing, n) in found {
                r.transitions_replayed += n;
                if let Some(m) = missing {
                    r.violate(m);
                }
                for (list, lists) in out.into_iter().zip(&mut by_part) {
                    lists.push(list);
                }
            }
            next.par_iter_mut()
                .zip(by_part)
                .for_each(|(states, lists)| {
                    for (k, q) in lists.into_iter().flatten() {
                        states.add(k, q);
                    }
                });
        }
        let parts: Vec<Vec<((ChannelId, u32), R)>> = next
            .into_par_iter()
            .zip(seen.par_iter_mut())
            .map(|(states, seen)| {
                states
                    .list
                    .into_iter()
                    .filter_map(|(k, mut p)| {
                        if records {
                            p.subtract_seen(seen.entry(k).or_default());
                        }
                        (!p.is_empty()).then_some((k, p))
                    })
                    .collect()
            })
            .collect();
        frontier = parts.into_iter().flatten().collect();
        frontier.par_sort_unstable_by_key(|(k, _)| *k);
        hop += 1;
    }
}

/// What one chunk of a hop's frontier found: its continuations by
/// partition, the first missing entry in frontier order, and the
/// transitions replayed.
type Found<R> = (Vec<Vec<((ChannelId, u32), R)>>, Option<Violation>, u64);

/// Expands one chunk of a hop's frontier after `hop` channels, looking
/// each continuation up in the table; a state's prefix set is freed once
/// expanded.
fn expand_chunk<R: Record>(
    topo: &Topology,
    table: &Table<'_>,
    elp: &ElpSet,
    hop: u32,
    chunk: &mut [((ChannelId, u32), R)],
    parts: usize,
    part: &impl Fn(ChannelId) -> usize,
) -> Found<R> {
    let (mut out, mut missing, mut n) = (vec![Vec::new(); parts], None, 0u64);
    // One state's continuations at a time, in buffers the chunk reuses.
    let (mut chans, mut prefs) = (Vec::new(), Vec::new());
    for &mut ((c, t), ref mut p) in chunk.iter_mut() {
        let node = topo.channel_dst(c);
        let p = std::mem::take(p);
        let run = table.run(node as usize, Some(c >> 1), t);
        chans.clear();
        p.successors_into(elp, topo, c, hop, &mut chans, &mut prefs);
        for (&c2, q) in chans.iter().zip(prefs.drain(..)) {
            n += 1;
            match table.in_run(run, c2 >> 1) {
                Some((t2, _, _)) => out[part(c2)].push(((c2, t2), q)),
                None => {
                    missing.get_or_insert(Violation::Replay {
                        node,
                        in_link: Some(c >> 1),
                        tag: t,
                        out_link: c2 >> 1,
                    });
                }
            }
        }
    }
    (out, missing, n)
}

/// The replay's state partitions: at most this many (a few per thread keep
/// the merge balanced), one per this many channels.
const MAX_PARTS: usize = 64;
const CHANNELS_PER_PART: usize = 4096;

/// One partition's next states, merged where they are reached: the states
/// of channels `base..base + len`, found through an array over the range
/// per tag instead of a hash map: the replay 2.3-2.5 s -> 2.1-2.25 s on
/// fat-tree k=64 `kbounce:2` (30M continuations), 0.31-0.39 s -> 0.27-0.28
/// s on Jellyfish 2000 (with the reused continuation buffers).
struct Merge<R> {
    base: ChannelId,
    len: usize,
    /// Per tag met, each channel's index in `list` (`u32::MAX`: none).
    by_tag: Vec<(u32, Vec<u32>)>,
    /// The states, in order of first reach, with their prefixes.
    list: Vec<((ChannelId, u32), R)>,
}

impl<R: Record> Merge<R> {
    fn new(base: ChannelId, len: usize) -> Self {
        Merge {
            base,
            len,
            by_tag: Vec::new(),
            list: Vec::new(),
        }
    }

    /// Adds the prefixes `q` reaching state `k`.
    fn add(&mut self, k: (ChannelId, u32), q: R) {
        // Tags are few, and any value a rule names is looked up, not
        // indexed.
        let i = match self.by_tag.iter().position(|(t, _)| *t == k.1) {
            Some(i) => i,
            None => {
                self.by_tag.push((k.1, vec![u32::MAX; self.len]));
                self.by_tag.len() - 1
            }
        };
        let at = &mut self.by_tag[i].1[(k.0 - self.base) as usize];
        if *at == u32::MAX {
            *at = self.list.len() as u32;
            self.list.push((k, q));
        } else {
            self.list[*at as usize].1.union(q);
        }
    }
}

/// What the replay carries per state: the ELP prefixes that reach it.
trait Record: Clone + Default + Send + Sync {
    /// Adds every prefix of `other`.
    fn union(&mut self, other: Self);
    /// Drops the prefixes already in `seen` and records the rest there.
    fn subtract_seen(&mut self, seen: &mut Self);
    fn is_empty(&self) -> bool;
    /// Appends the channels the prefixes continue on from `c`, after
    /// `hop` channels, and the prefixes each continues as.
    fn successors_into(
        &self,
        elp: &ElpSet,
        topo: &Topology,
        c: ChannelId,
        hop: u32,
        chans: &mut Vec<ChannelId>,
        out: &mut Vec<Self>,
    );
}

impl Record for Prefixes {
    fn union(&mut self, other: Self) {
        Prefixes::union(self, other);
    }
    fn subtract_seen(&mut self, seen: &mut Self) {
        Prefixes::subtract_seen(self, seen);
    }
    fn is_empty(&self) -> bool {
        Prefixes::is_empty(self)
    }
    fn successors_into(
        &self,
        elp: &ElpSet,
        topo: &Topology,
        c: ChannelId,
        hop: u32,
        chans: &mut Vec<ChannelId>,
        out: &mut Vec<Self>,
    ) {
        elp.successors_into(topo, c, hop, self, chans, out);
    }
}

/// A k-bounce ELP's prefixes alone: what [`ElpSet::successors_into`] steps
/// for the family, channel by channel.
impl Record for KbSources {
    fn union(&mut self, other: Self) {
        KbSources::union(self, &other);
    }
    fn subtract_seen(&mut self, seen: &mut Self) {
        KbSources::subtract_seen(self, seen);
    }
    fn is_empty(&self) -> bool {
        KbSources::is_empty(self)
    }
    fn successors_into(
        &self,
        elp: &ElpSet,
        topo: &Topology,
        c: ChannelId,
        _hop: u32,
        chans: &mut Vec<ChannelId>,
        out: &mut Vec<Self>,
    ) {
        let kb = elp.kbounce.as_ref().expect("a k-bounce ELP");
        for &c2 in topo.out_channels(topo.channel_dst(c)) {
            let q = kb.step(self, c, c2);
            if !q.is_empty() {
                chans.push(c2);
                out.push(q);
            }
        }
    }
}
