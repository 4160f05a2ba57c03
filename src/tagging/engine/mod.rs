//! The hop-ordered walk over the ELP language that every algorithm shares.
//!
//! The walk's phases (`Walker`: seed, decide, expand, advance, finish)
//! are read in order here; a frontier chunk's continuations are in
//! `chunk.rs`, the reached states and their decisions in `states.rs`.

use crate::budget::{Budget, bytes_of};
use crate::elp::{ElpSet, Prefixes};
use crate::error::Result;
use chunk::Chunk;
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use states::States;
use std::sync::atomic::AtomicU32;
use std::sync::atomic::Ordering::Relaxed;
use tagger_generators::{ChannelId, Topology};

mod chunk;
mod states;

/// Stands for "arrived from a host port" in keys.
pub const HOST: ChannelId = u32::MAX;

/// Raw output of a walk: every reached state `(channel, tag)` (in order of
/// first reach) and the decided keys, held per state as next tags over the
/// out-ports of the channel's head (see [`Walk::keys`]).
#[derive(Debug, Default)]
pub struct Walk {
    pub states: Vec<(ChannelId, u32)>,
    /// First channels of ELPs: keys `(HOST, 1, c) -> 1`.
    pub first_hops: Vec<ChannelId>,
    /// Per state, where its decisions start in `decisions` (`usize::MAX`:
    /// none).
    decision_off: Vec<usize>,
    /// Next tag per (state, out-port); 0 = no key.
    decisions: Vec<u32>,
}

impl Walk {
    /// A walk made by a pass of its own (`clos` over a `kbounce:K` ELP):
    /// its reached states, first hops, and per state where its next tags
    /// over the out-ports of the channel's head start in `decisions`
    /// (`usize::MAX`: no key continues from it).
    pub(crate) fn from_parts(
        states: Vec<(ChannelId, u32)>,
        first_hops: Vec<ChannelId>,
        decision_off: Vec<usize>,
        decisions: Vec<u32>,
    ) -> Walk {
        Walk {
            states,
            first_hops,
            decision_off,
            decisions,
        }
    }

    /// Every decided key `((c1 or HOST, tag, c2), next tag)`: first hops,
    /// then by state in order of first reach and by port.
    pub fn keys<'a>(
        &'a self,
        topo: &'a Topology,
    ) -> impl Iterator<Item = ((ChannelId, u32, ChannelId), u32)> + 'a {
        let first = self.first_hops.iter().map(|&c| ((HOST, 1, c), 1));
        let rest = self
            .states
            .iter()
            .zip(&self.decision_off)
            .filter(|(_, off)| **off != usize::MAX)
            .flat_map(move |(&(c, t), &off)| {
                let out = topo.out_channels(topo.channel_dst(c));
                out.iter()
                    .zip(&self.decisions[off..off + out.len()])
                    .filter(|(_, t2)| **t2 != 0)
                    .map(move |(&c2, &t2)| ((c, t, c2), t2))
            });
        first.chain(rest)
    }

    /// Every decided key made into a `K` by `make(node, in channel (None:
    /// from a host port), tag, out channel, next tag)`, in the order of
    /// `(node, in channel, tag, out channel)` with host ports first: the
    /// order a sort of [`Walk::keys`] gives, built node by node in
    /// parallel instead (out-ports are listed by ascending channel, so a
    /// node's keys come out sorted once its states are). On fat-tree k=64
    /// `kbounce:2` (30M keys) collecting the keys and sorting them took 3.5
    /// s of the tag stage.
    ///
    /// `blank` fills the table before it is written; every slot is then
    /// written once.
    pub fn sorted_keys<K, F>(&self, topo: &Topology, blank: K, make: F) -> Vec<K>
    where
        K: Copy + Send + Sync,
        F: Fn(u32, Option<ChannelId>, u32, ChannelId, u32) -> K + Sync,
    {
        let n = topo.node_count();
        // Per node: its first hops, then its states with decisions.
        let mut first: Vec<Vec<ChannelId>> = vec![Vec::new(); n];
        for &c in &self.first_hops {
            first[topo.channel_src(c) as usize].push(c);
        }
        let mut states: Vec<Vec<u32>> = vec![Vec::new(); n];
        for (s, (&(c, _), &off)) in self.states.iter().zip(&self.decision_off).enumerate() {
            if off != usize::MAX {
                states[topo.channel_dst(c) as usize].push(s as u32);
            }
        }
        // Each node's lists put in key order, and its keys counted.
        let sort_and_count = |v: usize, list: &mut Vec<ChannelId>, st: &mut Vec<u32>| -> usize {
            list.sort_unstable();
            st.sort_unstable_by_key(|&s| self.states[s as usize]);
            let deg = topo.degree(v as u32);
            list.len()
                + st.iter()
                    .map(|&s| {
                        let off = self.decision_off[s as usize];
                        self.decisions[off..off + deg]
                            .iter()
                            .filter(|&&t| t != 0)
                            .count()
                    })
                    .sum::<usize>()
        };
        let sizes: Vec<usize> = first
            .par_iter_mut()
            .zip(states.par_iter_mut())
            .enumerate()
            .map(|(v, (list, st))| sort_and_count(v, list, st))
            .collect();
        let total: usize = sizes.iter().sum();
        let mut keys = Vec::with_capacity(total);
        keys.par_extend(rayon::iter::repeat_n(blank, total));
        let mut parts: Vec<&mut [K]> = Vec::with_capacity(n);
        let mut rest = keys.as_mut_slice();
        for &size in &sizes {
            let (part, tail) = rest.split_at_mut(size);
            parts.push(part);
            rest = tail;
        }
        parts.into_par_iter().enumerate().for_each(|(v, part)| {
            let outs = topo.out_channels(v as u32);
            debug_assert!(outs.is_sorted(), "node {v}'s out-ports by channel");
            let mut at = 0;
            for &c in &first[v] {
                part[at] = make(v as u32, None, 1, c, 1);
                at += 1;
            }
            for &s in &states[v] {
                let (c, t) = self.states[s as usize];
                let off = self.decision_off[s as usize];
                for (&c2, &t2) in outs.iter().zip(&self.decisions[off..off + outs.len()]) {
                    if t2 != 0 {
                        part[at] = make(v as u32, Some(c), t, c2, t2);
                        at += 1;
                    }
                }
            }
        });
        keys
    }

    /// Heap bytes held (for memory budgets).
    pub fn heap_bytes(&self) -> u64 {
        bytes_of::<(ChannelId, u32)>(self.states.len())
            + bytes_of::<ChannelId>(self.first_hops.len())
            + bytes_of::<usize>(self.decision_off.len())
            + bytes_of::<u32>(self.decisions.len())
    }

    /// Number of decided keys, host ports included.
    pub fn key_count(&self) -> usize {
        self.first_hops.len() + self.decisions.iter().filter(|&&t| t != 0).count()
    }
}

/// How the walk gets the next tag of a key `(c1, t, c2)`.
pub enum Decider<'a> {
    /// A function of the key alone (brute, clos, the order plans of
    /// `search`): the walk decides each key in parallel where the expansion
    /// meets it, in any order, instead of collecting the hop's keys; on
    /// `fattree:k=48` `kbounce:2` that is 20M keys the brute-force tagged
    /// graph no longer copies around.
    Independent(&'a KeyFn<'a>),
    /// Decisions that depend on the ones before (greedy's dependency
    /// graphs): every key of a hop is collected first, then decided in one
    /// call, in order.
    InOrder(&'a mut dyn HopDecider),
}

impl Decider<'_> {
    /// The decision function of an independent decider.
    fn key_fn(&self) -> Option<&KeyFn<'_>> {
        match self {
            Decider::Independent(f) => Some(*f),
            Decider::InOrder(_) => None,
        }
    }

    /// Heap bytes the decider holds, charged with the walk's own tables.
    fn heap_bytes(&self) -> u64 {
        match self {
            Decider::Independent(_) => 0,
            Decider::InOrder(d) => d.heap_bytes(),
        }
    }
}

/// A decider that takes a hop's keys together ([`Decider::InOrder`]).
pub trait HopDecider {
    /// Decides one hop's new keys, given in decision order; returns their
    /// next tags in the same order. Every key of a hop is known before any
    /// is decided, so a decider may split the batch where decisions are
    /// independent.
    ///
    /// # Errors
    /// When a key cannot be decided (the algorithm does not apply).
    fn decide_hop(&mut self, keys: &[(ChannelId, u32, ChannelId)]) -> Result<Vec<u32>>;

    /// Heap bytes the decider holds (greedy's dependency graphs).
    fn heap_bytes(&self) -> u64 {
        0
    }
}

/// A decision that depends on its key `(c1, t, c2)` alone.
pub type KeyFn<'a> = dyn Fn(ChannelId, u32, ChannelId) -> Result<u32> + Sync + 'a;

/// A [`HopDecider`] that takes keys one at a time, in order.
#[derive(Debug)]
pub struct PerKey<F>(pub F);

impl<F: FnMut(ChannelId, u32, ChannelId) -> Result<u32>> HopDecider for PerKey<F> {
    fn decide_hop(&mut self, keys: &[(ChannelId, u32, ChannelId)]) -> Result<Vec<u32>> {
        keys.iter()
            .map(|&(c1, t, c2)| (self.0)(c1, t, c2))
            .collect()
    }
}

/// Walks the language from every first hop (tag 1), asking `decide` once per
/// new key `(c1, t, c2)`; `decide` returns the tag the packet carries on
/// `c2`. Prefix sets already explored at a state are not explored again, so
/// the work is bounded by states times prefix classes.
///
/// Continuations of a hop are computed in parallel; the hop's new keys go to
/// the decider in ascending `(c1, t, c2)` order, or, with `order`, in an
/// order shuffled by that seed (greedy restarts).
///
/// States live in dense tables (one slot per reached `(channel, tag)`, found
/// through a per-tag array over channels) and a state's decisions in an
/// array over the out-ports of its channel's head, so the walk does no
/// hashing: at tens of millions of keys, hash maps were most of its time.
///
/// Each hop runs the [`Walker`]'s phases in turn: decide the hop's keys
/// ([`Walker::decide_in_order`], or only open their slots when decisions
/// are independent of order), expand and merge the continuations
/// ([`Walker::expand`]), and make them the next frontier
/// ([`Walker::advance`]). For an ELP of shortest paths alone the
/// expansion is pulled ([`Walker::expand_pulled`]): each next state's
/// sources are built once, from the states that reach it.
///
/// # Errors
/// Whatever `decide` returns, or the budget's refusal.
pub fn walk(
    topo: &Topology,
    elp: &ElpSet,
    order: Option<u64>,
    decide: Decider<'_>,
    budget: &Budget,
) -> Result<Walk> {
    walk_pulling(topo, elp, order, decide, budget, elp.shortest_alone())
}

/// [`walk`]; `pull` expands with [`Walker::expand_pulled`] (only for a
/// shortest-path ELP alone; the tests' oracle is the other way).
fn walk_pulling(
    topo: &Topology,
    elp: &ElpSet,
    order: Option<u64>,
    mut decide: Decider<'_>,
    budget: &Budget,
    pull: bool,
) -> Result<Walk> {
    let mut w = Walker::new(topo, elp, order, budget, pull);
    while !w.frontier.is_empty() {
        w.reserve_buffers();
        let lists = match &mut decide {
            // Decisions need no order: each is made where its key is met,
            // in the expansion.
            Decider::Independent(_) => {
                w.open_decisions();
                false
            }
            Decider::InOrder(d) => {
                w.decide_in_order(&mut **d)?;
                true
            }
        };
        w.expand(&decide, lists)?;
        w.advance();
    }
    Ok(w.finish())
}

/// The walk's state between phases: the reached states and their
/// decisions, the frontier of one hop with its prefix sets, and the
/// buffers reused from hop to hop.
struct Walker<'a> {
    topo: &'a Topology,
    elp: &'a ElpSet,
    order: Option<u64>,
    budget: &'a Budget,
    st: States<'a>,
    first_hops: Vec<ChannelId>,
    /// This hop's states with the prefix sets still to explore from them.
    frontier: Vec<(u32, Prefixes)>,
    /// Heap bytes behind the frontier's prefix records, for the budget.
    frontier_heap: u64,
    /// The next hop's states, in order of first reach, while they merge.
    next: Vec<(u32, Prefixes)>,
    next_heap: u64,
    /// Continuations waiting to be merged into `next`, by block of
    /// [`MERGE_BLOCK`] states ([`Walker::merge_wave`]).
    merges: Vec<Vec<(usize, Prefixes)>>,
    /// Per state, its index in `next` (NONE: not reached this hop).
    pending: Vec<u32>,
    /// Continuations, one buffer per chunk of the frontier, kept across
    /// hops so their memory is reused rather than freed and faulted in
    /// again.
    bufs: Vec<Chunk>,
    hop: u32,
    /// Whether to expand by [`Walker::expand_pulled`].
    pull: bool,
}

impl<'a> Walker<'a> {
    /// Seeds the frontier with every first hop, at tag 1.
    fn new(
        topo: &'a Topology,
        elp: &'a ElpSet,
        order: Option<u64>,
        budget: &'a Budget,
        pull: bool,
    ) -> Self {
        let mut st = States::new(topo);
        let mut first_hops = Vec::new();
        let mut frontier: Vec<(u32, Prefixes)> = Vec::new();
        let mut frontier_heap = 0;
        for (c, mut p) in elp.initial(topo) {
            first_hops.push(c);
            let s = st.slot(c, 1);
            st.explore(s, &mut p);
            frontier_heap += p.heap_bytes();
            frontier.push((s, p));
        }
        Walker {
            topo,
            elp,
            order,
            budget,
            st,
            first_hops,
            frontier,
            frontier_heap,
            next: Vec::new(),
            next_heap: 0,
            merges: Vec::new(),
            pending: Vec::new(),
            bufs: Vec::new(),
            hop: 1,
            pull,
        }
    }

    /// Chunks of this hop's frontier.
    fn chunks(&self) -> usize {
        self.frontier.len().div_ceil(CHUNK)
    }

    fn reserve_buffers(&mut self) {
        let chunks = self.chunks();
        if self.bufs.len() < chunks {
            self.bufs.resize_with(chunks, Chunk::default);
        }
    }

    /// Gives every frontier state its decision slots, for a decider that
    /// decides each key where the expansion meets it.
    fn open_decisions(&mut self) {
        for (s, _) in &self.frontier {
            self.st.decisions_of(*s);
        }
    }

    /// Greedy needs the hop's keys in order before any is decided, but not
    /// their prefix sets: a first pass finds the continuing channels only,
    /// the new keys are collected in frontier order (ascending `(c1, t,
    /// c2)`, or shuffled by `order`), decided in one call, and their next
    /// tags stored; the prefix sets are built by [`Walker::expand`].
    fn decide_in_order(&mut self, decide: &mut dyn HopDecider) -> Result<()> {
        let chunks = self.chunks();
        let (topo, elp, hop) = (self.topo, self.elp, self.hop);
        let st = &self.st;
        self.frontier
            .par_chunks(CHUNK)
            .zip(self.bufs[..chunks].par_iter_mut())
            .for_each(|(fr, buf)| {
                buf.list_successors(fr, |s, p, out| {
                    elp.successor_channels(topo, st.key[s as usize].0, hop, p, out)
                })
            });
        self.budget.check(
            "tagging",
            self.st.bytes(
                self.frontier.len(),
                self.frontier_heap,
                &self.bufs[..chunks],
            ) + decide.heap_bytes(),
        )?;
        // The hop's new keys and where their decisions go, in frontier
        // order; found in parallel once every state with continuations has
        // its decision array.
        for (fr, buf) in self.frontier.chunks(CHUNK).zip(&self.bufs) {
            for ((s, _), list) in fr.iter().zip(buf.lists()) {
                if !list.is_empty() {
                    self.st.decisions_of(*s);
                }
            }
        }
        let st = &self.st;
        let (port, decisions, key, offs) = (&st.port, &st.decisions, &st.key, &st.decision_off);
        let parts: Vec<(Vec<RuleKey>, Vec<usize>)> = self
            .frontier
            .par_chunks(CHUNK)
            .zip(self.bufs[..chunks].par_iter())
            .map(|(fr, buf)| {
                let (mut ks, mut ats) = (Vec::new(), Vec::new());
                for ((s, _), list) in fr.iter().zip(buf.lists()) {
                    let (c, t) = key[*s as usize];
                    let off = offs[*s as usize];
                    for c2 in list {
                        let at = off + port[*c2 as usize] as usize;
                        if decisions[at].load(Relaxed) == 0 {
                            ks.push((c, t, *c2));
                            ats.push(at);
                        }
                    }
                }
                (ks, ats)
            })
            .collect();
        let n: usize = parts.iter().map(|p| p.0.len()).sum();
        // The hop's keys and slots, held twice while they are joined, then
        // the decider's answers and its per-priority index lists.
        self.budget.check(
            "tagging",
            st.bytes(
                self.frontier.len(),
                self.frontier_heap,
                &self.bufs[..chunks],
            ) + decide.heap_bytes()
                + 2 * (bytes_of::<RuleKey>(n) + bytes_of::<usize>(n))
                + bytes_of::<u32>(n)
                + bytes_of::<usize>(n),
        )?;
        let (mut asked, mut at) = (Vec::with_capacity(n), Vec::with_capacity(n));
        for (ks, ats) in parts {
            asked.extend(ks);
            at.extend(ats);
        }
        if let Some(seed) = self.order {
            let mut rng = ChaCha8Rng::seed_from_u64(crate::seed::mix(seed, hop as u64));
            let mut perm: Vec<usize> = (0..asked.len()).collect();
            perm.shuffle(&mut rng);
            asked = perm.iter().map(|&i| asked[i]).collect();
            at = perm.iter().map(|&i| at[i]).collect();
        }
        let tags = decide.decide_hop(&asked)?;
        for (at, t2) in at.into_iter().zip(tags) {
            *self.st.decisions[at].get_mut() = t2;
        }
        Ok(())
    }

    /// Builds the next hop's states: continuations a wave of chunks at a
    /// time. Each chunk expands its states and merges what reaches the same
    /// state in parallel, holding one state's continuations at a time; then
    /// a sequential pass numbers new states in order of first reach and
    /// merges across chunks. Only a wave's continuations are ever held, not
    /// the hop's (on Jellyfish-10000 `shortest`, 5M sets of 157 words), and
    /// a frontier state's prefix set is freed once expanded, so that the
    /// two hops' sets are not all held together (Jellyfish 10000: the tag
    /// stage at most 1.66 GB instead of 1.83).
    /// Chunk merging keeps the order of first reach and of explicit path
    /// ids, so the result equals one sequential pass. A key's decision slot
    /// belongs to the one chunk holding its state, so relaxed stores
    /// suffice; errors come in key order, as a sequential decider would
    /// report them.
    fn expand(&mut self, decide: &Decider, lists: bool) -> Result<()> {
        if self.pull {
            return self.expand_pulled(decide, lists);
        }
        let (topo, elp, hop) = (self.topo, self.elp, self.hop);
        self.next.clear();
        self.next_heap = 0;
        let frontier_len = self.frontier.len();
        // Out of `self` while its waves are merged into `self.next`.
        let mut frontier = std::mem::take(&mut self.frontier);
        for wave in frontier.chunks_mut(CHUNK * WAVE) {
            let nch = wave.len().div_ceil(CHUNK);
            let wave_heap: u64 = wave.iter().map(|(_, p)| p.heap_bytes()).sum();
            let st = &self.st;
            let f = decide.key_fn();
            let results: Vec<Result<()>> = wave
                .par_chunks_mut(CHUNK)
                .zip(self.bufs[..nch].par_iter_mut())
                .map(|(fr, buf)| {
                    buf.expand_merged(
                        fr,
                        st.port.len(),
                        |s, p, chans, prefs| {
                            elp.successors_into(topo, st.key[s as usize].0, hop, p, chans, prefs)
                        },
                        |s, c2| st.next_tag(f, s, c2),
                    )
                })
                .collect();
            results.into_iter().collect::<Result<()>>()?;
            self.frontier_heap -= wave_heap;
            self.budget.check(
                "tagging",
                self.st.bytes(
                    frontier_len + self.next.len(),
                    self.frontier_heap + self.next_heap,
                    &self.bufs[..nch],
                ) + decide.heap_bytes(),
            )?;
            self.merge_wave(nch);
        }
        self.frontier = frontier;
        Ok(())
    }

    /// [`Walker::expand`] for an ELP of shortest paths alone, pulled: the
    /// continuations are found as channels and next tags only (in
    /// parallel), a sequential pass numbers the next states in order of
    /// first reach and lists for each the frontier states that reach it,
    /// and each next state's sources are then the step of their union
    /// ([`crate::elp::Shortest::step_union`], in parallel): the sets
    /// [`Walker::expand`] builds, without a set per continuation (on
    /// Jellyfish 10000, 5M of them per hop) nor their merging.
    ///
    /// With `lists`, the chunk buffers hold the continuing channels of
    /// every frontier state already ([`Walker::decide_in_order`]'s).
    fn expand_pulled(&mut self, decide: &Decider, lists: bool) -> Result<()> {
        let (topo, elp, hop) = (self.topo, self.elp, self.hop);
        let sp = elp.shortest.as_ref().expect("a shortest-path ELP");
        let chunks = self.chunks();
        let st = &self.st;
        let f = decide.key_fn();
        let results: Vec<Result<()>> = self
            .frontier
            .par_chunks(CHUNK)
            .zip(self.bufs[..chunks].par_iter_mut())
            .map(|(fr, buf)| {
                if !lists {
                    buf.list_successors(fr, |s, p, out| {
                        elp.successor_channels(topo, st.key[s as usize].0, hop, p, out)
                    });
                }
                let mut tags = std::mem::take(&mut buf.next_tag);
                tags.clear();
                for ((s, _), list) in fr.iter().zip(buf.lists()) {
                    for &c2 in list {
                        tags.push(st.next_tag(f, *s, c2)?);
                    }
                }
                buf.next_tag = tags;
                Ok(())
            })
            .collect();
        results.into_iter().collect::<Result<()>>()?;
        self.next.clear();
        let mut from: Vec<Vec<u32>> = Vec::new();
        for k in 0..chunks {
            let mut start = 0;
            for j in 0..self.bufs[k].ends.len() {
                let (i, end) = ((k * CHUNK + j) as u32, self.bufs[k].ends[j]);
                for at in start..end {
                    let (c2, t2) = (self.bufs[k].chans[at], self.bufs[k].next_tag[at]);
                    match reach(&mut self.st, &mut self.pending, self.next.len(), c2, t2) {
                        (s2, None) => {
                            self.next.push((s2, Prefixes::default()));
                            from.push(vec![i]);
                        }
                        (_, Some(n)) => from[n as usize].push(i),
                    }
                }
                start = end;
            }
        }
        let (frontier, key) = (&self.frontier, &self.st.key);
        self.next
            .par_iter_mut()
            .zip(&from)
            .for_each(|((s2, q), from)| {
                let sets = from
                    .iter()
                    .filter_map(|&i| frontier[i as usize].1.shortest.as_ref());
                q.shortest = sp.step_union(topo, sets, hop, key[*s2 as usize].0);
            });
        self.next_heap = self.next.iter().map(|(_, q)| q.heap_bytes()).sum();
        self.budget.check(
            "tagging",
            self.st.bytes(
                self.frontier.len() + self.next.len(),
                self.frontier_heap + self.next_heap,
                &self.bufs[..chunks],
            ) + decide.heap_bytes()
                + bytes_of::<u32>(self.next.len() + self.st.key.len()),
        )
    }

    /// Merges a wave's continuations into the next hop's states: a
    /// sequential pass numbers the new states in order of first reach (the
    /// walk's state ids) and moves each one's first continuation into
    /// `next`, the others into `merges` by their block of `next`; then the
    /// blocks take their unions in parallel, each in the wave's order, so
    /// every set is the one a sequential pass builds. On Jellyfish 10000
    /// the unions in one pass were 3.6 s of the tag stage with one core
    /// idle.
    fn merge_wave(&mut self, nch: usize) {
        for buf in &mut self.bufs[..nch] {
            for ((&c2, q), &t2) in buf.chans.iter().zip(buf.prefs.drain(..)).zip(&buf.next_tag) {
                match reach(&mut self.st, &mut self.pending, self.next.len(), c2, t2) {
                    (s2, None) => {
                        self.next_heap += q.heap_bytes();
                        self.next.push((s2, q));
                    }
                    (_, Some(i)) => {
                        let b = i as usize / MERGE_BLOCK;
                        if self.merges.len() <= b {
                            self.merges.resize_with(b + 1, Vec::new);
                        }
                        self.merges[b].push((i as usize % MERGE_BLOCK, q));
                    }
                }
            }
        }
        self.next
            .par_chunks_mut(MERGE_BLOCK)
            .zip(self.merges.par_iter_mut())
            .for_each(|(block, merges)| {
                for (i, q) in merges.drain(..) {
                    block[i].1.union(q);
                }
            });
    }

    /// Makes the merged next states the frontier, in state-key order,
    /// keeping only the prefix sets not explored from them before.
    fn advance(&mut self) {
        let key = &self.st.key;
        self.next.sort_unstable_by_key(|(s, _)| key[*s as usize]);
        self.frontier.clear();
        self.frontier_heap = 0;
        for (s, mut p) in self.next.drain(..) {
            self.pending[s as usize] = NONE;
            self.st.explore(s, &mut p);
            if !p.is_empty() {
                self.frontier_heap += p.heap_bytes();
                self.frontier.push((s, p));
            }
        }
        self.hop += 1;
    }

    fn finish(self) -> Walk {
        Walk {
            states: self.st.key,
            first_hops: self.first_hops,
            decision_off: self.st.decision_off,
            decisions: self
                .st
                .decisions
                .into_iter()
                .map(AtomicU32::into_inner)
                .collect(),
        }
    }
}

/// State `(c2, t2)` and its index in the next hop's list (`pending`),
/// or `None` when the hop reaches it for the first time: it then gets
/// index `next_len`, and the caller appends it.
fn reach(
    st: &mut States<'_>,
    pending: &mut Vec<u32>,
    next_len: usize,
    c2: ChannelId,
    t2: u32,
) -> (u32, Option<u32>) {
    let s2 = st.slot(c2, t2) as usize;
    if pending.len() <= s2 {
        pending.resize(st.key.len(), NONE);
    }
    match pending[s2] {
        NONE => {
            pending[s2] = next_len as u32;
            (s2 as u32, None)
        }
        i => (s2 as u32, Some(i)),
    }
}

const NONE: u32 = u32::MAX;
/// `(c1 or HOST, tag, c2)`.
type RuleKey = (ChannelId, u32, ChannelId);
/// Frontier states per parallel task.
const CHUNK: usize = 1024;
/// Chunks whose continuations are held at once.
const WAVE: usize = 16;
/// States of `next` whose merges one parallel task takes.
const MERGE_BLOCK: usize = 2048;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::elp::ElpSpec;
    use crate::testing::{shortest_with_failures, topo};

    /// Every key and state of a walk expanded by pulling, against the same
    /// walk expanded by pushing, on shortest-path ELPs (parallel links and
    /// a failure scenario's blocks among them), for an in-order decider
    /// and an independent one.
    #[test]
    fn pulled_walk_is_the_pushed_one() {
        for (spec, elp) in [
            ("jellyfish:n=40,ports=8,r=5,seed=3", "shortest"),
            ("jellyfish:n=120,ports=14,r=9,seed=2", "shortest"),
            ("hyperx:l=2,s=4,k=2,t=1", "shortest"),
            ("bcube:n=3,k=1", "shortest"),
            ("jellyfish:n=30,ports=6,r=4,seed=8", "shortest"),
            ("jellyfish:n=50,ports=8,r=5,seed=1", "shortest+failures"),
            ("hyperx:l=2,s=3,k=2,t=1", "shortest+failures"),
        ] {
            let t = topo(spec);
            let e = match elp {
                "shortest+failures" => shortest_with_failures(&t),
                _ => ElpSet::build(&t, &ElpSpec::parse(elp).unwrap()).unwrap(),
            };
            assert!(e.shortest_alone());
            let budget = Budget::unlimited();
            let independent =
                |c1: ChannelId, t: u32, c2: ChannelId| Ok(t + u32::from(c2 < c1 && t < 4));
            let walks = |pull: bool| {
                let mut record = PerKey(|c1, t, c2| Ok(if (c1 ^ c2) % 3 == 0 { t + 1 } else { t }));
                let in_order =
                    walk_pulling(&t, &e, None, Decider::InOrder(&mut record), &budget, pull);
                let shuffled = walk_pulling(
                    &t,
                    &e,
                    Some(5),
                    Decider::InOrder(&mut record),
                    &budget,
                    pull,
                );
                let each = walk_pulling(
                    &t,
                    &e,
                    None,
                    Decider::Independent(&independent),
                    &budget,
                    pull,
                );
                [in_order, shuffled, each].map(|w| format!("{:?}", w.unwrap()))
            };
            let (pulled, pushed) = (walks(true), walks(false));
            for (a, b) in pulled.iter().zip(&pushed) {
                assert!(a == b, "{spec} {elp}");
            }
        }
    }
}
