//! One of each path and its reverse: what a reversal-symmetric search
//! works on.

use crate::elp::enumerate::ChannelPaths;
use rayon::prelude::*;
use std::sync::atomic::Ordering::Relaxed;
use tagger_generators::ChannelId;

/// One of each path and its reverse, for a symmetric search: which paths
/// of the whole set are kept, and which of those stand for their reverse
/// too, a bit each.
#[derive(Debug, Default)]
pub struct Halved {
    kept: Vec<u64>,
    paired: Vec<u64>,
}

impl Halved {
    /// Whether path `p` is kept.
    #[inline]
    pub(super) fn keeps(&self, p: usize) -> bool {
        self.kept[p / 64] >> (p % 64) & 1 == 1
    }

    /// Paths of the whole set a kept path `p` stands for: 2 when its
    /// reverse is there too (and is another path), else 1.
    pub(super) fn stands_for(&self, p: usize) -> u64 {
        1 + (self.paired[p / 64] >> (p % 64) & 1)
    }
}

/// `paths` less every path whose reverse (the channels reversed, each
/// `c ^ 1`) is also there and comes first: a path without its reverse
/// stays. Reverses are found by fingerprint, a slice of paths at a time
/// (as [`crate::elp::enumerate`]'s suffix removal finds tails): a hash set
/// of the paths took about 5 s of a search's set-up on Jellyfish 2000,
/// single-threaded.
pub(super) fn one_of_each_reversal(paths: &ChannelPaths) -> Halved {
    use crate::elp::enumerate::{PRINT_SLICE, equal_prints, keyed, sorted_prints};
    use std::sync::atomic::AtomicBool;
    let n = paths.len();
    fn reverse(p: &[ChannelId]) -> impl Iterator<Item = ChannelId> + '_ {
        p.iter().rev().map(|&c| c ^ 1)
    }
    let prints = sorted_prints(paths);
    let paired: Vec<AtomicBool> = (0..n).map(|_| AtomicBool::new(false)).collect();
    for from in (0..n).step_by(PRINT_SLICE) {
        let mut rev: Vec<u64> = (from..n.min(from + PRINT_SLICE))
            .into_par_iter()
            .map(|i| keyed(reverse(paths.path(i)), i as u32))
            .collect();
        rev.par_sort_unstable();
        equal_prints(&prints, &rev, |j, i| {
            let (p, q) = (paths.path(i as usize), paths.path(j as usize));
            if q.iter().copied().eq(reverse(p)) && !p.iter().copied().eq(reverse(p)) {
                paired[i as usize].store(true, Relaxed);
            }
        });
    }
    drop(prints);
    let mut out = Halved {
        kept: vec![0; n.div_ceil(64)],
        paired: vec![0; n.div_ceil(64)],
    };
    for (i, paired) in paired.iter().enumerate() {
        let p = paths.path(i);
        let paired = paired.load(Relaxed);
        if !paired || p.iter().copied().le(reverse(p)) {
            out.kept[i / 64] |= 1 << (i % 64);
            out.paired[i / 64] |= u64::from(paired) << (i % 64);
        }
    }
    out
}

#[cfg(test)]
mod symmetric_tests {
    use super::*;
    use crate::tagging::search::{LocalSearch, MIRROR};
    use crate::tagging::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;
    use std::borrow::Cow;

    /// The fingerprint matching of reverses keeps what the hash set of
    /// paths it replaced kept (the oracle, kept here), with the same
    /// weights, on random path sets full of reverses, duplicates and
    /// paths that are their own reverse.
    #[test]
    fn reversal_halving_matches_hash_sets() {
        use rand::Rng;
        fn oracle(paths: &ChannelPaths) -> (Vec<Vec<ChannelId>>, Vec<u8>) {
            let all: rustc_hash::FxHashSet<&[ChannelId]> =
                (0..paths.len()).map(|i| paths.path(i)).collect();
            let (mut kept, mut weight) = (Vec::new(), Vec::new());
            for i in 0..paths.len() {
                let p = paths.path(i);
                let rev: Vec<ChannelId> = p.iter().rev().map(|&c| c ^ 1).collect();
                let paired = p != rev.as_slice() && all.contains(rev.as_slice());
                if p <= rev.as_slice() || !paired {
                    kept.push(p.to_vec());
                    weight.push(1 + u8::from(paired));
                }
            }
            (kept, weight)
        }
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        for _ in 0..400 {
            let mut paths = ChannelPaths::default();
            let mut made: Vec<Vec<ChannelId>> = Vec::new();
            for _ in 0..rng.random_range(0..25) {
                let p: Vec<ChannelId> = match (made.last(), rng.random_range(0..4)) {
                    (Some(q), 0) => q.iter().rev().map(|&c| c ^ 1).collect(),
                    (Some(q), 1) => q.clone(),
                    (_, 2) => vec![4, 5],
                    _ => (0..rng.random_range(1..5))
                        .map(|_| rng.random_range(0..6))
                        .collect(),
                };
                paths.push(&p).unwrap();
                made.push(p);
            }
            let (want, weight) = oracle(&paths);
            let got = one_of_each_reversal(&paths);
            let ids: Vec<usize> = (0..paths.len()).filter(|&i| got.keeps(i)).collect();
            let kept: Vec<Vec<ChannelId>> = ids.iter().map(|&i| paths.path(i).to_vec()).collect();
            assert_eq!(kept, want);
            let stands_for: Vec<u8> = ids.iter().map(|&i| got.stands_for(i) as u8).collect();
            assert_eq!(stands_for, weight);
        }
    }

    /// `spec`'s network, greedy's plan on `shortest`, its maximal paths of
    /// two links or more, and one of each path and its reverse.
    fn greedy_and_paths(
        spec: &str,
    ) -> (tagger_generators::Topology, Tagging, ChannelPaths, Halved) {
        let t = crate::TopologySpec::parse(spec).unwrap().build().unwrap();
        let elp = ElpSet::build(&t, &crate::elp::ElpSpec::parse("shortest").unwrap()).unwrap();
        let g = tag(&t, &elp, Algo::GREEDY, CycleBackend::Ordered).unwrap();
        let paths = crate::elp::enumerate::maximal_channel_paths(&t, &elp, u64::MAX)
            .unwrap()
            .retain(|p| p.len() > 1);
        let halved = one_of_each_reversal(&paths);
        (t, g, paths, halved)
    }

    /// A symmetric search on the whole set, skipping the paths it does not
    /// keep, is the search on a copy of the kept paths alone (what it ran
    /// on before it shared the set and its occurrences): the same orders,
    /// steps, work and violated paths, on random Jellyfish networks; and
    /// the unrestricted search on the shared occurrences is the one on
    /// its own.
    #[test]
    fn skipping_paths_is_leaving_them_out() {
        for seed in 1..=3 {
            let spec = format!("jellyfish:n=50,ports=14,r=5,seed={seed}");
            let (t, g, paths, halved) = greedy_and_paths(&spec);
            let ids: Vec<usize> = (0..paths.len()).filter(|&i| halved.keeps(i)).collect();
            let mut copy = ChannelPaths::default();
            let mut alone = Halved {
                kept: vec![!0; ids.len().div_ceil(64)],
                paired: vec![0; ids.len().div_ceil(64)],
            };
            for (k, &i) in ids.iter().enumerate() {
                copy.push(paths.path(i)).unwrap();
                alone.paired[k / 64] |= (halved.stands_for(i) - 1) << (k % 64);
            }
            let n = t.channel_count();
            let (occ, occ_copy) = (
                crate::tagging::search::Occurrences::build_keeping(&paths, n, Some(&halved)),
                crate::tagging::search::Occurrences::build_keeping(&copy, n, Some(&alone)),
            );
            for target in [1u32, 2, 3] {
                let start = order::OrderPlan::from_keys(n, &g.keys, g.priorities)
                    .truncated(target as usize);
                let mut a =
                    LocalSearch::new_symmetric((&paths, &halved), &occ, n, &start.pos, target, 9);
                let mut b = LocalSearch::new_symmetric(
                    (&copy, &alone),
                    &occ_copy,
                    n,
                    &start.pos,
                    target,
                    9,
                );
                let (oa, ob) = (
                    a.run(300_000, &|| false, |_, _, _| {}),
                    b.run(300_000, &|| false, |_, _, _| {}),
                );
                assert_eq!(oa, ob, "{spec} target {target}");
                assert_eq!(a.pos, b.pos, "{spec} target {target}");
                let mapped: Vec<u32> = b
                    .violated_paths()
                    .iter()
                    .map(|&k| ids[k as usize] as u32)
                    .collect();
                assert_eq!(a.violated_paths(), &mapped[..], "{spec} target {target}");
                // The unrestricted search reads the same occurrences, kept
                // paths' first: as it does its own, in path order.
                let plain = crate::tagging::search::Occurrences::build(&paths, n);
                let mut c =
                    LocalSearch::with(&paths, Cow::Borrowed(&occ), n, &start.pos, target, 9);
                let mut d = LocalSearch::with(&paths, Cow::Owned(plain), n, &start.pos, target, 9);
                let (oc, od) = (
                    c.run(300_000, &|| false, |_, _, _| {}),
                    d.run(300_000, &|| false, |_, _, _| {}),
                );
                assert_eq!(oc, od, "{spec} target {target}");
                assert_eq!(c.pos, d.pos, "{spec} target {target}");
                assert_eq!(
                    c.violated_paths(),
                    d.violated_paths(),
                    "{spec} target {target}"
                );
            }
        }
    }

    /// A symmetric search keeps every order pair mirrored (and an odd
    /// target's middle order its own mirror) through its moves and
    /// relabellings, and its residue counts a kept path for its reverse
    /// too.
    #[test]
    fn the_mirror_holds_through_the_search() {
        let (t, g, paths, halved) = greedy_and_paths("jellyfish:n=60,ports=16,r=6,seed=4");
        let kept = (0..paths.len()).filter(|&i| halved.keeps(i)).count();
        assert!(kept * 2 >= paths.len() && kept < paths.len());
        let n = t.channel_count();
        for target in [1u32, 2, 3] {
            let start =
                order::OrderPlan::from_keys(n, &g.keys, g.priorities).truncated(target as usize);
            let occ = crate::tagging::search::Occurrences::build_keeping(&paths, n, Some(&halved));
            let mut ls =
                LocalSearch::new_symmetric((&paths, &halved), &occ, n, &start.pos, target, 5);
            ls.run(2_000_000, &|| false, |_, _, _| {});
            let p = target as usize;
            for tt in 0..p {
                for c in 0..n {
                    assert_eq!(
                        ls.pos[p - 1 - tt][c],
                        MIRROR - ls.pos[tt][c ^ 1],
                        "target {target}"
                    );
                }
            }
            // Its plan fits a path exactly when it fits the reverse: the
            // residue over all paths is the count a plain evaluation gives.
            let plan = ls.pos.clone();
            let fits = |path: &[ChannelId]| {
                let mut tag = 1usize;
                for w in path.windows(2) {
                    if tag > p {
                        break;
                    }
                    if plan[tag - 1][w[0] as usize] >= plan[tag - 1][w[1] as usize] {
                        tag += 1;
                    }
                }
                tag <= p
            };
            let violated = (0..paths.len()).filter(|&i| !fits(paths.path(i))).count() as u64;
            assert_eq!(ls.violated_total, violated, "target {target}");
        }
    }
}
