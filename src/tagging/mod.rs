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

pub mod classes;
pub mod control;
pub(crate) mod engine;
pub mod exact;
pub mod order;
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

/// Tagging algorithm (`--algo`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Algo {
    /// Tag = hop number (Tagger Algorithm 1). Needs `longest ELP` priorities.
    Brute,
    /// Rule-level greedy merging with incremental cycle detection; with
    /// `restarts > 1`, that many runs under seeded key orders (run 0 in the
    /// canonical order), keeping the best.
    Greedy {
        /// Runs, each in its own key order.
        restarts: u32,
        /// Seed of the key orders after the first.
        seed: u64,
    },
    /// The paper's node-level greedy (Algorithm 2) on `(channel, hop)` nodes,
    /// realised with rules that match the hop count (TTL).
    GreedyTtl,
    /// Clos bounce tagging: +1 on every down-then-up bounce. `k` caps the
    /// bounces (default: the ELP spec's `kbounce:K`, or 0).
    Clos {
        /// Bounces the plan covers (`None`: the ELP's).
        k: Option<u32>,
    },
    /// Fewest priorities by search over order plans ([`order`]): the best of
    /// greedy and the up*/down* and alternating constructions, then a
    /// target-P local search ([`search`]) that lowers P while it succeeds,
    /// within `budget` path evaluations (and `time_ms`, if set). Never more priorities
    /// than greedy; among plans with the fewest, the fewest compressed rules.
    Search {
        /// Path evaluations the local search may spend (deterministic work,
        /// unlike time).
        budget: u64,
        /// Seed of the local search's moves.
        seed: u64,
        /// Wall-clock limit in milliseconds, if any.
        time_ms: Option<u64>,
        /// Random paths sampled when the ELP has more (the search works on a sample, the plan covers all).
        max_paths: u64,
    },
    /// The fewest priorities, proven: `search`'s plan, then SAT under one
    /// priority fewer until the solver says impossible ([`exact`]). Stops
    /// after `timeout_ms` with the best plan and bound.
    Exact {
        /// Time the solver may take, in milliseconds.
        timeout_ms: u64,
    },
}

/// Default time limit of `exact`, in milliseconds.
pub const EXACT_TIMEOUT_MS: u64 = 600_000;

/// Default work budget of `search`: path evaluations by its local search
/// (about 2-5 s on this machine; Jellyfish 300/64 `shortest` needs about
/// 4x10^8 to reach 2 priorities).
pub const SEARCH_BUDGET: u64 = 100_000_000;
/// ELPs past which `search` does not start its local search (it keeps the
/// best construction): enumerating them costs more than the rest of the run
/// (Jellyfish-2000 `shortest`, 17.3M paths: about 7 s and 1.5 GB).
pub const SEARCH_MAX_PATHS: u64 = 5_000_000;

/// Restarts one greedy run may ask for.
pub const MAX_RESTARTS: u32 = 1024;

impl Algo {
    /// Greedy with one run in the canonical order (the default).
    pub const GREEDY: Algo = Algo::Greedy {
        restarts: 1,
        seed: 0,
    };

    /// The algorithm as written (`greedy`, `search:budget=...`), parsed back by `FromStr`.
    pub fn name(&self) -> String {
        match self {
            Algo::Brute => "brute".into(),
            Algo::Greedy { restarts: 1, .. } => "greedy".into(),
            Algo::Greedy { restarts, seed } => format!("greedy:restarts={restarts},seed={seed}"),
            Algo::GreedyTtl => "greedy-ttl".into(),
            Algo::Clos { k: None } => "clos".into(),
            Algo::Clos { k: Some(k) } => format!("clos:{k}"),
            Algo::Search {
                budget: SEARCH_BUDGET,
                seed: 0,
                time_ms: None,
                max_paths: SEARCH_MAX_PATHS,
            } => "search".into(),
            Algo::Exact {
                timeout_ms: EXACT_TIMEOUT_MS,
            } => "exact".into(),
            Algo::Exact { timeout_ms } => format!("exact:timeout={}", *timeout_ms as f64 / 1000.0),
            Algo::Search {
                budget,
                seed,
                time_ms,
                max_paths,
            } => {
                let mut s = format!("search:budget={budget},seed={seed}");
                if let Some(ms) = time_ms {
                    s += &format!(",time={}", *ms as f64 / 1000.0);
                }
                if *max_paths != SEARCH_MAX_PATHS {
                    s += &format!(",paths={max_paths}");
                }
                s
            }
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
        let bad = |reason: String| Error::Algo {
            algo: s.to_string(),
            reason,
        };
        let (name, rest) = s.trim().split_once(':').unwrap_or((s.trim(), ""));
        let params = |rest: &str| Params::parse(rest, None).map_err(|e| bad(e.to_string()));
        let unknown = |p: &Params, expected: &str| match p.first() {
            Some((k, _)) => Err(bad(format!(
                "unknown parameter '{k}' (expected {expected})"
            ))),
            None => Ok(()),
        };
        match name {
            "brute" | "greedy-ttl" | "clos" if rest.is_empty() => Ok(match name {
                "brute" => Algo::Brute,
                "greedy-ttl" => Algo::GreedyTtl,
                _ => Algo::Clos { k: None },
            }),
            "clos" => rest
                .parse::<u32>()
                .ok()
                .filter(|&k| k <= crate::elp::MAX_BOUNCES)
                .map(|k| Algo::Clos { k: Some(k) })
                .ok_or_else(|| bad(format!("clos:K needs K in 0..={}", crate::elp::MAX_BOUNCES))),
            "greedy" => {
                let mut p = params(rest)?;
                let num = |k: &str, v: Option<String>, default: u64| -> Result<u64> {
                    v.map_or(Ok(default), |v| {
                        v.parse()
                            .map_err(|_| bad(format!("{k} = {v} is {}", tagger_generators::params::not_a_count(&v))))
                    })
                };
                let restarts = num("restarts", p.take("restarts"), 1)?;
                let seed = num("seed", p.take("seed"), 0)?;
                unknown(&p, "restarts, seed")?;
                if restarts == 0 || restarts > MAX_RESTARTS as u64 {
                    return Err(bad(format!("restarts = {restarts} must be in 1..={MAX_RESTARTS}")));
                }
                Ok(Algo::Greedy {
                    restarts: restarts as u32,
                    seed,
                })
            }
            "exact" => {
                let mut p = params(rest)?;
                let timeout_ms = match p.take("timeout") {
                    Some(v) => millis("timeout", &v).map_err(bad)?,
                    None => EXACT_TIMEOUT_MS,
                };
                unknown(&p, "timeout")?;
                Ok(Algo::Exact { timeout_ms })
            }
            "search" => {
                let mut p = params(rest)?;
                let n = |k: &str, p: &mut Params, default: u64| -> Result<u64> {
                    p.take(k).map_or(Ok(default), |v| {
                        count(&v).ok_or_else(|| bad(format!("{k} = {v} is {} (e.g. 100000000 or 1e8)", tagger_generators::params::not_a_count(&v))))
                    })
                };
                let budget = n("budget", &mut p, SEARCH_BUDGET)?;
                let seed = n("seed", &mut p, 0)?;
                let max_paths = n("paths", &mut p, SEARCH_MAX_PATHS)?;
                let time_ms = p.take("time").map(|v| millis("time", &v).map_err(bad)).transpose()?;
                unknown(&p, "budget, seed, time, paths")?;
                Ok(Algo::Search { budget, seed, time_ms, max_paths })
            }
            _ => Err(bad(
                "unknown algorithm (expected brute, greedy, greedy:restarts=R,seed=X, greedy-ttl, clos, clos:K, search[:budget=N,seed=X,time=S,paths=N] or exact[:timeout=S])".into(),
            )),
        }
    }
}

/// A non-negative integer, also in exponent form when the value is whole
/// (`5e9`, `1.5e9`): budgets are large numbers people write that way.
fn count(v: &str) -> Option<u64> {
    if let Ok(n) = v.parse::<u64>() {
        return Some(n);
    }
    let (mantissa, exp) = v.split_once(['e', 'E'])?;
    let exp: u32 = exp.strip_prefix('+').unwrap_or(exp).parse().ok()?;
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let frac = frac.trim_end_matches('0');
    if int.is_empty() && frac.is_empty()
        || !(int.bytes().chain(frac.bytes())).all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let digits: u128 = format!("{int}{frac}").parse().ok()?;
    let shift = exp.checked_sub(frac.len() as u32)?;
    let n = digits.checked_mul(10u128.checked_pow(shift)?)?;
    u64::try_from(n).ok()
}

/// Milliseconds from a `key=SECONDS` parameter (positive, at most 10^7 s);
/// the error names `key` and the value.
///
/// # Errors
/// The message, when `v` is not such a number of seconds.
pub fn millis(key: &str, v: &str) -> std::result::Result<u64, String> {
    match v.parse::<f64>() {
        Ok(x) if x > 1e7 => Err(format!(
            "{key} = {v} is out of range (at most 10000000 seconds)"
        )),
        Ok(x) if x.is_finite() && x > 0.0 => Ok((x * 1000.0).round().max(1.0) as u64),
        _ => Err(format!("{key} = {v} must be seconds, a positive number")),
    }
}

/// How a packet's state is carried and matched.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scheme {
    /// The tag is the lossless priority, rewritten (DSCP).
    Dscp,
    /// The tag is the hop count (TTL); the priority is a function of the
    /// ingress port and the hop count.
    Ttl,
}

/// One decided key: a packet in `in_channel` (or from a host port, `None`)
/// with `tag` that leaves on `out_channel` gets `next_tag`; it sits in queue
/// `priority` here and `next_priority` at the next node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Key {
    /// The switch.
    pub node: NodeId,
    /// The channel the packet arrives on (`None`: from a host port).
    pub in_channel: Option<ChannelId>,
    /// The tag it carries.
    pub tag: u32,
    /// The channel it leaves on.
    pub out_channel: ChannelId,
    /// The tag it leaves with.
    pub next_tag: u32,
    /// Its priority here.
    pub priority: u32,
    /// Its priority at the next node.
    pub next_priority: u32,
}

/// Per-priority size of the dependency graph.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PriorityStats {
    /// Channels with a dependency at this priority.
    pub channels: u64,
    /// Dependencies at this priority.
    pub edges: u64,
}

/// The result of the tagging stage.
#[derive(Clone, Debug)]
pub struct Tagging {
    /// The algorithm that ran.
    pub algo: Algo,
    /// The cycle detection backend.
    pub cycle: CycleBackend,
    /// How tags map to queues (DSCP rewrite, or TTL hop counts).
    pub scheme: Scheme,
    /// Lossless priorities used: the largest priority.
    pub priorities: u32,
    /// Decided keys sorted by (node, in channel, tag, out channel).
    pub keys: Vec<Key>,
    /// Every reached packet state `(channel, tag, priority)`, sorted.
    pub states: Vec<(ChannelId, u32, u32)>,
    /// Per priority, the dependency graph's size.
    pub per_priority: Vec<PriorityStats>,
    /// `greedy-ttl` only: keys `(in channel, priority, out channel)` that
    /// would need two different next priorities if the priorities were used
    /// as rewritten DSCP tags, i.e. rules no switch could hold.
    pub dscp_conflicts: Option<u64>,
    /// A proven lower bound on the priorities any deadlock-free plan of this
    /// ELP needs: see [`dependency_lower_bound`], raised by `exact` when its
    /// solver proves fewer priorities impossible.
    pub lower_bound: u32,
    /// Search effort of `search` and `exact` (moves evaluated, or solver
    /// calls), and whether a limit cut it short; see [`Effort`].
    pub effort: Option<Effort>,
}

/// What an optimising algorithm (`search`, `exact`) spent and where it
/// stopped.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Effort {
    /// Local-search moves applied, or SAT solver calls.
    pub steps: u64,
    /// Paths still needing more priorities at the last target that was not
    /// reached (0 when every target down to the lower bound was reached).
    pub residue: u64,
    /// True when a time limit (`search:time=S`, `exact:timeout=S`) or a
    /// stop request ([`control::request_stop`]) ended the work.
    pub stopped_early: bool,
    /// `exact`: paths of the sub-ELP on which the solver proved the last
    /// priority count impossible (0 when it proved nothing). Any plan for
    /// the ELP fits those paths, so the proof holds for the whole ELP.
    pub proof_paths: u64,
}

/// Tags must fit the DSCP field with room for the lossy class.
pub const MAX_TAG: u32 = 63;

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
        Algo::Brute => finish(topo, algo, cycle, tagged_graph(topo, elp, budget)?, budget)?,
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
            finish(topo, algo, cycle, walk, budget)?
        }
        Algo::Greedy { restarts, seed } => {
            let run = |r: u32| -> Result<Tagging> {
                let order = (r > 0).then(|| crate::seed::mix(seed, r as u64));
                let walk = match cycle {
                    CycleBackend::Ordered => greedy::<OrderedDag>(topo, elp, order, budget)?,
                    CycleBackend::Pk => greedy::<PearceKelly>(topo, elp, order, budget)?,
                    CycleBackend::Petgraph => greedy::<PetgraphDag>(topo, elp, order, budget)?,
                    CycleBackend::Naive => greedy::<NaiveDag>(topo, elp, order, budget)?,
                };
                finish(topo, algo, cycle, walk, budget)
            };
            if restarts == 1 {
                run(0)?
            } else {
                use rayon::prelude::*;
                let all: Vec<Tagging> = (0..restarts)
                    .into_par_iter()
                    .map(run)
                    .collect::<Result<_>>()?;
                // Fewest priorities, then fewest rules; ties keep the lowest
                // run, so the choice is independent of thread timing.
                all.into_iter()
                    .enumerate()
                    .min_by_key(|(r, t)| (t.priorities, t.keys.len(), *r))
                    .map(|(_, t)| t)
                    .expect("restarts >= 1")
            }
        }
        Algo::Search {
            budget: work,
            seed,
            time_ms,
            max_paths,
        } => search_plan(
            topo, elp, algo, cycle, budget, work, seed, time_ms, max_paths,
        )?,
        Algo::Exact { timeout_ms } => {
            exact::exact_plan(topo, elp, algo, cycle, budget, Some(timeout_ms))?
        }
        Algo::GreedyTtl => match cycle {
            CycleBackend::Ordered => ttl::greedy_ttl::<OrderedDag>(topo, elp, cycle, budget)?,
            CycleBackend::Pk => ttl::greedy_ttl::<PearceKelly>(topo, elp, cycle, budget)?,
            CycleBackend::Petgraph => ttl::greedy_ttl::<PetgraphDag>(topo, elp, cycle, budget)?,
            CycleBackend::Naive => ttl::greedy_ttl::<NaiveDag>(topo, elp, cycle, budget)?,
        },
    };
    let mut t = t;
    self_check(&t)?;
    t.lower_bound = t.lower_bound.max(dependency_lower_bound(&t.keys));
    Ok(t)
}

/// The lower bound every plan of an ELP obeys, from its transitions alone:
/// 0 without keys, 1 when the single-priority dependency graph (every key
/// keeps its tag, so every transition `(c1, c2)` of the ELP is an edge) is
/// acyclic, 2 when it has a cycle (then one priority cannot be deadlock-free).
///
/// Any plan's keys cover every transition of the ELP, whatever their tags,
/// so the keys of the plan at hand give the graph.
///
/// Complexity: O(K log K) for K keys.
pub fn dependency_lower_bound(keys: &[Key]) -> u32 {
    if keys.is_empty() {
        return 0;
    }
    let edges: Vec<(ChannelId, ChannelId)> = keys
        .iter()
        .filter_map(|k| Some((k.in_channel?, k.out_channel)))
        .collect();
    if has_cycle(edges) { 2 } else { 1 }
}

/// True when the directed graph `edges` has a cycle: its topological order
/// leaves some vertex out.
pub(crate) fn has_cycle(edges: Vec<(ChannelId, ChannelId)>) -> bool {
    let n = edges
        .iter()
        .map(|&(a, b)| a.max(b) as usize + 1)
        .max()
        .unwrap_or(0);
    topological_order(n, edges).len() < n
}

/// Kahn's algorithm over vertices `0..n`: a topological order of `edges`
/// (duplicates allowed), smallest id first among the ready vertices, so the
/// order is deterministic. Vertices on or behind a cycle are left out.
///
/// Complexity: O((n + m) log n) for m edges.
pub(crate) fn topological_order(n: usize, edges: Vec<(ChannelId, ChannelId)>) -> Vec<u32> {
    topological_order_by(n, edges, |_| 0)
}

/// [`topological_order`], taking the ready vertex of smallest `(key, id)`
/// first: with `key` a reference order, the result follows it wherever the
/// edges allow.
pub(crate) fn topological_order_by(
    n: usize,
    mut edges: Vec<(ChannelId, ChannelId)>,
    key: impl Fn(u32) -> u64,
) -> Vec<u32> {
    use std::cmp::Reverse;
    edges.sort_unstable();
    edges.dedup();
    let mut start = vec![0usize; n + 1];
    let mut indeg = vec![0u32; n];
    for &(a, b) in &edges {
        start[a as usize + 1] += 1;
        indeg[b as usize] += 1;
    }
    for i in 0..n {
        start[i + 1] += start[i];
    }
    let mut ready: std::collections::BinaryHeap<Reverse<(u64, u32)>> = (0..n as u32)
        .filter(|&v| indeg[v as usize] == 0)
        .map(|v| Reverse((key(v), v)))
        .collect();
    let mut order = Vec::with_capacity(n);
    while let Some(Reverse((_, v))) = ready.pop() {
        order.push(v);
        for &(_, w) in &edges[start[v as usize]..start[v as usize + 1]] {
            indeg[w as usize] -= 1;
            if indeg[w as usize] == 0 {
                ready.push(Reverse((key(w), w)));
            }
        }
    }
    order
}

/// `search`: see [`Algo::Search`].
#[allow(clippy::too_many_arguments)]
fn search_plan(
    topo: &Topology,
    elp: &ElpSet,
    algo: Algo,
    cycle: CycleBackend,
    budget: &Budget,
    work: u64,
    seed: u64,
    time_ms: Option<u64>,
    max_paths: u64,
) -> Result<Tagging> {
    let deadline =
        time_ms.map(|ms| std::time::Instant::now() + std::time::Duration::from_millis(ms));
    let greedy = tag_within(topo, elp, Algo::GREEDY, cycle, budget)?;
    let lb = greedy.lower_bound;
    let levels = (greedy.priorities as usize).max(1);
    let mut plans = vec![order::OrderPlan::from_keys(
        topo.channel_count(),
        &greedy.keys,
        greedy.priorities,
    )];
    for (_, rank) in order::rankings(topo) {
        plans.push(order::OrderPlan::mountain(topo, &rank, levels));
        plans.push(order::OrderPlan::alternating(topo, &rank, levels));
    }
    // Compressed rules plus ingress maps, the tie-breaker at equal
    // priorities.
    let rules_of = |t: &Tagging| -> u64 {
        crate::rules::RuleSet::from_tagging(topo, t)
            .counts(topo.node_count())
            .iter()
            .map(|c| c.acl_compressed + c.queue_rules)
            .sum()
    };
    // The orders with the fewest priorities seed the local search; the
    // plan kept is the best by (priorities, compressed rules), greedy's own
    // first so that ties keep it.
    let mut seed_orders = (u32::MAX, plans[0].clone());
    let mut best = (greedy.priorities, rules_of(&greedy), greedy);
    let consider = |plan: &order::OrderPlan,
                    best: &mut (u32, u64, Tagging),
                    seed_orders: &mut (u32, order::OrderPlan)|
     -> Result<()> {
        let t = finish(topo, algo, cycle, plan.walk(topo, elp, budget)?, budget)?;
        if t.priorities < seed_orders.0 {
            *seed_orders = (t.priorities, plan.truncated(t.priorities as usize));
        }
        if t.priorities <= best.0 && t.priorities <= MAX_TAG {
            let r = rules_of(&t);
            if (t.priorities, r) < (best.0, best.1) {
                *best = (t.priorities, r, t);
            }
        }
        Ok(())
    };
    for plan in &plans {
        consider(plan, &mut best, &mut seed_orders)?;
    }
    let mut effort = Effort::default();
    // The local search holds the maximal ELPs as channel sequences; past
    // max_paths ELPs it is not started (the count is known beforehand).
    let counts = elp.counts(topo);
    if best.0 > lb && work > 0 && counts.paths <= max_paths as u128 {
        // Channels, occurrences and cached tags: about 16 bytes per channel
        // of every path.
        budget.check(
            "tagging",
            (counts.paths as u64).saturating_mul(16 * (counts.longest as u64 + 1)),
        )?;
        let paths = crate::elp::enumerate::maximal_channel_paths(topo, elp, max_paths)?;
        // A path of L links carries at most L tags: it can never pass a
        // target of L or more.
        let floor = lb.max(1) as usize;
        let paths = paths.retain(|p| p.len() > floor);
        let mut left = work;
        let mut target = best.0 - 1;
        while target >= lb.max(1) && left > 0 {
            // Greedy's orders (or the last target's) start it: measured
            // against starting from the plan with the fewest violated
            // paths (the alternating plans), they left 4 paths instead
            // of 100 on Jellyfish 300/64 seed 1 and reached 2 on seed 2
            // where the other stalled at 69.
            let start = seed_orders.1.truncated(target as usize);
            let mut ls = search::LocalSearch::new(
                &paths,
                topo.channel_count(),
                &start.pos,
                target,
                crate::seed::mix(seed, target as u64),
            );
            let out = ls.run(left, deadline, |steps, violated| {
                control::report(control::Progress {
                    target,
                    steps,
                    violated: violated as u64,
                })
            });
            effort.steps += out.steps;
            left = left.saturating_sub(out.work);
            if !out.reached {
                effort.residue = out.residue;
                effort.stopped_early = out.timed_out;
                break;
            }
            let plan = order::OrderPlan { pos: ls.pos };
            consider(&plan, &mut best, &mut seed_orders)?;
            if best.0 > target {
                // Every maximal ELP fits the target, so the walk over
                // the whole ELP must agree; anything else is a bug.
                return Err(Error::SelfCheck {
                    stage: "tagging",
                    reason: format!(
                        "search: orders that fit every maximal path in {target} priorities need {} on the ELP",
                        best.0
                    ),
                });
            }
            target = best.0 - 1;
        }
    }
    let mut t = best.2;
    t.algo = algo;
    t.lower_bound = lb;
    t.effort = Some(effort);
    Ok(t)
}

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

/// Greedy: keep the tag when the edge `(c1, t) -> (c2, t)` leaves priority
/// `t`'s dependency graph acyclic, else move to `t + 1`. `order` shuffles the
/// keys within each hop (restarts).
fn greedy<D: IncrementalDag>(
    topo: &Topology,
    elp: &ElpSet,
    order: Option<u64>,
    budget: &Budget,
) -> Result<Walk> {
    let mut g = GreedyDecider::<D> {
        n: topo.channel_count(),
        rank: clos_rank(topo),
        dags: Vec::new(),
    };
    engine::walk(topo, elp, order, Decider::InOrder(&mut g), budget)
}

/// On a topology with levels, the order up-down routing respects: up
/// channels by rising level, then down channels by falling level. Every
/// valley-free dependency points forward in it, so seeding each priority's
/// graph with it leaves only the bounces to reorder (on `fattree:k=32`
/// `kbounce:2`, searched insertions fell from 312k to 60k). `None` elsewhere.
fn clos_rank(topo: &Topology) -> Option<Vec<u32>> {
    if !topo.has_levels() {
        return None;
    }
    let level = |v: NodeId| topo.level(v).unwrap_or(0);
    Some(
        (0..topo.channel_count() as ChannelId)
            .map(|c| {
                let (from, to) = (level(topo.channel_src(c)), level(topo.channel_dst(c)));
                if to > from { from } else { u32::MAX - from }
            })
            .collect(),
    )
}

/// One dependency graph per priority. A key at tag `t` reads and writes only
/// graph `t`, so a hop's keys are decided per priority in parallel, each
/// priority seeing its keys in the hop's order: the same decisions as one
/// thread taking the keys in order.
struct GreedyDecider<D> {
    n: usize,
    rank: Option<Vec<u32>>,
    dags: Vec<D>,
}

impl<D: IncrementalDag> HopDecider for GreedyDecider<D> {
    fn heap_bytes(&self) -> u64 {
        self.dags.iter().map(D::heap_bytes).sum::<u64>()
            + self
                .rank
                .as_ref()
                .map_or(0, |r| crate::budget::bytes_of::<u32>(r.len()))
    }

    fn decide_hop(&mut self, keys: &[(ChannelId, u32, ChannelId)]) -> Result<Vec<u32>> {
        use rayon::prelude::*;
        let top = keys.iter().map(|k| k.1).max().unwrap_or(0) as usize;
        while self.dags.len() < top {
            let mut dag = D::with_vertices(self.n);
            if let Some(rank) = &self.rank {
                dag.hint_order(rank);
            }
            self.dags.push(dag);
        }
        let mut by_tag: Vec<Vec<usize>> = vec![Vec::new(); top];
        for (i, k) in keys.iter().enumerate() {
            by_tag[k.1 as usize - 1].push(i);
        }
        let decided: Vec<Vec<(usize, u32)>> = self.dags[..top]
            .par_iter_mut()
            .zip(by_tag.par_iter())
            .map(|(dag, idx)| {
                idx.iter()
                    .map(|&i| {
                        let (c1, t, c2) = keys[i];
                        (i, if dag.try_add_edge(c1, c2) { t } else { t + 1 })
                    })
                    .collect()
            })
            .collect();
        let mut out = vec![0; keys.len()];
        for (i, t2) in decided.into_iter().flatten() {
            out[i] = t2;
        }
        Ok(out)
    }
}

/// The incremental cycle-detection workload of a greedy run: every
/// `(priority, from, to)` insertion in the order greedy asks it, for replaying
/// into other backends (benches). Decisions are the same for every backend.
///
/// # Errors
/// As [`tag`].
pub fn greedy_insertions(topo: &Topology, elp: &ElpSet) -> Result<Vec<(u32, u32, u32)>> {
    let n = topo.channel_count();
    let mut dags: Vec<OrderedDag> = Vec::new();
    let mut seq = Vec::new();
    let mut record = PerKey(|c1, t, c2| {
        while dags.len() < t as usize {
            dags.push(OrderedDag::with_vertices(n));
        }
        seq.push((t, c1, c2));
        Ok(if dags[t as usize - 1].try_add_edge(c1, c2) {
            t
        } else {
            t + 1
        })
    });
    engine::walk(
        topo,
        elp,
        None,
        Decider::InOrder(&mut record),
        &Budget::unlimited(),
    )?;
    Ok(seq)
}

/// Builds the result of a DSCP-scheme walk: the priority is the tag.
fn finish(
    topo: &Topology,
    algo: Algo,
    cycle: CycleBackend,
    walk: Walk,
    budget: &Budget,
) -> Result<Tagging> {
    build(
        topo,
        algo,
        cycle,
        Scheme::Dscp,
        walk,
        |_, t| t,
        None,
        budget,
    )
}

/// Builds a [`Tagging`] from a walk and the priority of each state. A
/// packet from a host port starts in queue 1 under every scheme (it carries
/// the initial tag 1, which [`self_check`] enforces).
///
/// # Errors
/// [`Error::MemoryBudget`] when the keys and states, beside the walk that
/// still holds them, would not fit: checked before they are built, since on
/// a large Clos they are most of the run's memory.
#[allow(clippy::too_many_arguments)]
fn build(
    topo: &Topology,
    algo: Algo,
    cycle: CycleBackend,
    scheme: Scheme,
    walk: Walk,
    prio: impl Fn(ChannelId, u32) -> u32,
    dscp_conflicts: Option<u64>,
    budget: &Budget,
) -> Result<Tagging> {
    use crate::budget::bytes_of;
    use rayon::slice::ParallelSliceMut;
    let (n_keys, n_states) = (walk.key_count(), walk.states.len());
    // Keys and states, and the channel list below.
    budget.check(
        "tagging",
        walk.heap_bytes()
            + bytes_of::<Key>(n_keys)
            + bytes_of::<(ChannelId, u32, u32)>(n_states)
            + bytes_of::<(u32, ChannelId)>(n_states),
    )?;
    let mut keys: Vec<Key> = Vec::with_capacity(n_keys);
    keys.extend(walk.keys(topo).map(|((c1, t, c2), t2)| {
        let in_channel = (c1 != engine::HOST).then_some(c1);
        Key {
            node: topo.channel_src(c2),
            in_channel,
            tag: t,
            out_channel: c2,
            next_tag: t2,
            priority: in_channel.map_or(1, |c1| prio(c1, t)),
            next_priority: prio(c2, t2),
        }
    }));
    keys.par_sort_unstable();
    let mut states: Vec<(ChannelId, u32, u32)> = walk
        .states
        .into_iter()
        .map(|(c, t)| (c, t, prio(c, t)))
        .collect();
    states.par_sort_unstable();
    let priorities = states.iter().map(|s| s.2).max().unwrap_or(0);
    let per = priority_stats(&keys, &states, priorities);
    Ok(Tagging {
        algo,
        cycle,
        scheme,
        priorities,
        keys,
        states,
        per_priority: per,
        dscp_conflicts,
        lower_bound: 0,
        effort: None,
    })
}

/// Per priority: the channels packets occupy at it and its same-priority
/// dependencies `(in channel, out channel)`, from sorted keys and states.
pub(crate) fn priority_stats(
    keys: &[Key],
    states: &[(ChannelId, u32, u32)],
    priorities: u32,
) -> Vec<PriorityStats> {
    let mut per = vec![PriorityStats::default(); priorities as usize];
    let mut chans: Vec<(u32, ChannelId)> = states.iter().map(|s| (s.2, s.0)).collect();
    chans.sort_unstable();
    chans.dedup();
    for (p, _) in chans {
        per[p as usize - 1].channels += 1;
    }
    // Same-priority dependencies, deduplicated per node (keys are sorted by
    // node first): one list over all keys was as large as the keys.
    let mut same: Vec<(u32, ChannelId, ChannelId)> = Vec::new();
    for group in keys.chunk_by(|a, b| a.node == b.node) {
        same.clear();
        same.extend(group.iter().filter_map(|k| {
            (k.priority == k.next_priority).then_some((k.priority, k.in_channel?, k.out_channel))
        }));
        same.sort_unstable();
        same.dedup();
        for &(p, _, _) in &same {
            per[p as usize - 1].edges += 1;
        }
    }
    per
}

impl Tagging {
    /// Heap bytes held by the keys and states (for memory budgets).
    pub fn heap_bytes(&self) -> u64 {
        crate::budget::bytes_of::<Key>(self.keys.len())
            + crate::budget::bytes_of::<(u32, u32, u32)>(self.states.len())
    }
}

/// Checks what the stage promises: tags and priorities start at 1 and never
/// decrease, priorities fit the DSCP field, every key has one decision, and
/// each priority's same-priority dependencies are acyclic (a guard against a
/// faulty cycle-detection backend; the independent verifier checks the rules
/// again with its own code).
fn self_check(t: &Tagging) -> Result<()> {
    let fail = |reason: String| {
        Err(Error::SelfCheck {
            stage: "tagging",
            reason,
        })
    };
    for k in &t.keys {
        if k.next_tag < k.tag || k.tag == 0 || k.next_priority < k.priority || k.priority == 0 {
            return fail(format!("key {k:?} lowers the tag or priority"));
        }
        if k.in_channel.is_none() && k.tag != 1 {
            return fail(format!("first-hop key {k:?} does not start at tag 1"));
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
                "needs {} priorities, more than the {MAX_TAG} a DSCP field leaves",
                t.priorities
            ),
        });
    }
    if let Some(p) = cyclic_priority(&t.keys) {
        return fail(format!("priority {p}'s dependency graph has a cycle"));
    }
    Ok(())
}

/// The first priority whose same-priority edges `(in channel, out channel)`
/// contain a cycle.
fn cyclic_priority(keys: &[Key]) -> Option<u32> {
    same_priority_edges(keys)
        .into_iter()
        .zip(1..)
        .find_map(|(edges, p)| has_cycle(edges).then_some(p))
}

/// Per priority `p` (at index `p - 1`, up to the largest present), the
/// dependencies `(in channel, out channel)` of keys that keep it.
pub(crate) fn same_priority_edges(keys: &[Key]) -> Vec<Vec<(ChannelId, ChannelId)>> {
    let mut by_prio: Vec<Vec<(ChannelId, ChannelId)>> = Vec::new();
    for k in keys {
        if let Some(c1) = k.in_channel
            && k.priority == k.next_priority
        {
            let p = k.priority as usize;
            if by_prio.len() < p {
                by_prio.resize_with(p, Vec::new);
            }
            by_prio[p - 1].push((c1, k.out_channel));
        }
    }
    by_prio
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
