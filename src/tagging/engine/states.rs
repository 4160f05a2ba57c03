//! The walk's reached states `(channel, tag)`, the prefixes explored from
//! each, and their decisions.

use super::chunk::Chunk;
use super::{KeyFn, NONE};
use crate::budget::bytes_of;
use crate::elp::Prefixes;
use crate::error::Result;
use std::sync::atomic::AtomicU32;
use std::sync::atomic::Ordering::Relaxed;
use tagger_generators::{ChannelId, Topology};

/// The walk's reached states and their decisions.
pub(super) struct States<'a> {
    pub(super) topo: &'a Topology,
    /// `slot_of[t][c]`: the slot of state `(c, t)`, or `NONE`; one array per
    /// tag value, allocated when the tag first appears.
    pub(super) slot_of: Vec<Vec<u32>>,
    pub(super) key: Vec<(ChannelId, u32)>,
    /// Prefixes already explored from each state, and the heap bytes behind
    /// them all (kept up to date by [`States::explore`]).
    pub(super) seen: Vec<Prefixes>,
    pub(super) seen_heap: u64,
    /// Where a state's decisions start in `decisions`, or `usize::MAX`.
    pub(super) decision_off: Vec<usize>,
    /// Next tag per (state, out-port of the channel's head); 0 = undecided.
    /// Atomic so that independent decisions can be stored in parallel.
    pub(super) decisions: Vec<AtomicU32>,
    /// A channel's port number at its tail.
    pub(super) port: Vec<u32>,
}

impl<'a> States<'a> {
    pub(super) fn new(topo: &'a Topology) -> Self {
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

    #[inline]
    pub(super) fn slot(&mut self, c: ChannelId, t: u32) -> u32 {
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
    pub(super) fn explore(&mut self, s: u32, p: &mut Prefixes) {
        let seen = &mut self.seen[s as usize];
        let before = seen.heap_bytes();
        p.subtract_seen(seen);
        self.seen_heap = self.seen_heap - before + seen.heap_bytes();
    }

    /// Estimated bytes held by the walk with a frontier of `frontier` states
    /// (`frontier_heap` bytes behind their prefixes) and these continuation
    /// buffers. Constant time in the states: heap sizes are kept as running
    /// sums, so the budget costs the hop loop nothing that grows.
    pub(super) fn bytes(&self, frontier: usize, frontier_heap: u64, bufs: &[Chunk]) -> u64 {
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

    /// The next tag of key `(state s, c2)`: its decision, or where none
    /// is stored yet, `f`'s, stored (each slot belongs to one chunk of the
    /// frontier, so relaxed stores suffice).
    pub(super) fn next_tag(&self, f: Option<&KeyFn<'_>>, s: u32, c2: ChannelId) -> Result<u32> {
        let slot = &self.decisions[self.decision_off[s as usize] + self.port[c2 as usize] as usize];
        match (slot.load(Relaxed), f) {
            (0, Some(f)) => {
                let (c, t) = self.key[s as usize];
                let t2 = f(c, t, c2)?;
                slot.store(t2, Relaxed);
                Ok(t2)
            }
            (t2, _) => Ok(t2),
        }
    }

    /// Offset of state `s`'s decisions, allocating them on first use.
    #[inline]
    pub(super) fn decisions_of(&mut self, s: u32) -> usize {
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
