//! `clos`: the optimal scheme for tiered (Clos) topologies, from the
//! Tagger paper: a packet's tag counts its bounces (a down hop followed by
//! an up hop), so up*/down* paths stay at tag 1 and each bounce moves to
//! the next priority.

use super::*;
use crate::elp::{KBounce, KbSources};
use engine::Walk;

/// `clos`, `clos:K`: +1 on every down-then-up bounce, so a `kbounce:K`
/// ELP needs exactly K + 1 priorities (optimal on its family). K defaults
/// to the ELP's `kbounce:K`.
///
/// # Errors
/// [`Error::Algo`] on a topology without levels, or an ELP beyond
/// `kbounce:K` (naming the node where a path bounces once too often).
pub(super) fn plan(cx: &Context<'_>, k: Option<u32>) -> Result<Tagging> {
    let (topo, elp, budget) = (cx.topo, cx.elp, cx.budget);
    let algo = Algo::Clos { k };
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
    let walk = match &elp.kbounce {
        Some(kb)
            if elp.shortest.is_none()
                && elp.dor.is_none()
                && elp.explicit.is_none()
                && kb.k <= k =>
        {
            bounce_walk(topo, kb, budget)?
        }
        _ => hop_walk(cx, algo, k)?,
    };
    finish(topo, algo, cx.cycle, walk, budget)
}

/// The walk every algorithm shares, deciding each key by the formula:
/// for ELPs besides `kbounce:K`'s, and to name where a path bounces past
/// `clos:K`'s tags.
///
/// # Errors
/// [`Error::Algo`] naming the node where a path bounces once too often,
/// and the budget's refusal.
fn hop_walk(cx: &Context<'_>, algo: Algo, k: u32) -> Result<Walk> {
    let topo = cx.topo;
    let level = |c: ChannelId| topo.level(topo.channel_dst(c)).unwrap_or(0);
    let up = |c: ChannelId| level(c) > topo.level(topo.channel_src(c)).unwrap_or(0);
    engine::walk(
        topo,
        cx.elp,
        None,
        Decider::Independent(&|c1, t, c2| {
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
        }),
        cx.budget,
    )
}

/// The walk of `clos` over a `kbounce:K` ELP alone, as one pass over the
/// bounce automaton instead of the hop-by-hop walk every algorithm shares.
///
/// Under `clos` a packet's tag is one more than the bounces it has made,
/// so the walk's states `(channel, tag)` are the automaton's `(channel,
/// bounces)` and the plan needs no decisions beyond the formula: what the
/// walk finds is only which keys the ELPs take. The automaton is acyclic
/// and [`KBounce::dp_order`] lists each bounce count's states after every
/// state feeding them, so one pass in that order settles each state's
/// sources (the same abstraction the walk merges: none, one endpoint, or
/// several) before its continuations are taken, where the walk kept
/// prefix records per state and merged them hop by hop. The keys are the
/// same (an oracle test compares the two on fat-trees and leaf-spines at
/// bounce counts 0-3): on fat-tree k=64 `kbounce:2` (786k states, 30M
/// keys) the walk took 1.1-2.3 s, this pass 0.16-0.8 s.
///
/// Arguments: the topology and its `kbounce:K` automaton; the budget is
/// charged the pass's tables after each bounce count.
///
/// Returns: the reached states in pass order (bounce count, then
/// [`KBounce::dp_order`]) with their next tags, and the first hops sorted.
///
/// Complexity: O(S * D) for S reached states of out-degree D, sequential.
///
/// # Errors
/// [`Error::MemoryBudget`] when the tables pass the budget.
fn bounce_walk(topo: &Topology, kb: &KBounce, budget: &Budget) -> Result<Walk> {
    use crate::budget::bytes_of;
    let nc = topo.channel_count();
    let at = |b: u32, c: ChannelId| b as usize * nc + c as usize;
    let mut src = vec![KbSources::NONE; (kb.k as usize + 1) * nc];
    let mut first_hops = Vec::new();
    for (i, &e) in topo.endpoints().iter().enumerate() {
        for &c in topo.out_channels(e) {
            let s = kb.first_hop(i, c).0[0];
            if s != KbSources::NONE {
                src[at(0, c)] = KbSources::join(src[at(0, c)], s);
                first_hops.push(c);
            }
        }
    }
    first_hops.sort_unstable();
    first_hops.dedup();
    let (mut states, mut decision_off, mut decisions) = (Vec::new(), Vec::new(), Vec::new());
    let mut row: Vec<u32> = Vec::new();
    for b in 0..=kb.k {
        for c in kb.dp_order() {
            let s = src[at(b, c)];
            if s == KbSources::NONE {
                continue;
            }
            states.push((c, b + 1));
            row.clear();
            for &c2 in topo.out_channels(topo.channel_dst(c)) {
                row.push(match kb.step_one(b, s, c, c2) {
                    Some((b2, s2)) => {
                        src[at(b2, c2)] = KbSources::join(src[at(b2, c2)], s2);
                        b2 + 1
                    }
                    None => 0,
                });
            }
            if row.iter().any(|&t| t != 0) {
                decision_off.push(decisions.len());
                decisions.extend_from_slice(&row);
            } else {
                decision_off.push(usize::MAX);
            }
        }
        budget.check(
            "tagging",
            bytes_of::<u32>(src.len())
                + bytes_of::<(ChannelId, u32)>(states.capacity())
                + bytes_of::<usize>(decision_off.capacity())
                + bytes_of::<u32>(decisions.capacity()),
        )?;
    }
    Ok(Walk::from_parts(
        states,
        first_hops,
        decision_off,
        decisions,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::budget::Budget;
    use crate::elp::ElpSpec;
    use crate::testing::topo;

    /// A walk's keys and reached states.
    type Seen = (
        Vec<((ChannelId, u32, ChannelId), u32)>,
        Vec<(ChannelId, u32)>,
    );

    /// The walk's keys and reached states, in one order.
    fn seen(t: &Topology, w: &Walk) -> Seen {
        let mut keys: Vec<_> = w.keys(t).collect();
        keys.sort_unstable();
        let mut states = w.states.clone();
        states.sort_unstable();
        (keys, states)
    }

    /// Oracle: the bounce automaton's pass finds the keys and states of the
    /// hop-by-hop walk deciding by the formula, on fat-trees and
    /// leaf-spines at every bounce count up to 3, with `clos:K` above the
    /// ELP's K too.
    #[test]
    fn the_bounce_pass_finds_what_the_walk_finds() {
        for spec in [
            "fattree:k=4",
            "fattree:k=6",
            "fattree:k=8",
            "leafspine:leaves=6,spines=3,hosts=1",
            "leafspine:leaves=5,spines=4,hosts=2",
        ] {
            let t = topo(spec);
            for kb in 0..=3 {
                let elp =
                    ElpSet::build(&t, &ElpSpec::parse(&format!("kbounce:{kb}")).unwrap()).unwrap();
                let (budget, control) = (Budget::unlimited(), Control::new());
                let cx = Context::new(&t, &elp, &budget, &control);
                for k in [kb, kb + 1] {
                    let fast = bounce_walk(&t, elp.kbounce.as_ref().unwrap(), &budget).unwrap();
                    let slow = hop_walk(&cx, Algo::Clos { k: Some(k) }, k).unwrap();
                    let (f, s) = (seen(&t, &fast), seen(&t, &slow));
                    assert!(!f.0.is_empty(), "{spec} kbounce:{kb}: no keys");
                    assert_eq!(f, s, "{spec} kbounce:{kb} clos:{k}");
                    assert_eq!(fast.first_hops, slow.first_hops, "{spec} kbounce:{kb}");
                }
            }
        }
    }

    /// A tight budget refuses the pass rather than passing it by.
    #[test]
    fn the_bounce_pass_is_charged_to_the_budget() {
        let t = topo("fattree:k=8");
        let elp = ElpSet::build(&t, &ElpSpec::parse("kbounce:2").unwrap()).unwrap();
        let budget = Budget::new(Some(4096));
        let err = bounce_walk(&t, elp.kbounce.as_ref().unwrap(), &budget).unwrap_err();
        assert!(
            matches!(
                err,
                Error::MemoryBudget {
                    stage: "tagging",
                    ..
                }
            ),
            "{err}"
        );
    }
}
