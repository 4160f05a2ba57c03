//! The search's bookkeeping of positions: where each channel occurs on
//! the paths, and orders spread out again when a region fills up.

use super::{GAP, MIRROR};
use crate::elp::enumerate::ChannelPaths;
use tagger_generators::ChannelId;

/// Where each channel occurs: `(path, index)` pairs, grouped by channel
/// (CSR), each packed into one integer, the path above the index's bits.
/// Packed into a `u32` wherever the paths allow (on Jellyfish 2000
/// `shortest`, 17.3M paths of at most 5 links: 3 index bits, 29 for the
/// path), which halves the largest array of the search's state against a
/// pair of `u32`s (80M occurrences: 640 to 320 MB); into a `u64` otherwise.
#[derive(Debug)]
pub(super) struct Occurrences {
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
    pub(super) fn build(paths: &ChannelPaths, channels: usize) -> Self {
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
    pub(super) fn range(&self, c: ChannelId) -> std::ops::Range<usize> {
        self.start[c as usize]..self.start[c as usize + 1]
    }

    /// Occurrence `i`: `(path, index in the path)`.
    #[inline]
    pub(super) fn get(&self, i: usize) -> (u32, u32) {
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
