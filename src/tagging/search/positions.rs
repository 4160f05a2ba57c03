//! The search's bookkeeping of positions: where each channel occurs on
//! the paths, and orders spread out again when a region fills up.

use super::{GAP, Halved, MIRROR};
use crate::elp::enumerate::ChannelPaths;
use tagger_generators::ChannelId;

/// The paths a search runs on: every path of a set, or (a symmetric
/// search) the one of each path and its reverse that [`Halved`] keeps,
/// numbered as in the whole set either way. The kept paths cost two bits
/// each, not a copy of their channels, and one array of occurrences
/// serves both searches of a portfolio (the kept paths' first for each
/// channel, [`Occurrences::build_keeping`]): on Jellyfish 2000 `shortest`
/// (14.3M maximal paths), the copy's 170 MB of channels and offsets and
/// its own 114 MB of occurrences are gone.
#[derive(Clone, Copy, Debug)]
pub(super) struct Paths<'a> {
    all: &'a ChannelPaths,
    halved: Option<&'a Halved>,
}

impl<'a> Paths<'a> {
    /// Every path of `all`.
    pub(super) fn all(all: &'a ChannelPaths) -> Self {
        Paths { all, halved: None }
    }

    /// The paths of `all` that `halved` keeps.
    pub(super) fn halved(all: &'a ChannelPaths, halved: &'a Halved) -> Self {
        Paths {
            all,
            halved: Some(halved),
        }
    }

    pub(super) fn is_halved(&self) -> bool {
        self.halved.is_some()
    }

    /// Paths of the whole set (kept or not): path ids are below it.
    pub(super) fn len(&self) -> usize {
        self.all.len()
    }

    /// Whether path `p` is searched.
    #[inline]
    pub(super) fn kept(&self, p: usize) -> bool {
        self.halved.is_none_or(|h| h.keeps(p))
    }

    /// Paths of the whole set that path `p` (kept) stands for.
    pub(super) fn stands_for(&self, p: usize) -> u64 {
        self.halved.map_or(1, |h| h.stands_for(p))
    }

    /// Path `p`'s first channel's position in the set, and its channels.
    #[inline]
    pub(super) fn get(&self, p: usize) -> (usize, &'a [ChannelId]) {
        (self.all.start(p), self.all.path(p))
    }

    pub(super) fn path(&self, p: usize) -> &'a [ChannelId] {
        self.all.path(p)
    }

    /// Channels of the whole set.
    pub(super) fn slots(&self) -> usize {
        self.all.channels.len()
    }
}

/// Each path's weight, one to start with, raised by one each time a step
/// finds no move for it (saturating at `u32::MAX`). Weights stay small (a
/// step raises one path's; Jellyfish 2000 `shortest` takes about 10^4
/// steps), so they are kept in a `u16` each, and the few that could reach
/// `u16::MAX` in a map: 2 bytes a path instead of 4, 29 MB less per
/// search there (14.3M paths).
#[derive(Debug)]
pub(super) struct Weights {
    low: Vec<u16>,
    /// The weights of paths whose `low` is `u16::MAX`.
    high: std::collections::BTreeMap<u32, u32>,
}

impl Weights {
    pub(super) fn ones(paths: usize) -> Self {
        Weights {
            low: vec![1; paths],
            high: std::collections::BTreeMap::new(),
        }
    }

    #[inline]
    pub(super) fn get(&self, p: usize) -> u32 {
        match self.low[p] {
            u16::MAX => self.high[&(p as u32)],
            w => u32::from(w),
        }
    }

    pub(super) fn raise(&mut self, p: usize) {
        match self.low[p] {
            u16::MAX => {
                let w = self.high.get_mut(&(p as u32)).expect("a high weight");
                *w = w.saturating_add(1);
            }
            w if w == u16::MAX - 1 => {
                self.low[p] = u16::MAX;
                self.high.insert(p as u32, u32::from(u16::MAX));
            }
            w => self.low[p] = w + 1,
        }
    }
}

/// Where each channel occurs: `(path, index)` pairs, grouped by channel
/// (CSR), each packed into one integer, the path above the index's bits.
/// Packed into a `u32` wherever the paths allow (on Jellyfish 2000
/// `shortest`, 17.3M paths of at most 5 links: 3 index bits, 29 for the
/// path), which halves the largest array of the search's state against a
/// pair of `u32`s (80M occurrences: 640 to 320 MB); into a `u64` otherwise.
#[derive(Clone, Debug)]
pub(super) struct Occurrences {
    start: Vec<usize>,
    /// Where each channel's occurrences on kept paths end (all of them
    /// unless built with a [`Halved`]).
    kept: Vec<usize>,
    /// Bits of the index.
    shift: u32,
    packed: Packed,
}

#[derive(Clone, Debug)]
enum Packed {
    Narrow(Vec<u32>),
    Wide(Vec<u64>),
}

impl Occurrences {
    pub(super) fn build(paths: &ChannelPaths, channels: usize) -> Self {
        Self::build_keeping(paths, channels, None)
    }

    /// [`Occurrences::build`], each channel's occurrences on the paths
    /// `halved` keeps first (each part in path order): a symmetric search
    /// reads that part alone, the unrestricted one the whole range.
    pub(super) fn build_keeping(
        paths: &ChannelPaths,
        channels: usize,
        halved: Option<&Halved>,
    ) -> Self {
        let keeps = |p: usize| halved.is_none_or(|h| h.keeps(p));
        let (mut start, mut kept) = (vec![0usize; channels + 1], vec![0usize; channels]);
        for p in 0..paths.len() {
            let k = keeps(p);
            for &c in paths.path(p) {
                start[c as usize + 1] += 1;
                kept[c as usize] += usize::from(k);
            }
        }
        for i in 0..channels {
            start[i + 1] += start[i];
            kept[i] += start[i];
        }
        let longest = (0..paths.len())
            .map(|p| paths.path(p).len())
            .max()
            .unwrap_or(1);
        let shift = usize::BITS - (longest.max(2) - 1).leading_zeros();
        let narrow = (paths.len() as u64) < 1u64 << (32 - shift.min(31));
        let (mut fill_kept, mut fill_rest) = (start.clone(), kept.clone());
        let mut packed = if narrow {
            Packed::Narrow(vec![0; paths.channels.len()])
        } else {
            Packed::Wide(vec![0; paths.channels.len()])
        };
        for p in 0..paths.len() {
            let fill = if keeps(p) {
                &mut fill_kept
            } else {
                &mut fill_rest
            };
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
            kept,
            shift,
            packed,
        }
    }

    /// Positions of channel `c`'s occurrences, for [`Occurrences::get`]:
    /// every path's (`all`), or the kept paths' alone. With kept paths,
    /// the whole range is not in path order: see [`Occurrences::parts`].
    pub(super) fn range(&self, c: ChannelId, all: bool) -> std::ops::Range<usize> {
        let c = c as usize;
        self.start[c]..if all { self.start[c + 1] } else { self.kept[c] }
    }

    /// Channel `c`'s occurrences on kept paths and on the others, each in
    /// path order: merged by [`Occurrences::packed`], the whole range in
    /// path order.
    pub(super) fn parts(&self, c: ChannelId) -> [std::ops::Range<usize>; 2] {
        let c = c as usize;
        [self.start[c]..self.kept[c], self.kept[c]..self.start[c + 1]]
    }

    /// Occurrence `i` packed: ordered as `(path, index)` pairs are.
    #[inline]
    pub(super) fn packed(&self, i: usize) -> u64 {
        match &self.packed {
            Packed::Narrow(x) => x[i] as u64,
            Packed::Wide(x) => x[i],
        }
    }

    /// Occurrence `i`: `(path, index in the path)`.
    #[inline]
    pub(super) fn get(&self, i: usize) -> (u32, u32) {
        let v = self.packed(i);
        (
            (v >> self.shift) as u32,
            (v & ((1 << self.shift) - 1)) as u32,
        )
    }
}

/// [`relabelled`] for an order that is its own mirror (`pos[c] +
/// pos[c ^ 1] = MIRROR`): ties and the order kept, gaps of twice [`GAP`],
/// centred on `MIRROR / 2` so that the mirror still holds.
pub(super) fn relabelled_mirror(pos: &[u64]) -> Vec<u64> {
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
pub(super) fn relabelled(pos: &[u64]) -> Vec<u64> {
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
    use super::Weights;

    /// Weights kept in `u16`s with a map above are the `u32` counters they
    /// replaced: raised past `u16::MAX` and saturating at `u32::MAX`.
    #[test]
    fn weights_are_saturating_u32_counters() {
        let mut w = Weights::ones(3);
        let mut want = [1u32; 3];
        for k in 0..80_000u32 {
            let p = if k % 7 == 0 { 2 } else { 0 };
            w.raise(p);
            want[p] = want[p].saturating_add(1);
            for (q, &x) in want.iter().enumerate() {
                assert_eq!(w.get(q), x, "path {q} after {k}");
            }
        }
        assert_eq!(w.get(0), want[0]);
        assert!(w.get(0) > u32::from(u16::MAX));
        *w.high.get_mut(&0).unwrap() = u32::MAX - 1;
        w.raise(0);
        w.raise(0);
        assert_eq!(w.get(0), u32::MAX);
        assert_eq!((w.get(1), w.get(2)), (1, want[2]));
    }
}
