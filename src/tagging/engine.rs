//! The hop-ordered walk over the ELP language that every algorithm shares.
//!
//! One file past 600 lines on purpose: the walk's phases (`Walker`: seed,
//! decide, expand, advance, finish) share its state and invariants and are
//! read in order.

use crate::budget::{Budget, bytes_of};
use crate::elp::{ElpSet, Prefixes};
use crate::error::Result;
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use std::sync::atomic::AtomicU32;
use std::sync::atomic::Ordering::Relaxed;
use tagger_generators::{ChannelId, Topology};

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
/// ([`Walker::advance`]).
///
/// # Errors
/// Whatever `decide` returns, or the budget's refusal.
pub fn walk(
    topo: &Topology,
    elp: &ElpSet,
    order: Option<u64>,
    mut decide: Decider<'_>,
    budget: &Budget,
) -> Result<Walk> {
    let mut w = Walker::new(topo, elp, order, budget);
    while !w.frontier.is_empty() {
        w.reserve_buffers();
        match &mut decide {
            // Decisions need no order: each is made where its key is met,
            // in the expansion.
            Decider::Independent(_) => w.open_decisions(),
            Decider::InOrder(d) => w.decide_in_order(&mut **d)?,
        }
        w.expand(&decide)?;
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
    /// Per state, its index in `next` (NONE: not reached this hop).
    pending: Vec<u32>,
    /// Continuations, one buffer per chunk of the frontier, kept across
    /// hops so their memory is reused rather than freed and faulted in
    /// again.
    bufs: Vec<Chunk>,
    hop: u32,
}

impl<'a> Walker<'a> {
    /// Seeds the frontier with every first hop, at tag 1.
    fn new(topo: &'a Topology, elp: &'a ElpSet, order: Option<u64>, budget: &'a Budget) -> Self {
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
            pending: Vec::new(),
            bufs: Vec::new(),
            hop: 1,
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
                buf.chans.clear();
                buf.ends.clear();
                for (s, p) in fr {
                    let c = st.key[*s as usize].0;
                    elp.successor_channels(topo, c, hop, p, &mut buf.chans);
                    buf.ends.push(buf.chans.len());
                }
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
    fn expand(&mut self, decide: &Decider) -> Result<()> {
        let (topo, elp, hop) = (self.topo, self.elp, self.hop);
        self.next.clear();
        self.next_heap = 0;
        let frontier_len = self.frontier.len();
        for wave in self.frontier.chunks_mut(CHUNK * WAVE) {
            let nch = wave.len().div_ceil(CHUNK);
            let wave_heap: u64 = wave.iter().map(|(_, p)| p.heap_bytes()).sum();
            let st = &self.st;
            let (port, decisions, key, offs) = (&st.port, &st.decisions, &st.key, &st.decision_off);
            let f = decide.key_fn();
            let results: Vec<Result<()>> = wave
                .par_chunks_mut(CHUNK)
                .zip(self.bufs[..nch].par_iter_mut())
                .map(|(fr, buf)| {
                    buf.expand_merged(
                        fr,
                        port.len(),
                        |s, p, chans, prefs| {
                            elp.successors_into(topo, key[s as usize].0, hop, p, chans, prefs)
                        },
                        |s, c2| {
                            let slot = &decisions[offs[s as usize] + port[c2 as usize] as usize];
                            match (slot.load(Relaxed), f) {
                                (0, Some(f)) => {
                                    let (c, t) = key[s as usize];
                                    let t2 = f(c, t, c2)?;
                                    slot.store(t2, Relaxed);
                                    Ok(t2)
                                }
                                (t2, _) => Ok(t2),
                            }
                        },
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
            for buf in &mut self.bufs[..nch] {
                for ((&c2, q), &t2) in buf.chans.iter().zip(buf.prefs.drain(..)).zip(&buf.next_tag)
                {
                    let s2 = self.st.slot(c2, t2) as usize;
                    if self.pending.len() <= s2 {
                        self.pending.resize(self.st.key.len(), NONE);
                    }
                    match self.pending[s2] {
                        NONE => {
                            self.pending[s2] = self.next.len() as u32;
                            self.next_heap += q.heap_bytes();
                            self.next.push((s2 as u32, q));
                        }
                        i => self.next[i as usize].1.union(q),
                    }
                }
            }
        }
        Ok(())
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

const NONE: u32 = u32::MAX;
/// `(c1 or HOST, tag, c2)`.
type RuleKey = (ChannelId, u32, ChannelId);
/// Frontier states per parallel task.
const CHUNK: usize = 1024;
/// Chunks whose continuations are held at once.
const WAVE: usize = 16;

/// Continuations of a chunk of the frontier. Greedy's first pass fills
/// `chans` and `ends` only: items `ends[i-1]..ends[i]` are the channels its
/// `i`-th state continues on. [`Chunk::expand_merged`] then fills `chans`,
/// `prefs` and `next_tag` with one merged item per reached state.
#[derive(Default)]
struct Chunk {
    chans: Vec<ChannelId>,
    prefs: Vec<Prefixes>,
    ends: Vec<usize>,
    /// Heap bytes behind the items' prefix records.
    heap: u64,
    /// After [`Chunk::expand_merged`]: the tag of each item.
    next_tag: Vec<u32>,
    /// After [`Chunk::expand_merged`]: the previous item with the same
    /// channel.
    same_channel: Vec<u32>,
    /// One state's continuations, in [`Chunk::expand_merged`].
    tmp_chans: Vec<ChannelId>,
    tmp_prefs: Vec<Prefixes>,
}

thread_local! {
    /// Per channel, the last merged item of the current chunk on it (`NONE`
    /// between chunks): a thread's scratch for [`Chunk::expand_merged`].
    static LAST_ON_CHANNEL: std::cell::RefCell<Vec<u32>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

impl Chunk {
    /// Adds continuation `(c2, q)` with next tag `t2`, merging it into an
    /// earlier one reaching the same state. `kept` items are merged so far;
    /// `last` is the thread's [`LAST_ON_CHANNEL`].
    fn push_merged(
        &mut self,
        last: &mut [u32],
        kept: &mut usize,
        c2: ChannelId,
        t2: u32,
        q: Prefixes,
    ) {
        let mut j = last[c2 as usize];
        while j != NONE && self.next_tag[j as usize] != t2 {
            j = self.same_channel[j as usize];
        }
        if j != NONE {
            self.prefs[j as usize].union(q);
            return;
        }
        self.same_channel.push(last[c2 as usize]);
        last[c2 as usize] = *kept as u32;
        self.next_tag.push(t2);
        if *kept < self.chans.len() {
            self.chans[*kept] = c2;
            self.prefs[*kept] = q;
        } else {
            self.chans.push(c2);
            self.prefs.push(q);
        }
        *kept += 1;
    }

    /// Runs `with_scratch` on the thread's [`LAST_ON_CHANNEL`] sized for
    /// `channels`, then clears the entries of the merged items.
    fn with_last<R>(
        &mut self,
        channels: usize,
        with_scratch: impl FnOnce(&mut Self, &mut [u32]) -> R,
    ) -> R {
        LAST_ON_CHANNEL.with_borrow_mut(|last| {
            if last.len() < channels {
                last.resize(channels, NONE);
            }
            self.next_tag.clear();
            self.same_channel.clear();
            let r = with_scratch(self, last);
            for c2 in &self.chans {
                last[*c2 as usize] = NONE;
            }
            r
        })
    }

    /// Expands each state of `fr` with `expand(state, prefixes, chans,
    /// prefs)`, which appends the state's continuations to the (empty)
    /// buffers, finds the next tag of each with `next_tag(state, channel)`,
    /// and keeps one merged item per reached state, in order of first
    /// reach. Stops at the first error.
    fn expand_merged(
        &mut self,
        fr: &mut [(u32, Prefixes)],
        channels: usize,
        mut expand: impl FnMut(u32, &Prefixes, &mut Vec<ChannelId>, &mut Vec<Prefixes>),
        mut next_tag: impl FnMut(u32, ChannelId) -> Result<u32>,
    ) -> Result<()> {
        self.chans.clear();
        self.prefs.clear();
        self.ends.clear();
        let (mut chans, mut prefs) = (
            std::mem::take(&mut self.tmp_chans),
            std::mem::take(&mut self.tmp_prefs),
        );
        let r = self.with_last(channels, |me, last| {
            let mut kept = 0;
            for (s, p) in fr {
                chans.clear();
                prefs.clear();
                // Freed once expanded: see [`Walker::expand`].
                let p = std::mem::take(p);
                expand(*s, &p, &mut chans, &mut prefs);
                for (&c2, q) in chans.iter().zip(prefs.drain(..)) {
                    let t2 = next_tag(*s, c2)?;
                    me.push_merged(last, &mut kept, c2, t2, q);
                }
            }
            Ok(())
        });
        self.tmp_chans = chans;
        self.tmp_prefs = prefs;
        self.heap = self.prefs.iter().map(Prefixes::heap_bytes).sum();
        r
    }

    fn lists(&self) -> impl Iterator<Item = &[ChannelId]> {
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        starts.zip(&self.ends).map(|(a, &b)| &self.chans[a..b])
    }
}

/// The walk's reached states and their decisions.
struct States<'a> {
    topo: &'a Topology,
    /// `slot_of[t][c]`: the slot of state `(c, t)`, or `NONE`; one array per
    /// tag value, allocated when the tag first appears.
    slot_of: Vec<Vec<u32>>,
    key: Vec<(ChannelId, u32)>,
    /// Prefixes already explored from each state, and the heap bytes behind
    /// them all (kept up to date by [`States::explore`]).
    seen: Vec<Prefixes>,
    seen_heap: u64,
    /// Where a state's decisions start in `decisions`, or `usize::MAX`.
    decision_off: Vec<usize>,
    /// Next tag per (state, out-port of the channel's head); 0 = undecided.
    /// Atomic so that independent decisions can be stored in parallel.
    decisions: Vec<AtomicU32>,
    /// A channel's port number at its tail.
    port: Vec<u32>,
}

impl<'a> States<'a> {
    fn new(topo: &'a Topology) -> Self {
        let mut port = vec![0; topo.channel_count()];
        for v in 0..topo.node_count() as u32 {
            for (i, &c) in topo.out_channels(v).iter().enumerate() {
                port[c as usize] = i as u32;
            }
        }
        States {
            topo,
            slot_of: Vec::new(),
            key: Vec::new(),
            seen: Vec::new(),
            seen_heap: 0,
            decision_off: Vec::new(),
            decisions: Vec::new(),
            port,
        }
    }

    fn slot(&mut self, c: ChannelId, t: u32) -> u32 {
        let t = t as usize;
        if self.slot_of.len() <= t {
            self.slot_of.resize_with(t + 1, Vec::new);
        }
        if self.slot_of[t].is_empty() {
            self.slot_of[t] = vec![NONE; self.topo.channel_count()];
        }
        let at = &mut self.slot_of[t][c as usize];
        if *at == NONE {
            *at = self.key.len() as u32;
            self.key.push((c, t as u32));
            self.seen.push(Prefixes::default());
            self.decision_off.push(usize::MAX);
        }
        *at
    }

    /// Drops from `p` the prefixes state `s` has already explored and
    /// records the rest as explored.
    fn explore(&mut self, s: u32, p: &mut Prefixes) {
        let seen = &mut self.seen[s as usize];
        let before = seen.heap_bytes();
        p.subtract_seen(seen);
        self.seen_heap = self.seen_heap - before + seen.heap_bytes();
    }

    /// Estimated bytes held by the walk with a frontier of `frontier` states
    /// (`frontier_heap` bytes behind their prefixes) and these continuation
    /// buffers. Constant time in the states: heap sizes are kept as running
    /// sums, so the budget costs the hop loop nothing that grows.
    fn bytes(&self, frontier: usize, frontier_heap: u64, bufs: &[Chunk]) -> u64 {
        // Capacities, not lengths: these tables grow by doubling, and
        // counting lengths left a tenth of the walk's peak unaccounted.
        let mut b = bytes_of::<(ChannelId, u32)>(self.key.capacity())
            + bytes_of::<Prefixes>(self.seen.capacity())
            + bytes_of::<usize>(self.decision_off.capacity())
            + bytes_of::<u32>(self.key.len() + self.port.len())
            + bytes_of::<AtomicU32>(self.decisions.capacity())
            + bytes_of::<u32>(self.slot_of.iter().map(Vec::len).sum())
            + self.seen_heap
            + bytes_of::<(u32, Prefixes)>(frontier)
            + frontier_heap;
        for c in bufs {
            b += bytes_of::<ChannelId>(c.chans.capacity())
                + bytes_of::<Prefixes>(c.prefs.capacity())
                + bytes_of::<u32>(c.next_tag.capacity() + c.same_channel.capacity())
                + c.heap;
        }
        b
    }

    /// Offset of state `s`'s decisions, allocating them on first use.
    fn decisions_of(&mut self, s: u32) -> usize {
        let off = &mut self.decision_off[s as usize];
        if *off == usize::MAX {
            let c = self.key[s as usize].0;
            *off = self.decisions.len();
            let deg = self.topo.degree(self.topo.channel_dst(c));
            self.decisions
                .resize_with(self.decisions.len() + deg, AtomicU32::default);
        }
        *off
    }
}
