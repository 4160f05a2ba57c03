//! The ELP prefix sets' bitset (`src/bits.rs`, compiled here from the same
//! file) against `bitvec`'s `BitBox<u64, Lsb0>` on the operations the
//! tagging walk and the verifier's replay spend their time in: the union
//! of a continuation into a state's set, intersecting with a family's
//! source set, and iterating the sources. Sizes are endpoint counts of the Jellyfish runs
//! (2,000 and 10,000 switches at r = 12: 104,000 and 520,000 hosts' worth
//! of words are not needed; one bit per endpoint switch).
//!
//! `cargo bench --bench bitsets`; the README's "Performance" section keeps
//! the figures.

#[path = "../src/bits.rs"]
#[allow(dead_code, unused_imports)]
mod bits;

use bits::Bits;
use bitvec::prelude::*;
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use std::hint::black_box;

/// A deterministic pseudo-random set of `len` bits with about 1 in `k` set.
fn pattern(len: usize, k: u64, salt: u64) -> Vec<usize> {
    let mut x = 0x9E37_79B9_7F4A_7C15u64 ^ salt;
    (0..len)
        .filter(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x.is_multiple_of(k)
        })
        .collect()
}

fn ours(len: usize, ones: &[usize]) -> Bits {
    let mut b = Bits::new(len);
    for &i in ones {
        b.set(i);
    }
    b
}

fn theirs(len: usize, ones: &[usize]) -> BitBox<u64, Lsb0> {
    let mut b = bitbox![u64, Lsb0; 0; len];
    for &i in ones {
        b.set(i, true);
    }
    b
}

fn bench(c: &mut Criterion) {
    for len in [2_000usize, 10_000] {
        let (a1, a2) = (pattern(len, 3, 1), pattern(len, 5, 2));
        let (oa, ob) = (ours(len, &a1), ours(len, &a2));
        let (ta, tb) = (theirs(len, &a1), theirs(len, &a2));
        // Same contents, so the two answer alike.
        assert_eq!(
            oa.iter_ones().collect::<Vec<_>>(),
            ta.iter_ones().collect::<Vec<_>>()
        );

        let mut g = c.benchmark_group("bitset_union");
        g.bench_with_input(BenchmarkId::new("bits", len), &len, |b, _| {
            b.iter(|| {
                let mut x = oa.clone();
                x.or_assign(black_box(&ob));
                x
            })
        });
        g.bench_with_input(BenchmarkId::new("bitvec_ops", len), &len, |b, _| {
            b.iter(|| {
                let mut x = ta.clone();
                x |= black_box(tb.as_bitslice());
                x
            })
        });
        g.bench_with_input(BenchmarkId::new("bitvec_raw", len), &len, |b, _| {
            b.iter(|| {
                let mut x = ta.clone();
                for (w, v) in x
                    .as_raw_mut_slice()
                    .iter_mut()
                    .zip(black_box(&tb).as_raw_slice())
                {
                    *w |= v;
                }
                x
            })
        });
        g.finish();

        let mut g = c.benchmark_group("bitset_and");
        g.bench_with_input(BenchmarkId::new("bits", len), &len, |b, _| {
            b.iter(|| oa.and_words(black_box(ob.words())))
        });
        g.bench_with_input(BenchmarkId::new("bitvec_ops", len), &len, |b, _| {
            b.iter(|| {
                let x = ta.clone() & black_box(tb.as_bitslice());
                x.any().then_some(x)
            })
        });
        g.finish();

        let mut g = c.benchmark_group("bitset_iter_ones");
        g.bench_with_input(BenchmarkId::new("bits", len), &len, |b, _| {
            b.iter(|| black_box(&oa).iter_ones().sum::<usize>())
        });
        g.bench_with_input(BenchmarkId::new("bitvec_ops", len), &len, |b, _| {
            b.iter(|| black_box(&ta).iter_ones().sum::<usize>())
        });
        g.finish();
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(std::time::Duration::from_millis(300))
        .measurement_time(std::time::Duration::from_secs(1));
    targets = bench
}
criterion_main!(benches);
