//! Exact counts of the k-bounce walk language without enumerating walks:
//! path totals and covered pairs by a per-source DP run on four sources at
//! once, and the longest walk by one DP over all sources together.

use super::kbounce::KBounce;
use crate::bits::Bits;
use crate::budget::bytes_of;
use rayon::prelude::*;
use tagger_generators::{ChannelId, Topology};

/// Sources counted together: four `u64` lanes, one 32-byte vector.
const LANES: usize = 4;
const NONE: u32 = u32::MAX;

/// What [`KBounce::count`] returns: total walks, whether a counter
/// saturated, the longest walk in links, and the destinations each source
/// reaches.
pub type KbCount = (u128, bool, u32, Vec<Bits>);

impl KBounce {
    /// Exact walk counts by a forward DP per source over the acyclic state
    /// graph: (paths, saturated, longest, covered destinations per source).
    ///
    /// A walk entering node `v` may leave on any channel but the reverse of
    /// the one it came in on, so the count of state `(v -> w, b)` is a sum
    /// over `v`'s incoming channels of one class (up or down, bounce count)
    /// minus the one reverse channel. Keeping those sums per node makes the
    /// DP linear in the states rather than in states times degree (the
    /// non-backtracking-walk recurrence). Four sources run together in
    /// `u64` lanes; a source that overflows them is redone alone in
    /// saturating `u128`, which makes the result inexact (reported) only
    /// past `u128`. The longest walk comes from [`KBounce::longest`].
    ///
    /// Complexity: O(E * (K+1) * (C + V)) for E endpoints, C channels and V
    /// nodes, parallel over groups of sources.
    pub fn count(&self, topo: &Topology) -> KbCount {
        let plan = CountPlan::new(self, topo);
        let n = topo.endpoints().len();
        let groups = n.div_ceil(LANES);
        // A few megabytes of buffers per task: with unbounded splitting they
        // were allocated, faulted in and returned hundreds of times.
        let per: Vec<Vec<(u128, bool, Bits)>> = (0..groups)
            .into_par_iter()
            .with_min_len(groups.div_ceil(4 * rayon::current_num_threads()).max(1))
            .map_init(
                || (CountBuf::<Lanes>::new(&plan), None),
                |(narrow, wide), g| {
                    let sources: Vec<usize> = (g * LANES..n.min(g * LANES + LANES)).collect();
                    let mut r = plan.run(self.k, topo, &sources, narrow);
                    for (i, &s) in sources.iter().enumerate() {
                        if r[i].1 {
                            let wide = wide.get_or_insert_with(|| CountBuf::<u128>::new(&plan));
                            r[i] = plan.run(self.k, topo, &[s], wide).remove(0);
                        }
                    }
                    r
                },
            )
            .collect();
        let mut total = 0u128;
        let mut sat = false;
        let mut pairs = Vec::with_capacity(n);
        for (p, s, d) in per.into_iter().flatten() {
            sat |= s;
            total = total.checked_add(p).unwrap_or_else(|| {
                sat = true;
                u128::MAX
            });
            pairs.push(d);
        }
        (total, sat, self.longest(topo), pairs)
    }

    /// Bytes [`KBounce::count`] works with: the destinations each source
    /// reaches, the longest-walk table, and one DP buffer (four counters per
    /// channel twice and per node three times). Each further worker thread
    /// holds one more buffer, which is not charged: the estimate must not
    /// depend on the thread count, since it is reported.
    pub fn count_bytes(&self, topo: &Topology) -> u64 {
        let (e, c, v) = (
            topo.endpoints().len(),
            topo.channel_count(),
            topo.node_count(),
        );
        let states = c.saturating_mul(self.k as usize + 1);
        bytes_of::<u64>(e.saturating_mul(e.div_ceil(64)))
            + bytes_of::<Top2>(states)
            + bytes_of::<Lanes>(c.saturating_mul(2).saturating_add(v.saturating_mul(3)))
    }

    /// The longest walk of the language, in links, by one DP over all
    /// sources at once.
    ///
    /// A walk's only source-dependent rule is that it ends at an endpoint
    /// other than its source, so each state keeps the two longest walks
    /// reaching it from two distinct sources (`Top2`): that is closed
    /// under extension and union, and at a delivering state one of the two
    /// has a source other than the destination whenever any walk has. The
    /// exclusion of the U-turn channel uses prefix and suffix unions of a
    /// node's incoming channels, so each node costs time linear in its
    /// degree.
    ///
    /// Complexity: O((K+1) * (C + V)).
    pub fn longest(&self, topo: &Topology) -> u32 {
        let nc = topo.channel_count();
        let level = |v: u32| topo.level(v).unwrap_or(0);
        let mut nodes: Vec<u32> = (0..topo.node_count() as u32).collect();
        nodes.sort_by_key(|&v| (level(v), v));
        let mut best = vec![Top2::EMPTY; nc * (self.k as usize + 1)];
        let at = |b: u32, c: ChannelId| b as usize * nc + c as usize;
        let (mut x, mut prefix, mut suffix) = (Vec::new(), Vec::new(), Vec::new());
        let mut longest = 0;
        for b in 0..=self.k {
            // Up channels leave nodes by rising level, down channels by
            // falling level: every state feeding one is final before it.
            for up_pass in [true, false] {
                let order: Box<dyn Iterator<Item = &u32>> = if up_pass {
                    Box::new(nodes.iter())
                } else {
                    Box::new(nodes.iter().rev())
                };
                for &v in order {
                    let out = topo.out_channels(v);
                    if !out.iter().any(|&c| self.is_up(c) == up_pass) {
                        continue;
                    }
                    // What arrives over each incoming channel `out[j] ^ 1`
                    // and may continue on a channel of this pass.
                    x.clear();
                    x.extend(out.iter().map(|&o| {
                        // Only a down arrival leaving up bounces.
                        let c = Topology::reverse(o);
                        if self.is_up(c) || !up_pass {
                            best[at(b, c)]
                        } else if b > 0 {
                            best[at(b - 1, c)]
                        } else {
                            Top2::EMPTY
                        }
                    }));
                    prefix.clear();
                    prefix.push(Top2::EMPTY);
                    for t in &x {
                        let mut p = *prefix.last().unwrap();
                        p.merge(t);
                        prefix.push(p);
                    }
                    suffix.clear();
                    suffix.resize(x.len() + 1, Top2::EMPTY);
                    for j in (0..x.len()).rev() {
                        let mut s = suffix[j + 1];
                        s.merge(&x[j]);
                        suffix[j] = s;
                    }
                    let first = (b == 0 && topo.is_endpoint(v)).then(|| topo.endpoint_index(v));
                    for (j, &o) in out.iter().enumerate() {
                        if self.is_up(o) != up_pass {
                            continue;
                        }
                        let mut t = prefix[j];
                        t.merge(&suffix[j + 1]);
                        let mut t = t.extended();
                        if let Some(s) = first {
                            t.add(1, s);
                        }
                        let head = topo.channel_dst(o);
                        if !up_pass && topo.is_endpoint(head) {
                            longest = longest.max(t.longest_from_other(topo.endpoint_index(head)));
                        }
                        best[at(b, o)] = t;
                    }
                }
            }
        }
        longest
    }
}

/// The two longest walks reaching a state from two distinct sources, as
/// (length, source index), longest first; `NONE` marks a missing entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Top2 {
    len: [u32; 2],
    src: [u32; 2],
}

impl Top2 {
    const EMPTY: Top2 = Top2 {
        len: [0; 2],
        src: [NONE; 2],
    };

    fn add(&mut self, l: u32, s: u32) {
        if s == self.src[0] {
            self.len[0] = self.len[0].max(l);
        } else if s == self.src[1] {
            self.len[1] = self.len[1].max(l);
            if self.len[1] > self.len[0] {
                self.len.swap(0, 1);
                self.src.swap(0, 1);
            }
        } else if self.src[0] == NONE || l > self.len[0] {
            self.len[1] = self.len[0];
            self.src[1] = self.src[0];
            self.len[0] = l;
            self.src[0] = s;
        } else if self.src[1] == NONE || l > self.len[1] {
            self.len[1] = l;
            self.src[1] = s;
        }
    }

    /// Adds every walk of `o`: the union's top two are among the two sets'.
    fn merge(&mut self, o: &Top2) {
        for i in 0..2 {
            if o.src[i] != NONE {
                self.add(o.len[i], o.src[i]);
            }
        }
    }

    /// The same walks one link longer.
    fn extended(mut self) -> Top2 {
        for i in 0..2 {
            if self.src[i] != NONE {
                self.len[i] += 1;
            }
        }
        self
    }

    /// The longest walk from a source other than `d` (0 when none).
    fn longest_from_other(&self, d: u32) -> u32 {
        (0..2)
            .find(|&i| self.src[i] != NONE && self.src[i] != d)
            .map_or(0, |i| self.len[i])
    }
}

/// Source-independent tables of the counting DP: one step per channel, in
/// DP order within one bounce count (up channels by rising head level, then
/// down channels by falling head level, by id within a level). Counts are
/// stored by channel id, so a step finds the count of its reverse channel
/// (`c ^ 1`) next to its own: both passes then stream through the counts in
/// rising id order instead of jumping to the reverse channel's step, which
/// made this DP 2x slower.
struct CountPlan {
    steps: Vec<Step>,
    /// Up channels come first in `steps`.
    up_steps: usize,
    nodes: usize,
    channels: usize,
}

#[derive(Clone, Copy, Debug)]
struct Step {
    c: ChannelId,
    tail: u32,
    head: u32,
    /// Endpoint index of the head when this down channel delivers there.
    delivers: Option<u32>,
}

impl CountPlan {
    fn new(kb: &KBounce, topo: &Topology) -> Self {
        let steps: Vec<Step> = kb
            .dp_order()
            .map(|c| {
                let (tail, head) = (topo.channel_src(c), topo.channel_dst(c));
                Step {
                    c,
                    tail,
                    head,
                    delivers: (!kb.is_up(c) && topo.is_endpoint(head))
                        .then(|| topo.endpoint_index(head)),
                }
            })
            .collect();
        CountPlan {
            up_steps: steps.iter().filter(|s| kb.is_up(s.c)).count(),
            steps,
            nodes: topo.node_count(),
            channels: topo.channel_count(),
        }
    }

    /// Counts the walks from each endpoint of `sources` (at most
    /// `C::LANES`): per source, its walks, whether its counter overflowed,
    /// and the endpoints its walks reach.
    fn run<C: Counter>(
        &self,
        k: u32,
        topo: &Topology,
        sources: &[usize],
        buf: &mut CountBuf<C>,
    ) -> Vec<(u128, bool, Bits)> {
        debug_assert!(sources.len() <= C::LANES);
        let nc = self.channels;
        let src: Vec<u32> = sources.iter().map(|&s| topo.endpoints()[s]).collect();
        let CountBuf { cnt, agg } = buf;
        let [cur, prev] = cnt;
        let mut sat = C::default();
        // Lanes whose path totals overflowed `u128`.
        let mut total_sat = 0u32;
        let mut paths = vec![0u128; sources.len()];
        let mut dests: Vec<Bits> = (0..sources.len())
            .map(|_| Bits::new(topo.endpoints().len()))
            .collect();
        // Per node, the walks arriving at bounce b on up channels (`ups`) and
        // on down channels (`downs`), and on down channels at b - 1
        // (`downs_prev`).
        let [ups, downs, downs_prev] = agg;
        let nu = self.up_steps;
        for b in 0..=k as usize {
            ups.fill(C::default());
            std::mem::swap(downs, downs_prev);
            downs.fill(C::default());
            std::mem::swap(cur, prev);
            debug_assert_eq!(cur.len(), nc);
            let first = |tail: u32| {
                let mut mask = 0;
                if b == 0 {
                    for (i, &s) in src.iter().enumerate() {
                        mask |= u32::from(s == tail) << i;
                    }
                }
                mask
            };
            // Up from the tail: any up arrival, and (a bounce) any down
            // arrival of the previous count but the reverse channel.
            for st in &self.steps[..nu] {
                let mut n = C::ones(first(st.tail));
                n = n.plus(ups[st.tail as usize], &mut sat);
                if b > 0 {
                    let m = downs_prev[st.tail as usize].minus(prev[(st.c ^ 1) as usize]);
                    n = n.plus(m, &mut sat);
                }
                cur[st.c as usize] = n;
                let h = &mut ups[st.head as usize];
                *h = h.plus(n, &mut sat);
            }
            // Down from the tail: any arrival but the reverse (up) channel.
            for st in &self.steps[nu..] {
                let mut n = C::ones(first(st.tail));
                n = n.plus(
                    ups[st.tail as usize].minus(cur[(st.c ^ 1) as usize]),
                    &mut sat,
                );
                n = n.plus(downs[st.tail as usize], &mut sat);
                cur[st.c as usize] = n;
                if n.is_zero() {
                    continue;
                }
                if let Some(e) = st.delivers {
                    // A constant bound, so that the loop unrolls and `n`
                    // stays in registers (indexed by a variable, it went
                    // through the stack).
                    for i in 0..C::LANES {
                        let Some(&s) = src.get(i) else { break };
                        let x = n.lane(i);
                        if x != 0 && st.head != s {
                            paths[i] = paths[i].checked_add(x).unwrap_or_else(|| {
                                total_sat |= 1 << i;
                                u128::MAX
                            });
                            dests[i].set(e as usize);
                        }
                    }
                }
                let h = &mut downs[st.head as usize];
                *h = h.plus(n, &mut sat);
            }
        }
        paths
            .into_iter()
            .zip(dests)
            .enumerate()
            .map(|(i, (p, d))| (p, C::overflowed(&sat, i) || total_sat >> i & 1 == 1, d))
            .collect()
    }
}

/// Walk counters for one or more sources. Sums also fold into an overflow
/// record `sat` (same type, one per run), read at the end per lane;
/// differences are only taken of a sum and one of its parts, so they are
/// exact unless the lane overflowed.
trait Counter: Copy + Default + Send {
    const LANES: usize;
    /// 1 in each lane whose bit is set in `mask`, else 0.
    fn ones(mask: u32) -> Self;
    fn is_zero(&self) -> bool;
    fn plus(self, o: Self, sat: &mut Self) -> Self;
    fn minus(self, o: Self) -> Self;
    fn lane(&self, i: usize) -> u128;
    /// Whether lane `i` overflowed, given the run's `sat`.
    fn overflowed(sat: &Self, i: usize) -> bool;
}

/// Four sources' counters in `u64` lanes, kept below 2^63: then a sum of two
/// never wraps, and overflow is bit 63 of the OR of every sum. Both are
/// plain vector adds and ors (a carry test per lane stalled the pipeline on
/// stores to the stack and cost a third of the DP). A lane that overflows is
/// redone alone in `u128`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Lanes([u64; LANES]);

impl Counter for Lanes {
    const LANES: usize = LANES;
    fn ones(mask: u32) -> Self {
        Lanes(std::array::from_fn(|i| u64::from(mask >> i & 1)))
    }
    fn is_zero(&self) -> bool {
        self.0 == [0; LANES]
    }
    fn plus(self, o: Self, sat: &mut Self) -> Self {
        let r: [u64; LANES] = std::array::from_fn(|i| self.0[i].wrapping_add(o.0[i]));
        sat.0 = std::array::from_fn(|i| sat.0[i] | r[i]);
        Lanes(r)
    }
    fn minus(self, o: Self) -> Self {
        Lanes(std::array::from_fn(|i| self.0[i].wrapping_sub(o.0[i])))
    }
    fn lane(&self, i: usize) -> u128 {
        u128::from(self.0[i])
    }
    fn overflowed(sat: &Self, i: usize) -> bool {
        sat.0[i] >> 63 == 1
    }
}

/// One source's counter, saturating; `sat` becomes 1 on overflow.
impl Counter for u128 {
    const LANES: usize = 1;
    fn ones(mask: u32) -> Self {
        u128::from(mask & 1)
    }
    fn is_zero(&self) -> bool {
        *self == 0
    }
    fn plus(self, o: Self, sat: &mut Self) -> Self {
        self.checked_add(o).unwrap_or_else(|| {
            *sat = 1;
            u128::MAX
        })
    }
    fn minus(self, o: Self) -> Self {
        self.saturating_sub(o)
    }
    fn lane(&self, _: usize) -> u128 {
        *self
    }
    fn overflowed(sat: &Self, _: usize) -> bool {
        *sat != 0
    }
}

/// Per-task buffers of the counting DP: counts by channel for the current
/// and the previous bounce count, and the per-node sums.
struct CountBuf<C> {
    cnt: [Vec<C>; 2],
    agg: [Vec<C>; 3],
}

impl<C: Counter> CountBuf<C> {
    fn new(plan: &CountPlan) -> Self {
        CountBuf {
            cnt: std::array::from_fn(|_| vec![C::default(); plan.channels]),
            agg: std::array::from_fn(|_| vec![C::default(); plan.nodes]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::testing::topo;

    /// Lanes overflowing `u64` are redone in `u128`: every source's count
    /// equals its lone `u128` run, and the total stays exact past `u64`.
    #[test]
    fn u64_overflow_falls_back_to_u128() {
        let t = topo("fattree:k=16");
        let kb = KBounce::build(&t, 7).unwrap();
        let plan = CountPlan::new(&kb, &t);
        let mut lanes = CountBuf::<Lanes>::new(&plan);
        let mut wide = CountBuf::<u128>::new(&plan);
        let (mut overflowed, mut total) = (false, 0u128);
        let n = t.endpoints().len();
        for g in 0..n.div_ceil(LANES) {
            let sources: Vec<usize> = (g * LANES..n.min(g * LANES + LANES)).collect();
            let a = plan.run(7, &t, &sources, &mut lanes);
            for (i, &s) in sources.iter().enumerate() {
                let b = plan.run(7, &t, &[s], &mut wide).remove(0);
                assert!(!b.1);
                if a[i].1 {
                    overflowed = true;
                } else {
                    assert_eq!((a[i].0, &a[i].2), (b.0, &b.2));
                }
                total += b.0;
            }
        }
        assert!(
            overflowed,
            "the case must overflow u64 to test the fallback"
        );
        let (n, sat, longest, _) = kb.count(&t);
        assert_eq!((n, sat, longest), (total, false, 32));
        assert!(total > u64::MAX as u128);
    }

    /// [`KBounce::longest`] against the longest walk found by DFS.
    #[test]
    fn longest_matches_search() {
        for (spec, k) in [
            ("fattree:k=4", 0),
            ("fattree:k=4", 1),
            ("fattree:k=4", 2),
            ("leafspine:leaves=3,spines=2,links=2", 1),
            ("leafspine:leaves=2,spines=1", 2),
        ] {
            let t = topo(spec);
            let kb = KBounce::build(&t, k).unwrap();
            let mut longest = 0;
            // Every walk is a sequence of states (channel, bounces); a DFS
            // over them from each source, recording deliveries elsewhere.
            for &s in t.endpoints() {
                let mut stack: Vec<(ChannelId, u32, u32)> =
                    t.out_channels(s).iter().map(|&c| (c, 0, 1)).collect();
                while let Some((c, b, len)) = stack.pop() {
                    let h = t.channel_dst(c);
                    if !kb.is_up(c) && t.is_endpoint(h) && h != s {
                        longest = longest.max(len);
                    }
                    for &c2 in t.out_channels(h) {
                        if let Some(b2) = kb.next_bounces(c, b, c2) {
                            stack.push((c2, b2, len + 1));
                        }
                    }
                }
            }
            assert_eq!(kb.longest(&t), longest, "{spec} kbounce:{k}");
        }
    }
}
