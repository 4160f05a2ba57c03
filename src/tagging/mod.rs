//! Tagging: turn a topology and its ELPs into per-key tag decisions.
//!
//! Every algorithm here decides per *rule key* `(in channel, tag, out
//! channel)`, which is all a switch can see (docs/model.md "Rule consistency"),
//! so its output is always realisable as DSCP rewrite rules.
//!
//! The engine (`engine.rs`) walks the ELP language hop by hop from the first hop. When a
//! packet state `(channel c1, tag t)` meets a continuation `c2`, the key
//! `(c1, t, c2)` is decided the first time it is met, by the algorithm's
//! decider; later prefixes with the same key share the decision. Inside a hop,
//! keys are decided in ascending `(c1, t, c2)` order (greedy: per priority,
//! in parallel, which is the same since a key at tag t touches only priority
//! t's graph), so results are independent of thread count.
//!
//! One file per algorithm, as petgraph's `algo/`: `brute.rs` (a tag per
//! hop), `greedy.rs` (greedy merging, with restarts), `clos.rs` (the
//! optimal Clos scheme), `ttl.rs` (`greedy-ttl`), `search.rs` (order plans
//! and the local search) and `exact.rs` (the SAT proof, on `sat.rs`).
//! `algo.rs` holds the names `--algo` parses, `plan.rs` the result
//! ([`Tagging`]), how a walk becomes one and the checks it passes, and
//! [`tag_within`] below dispatches.

mod algo;
mod brute;
pub mod classes;
mod clos;
pub mod control;
pub(crate) mod engine;
pub mod exact;
mod greedy;
pub mod order;
mod plan;
pub(crate) mod sat;
pub mod search;
mod ttl;

use crate::budget::Budget;
use crate::cycle::{CycleBackend, IncrementalDag, NaiveDag, OrderedDag, PearceKelly, PetgraphDag};
use crate::elp::ElpSet;
use crate::error::{Error, Result};
use std::fmt;
use std::str::FromStr;
use tagger_generators::params::Params;
use tagger_generators::{ChannelId, NodeId, Topology};

pub(crate) use engine::{Decider, HopDecider, PerKey, Walk};

pub(crate) use crate::cycle::{has_cycle, topological_order, topological_order_by};
pub use algo::*;
pub use brute::tagged_graph;
pub use greedy::greedy_insertions;
pub use plan::*;

/// Runs `algo` on `elp`.
///
/// ```
/// use tagger::elp::{ElpSet, ElpSpec};
/// use tagger::tagging::{Algo, tag};
/// let t = tagger::TopologySpec::parse("fattree:k=4")?.build()?;
/// let elp = ElpSet::build(&t, &ElpSpec::parse("kbounce:1")?)?;
/// let clos = tag(&t, &elp, "clos".parse::<Algo>()?, Default::default())?;
/// let greedy = tag(&t, &elp, Algo::GREEDY, Default::default())?;
/// assert_eq!(clos.priorities, 2); // one bounce, one priority step
/// assert!(greedy.priorities >= clos.lower_bound);
/// # Ok::<(), tagger::Error>(())
/// ```
///
/// # Errors
/// [`Error::Algo`] when the algorithm does not apply (clos on a topology
/// without levels, or an ELP beyond `kbounce:K`) or needs more than
/// [`MAX_TAG`] priorities; [`Error::SelfCheck`] if the result fails its own
/// checks.
pub fn tag(topo: &Topology, elp: &ElpSet, algo: Algo, cycle: CycleBackend) -> Result<Tagging> {
    tag_within(topo, elp, algo, cycle, &Budget::unlimited())
}

/// [`tag`] under a memory budget, checked after every hop of the walk.
///
/// # Errors
/// As [`tag`], and [`Error::MemoryBudget`].
pub fn tag_within(
    topo: &Topology,
    elp: &ElpSet,
    algo: Algo,
    cycle: CycleBackend,
    budget: &Budget,
) -> Result<Tagging> {
    let t = match algo {
        Algo::Brute => brute::brute_plan(topo, elp, algo, cycle, budget)?,
        Algo::Clos { k } => clos::clos_plan(topo, elp, algo, k, cycle, budget)?,
        Algo::Greedy { restarts, seed } => {
            greedy::greedy_plan(topo, elp, algo, restarts, seed, cycle, budget)?
        }
        Algo::Search {
            budget: work,
            seed,
            time_ms,
            max_paths,
        } => search::search_plan(
            topo, elp, algo, cycle, budget, work, seed, time_ms, max_paths,
        )?,
        Algo::Exact { timeout_ms } => {
            exact::exact_plan(topo, elp, algo, cycle, budget, Some(timeout_ms))?
        }
        Algo::GreedyTtl => ttl::ttl_plan(topo, elp, cycle, budget)?,
    };
    let mut t = t;
    self_check(&t)?;
    t.lower_bound = t.lower_bound.max(dependency_lower_bound(&t.keys));
    Ok(t)
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod self_check_tests {
    use super::*;

    fn key(c1: ChannelId, c2: ChannelId, p: u32) -> Key {
        Key {
            node: 0,
            in_channel: Some(c1),
            tag: p,
            out_channel: c2,
            next_tag: p,
            priority: p,
            next_priority: p,
        }
    }

    #[test]
    fn finds_a_cycle_only_within_one_priority() {
        assert_eq!(
            cyclic_priority(&[key(0, 2, 1), key(2, 4, 1), key(4, 0, 1)]),
            Some(1)
        );
        assert_eq!(
            cyclic_priority(&[key(0, 2, 1), key(2, 4, 1), key(4, 0, 2)]),
            None
        );
        assert_eq!(
            cyclic_priority(&[key(0, 2, 2), key(2, 0, 2), key(6, 8, 1)]),
            Some(2)
        );
    }
}
