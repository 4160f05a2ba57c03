//! `clos`: the optimal scheme for tiered (Clos) topologies, from the
//! Tagger paper: a packet's tag counts its bounces (a down hop followed by
//! an up hop), so up*/down* paths stay at tag 1 and each bounce moves to
//! the next priority.

use super::*;

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
    let level = |c: ChannelId| topo.level(topo.channel_dst(c)).unwrap_or(0);
    let up = |c: ChannelId| level(c) > topo.level(topo.channel_src(c)).unwrap_or(0);
    let walk = engine::walk(
        topo,
        elp,
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
        budget,
    )?;
    finish(topo, algo, cx.cycle, walk, budget)
}
