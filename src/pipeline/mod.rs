//! The whole pipeline for one scenario: topology -> ELP -> tagging -> rules
//! -> verification -> statistics, with a wall-clock time per stage.

mod elp_report;

pub use elp_report::{ElpReport, ElpSeconds, elp_report};

use crate::budget::{Budget, bytes_of};
use crate::capacity::{self, Fit, Profile};
use crate::cycle::CycleBackend;
use crate::elp::{ElpCounts, ElpSet, ElpSpec};
use crate::error::{Error, Result};
use crate::output::record::record;
use crate::rules::{NodeCounts, RuleSet};
use crate::stats::{RuleStats, default_headroom};
use crate::tagging::{Algo, Tagging};
use crate::verify::{self, Report};
use serde::Serialize;
use std::time::Instant;
use tagger_generators::{NodeKind, Topology, TopologySpec};

/// What to run.
#[derive(Clone, Debug)]
pub struct RunConfig {
    /// The topology to generate or read.
    pub topology: TopologySpec,
    /// The ELP families to plan for.
    pub elp: ElpSpec,
    /// The tagging algorithm.
    pub algo: Algo,
    /// Incremental cycle detection backend (greedy and search).
    pub cycle: CycleBackend,
    /// Fail the run (stage named) when its estimated memory would exceed
    /// this many bytes; see [`crate::budget`].
    pub memory_budget: Option<u64>,
    /// The switch model the plan is fitted to ([`crate::capacity`]).
    pub switch: Profile,
    /// Traffic classes the plan may use for lossless traffic at each
    /// switch (usually the profile's, [`Profile::lossless_tcs`]): the
    /// algorithm returns a plan within them or the run fails saying why
    /// ([`crate::tagging::fit`]). `None`: no limit.
    pub max_tcs: Option<u32>,
    /// Lossless application classes sharing the network (1: one), see
    /// [`crate::tagging::classes`].
    pub classes: u32,
    /// What the switches hold: a plan over these limits fails
    /// verification, so no run returns it ([`verify::Limits::SWITCH`] for
    /// a plan to install; none in a sweep, which measures plans).
    pub limits: verify::Limits,
}

impl RunConfig {
    /// Checks the settings that need no work to judge, before any is done:
    /// at least one application class, classes only with a plan whose tags
    /// are priorities (not `greedy-ttl`'s hop counts), and at least one
    /// traffic class where a limit is given. [`run`] calls it first.
    ///
    /// ```
    /// use tagger::pipeline::{run, RunConfig};
    /// let cfg = RunConfig {
    ///     topology: tagger::TopologySpec::parse("fattree:k=4")?,
    ///     elp: tagger::elp::ElpSpec::parse("shortest")?,
    ///     algo: "greedy-ttl".parse()?,
    ///     cycle: Default::default(),
    ///     memory_budget: None,
    ///     switch: tagger::capacity::Profile::resolve("spectrum2")?,
    ///     max_tcs: Some(7),
    ///     classes: 2,
    ///     limits: tagger::verify::Limits::SWITCH,
    /// };
    /// let e = run(&cfg).unwrap_err(); // before any work
    /// assert_eq!(e.kind(), "config");
    /// assert!(e.to_string().contains("classes = 2"), "{e}");
    /// for bad in [RunConfig { classes: 0, ..cfg.clone() }, RunConfig { max_tcs: Some(0), classes: 1, ..cfg.clone() }] {
    ///     assert_eq!(bad.validate().unwrap_err().kind(), "config");
    /// }
    /// assert!(RunConfig { classes: 1, ..cfg }.validate().is_ok());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::Config`] naming the setting and its value.
    pub fn validate(&self) -> Result<()> {
        let bad = |field, value: String, reason: &str| {
            Err(Error::Config {
                field,
                value,
                reason: reason.to_string(),
            })
        };
        if self.classes == 0 {
            return bad("classes", "0".into(), "at least 1 application class");
        }
        if self.classes > 1 && self.algo == Algo::GreedyTtl {
            return bad(
                "classes",
                self.classes.to_string(),
                "application classes share queues by shifting DSCP tags, and greedy-ttl's tags are hop counts: plan with another algorithm",
            );
        }
        if self.max_tcs == Some(0) {
            return bad(
                "max_tcs",
                "0".into(),
                "a switch needs at least 1 traffic class for lossless traffic (None: no limit)",
            );
        }
        Ok(())
    }
}

record! {
    /// Seconds spent in each stage (`seconds_*` columns).
    #[derive(Clone, Copy, Debug, Default, Serialize)]
    pub struct Timings [prefix = "seconds_"] {
        /// Seconds generating or reading the topology.
        pub generate: f64,
        /// Seconds building the ELP and counting its paths.
        pub elp: f64,
        /// Seconds assigning tags (the algorithm).
        pub tag: f64,
        /// Seconds building the per-switch rules.
        pub rules: f64,
        /// Seconds in independent verification.
        pub verify: f64,
        /// Seconds in the failure what-if (sweeps with `failures`; 0
        /// otherwise).
        pub failures: f64,
        /// Seconds for the whole run.
        pub total: f64,
    }
}

/// Everything a run produced.
#[derive(Debug)]
pub struct RunResult {
    /// The topology.
    pub topo: Topology,
    /// Its ELP set.
    pub elp: ElpSet,
    /// The ELP set's path counts.
    pub counts: ElpCounts,
    /// The tagging stage's result.
    pub tagging: Tagging,
    /// The rule set, as installed (shared across application classes when several).
    pub rules: RuleSet,
    /// Rule counts per node.
    pub node_counts: Vec<NodeCounts>,
    /// The verification report (always ok: a failing run is an error).
    pub report: Report,
    /// With several application classes: the shared plan (`rules`,
    /// `node_counts` and `report` are then its own).
    pub shared: Option<crate::tagging::classes::SharedClasses>,
    /// How the plan fits the switch profile, per node and overall.
    pub fit: Fit,
    /// Traffic classes each node's lossless traffic uses (0 without any).
    pub tcs: Vec<u32>,
    /// The run's row: identity, figures and stage timings.
    pub summary: Summary,
}

/// The result record of one run: `tagger run --json` (one flat object,
/// `seconds` nested) and, beside the sweep's own columns, one row of
/// `runs.parquet`.
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    /// The topology's name.
    pub topology: String,
    /// The topology family's name.
    pub family: String,
    /// The ELP spec.
    pub elp: String,
    /// The algorithm as written back (`greedy`, `search:budget=...`); under
    /// `auto`, the one whose plan it kept.
    pub algo: String,
    /// `auto`: each algorithm it ran, with its priorities, rules (keys)
    /// and seconds, or why it had no plan; empty for the others (and then
    /// left out of the JSON, whose other keys are all `runs.parquet`
    /// columns).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tried: Vec<crate::tagging::Attempt>,
    /// The cycle detection backend's name.
    pub cycle: String,
    /// What the run measured; its fields are flat keys of the JSON object.
    #[serde(flatten)]
    pub figures: Figures,
    /// Whether independent verification passed (always true in a result:
    /// a run that fails it is an error).
    pub verified: bool,
    /// The largest memory estimate charged during the run (deterministic;
    /// see [`crate::budget`]), and the budget it ran under.
    pub memory_estimate_bytes: u64,
    /// The memory budget the run was held to, if any.
    pub memory_budget_bytes: Option<u64>,
    /// Seconds per stage.
    pub seconds: Timings,
}

record! {
    /// What a run measured: one `runs.parquet` column per field, in this
    /// order (null on a failed scenario's row), and one key each of
    /// `tagger run --json`. A new figure is added here and nowhere else.
    #[derive(Clone, Debug, Serialize)]
    pub struct Figures [prefix = ""] {
        /// Switches in the topology.
        pub switches: u64,
        /// Forwarding servers (BCube), 0 elsewhere.
        pub servers: u64,
        /// Hosts attached to switches.
        pub hosts: u64,
        /// Links between nodes (host links not counted).
        pub links: u64,
        /// Endpoints ELPs start and end at (switches with hosts, or servers).
        pub endpoints: u64,
        /// ELPs (node sequences); saturates at 2^64-1, see `paths_exact`.
        pub paths: u64,
        /// False when `paths` saturated or is the sum of a union's families
        /// (an upper bound).
        pub paths_exact: bool,
        /// The longest ELP, in links.
        pub longest_elp: u32,
        /// Ordered endpoint pairs joined by at least one ELP.
        pub pairs_covered: u64,
        /// Ordered endpoint pairs.
        pub pairs_total: u64,
        /// Lossless priorities the plan uses.
        pub priorities: u32,
        /// A proven lower bound on the priorities of any deadlock-free plan
        /// for this ELP (2 when the single-priority dependency graph has a
        /// cycle, else 1; raised by `exact`'s proofs).
        pub priorities_lower_bound: u32,
        /// True when `priorities` meets the lower bound: no plan can use
        /// fewer.
        pub priorities_optimal: bool,
        /// Lossless entries over all nodes, one per distinct lossless key
        /// (`run`'s `entries`; an ACL switch's exact-match ACL entries).
        pub acl_exact_total: u64,
        /// ACL entries (exact) at the busiest node.
        pub acl_exact_max: u64,
        /// Median ACL entries (exact) per node.
        pub acl_exact_p50: u64,
        /// 99th percentile of ACL entries (exact) per node.
        pub acl_exact_p99: u64,
        /// ACL entries over all nodes after port-set compression.
        pub acl_compressed_total: u64,
        /// Compressed ACL entries at the busiest node.
        pub acl_compressed_max: u64,
        /// Median compressed ACL entries per node.
        pub acl_compressed_p50: u64,
        /// 99th percentile of compressed ACL entries per node.
        pub acl_compressed_p99: u64,
        /// Ingress (tag, queue) map entries over all nodes.
        pub queue_rules_total: u64,
        /// Ingress map entries at the busiest node.
        pub queue_rules_max: u64,
        /// Rules (compressed ACL plus queue map) over all nodes (`run`'s
        /// `as ACL`).
        pub rules_total: u64,
        /// Rules at the busiest node.
        pub rules_max: u64,
        /// Median rules per node.
        pub rules_p50: u64,
        /// 99th percentile of rules per node.
        pub rules_p99: u64,
        /// Bytes of PFC headroom the busiest node must reserve at 40 Gb/s,
        /// 300 m, MTU 1500: its ports times the lossless priorities present
        /// there.
        pub headroom_max_bytes: u64,
        /// `greedy-ttl` only: keys that would clash if its priorities were
        /// used as rewritten DSCP tags (rules no switch could hold).
        pub dscp_conflicts: Option<u64>,
        /// `search` and `exact`: moves applied or solver calls made (null
        /// when the local search did not run, see `search_skipped`).
        pub search_steps: Option<u64>,
        /// `search` and `exact`: paths still needing more priorities at the
        /// lowest target tried and not reached (0: none failed; null when
        /// the local search did not run).
        pub search_residue: Option<u64>,
        /// `search` and `exact`: true when a time limit or Ctrl-C ended the
        /// search.
        pub search_stopped_early: Option<bool>,
        /// `search`: why its local search did not run although the plan is
        /// above the lower bound (e.g. the ELP has more paths than
        /// `search:paths=N`); null when it ran or had nothing to do.
        pub search_skipped: Option<String>,
        /// `search`: path evaluations its local search spent, the unit of
        /// `search:budget=N` (null when it did not run).
        pub search_evaluations: Option<u64>,
        /// `search`: true when the local search gave up at the lowest target
        /// tried because it stopped making progress, not for its budget or a
        /// time limit (null when it did not run).
        pub search_stalled: Option<bool>,
        /// `search`: local searches started again with a new seed after
        /// they stalled close to a target (at most one path in twenty
        /// left; null when it did not run).
        pub search_restarts: Option<u64>,
        /// `search` under a traffic-class budget: the priorities the
        /// search held to the classes ran for, at its lowest target (it
        /// runs where orders reached a target but their plan missed the
        /// classes; null when it did not run).
        pub search_class_target: Option<u32>,
        /// `search`: true when the search held to the classes found a plan
        /// within them at `search_class_target` (null when it did not run).
        pub search_class_fitted: Option<bool>,
        /// `search`: where the search held to the classes gave up, at its
        /// best: paths past its target plus classes over the switches'
        /// bounds (0 when it fitted; null when it did not run).
        pub search_class_left: Option<u64>,
        /// `exact`: paths of the sub-ELP on which the solver proved
        /// `priorities_lower_bound - 1` priorities impossible (null when it
        /// proved nothing).
        pub proof_paths: Option<u64>,
        /// The switch profile the plan is fitted to (`--switch`).
        pub switch_profile: String,
        /// Headroom model: `sonic` (SONiC's dynamic calculation) or
        /// `simple` (the Tagger drafts' estimate).
        pub headroom_model: String,
        /// Switch-to-switch port speed, Gb/s.
        pub port_speed_gbps: f64,
        /// Switch-to-switch cable length, metres.
        pub cable_m: f64,
        /// Lossless queues per port the switch profile allows.
        pub lossless_queues: u32,
        /// Traffic classes the switch profile has (one of them kept for
        /// lossy traffic).
        pub traffic_classes: u32,
        /// The most lossless priorities present at one switch (at most
        /// `priorities`: a switch reserves headroom only for those it sees).
        pub priorities_per_switch_max: u32,
        /// The largest PFC headroom one switch reserves: over its ports, the
        /// priorities present at the port times the per-priority headroom.
        pub headroom_total_max_bytes: u64,
        /// The smallest lossless buffer left after headroom at any switch
        /// (negative: that switch does not fit).
        pub buffer_margin_min_bytes: i64,
        /// Switches whose headroom exceeds the lossless buffer.
        pub switches_over_buffer: u64,
        /// Switches with more lossless priorities present than the profile's
        /// lossless queues.
        pub switches_over_queues: u64,
        /// Switches whose compressed ACL entries exceed the profile's ACL
        /// capacity (null when the profile gives none).
        pub switches_over_acl: Option<u64>,
        /// The longest switch-to-switch cable, in metres (0.1 m steps, at
        /// most 100 km), at which every switch still fits its buffer; null
        /// when some switch does not fit even at 0 m.
        pub max_cable_m_fit: Option<f64>,
        /// Lossless application classes sharing the network (`--classes`).
        /// With more than one, the rule counts, the fit and `switches.parquet`
        /// describe the shared plan that is installed; `priorities` and its
        /// bound one class's plan.
        pub classes: u32,
        /// Tags between consecutive classes' first tags in the shared plan
        /// (null with one class).
        pub classes_stride: Option<u32>,
        /// Lossless queues with a separate copy of the plan per class:
        /// classes x priorities.
        pub queues_separate: u64,
        /// Lossless queues of the shared plan: (classes - 1) x stride +
        /// priorities, proven deadlock-free and verified.
        pub queues_shared: u64,
        /// The traffic classes a switch could use for lossless traffic
        /// that the plan was held to (`--max-tcs`, by default the profile's
        /// traffic classes less the lossy one); null: no limit.
        pub max_tcs: Option<u32>,
        /// The most traffic classes one switch's lossless traffic uses:
        /// what a switch installing the plan with port maps needs
        /// (SONiC; BCube's forwarding servers count as switches).
        pub tcs_max: u32,
        /// Switches (and forwarding servers) needing more traffic classes
        /// than the profile has for lossless traffic: a stock SONiC switch
        /// cannot install the plan there.
        pub switches_over_tcs: u64,
        /// With a traffic-class limit: the fewest priorities the algorithm
        /// found without it (equal to `priorities` when its plan fitted as
        /// found, lower when fitting cost priorities); null without one.
        pub priorities_unconstrained: Option<u32>,
        /// With a traffic-class limit: keys moved up a priority to fit it
        /// (0 when the plan fitted as found); null without one.
        pub tcs_forced_keys: Option<u64>,
    }
}

impl Figures {
    /// The switch-model checks some switch fails, each with how many
    /// switches fail it (none when every switch fits).
    pub fn over(&self) -> Vec<(&'static str, u64)> {
        [
            ("buffer", self.switches_over_buffer),
            ("queues", self.switches_over_queues),
            ("traffic classes", self.switches_over_tcs),
            ("ACL", self.switches_over_acl.unwrap_or(0)),
        ]
        .into_iter()
        .filter(|&(_, n)| n > 0)
        .collect()
    }

    /// Every switch fits the switch model.
    ///
    /// # Errors
    /// [`Error::DoesNotFit`] naming the profile and the checks failed.
    pub fn require_fit(&self) -> Result<()> {
        let over = self.over();
        if over.is_empty() {
            return Ok(());
        }
        Err(Error::DoesNotFit {
            profile: self.switch_profile.clone(),
            over,
        })
    }
}

/// Runs the pipeline and verifies the result.
///
/// # Errors
/// Any stage's error, or [`Error::Verification`] when the rules fail
/// verification: such a run is an error, never a result.
pub fn run(cfg: &RunConfig) -> Result<RunResult> {
    run_with(cfg, &crate::tagging::Control::new())
}

/// [`run`] under `control`: a stop request ends `search` and `exact`
/// early with their best plan (verified as any other), and their progress
/// goes to its observer.
///
/// # Errors
/// As [`run`].
pub fn run_with(cfg: &RunConfig, control: &crate::tagging::Control) -> Result<RunResult> {
    cfg.validate()?;
    let t0 = Instant::now();
    let mut tm = Timings::default();
    let lap = |slot: &mut f64, since: &mut Instant| {
        *slot = since.elapsed().as_secs_f64();
        *since = Instant::now();
    };
    let budget = Budget::new(cfg.memory_budget);
    let mut since = Instant::now();
    let topo = build_topology(&cfg.topology, &budget)?;
    capacity::check(&topo, &cfg.switch)?;
    lap(&mut tm.generate, &mut since);
    let elp = build_elp(&topo, &cfg.elp, &budget)?;
    let counts = elp.counts(&topo);
    lap(&mut tm.elp, &mut since);
    let cx = crate::tagging::Context::new(&topo, &elp, &budget, control)
        .with_cycle(cfg.cycle)
        .with_max_tcs(cfg.max_tcs);
    let tagging = crate::tagging::tag_in(&cx, cfg.algo)?;
    budget.hold("tagging", tagging.heap_bytes())?;
    lap(&mut tm.tag, &mut since);
    budget.check("rules", RuleSet::estimate_bytes(&tagging))?;
    let rules = RuleSet::from_tagging(&topo, &tagging);
    // Several application classes: the plan shifted per class is what gets
    // installed, so its rules are the ones verified (every class replayed
    // from its own host tag), counted, fitted and written.
    let (rules, shared) = if cfg.classes > 1 {
        budget.check(
            "classes",
            u64::from(cfg.classes)
                * (tagging.heap_bytes() + 2 * bytes_of::<crate::rules::Entry>(rules.entries.len())),
        )?;
        let sh = crate::tagging::classes::share(&tagging, cfg.classes)?;
        let mut shared_rules = RuleSet::from_tagging(&topo, &sh.tagging);
        shared_rules.classes = sh.host_tags.clone();
        (shared_rules, Some(sh))
    } else {
        (rules, None)
    };
    let installed = shared.as_ref().map_or(&tagging, |s| &s.tagging);
    let node_counts = rules.counts(topo.node_count());
    // The traffic classes each switch needs to install the plan with port
    // maps.
    budget.check(
        "rules",
        crate::tagging::traffic::estimate_bytes(&topo, installed.keys.len(), installed.priorities),
    )?;
    // Fitting the plan to the classes classified these keys already.
    let tcs = match (&shared, &tagging.class_fit) {
        (None, Some(f)) if f.per_node.len() == topo.node_count() => f.per_node.clone(),
        _ => crate::tagging::traffic::classify(&topo, &installed.keys)?.per_node(topo.node_count()),
    };
    if shared.is_some()
        && let Some(n) = cfg.max_tcs
        && let Some((v, &k)) = tcs
            .iter()
            .enumerate()
            .max_by_key(|&(v, k)| (*k, std::cmp::Reverse(v)))
        && k > n
    {
        return Err(Error::Algo {
            algo: tagging.algo.name(),
            reason: format!(
                "the plan shared by {} application classes needs {k} traffic classes at switch {v}, more than the {n} allowed (--max-tcs): fewer classes, a switch with more traffic classes, or --max-tcs none",
                cfg.classes
            ),
        });
    }
    budget.hold("rules", rules.heap_bytes())?;
    lap(&mut tm.rules, &mut since);
    budget.check(
        "verify",
        verify::estimate_bytes(&topo, &elp, installed.states.len(), &rules),
    )?;
    let report = verify::verify_within(&topo, &rules, Some(&elp), &cfg.limits);
    if !report.ok() {
        return Err(Error::Verification {
            what: shared.as_ref().map_or(String::new(), |sh| {
                format!(
                    "the plan shared by {} classes at stride {}",
                    cfg.classes, sh.stride
                )
            }),
            report: Box::new(report),
        });
    }
    lap(&mut tm.verify, &mut since);
    // One priority mask per channel and one record per node.
    budget.check("capacity", capacity::estimate_bytes(&topo))?;
    let mut fit = capacity::fit(&topo, installed, &node_counts, &cfg.switch);
    fit.add_tcs(&tcs, &cfg.switch);
    tm.total = t0.elapsed().as_secs_f64();
    let mut summary = summarize(&topo, cfg, &counts, &tagging, &rules, &node_counts, &fit);
    if let Some(sh) = &shared {
        let f = &mut summary.figures;
        f.classes_stride = Some(sh.stride);
        f.queues_separate = sh.queues_separate;
        f.queues_shared = sh.queues_shared;
    }
    summary.seconds = tm;
    summary.memory_estimate_bytes = budget.peak();
    summary.memory_budget_bytes = budget.limit();
    Ok(RunResult {
        topo,
        elp,
        counts,
        tagging,
        rules,
        node_counts,
        report,
        shared,
        fit,
        tcs,
        summary,
    })
}

fn summarize(
    topo: &Topology,
    cfg: &RunConfig,
    counts: &ElpCounts,
    tagging: &Tagging,
    rules: &RuleSet,
    node_counts: &[NodeCounts],
    fit: &Fit,
) -> Summary {
    let rs = RuleStats::of(node_counts);
    let headroom = default_headroom();
    let headroom_max = (0..topo.node_count())
        .map(|v| {
            let ports = topo.degree(v as u32) as f64 + topo.nodes()[v].hosts as f64;
            ports * rules.priorities_at(v) as f64 * headroom
        })
        .fold(0.0, f64::max);
    // Steps and residue describe a local search that ran; evaluations and
    // the stall, `search`'s own (exact's steps are solver calls).
    let searched = tagging.effort.as_ref().filter(|e| e.skipped.is_none());
    let local = searched.filter(|_| matches!(tagging.algo, Algo::Search(_)));
    let held = local.and_then(|e| e.class_held);
    Summary {
        topology: topo.name().to_string(),
        family: topo.family().name().to_string(),
        elp: cfg.elp.text.clone(),
        algo: tagging.algo.name(),
        tried: tagging.tried.clone(),
        cycle: tagging.cycle.to_string(),
        figures: Figures {
            switches: topo.count_kind(NodeKind::Switch) as u64,
            servers: topo.count_kind(NodeKind::Server) as u64,
            hosts: topo.total_hosts(),
            links: topo.link_count() as u64,
            endpoints: topo.endpoints().len() as u64,
            paths: u64::try_from(counts.paths).unwrap_or(u64::MAX),
            paths_exact: counts.paths_exact && counts.paths <= u64::MAX as u128,
            longest_elp: counts.longest,
            pairs_covered: counts.pairs_covered,
            pairs_total: counts.pairs_total,
            priorities: tagging.priorities,
            priorities_lower_bound: tagging.lower_bound,
            priorities_optimal: tagging.priorities == tagging.lower_bound,
            acl_exact_total: rs.acl_exact.total,
            acl_exact_max: rs.acl_exact.max,
            acl_exact_p50: rs.acl_exact.p50,
            acl_exact_p99: rs.acl_exact.p99,
            acl_compressed_total: rs.acl_compressed.total,
            acl_compressed_max: rs.acl_compressed.max,
            acl_compressed_p50: rs.acl_compressed.p50,
            acl_compressed_p99: rs.acl_compressed.p99,
            queue_rules_total: rs.queue_rules.total,
            queue_rules_max: rs.queue_rules.max,
            rules_total: rs.rules.total,
            rules_max: rs.rules.max,
            rules_p50: rs.rules.p50,
            rules_p99: rs.rules.p99,
            headroom_max_bytes: headroom_max.round() as u64,
            dscp_conflicts: tagging.dscp_conflicts,
            search_steps: searched.map(|e| e.steps),
            search_residue: searched.map(|e| e.residue),
            search_stopped_early: tagging.effort.as_ref().map(|e| e.stopped_early),
            search_skipped: tagging.effort.as_ref().and_then(|e| e.skipped.clone()),
            search_evaluations: local.map(|e| e.evaluations),
            search_stalled: local.map(|e| e.stalled),
            search_restarts: local.map(|e| e.restarts),
            search_class_target: held.map(|h| h.target),
            search_class_fitted: held.map(|h| h.fitted),
            search_class_left: held.map(|h| h.left),
            proof_paths: tagging
                .effort
                .as_ref()
                .map(|e| e.proof_paths)
                .filter(|&n| n > 0),
            switch_profile: cfg.switch.name.clone(),
            headroom_model: cfg.switch.headroom.name().to_string(),
            port_speed_gbps: cfg.switch.port_speed_gbps,
            cable_m: cfg.switch.cable_m,
            lossless_queues: cfg.switch.lossless_queues,
            traffic_classes: cfg.switch.traffic_classes,
            priorities_per_switch_max: fit.priorities_per_switch_max,
            headroom_total_max_bytes: fit.headroom_total_max_bytes,
            buffer_margin_min_bytes: fit.buffer_margin_min_bytes,
            switches_over_buffer: fit.switches_over_buffer,
            switches_over_queues: fit.switches_over_queues,
            switches_over_acl: fit.switches_over_acl,
            max_cable_m_fit: fit.max_cable_m_fit,
            classes: cfg.classes,
            classes_stride: None,
            queues_separate: u64::from(cfg.classes) * u64::from(tagging.priorities),
            queues_shared: u64::from(tagging.priorities),
            max_tcs: cfg.max_tcs,
            tcs_max: fit.tcs_max,
            switches_over_tcs: fit.switches_over_tcs,
            priorities_unconstrained: tagging
                .class_fit
                .as_ref()
                .map(|f| f.unconstrained_priorities),
            tcs_forced_keys: tagging.class_fit.as_ref().map(|f| f.forced_keys),
        },
        verified: true,
        memory_estimate_bytes: 0,
        memory_budget_bytes: None,
        seconds: Timings::default(),
    }
}

/// Builds a topology within `budget`: a generated family's size is known
/// before it is built, so it is refused then, not once it exists (32 bytes
/// per node and 16 per channel, the sizes held afterwards).
///
/// # Errors
/// [`Error::MemoryBudget`] past the budget, or the generator's error.
pub fn build_topology(spec: &crate::TopologySpec, budget: &Budget) -> Result<crate::Topology> {
    let bytes = crate::topo::estimate_bytes;
    if let crate::TopologySpec::Generated(f) = spec
        && let Some((nodes, links)) = f.size()
    {
        budget.check("generate", bytes(nodes, links.saturating_mul(2)))?;
    }
    let topo = spec.build()?;
    budget.hold(
        "generate",
        bytes(topo.node_count() as u64, topo.channel_count() as u64),
    )?;
    Ok(topo)
}

/// Builds the ELP within `budget`: its tables are estimated before they are
/// built ([`ElpSpec::estimate_bytes`]) and held once they are, and the
/// counting that follows every build ([`ElpSet::counts`]) is checked before
/// it starts ([`ElpSet::count_bytes`]).
///
/// # Errors
/// [`Error::MemoryBudget`] past the budget, or the ELP's own errors.
pub fn build_elp(topo: &crate::Topology, spec: &ElpSpec, budget: &Budget) -> Result<ElpSet> {
    budget.check("elp", spec.estimate_bytes(topo))?;
    let elp = ElpSet::build(topo, spec)?;
    budget.hold("elp", elp.heap_bytes())?;
    budget.check("elp", elp.count_bytes(topo))?;
    Ok(elp)
}

/// Peak resident memory of this process so far (Linux `VmHWM`), in bytes.
pub fn peak_rss_bytes() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}
