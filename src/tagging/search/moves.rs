//! The local search's moves: a step picks a violated path (or a node over
//! the class budget), scores every position of each channel a descent on
//! it (or a channel at the node) could move to, and makes the best move
//! (or weighs the path or node more).

use super::{GAP, LocalSearch, MIRROR};
use rand::Rng;
use rayon::prelude::*;
use tagger_generators::ChannelId;

/// Occurrences a step's candidates must reach before they are scored in
/// parallel (below it, rayon's fork and join cost more than they save).
const PARALLEL_OCC: usize = 4096;

/// No free position in the region a move wants: the order must be spread.
#[derive(Clone, Copy, Debug)]
struct Cramped;

/// A move: put channel `c` in order `t` at position `at`, changing the
/// weighted count by `delta`.
#[derive(Clone, Copy, Debug)]
struct Move {
    delta: i64,
    c: ChannelId,
    t: usize,
    at: u64,
}

/// Region `i` among the sorted `marks`: `(marks[i - 1], marks[i])`, open
/// below the first mark and above the last.
fn region(marks: &[u64], i: usize) -> (Option<u64>, Option<u64>) {
    ((i > 0).then(|| marks[i - 1]), marks.get(i).copied())
}

/// Whether position `x` lies strictly inside region `(lo, hi)`.
fn inside((lo, hi): (Option<u64>, Option<u64>), x: u64) -> bool {
    lo.is_none_or(|l| x > l) && hi.is_none_or(|h| x < h)
}

/// A free position in region `(lo, hi)`: its middle, or a gap above the
/// last mark; [`Cramped`] when there is none.
fn spot(bounds: (Option<u64>, Option<u64>)) -> Result<u64, Cramped> {
    match bounds {
        (Some(l), Some(h)) if h - l >= 2 => Ok(l + (h - l) / 2),
        (None, Some(h)) if h >= 2 => Ok(h / 2),
        (Some(l), None) if l + GAP < MIRROR => Ok(l + GAP),
        _ => Err(Cramped),
    }
}

impl LocalSearch<'_> {
    /// One step: a violated path at random, the best move of a channel of
    /// one of its descents, made when it lowers the weighted count (or,
    /// one time in four, when it keeps it); else the path weighs more.
    pub(super) fn step(&mut self) {
        // Held to a class budget: a node over it is picked as often as a
        // violated path, one of each at random.
        let over = self.classes.as_ref().map_or(0, |c| c.over().len());
        if over > 0 {
            let i = self.rng.random_range(0..over + self.violated.len());
            if i < over {
                let v = self.classes.as_ref().expect("held to a budget").over()[i];
                return self.node_step(v);
            }
        }
        let p = self.violated[self.rng.random_range(0..self.violated.len())] as usize;
        let (a, path) = self.paths.get(p);
        // Candidates: both channels of every descent at a tag within the
        // target.
        let mut cands: Vec<(ChannelId, usize)> = Vec::new();
        let mut tag = 1usize;
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
        if !self.make_best_move(&cands) {
            // A local minimum for this path: make it weigh more.
            self.weight.raise(p);
        }
    }

    /// A step at node `v`, over the class budget: the best move of one of
    /// its channels in any order, or `v` weighs more.
    fn node_step(&mut self, v: tagger_generators::NodeId) {
        let c = self.classes.as_ref().expect("held to a budget");
        let mut cands: Vec<(ChannelId, usize)> = Vec::new();
        for &o in c.outs(v) {
            for t in 0..self.target as usize {
                cands.push((o, t));
                cands.push((o ^ 1, t));
            }
        }
        cands.sort_unstable();
        cands.dedup();
        if !self.make_best_move(&cands) {
            let c = self.classes.as_mut().expect("held to a budget");
            c.weight[v as usize] = c.weight[v as usize].saturating_add(1);
        }
    }

    /// Scores every candidate `(channel, order)` and makes the best move
    /// when it lowers the weighted count (or, one time in four, when it
    /// keeps it). Returns whether a move was made.
    fn make_best_move(&mut self, cands: &[(ChannelId, usize)]) -> bool {
        // Candidates are scored independently; in parallel when they are
        // worth a task (the sum of the evaluations does not depend on the
        // split, so neither does the budget).
        let occ: usize = cands.iter().map(|&(c, _)| self.occ_range(c).len()).sum();
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
            _ => return false,
        }
        true
    }

    /// Moves channels, order by order, toward `start` (a position per
    /// channel per order) without letting any path pass the target or a
    /// node's class bound grow: each channel goes to the region between
    /// its path neighbours, among those that cost nothing more, where the
    /// most of its neighbours lie on the side `start` puts them (so the
    /// transitions between them keep or bump as the start orders make
    /// them), and stays where it is on a tie. One pass, channels in id
    /// order, at most `limit` moves. Returns the moves made.
    pub(in crate::tagging) fn pull_toward(&mut self, start: &[Vec<u64>], limit: u64) -> u64 {
        let mut moved = 0;
        for (t, to) in start.iter().enumerate().take(self.target as usize) {
            for c in 0..self.pos[t].len() as ChannelId {
                if moved >= limit {
                    return moved;
                }
                loop {
                    match self.pull_move(c, t, to) {
                        Ok(Some(m)) => {
                            self.apply(m);
                            moved += 1;
                        }
                        Ok(None) => {}
                        Err(Cramped) => {
                            self.relabel(t);
                            continue;
                        }
                    }
                    break;
                }
            }
        }
        moved
    }

    /// [`LocalSearch::pull_toward`]'s move of channel `c` in order `t`
    /// toward `start`, if one agrees with it on more neighbours at no
    /// cost.
    fn pull_move(&self, c: ChannelId, t: usize, start: &[u64]) -> Result<Option<Move>, Cramped> {
        let Some(&sc) = start.get(c as usize) else {
            return Ok(None);
        };
        let sides = [(c, t, false)];
        let Some(marks) = self.marks(&sides, None, None) else {
            return Ok(None);
        };
        let (diff, now) = self.region_costs(&sides, &marks);
        let (classes, classes_now) = self.class_costs(c, t, &marks);
        let now = now + classes_now;
        let k = marks.len();
        // Per mark, the neighbours there that `start` puts before `c`, and
        // after it (on the paths whose tags order `t` decides at `c`).
        let (mut before, mut after) = (vec![0i64; k], vec![0i64; k]);
        for i in self.occ_range(c) {
            let (q, j) = self.occ.get(i);
            let ((a, path), j) = (self.paths.get(q as usize), j as usize);
            let tag = self.tags[a + j.saturating_sub(1)] as usize;
            if tag > t + 1 || tag + 1 < t + 1 {
                continue;
            }
            let around = [j.checked_sub(1).map(|x| path[x]), path.get(j + 1).copied()];
            for n in around.into_iter().flatten() {
                let Some(&sn) = start.get(n as usize) else {
                    continue;
                };
                let Ok(m) = marks.binary_search(&self.pos[t][n as usize]) else {
                    continue;
                };
                if sn < sc {
                    before[m] += 1;
                } else if sn > sc {
                    after[m] += 1;
                }
            }
        }
        let cur = self.pos[t][c as usize];
        let mut agree: i64 = after.iter().sum();
        let (mut run, mut here_now) = (0i64, None);
        let mut best: Option<(i64, usize, i64)> = None;
        for i in 0..=k {
            if i > 0 {
                agree += before[i - 1] - after[i - 1];
            }
            run += diff[i];
            let here = run + classes.get(i).copied().unwrap_or(0);
            if inside(region(&marks, i), cur) {
                here_now = Some(agree);
            }
            if here <= now && best.is_none_or(|b| agree > b.0) {
                best = Some((agree, i, here));
            }
        }
        // On a neighbour's position itself, or nowhere better: stay.
        let (Some(agree_now), Some((a, to, here))) = (here_now, best) else {
            return Ok(None);
        };
        if a <= agree_now {
            return Ok(None);
        }
        Ok(Some(Move {
            delta: here - now,
            c,
            t,
            at: spot(region(&marks, to))?,
        }))
    }

    /// The best position for channel `c` in order `t` (None when it has no
    /// neighbours to be placed against, or only its current region), or
    /// [`Cramped`] when no position is free in the best region. In a
    /// symmetric search the move also places `c ^ 1` at the mirrored
    /// position in order `t`'s pair, so the paths through `c ^ 1` are
    /// scored too, their neighbours mirrored into order `t`'s positions.
    fn best_move(&self, c: ChannelId, t: usize) -> Result<Option<Move>, Cramped> {
        // The sides a move touches: (channel, its order, mirrored).
        let mut sides = vec![(c, t, false)];
        if self.symmetric {
            sides.push((c ^ 1, self.pair(t), true));
        }
        // A pinned channel stays between its installed neighbours: their
        // positions are marks, and only the regions between them count.
        let (floor, ceil) = self
            .pins
            .map_or((None, None), |pins| pins.bounds(t, c, &self.pos[t]));
        let Some(marks) = self.marks(&sides, floor, ceil) else {
            return Ok(None);
        };
        let (diff, now) = self.region_costs(&sides, &marks);
        let (classes, classes_now) = self.class_costs(c, t, &marks);
        let now = now + classes_now;
        let k = marks.len();
        let mut run = 0i64;
        let mut best: Option<(i64, usize)> = None;
        for (i, d) in diff.iter().take(k + 1).enumerate() {
            run += d;
            let here = run + classes.get(i).copied().unwrap_or(0);
            // Region i lies in (marks[i - 1], marks[i]).
            let allowed = floor.is_none_or(|f| i > 0 && marks[i - 1] >= f)
                && ceil.is_none_or(|h| i < k && marks[i] <= h);
            if allowed && best.is_none_or(|b| here < b.0) {
                best = Some((here, i));
            }
        }
        let (total, to) = best.expect("the channel's own region is allowed");
        let bounds = region(&marks, to);
        if inside(bounds, self.pos[t][c as usize]) {
            return Ok(None); // already there
        }
        Ok(Some(Move {
            delta: total - now,
            c,
            t,
            at: spot(bounds)?,
        }))
    }

    /// Neighbour `n`'s position in order `tt`, in the coordinates of the
    /// order a move is scored in (mirrored for the mirror side).
    fn side_pos(&self, n: ChannelId, tt: usize, mirrored: bool) -> u64 {
        if mirrored {
            MIRROR - self.pos[tt][n as usize]
        } else {
            self.pos[tt][n as usize]
        }
    }

    /// The positions a move of the `sides` is compared with, sorted and
    /// distinct: every neighbour on a path through them, and the pinned
    /// bounds. `None` when there is no neighbour.
    fn marks(
        &self,
        sides: &[(ChannelId, usize, bool)],
        floor: Option<u64>,
        ceil: Option<u64>,
    ) -> Option<Vec<u64>> {
        let mut marks: Vec<u64> = Vec::new();
        for &(ch, tt, mirrored) in sides {
            for i in self.occ_range(ch) {
                let (q, j) = self.occ.get(i);
                let path = self.paths.path(q as usize);
                let j = j as usize;
                if j > 0 {
                    marks.push(self.side_pos(path[j - 1], tt, mirrored));
                }
                if j + 1 < path.len() {
                    marks.push(self.side_pos(path[j + 1], tt, mirrored));
                }
            }
        }
        if let Some(cl) = &self.classes {
            // Held to a class budget: every channel at the two nodes a move
            // changes the bound of is a mark too, so that the bound is the
            // same all through a region.
            for &(ch, tt, mirrored) in sides {
                for v in cl.ends(ch) {
                    for &o in cl.outs(v) {
                        for x in [o, o ^ 1] {
                            if x != ch {
                                marks.push(self.side_pos(x, tt, mirrored));
                            }
                        }
                    }
                }
            }
        }
        if marks.is_empty() {
            return None;
        }
        marks.extend(floor);
        marks.extend(ceil);
        marks.sort_unstable();
        marks.dedup();
        Some(marks)
    }

    /// What each region between the `marks` costs a move of the `sides`:
    /// `diff[i]` is the change of the weighted count of violated paths
    /// entering region i (x in (marks[i-1], marks[i]); region 0 is below
    /// every mark, region k above), with the weight of the violated paths
    /// through them now.
    fn region_costs(&self, sides: &[(ChannelId, usize, bool)], marks: &[u64]) -> (Vec<i64>, i64) {
        let mut diff = vec![0i64; marks.len() + 2];
        let mut now = 0i64;
        let idx = |m: u64| marks.binary_search(&m).expect("every neighbour is marked");
        for &(ch, tt, mirrored) in sides {
            let mut last_q = u32::MAX;
            for i in self.occ_range(ch) {
                let (q, j) = self.occ.get(i);
                if q == last_q {
                    continue; // a channel twice on one path: scored once
                }
                last_q = q;
                let (a, path) = self.paths.get(q as usize);
                let j = j as usize;
                // Order tt decides a transition at ch only if the path
                // carries tag tt + 1 (1-based) into it or out of it;
                // otherwise every region costs the same and the path is
                // left out of the sums.
                let before = self.tags[a + j.saturating_sub(1)] as usize;
                if before > tt + 1 || before + 1 < tt + 1 {
                    continue;
                }
                let w = i64::from(self.weight.get(q as usize));
                let prev = (j > 0).then(|| self.side_pos(path[j - 1], tt, mirrored));
                let next = path.get(j + 1).map(|&n| self.side_pos(n, tt, mirrored));
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
        (diff, now)
    }

    /// What the class bound costs a move of channel `c` in order `t` to
    /// each region between the `marks` (weighted classes over the budget
    /// at the two nodes it changes), and what it costs now; nothing
    /// without a class budget.
    fn class_costs(&self, c: ChannelId, t: usize, marks: &[u64]) -> (Vec<i64>, i64) {
        let Some(cl) = &self.classes else {
            return (Vec::new(), 0);
        };
        let k = marks.len();
        let mut costs = vec![0i64; k + 1];
        let mut now = 0i64;
        for v in cl.ends(c) {
            let w = i64::from(cl.weight[v as usize]);
            now += w * i64::from(cl.excess_of(v, cl.count(v)));
            let others = cl.count(v) - cl.gaps(&self.pos[t], t, v, None);
            for (i, cost) in costs.iter_mut().enumerate() {
                // A doubled position inside region i.
                let x2 = match i {
                    0 => (2 * marks[0]).saturating_sub(1),
                    _ if i == k => 2 * marks[k - 1] + 1,
                    _ => marks[i - 1] + marks[i],
                };
                let n = others + cl.gaps(&self.pos[t], t, v, Some((t, c, x2)));
                *cost += w * i64::from(cl.excess_of(v, n));
            }
        }
        (costs, now)
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
        if let Some(cl) = self.classes.as_mut() {
            for v in cl.ends(m.c) {
                cl.update(&self.pos, v);
            }
        }
    }

    /// Channel `c`'s occurrences this search reads (a symmetric one: on
    /// the paths it keeps), in no particular order.
    pub(super) fn occ_range(&self, c: ChannelId) -> std::ops::Range<usize> {
        self.occ.range(c, !self.symmetric)
    }

    /// Retags every path through channel `ch`, in path order (the order
    /// they join the violated list in), and updates the violated list.
    fn retag_through(&mut self, ch: ChannelId) {
        let [mut kept, mut rest] = self.occ.parts(ch);
        if self.symmetric {
            rest.start = rest.end;
        }
        loop {
            let i = match (kept.start < kept.end, rest.start < rest.end) {
                (true, true) if self.occ.packed(kept.start) < self.occ.packed(rest.start) => {
                    kept.next()
                }
                (true, false) => kept.next(),
                (_, true) => rest.next(),
                (false, false) => break,
            }
            .expect("a range not yet empty");
            let q = self.occ.get(i).0 as usize;
            let bad = self.retag(q) > self.target;
            let was = self.slot[q] != u32::MAX;
            if bad && !was {
                self.slot[q] = self.violated.len() as u32;
                self.violated.push(q as u32);
                self.violated_total += self.paths.stands_for(q);
            } else if !bad && was {
                self.violated_total -= self.paths.stands_for(q);
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
