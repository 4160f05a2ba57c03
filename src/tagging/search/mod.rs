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
//! the projection is a hopeful one).
//!
//! Complexity per step: O(L * (occ * L + d log d)) for a path of L links,
//! channels on `occ` paths each, and `d` distinct neighbour positions.
//!
//! With `symmetric` (the default), a reversal-symmetric search (order
//! P-1-t mirrors order t on the reversed channels) runs beside the
//! unrestricted one, each on its own core.
//!
//! The driver (the search over targets, a portfolio of searches per
//! target) is in `driver.rs`; the halving of paths for the symmetric
//! search in `symmetric.rs`.

use super::pins::Pins;
use crate::elp::enumerate::ChannelPaths;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use tagger_generators::ChannelId;
mod driver;
mod symmetric;

pub(super) use driver::plan;
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

/// Occurrences a step's candidates must reach before they are scored in
/// parallel (below it, rayon's fork and join cost more than they save).
const PARALLEL_OCC: usize = 4096;

/// No free position in the region a move wants: the order must be spread.
#[derive(Clone, Copy, Debug)]
struct Cramped;

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
    paths: &'a ChannelPaths,
    /// Occurrences `(path, index)` of each channel.
    occ: Occurrences,
    /// `pos[t][c]`, for `t` in `0..target`.
    pub pos: Vec<Vec<u64>>,
    target: u32,
    weight: Vec<u32>,
    /// The tag each path carries on each of its channels (capped at
    /// target + 1), parallel to `paths.channels`.
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
    /// Paths of the whole ELP each path stands for (a symmetric search's
    /// kept path stands for its reverse too); `None`: one each.
    stands_for: Option<&'a [u8]>,
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
}

/// A move: put channel `c` in order `t` at position `at`, changing the
/// weighted count by `delta`.
#[derive(Clone, Copy, Debug)]
struct Move {
    delta: i64,
    c: ChannelId,
    t: usize,
    at: u64,
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
        Self::start(paths, channels, pos, target, seed, None, None)
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
        Self::start(paths, channels, pos, target, seed, None, Some(pins))
    }

    /// [`LocalSearch::new`] restricted to plans that map onto themselves
    /// when every path is reversed: order `P - 1 - t` is order `t`
    /// negated on the reversed channels (the middle order of an odd `P` is
    /// its own mirror). A path and its reverse then impose one condition,
    /// and a move places a channel and its reverse together. A
    /// restriction, not a relaxation: failing proves nothing. The start
    /// takes the lower half of `pos` and mirrors it. It runs on one of
    /// each path and its reverse ([`Halved`]), which halves the work for
    /// the same plans.
    pub fn new_symmetric(
        halved: &'a Halved,
        channels: usize,
        pos: &[Vec<u64>],
        target: u32,
        seed: u64,
    ) -> Self {
        Self::start(
            &halved.paths,
            channels,
            pos,
            target,
            seed,
            Some(&halved.stands_for),
            None,
        )
    }

    fn start(
        paths: &'a ChannelPaths,
        channels: usize,
        pos: &[Vec<u64>],
        target: u32,
        seed: u64,
        stands_for: Option<&'a [u8]>,
        pins: Option<&'a Pins>,
    ) -> Self {
        let symmetric = stands_for.is_some();
        let mut s = LocalSearch {
            paths,
            occ: Occurrences::build(paths, channels),
            pos: (0..target as usize)
                .map(|t| relabelled(&pos[t.min(pos.len() - 1)]))
                .collect(),
            target,
            weight: vec![1; paths.len()],
            tags: vec![0; paths.channels.len()],
            violated: Vec::new(),
            slot: vec![u32::MAX; paths.len()],
            rng: ChaCha8Rng::seed_from_u64(seed),
            work: AtomicU64::new(0),
            symmetric,
            stands_for,
            violated_total: 0,
            best: 0,
            mark: (0, 0),
            last_mark: (0, 0),
            steps: 0,
            pins,
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
            if s.retag(p) > target {
                s.slot[p] = s.violated.len() as u32;
                s.violated.push(p as u32);
                s.violated_total += s.stands_for(p);
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

    /// Paths of the whole ELP that path `p` stands for.
    fn stands_for(&self, p: usize) -> u64 {
        self.stands_for.map_or(1, |m| u64::from(m[p]))
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
        let (a, b) = (self.paths.offsets[p], self.paths.offsets[p + 1]);
        let path = &self.paths.channels[a..b];
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
        let a = self.paths.offsets[p];
        let path = self.paths.path(p);
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
        while !self.violated.is_empty() && !stalled && *self.work.get_mut() - start < work {
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
            let (now, done) = (self.violated_total, *self.work.get_mut());
            self.best = self.best.min(now);
            if now + (self.mark.0 / 50).max(1) <= self.mark.0 {
                self.last_mark = self.mark;
                self.mark = (now, done);
            }
            stalled = self.stalled();
        }
        self.steps += taken;
        Outcome {
            reached: self.violated.is_empty(),
            steps: taken,
            residue: self.best,
            timed_out,
            stalled: stalled && !self.violated.is_empty(),
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

    fn step(&mut self) {
        let p = self.violated[self.rng.random_range(0..self.violated.len())] as usize;
        let path = self.paths.path(p);
        // Candidates: both channels of every descent at a tag within the
        // target.
        let mut cands: Vec<(ChannelId, usize)> = Vec::new();
        let mut tag = 1usize;
        let a = self.paths.offsets[p];
        for (i, w) in path.windows(2).enumerate() {
            if tag > self.target as usize {
                break;
            }
            // No move changes a pinned transition.
            if let Some(t2) = self.pins.and_then(|pins| pins.next_tag(a + i, tag as u32)) {
                tag = t2 as usize;
                continue;
            }
            let o = &self.pos[tag - 1];
            if o[w[0] as usize] >= o[w[1] as usize] {
                // A symmetric search moves the lower order of a pair (its
                // mirror follows).
                let t = tag - 1;
                let m = self.pair(t);
                for c in [w[0], w[1]] {
                    cands.push(if m < t { (c ^ 1, m) } else { (c, t) });
                }
                tag += 1;
            }
        }
        cands.sort_unstable();
        cands.dedup();
        // Candidates are scored independently; in parallel when they are
        // worth a task (the sum of the evaluations does not depend on the
        // split, so neither does the budget).
        let occ: usize = cands.iter().map(|&(c, _)| self.occ.range(c).len()).sum();
        let mut scored: Vec<Result<Option<Move>, Cramped>> = if occ >= PARALLEL_OCC {
            cands
                .par_iter()
                .map(|&(c, t)| self.best_move(c, t))
                .collect()
        } else {
            cands.iter().map(|&(c, t)| self.best_move(c, t)).collect()
        };
        // A region too narrow for a move: spread that order, and score
        // every candidate in it again (their positions were relabelled).
        while let Some(i) = scored.iter().position(Result::is_err) {
            let t = cands[i].1;
            self.relabel(t);
            for (j, &(c, tj)) in cands.iter().enumerate() {
                if tj == t {
                    scored[j] = self.best_move(c, t);
                }
            }
        }
        let scored: Vec<Option<Move>> = scored.into_iter().map(|r| r.ok().flatten()).collect();
        let mut best: Option<Move> = None;
        for m in scored.into_iter().flatten() {
            if best.is_none_or(|b| m.delta < b.delta) {
                best = Some(m);
            }
        }
        match best {
            Some(m) if m.delta < 0 => self.apply(m),
            Some(m) if m.delta == 0 && self.rng.random_ratio(1, 4) => self.apply(m),
            _ => {
                // A local minimum for this path: make it weigh more.
                self.weight[p] = self.weight[p].saturating_add(1);
            }
        }
    }

    /// The best position for channel `c` in order `t` (None when it has no
    /// neighbours to be placed against, or only its current region), or
    /// [`Cramped`] when no position is free in the best region. In a
    /// symmetric search the move also places `c ^ 1` at the mirrored
    /// position in order `t`'s pair, so the paths through `c ^ 1` are
    /// scored too, their neighbours mirrored into order `t`'s positions.
    fn best_move(&self, c: ChannelId, t: usize) -> Result<Option<Move>, Cramped> {
        let o = &self.pos[t];
        // The sides a move touches: (channel, its order, mirrored).
        let mut sides = vec![(c, t, false)];
        if self.symmetric {
            sides.push((c ^ 1, self.pair(t), true));
        }
        // A neighbour's position in order `t`'s coordinates.
        let at = |n: ChannelId, tt: usize, mirrored: bool| -> u64 {
            if mirrored {
                MIRROR - self.pos[tt][n as usize]
            } else {
                self.pos[tt][n as usize]
            }
        };
        let mut marks: Vec<u64> = Vec::new();
        for &(ch, tt, mirrored) in &sides {
            for i in self.occ.range(ch) {
                let (q, j) = self.occ.get(i);
                let path = self.paths.path(q as usize);
                let j = j as usize;
                if j > 0 {
                    marks.push(at(path[j - 1], tt, mirrored));
                }
                if j + 1 < path.len() {
                    marks.push(at(path[j + 1], tt, mirrored));
                }
            }
        }
        if marks.is_empty() {
            return Ok(None);
        }
        // A pinned channel stays between its installed neighbours: their
        // positions are marks, and only the regions between them count.
        let (floor, ceil) = self.pins.map_or((None, None), |pins| pins.bounds(t, c, o));
        marks.extend(floor);
        marks.extend(ceil);
        marks.sort_unstable();
        marks.dedup();
        // diff[i]: change of cost entering region i (x in (marks[i-1],
        // marks[i])); region 0 is below every mark, region k above.
        let k = marks.len();
        let mut diff = vec![0i64; k + 2];
        let mut now = 0i64;
        let idx = |m: u64| marks.binary_search(&m).expect("every neighbour is marked");
        for &(ch, tt, mirrored) in &sides {
            let mut last_q = u32::MAX;
            for i in self.occ.range(ch) {
                let (q, j) = self.occ.get(i);
                if q == last_q {
                    continue; // a channel twice on one path: scored once
                }
                last_q = q;
                let path = self.paths.path(q as usize);
                let j = j as usize;
                // Order tt decides a transition at ch only if the path
                // carries tag tt + 1 (1-based) into it or out of it;
                // otherwise every region costs the same and the path is
                // left out of the sums.
                let a = self.paths.offsets[q as usize];
                let before = self.tags[a + j.saturating_sub(1)] as usize;
                if before > tt + 1 || before + 1 < tt + 1 {
                    continue;
                }
                let w = self.weight[q as usize] as i64;
                let prev = (j > 0).then(|| at(path[j - 1], tt, mirrored));
                let next = path.get(j + 1).map(|&n| at(n, tt, mirrored));
                let (lo, hi) = match (prev, next) {
                    (Some(x), Some(y)) => (x.min(y), x.max(y)),
                    (Some(x), None) | (None, Some(x)) => (x, x),
                    (None, None) => continue,
                };
                // x2: the doubled position of `c` in order t; the mirrored
                // side sits at the doubled mirror in its own order.
                let cost = |x2: u64| -> i64 {
                    let x2 = if mirrored { 2 * MIRROR - x2 } else { x2 };
                    if self.tag_with(q as usize, j, ch, tt, x2) > self.target {
                        w
                    } else {
                        0
                    }
                };
                let below = cost(2 * lo - 1);
                let above = cost(2 * hi + 1);
                let between = if hi > lo { cost(lo + hi) } else { above };
                if self.slot[q as usize] != u32::MAX {
                    now += w;
                }
                diff[0] += below;
                diff[idx(lo) + 1] += between - below;
                diff[idx(hi) + 1] += above - between;
            }
        }
        let mut run = 0i64;
        let mut best: Option<(i64, usize)> = None;
        for (i, d) in diff.iter().take(k + 1).enumerate() {
            run += d;
            // Region i lies in (marks[i - 1], marks[i]).
            let allowed = floor.is_none_or(|f| i > 0 && marks[i - 1] >= f)
                && ceil.is_none_or(|h| i < k && marks[i] <= h);
            if allowed && best.is_none_or(|b| run < b.0) {
                best = Some((run, i));
            }
        }
        let (total, region) = best.expect("the channel's own region is allowed");
        let cur = o[c as usize];
        let lo = (region > 0).then(|| marks[region - 1]);
        let hi = marks.get(region).copied();
        if lo.is_none_or(|l| cur > l) && hi.is_none_or(|h| cur < h) {
            return Ok(None); // already there
        }
        let at = match (lo, hi) {
            (Some(l), Some(h)) if h - l >= 2 => l + (h - l) / 2,
            (None, Some(h)) if h >= 2 => h / 2,
            (Some(l), None) if l + GAP < MIRROR => l + GAP,
            _ => return Err(Cramped),
        };
        Ok(Some(Move {
            delta: total - now,
            c,
            t,
            at,
        }))
    }

    fn apply(&mut self, m: Move) {
        self.pos[m.t][m.c as usize] = m.at;
        let mut moved = vec![m.c];
        if self.symmetric {
            let pair = self.pair(m.t);
            self.pos[pair][(m.c ^ 1) as usize] = MIRROR - m.at;
            moved.push(m.c ^ 1);
        }
        for ch in moved {
            self.retag_through(ch);
        }
    }

    /// Retags every path through channel `ch` and updates the violated
    /// list.
    fn retag_through(&mut self, ch: ChannelId) {
        for i in self.occ.range(ch) {
            let q = self.occ.get(i).0 as usize;
            let bad = self.retag(q) > self.target;
            let was = self.slot[q] != u32::MAX;
            if bad && !was {
                self.slot[q] = self.violated.len() as u32;
                self.violated.push(q as u32);
                self.violated_total += self.stands_for(q);
            } else if !bad && was {
                self.violated_total -= self.stands_for(q);
                let at = self.slot[q] as usize;
                let last = *self.violated.last().expect("q is in the list");
                self.violated.swap_remove(at);
                if last as usize != q {
                    self.slot[last as usize] = at as u32;
                }
                self.slot[q] = u32::MAX;
            }
        }
    }
}

/// Where each channel occurs: `(path, index)` pairs, grouped by channel
/// (CSR), each packed into one integer, the path above the index's bits.
/// Packed into a `u32` wherever the paths allow (on Jellyfish 2000
/// `shortest`, 17.3M paths of at most 5 links: 3 index bits, 29 for the
/// path), which halves the largest array of the search's state against a
/// pair of `u32`s (80M occurrences: 640 to 320 MB); into a `u64` otherwise.
#[derive(Debug)]
struct Occurrences {
    start: Vec<usize>,
    /// Bits of the index.
    shift: u32,
    packed: Packed,
}

#[derive(Debug)]
enum Packed {
    Narrow(Vec<u32>),
    Wide(Vec<u64>),
}

impl Occurrences {
    fn build(paths: &ChannelPaths, channels: usize) -> Self {
        let mut start = vec![0usize; channels + 1];
        for &c in &paths.channels {
            start[c as usize + 1] += 1;
        }
        for i in 0..channels {
            start[i + 1] += start[i];
        }
        let longest = (0..paths.len())
            .map(|p| paths.path(p).len())
            .max()
            .unwrap_or(1);
        let shift = usize::BITS - (longest.max(2) - 1).leading_zeros();
        let narrow = (paths.len() as u64) < 1u64 << (32 - shift.min(31));
        let mut fill = start.clone();
        let mut packed = if narrow {
            Packed::Narrow(vec![0; paths.channels.len()])
        } else {
            Packed::Wide(vec![0; paths.channels.len()])
        };
        for p in 0..paths.len() {
            for (j, &c) in paths.path(p).iter().enumerate() {
                let at = fill[c as usize];
                let v = (p as u64) << shift | j as u64;
                match &mut packed {
                    Packed::Narrow(x) => x[at] = v as u32,
                    Packed::Wide(x) => x[at] = v,
                }
                fill[c as usize] += 1;
            }
        }
        Occurrences {
            start,
            shift,
            packed,
        }
    }

    /// Positions of channel `c`'s occurrences, for [`Occurrences::get`].
    fn range(&self, c: ChannelId) -> std::ops::Range<usize> {
        self.start[c as usize]..self.start[c as usize + 1]
    }

    /// Occurrence `i`: `(path, index in the path)`.
    #[inline]
    fn get(&self, i: usize) -> (u32, u32) {
        let v = match &self.packed {
            Packed::Narrow(x) => x[i] as u64,
            Packed::Wide(x) => x[i],
        };
        (
            (v >> self.shift) as u32,
            (v & ((1 << self.shift) - 1)) as u32,
        )
    }
}

/// [`relabelled`] for an order that is its own mirror (`pos[c] +
/// pos[c ^ 1] = MIRROR`): ties and the order kept, gaps of twice [`GAP`],
/// centred on `MIRROR / 2` so that the mirror still holds.
fn relabelled_mirror(pos: &[u64]) -> Vec<u64> {
    let mut values: Vec<u64> = pos.to_vec();
    values.sort_unstable();
    values.dedup();
    let n = values.len() as u64;
    pos.iter()
        .map(|x| {
            let i = values.binary_search(x).expect("a value of the order") as u64 + 1;
            // MIRROR / 2 + (2i - n - 1) * GAP, kept non-negative.
            (MIRROR / 2 + 2 * i * GAP) - (n + 1) * GAP
        })
        .collect()
}

/// The same order with ties kept and gaps of [`GAP`] (positions start at
/// `GAP`, so there is room below the first).
fn relabelled(pos: &[u64]) -> Vec<u64> {
    let mut idx: Vec<u32> = (0..pos.len() as u32).collect();
    idx.sort_by_key(|&c| (pos[c as usize], c));
    let mut out = vec![0u64; pos.len()];
    let mut rank = 0u64;
    for (i, &c) in idx.iter().enumerate() {
        if i > 0 && pos[c as usize] != pos[idx[i - 1] as usize] {
            rank += 1;
        }
        out[c as usize] = (rank + 1) * GAP;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tagging::*;

    fn paths(list: &[&[u32]]) -> ChannelPaths {
        let mut p = ChannelPaths {
            channels: Vec::new(),
            offsets: vec![0],
        };
        for l in list {
            p.channels.extend_from_slice(l);
            p.offsets.push(p.channels.len());
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
