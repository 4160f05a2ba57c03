//! `brute`: a new tag at every hop (tag = hop number), the baseline every
//! other algorithm improves on: always deadlock-free, never fewer
//! priorities than the longest path needs.

use super::*;

/// The brute-force tagged graph: nodes `(channel, hop)` are the walk's
/// states and edges its keys from a channel (tag = hop number).
///
/// # Errors
/// [`Error::MemoryBudget`] when the walk outgrows `budget`.
pub fn tagged_graph(topo: &Topology, elp: &ElpSet, budget: &Budget) -> Result<Walk> {
    engine::walk(
        topo,
        elp,
        None,
        Decider::Independent(&|_, t, _| Ok(t + 1)),
        budget,
    )
}

/// `brute`: the tagged graph as a plan.
///
/// # Errors
/// As [`super::tag_in`].
pub(super) fn plan(cx: &Context<'_>) -> Result<Tagging> {
    let walk = tagged_graph(cx.topo, cx.elp, cx.budget)?;
    finish(cx.topo, Algo::Brute, cx.cycle, walk, cx.budget)
}
