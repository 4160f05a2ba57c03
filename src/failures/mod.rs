//! Failure what-if: what link and switch failures do to traffic, with and
//! without the installed Tagger rules, and what a plan that anticipates
//! them costs.
//!
//! The model (see `docs/model.md`, "Failure what-if"):
//!
//! - A trial takes F links (or switches, with their links) down
//!   ([`FailureSpec`]). Traffic is routed on shortest paths, as ECMP
//!   fabrics route it: before the failure on the healthy network's, after
//!   it by one of two [`Routing`] models: `converged` (all shortest paths
//!   of the degraded network) or `local` (each packet follows its healthy
//!   path to the failed link, is deflected there to the neighbours other
//!   than the one it came from that are nearest its destination, then
//!   takes the degraded shortest paths).
//! - The installed rules are the healthy plan's and do not change. At each
//!   hop a lossless packet either matches an entry (and is rewritten as
//!   planned) or goes lossy for the rest of its route, creating no
//!   dependency.
//! - Per trial: whether plain PFC (one lossless priority on every route)
//!   has a cyclic buffer dependency and its shortest cycle; the share of
//!   routes and of connected endpoint pairs that stay lossless under the
//!   rules; the hops where packets fall back to lossy; a proof that the
//!   entries traffic used stay acyclic ([`crate::verify::check_used`]);
//!   and the priorities a fresh plan for the trial's converged routes
//!   needs, verified.
//! - Per scenario: the priorities of a failure-aware plan, whose ELP is
//!   the plan's own plus every trial's converged routes, verified.
//!
//! Routes are never listed: [`replay`] counts them per destination over
//! shortest-path DAGs.

pub mod cbd;
pub mod replay;
pub mod spec;

pub use spec::{FailureSpec, Routing, Trial};

use crate::budget::Budget;
use crate::cycle::CycleBackend;
use crate::elp::{ElpSet, ElpSpec, FamilySpec, Shortest};
use crate::error::{Error, Result};
use crate::output::record::record;
use crate::rules::RuleSet;
use crate::tagging::{self, Algo};
use serde::Serialize;
use tagger_generators::Topology;

record! {
    /// One trial of a failure what-if (a row of `failures.parquet`).
    #[derive(Clone, Debug, Serialize, PartialEq)]
    pub struct TrialRow [prefix = ""] {
        /// Trial number, from 0.
        pub trial: u32,
        /// Routing after the failure: converged or local.
        pub routing: String,
        /// Links that failed (besides those of failed switches).
        pub failed_links: u32,
        /// Switches that failed.
        pub failed_switches: u32,
        /// What failed: links as `u-v` node pairs, switches as `sN`.
        pub failed: String,
        /// Ordered endpoint pairs left without any route.
        pub pairs_disconnected: u64,
        /// Routes (link sequences) over all connected pairs after the
        /// failure.
        pub paths: u64,
        /// Whether plain PFC (one lossless priority on every route) has a
        /// cyclic buffer dependency.
        pub cbd_without_tagger: bool,
        /// Channels in the shortest such cycle found (null: none).
        pub cbd_cycle_len: Option<u32>,
        /// Share of routes that stay lossless end to end under the
        /// installed rules (null: no route).
        pub lossless_paths_fraction: Option<f64>,
        /// Share of connected endpoint pairs all of whose routes stay
        /// lossless (null: no connected pair).
        pub lossless_pairs_fraction: Option<f64>,
        /// Distinct hops (in port, out port) where lossless packets find no
        /// rule and continue lossy.
        pub fallback_hops: u64,
        /// Same-priority dependencies the traffic's lossless hops create.
        pub dependencies_used: u64,
        /// Lossless priorities a fresh plan for this trial's converged
        /// routes needs (null: not replanned).
        pub replanned_priorities: Option<u32>,
        /// The installed rules stay deadlock-free under this trial's routes
        /// (the dependencies used are acyclic), and the replanned plan, if
        /// any, passed verification.
        pub verified: bool,
    }
}

record! {
    /// A failure what-if's aggregates over its trials (`failures_*`
    /// columns of `runs.parquet`; null when the scenario ran none).
    #[derive(Clone, Debug, Serialize, PartialEq)]
    pub struct FailureFigures [prefix = "failures_"] {
        /// The failure spec, e.g. links:4,trials=50,seed=1.
        pub spec: String,
        /// Routing after the failures: converged or local.
        pub routing: String,
        /// Trials run.
        pub trials: u32,
        /// Share of trials in which plain PFC has a cyclic buffer
        /// dependency.
        pub cbd_rate: f64,
        /// Median over trials of the lossless share of routes under the
        /// installed rules.
        pub lossless_paths_median: Option<f64>,
        /// Smallest lossless share of routes over the trials.
        pub lossless_paths_min: Option<f64>,
        /// Median over trials of the lossless share of connected pairs.
        pub lossless_pairs_median: Option<f64>,
        /// Smallest lossless share of connected pairs over the trials.
        pub lossless_pairs_min: Option<f64>,
        /// Most priorities a fresh plan for one trial's converged routes
        /// needed.
        pub replanned_priorities_max: Option<u32>,
        /// Priorities of the failure-aware plan: one plan for the plan's
        /// ELP plus every trial's converged routes (null: not computed).
        pub aware_priorities: Option<u32>,
        /// Every trial verified (and the failure-aware plan, if computed).
        pub verified: bool,
    }
}

/// What a failure what-if computes besides the trials' counts.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// Replan every trial's converged routes.
    pub replan: bool,
    /// Plan once for the ELP plus every trial's converged routes.
    pub aware: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            replan: true,
            aware: true,
        }
    }
}

/// The healthy plan a what-if starts from.
#[derive(Debug)]
pub struct Plan<'a> {
    /// The healthy topology.
    pub topo: &'a Topology,
    /// The ELP the rules were planned for.
    pub elp: &'a ElpSpec,
    /// The installed rules (already verified).
    pub rules: &'a RuleSet,
    /// How replanned and failure-aware plans are made.
    pub algo: Algo,
    /// Incremental cycle detection backend of the replanned and failure-aware plans.
    pub cycle: CycleBackend,
}

/// The installed plan as a what-if's outputs name it: planned by the run
/// (its summary), or a rules file given as installed.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Installed {
    /// The topology's name.
    pub topology: String,
    /// The ELP spec the plan is judged with.
    pub elp: String,
    /// The algorithm that planned it (`installed: ALGO` for a rules file).
    pub algo: String,
    /// Lossless priorities of the plan.
    pub priorities: u32,
    /// A proven lower bound on the priorities the ELP needs.
    pub priorities_lower_bound: u32,
    /// The rules file, when the plan was given as one.
    pub rules: Option<String>,
}

impl Installed {
    /// The plan a run made.
    pub fn of(s: &crate::pipeline::Summary) -> Self {
        Installed {
            topology: s.topology.clone(),
            elp: s.elp.clone(),
            algo: s.algo.clone(),
            priorities: s.figures.priorities,
            priorities_lower_bound: s.figures.priorities_lower_bound,
            rules: None,
        }
    }

    /// A rule set given as installed, after it verifies on `topo` with
    /// `elp` replayed (the lower bound is what its own dependencies prove).
    ///
    /// # Errors
    /// [`Error::Verification`] when it does not verify, [`Error::RulesFile`]
    /// when it holds several application classes (the what-if replays
    /// hosts sending one tag);
    /// the rules' own errors (an entry off the topology).
    pub fn of_rules(
        topo: &Topology,
        rules: &RuleSet,
        elp: &ElpSet,
        path: &std::path::Path,
    ) -> Result<Self> {
        if rules.classes.len() > 1 {
            return Err(Error::RulesFile {
                path: path.to_path_buf(),
                location: "classes".into(),
                reason: format!(
                    "{} application classes (host tags {:?}); the failure what-if replays one class's hosts: give the rules of one class (`run --classes 1`)",
                    rules.classes.len(),
                    rules.classes
                ),
            });
        }
        let report = crate::verify::verify_within(topo, rules, Some(elp), &Default::default());
        if !report.ok() {
            return Err(Error::Verification {
                what: format!(
                    "the installed rules {} on {} with ELP {}",
                    path.display(),
                    topo.name(),
                    elp.spec
                ),
                report: Box::new(report),
            });
        }
        let keys = rules.keys(topo)?;
        Ok(Installed {
            topology: topo.name().to_string(),
            elp: elp.spec.clone(),
            algo: format!("installed: {}", rules.algo),
            priorities: rules.priorities,
            priorities_lower_bound: crate::tagging::dependency_lower_bound(&keys),
            rules: Some(path.display().to_string()),
        })
    }
}

/// One routing model's result.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// The aggregates over the trials (the `failures_*` columns).
    pub figures: FailureFigures,
    /// One row per trial.
    pub trials: Vec<TrialRow>,
}

/// Runs `spec`'s trials under each routing model in `routings`.
///
/// Arguments: the healthy `plan`; the failures; the routing models (each
/// gets a [`Report`]); what to plan besides; a memory budget.
///
/// ```
/// use tagger::budget::Budget;
/// use tagger::elp::{ElpSet, ElpSpec};
/// use tagger::failures::{FailureSpec, Options, Plan, Routing, what_if};
/// let t = tagger::TopologySpec::parse("fattree:k=4")?.build()?;
/// let spec = ElpSpec::parse("kbounce:1")?;
/// let elp = ElpSet::build(&t, &spec)?;
/// let algo = "clos".parse()?;
/// let tagging = tagger::tagging::tag(&t, &elp, algo, Default::default())?;
/// let rules = tagger::rules::RuleSet::from_tagging(&t, &tagging);
/// let plan = Plan { topo: &t, elp: &spec, rules: &rules, algo, cycle: Default::default() };
/// let fail = FailureSpec::parse("links:1,trials=5,seed=1")?;
/// let reports = what_if(&plan, &fail, &[Routing::Converged], Options::default(), &Budget::unlimited())?;
/// let r = &reports[0];
/// assert_eq!(r.trials.len(), 5);
/// // One failed link: a bounce plan keeps every route that still exists lossless.
/// assert!(r.trials.iter().all(|x| x.verified && x.lossless_paths_fraction == Some(1.0)));
/// # Ok::<(), tagger::Error>(())
/// ```
///
/// # Errors
/// [`Error::FailureSpec`] for a spec the topology cannot take;
/// [`Error::ElpSpec`] when the plan does not keep every healthy shortest
/// route lossless (the model routes traffic on shortest paths, so such a
/// plan fails before any failure); a replanned or failure-aware plan's
/// tagging error, or [`Error::Verification`] if one does not verify.
pub fn what_if(
    plan: &Plan,
    spec: &FailureSpec,
    routings: &[Routing],
    opts: Options,
    budget: &Budget,
) -> Result<Vec<Report>> {
    what_if_with_progress(plan, spec, routings, opts, budget, &|_, _| {})
}

/// [`what_if`], calling `progress(done, total)` after each step (a
/// trial's replanning, the failure-aware plan, a trial under one routing
/// model).
///
/// # Errors
/// As [`what_if`].
pub fn what_if_with_progress(
    plan: &Plan,
    spec: &FailureSpec,
    routings: &[Routing],
    opts: Options,
    budget: &Budget,
    progress: &dyn Fn(u64, u64),
) -> Result<Vec<Report>> {
    let topo = plan.topo;
    let steps = spec.trials() as u64 * (routings.len() as u64 + u64::from(opts.replan))
        + u64::from(opts.aware);
    let done = std::cell::Cell::new(0u64);
    let tick = || {
        done.set(done.get() + 1);
        progress(done.get(), steps);
    };
    let trials = spec.draw(topo)?;
    let compiled = replay::Compiled::new(topo, plan.rules);
    budget.check("failures", estimate_bytes(topo, plan.rules, &compiled))?;
    // Before any failure every route must be lossless: the plan must cover
    // the shortest paths traffic takes.
    let none = vec![false; topo.link_count()];
    let healthy = replay::analyze(
        topo,
        &compiled,
        &none,
        &vec![false; topo.node_count()],
        Routing::Converged,
    );
    if healthy.lossless_paths < healthy.paths {
        return Err(Error::ElpSpec {
            spec: plan.elp.text.clone(),
            reason: format!(
                "the failure what-if routes traffic on shortest paths, and this plan keeps {} of the healthy network's {} shortest routes lossless; plan an ELP that contains them (shortest, or kbounce:K on a Clos network)",
                healthy.lossless_paths, healthy.paths
            ),
        });
    }
    // Per trial, the links (a failed switch's included) and nodes down.
    let down: Vec<(Vec<bool>, Vec<bool>)> = trials
        .iter()
        .map(|t| (t.dead_links(topo), t.dead_nodes(topo)))
        .collect();
    let mut replanned: Vec<Option<(u32, bool)>> = vec![None; trials.len()];
    if opts.replan {
        for (i, (dead_links, _)) in down.iter().enumerate() {
            let elp = converged_elp(topo, dead_links, &format!("trial {i}"));
            replanned[i] = Some(plan_verified(topo, &elp, plan.algo, plan.cycle, budget)?);
            tick();
        }
    }
    let aware = if opts.aware {
        let links: Vec<&[bool]> = down.iter().map(|d| d.0.as_slice()).collect();
        let a = aware_plan(plan, &links, budget)?;
        tick();
        Some(a)
    } else {
        None
    };
    let mut out = Vec::new();
    for &routing in routings {
        let mut rows = Vec::with_capacity(trials.len());
        for (i, (tr, (dead_links, dead_nodes))) in trials.iter().zip(&down).enumerate() {
            let o = replay::analyze(topo, &compiled, dead_links, dead_nodes, routing);
            rows.push(row(
                plan,
                &compiled,
                i as u32,
                tr,
                routing,
                &o,
                replanned[i],
            ));
            tick();
        }
        let figures = aggregate(spec, routing, &rows, aware);
        out.push(Report {
            figures,
            trials: rows,
        });
    }
    Ok(out)
}

/// Writes every report's trials to one Parquet file ([`TrialRow`]
/// columns), with the plan (topology, ELP, algorithm, priorities) and the
/// failure spec in the file's metadata.
///
/// # Errors
/// [`Error::Parquet`] or [`Error::Io`] naming the path.
#[cfg(feature = "tables")]
pub fn write_trials(path: &std::path::Path, reports: &[Report], plan: &Installed) -> Result<()> {
    let mut table = crate::output::parquet::Table::with_columns(TrialRow::COLUMNS);
    for r in reports {
        for row in &r.trials {
            TrialRow::push_row(Some(row), &mut table);
        }
    }
    table.write(
        path,
        &[
            ("tagger.topology", plan.topology.clone()),
            ("tagger.elp", plan.elp.clone()),
            ("tagger.algo", plan.algo.clone()),
            ("tagger.priorities", plan.priorities.to_string()),
            (
                "tagger.failures",
                reports
                    .first()
                    .map_or(String::new(), |r| r.figures.spec.clone()),
            ),
            ("tagger.version", env!("CARGO_PKG_VERSION").to_string()),
        ],
    )
}

/// Bytes a what-if works with beyond the plan: per worker thread, counts
/// and marks per packet state and per position, and the hop and entry
/// bitsets.
pub fn estimate_bytes(topo: &Topology, rules: &RuleSet, compiled: &replay::Compiled) -> u64 {
    let states = 2 * rules.entries.len() as u64 + topo.endpoints().len() as u64;
    let positions = (topo.channel_count() + topo.node_count()) as u64;
    let per_thread = states * 18 + positions * 12 + 3 * compiled.transitions() / 8;
    per_thread * rayon::current_num_threads() as u64
}

fn row(
    plan: &Plan,
    compiled: &replay::Compiled,
    trial: u32,
    tr: &Trial,
    routing: Routing,
    o: &replay::Outcome,
    replanned: Option<(u32, bool)>,
) -> TrialRow {
    let topo = plan.topo;
    let ones = |b: &[u64]| b.iter().map(|w| w.count_ones() as u64).sum::<u64>();
    let mut edges = Vec::new();
    for (wi, &word) in o.used.iter().enumerate() {
        let mut m = word;
        while m != 0 {
            let b = m.trailing_zeros() as u64;
            m &= m - 1;
            if let Some(e) = compiled.channels_of(topo, wi as u64 * 64 + b) {
                edges.push(e);
            }
        }
    }
    let cycle = cbd::shortest_cycle(topo.channel_count(), &edges);
    let check = crate::verify::check_used(topo, plan.rules, |i| {
        o.entries
            .get(i / 64)
            .is_some_and(|w| w >> (i % 64) & 1 == 1)
    });
    let connected = o.pairs - o.pairs_disconnected;
    let mut failed: Vec<String> = tr
        .links
        .iter()
        .map(|&l| {
            let [a, b] = topo.links()[l as usize];
            format!("{a}-{b}")
        })
        .collect();
    failed.extend(tr.switches.iter().map(|v| format!("s{v}")));
    TrialRow {
        trial,
        routing: routing.name().to_string(),
        failed_links: tr.links.len() as u32,
        failed_switches: tr.switches.len() as u32,
        failed: failed.join(" "),
        pairs_disconnected: o.pairs_disconnected,
        paths: u64::try_from(o.paths).unwrap_or(u64::MAX),
        cbd_without_tagger: cycle.is_some(),
        cbd_cycle_len: cycle,
        lossless_paths_fraction: (o.paths > 0).then(|| o.lossless_paths as f64 / o.paths as f64),
        lossless_pairs_fraction: (connected > 0)
            .then(|| o.pairs_lossless as f64 / connected as f64),
        fallback_hops: ones(&o.fallback),
        dependencies_used: *check.as_ref().unwrap_or(&0),
        replanned_priorities: replanned.map(|r| r.0),
        verified: check.is_ok() && replanned.is_none_or(|r| r.1),
    }
}

/// A share as a percentage with two decimals, never rounded up to 100
/// when it is less (a lossless share of 99.996% is not "100.00").
pub fn percent(share: f64) -> String {
    let p = (share * 10_000.0).floor() / 100.0;
    format!("{p:.2}")
}

fn median(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    Some(if v.len() % 2 == 1 {
        v[m]
    } else {
        (v[m - 1] + v[m]) / 2.0
    })
}

fn aggregate(
    spec: &FailureSpec,
    routing: Routing,
    rows: &[TrialRow],
    aware: Option<(u32, bool)>,
) -> FailureFigures {
    let paths: Vec<f64> = rows
        .iter()
        .filter_map(|r| r.lossless_paths_fraction)
        .collect();
    let pairs: Vec<f64> = rows
        .iter()
        .filter_map(|r| r.lossless_pairs_fraction)
        .collect();
    let min = |v: &[f64]| v.iter().copied().reduce(f64::min);
    FailureFigures {
        spec: spec.text(),
        routing: routing.name().to_string(),
        trials: rows.len() as u32,
        cbd_rate: rows.iter().filter(|r| r.cbd_without_tagger).count() as f64
            / rows.len().max(1) as f64,
        lossless_paths_median: median(paths.clone()),
        lossless_paths_min: min(&paths),
        lossless_pairs_median: median(pairs.clone()),
        lossless_pairs_min: min(&pairs),
        replanned_priorities_max: rows.iter().filter_map(|r| r.replanned_priorities).max(),
        aware_priorities: aware.map(|a| a.0),
        verified: rows.iter().all(|r| r.verified) && aware.is_none_or(|a| a.1),
    }
}

/// The converged routes after `dead` links fail: the degraded network's
/// shortest paths, on the healthy network's channel ids.
pub fn converged_elp(topo: &Topology, dead: &[bool], what: &str) -> ElpSet {
    ElpSet {
        spec: format!("shortest ({what})"),
        endpoints: topo.endpoints().len(),
        shortest: Some(Shortest::build_masked(topo, dead)),
        kbounce: None,
        dor: None,
        explicit: None,
        parallel: crate::elp::Parallel::of(topo),
        warnings: Vec::new(),
    }
}

/// The failure-aware plan: the plan's ELP plus every distinct trial's
/// converged routes (one block of sources per failure set).
fn aware_plan(plan: &Plan, trials: &[&[bool]], budget: &Budget) -> Result<(u32, bool)> {
    let topo = plan.topo;
    let mut sets: Vec<&[bool]> = trials.to_vec();
    sets.sort();
    sets.dedup();
    let mut elp = crate::pipeline::build_elp(topo, plan.elp, budget)?;
    let mut parts = Vec::with_capacity(sets.len() + 1);
    if plan
        .elp
        .families
        .iter()
        .any(|f| matches!(f, FamilySpec::Shortest))
    {
        parts.push(Shortest::build_masked(
            topo,
            &vec![false; topo.link_count()],
        ));
    }
    let words = topo.endpoints().len().div_ceil(64) as u64;
    budget.check(
        "failures",
        8 * words * (sets.len() + parts.len()) as u64 * topo.node_count() as u64 * 8,
    )?;
    for d in &sets {
        parts.push(Shortest::build_masked(topo, d));
    }
    elp.shortest = Some(Shortest::union(parts));
    elp.spec = format!(
        "{} + converged routes of {} trials",
        plan.elp.text,
        trials.len()
    );
    plan_verified(topo, &elp, plan.algo, plan.cycle, budget)
}

/// Plans `elp` with `algo` and verifies the rules (replaying the ELP):
/// (priorities, verified). `clos` without a bounce cap takes the smallest
/// one the routes need.
fn plan_verified(
    topo: &Topology,
    elp: &ElpSet,
    algo: Algo,
    cycle: CycleBackend,
    budget: &Budget,
) -> Result<(u32, bool)> {
    let control = tagging::Control::new();
    let cx = tagging::Context::new(topo, elp, budget, &control).with_cycle(cycle);
    let t = match algo {
        Algo::Clos { k: None } => {
            let mut k = elp.kbounce.as_ref().map_or(0, |kb| kb.k);
            loop {
                match tagging::tag_in(&cx, Algo::Clos { k: Some(k) }) {
                    Ok(t) => break t,
                    Err(Error::Algo { .. }) if k < crate::elp::MAX_BOUNCES => k += 1,
                    Err(e) => return Err(e),
                }
            }
        }
        a => tagging::tag_in(&cx, a)?,
    };
    let rules = RuleSet::from_tagging(topo, &t);
    let report = crate::verify::verify(topo, &rules, Some(elp));
    if !report.ok() {
        return Err(Error::Verification {
            what: elp.spec.clone(),
            report: Box::new(report),
        });
    }
    Ok((t.priorities, true))
}

#[cfg(test)]
mod tests;
