//! The installed rules compiled for replay: packet states (a channel or
//! host port, and a tag) and, per state, its transitions.

use super::NONE;
use crate::rules::RuleSet;
use tagger_generators::{ChannelId, NodeId, Topology};

/// The installed rules compiled for replay: packet states and, per state,
/// its transitions sorted by out channel.
#[derive(Debug)]
pub struct Compiled {
    links: usize,
    /// States of position `p` (a channel, or `2L + v` for the host ports of
    /// node `v`) are `st_off[p]..st_off[p + 1]`, by tag.
    st_off: Vec<u32>,
    st_tag: Vec<u32>,
    /// Transitions of state `s`: `tr_off[s]..tr_off[s + 1]` of `tr`, sorted
    /// by out channel: `(out channel, next state, entry index)`.
    tr_off: Vec<u32>,
    tr: Vec<(ChannelId, u32, u32)>,
    /// The tag hosts send.
    pub initial_tag: u32,
    /// Per node, the position of each of its ports among its out channels
    /// (`slot[c]` for an out channel `c`), and per node the base of its
    /// transition indices (`(deg + 1) * deg` each: in-ports, host, x out).
    slot: Vec<u32>,
    trans_base: Vec<u64>,
}

impl Compiled {
    /// Compiles `rules` (already verified for `topo`).
    pub fn new(topo: &Topology, rules: &RuleSet) -> Self {
        let l = topo.link_count();
        let host = |v: NodeId| (2 * l) as u32 + v;
        let into = |link: u32, node: NodeId| -> ChannelId {
            let [a, _] = topo.links()[link as usize];
            if a == node { 2 * link + 1 } else { 2 * link }
        };
        // (position, tag) of every state, and every transition by its from
        // state's (position, tag).
        let mut keys: Vec<(u32, u32)> = Vec::with_capacity(2 * rules.entries.len());
        let mut raw: Vec<((u32, u32), ChannelId, u32, u32)> =
            Vec::with_capacity(rules.entries.len());
        for (i, e) in rules.entries.iter().enumerate() {
            let from = e.in_link.map_or(host(e.node), |k| into(k, e.node));
            let out = into(e.out_link, e.node) ^ 1;
            keys.push((from, e.tag));
            keys.push((out, e.next_tag));
            raw.push(((from, e.tag), out, e.next_tag, i as u32));
        }
        for &v in topo.endpoints() {
            keys.push((host(v), rules.initial_tag));
        }
        keys.sort_unstable();
        keys.dedup();
        let positions = 2 * l + topo.node_count();
        let mut st_off = vec![0u32; positions + 1];
        for &(p, _) in &keys {
            st_off[p as usize + 1] += 1;
        }
        for i in 0..positions {
            st_off[i + 1] += st_off[i];
        }
        let st_tag: Vec<u32> = keys.iter().map(|&(_, t)| t).collect();
        let id = |k: (u32, u32)| keys.binary_search(&k).expect("every key is a state") as u32;
        let mut tr: Vec<(u32, ChannelId, u32, u32)> = raw
            .into_iter()
            .map(|(from, out, nt, i)| (id(from), out, id((out, nt)), i))
            .collect();
        tr.sort_unstable();
        let mut tr_off = vec![0u32; keys.len() + 1];
        for &(s, ..) in &tr {
            tr_off[s as usize + 1] += 1;
        }
        for i in 0..keys.len() {
            tr_off[i + 1] += tr_off[i];
        }
        let mut slot = vec![0u32; 2 * l];
        let mut trans_base = Vec::with_capacity(topo.node_count() + 1);
        let mut acc = 0u64;
        for v in 0..topo.node_count() as NodeId {
            trans_base.push(acc);
            let outs = topo.out_channels(v);
            for (i, &c) in outs.iter().enumerate() {
                slot[c as usize] = i as u32;
            }
            acc += (outs.len() as u64 + 1) * outs.len() as u64;
        }
        trans_base.push(acc);
        Compiled {
            links: l,
            st_off,
            st_tag,
            tr_off,
            tr: tr.into_iter().map(|(_, c, s, i)| (c, s, i)).collect(),
            initial_tag: rules.initial_tag,
            slot,
            trans_base,
        }
    }

    pub(super) fn states(&self) -> usize {
        self.st_tag.len()
    }

    pub(super) fn host_pos(&self, v: NodeId) -> u32 {
        (2 * self.links) as u32 + v
    }

    pub(super) fn states_at(&self, pos: u32) -> std::ops::Range<u32> {
        self.st_off[pos as usize]..self.st_off[pos as usize + 1]
    }

    /// The state hosts at `v` inject.
    pub(super) fn host_state(&self, v: NodeId) -> u32 {
        let r = self.states_at(self.host_pos(v));
        r.clone()
            .find(|&s| self.st_tag[s as usize] == self.initial_tag)
            .unwrap_or(NONE)
    }

    /// Calls `f(i, step)` for each channel `list[i]` (sorted): `step` is
    /// `(next state, entry)` of state `s` over it, or `None` when no rule
    /// matches (the packet goes lossy). One merge of two sorted lists.
    #[inline]
    pub(super) fn each_step(
        &self,
        s: u32,
        list: &[ChannelId],
        mut f: impl FnMut(usize, Option<(u32, u32)>),
    ) {
        let t: &[(ChannelId, u32, u32)] = if s == NONE {
            &[]
        } else {
            &self.tr[self.tr_off[s as usize] as usize..self.tr_off[s as usize + 1] as usize]
        };
        let mut j = 0;
        for (i, &c) in list.iter().enumerate() {
            while j < t.len() && t[j].0 < c {
                j += 1;
            }
            if j < t.len() && t[j].0 == c {
                f(i, Some((t[j].1, t[j].2)));
                j += 1;
            } else {
                f(i, None);
            }
        }
    }

    /// Bits in the entry index space: one past the largest entry a
    /// transition names.
    pub(super) fn entries(&self) -> usize {
        self.tr.iter().map(|x| x.2 as usize + 1).max().unwrap_or(0)
    }

    /// Bits in the transition index space.
    pub fn transitions(&self) -> u64 {
        *self.trans_base.last().unwrap_or(&0)
    }

    /// Index of the hop from position `pos` (an in channel of `v`, or its
    /// host ports) out over `c2` at node `v`.
    pub(super) fn transition(&self, topo: &Topology, v: NodeId, pos: u32, c2: ChannelId) -> u64 {
        let deg = topo.degree(v) as u64;
        let in_slot = if pos as usize >= 2 * self.links {
            deg
        } else {
            self.slot[(pos ^ 1) as usize] as u64
        };
        self.trans_base[v as usize] + in_slot * deg + self.slot[c2 as usize] as u64
    }

    /// The in channel or host port a transition index leaves from, and the
    /// out channel (for the dependency graph; host hops return `None`).
    pub fn channels_of(&self, topo: &Topology, idx: u64) -> Option<(ChannelId, ChannelId)> {
        let v = self.trans_base.partition_point(|&b| b <= idx) - 1;
        let outs = topo.out_channels(v as NodeId);
        let deg = outs.len() as u64;
        let off = idx - self.trans_base[v];
        let (i, j) = (off / deg, off % deg);
        (i < deg).then(|| (outs[i as usize] ^ 1, outs[j as usize]))
    }
}
