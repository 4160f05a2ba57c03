//! Target-P local search over order plans (see [`super::order`]).
//!
//! Given P orders and the maximal ELPs as channel sequences, a path is
//! *violated* when its tag passes P. A step takes a violated path at random
//! and, for each descent on it (a transition `(c1, c2)` at tag `t` where
//! `c1` does not come before `c2` in order `t`), considers moving `c1` or
//! `c2` within order `t`: every position relative to the channels it is
//! compared with is scored at once (the weight of the paths through it that
//! would stay violated), and the best move is made when it lowers the
//! weighted count. When no move helps, the path's weight rises (breakout:
//! Morris, AAAI 1993), so paths that resist gain pull. Each search is
//! sequential and seeded: a seed and a work budget give the same result on
//! any number of threads.
//!
//! The stall rule: a target is given up when the fewest violated paths
//! seen have not dropped by a fiftieth for as many path evaluations as it
//! took to get there, and at least 2x10^7; or when, past those 2x10^7, the
//! rate of its last drop by a fiftieth would need more evaluations than
//! the budget has left to reach the target (the rate usually slows, so
//! the projection is a hopeful one); or when more than one path in twenty
//! is still violated after two evaluations per path (and at least
//! 2x10^7: `driver.rs`'s `hopeless`).
//!
//! Complexity per step: O(L * (occ * L + d log d)) for a path of L links,
//! channels on `occ` paths each, and `d` distinct neighbour positions.
//!
//! With `symmetric` (the default), a reversal-symmetric search (order
//! P-1-t mirrors order t on the reversed channels) runs beside the
//! unrestricted one, each on its own core.
//!
//! Held to a traffic-class budget ([`LocalSearch::within_classes`]), the
//! objective also counts each node's classes over the budget, bounded by
//! the orders (`class_bound.rs`), and a step picks such a node as often as
//! a violated path; the driver runs it from orders that reached a target
//! but need more classes than a switch has.
//!
//! The driver (the search over targets, a portfolio of searches per
//! target) is in `driver.rs`; the moves and their scoring in `moves.rs`;
//! where channels occur and the relabelling of orders in `positions.rs`;
//! the halving of paths for the symmetric search in `symmetric.rs`.

use super::pins::Pins;
use crate::elp::enumerate::ChannelPaths;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::borrow::Cow;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use tagger_generators::ChannelId;
mod class_bound;
mod driver;
mod moves;
mod positions;
mod symmetric;

pub(super) use driver::{plan, plan_from, plan_given, plan_near};
use positions::{Occurrences, Paths, Weights, relabelled, relabelled_mirror};
pub use symmetric::Halved;

/// Gap between neighbouring positions after a relabelling; a move halves a
/// gap, so a region of an order is relabelled after about 24 moves into it.
const GAP: u64 = 1 << 24;

/// Path evaluations each search of a portfolio runs between the checks of
/// which reached the target.
const SLICE: u64 = 1 << 24;

/// The mirror of a symmetric search: order `P - 1 - t` holds channel `c`
/// at `MIRROR - x` when order `t` holds `c ^ 1` (its reverse) at `x`.
/// Relabelled positions stay below 2^41, so mirrored ones stay positive.
const MIRROR: u64 = 1 << 50;

/// A target is given up (stalled) when its fewest violated paths have not
/// dropped by a fiftieth since the last time they did, over as much work as
/// it took to get there and at least this many path evaluations. Measured
/// (docs/priorities.md): Jellyfish 300/64 r=12 seed 1 keeps dropping until
/// it reaches 2 priorities; Jellyfish 500 levels off after about 6x10^8
/// evaluations; fat-tree k=4 `kbounce:2`, where 2 is impossible, never
/// drops at all. Counted in evaluations, not time, so the result does not
/// depend on the machine.
const PATIENCE: u64 = 20_000_000;

/// Memory the local search may assume where neither a budget nor the
/// machine's memory is known.
const FALLBACK_ROOM: u64 = 1 << 30;

/// How the search ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// True when no path passes the target.
    pub reached: bool,
    /// Steps taken (violated paths picked).
    pub steps: u64,
    /// Path evaluations spent.
    pub work: u64,
    /// Paths still past the target.
    pub residue: u64,
    /// True when the deadline (or a stop request) stopped it.
    pub timed_out: bool,
    /// True when it gave up for lack of progress (the stall rule).
    pub stalled: bool,
}

/// The search state for one target.
#[derive(Debug)]
pub struct LocalSearch<'a> {
    /// The paths searched (a symmetric search: the whole set, of which it
    /// keeps one of each path and its reverse).
    paths: Paths<'a>,
    /// Occurrences `(path, index)` of each channel, on every path of the
    /// set (a symmetric search reads its kept paths' part alone).
    occ: Cow<'a, Occurrences>,
    /// `pos[t][c]`, for `t` in `0..target`.
    pub pos: Vec<Vec<u64>>,
    target: u32,
    weight: Weights,
    /// The tag each path carries on each of its channels (capped at
    /// target + 1), parallel to the set's channels.
    tags: Vec<u8>,
    violated: Vec<u32>,
    /// Index of a path in `violated`, or `u32::MAX`.
    slot: Vec<u32>,
    rng: ChaCha8Rng,
    /// Path evaluations so far.
    work: AtomicU64,
    /// Reversal-symmetric plans only: `pos[P - 1 - t][c] = MIRROR -
    /// pos[t][c ^ 1]` holds throughout.
    symmetric: bool,
    /// Paths of the whole ELP currently past the target.
    violated_total: u64,
    /// The fewest seen.
    best: u64,
    /// Violated paths and work at the last drop by a fiftieth.
    mark: (u64, u64),
    /// The mark before it: with `mark`, the recent rate of progress.
    last_mark: (u64, u64),
    /// Steps taken over every call of [`LocalSearch::run`].
    steps: u64,
    /// An extension's installed decisions and dependencies, kept through
    /// every move ([`LocalSearch::pinned`]).
    pins: Option<&'a Pins>,
    /// Held to a traffic-class budget: every node's class bound
    /// ([`class_bound`]), part of the objective.
    classes: Option<class_bound::ClassState<'a>>,
}

impl<'a> LocalSearch<'a> {
    /// Starts from the first `target` orders of `pos` (each at least one).
    pub fn new(
        paths: &'a ChannelPaths,
        channels: usize,
        pos: &[Vec<u64>],
        target: u32,
        seed: u64,
    ) -> Self {
        let occ = Cow::Owned(Occurrences::build(paths, channels));
        Self::with(paths, occ, channels, pos, target, seed)
    }

    /// [`LocalSearch::new`] on `paths` and their occurrences `occ`, which
    /// may be lent (the portfolio's members and restarts share them).
    fn with(
        paths: &'a ChannelPaths,
        occ: Cow<'a, Occurrences>,
        channels: usize,
        pos: &[Vec<u64>],
        target: u32,
        seed: u64,
    ) -> Self {
        Self::start(Paths::all(paths), occ, channels, pos, target, seed, None)
    }

    /// [`LocalSearch::new`] for extending an installed plan: transitions
    /// `pins` fixes keep their installed next tag, and each order keeps
    /// every installed dependency of its priority forward (a channel moves
    /// only between its installed neighbours). `pos` must already keep
    /// them forward (see [`Pins::respected_by`]).
    pub fn pinned(
        paths: &'a ChannelPaths,
        channels: usize,
        pos: &[Vec<u64>],
        target: u32,
        seed: u64,
        pins: &'a Pins,
    ) -> Self {
        let occ = Cow::Owned(Occurrences::build(paths, channels));
        Self::start(
            Paths::all(paths),
            occ,
            channels,
            pos,
            target,
            seed,
            Some(pins),
        )
    }

    /// [`LocalSearch::new`] held to `budget` traffic classes a node of
    /// `topo`: a node whose class bound (see `class_bound.rs`) passes it counts
    /// against the target as violated paths do, and the target is reached
    /// when neither is left.
    pub fn within_classes(
        paths: &'a ChannelPaths,
        topo: &'a tagger_generators::Topology,
        pos: &[Vec<u64>],
        target: u32,
        seed: u64,
        budget: u32,
    ) -> Self {
        let n = topo.channel_count();
        let occ = Cow::Owned(Occurrences::build(paths, n));
        let mut s = Self::start(Paths::all(paths), occ, n, pos, target, seed, None);
        let c = class_bound::ClassState::new(topo, &s.pos, budget);
        s.best += c.excess;
        s.mark = (s.best, 0);
        s.last_mark = s.mark;
        s.classes = Some(c);
        s
    }

    /// [`LocalSearch::new`] restricted to plans that map onto themselves
    /// when every path is reversed: order `P - 1 - t` is order `t`
    /// negated on the reversed channels (the middle order of an odd `P` is
    /// its own mirror). A path and its reverse then impose one condition,
    /// and a move places a channel and its reverse together. A
    /// restriction, not a relaxation: failing proves nothing. The start
    /// takes the lower half of `pos` and mirrors it. It runs on one of
    /// each path and its reverse ([`Halved`]), which halves the work for
    /// the same plans; `occ` are the occurrences of all `paths`, built with
    /// `halved` ([`Occurrences::build_keeping`]) and shared with the
    /// unrestricted search.
    fn new_symmetric(
        (paths, halved): (&'a ChannelPaths, &'a Halved),
        occ: &'a Occurrences,
        channels: usize,
        pos: &[Vec<u64>],
        target: u32,
        seed: u64,
    ) -> Self {
        let paths = Paths::halved(paths, halved);
        Self::start(paths, Cow::Borrowed(occ), channels, pos, target, seed, None)
    }

    fn start(
        paths: Paths<'a>,
        occ: Cow<'a, Occurrences>,
        channels: usize,
        pos: &[Vec<u64>],
        target: u32,
        seed: u64,
        pins: Option<&'a Pins>,
    ) -> Self {
        let symmetric = paths.is_halved();
        let mut s = LocalSearch {
            paths,
            occ,
            pos: (0..target as usize)
                .map(|t| relabelled(&pos[t.min(pos.len() - 1)]))
                .collect(),
            target,
            weight: Weights::ones(paths.len()),
            tags: vec![0; paths.slots()],
            violated: Vec::new(),
            slot: vec![u32::MAX; paths.len()],
            rng: ChaCha8Rng::seed_from_u64(seed),
            work: AtomicU64::new(0),
            symmetric,
            violated_total: 0,
            best: 0,
            mark: (0, 0),
            last_mark: (0, 0),
            steps: 0,
            pins,
            classes: None,
        };
        if symmetric {
            let p = target as usize;
            for t in 0..p.div_ceil(2) {
                let m = p - 1 - t;
                if m == t {
                    // The middle order, its own mirror: each link's two
                    // channels either side of the centre, as far apart as
                    // their start positions.
                    let o = &s.pos[t];
                    let mid: Vec<u64> = (0..channels)
                        .map(|c| (MIRROR / 2 + o[c]).wrapping_sub(o[c ^ 1]))
                        .collect();
                    s.pos[t] = mid;
                } else {
                    s.mirror(t);
                }
            }
        }
        for p in 0..paths.len() {
            if paths.kept(p) && s.retag(p) > target {
                s.slot[p] = s.violated.len() as u32;
                s.violated.push(p as u32);
                s.violated_total += paths.stands_for(p);
            }
        }
        s.best = s.violated_total;
        s.mark = (s.violated_total, 0);
        s.last_mark = s.mark;
        // Tagging every path once is set-up, not search: neither the
        // budget nor the stall rule counts it (on Jellyfish 2000 it is
        // about 15M evaluations, most of the stall rule's patience).
        *s.work.get_mut() = 0;
        s
    }

    /// The tag after the transition out of channel slot `slot` at `tag`
    /// (at most the target): the installed one where pinned, else one up
    /// when `descent` says the order does not keep it. Capped at target +
    /// 1, as the cached tags are.
    #[inline]
    fn after(&self, slot: usize, tag: u32, descent: impl FnOnce() -> bool) -> u32 {
        match self.pins.and_then(|p| p.next_tag(slot, tag)) {
            Some(t2) => t2.min(self.target + 1),
            None => tag + u32::from(descent()),
        }
    }

    /// The order tied to order `t` (itself when not symmetric, or the
    /// middle order).
    fn pair(&self, t: usize) -> usize {
        if self.symmetric {
            self.target as usize - 1 - t
        } else {
            t
        }
    }

    /// Writes order `t`'s mirror into its pair.
    fn mirror(&mut self, t: usize) {
        let m = self.pair(t);
        let mirrored: Vec<u64> = (0..self.pos[t].len())
            .map(|c| MIRROR - self.pos[t][c ^ 1])
            .collect();
        self.pos[m] = mirrored;
    }

    /// Spreads order `t` (and keeps its pair its mirror).
    fn relabel(&mut self, t: usize) {
        let m = self.pair(t);
        if !self.symmetric {
            self.pos[t] = relabelled(&self.pos[t]);
        } else if m == t {
            self.pos[t] = relabelled_mirror(&self.pos[t]);
        } else {
            self.pos[t] = relabelled(&self.pos[t]);
            self.mirror(t);
        }
    }

    /// Holds node `v`'s class bound to `n` (see [`class_bound`]), and measures
    /// progress afresh from here: the stall rule then counts from what is
    /// left now, not from the fewest seen before.
    fn tighten(&mut self, v: tagger_generators::NodeId, n: u32) {
        let cl = self.classes.as_mut().expect("held to a class budget");
        cl.tighten(&self.pos, v, n);
        self.best = self.left();
        self.mark = (self.best, *self.work.get_mut());
        self.last_mark = self.mark;
    }

    /// Node `v`'s class bound now (see [`class_bound`]).
    fn class_bound(&self, v: tagger_generators::NodeId) -> u32 {
        self.classes.as_ref().map_or(0, |c| c.count(v))
    }

    /// Classes over the budget, summed over the nodes (0 without one).
    fn excess(&self) -> u64 {
        self.classes.as_ref().map_or(0, |c| c.excess)
    }

    /// True when no path passes the target and no node the class budget.
    fn done(&self) -> bool {
        self.violated.is_empty() && self.excess() == 0
    }

    /// What is left to the target: paths of the whole ELP past it, and
    /// classes over the budget.
    fn left(&self) -> u64 {
        self.violated_total + self.excess()
    }

    /// Paths currently past the target.
    pub fn violated(&self) -> usize {
        self.violated.len()
    }

    /// The paths currently past the target (indices into the paths), in
    /// no particular order.
    pub fn violated_paths(&self) -> &[u32] {
        &self.violated
    }

    /// Recomputes path `p`'s cached tags; returns its last tag (capped at
    /// target + 1).
    fn retag(&mut self, p: usize) -> u32 {
        *self.work.get_mut() += 1;
        let (a, path) = self.paths.get(p);
        let mut tag = 1u32;
        self.tags[a] = 1;
        for (i, w) in path.windows(2).enumerate() {
            if tag <= self.target {
                let o = &self.pos[tag as usize - 1];
                tag = self.after(a + i, tag, || o[w[0] as usize] >= o[w[1] as usize]);
            }
            self.tags[a + i + 1] = tag as u8;
        }
        tag
    }

    /// The last tag of path `p` with channel `c` (at index `j`) at doubled
    /// position `x2` in order `t` (every other position doubled too, so
    /// `x2` may sit between two integers). Transitions before `j - 1` do
    /// not involve `c` (paths are simple), so the walk starts there from
    /// the cached tag.
    fn tag_with(&self, p: usize, j: usize, c: ChannelId, t: usize, x2: u64) -> u32 {
        self.work.fetch_add(1, Relaxed);
        let (a, path) = self.paths.get(p);
        let from = j.saturating_sub(1);
        let mut tag = self.tags[a + from] as u32;
        for (i, w) in path[from..].windows(2).enumerate() {
            if tag > self.target {
                return tag;
            }
            let tt = tag as usize - 1;
            let at = |ch: ChannelId| -> u64 {
                if tt == t && ch == c {
                    x2
                } else {
                    2 * self.pos[tt][ch as usize]
                }
            };
            tag = self.after(a + from + i, tag, || at(w[0]) >= at(w[1]));
        }
        tag
    }

    /// Runs until no path passes the target, `work` path evaluations were
    /// spent, the search stalled (the stall rule; a later call returns at
    /// once), or `stop` says so (a deadline passed, a stop was requested).
    /// Every 1,024 steps `progress(steps, violated, work)` is called (steps
    /// since the search began, work in this call) and `stop` asked. The
    /// residue is the fewest violated paths seen, not the last state's.
    pub fn run(
        &mut self,
        work: u64,
        stop: &dyn Fn() -> bool,
        mut progress: impl FnMut(u64, usize, u64),
    ) -> Outcome {
        let mut taken = 0u64;
        let mut timed_out = false;
        let start = *self.work.get_mut();
        let mut stalled = self.stalled();
        while !self.done() && !stalled && *self.work.get_mut() - start < work {
            if taken.is_multiple_of(1024) {
                let spent = *self.work.get_mut() - start;
                progress(self.steps + taken, self.violated.len(), spent);
                if stop() {
                    timed_out = true;
                    break;
                }
            }
            taken += 1;
            self.step();
            let (now, done) = (self.left(), *self.work.get_mut());
            self.best = self.best.min(now);
            if now + (self.mark.0 / 50).max(1) <= self.mark.0 {
                self.last_mark = self.mark;
                self.mark = (now, done);
            }
            stalled = self.stalled();
        }
        self.steps += taken;
        Outcome {
            reached: self.done(),
            steps: taken,
            residue: self.best,
            timed_out,
            stalled: stalled && !self.done(),
            work: *self.work.get_mut() - start,
        }
    }

    /// Evaluations it would still take to reach the target at the rate of
    /// its last drop by a fiftieth (the evaluations between the last two
    /// marks), once it has run [`PATIENCE`]; `None` before.
    fn needs(&self) -> Option<u64> {
        let ((was, from), (now, to)) = (self.last_mark, self.mark);
        let done = self.work.load(Relaxed);
        if done < PATIENCE || to <= from || now >= was {
            return None;
        }
        let need = u128::from(now) * u128::from(to - from) / u128::from(was - now);
        Some(u64::try_from(need).unwrap_or(u64::MAX))
    }

    /// True when the fewest violated paths have not dropped by a fiftieth
    /// for [`PATIENCE`] evaluations or as many as it took to get there.
    fn stalled(&self) -> bool {
        let done = self.work.load(Relaxed);
        done - self.mark.1 >= PATIENCE.max(self.mark.1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tagging::*;

    fn paths(list: &[&[u32]]) -> ChannelPaths {
        let mut p = ChannelPaths::default();
        for l in list {
            p.push(l).unwrap();
        }
        p
    }

    /// The oracle: a path's last tag under orders `pos`, one transition at
    /// a time as the order form defines it (docs/priorities.md).
    fn path_tag(pos: &[Vec<u64>], path: &[ChannelId]) -> u32 {
        let mut t = 1u32;
        for w in path.windows(2) {
            let o = &pos[(t as usize).min(pos.len()) - 1];
            if o[w[0] as usize] >= o[w[1] as usize] {
                t += 1;
            }
        }
        t
    }

    /// Three channels in a cycle of transitions cannot all keep one
    /// priority; with two, the search finds orders that fit.
    #[test]
    fn a_triangle_needs_and_gets_two() {
        let p = paths(&[&[0, 1, 2], &[1, 2, 0], &[2, 0, 1]]);
        let start = vec![vec![0u64, 0, 0]];
        let mut one = LocalSearch::new(&p, 3, &start, 1, 7);
        assert!(!one.run(100_000, &|| false, |_, _, _| {}).reached);
        let mut two = LocalSearch::new(&p, 3, &start, 2, 7);
        let out = two.run(100_000, &|| false, |_, _, _| {});
        assert!(out.reached, "{out:?}");
        for i in 0..p.len() {
            assert!(path_tag(&two.pos, p.path(i)) <= 2);
        }
    }

    /// Pulling a plan's orders toward other orders never lets a path pass
    /// the target (the oracle walks every path), and orders already at
    /// the start stay where they are. Small random instances.
    #[test]
    fn pulling_toward_a_start_keeps_every_path_within_the_target() {
        use rand::{Rng, SeedableRng};
        let mut pulled = 0;
        for seed in 0..60u64 {
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
            let n = 12u32;
            let list: Vec<Vec<u32>> = (0..24)
                .map(|_| {
                    let len = rng.random_range(3..6);
                    let mut path: Vec<u32> = Vec::new();
                    while path.len() < len {
                        let c = rng.random_range(0..n);
                        if !path.contains(&c) {
                            path.push(c);
                        }
                    }
                    path
                })
                .collect();
            let refs: Vec<&[u32]> = list.iter().map(|v| v.as_slice()).collect();
            let p = paths(&refs);
            let start: Vec<Vec<u64>> = (0..3)
                .map(|_| (0..n).map(|_| rng.random_range(0..1000u64)).collect())
                .collect();
            let mut ls = LocalSearch::new(&p, n as usize, &start, 2, seed);
            if !ls.run(200_000, &|| false, |_, _, _| {}).reached {
                continue;
            }
            let found = ls.pos.clone();
            pulled += ls.pull_toward(&start, u64::MAX);
            assert_eq!(ls.violated(), 0, "seed {seed}");
            for i in 0..p.len() {
                assert!(path_tag(&ls.pos, p.path(i)) <= 2, "seed {seed}, path {i}");
            }
            // At its own orders there is nothing to pull toward.
            let mut again = LocalSearch::new(&p, n as usize, &found, 2, seed);
            assert_eq!(again.pull_toward(&found, u64::MAX), 0, "seed {seed}");
        }
        assert!(pulled > 0, "some plan moved");
    }

    /// A target no plan reaches ends by the stall rule, long before a large
    /// budget runs out, after at least the patience; the residue is the
    /// fewest violated paths seen, which no progress report undercuts.
    #[test]
    fn an_unreachable_target_stalls() {
        let t = crate::TopologySpec::parse("jellyfish:n=40,ports=12,r=6,seed=3")
            .unwrap()
            .build()
            .unwrap();
        let elp = ElpSet::build(&t, &crate::elp::ElpSpec::parse("shortest").unwrap()).unwrap();
        let g = tag(&t, &elp, Algo::GREEDY, CycleBackend::Ordered).unwrap();
        let paths = crate::elp::enumerate::maximal_channel_paths(&t, &elp, u64::MAX)
            .unwrap()
            .retain(|p| p.len() > 1);
        let n = t.channel_count();
        // One priority is impossible once any cycle of transitions exists.
        assert!(g.lower_bound >= 2);
        let start = order::OrderPlan::from_keys(n, &g.keys, g.priorities).truncated(1);
        let mut ls = LocalSearch::new(&paths, n, &start.pos, 1, 3);
        // Tagging the paths at the start is not search work: counted, it
        // would spend the patience of a large instance before any step.
        assert_eq!(*ls.work.get_mut(), 0);
        let mut seen = u64::MAX;
        // Run in two calls, as a portfolio's rounds do: the steps reported
        // count from the start of the search, not of the call.
        let mut steps = Vec::new();
        let mut watch = |s: u64, v: usize, _: u64| {
            seen = seen.min(v as u64);
            steps.push(s);
        };
        let first = ls.run(1_000_000, &|| false, &mut watch);
        let out = ls.run(u64::MAX / 2, &|| false, &mut watch);
        assert!(steps.windows(2).all(|w| w[0] < w[1]), "{steps:?}");
        assert!(steps.len() > 2 && *steps.last().unwrap() >= first.steps);
        assert!(out.stalled && !out.reached && !out.timed_out, "{out:?}");
        let total = first.work + out.work;
        assert!((PATIENCE..u64::MAX / 4).contains(&total), "{out:?}");
        assert!(out.residue > 0 && out.residue <= seen, "{out:?} {seen}");
        assert!(out.residue <= ls.violated_total);
        // Stalled stays stalled: a second call does no work.
        let again = ls.run(u64::MAX / 2, &|| false, |_, _, _| {});
        assert!(
            again.stalled && again.work == 0 && again.steps == 0,
            "{again:?}"
        );
    }

    #[test]
    fn relabelling_keeps_order_and_ties() {
        let r = relabelled(&[5, 1, 5, 0]);
        assert!(r[3] < r[1] && r[1] < r[0] && r[0] == r[2] && r[3] >= GAP);
    }
}
