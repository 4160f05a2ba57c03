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
//! Morris, AAAI 1993), so paths that resist gain pull. The search is
//! sequential and seeded: a seed and a step budget give the same result on
//! any number of threads.
//!
//! Complexity per step: O(L * (occ * L + d log d)) for a path of L links,
//! channels on `occ` paths each, and `d` distinct neighbour positions.

use crate::elp::enumerate::ChannelPaths;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use tagger_generators::ChannelId;
// The driver (`search_plan`) speaks the tagging stage's types.
use super::*;

/// Gap between neighbouring positions after a relabelling; a move halves a
/// gap, so a region of an order is relabelled after about 24 moves into it.
const GAP: u64 = 1 << 24;

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
}

/// The search state for one target.
#[derive(Debug)]
pub struct LocalSearch<'a> {
    paths: &'a ChannelPaths,
    /// Occurrences `(path, index)` of each channel, CSR by channel.
    occ_start: Vec<usize>,
    occ: Vec<(u32, u32)>,
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
        let mut count = vec![0usize; channels + 1];
        for &c in &paths.channels {
            count[c as usize + 1] += 1;
        }
        for i in 0..channels {
            count[i + 1] += count[i];
        }
        let mut fill = count.clone();
        let mut occ = vec![(0u32, 0u32); paths.channels.len()];
        for p in 0..paths.len() {
            for (j, &c) in paths.path(p).iter().enumerate() {
                occ[fill[c as usize]] = (p as u32, j as u32);
                fill[c as usize] += 1;
            }
        }
        let mut s = LocalSearch {
            paths,
            occ_start: count,
            occ,
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
        };
        for p in 0..paths.len() {
            if s.retag(p) > target {
                s.slot[p] = s.violated.len() as u32;
                s.violated.push(p as u32);
            }
        }
        s
    }

    /// Paths currently past the target.
    pub fn violated(&self) -> usize {
        self.violated.len()
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
                if o[w[0] as usize] >= o[w[1] as usize] {
                    tag += 1;
                }
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
        for w in path[from..].windows(2) {
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
            if at(w[0]) >= at(w[1]) {
                tag += 1;
            }
        }
        tag
    }

    /// Runs until no path passes the target, `work` path evaluations were
    /// spent, or `stop` says so (a deadline passed, a stop was requested).
    /// Every 1,024 steps `progress(steps, violated)` is called and `stop`
    /// asked.
    pub fn run(
        &mut self,
        work: u64,
        stop: &dyn Fn() -> bool,
        mut progress: impl FnMut(u64, usize),
    ) -> Outcome {
        let mut taken = 0u64;
        let mut timed_out = false;
        let start = *self.work.get_mut();
        while !self.violated.is_empty() && *self.work.get_mut() - start < work {
            if taken.is_multiple_of(1024) {
                progress(taken, self.violated.len());
                if stop() {
                    timed_out = true;
                    break;
                }
            }
            taken += 1;
            self.step();
        }
        Outcome {
            reached: self.violated.is_empty(),
            steps: taken,
            residue: self.violated.len() as u64,
            timed_out,
            work: *self.work.get_mut() - start,
        }
    }

    fn step(&mut self) {
        let p = self.violated[self.rng.random_range(0..self.violated.len())] as usize;
        let path = self.paths.path(p);
        // Candidates: both channels of every descent at a tag within the
        // target.
        let mut cands: Vec<(ChannelId, usize)> = Vec::new();
        let mut tag = 1usize;
        for w in path.windows(2) {
            if tag > self.target as usize {
                break;
            }
            let o = &self.pos[tag - 1];
            if o[w[0] as usize] >= o[w[1] as usize] {
                cands.push((w[0], tag - 1));
                cands.push((w[1], tag - 1));
                tag += 1;
            }
        }
        cands.sort_unstable();
        cands.dedup();
        // Candidates are scored independently; in parallel when they are
        // worth a task (the sum of the evaluations does not depend on the
        // split, so neither does the budget).
        let occ: usize = cands
            .iter()
            .map(|&(c, _)| self.occ_start[c as usize + 1] - self.occ_start[c as usize])
            .sum();
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
            self.pos[t] = relabelled(&self.pos[t]);
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
    /// [`Cramped`] when no position is free in the best region.
    fn best_move(&self, c: ChannelId, t: usize) -> Result<Option<Move>, Cramped> {
        let occs = &self.occ[self.occ_start[c as usize]..self.occ_start[c as usize + 1]];
        let o = &self.pos[t];
        let mut marks: Vec<u64> = Vec::with_capacity(2 * occs.len());
        for &(q, j) in occs {
            let path = self.paths.path(q as usize);
            let j = j as usize;
            if j > 0 {
                marks.push(o[path[j - 1] as usize]);
            }
            if j + 1 < path.len() {
                marks.push(o[path[j + 1] as usize]);
            }
        }
        if marks.is_empty() {
            return Ok(None);
        }
        marks.sort_unstable();
        marks.dedup();
        // diff[i]: change of cost entering region i (x in (marks[i-1],
        // marks[i])); region 0 is below every mark, region k above.
        let k = marks.len();
        let mut diff = vec![0i64; k + 2];
        let mut now = 0i64;
        let idx = |m: u64| marks.binary_search(&m).expect("every neighbour is marked");
        let mut last_q = u32::MAX;
        for &(q, j) in occs {
            if q == last_q {
                continue; // a channel twice on one path: scored once
            }
            last_q = q;
            let path = self.paths.path(q as usize);
            let j = j as usize;
            // Order t decides a transition at c only if the path carries
            // tag t + 1 (1-based) into it or out of it; otherwise every
            // region costs the same and the path is left out of the sums.
            let a = self.paths.offsets[q as usize];
            let before = self.tags[a + j.saturating_sub(1)] as usize;
            if before > t + 1 || before + 1 < t + 1 {
                continue;
            }
            let w = self.weight[q as usize] as i64;
            let prev = (j > 0).then(|| o[path[j - 1] as usize]);
            let next = path.get(j + 1).map(|&n| o[n as usize]);
            let (lo, hi) = match (prev, next) {
                (Some(x), Some(y)) => (x.min(y), x.max(y)),
                (Some(x), None) | (None, Some(x)) => (x, x),
                (None, None) => continue,
            };
            let cost = |x2: u64| -> i64 {
                if self.tag_with(q as usize, j, c, t, x2) > self.target {
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
        let mut run = 0i64;
        let mut best: Option<(i64, usize)> = None;
        for (i, d) in diff.iter().take(k + 1).enumerate() {
            run += d;
            if best.is_none_or(|b| run < b.0) {
                best = Some((run, i));
            }
        }
        let (total, region) = best.expect("k + 1 regions");
        let cur = o[c as usize];
        let lo = (region > 0).then(|| marks[region - 1]);
        let hi = marks.get(region).copied();
        if lo.is_none_or(|l| cur > l) && hi.is_none_or(|h| cur < h) {
            return Ok(None); // already there
        }
        let at = match (lo, hi) {
            (Some(l), Some(h)) if h - l >= 2 => l + (h - l) / 2,
            (None, Some(h)) if h >= 2 => h / 2,
            (Some(l), None) => l + GAP,
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
        let (a, b) = (
            self.occ_start[m.c as usize],
            self.occ_start[m.c as usize + 1],
        );
        for i in a..b {
            let q = self.occ[i].0 as usize;
            let bad = self.retag(q) > self.target;
            let was = self.slot[q] != u32::MAX;
            if bad && !was {
                self.slot[q] = self.violated.len() as u32;
                self.violated.push(q as u32);
            } else if !bad && was {
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

/// `search`: see [`Algo::Search`].
pub(super) fn plan(
    cx: &Context<'_>,
    work: u64,
    seed: u64,
    time_ms: Option<u64>,
    max_paths: u64,
) -> Result<Tagging> {
    let (topo, elp, cycle, budget) = (cx.topo, cx.elp, cx.cycle, cx.budget);
    let algo = Algo::Search {
        budget: work,
        seed,
        time_ms,
        max_paths,
    };
    let deadline =
        time_ms.map(|ms| std::time::Instant::now() + std::time::Duration::from_millis(ms));
    let greedy = super::checked(super::greedy::plan(cx, 1, 0)?)?;
    let lb = greedy.lower_bound;
    let levels = (greedy.priorities as usize).max(1);
    let mut plans = vec![order::OrderPlan::from_keys(
        topo.channel_count(),
        &greedy.keys,
        greedy.priorities,
    )];
    for (_, rank) in order::rankings(topo) {
        plans.push(order::OrderPlan::mountain(topo, &rank, levels));
        plans.push(order::OrderPlan::alternating(topo, &rank, levels));
    }
    // Compressed rules plus ingress maps, the tie-breaker at equal
    // priorities.
    let rules_of = |t: &Tagging| -> u64 { t.rule_count(topo) };
    // The orders with the fewest priorities seed the local search; the
    // plan kept is the best by (priorities, compressed rules), greedy's own
    // first so that ties keep it.
    let mut seed_orders = (u32::MAX, plans[0].clone());
    let mut best = (greedy.priorities, rules_of(&greedy), greedy);
    let consider = |plan: &order::OrderPlan,
                    best: &mut (u32, u64, Tagging),
                    seed_orders: &mut (u32, order::OrderPlan)|
     -> Result<()> {
        let t = finish(topo, algo, cycle, plan.walk(topo, elp, budget)?, budget)?;
        if t.priorities < seed_orders.0 {
            *seed_orders = (t.priorities, plan.truncated(t.priorities as usize));
        }
        if t.priorities <= best.0 && t.priorities <= MAX_TAG {
            let r = rules_of(&t);
            if (t.priorities, r) < (best.0, best.1) {
                *best = (t.priorities, r, t);
            }
        }
        Ok(())
    };
    for plan in &plans {
        consider(plan, &mut best, &mut seed_orders)?;
    }
    let mut effort = Effort::default();
    // The local search holds the maximal ELPs as channel sequences; past
    // max_paths ELPs it is not started (the count is known beforehand).
    let counts = elp.counts(topo);
    if best.0 > lb && work > 0 && counts.paths <= max_paths as u128 {
        // Channels, occurrences and cached tags: about 16 bytes per channel
        // of every path.
        budget.check(
            "tagging",
            (counts.paths as u64).saturating_mul(16 * (counts.longest as u64 + 1)),
        )?;
        let paths = crate::elp::enumerate::maximal_channel_paths(topo, elp, max_paths)?;
        // A path of L links carries at most L tags: it can never pass a
        // target of L or more.
        let floor = lb.max(1) as usize;
        let paths = paths.retain(|p| p.len() > floor);
        let mut left = work;
        let mut target = best.0 - 1;
        while target >= lb.max(1) && left > 0 {
            // Greedy's orders (or the last target's) start it: measured
            // against starting from the plan with the fewest violated
            // paths (the alternating plans), they left 4 paths instead
            // of 100 on Jellyfish 300/64 seed 1 and reached 2 on seed 2
            // where the other stalled at 69.
            let start = seed_orders.1.truncated(target as usize);
            let mut ls = LocalSearch::new(
                &paths,
                topo.channel_count(),
                &start.pos,
                target,
                crate::seed::mix(seed, target as u64),
            );
            let out = ls.run(left, &|| cx.control.expired(deadline), |steps, violated| {
                cx.control.report(control::Progress {
                    target,
                    steps,
                    violated: violated as u64,
                })
            });
            effort.steps += out.steps;
            left = left.saturating_sub(out.work);
            if !out.reached {
                effort.residue = out.residue;
                effort.stopped_early = out.timed_out;
                break;
            }
            let plan = order::OrderPlan { pos: ls.pos };
            consider(&plan, &mut best, &mut seed_orders)?;
            if best.0 > target {
                // Every maximal ELP fits the target, so the walk over
                // the whole ELP must agree; anything else is a bug.
                return Err(Error::SelfCheck {
                    stage: "tagging",
                    reason: format!(
                        "search: orders that fit every maximal path in {target} priorities need {} on the ELP",
                        best.0
                    ),
                });
            }
            target = best.0 - 1;
        }
    }
    let mut t = best.2;
    t.algo = algo;
    t.lower_bound = lb;
    t.effort = Some(effort);
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert!(!one.run(100_000, &|| false, |_, _| {}).reached);
        let mut two = LocalSearch::new(&p, 3, &start, 2, 7);
        let out = two.run(100_000, &|| false, |_, _| {});
        assert!(out.reached, "{out:?}");
        for i in 0..p.len() {
            assert!(path_tag(&two.pos, p.path(i)) <= 2);
        }
    }

    #[test]
    fn relabelling_keeps_order_and_ties() {
        let r = relabelled(&[5, 1, 5, 0]);
        assert!(r[3] < r[1] && r[1] < r[0] && r[0] == r[2] && r[3] >= GAP);
    }
}
