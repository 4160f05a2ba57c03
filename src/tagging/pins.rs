//! What an extension of an installed plan may not change, as the local
//! search ([`super::search::LocalSearch`]) sees it: the installed decisions
//! on the paths it holds, and, per order, the installed same-priority
//! dependencies every order must keep pointing forward.
//!
//! An order plan whose order `t` puts every installed priority-`t`
//! dependency forward, and whose walk follows every installed decision,
//! extends the installed plan: its new dependencies point forward in the
//! same orders as the installed ones, so old and new entries together stay
//! acyclic per priority (what the two-phase schedule of `tagger update`
//! needs). The local search keeps both: pinned transitions are not its to
//! decide, and a channel moves only between its installed neighbours.

use crate::elp::enumerate::ChannelPaths;
use rustc_hash::FxHashMap as HashMap;
use tagger_generators::ChannelId;

/// Most orders a pinned search holds: each slot packs one 4-bit code per
/// tag into a `u32`.
pub const MAX_PINNED_TARGET: u32 = 8;

/// Installed decisions and dependencies for a pinned local search.
#[derive(Debug)]
pub struct Pins {
    /// Per slot of the paths' channel array (the transition out of that
    /// channel), 4 bits per tag `1..=8`: 0 when the order decides, else
    /// 1 + the installed rise of the tag.
    fixed: Vec<u32>,
    /// Per order (0-based), the installed dependencies into each channel,
    /// CSR by channel.
    preds: Vec<Csr>,
    /// The same, out of each channel.
    succs: Vec<Csr>,
    /// True when every installed decision on the paths keeps its tag or
    /// raises it by one (what [`Pins::forced_past`]'s proof needs).
    steady: bool,
}

#[derive(Debug, Default)]
struct Csr {
    start: Vec<usize>,
    to: Vec<ChannelId>,
}

impl Csr {
    fn new(channels: usize, mut edges: Vec<(ChannelId, ChannelId)>) -> Self {
        edges.sort_unstable();
        edges.dedup();
        let mut start = vec![0usize; channels + 1];
        for &(a, _) in &edges {
            start[a as usize + 1] += 1;
        }
        for i in 0..channels {
            start[i + 1] += start[i];
        }
        Csr {
            start,
            to: edges.into_iter().map(|(_, b)| b).collect(),
        }
    }

    fn of(&self, c: ChannelId) -> &[ChannelId] {
        &self.to[self.start[c as usize]..self.start[c as usize + 1]]
    }
}

impl Pins {
    /// Pins for a search of `target` orders over `channels` channels on
    /// `paths`.
    ///
    /// # Arguments
    /// * `kept` - installed decisions `(in channel, tag, out channel) ->
    ///   next tag`.
    /// * `edges` - installed same-priority dependencies `(priority, from,
    ///   to)`; those above `target` are left out.
    ///
    /// # Panics
    /// When `target` passes [`MAX_PINNED_TARGET`].
    ///
    /// # Complexity
    /// O(S * target) hash lookups for S channel slots of `paths`, plus
    /// O(E log E) for E dependencies.
    pub fn new(
        paths: &ChannelPaths,
        channels: usize,
        target: u32,
        kept: &HashMap<(ChannelId, u32, ChannelId), u32>,
        edges: &[(u32, ChannelId, ChannelId)],
    ) -> Self {
        assert!(target <= MAX_PINNED_TARGET, "target {target}");
        let mut fixed = vec![0u32; paths.channels.len()];
        let mut steady = true;
        for p in 0..paths.len() {
            let a = paths.start(p);
            for (i, w) in paths.path(p).windows(2).enumerate() {
                let mut code = 0u32;
                for t in 1..=target {
                    if let Some(&next) = kept.get(&(w[0], t, w[1])) {
                        // A verified plan never lowers a priority; a rise
                        // past 14 is as good as infinite here.
                        let rise = next.saturating_sub(t).min(14);
                        steady &= next == t || next == t + 1;
                        code |= (1 + rise) << (4 * (t - 1));
                    }
                }
                fixed[a + i] = code;
            }
        }
        let per_order = |flip: bool| -> Vec<Csr> {
            (1..=target)
                .map(|t| {
                    let list = edges
                        .iter()
                        .filter(|e| e.0 == t)
                        .map(|&(_, a, b)| if flip { (b, a) } else { (a, b) })
                        .collect();
                    Csr::new(channels, list)
                })
                .collect()
        };
        Pins {
            fixed,
            preds: per_order(true),
            succs: per_order(false),
            steady,
        }
    }

    /// The installed next tag of the transition out of `slot` at `tag`, if
    /// installed.
    #[inline]
    pub fn next_tag(&self, slot: usize, tag: u32) -> Option<u32> {
        if tag > MAX_PINNED_TARGET {
            return None;
        }
        let code = (self.fixed[slot] >> (4 * (tag - 1))) & 15;
        (code != 0).then(|| tag + code - 1)
    }

    /// The open interval order `t` (0-based) leaves channel `c`, its
    /// positions being `pos`: above every installed predecessor, below
    /// every installed successor (`None`: unbounded on that side).
    pub fn bounds(&self, t: usize, c: ChannelId, pos: &[u64]) -> (Option<u64>, Option<u64>) {
        let lo = self.preds[t].of(c).iter().map(|&a| pos[a as usize]).max();
        let hi = self.succs[t].of(c).iter().map(|&b| pos[b as usize]).min();
        (lo, hi)
    }

    /// True when order `t` (0-based) puts every installed dependency of
    /// its priority forward.
    pub fn respected_by(&self, t: usize, pos: &[u64]) -> bool {
        let s = &self.succs[t];
        (0..s.start.len() - 1).all(|a| {
            s.of(a as ChannelId)
                .iter()
                .all(|&b| pos[a] < pos[b as usize])
        })
    }

    /// True when installed dependencies of order `t` (0-based) lead from
    /// channel `from` to any of `to` (or `from` is one of them). `pos` must
    /// keep them forward (then every channel on such a chain sits below
    /// the highest of `to`, which bounds the search).
    pub fn reaches(&self, t: usize, from: ChannelId, to: &[ChannelId], pos: &[u64]) -> bool {
        if to.contains(&from) {
            return true;
        }
        let Some(limit) = to.iter().map(|&c| pos[c as usize]).max() else {
            return false;
        };
        if pos[from as usize] >= limit {
            return false;
        }
        let mut seen = rustc_hash::FxHashSet::default();
        let mut stack = vec![from];
        while let Some(v) = stack.pop() {
            for &w in self.succs[t].of(v) {
                if to.contains(&w) {
                    return true;
                }
                if pos[w as usize] < limit && seen.insert(w) {
                    stack.push(w);
                }
            }
        }
        false
    }

    /// Whether `path` (at slot `start` of the pinned paths) ends past
    /// `target` in *every* order plan that keeps the installed decisions
    /// and puts the installed dependencies forward, `pos` being one.
    ///
    /// The walk gives each transition the lowest tag any such plan allows,
    /// keeping the tag as long as it can: the installed decision where
    /// pinned; else one up when keeping the tag would close a cycle, that
    /// is when installed dependencies lead from the next channel back to
    /// a channel the path has held this tag on since it last rose (its own
    /// same-tag transitions lead forward from there); else the same.
    /// Rising as late as possible is optimal for one path: by induction,
    /// any valid plan's tag is at least the walk's at every hop, and where
    /// equal its current run of one tag started no later (so it holds the
    /// walk's run, and every cycle the walk avoids only by rising, it
    /// meets too). That needs pinned decisions that rise by at most one
    /// (`steady`); else `None` (no proof).
    pub fn forced_past(
        &self,
        path: &[ChannelId],
        start: usize,
        target: u32,
        pos: &[Vec<u64>],
    ) -> Option<bool> {
        if !self.steady {
            return None;
        }
        let mut tag = 1u32;
        let mut run: Vec<ChannelId> = path[..1].to_vec();
        for (i, w) in path.windows(2).enumerate() {
            if tag > target {
                break;
            }
            let next = match self.next_tag(start + i, tag) {
                Some(t2) => t2,
                None => {
                    let t = tag as usize - 1;
                    tag + u32::from(self.reaches(t, w[1], &run, &pos[t]))
                }
            };
            if next != tag {
                run.clear();
            }
            run.push(w[1]);
            tag = next;
        }
        Some(tag > target)
    }

    /// Heap bytes held (for memory budgets).
    pub fn heap_bytes(&self) -> u64 {
        let csr = |c: &Csr| {
            crate::budget::bytes_of::<usize>(c.start.len())
                + crate::budget::bytes_of::<ChannelId>(c.to.len())
        };
        crate::budget::bytes_of::<u32>(self.fixed.len())
            + self.preds.iter().chain(&self.succs).map(csr).sum::<u64>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one_path(channels: &[ChannelId]) -> ChannelPaths {
        let mut p = ChannelPaths::default();
        p.push(channels).unwrap();
        p
    }

    /// Path 0 -> 1 -> 2: the installed plan raises (0, 1) to tag 2, and
    /// its priority-2 dependencies lead from 2 back to 1, so keeping tag 2
    /// on (1, 2) would close a cycle: every extension ends the path at 3.
    #[test]
    fn an_installed_chain_back_forces_a_rise() {
        let paths = one_path(&[0, 1, 2]);
        let kept: HashMap<_, _> = [((0, 1, 1), 2)].into_iter().collect();
        let pos = vec![vec![0, 1, 2, 3, 4, 5], vec![0, 30, 10, 0, 20, 0]];
        let chain = [(2, 2, 4), (2, 4, 1)];
        let pins = Pins::new(&paths, 6, 2, &kept, &chain);
        assert!(pins.respected_by(1, &pos[1]));
        assert!(pins.reaches(1, 2, &[1], &pos[1]) && !pins.reaches(1, 1, &[2], &pos[1]));
        assert_eq!(pins.forced_past(paths.path(0), 0, 2, &pos), Some(true));
        assert_eq!(pins.next_tag(0, 1), Some(2));
        assert_eq!(pins.next_tag(1, 2), None);
        // Bounds: channel 4 sits between 2 and 1 in order 2.
        assert_eq!(pins.bounds(1, 4, &pos[1]), (Some(10), Some(30)));
        // Without the chain's last link the order may keep tag 2.
        let open = Pins::new(&paths, 6, 2, &kept, &chain[..1]);
        assert_eq!(open.forced_past(paths.path(0), 0, 2, &pos), Some(false));
        // Nor is it forced at a target of 3.
        let three = vec![pos[0].clone(), pos[1].clone(), pos[1].clone()];
        let pins3 = Pins::new(&paths, 6, 3, &kept, &chain);
        assert_eq!(pins3.forced_past(paths.path(0), 0, 3, &three), Some(false));
        // A decision that jumps two tags gives no proof.
        let jump: HashMap<_, _> = [((0, 1, 1), 3)].into_iter().collect();
        let unsteady = Pins::new(&paths, 6, 2, &jump, &chain);
        assert_eq!(unsteady.forced_past(paths.path(0), 0, 2, &pos), None);
        assert_eq!(unsteady.next_tag(0, 1), Some(3));
    }

    /// Path 0 -> 1 -> 2 -> 3 at one priority: an installed dependency
    /// 3 -> 1 does not close a cycle with the last transition alone, but
    /// with the path's own 1 -> 2 -> 3 it does, so the path must rise.
    /// Without it, or when the path already rose after 1, it need not.
    #[test]
    fn a_chain_back_into_the_run_forces_a_rise() {
        let paths = one_path(&[0, 1, 2, 3]);
        let pos = vec![vec![0, 10, 20, 5], vec![0, 10, 20, 5]];
        let none = HashMap::default();
        let back = [(1, 3, 1)];
        let pins = Pins::new(&paths, 4, 1, &none, &back);
        assert!(pins.respected_by(0, &pos[0]));
        assert!(!pins.reaches(0, 3, &[2], &pos[0]) && pins.reaches(0, 3, &[1, 2], &pos[0]));
        assert_eq!(pins.forced_past(paths.path(0), 0, 1, &pos), Some(true));
        assert_eq!(
            Pins::new(&paths, 4, 1, &none, &[]).forced_past(paths.path(0), 0, 1, &pos),
            Some(false)
        );
        // Installed: (1, 1, 2) rises to 2; at two priorities the run of
        // tag 2 starts at 2, and 3 -> 1 no longer matters.
        let rise: HashMap<_, _> = [((1, 1, 2), 2)].into_iter().collect();
        let two = Pins::new(&paths, 4, 2, &rise, &back);
        assert_eq!(two.forced_past(paths.path(0), 0, 2, &pos), Some(false));
        assert_eq!(two.forced_past(paths.path(0), 0, 1, &pos[..1]), Some(true));
    }
}
