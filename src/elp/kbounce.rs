//! `kbounce:K`: up-down walks with at most K bounces between ToRs of a
//! tiered (Clos) network.

use super::MAX_BOUNCES;
use crate::bits::Bits;
use rayon::prelude::*;

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

/// The sources of a state's k-bounce prefixes, per bounce count, abstracted
/// to what decides their future: none, one endpoint, or
/// [`KbSources::MANY`].
///
/// Why that is exact: a walk's only source-dependent rule is that it must end
/// at an endpoint other than its source. Where a state can still end at
/// several endpoints ([`Ends::Many`]) any source continues; where it can end
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
    pub const NONE: u32 = u32::MAX;
    pub const MANY: u32 = u32::MAX - 1;

    pub fn is_empty(&self) -> bool {
        self.0.iter().all(|&s| s == Self::NONE)
    }

    fn add(&mut self, b: usize, s: u32) {
        let a = &mut self.0[b];
        *a = if *a == Self::NONE || *a == s {
            s
        } else {
            Self::MANY
        };
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
            if s == KbSources::NONE {
                continue;
            }
            let Some(b2) = self.next_bounces(c, b as u32, c2) else {
                continue;
            };
            let t = match self.ends(c2, b2) {
                Ends::None => continue,
                Ends::Many => s,
                Ends::One(x) if x == s => continue,
                Ends::One(_) => s,
            };
            out.add(b2 as usize, t);
        }
        out
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

    /// Exact walk counts by a forward DP per source over the acyclic state
    /// graph: (paths, saturated, longest, covered destinations per source).
    ///
    /// A walk entering node `v` may leave on any channel but the reverse of
    /// the one it came in on, so the count of state `(v -> w, b)` is a sum
    /// over `v`'s incoming channels of one class (up or down, bounce count)
    /// minus the one reverse channel. Keeping those sums per node makes the
    /// DP linear in the states rather than in states times degree (the
    /// non-backtracking-walk recurrence); the longest walk keeps the best two
    /// incoming lengths per class for the same reason. Counters are `u128`
    /// and saturate, which makes the result inexact (reported).
    ///
    /// Complexity: O(E * (K+1) * (C + V)) for E endpoints, C channels and V
    /// nodes, parallel over sources.
    pub fn count(&self, topo: &Topology) -> (u128, bool, u32, Vec<Bits>) {
        let plan = CountPlan::new(self, topo);
        let per: Vec<(u128, bool, u32, Bits)> = (0..topo.endpoints().len())
            .into_par_iter()
            .map_init(
                || (CountBuf::<u64>::new(&plan, self.k), None),
                |(narrow, wide), s| {
                    // u64 first (half the memory traffic); a source whose
                    // counts overflow it is redone in saturating u128.
                    let r = plan.run(self.k, topo, s, narrow);
                    if !r.1 {
                        return r;
                    }
                    let wide = wide.get_or_insert_with(|| CountBuf::<u128>::new(&plan, self.k));
                    plan.run(self.k, topo, s, wide)
                },
            )
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
}

/// Source-independent tables of the counting DP: one step per channel, in
/// DP order within one bounce count (up channels by rising head level, then
/// down channels by falling head level). Counts are stored by step position,
/// so each bounce count is one sequential pass that writes every state.
struct CountPlan {
    steps: Vec<Step>,
    /// Up channels come first in `steps`.
    up_steps: usize,
    nodes: usize,
}

#[derive(Clone, Copy, Debug)]
struct Step {
    c: ChannelId,
    tail: u32,
    head: u32,
    /// Position of the reverse channel.
    rev: u32,
    /// Endpoint index of the head when this down channel delivers there.
    delivers: Option<u32>,
}

impl CountPlan {
    fn new(kb: &KBounce, topo: &Topology) -> Self {
        let nc = kb.up.len();
        let order: Vec<ChannelId> = kb.order[..nc].iter().map(|&(_, c)| c).collect();
        let mut pos = vec![0u32; nc];
        for (i, &c) in order.iter().enumerate() {
            pos[c as usize] = i as u32;
        }
        let steps = order
            .iter()
            .map(|&c| {
                let (tail, head) = (topo.channel_src(c), topo.channel_dst(c));
                let up = kb.up[c as usize];
                Step {
                    c,
                    tail,
                    head,
                    rev: pos[Topology::reverse(c) as usize],
                    delivers: (!up && topo.is_endpoint(head)).then(|| topo.endpoint_index(head)),
                }
            })
            .collect();
        CountPlan {
            up_steps: kb.up.iter().filter(|&&u| u).count(),
            steps,
            nodes: topo.node_count(),
        }
    }

    /// Counts the walks from endpoint `s`; the flag says a counter
    /// saturated.
    fn run<T: Counter>(
        &self,
        k: u32,
        topo: &Topology,
        s: usize,
        buf: &mut CountBuf<T>,
    ) -> (u128, bool, u32, Bits) {
        let nc = self.steps.len();
        let source = topo.endpoints()[s];
        let CountBuf { cnt, agg } = buf;
        let mut sat = false;
        let (mut paths, mut longest) = (0u128, 0u32);
        let mut dests = Bits::new(topo.endpoints().len());
        // Per node, the walks arriving at bounce b on up channels (`ups`) and
        // on down channels (`downs`), and on down channels at b - 1
        // (`downs_prev`).
        let [ups, downs, downs_prev] = agg;
        let nu = self.up_steps;
        for b in 0..=k as usize {
            ups.fill(Agg::default());
            std::mem::swap(downs, downs_prev);
            downs.fill(Agg::default());
            let base = b * nc;
            let first = |tail: u32| {
                if b == 0 && tail == source {
                    (T::ONE, 1u16)
                } else {
                    (T::ZERO, 0)
                }
            };
            // Up from the tail: any up arrival, and (a bounce) any down
            // arrival of the previous count but the reverse channel.
            for (i, st) in self.steps[..nu].iter().enumerate() {
                let (mut n, mut l) = first(st.tail);
                let x = ups[st.tail as usize];
                if x.sum != T::ZERO {
                    n = n.plus(x.sum, &mut sat);
                    l = l.max(x.best.0 + 1);
                }
                if b > 0 {
                    let y = &downs_prev[st.tail as usize];
                    let m = y.sum.minus(cnt[base - nc + st.rev as usize]);
                    if m != T::ZERO {
                        n = n.plus(m, &mut sat);
                        l = l.max(y.len_without(st.c ^ 1) + 1);
                    }
                }
                cnt[base + i] = n;
                if n != T::ZERO {
                    ups[st.head as usize].add(n, l, st.c, &mut sat);
                }
            }
            // Down from the tail: any arrival but the reverse (up) channel.
            for (i, st) in self.steps.iter().enumerate().skip(nu) {
                let (mut n, mut l) = first(st.tail);
                let x = &ups[st.tail as usize];
                let m = x.sum.minus(cnt[base + st.rev as usize]);
                if m != T::ZERO {
                    n = n.plus(m, &mut sat);
                    l = l.max(x.len_without(st.c ^ 1) + 1);
                }
                let y = downs[st.tail as usize];
                if y.sum != T::ZERO {
                    n = n.plus(y.sum, &mut sat);
                    l = l.max(y.best.0 + 1);
                }
                cnt[base + i] = n;
                if n == T::ZERO {
                    continue;
                }
                if let Some(e) = st.delivers
                    && st.head != source
                {
                    paths = paths.checked_add(n.wide()).unwrap_or_else(|| {
                        sat = true;
                        u128::MAX
                    });
                    longest = longest.max(l as u32);
                    dests.set(e as usize);
                }
                downs[st.head as usize].add(n, l, st.c, &mut sat);
            }
        }
        (paths, sat, longest, dests)
    }
}

/// A walk counter: `u64`, or `u128` when that overflows. Additions saturate
/// and raise the flag.
trait Counter: Copy + Eq + Default + Send {
    const ZERO: Self;
    const ONE: Self;
    fn plus(self, o: Self, sat: &mut bool) -> Self;
    /// `self - o` for `o` a part of the sum `self` (exact unless saturated).
    fn minus(self, o: Self) -> Self;
    fn wide(self) -> u128;
}

macro_rules! counter {
    ($t:ty) => {
        impl Counter for $t {
            const ZERO: Self = 0;
            const ONE: Self = 1;
            fn plus(self, o: Self, sat: &mut bool) -> Self {
                self.checked_add(o).unwrap_or_else(|| {
                    *sat = true;
                    <$t>::MAX
                })
            }
            fn minus(self, o: Self) -> Self {
                self.saturating_sub(o)
            }
            fn wide(self) -> u128 {
                self as u128
            }
        }
    };
}
counter!(u64);
counter!(u128);

/// Per-thread buffers of the counting DP.
struct CountBuf<T> {
    cnt: Vec<T>,
    agg: [Vec<Agg<T>>; 3],
}

impl<T: Counter> CountBuf<T> {
    fn new(plan: &CountPlan, k: u32) -> Self {
        let states = plan.steps.len() * (k as usize + 1);
        CountBuf {
            cnt: vec![T::ZERO; states],
            agg: std::array::from_fn(|_| vec![Agg::default(); plan.nodes]),
        }
    }
}

/// Walks arriving at a node in one class: their count, and the two longest
/// lengths over distinct incoming channels (so one channel can be left out).
#[derive(Clone, Copy, Debug, Default)]
struct Agg<T> {
    sum: T,
    best: (u16, ChannelId),
    second: u16,
}

impl<T: Counter> Agg<T> {
    fn add(&mut self, n: T, l: u16, c: ChannelId, sat: &mut bool) {
        self.sum = self.sum.plus(n, sat);
        if l > self.best.0 {
            self.second = self.best.0;
            self.best = (l, c);
        } else if l > self.second {
            self.second = l;
        }
    }

    fn len_without(&self, c: ChannelId) -> u16 {
        if self.best.1 == c {
            self.second
        } else {
            self.best.0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tagger_generators::TopologySpec;

    /// Per-source counts past `u64` are redone in `u128`: the total equals
    /// an all-`u128` run and stays exact.
    #[test]
    fn u64_overflow_falls_back_to_u128() {
        let t = TopologySpec::parse("fattree:k=16")
            .unwrap()
            .build()
            .unwrap();
        let kb = KBounce::build(&t, 7).unwrap();
        let plan = CountPlan::new(&kb, &t);
        let mut narrow = CountBuf::<u64>::new(&plan, 7);
        let mut wide = CountBuf::<u128>::new(&plan, 7);
        let (mut overflowed, mut total) = (false, 0u128);
        for s in 0..t.endpoints().len() {
            let a = plan.run(7, &t, s, &mut narrow);
            let b = plan.run(7, &t, s, &mut wide);
            assert!(!b.1);
            if a.1 {
                overflowed = true;
            } else {
                assert_eq!((a.0, a.2, &a.3), (b.0, b.2, &b.3));
            }
            total += b.0;
        }
        assert!(
            overflowed,
            "the case must overflow u64 to test the fallback"
        );
        let (n, sat, longest, _) = kb.count(&t);
        assert_eq!((n, sat, longest), (total, false, 32));
        assert!(total > u64::MAX as u128);
    }
}
