//! Tagging: turn a topology and its ELPs into per-key tag decisions.
//!
//! Every algorithm here decides per *rule key* `(in channel, tag, out
//! channel)`, which is all a switch can see (DESIGN.md "Rule consistency"),
//! so its output is always realisable as DSCP rewrite rules.
//!
//! The [`engine`] walks the ELP language hop by hop from the first hop. When a
//! packet state `(channel c1, tag t)` meets a continuation `c2`, the key
//! `(c1, t, c2)` is decided the first time it is met, by the algorithm's
//! decider; later prefixes with the same key share the decision. Inside a hop,
//! keys are decided in ascending `(c1, t, c2)` order, so results are
//! independent of thread count.

pub mod engine;

use crate::cycle::{BitsetPk, CycleBackend, IncrementalDag, NaiveDag, PetgraphDag};
use crate::elp::ElpSet;
use crate::error::{Error, Result};
use std::fmt;
use std::str::FromStr;
use tagger_generators::{ChannelId, NodeId, Topology};

pub use engine::Walk;

/// Tagging algorithm (`--algo`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Algo {
    /// Tag = hop number (Tagger Algorithm 1). Needs `longest ELP` priorities.
    Brute,
    /// Rule-level greedy merging with incremental cycle detection.
    Greedy,
    /// Clos bounce tagging: +1 on every down-then-up bounce. `k` caps the
    /// bounces (default: the ELP spec's `kbounce:K`, or 0).
    Clos { k: Option<u32> },
}

impl Algo {
    pub fn name(&self) -> String {
        match self {
            Algo::Brute => "brute".into(),
            Algo::Greedy => "greedy".into(),
            Algo::Clos { k: None } => "clos".into(),
            Algo::Clos { k: Some(k) } => format!("clos:{k}"),
        }
    }
}

impl fmt::Display for Algo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

impl FromStr for Algo {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        let bad = |reason: &str| Error::Algo {
            algo: s.to_string(),
            reason: reason.to_string(),
        };
        match s.trim() {
            "brute" => Ok(Algo::Brute),
            "greedy" => Ok(Algo::Greedy),
            "clos" => Ok(Algo::Clos { k: None }),
            other => match other.strip_prefix("clos:") {
                Some(k) => k
                    .parse::<u32>()
                    .ok()
                    .filter(|&k| k <= crate::elp::MAX_BOUNCES)
                    .map(|k| Algo::Clos { k: Some(k) })
                    .ok_or_else(|| bad("clos:K needs K in 0..=15")),
                None => Err(bad(
                    "unknown algorithm (expected brute, greedy, clos or clos:K)",
                )),
            },
        }
    }
}

/// One decided key: a packet in `in_channel` (or from a host port, `None`)
/// with `tag` that leaves on `out_channel` gets `next_tag`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Key {
    pub node: NodeId,
    pub in_channel: Option<ChannelId>,
    pub tag: u32,
    pub out_channel: ChannelId,
    pub next_tag: u32,
}

/// Per-priority size of the dependency graph.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PriorityStats {
    pub channels: u64,
    pub edges: u64,
}

/// The result of the tagging stage.
#[derive(Clone, Debug)]
pub struct Tagging {
    pub algo: Algo,
    pub cycle: CycleBackend,
    /// Lossless priorities used: the largest tag.
    pub priorities: u32,
    /// Decided keys sorted by (node, in channel, tag, out channel).
    pub keys: Vec<Key>,
    /// Every reached packet state `(channel, tag)`, sorted.
    pub states: Vec<(ChannelId, u32)>,
    pub per_priority: Vec<PriorityStats>,
}

/// Tags must fit the DSCP field with room for the lossy class.
pub const MAX_TAG: u32 = 63;

/// Runs `algo` on `elp`.
///
/// # Errors
/// [`Error::Algo`] when the algorithm does not apply (clos on a topology
/// without levels, or an ELP beyond `kbounce:K`) or needs more than
/// [`MAX_TAG`] tags; [`Error::SelfCheck`] if the result fails its own checks.
pub fn tag(topo: &Topology, elp: &ElpSet, algo: Algo, cycle: CycleBackend) -> Result<Tagging> {
    let walk = match algo {
        Algo::Brute => engine::walk(topo, elp, |_, t, _| Ok(t + 1))?,
        Algo::Clos { k } => {
            if !topo.has_levels() {
                return Err(Error::Algo {
                    algo: algo.name(),
                    reason: format!(
                        "clos needs a topology with levels; {} has none",
                        topo.name()
                    ),
                });
            }
            let k = k.or(elp.kbounce.as_ref().map(|kb| kb.k)).unwrap_or(0);
            let level = |c: ChannelId| topo.level(topo.channel_dst(c)).unwrap_or(0);
            let up = |c: ChannelId| level(c) > topo.level(topo.channel_src(c)).unwrap_or(0);
            engine::walk(topo, elp, |c1, t, c2| {
                let t2 = t + u32::from(!up(c1) && up(c2));
                if t2 > k + 1 {
                    return Err(Error::Algo {
                        algo: algo.name(),
                        reason: format!(
                            "the ELPs are not within kbounce:{k}: a path bounces at node {} (channel {c1} -> {c2}) past tag {}",
                            topo.channel_dst(c1),
                            k + 1
                        ),
                    });
                }
                Ok(t2)
            })?
        }
        Algo::Greedy => match cycle {
            CycleBackend::Bitset => greedy::<BitsetPk>(topo, elp)?,
            CycleBackend::Petgraph => greedy::<PetgraphDag>(topo, elp)?,
            CycleBackend::Naive => greedy::<NaiveDag>(topo, elp)?,
        },
    };
    let t = finish(topo, algo, cycle, walk);
    self_check(&t)?;
    Ok(t)
}

/// Greedy: keep the tag when the edge `(c1, t) -> (c2, t)` leaves priority
/// `t`'s dependency graph acyclic, else move to `t + 1`.
fn greedy<D: IncrementalDag>(topo: &Topology, elp: &ElpSet) -> Result<Walk> {
    let n = topo.channel_count();
    let mut dags: Vec<D> = Vec::new();
    engine::walk(topo, elp, |c1, t, c2| {
        while dags.len() < t as usize {
            dags.push(D::with_vertices(n));
        }
        Ok(if dags[t as usize - 1].try_add_edge(c1, c2) {
            t
        } else {
            t + 1
        })
    })
}

/// The incremental cycle-detection workload of a greedy run: every
/// `(priority, from, to)` insertion in the order greedy asks it, for replaying
/// into other backends (benches). Decisions are the same for every backend.
///
/// # Errors
/// As [`tag`].
pub fn greedy_insertions(topo: &Topology, elp: &ElpSet) -> Result<Vec<(u32, u32, u32)>> {
    let n = topo.channel_count();
    let mut dags: Vec<BitsetPk> = Vec::new();
    let mut seq = Vec::new();
    engine::walk(topo, elp, |c1, t, c2| {
        while dags.len() < t as usize {
            dags.push(BitsetPk::with_vertices(n));
        }
        seq.push((t, c1, c2));
        Ok(if dags[t as usize - 1].try_add_edge(c1, c2) {
            t
        } else {
            t + 1
        })
    })?;
    Ok(seq)
}

fn finish(topo: &Topology, algo: Algo, cycle: CycleBackend, walk: Walk) -> Tagging {
    let mut keys: Vec<Key> = walk
        .keys
        .into_iter()
        .map(|((c1, t, c2), t2)| Key {
            node: topo.channel_src(c2),
            in_channel: (c1 != engine::HOST).then_some(c1),
            tag: t,
            out_channel: c2,
            next_tag: t2,
        })
        .collect();
    keys.sort_unstable();
    let mut states = walk.states;
    states.sort_unstable();
    let priorities = states.iter().map(|s| s.1).max().unwrap_or(0);
    let mut per = vec![PriorityStats::default(); priorities as usize];
    for &(_, t) in &states {
        per[t as usize - 1].channels += 1;
    }
    for k in &keys {
        if k.in_channel.is_some() && k.tag == k.next_tag {
            per[k.tag as usize - 1].edges += 1;
        }
    }
    Tagging {
        algo,
        cycle,
        priorities,
        keys,
        states,
        per_priority: per,
    }
}

/// Checks what the stage promises: tags start at 1, never decrease, fit the
/// DSCP field, and every key has one decision.
fn self_check(t: &Tagging) -> Result<()> {
    let fail = |reason: String| {
        Err(Error::SelfCheck {
            stage: "tagging",
            reason,
        })
    };
    for k in &t.keys {
        if k.next_tag < k.tag || k.tag == 0 {
            return fail(format!("key {k:?} lowers the tag"));
        }
        if k.in_channel.is_none() && (k.tag != 1 || k.next_tag != 1) {
            return fail(format!("first-hop key {k:?} does not keep tag 1"));
        }
    }
    for w in t.keys.windows(2) {
        if (w[0].node, w[0].in_channel, w[0].tag, w[0].out_channel)
            == (w[1].node, w[1].in_channel, w[1].tag, w[1].out_channel)
        {
            return fail(format!("key decided twice: {:?} and {:?}", w[0], w[1]));
        }
    }
    if t.priorities > MAX_TAG {
        return Err(Error::Algo {
            algo: t.algo.name(),
            reason: format!(
                "needs {} tags, more than the {MAX_TAG} a DSCP field leaves",
                t.priorities
            ),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests;
