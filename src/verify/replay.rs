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
/// such. A shortest-path ELP alone is replayed pulled ([`ShortestOnly`]):
/// a continuation carries only the number of the state it leaves, and
/// each next state's sources are built once from the states that reach
/// it.
pub(super) fn replay(
    topo: &Topology,
    table: &Table<'_>,
    elp: &ElpSet,
    initial_tag: u32,
    r: &mut Report,
) {
    replay_pulling(topo, table, elp, initial_tag, r, true);
}

/// [`replay`]; without `pull`, a shortest-path ELP alone is replayed as
/// whole [`Prefixes`] records, pushed (the tests' oracle for
/// [`ShortestOnly`]).
fn replay_pulling(
    topo: &Topology,
    table: &Table<'_>,
    elp: &ElpSet,
    initial_tag: u32,
    r: &mut Report,
    pull: bool,
) {
    if elp.kbounce_alone() {
        replay_as(topo, table, elp, initial_tag, r, |p: Prefixes| p.kbounce);
    } else if elp.shortest_alone() && pull {
        replay_as(topo, table, elp, initial_tag, r, ShortestOnly);
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
        for (b, block) in frontier.chunks_mut(BLOCK).enumerate() {
            let found: Vec<Found<R>> = block
                .par_chunks_mut(CHUNK)
                .enumerate()
                .map(|(i, chunk)| {
                    let first = (b * BLOCK + i * CHUNK) as u32;
                    expand_chunk(topo, table, elp, hop, (first, chunk), parts, &part)
                })
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
        let done = &frontier;
        let parts: Vec<Vec<((ChannelId, u32), R)>> = next
            .into_par_iter()
            .zip(seen.par_iter_mut())
            .map(|(states, seen)| {
                states
                    .list
                    .into_iter()
                    .filter_map(|(k, g)| {
                        let mut p = R::finish(g, done, elp, topo, k.0, hop);
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

/// A hop's state with the prefixes that reach it.
type State<R> = ((ChannelId, u32), R);

/// What one chunk of a hop's frontier found: its continuations by
/// partition, the first missing entry in frontier order, and the
/// transitions replayed.
type Found<R> = (
    Vec<Vec<((ChannelId, u32), <R as Record>::Part)>>,
    Option<Violation>,
    u64,
);

/// Frontier states whose continuations are held at once, and per
/// parallel task.
const BLOCK: usize = 1 << 14;
const CHUNK: usize = 256;

/// Expands one chunk of a hop's frontier after `hop` channels (its
/// states from index `first`), looking each continuation up in the table.
fn expand_chunk<R: Record>(
    topo: &Topology,
    table: &Table<'_>,
    elp: &ElpSet,
    hop: u32,
    (first, chunk): (u32, &mut [State<R>]),
    parts: usize,
    part: &impl Fn(ChannelId) -> usize,
) -> Found<R> {
    let mut out: Vec<Vec<_>> = (0..parts).map(|_| Vec::new()).collect();
    let (mut missing, mut n) = (None, 0u64);
    // One state's continuations at a time, in buffers the chunk reuses.
    let (mut chans, mut prefs) = (Vec::new(), Vec::new());
    for (i, &mut ((c, t), ref mut p)) in chunk.iter_mut().enumerate() {
        let node = topo.channel_dst(c);
        let run = table.run(node as usize, Some(c >> 1), t);
        chans.clear();
        p.continuations(
            elp,
            topo,
            (c, hop),
            first + i as u32,
            &mut chans,
            &mut prefs,
        );
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
struct Merge<R: Record> {
    base: ChannelId,
    len: usize,
    /// Per tag met, each channel's index in `list` (`u32::MAX`: none).
    by_tag: Vec<(u32, Vec<u32>)>,
    /// The states, in order of first reach, with what reached them.
    list: Vec<((ChannelId, u32), R::Gathered)>,
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

    /// Adds what continuation `q` brings to state `k`.
    fn add(&mut self, k: (ChannelId, u32), q: R::Part) {
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
            self.list.push((k, R::gather(q)));
        } else {
            R::add(&mut self.list[*at as usize].1, q);
        }
    }
}

/// What the replay carries per state: the ELP prefixes that reach it.
trait Record: Default + Send + Sync {
    /// What one continuation brings to the state it reaches.
    type Part: Send;
    /// What a state holds of the hop's continuations that reach it.
    type Gathered: Send;
    /// Appends the channels the prefixes continue on from the state at
    /// `(channel, hop)` (prefixes of `hop` channels ending there), and
    /// what each continuation brings. The state is number `me` of the
    /// hop; a record whose parts carry its prefixes gives them up (it is
    /// not read again).
    fn continuations(
        &mut self,
        elp: &ElpSet,
        topo: &Topology,
        at: (ChannelId, u32),
        me: u32,
        chans: &mut Vec<ChannelId>,
        parts: &mut Vec<Self::Part>,
    );
    fn gather(part: Self::Part) -> Self::Gathered;
    fn add(gathered: &mut Self::Gathered, part: Self::Part);
    /// The prefixes that reach channel `c2` after `hop + 1` channels, from
    /// what its state gathered of the hop's states `from`.
    fn finish(
        gathered: Self::Gathered,
        from: &[State<Self>],
        elp: &ElpSet,
        topo: &Topology,
        c2: ChannelId,
        hop: u32,
    ) -> Self;
    /// Drops the prefixes already in `seen` and records the rest there.
    fn subtract_seen(&mut self, seen: &mut Self);
    fn is_empty(&self) -> bool;
}

/// A record that hands each continuation its own prefixes, merged where
/// they meet.
trait Pushed: Default + Send + Sync {
    fn union(&mut self, other: Self);
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

impl<P: Pushed> Record for P {
    type Part = P;
    type Gathered = P;
    fn continuations(
        &mut self,
        elp: &ElpSet,
        topo: &Topology,
        (c, hop): (ChannelId, u32),
        _me: u32,
        chans: &mut Vec<ChannelId>,
        parts: &mut Vec<P>,
    ) {
        // Freed once expanded, so that this hop's sets and the next's are
        // not all held together.
        std::mem::take(self).successors_into(elp, topo, c, hop, chans, parts);
    }
    fn gather(part: P) -> P {
        part
    }
    fn add(gathered: &mut P, part: P) {
        gathered.union(part);
    }
    fn finish(g: P, _: &[State<P>], _: &ElpSet, _: &Topology, _: ChannelId, _: u32) -> P {
        g
    }
    fn subtract_seen(&mut self, seen: &mut Self) {
        Pushed::subtract_seen(self, seen);
    }
    fn is_empty(&self) -> bool {
        Pushed::is_empty(self)
    }
}

impl Pushed for Prefixes {
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
impl Pushed for KbSources {
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

/// A shortest-path ELP's prefixes alone, pulled rather than pushed: a
/// continuation brings only the number of the state it leaves, and once
/// the hop is expanded each next state ORs the source sets of the states
/// that reach it and ANDs the row of its channel once
/// ([`crate::elp::Shortest::step_union`]), where each continuation built
/// its own intersection and the state merged them. The same sets, with
/// neither a set per continuation nor its allocation and merge.
#[derive(Default)]
struct ShortestOnly(Prefixes);

impl Record for ShortestOnly {
    type Part = u32;
    type Gathered = Vec<u32>;
    fn continuations(
        &mut self,
        elp: &ElpSet,
        topo: &Topology,
        (c, hop): (ChannelId, u32),
        me: u32,
        chans: &mut Vec<ChannelId>,
        parts: &mut Vec<u32>,
    ) {
        let at = chans.len();
        elp.successor_channels(topo, c, hop, &self.0, chans);
        parts.extend(std::iter::repeat_n(me, chans.len() - at));
    }
    fn gather(part: u32) -> Vec<u32> {
        vec![part]
    }
    fn add(gathered: &mut Vec<u32>, part: u32) {
        gathered.push(part);
    }
    fn finish(
        from_states: Vec<u32>,
        from: &[State<Self>],
        elp: &ElpSet,
        topo: &Topology,
        c2: ChannelId,
        hop: u32,
    ) -> Self {
        let sp = elp.shortest.as_ref().expect("a shortest-path ELP");
        let sets = from_states
            .iter()
            .filter_map(|&i| from[i as usize].1.0.shortest.as_ref());
        ShortestOnly(Prefixes {
            shortest: sp.step_union(topo, sets, hop, c2),
            ..Default::default()
        })
    }
    fn subtract_seen(&mut self, seen: &mut Self) {
        self.0.subtract_seen(&mut seen.0);
    }
    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{plan_on_within, shortest_with_failures, topo};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// The pulled replay of a shortest-path ELP against the pushed one, on
    /// plans and on mutants of them (entries dropped, next tags changed):
    /// the same report, violations and transitions counted alike.
    #[test]
    fn pulled_shortest_replay_is_the_pushed_one() {
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let mut refused = 0;
        for (spec, algo) in [
            ("jellyfish:n=40,ports=8,r=5,seed=3", "greedy"),
            ("jellyfish:n=90,ports=12,r=7,seed=5", "greedy"),
            ("jellyfish:n=30,ports=6,r=4,seed=8", "brute"),
            ("hyperx:l=2,s=4,k=2,t=1", "greedy"),
            ("bcube:n=3,k=1", "greedy"),
            ("jellyfish:n=50,ports=8,r=5,seed=1 with failures", "greedy"),
        ] {
            let (t, elp, rules) = match spec.strip_suffix(" with failures") {
                None => plan_on_within(topo(spec), "shortest", algo, None),
                Some(spec) => {
                    let t = topo(spec);
                    let elp = shortest_with_failures(&t);
                    let cycle = crate::cycle::CycleBackend::Ordered;
                    let tg = crate::tagging::tag(&t, &elp, algo.parse().unwrap(), cycle).unwrap();
                    let rules = crate::rules::RuleSet::from_tagging(&t, &tg);
                    (t, elp, rules)
                }
            };
            for round in 0..12 {
                let mut mutant = rules.clone();
                if round > 0 {
                    for _ in 0..round {
                        let i = rng.random_range(0..mutant.entries.len());
                        if rng.random_bool(0.5) {
                            mutant.entries.remove(i);
                        } else {
                            mutant.entries[i].next_tag += 1;
                        }
                    }
                }
                let host_tags = mutant.host_tags();
                let checked = super::super::entries::check(&t, &mutant, &host_tags);
                let (mut pulled, mut pushed) = (Report::default(), Report::default());
                for &tag in &host_tags {
                    replay_pulling(&t, &checked.table, &elp, tag, &mut pulled, true);
                    replay_pulling(&t, &checked.table, &elp, tag, &mut pushed, false);
                }
                assert_eq!(pulled, pushed, "{spec} {algo} round {round}");
                assert!(pulled.transitions_replayed > 0);
                if round == 0 {
                    assert!(pulled.ok(), "{spec}: the plan itself replays");
                }
                refused += usize::from(!pulled.ok());
            }
        }
        assert!(refused > 20, "the mutants are caught ({refused})");
    }
}
