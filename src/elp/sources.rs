//! The sources of a state's shortest-path prefixes: a sorted list of
//! endpoint numbers while they are few, a bitset once they are many.
//!
//! Every prefix set of the walk and of the verifier's replay starts as one
//! source (a first hop) and grows only by merging; on Jellyfish most sets
//! stay small at every hop but one (Jellyfish 10000/64 r=16: on average 1,
//! 10, 103, 730 and 19 sources per state at hops 1-5, out of 10,000). A
//! bitset over all endpoints (1,256 bytes there) for each of them, and for
//! each of the tens of millions of continuations built on the way, was a
//! large part of the walk's allocation and memory traffic; a list costs 4 bytes per
//! source. A list turns into a bitset past one source per two words (a
//! quarter of the bitset's bytes): merging sorted lists is a branchy loop
//! where OR-ing words is a few vector instructions, and with the switch at
//! one or two sources per word both Jellyfish 2000 and 10000 ran slower
//! than with it here (measured: `docs/performance.md`).
//!
//! The representation never reaches the output: every operation's result is
//! the same set whichever form its operands take, and iteration is in
//! ascending order in both.

use crate::bits::Bits;

/// A set of source numbers (bit positions of [`super::Shortest`]'s
/// rows) in a universe of `words` 64-bit words.
#[derive(Clone, Debug)]
pub struct Sources(Repr);

#[derive(Clone, Debug)]
enum Repr {
    /// Sorted and distinct, at most [`few_max`] of them.
    Few {
        ids: Vec<u32>,
        words: u32,
    },
    Many(Bits),
}

/// The most sources a list holds in a universe of `words` words (see the
/// module docs). Below 512 endpoints a bitset is at most one cache line,
/// and there are no lists.
fn few_max(words: usize) -> usize {
    if words < 8 { 0 } else { words / 2 }
}

fn bit(row: &[u64], s: u32) -> bool {
    row[s as usize / 64] >> (s % 64) & 1 == 1
}

impl Sources {
    /// The sources `ids` (ascending, distinct) in a universe of `words`
    /// words.
    pub fn from_sorted(words: usize, ids: Vec<u32>) -> Self {
        debug_assert!(ids.windows(2).all(|w| w[0] < w[1]));
        debug_assert!(ids.last().is_none_or(|&s| (s as usize) < words * 64));
        if ids.len() > few_max(words) {
            let mut b = Bits::new(words * 64);
            for &s in &ids {
                b.set(s as usize);
            }
            return Sources(Repr::Many(b));
        }
        Sources(Repr::Few {
            ids,
            words: words as u32,
        })
    }

    /// Number of sources.
    pub fn len(&self) -> usize {
        match &self.0 {
            Repr::Few { ids, .. } => ids.len(),
            Repr::Many(b) => b.count(),
        }
    }

    /// Whether there is no source (never true of a set in a prefix record,
    /// which is `None` instead).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The sources, ascending.
    pub fn iter(&self) -> Box<dyn Iterator<Item = usize> + '_> {
        match &self.0 {
            Repr::Few { ids, .. } => Box::new(ids.iter().map(|&s| s as usize)),
            Repr::Many(b) => Box::new(b.iter_ones()),
        }
    }

    /// The source, when there is exactly one.
    pub fn single(&self) -> Option<usize> {
        match &self.0 {
            Repr::Few { ids, .. } if ids.len() == 1 => Some(ids[0] as usize),
            Repr::Few { .. } => None,
            Repr::Many(b) => {
                let mut it = b.iter_ones();
                let first = it.next();
                if it.next().is_none() { first } else { None }
            }
        }
    }

    /// Whether any source has its bit set in `row` (a row of the same
    /// universe).
    pub fn meets(&self, row: &[u64]) -> bool {
        match &self.0 {
            Repr::Few { ids, .. } => ids.iter().any(|&s| bit(row, s)),
            Repr::Many(b) => b.words().iter().zip(row).any(|(a, r)| a & r != 0),
        }
    }

    /// The sources with their bit set in `row`, or `None` when there are
    /// none. A bitset whose intersection is few becomes a list.
    ///
    /// Complexity: O(sources) for a list, O(words) for a bitset.
    pub fn and_row(&self, row: &[u64]) -> Option<Sources> {
        match &self.0 {
            Repr::Few { ids, words } => {
                let n = ids.iter().filter(|&&s| bit(row, s)).count();
                if n == 0 {
                    return None;
                }
                let mut out = Vec::with_capacity(n);
                out.extend(ids.iter().copied().filter(|&s| bit(row, s)));
                Some(Sources(Repr::Few {
                    ids: out,
                    words: *words,
                }))
            }
            Repr::Many(b) => Sources::words_and_row(b.words(), row),
        }
    }

    /// ORs the sources into `acc`, the words of a bitset over the same
    /// universe.
    pub fn or_into(&self, acc: &mut [u64]) {
        match &self.0 {
            Repr::Few { ids, .. } => {
                for &s in ids {
                    acc[s as usize / 64] |= 1 << (s % 64);
                }
            }
            Repr::Many(b) => {
                for (a, w) in acc.iter_mut().zip(b.words()) {
                    *a |= w;
                }
            }
        }
    }

    /// The sources of the bitset `w` (its words) with their bit set in
    /// `row`, or `None` when there are none, in the form their number
    /// calls for: [`Sources::and_row`] of a bitset.
    ///
    /// Complexity: O(words).
    pub fn words_and_row(w: &[u64], row: &[u64]) -> Option<Sources> {
        let n: usize = w
            .iter()
            .zip(row)
            .map(|(a, r)| (a & r).count_ones() as usize)
            .sum();
        if n == 0 {
            return None;
        }
        if n > few_max(w.len()) {
            let words: Box<[u64]> = w.iter().zip(row).map(|(a, r)| a & r).collect();
            return Some(Sources(Repr::Many(Bits::from_words(words))));
        }
        let mut ids = Vec::with_capacity(n);
        for (i, (a, r)) in w.iter().zip(row).enumerate() {
            let mut x = a & r;
            while x != 0 {
                ids.push((i * 64) as u32 + x.trailing_zeros());
                x &= x - 1;
            }
        }
        Some(Sources(Repr::Few {
            ids,
            words: w.len() as u32,
        }))
    }

    /// Adds every source of `other` (same universe).
    ///
    /// Complexity: O(sources of both) for two lists, merged in place from
    /// the back; O(words) for two bitsets; O(sources of the list) for one
    /// of each.
    pub fn union(&mut self, other: Sources) {
        match (&mut self.0, other.0) {
            (Repr::Many(a), Repr::Many(b)) => a.or_assign(&b),
            (Repr::Many(a), Repr::Few { ids, .. }) => {
                for s in ids {
                    a.set(s as usize);
                }
            }
            (Repr::Few { ids, .. }, Repr::Many(mut b)) => {
                for &s in ids.iter() {
                    b.set(s as usize);
                }
                self.0 = Repr::Many(b);
            }
            (Repr::Few { ids: a, words }, Repr::Few { ids: mut b, .. }) => {
                if b.len() > a.len() {
                    std::mem::swap(a, &mut b);
                }
                let m = union_len(a, &b);
                if m > few_max(*words as usize) {
                    let mut bits = Bits::new(*words as usize * 64);
                    for &s in a.iter().chain(&b) {
                        bits.set(s as usize);
                    }
                    self.0 = Repr::Many(bits);
                } else {
                    merge_into(a, &b, m);
                }
            }
        }
    }

    /// Heap bytes behind the set (for memory budgets).
    pub fn heap_bytes(&self) -> u64 {
        match &self.0 {
            Repr::Few { ids, .. } => crate::budget::bytes_of::<u32>(ids.capacity()),
            Repr::Many(b) => crate::budget::bytes_of::<u64>(b.words().len()),
        }
    }
}

/// Size of the union of two sorted, distinct lists.
fn union_len(a: &[u32], b: &[u32]) -> usize {
    let (mut i, mut j, mut common) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                common += 1;
                i += 1;
                j += 1;
            }
        }
    }
    a.len() + b.len() - common
}

/// Merges sorted, distinct `b` into sorted, distinct `a`, whose union has
/// `m` elements, writing from the back so nothing is moved twice.
fn merge_into(a: &mut Vec<u32>, b: &[u32], m: usize) {
    let (mut i, mut j, mut k) = (a.len(), b.len(), m);
    a.resize(m, 0);
    while j > 0 {
        k -= 1;
        if i > 0 && a[i - 1] >= b[j - 1] {
            if a[i - 1] == b[j - 1] {
                j -= 1;
            }
            a[k] = a[i - 1];
            i -= 1;
        } else {
            a[k] = b[j - 1];
            j -= 1;
        }
    }
    debug_assert_eq!(k, i);
}

impl PartialEq for Sources {
    /// Equal sets, whatever their forms.
    fn eq(&self, other: &Self) -> bool {
        self.iter().eq(other.iter())
    }
}

impl Eq for Sources {}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use std::collections::BTreeSet;

    fn from_set(words: usize, s: &BTreeSet<u32>) -> Sources {
        Sources::from_sorted(words, s.iter().copied().collect())
    }

    fn random_set(rng: &mut ChaCha8Rng, words: usize, n: usize) -> BTreeSet<u32> {
        (0..n)
            .map(|_| rng.random_range(0..(words * 64) as u32))
            .collect()
    }

    /// Every operation against `BTreeSet`, on sets on both sides of the
    /// switch between the two forms (the oracle: forms never show).
    #[test]
    fn operations_match_a_set_oracle() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        for round in 0..400 {
            let words = [1, 2, 8, 9, 12][round % 5];
            let sizes = [
                0,
                1,
                2,
                words / 2,
                words / 2 + 1,
                words,
                2 * words + 1,
                40 * words,
            ];
            let pick = |rng: &mut ChaCha8Rng| sizes[rng.random_range(0..sizes.len())];
            let (na, nb) = (pick(&mut rng), pick(&mut rng));
            let (a, b) = (
                random_set(&mut rng, words, na),
                random_set(&mut rng, words, nb),
            );
            let row: Vec<u64> = (0..words).map(|_| rng.random::<u64>()).collect();
            let sa = from_set(words, &a);
            assert_eq!(sa.iter().map(|s| s as u32).collect::<BTreeSet<_>>(), a);
            assert_eq!(sa.len(), a.len());
            assert_eq!(
                sa.single(),
                (a.len() == 1).then(|| *a.first().unwrap() as usize)
            );
            let want: BTreeSet<u32> = a.iter().copied().filter(|&s| bit(&row, s)).collect();
            assert_eq!(sa.meets(&row), !want.is_empty());
            match sa.and_row(&row) {
                None => assert!(want.is_empty()),
                Some(x) => assert_eq!(x, from_set(words, &want)),
            }
            let mut u = sa.clone();
            u.union(from_set(words, &b));
            let both: BTreeSet<u32> = a.union(&b).copied().collect();
            assert_eq!(u, from_set(words, &both));
            assert_eq!(u.len(), both.len());
            // The form follows the size, as from_sorted makes it.
            assert_eq!(
                matches!(u.0, Repr::Many(_)),
                both.len() > few_max(words)
                    || matches!(sa.0, Repr::Many(_))
                    || b.len() > few_max(words)
            );
        }
    }

    #[test]
    fn merge_in_place_keeps_order_and_drops_duplicates() {
        let mut a = vec![1, 4, 9];
        let b = [0, 4, 10, 11];
        let m = union_len(&a, &b);
        merge_into(&mut a, &b, m);
        assert_eq!(a, vec![0, 1, 4, 9, 10, 11]);
        let mut e: Vec<u32> = Vec::new();
        merge_into(&mut e, &[3], 1);
        assert_eq!(e, vec![3]);
    }
}
