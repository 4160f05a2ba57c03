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
/// As [`tag_within`].
pub(super) fn brute_plan(
    topo: &Topology,
    elp: &ElpSet,
    algo: Algo,
    cycle: CycleBackend,
    budget: &Budget,
) -> Result<Tagging> {
    finish(topo, algo, cycle, tagged_graph(topo, elp, budget)?, budget)
}
