//! `kbounce:K`: up-down walks with at most K bounces between ToRs of a
//! tiered (Clos) network.

use super::MAX_BOUNCES;
use super::Mismatch;

use tagger_generators::{ChannelId, Topology};

/// Which endpoints a walk can still end at: none, exactly one, or several.
/// Enough to decide whether a prefix from source `s` can complete at an
/// endpoint other than `s`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ends {
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

/// The sources of a state's k-bounce prefixes, per bounce count, abstracted
/// to what decides their future: none, one endpoint, or
/// [`KbSources::MANY`].
///
/// Why that is exact: a walk's only source-dependent rule is that it must end
/// at an endpoint other than its source. Where a state can still end at
/// several endpoints (`Ends::Many`) any source continues; where it can end
/// at one endpoint `x` only, every later state can too (its completions are a
/// subset), so the sources are only ever tested against that same `x`. A set
/// of two or more sources therefore survives every test one does, and
/// `MANY` stands for it (and for what is left after `x` is removed from it).
/// It replaces a bitset over all endpoints per state and bounce count.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct KbSources(pub [u32; MAX_BOUNCES as usize + 1]);

impl Default for KbSources {
    fn default() -> Self {
        KbSources([Self::NONE; MAX_BOUNCES as usize + 1])
    }
}

impl KbSources {
    /// No source at this bounce count.
    pub const NONE: u32 = u32::MAX;
    /// Two or more sources at this bounce count.
    pub const MANY: u32 = u32::MAX - 1;

    /// Whether no bounce count has a source.
    pub fn is_empty(&self) -> bool {
        self.0.iter().all(|&s| s == Self::NONE)
    }

    fn add(&mut self, b: usize, s: u32) {
        self.0[b] = Self::join(self.0[b], s);
    }

    /// The sources of two sets of prefixes at one bounce count together.
    #[inline]
    pub fn join(a: u32, s: u32) -> u32 {
        if a == Self::NONE || a == s {
            s
        } else if s == Self::NONE {
            a
        } else {
            Self::MANY
        }
    }

    /// Adds every prefix of `other`.
    pub fn union(&mut self, other: &KbSources) {
        for (b, &s) in other.0.iter().enumerate() {
            if s != Self::NONE {
                self.add(b, s);
            }
        }
    }

    /// Drops the prefixes already in `seen` (their futures were explored) and
    /// records the rest there. One source is covered by `MANY` (whatever it
    /// can still reach, a set of several sources reaches too) and by itself.
    pub fn subtract_seen(&mut self, seen: &mut KbSources) {
        for (a, s) in self.0.iter_mut().zip(seen.0.iter_mut()) {
            if *a == Self::NONE {
                continue;
            }
            if *s == Self::MANY || *s == *a {
                *a = Self::NONE;
            } else {
                *s = if *s == Self::NONE { *a } else { Self::MANY };
            }
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
    /// Bounces allowed.
    pub k: u32,
    up: Vec<bool>,
    ends: Vec<Ends>,
    /// States in forward topological order (`b` rising; within it, up
    /// channels by rising head level, then down channels by falling level).
    order: Vec<(u32, ChannelId)>,
}

impl KBounce {
    /// Heap bytes held (for memory budgets).
    pub fn heap_bytes(&self) -> u64 {
        crate::budget::bytes_of::<bool>(self.up.len())
            + crate::budget::bytes_of::<Ends>(self.ends.len())
            + crate::budget::bytes_of::<(u32, ChannelId)>(self.order.len())
    }

    /// [`KBounce::heap_bytes`] of `KBounce::build(topo, k)`, known before it
    /// is built: one flag per channel and two entries per (channel, bounce
    /// count).
    pub fn estimate_bytes(topo: &Topology, k: u32) -> u64 {
        let c = topo.channel_count();
        let states = c.saturating_mul(k as usize + 1);
        crate::budget::bytes_of::<bool>(c)
            + crate::budget::bytes_of::<Ends>(states)
            + crate::budget::bytes_of::<(u32, ChannelId)>(states)
    }

    /// # Errors
    /// A message when the topology lacks levels or has a link that does not
    /// join adjacent levels.
    pub(crate) fn build(topo: &Topology, k: u32) -> Result<Self, Mismatch> {
        if !topo.has_levels() {
            return Err(Mismatch::NotTiered {
                topology: topo.name().to_string(),
            });
        }
        for (l, &[a, b]) in topo.links().iter().enumerate() {
            let (la, lb) = (topo.level(a).unwrap(), topo.level(b).unwrap());
            if la.abs_diff(lb) != 1 {
                return Err(Mismatch::NotAdjacent {
                    link: l,
                    a,
                    level_a: la,
                    b,
                    level_b: lb,
                });
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

    pub(crate) fn is_up(&self, c: ChannelId) -> bool {
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

    pub(crate) fn ends(&self, c: ChannelId, b: u32) -> Ends {
        self.ends[self.idx(b, c)]
    }

    /// The prefixes of a walk from endpoint `source` whose first channel is
    /// `c`, or empty when no such walk completes.
    pub fn first_hop(&self, source: usize, c: ChannelId) -> KbSources {
        let mut v = KbSources::default();
        if self.ends(c, 0).allows(source) {
            v.0[0] = source as u32;
        }
        v
    }

    /// The prefixes of `kb` (ending in `c`) that continue on `c2`.
    pub fn step(&self, kb: &KbSources, c: ChannelId, c2: ChannelId) -> KbSources {
        let mut out = KbSources::default();
        for (b, &s) in kb.0.iter().enumerate().take(self.k as usize + 1) {
            if let Some((b2, t)) = self.step_one(b as u32, s, c, c2) {
                out.add(b2 as usize, t);
            }
        }
        out
    }

    /// [`KBounce::step`] of the prefixes with `b` bounces alone, whose
    /// sources are `s` (one endpoint, `KbSources::MANY` or
    /// `KbSources::NONE`): the bounce count on `c2` and the sources that
    /// continue there, or `None` when none does.
    #[inline]
    pub fn step_one(&self, b: u32, s: u32, c: ChannelId, c2: ChannelId) -> Option<(u32, u32)> {
        if s == KbSources::NONE {
            return None;
        }
        let b2 = self.next_bounces(c, b, c2)?;
        match self.ends(c2, b2) {
            Ends::None => None,
            Ends::One(x) if x == s => None,
            Ends::Many | Ends::One(_) => Some((b2, s)),
        }
    }

    /// Whether some prefix of `kb` ending in `c` is a complete walk.
    pub fn accepts(&self, topo: &Topology, c: ChannelId, kb: &KbSources) -> bool {
        let d = topo.channel_dst(c);
        if self.up[c as usize] || !topo.is_endpoint(d) {
            return false;
        }
        let j = topo.endpoint_index(d);
        kb.0.iter().any(|&s| s != KbSources::NONE && s != j)
    }

    /// The channels in the order of one bounce count's DP: up channels by
    /// rising head level, then down channels by falling head level (by id
    /// within a level). Every state feeding a state precedes it.
    pub fn dp_order(&self) -> impl Iterator<Item = ChannelId> + '_ {
        self.order[..self.up.len()].iter().map(|&(_, c)| c)
    }
}
