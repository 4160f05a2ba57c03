//! A fixed-length bitset over `u64` words with the few word-wise operations
//! the ELP prefix sets need (and, or, and-not), which bit-by-bit iteration
//! would make far slower.

/// Sets bit `i` of a bitset held as words (as [`Bits`] and the failure
/// replay's public bitsets are).
pub fn set_bit(words: &mut [u64], i: usize) {
    words[i / 64] |= 1 << (i % 64);
}

/// `a |= b`, word by word.
pub fn or_words(a: &mut [u64], b: &[u64]) {
    for (x, y) in a.iter_mut().zip(b) {
        *x |= y;
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct Bits {
    words: Box<[u64]>,
}

impl Bits {
    pub fn new(len: usize) -> Self {
        Bits {
            words: vec![0; len.div_ceil(64)].into_boxed_slice(),
        }
    }
    /// The bitset of these words.
    pub fn from_words(words: Box<[u64]>) -> Self {
        Bits { words }
    }
    pub fn single(len: usize, i: usize) -> Self {
        let mut b = Bits::new(len);
        b.set(i);
        b
    }
    pub fn words(&self) -> &[u64] {
        &self.words
    }
    pub fn set(&mut self, i: usize) {
        set_bit(&mut self.words, i);
    }
    pub fn clear(&mut self, i: usize) {
        self.words[i / 64] &= !(1 << (i % 64));
    }
    pub fn get(&self, i: usize) -> bool {
        self.words[i / 64] >> (i % 64) & 1 == 1
    }
    pub fn is_empty(&self) -> bool {
        self.words.iter().all(|&w| w == 0)
    }
    pub fn count(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }
    /// `self & other`, or `None` when empty.
    pub fn and_words(&self, other: &[u64]) -> Option<Bits> {
        // Most continuations of a prefix set are empty: test before
        // allocating (the scan stops at the first common bit).
        if !self.words.iter().zip(other).any(|(a, b)| a & b != 0) {
            return None;
        }
        let mut any = 0;
        let words: Box<[u64]> = self
            .words
            .iter()
            .zip(other)
            .map(|(a, b)| {
                let w = a & b;
                any |= w;
                w
            })
            .collect();
        (any != 0).then_some(Bits { words })
    }
    pub fn or_assign(&mut self, other: &Bits) {
        or_words(&mut self.words, &other.words);
    }
    pub fn iter_ones(&self) -> impl Iterator<Item = usize> + '_ {
        self.words.iter().enumerate().flat_map(|(i, &w)| {
            let mut w = w;
            std::iter::from_fn(move || {
                if w == 0 {
                    return None;
                }
                let t = w.trailing_zeros() as usize;
                w &= w - 1;
                Some(i * 64 + t)
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ops() {
        let mut a = Bits::new(130);
        a.set(0);
        a.set(129);
        a.set(64);
        assert_eq!(a.iter_ones().collect::<Vec<_>>(), vec![0, 64, 129]);
        let mut b = Bits::single(130, 64);
        assert_eq!(a.and_words(b.words()).unwrap().count(), 1);
        assert_eq!(a.count(), 3);
        b.clear(64);
        assert!(b.is_empty() && a.and_words(b.words()).is_none());
        assert!(a.get(129));
    }
}
