//! `kbounce:K`: up-down walks with at most K bounces between ToRs of a
//! tiered (Clos) network.

use crate::bits::Bits;
use rayon::prelude::*;

/// Sources counted together in one DP pass.
const LANES: usize = 8;
use tagger_generators::{ChannelId, Topology};

/// Which endpoints a walk can still end at: none, exactly one, or several.
/// Enough to decide whether a prefix from source `s` can complete at an
/// endpoint other than `s`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ends {
    None,
    One(u32),
    Many,
}

impl Ends {
    fn add(self, other: Ends) -> Ends {
        match (self, other) {
            (Ends::None, x) | (x, Ends::None) => x,
            (Ends::One(a), Ends::One(b)) if a == b => Ends::One(a),
            _ => Ends::Many,
        }
    }
    /// Whether a walk from endpoint `source` can end somewhere else.
    pub fn allows(self, source: usize) -> bool {
        match self {
            Ends::None => false,
            Ends::One(x) => x as usize != source,
            Ends::Many => true,
        }
    }
}

/// The k-bounce walk language as an automaton over `(channel, bounces)`.
///
/// A walk moves one level up or down on every hop, never U-turns over the
/// link it just crossed, bounces (a down move followed by an up move) at most
/// K times, and ends with a down move at an endpoint other than its source.
/// Within a fixed bounce count the level first rises then falls, so the state
/// graph is acyclic, and `ends[(b, c)]` (where walks in state `(c, b)` can
/// finish) is one backward pass.
#[derive(Debug)]
pub struct KBounce {
    pub k: u32,
    up: Vec<bool>,
    ends: Vec<Ends>,
    /// States in forward topological order (`b` rising; within it, up
    /// channels by rising head level, then down channels by falling level).
    order: Vec<(u32, ChannelId)>,
    words: usize,
}

impl KBounce {
    /// # Errors
    /// A message when the topology lacks levels or has a link that does not
    /// join adjacent levels.
    pub fn build(topo: &Topology, k: u32) -> Result<Self, String> {
        if !topo.has_levels() {
            return Err(format!(
                "kbounce needs a tiered topology with a level on every node; {} has none",
                topo.name()
            ));
        }
        for (l, &[a, b]) in topo.links().iter().enumerate() {
            let (la, lb) = (topo.level(a).unwrap(), topo.level(b).unwrap());
            if la.abs_diff(lb) != 1 {
                return Err(format!(
                    "kbounce needs every link to join adjacent levels; link {l} joins node {a} (level {la}) and node {b} (level {lb})"
                ));
            }
        }
        let nc = topo.channel_count();
        let lvl = |c: ChannelId| topo.level(topo.channel_dst(c)).unwrap();
        let up: Vec<bool> = (0..nc as u32)
            .map(|c| lvl(c) > topo.level(topo.channel_src(c)).unwrap())
            .collect();
        let mut ups: Vec<ChannelId> = (0..nc as u32).filter(|&c| up[c as usize]).collect();
        let mut downs: Vec<ChannelId> = (0..nc as u32).filter(|&c| !up[c as usize]).collect();
        ups.sort_by_key(|&c| (lvl(c), c));
        downs.sort_by_key(|&c| (std::cmp::Reverse(lvl(c)), c));
        let mut order = Vec::with_capacity(nc * (k as usize + 1));
        for b in 0..=k {
            order.extend(ups.iter().map(|&c| (b, c)));
            order.extend(downs.iter().map(|&c| (b, c)));
        }
        let mut kb = KBounce {
            k,
            up,
            ends: vec![Ends::None; nc * (k as usize + 1)],
            order,
            words: topo.endpoints().len().div_ceil(64),
        };
        for i in (0..kb.order.len()).rev() {
            let (b, c) = kb.order[i];
            let v = topo.channel_dst(c);
            let mut e = if !kb.up[c as usize] && topo.is_endpoint(v) {
                Ends::One(topo.endpoint_index(v))
            } else {
                Ends::None
            };
            for &c2 in topo.out_channels(v) {
                if let Some(b2) = kb.next_bounces(c, b, c2) {
                    e = e.add(kb.ends[kb.idx(b2, c2)]);
                    if e == Ends::Many {
                        break;
                    }
                }
            }
            let at = kb.idx(b, c);
            kb.ends[at] = e;
        }
        Ok(kb)
    }

    fn idx(&self, b: u32, c: ChannelId) -> usize {
        b as usize * self.up.len() + c as usize
    }

    pub fn is_up(&self, c: ChannelId) -> bool {
        self.up[c as usize]
    }

    /// Bounce count after moving from `c` (with `b` bounces) to `c2`, or
    /// `None` when the move is not allowed (U-turn, or too many bounces).
    pub fn next_bounces(&self, c: ChannelId, b: u32, c2: ChannelId) -> Option<u32> {
        if c2 == Topology::reverse(c) {
            return None;
        }
        let b2 = b + u32::from(!self.up[c as usize] && self.up[c2 as usize]);
        (b2 <= self.k).then_some(b2)
    }

    pub fn ends(&self, c: ChannelId, b: u32) -> Ends {
        self.ends[self.idx(b, c)]
    }

    pub fn first_hop(&self, topo: &Topology, source: usize, c: ChannelId) -> Vec<Option<Bits>> {
        let _ = topo;
        let mut v = vec![None; self.k as usize + 1];
        if self.ends(c, 0).allows(source) {
            v[0] = Some(Bits::single(self.words * 64, source));
        }
        if v[0].is_none() { Vec::new() } else { v }
    }

    pub fn step(
        &self,
        topo: &Topology,
        kb: &[Option<Bits>],
        c: ChannelId,
        c2: ChannelId,
    ) -> Vec<Option<Bits>> {
        let _ = topo;
        let mut out: Vec<Option<Bits>> = vec![None; self.k as usize + 1];
        let mut any = false;
        for (b, s) in kb.iter().enumerate() {
            let Some(s) = s else { continue };
            let Some(b2) = self.next_bounces(c, b as u32, c2) else {
                continue;
            };
            let cont = match self.ends(c2, b2) {
                Ends::None => None,
                Ends::Many => Some(s.clone()),
                Ends::One(x) => {
                    let mut t = s.clone();
                    t.clear(x as usize);
                    (!t.is_empty()).then_some(t)
                }
            };
            if let Some(t) = cont {
                any = true;
                match &mut out[b2 as usize] {
                    Some(o) => o.or_assign(&t),
                    slot => *slot = Some(t),
                }
            }
        }
        if any { out } else { Vec::new() }
    }

    /// Whether some prefix of `kb` ending in `c` is a complete walk.
    pub fn accepts(&self, topo: &Topology, c: ChannelId, kb: &[Option<Bits>]) -> bool {
        let d = topo.channel_dst(c);
        if self.up[c as usize] || !topo.is_endpoint(d) {
            return false;
        }
        let j = topo.endpoint_index(d) as usize;
        kb.iter().flatten().any(|s| s.count() > 1 || !s.get(j))
    }

    /// Exact walk counts by a forward DP per source over the acyclic state
    /// graph: (paths, saturated, longest, covered destinations per source).
    ///
    /// Sources go through the DP eight at a time with saturating `u64`
    /// counters, which the compiler vectorises; a batch in which any counter
    /// saturates is redone one source at a time in `u128`, so results stay
    /// exact.
    ///
    /// Complexity: O(E/8 * (K+1) * C * deg) for E endpoints and C channels.
    pub fn count(&self, topo: &Topology) -> (u128, bool, u32, Vec<Bits>) {
        let eps = topo.endpoints();
        let sources: Vec<(usize, u32)> = eps.iter().copied().enumerate().collect();
        let per: Vec<(u128, bool, u32, Bits)> = sources
            .par_chunks(LANES)
            .flat_map_iter(|batch| {
                self.count_batch(topo, batch).unwrap_or_else(|| {
                    batch
                        .iter()
                        .map(|&(_, s)| self.count_one(topo, s))
                        .collect()
                })
            })
            .collect();
        let mut total = 0u128;
        let mut sat = false;
        let mut longest = 0;
        let mut pairs = Vec::with_capacity(per.len());
        for (p, s, l, d) in per {
            sat |= s;
            total = total.checked_add(p).unwrap_or_else(|| {
                sat = true;
                u128::MAX
            });
            longest = longest.max(l);
            pairs.push(d);
        }
        (total, sat, longest, pairs)
    }

    /// Up to [`LANES`] sources in one pass, or `None` if a counter saturated.
    fn count_batch(
        &self,
        topo: &Topology,
        batch: &[(usize, u32)],
    ) -> Option<Vec<(u128, bool, u32, Bits)>> {
        let nc = self.up.len();
        let eps = topo.endpoints().len();
        let mut cnt = vec![[0u64; LANES]; self.ends.len()];
        let mut len = vec![[0u16; LANES]; self.ends.len()];
        for (j, &(_, s)) in batch.iter().enumerate() {
            for &c in topo.out_channels(s) {
                cnt[c as usize][j] = 1;
                len[c as usize][j] = 1;
            }
        }
        let mut paths = [0u128; LANES];
        let mut longest = [0u16; LANES];
        let mut dests: Vec<Bits> = batch.iter().map(|_| Bits::new(eps)).collect();
        for &(b, c) in &self.order {
            let at = b as usize * nc + c as usize;
            let n = cnt[at];
            if n == [0; LANES] {
                continue;
            }
            if n.contains(&u64::MAX) {
                return None;
            }
            let l = len[at];
            let v = topo.channel_dst(c);
            if !self.up[c as usize] && topo.is_endpoint(v) {
                let d = topo.endpoint_index(v) as usize;
                for (j, &(_, s)) in batch.iter().enumerate() {
                    if n[j] > 0 && v != s {
                        paths[j] += n[j] as u128;
                        longest[j] = longest[j].max(l[j]);
                        dests[j].set(d);
                    }
                }
            }
            for &c2 in topo.out_channels(v) {
                if let Some(b2) = self.next_bounces(c, b, c2) {
                    let to = b2 as usize * nc + c2 as usize;
                    let (ct, lt) = (&mut cnt[to], &mut len[to]);
                    for j in 0..LANES {
                        ct[j] = ct[j].saturating_add(n[j]);
                        let reach = if n[j] > 0 { l[j] + 1 } else { 0 };
                        lt[j] = lt[j].max(reach);
                    }
                }
            }
        }
        Some(
            batch
                .iter()
                .enumerate()
                .map(|(j, _)| {
                    (
                        paths[j],
                        false,
                        longest[j] as u32,
                        std::mem::replace(&mut dests[j], Bits::new(0)),
                    )
                })
                .collect(),
        )
    }

    /// One source in `u128`, reporting saturation.
    fn count_one(&self, topo: &Topology, s: u32) -> (u128, bool, u32, Bits) {
        let nc = self.up.len();
        let mut cnt = vec![0u128; self.ends.len()];
        let mut len = vec![0u32; self.ends.len()];
        for &c in topo.out_channels(s) {
            cnt[c as usize] = 1;
            len[c as usize] = 1;
        }
        let (mut paths, mut sat, mut longest) = (0u128, false, 0u32);
        let mut dests = Bits::new(topo.endpoints().len());
        for &(b, c) in &self.order {
            let at = b as usize * nc + c as usize;
            let n = cnt[at];
            if n == 0 {
                continue;
            }
            let v = topo.channel_dst(c);
            if !self.up[c as usize] && v != s && topo.is_endpoint(v) {
                paths = paths.checked_add(n).unwrap_or_else(|| {
                    sat = true;
                    u128::MAX
                });
                longest = longest.max(len[at]);
                dests.set(topo.endpoint_index(v) as usize);
            }
            for &c2 in topo.out_channels(v) {
                if let Some(b2) = self.next_bounces(c, b, c2) {
                    let to = b2 as usize * nc + c2 as usize;
                    cnt[to] = cnt[to].checked_add(n).unwrap_or_else(|| {
                        sat = true;
                        u128::MAX
                    });
                    len[to] = len[to].max(len[at] + 1);
                }
            }
        }
        (paths, sat, longest, dests)
    }
}
