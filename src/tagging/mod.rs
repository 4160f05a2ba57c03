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
//! Each exposes one function, `plan(cx, <its parameters>)`, over a
//! [`Context`] (topology, ELP, cycle backend, memory budget and the run's
//! [`Control`]); they call each other directly (search starts from greedy,
//! exact from search). `algo.rs` holds the names `--algo` parses,
//! `plan.rs` the result ([`Tagging`]), how a walk becomes one and the
//! checks it passes, and [`tag_in`] below dispatches.

pub(crate) mod acyclic;
mod algo;
mod brute;
pub mod classes;
mod clos;
mod context;
pub mod control;
pub(crate) mod engine;
pub mod exact;
pub mod extend;
mod greedy;
pub mod order;
pub mod pins;
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
pub use context::Context;
pub use control::Control;
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
    let control = Control::new();
    tag_in(
        &Context::new(topo, elp, budget, &control).with_cycle(cycle),
        algo,
    )
}

/// Runs `algo` in `cx`: the dispatch to each algorithm's file, then the
/// checks every plan passes (the self-checks) and the lower bound its own
/// dependencies prove.
///
/// # Errors
/// As [`tag_within`].
pub fn tag_in(cx: &Context<'_>, algo: Algo) -> Result<Tagging> {
    checked(match algo {
        Algo::Brute => brute::plan(cx)?,
        Algo::Clos { k } => clos::plan(cx, k)?,
        Algo::Greedy { restarts, seed } => greedy::plan(cx, restarts, seed)?,
        Algo::Search {
            budget,
            seed,
            time_ms,
            max_paths,
            symmetric,
        } => search::plan(cx, budget, seed, time_ms, max_paths, symmetric)?,
        Algo::Exact { timeout_ms } => exact::plan(cx, timeout_ms)?,
        Algo::GreedyTtl => ttl::plan(cx)?,
    })
}

/// What every algorithm returns passes these: [`self_check`], and its lower
/// bound raised to what its own dependencies prove. Algorithms that build
/// on another (search on greedy, exact on search) call it on what they get.
fn checked(mut t: Tagging) -> Result<Tagging> {
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
