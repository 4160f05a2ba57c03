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
//! and the local search) and `exact/` (the SAT proof, on `exact/sat.rs` and its acyclicity theory `exact/acyclic.rs`).
//! Each exposes one function, `plan(cx, <its parameters>)`, over a
//! [`Context`] (topology, ELP, cycle backend, memory budget and the run's
//! [`Control`]); they call each other directly (search starts from greedy,
//! exact from search). `algo.rs` holds the names `--algo` parses,
//! `plan.rs` the result ([`Tagging`]), how a walk becomes one and the
//! checks it passes, and [`tag_in`] below dispatches.

mod algo;
mod auto;
mod brute;
pub mod classes;
mod clos;
mod context;
pub mod control;
pub(crate) mod engine;
pub mod exact;
pub mod extend;
pub mod fit;
mod greedy;
pub mod order;
pub mod pins;
mod plan;
pub mod search;
pub mod traffic;
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
pub use algo::{Algo, EXACT_TIMEOUT_MS, MAX_RESTARTS, SEARCH_BUDGET, SearchParams, count, millis};
pub use brute::tagged_graph;
pub use context::Context;
pub use control::Control;
pub use greedy::greedy_insertions;
#[cfg(test)]
pub(crate) use plan::self_check;
pub use plan::{
    Attempt, ClassHeld, Effort, Key, MAX_TAG, PriorityStats, Scheme, Tagging,
    dependency_lower_bound,
};
pub(crate) use plan::{build, finish, priority_stats, same_priority_edges};

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
    let (budget, control) = (Budget::unlimited(), Control::new());
    tag_in(
        &Context::new(topo, elp, &budget, &control).with_cycle(cycle),
        algo,
    )
}

/// Runs `algo` in `cx` (a memory budget, a traffic-class limit, a stop
/// flag, a cycle backend: see [`Context`]): the dispatch to each
/// algorithm's file, then the checks every plan passes (the self-checks)
/// and the lower bound its own dependencies prove.
///
/// # Errors
/// As [`tag`], and [`Error::MemoryBudget`] when the budget is passed.
pub fn tag_in(cx: &Context<'_>, algo: Algo) -> Result<Tagging> {
    let t = checked(match algo {
        // Each algorithm `auto` runs is checked and fitted on its own.
        Algo::Auto { time_ms } => return auto::plan(cx, time_ms),
        Algo::Brute => brute::plan(cx)?,
        Algo::Clos { k } => clos::plan(cx, k)?,
        Algo::Greedy { restarts, seed } => greedy::plan(cx, restarts, seed)?,
        Algo::Search(p) => search::plan(cx, &p)?,
        Algo::Exact { timeout_ms } => exact::plan(cx, timeout_ms)?,
        Algo::GreedyTtl => ttl::plan(cx)?,
    })?;
    match cx.max_tcs {
        None => Ok(t),
        Some(n) => fitted(cx, algo, t, n),
    }
}

/// `t` fitted to `max_tcs` traffic classes per switch ([`fit`]): as it is
/// when it fits, else planned again with keys forced up, by greedy itself
/// for greedy and by the plan's own decisions (its order form where it has
/// none) otherwise. Clos bounce tagging and TTL plans are what they are:
/// they fit or the run fails.
///
/// # Errors
/// [`Error::Algo`] saying why no plan within the budget was found.
fn fitted(cx: &Context<'_>, algo: Algo, t: Tagging, max_tcs: u32) -> Result<Tagging> {
    fitted_below(cx, algo, t, max_tcs, None)
}

/// [`fitted`], where greedy's fitting stops with [`Error::Algo`] at the
/// first replan above `cap` priorities (a plan with at most `cap` is
/// known): forcing keys up has not been seen to lower greedy's count
/// (Jellyfish 2000/64 r=12: 3 unfitted, 4 after the first of 11 rounds).
/// Greedy's rounds replan what the forced keys reach ([`greedy::fitted`]).
fn fitted_below(
    cx: &Context<'_>,
    algo: Algo,
    t: Tagging,
    max_tcs: u32,
    cap: Option<u32>,
) -> Result<Tagging> {
    let topo = cx.topo;
    let cannot = |reason: String| Error::Algo {
        algo: algo.name(),
        reason,
    };
    if t.scheme == Scheme::Ttl || matches!(algo, Algo::Clos { .. }) {
        let c = traffic::classify(topo, &t.keys)?;
        let over = c.over(max_tcs as usize);
        if over.is_empty() {
            let mut t = t;
            t.class_fit = Some(fit::ClassFit {
                max_tcs,
                tcs_max: c.max() as u32,
                unconstrained_priorities: t.priorities,
                forced_keys: 0,
                rounds: 0,
                per_node: c.per_node(topo.node_count()),
            });
            return Ok(t);
        }
        let (v, n) = over
            .iter()
            .copied()
            .max_by_key(|&(v, n)| (n, std::cmp::Reverse(v)))
            .expect("over");
        let why = if t.scheme == Scheme::Ttl {
            "its tags are hop counts, which no class can merge"
        } else {
            "its tags are bounce counts, each with its own classes"
        };
        return Err(cannot(format!(
            "the plan needs more than {max_tcs} traffic classes at {} switch(es) (switch {v}: {n}), and {why}: try search, a switch with more traffic classes, or --max-tcs none",
            over.len()
        )));
    }
    // `search` fits its own plan (keeping the better of its plans and
    // greedy's, each fitted): a plan it says fits, with the keys it forced
    // up counted, is kept as it is.
    if matches!(algo, Algo::Search(_))
        && t.class_fit
            .as_ref()
            .is_some_and(|f| f.max_tcs == max_tcs && f.tcs_max <= max_tcs)
    {
        return Ok(t);
    }
    let lower_bound = t.lower_bound;
    let effort = t.effort.clone();
    let unconstrained = t.class_fit.as_ref().map(|f| f.unconstrained_priorities);
    let fitted = match algo {
        Algo::Greedy { restarts, seed } => {
            greedy::fitted(cx, (restarts, seed), t, max_tcs, &|t: Tagging| match cap {
                Some(cap) if t.priorities > cap => Err(cannot(format!(
                    "fitting its plan to the traffic classes stopped at {} priorities, more than the {cap} of a plan found",
                    t.priorities
                ))),
                _ => Ok(t),
            })?
        }
        _ => repair(cx, algo, t, max_tcs)?,
    };
    match fitted {
        Ok((mut t, mut info)) => {
            t.algo = algo;
            t.lower_bound = lower_bound;
            t.effort = effort;
            if let Some(u) = unconstrained {
                info.unconstrained_priorities = info.unconstrained_priorities.min(u);
            }
            t.class_fit = Some(info);
            checked(t)
        }
        Err(no) => Err(cannot(no.to_string())),
    }
}

/// [`fit::fit`] of `t`, planning again with its own decisions where it
/// has them and its order form ([`order::OrderPlan::from_keys`]) for the
/// states forcing keys up creates: each forced key moves one priority
/// up, every other same-priority dependency stays forward in the order,
/// so every plan it tries is deadlock-free.
pub(crate) fn repair(
    cx: &Context<'_>,
    algo: Algo,
    t: Tagging,
    max_tcs: u32,
) -> Result<std::result::Result<(Tagging, fit::ClassFit), fit::NoFit>> {
    let topo = cx.topo;
    let own = own_decisions(&t);
    let order = order::OrderPlan::from_keys(topo.channel_count(), &t.keys, t.priorities);
    fit::fit(topo, max_tcs, t, &mut |_, f: &fit::Forced| {
        let decide = |c1: ChannelId, tag: u32, c2: ChannelId| -> Result<u32> {
            Ok(if f.contains(&(c1, tag, c2)) {
                tag + 1
            } else if let Some(&t2) = own.get(&(c1, tag, c2)) {
                t2
            } else {
                order.next_tag(c1, tag, c2)
            })
        };
        let walk = engine::walk(topo, cx.elp, None, Decider::Independent(&decide), cx.budget)?;
        finish(topo, algo, cx.cycle, walk, cx.budget)
    })
}

/// A plan's decisions by key `(in channel or HOST, tag, out channel)`.
fn own_decisions(t: &Tagging) -> rustc_hash::FxHashMap<(ChannelId, u32, ChannelId), u32> {
    t.keys
        .iter()
        .map(|k| {
            (
                (k.in_channel.unwrap_or(engine::HOST), k.tag, k.out_channel),
                k.next_tag,
            )
        })
        .collect()
}

/// Milliseconds left of a time limit of `limit_ms` started at `began`
/// (`None`: no limit), for an algorithm run inside another's limit.
fn ms_left(began: std::time::Instant, limit_ms: Option<u64>) -> Option<u64> {
    let spent = began.elapsed().as_millis().min(u64::MAX as u128) as u64;
    limit_ms.map(|ms| ms.saturating_sub(spent))
}

/// Orders that fit every maximal ELP path in `target` priorities must fit
/// the whole ELP in as many: `got` more is a bug of `algo`'s, reported as
/// [`Error::SelfCheck`].
fn orders_fit(algo: &str, target: u32, got: u32) -> Result<()> {
    if got <= target {
        return Ok(());
    }
    Err(Error::SelfCheck {
        stage: "tagging",
        reason: format!(
            "{algo}: orders that fit every maximal path in {target} priorities need {got} on the ELP"
        ),
    })
}

/// What every algorithm returns passes these: [`self_check`], and its lower
/// bound raised to what its own dependencies prove. Algorithms that build
/// on another (search on greedy, exact on search) call it on what they get.
fn checked(mut t: Tagging) -> Result<Tagging> {
    let scan = plan::KeyScan::of(&t.keys);
    plan::self_check_scanned(&t, &scan)?;
    t.lower_bound = t.lower_bound.max(scan.lower_bound(&t.keys));
    Ok(t)
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod self_check_tests {
    use super::plan::{cyclic_priority, keys_have_cycle};
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

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]
        /// The peel over sorted keys' runs agrees with the edge-list test,
        /// and keys out of order (its fallback) do too.
        #[test]
        fn key_runs_find_the_cycles_an_edge_list_does(
            raw in proptest::collection::vec((0u32..16, 0u32..16, 1u32..3, 0u32..2), 0..40),
        ) {
            let mut keys: Vec<Key> = raw
                .iter()
                .map(|&(c1, c2, p, up)| Key {
                    // A channel's keys sit at its head node, as in a plan.
                    node: c1 / 3,
                    in_channel: Some(c1),
                    tag: p,
                    out_channel: c2,
                    next_tag: p + up,
                    priority: p,
                    next_priority: p + up,
                })
                .collect();
            keys.sort_unstable();
            keys.dedup_by_key(|k| (k.node, k.in_channel, k.tag, k.out_channel));
            let edges = |keep: &dyn Fn(&Key) -> bool| -> Vec<(u32, u32)> {
                keys.iter().filter(|k| keep(k)).map(|k| (k.in_channel.unwrap(), k.out_channel)).collect()
            };
            let all = has_cycle(edges(&|_| true));
            proptest::prop_assert_eq!(keys_have_cycle(&keys, |_| true), all);
            proptest::prop_assert_eq!(dependency_lower_bound(&keys), if keys.is_empty() { 0 } else if all { 2 } else { 1 });
            let first = (1..3).find(|&p| has_cycle(edges(&|k: &Key| k.priority == p && k.next_priority == p)));
            proptest::prop_assert_eq!(cyclic_priority(&keys), first);
            keys.reverse();
            proptest::prop_assert_eq!(keys_have_cycle(&keys, |_| true), all);
            proptest::prop_assert_eq!(cyclic_priority(&keys), first);
        }
    }
}
