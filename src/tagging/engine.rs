//! The hop-ordered walk over the ELP language that every algorithm shares.

use crate::elp::{ElpSet, Prefixes};
use crate::error::Result;
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use rustc_hash::FxHashMap as HashMap;
use tagger_generators::{ChannelId, Topology};

/// Stands for "arrived from a host port" in keys.
pub const HOST: ChannelId = u32::MAX;

/// Raw output of a walk: decided keys `(c1 or HOST, tag, c2) -> next tag`
/// and every reached state `(channel, tag)`.
#[derive(Debug, Default)]
pub struct Walk {
    pub keys: HashMap<(ChannelId, u32, ChannelId), u32>,
    pub states: Vec<(ChannelId, u32)>,
}

/// Decides the next tag of keys `(c1, t, c2)`.
pub trait Decide {
    /// Decides one hop's new keys, given in decision order; returns their
    /// next tags in the same order. Every key of a hop is known before any
    /// is decided, so a decider may split the batch where decisions are
    /// independent.
    ///
    /// # Errors
    /// When a key cannot be decided (the algorithm does not apply).
    fn decide_hop(&mut self, keys: &[(ChannelId, u32, ChannelId)]) -> Result<Vec<u32>>;
}

/// A decider that takes keys one at a time, in order.
#[derive(Debug)]
pub struct PerKey<F>(pub F);

impl<F: FnMut(ChannelId, u32, ChannelId) -> Result<u32>> Decide for PerKey<F> {
    fn decide_hop(&mut self, keys: &[(ChannelId, u32, ChannelId)]) -> Result<Vec<u32>> {
        keys.iter()
            .map(|&(c1, t, c2)| (self.0)(c1, t, c2))
            .collect()
    }
}

/// Walks the language from every first hop (tag 1), asking `decide` once per
/// new key `(c1, t, c2)`; `decide` returns the tag the packet carries on
/// `c2`. Prefix sets already explored at a state are not explored again, so
/// the work is bounded by states times prefix classes.
///
/// Continuations of a hop are computed in parallel; the hop's new keys go to
/// the decider in ascending `(c1, t, c2)` order, or, with `order`, in an
/// order shuffled by that seed (greedy restarts).
///
/// # Errors
/// Whatever `decide` returns.
pub fn walk(
    topo: &Topology,
    elp: &ElpSet,
    order: Option<u64>,
    decide: &mut impl Decide,
) -> Result<Walk> {
    let mut keys: HashMap<(ChannelId, u32, ChannelId), u32> = HashMap::default();
    let mut seen: HashMap<(ChannelId, u32), Prefixes> = HashMap::default();
    let mut frontier: Vec<((ChannelId, u32), Prefixes)> = Vec::new();
    for (c, mut p) in elp.initial(topo) {
        keys.insert((HOST, 1, c), 1);
        p.subtract_seen(seen.entry((c, 1)).or_default());
        frontier.push(((c, 1), p));
    }
    let mut hop = 1u32;
    while !frontier.is_empty() {
        let succ: Vec<Vec<(ChannelId, Prefixes)>> = frontier
            .par_iter()
            .map(|&((c, _), ref p)| elp.successors(topo, c, hop, p))
            .collect();
        let mut fresh: Vec<(ChannelId, u32, ChannelId)> = Vec::new();
        for (&((c, t), _), list) in frontier.iter().zip(&succ) {
            for (c2, _) in list {
                if !keys.contains_key(&(c, t, *c2)) {
                    fresh.push((c, t, *c2));
                }
            }
        }
        if let Some(seed) = order {
            let mut rng = ChaCha8Rng::seed_from_u64(crate::seed::mix(seed, hop as u64));
            fresh.shuffle(&mut rng);
        }
        let tags = decide.decide_hop(&fresh)?;
        keys.extend(fresh.into_iter().zip(tags));
        let mut next: HashMap<(ChannelId, u32), Prefixes> = HashMap::default();
        for (&((c, t), _), list) in frontier.iter().zip(succ) {
            for (c2, q) in list {
                next.entry((c2, keys[&(c, t, c2)])).or_default().union(q);
            }
        }
        let mut next: Vec<_> = next.into_iter().collect();
        next.sort_unstable_by_key(|(k, _)| *k);
        frontier.clear();
        for (k, mut p) in next {
            p.subtract_seen(seen.entry(k).or_default());
            if !p.is_empty() {
                frontier.push((k, p));
            }
        }
        hop += 1;
    }
    Ok(Walk {
        keys,
        states: seen.into_keys().collect(),
    })
}
