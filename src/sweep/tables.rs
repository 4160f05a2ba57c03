//! The sweep's tables (`runs.parquet`, `switches.parquet`,
//! `failures.parquet`, `growth.parquet`): their columns, their rows from outcomes, and the
//! summary rows read back from a runs table.

use super::VERSION;
use super::outcome::{NodeRow, Outcome};
use crate::error::{Error, Result};
use crate::failures::{FailureFigures, TrialRow};
use crate::output::parquet::Table;
use crate::output::record::{ColumnDef, record};
use crate::pipeline::{Figures, Timings};
use crate::update::GrowthRow;
use arrow_array::RecordBatch;

/// Builds the tables (runs, switches, failures, growth). Timing and memory
/// columns aside, the rows depend only on the spec.
pub(crate) fn tables(sweep: &str, outcomes: &[Outcome], threads: usize) -> Tables {
    let runs_columns = runs_columns();
    let mut runs = Table::with_columns(&runs_columns);
    let switches_columns = switches_columns();
    let mut nodes = Table::with_columns(&switches_columns);
    let mut fails = Table::with_columns(&failures_columns());
    let mut growth = Table::with_columns(&growth_columns());
    for o in outcomes {
        let s = &o.scenario;
        let ok = o.result.as_ref().ok();
        let scenario = ScenarioRow {
            sweep: sweep.to_string(),
            scenario_id: s.id,
            group: s.group.clone(),
            trial: s.trial,
            seed: s.seed,
            topology: s.topology.canonical(),
            topology_grid: s.topology_text.clone(),
            family: s.topology.family_name().to_string(),
            elp: s.elp.text.clone(),
            algo: s.algo.name(),
            cycle: s.cycle.as_str().to_string(),
            max_tcs_setting: match s.max_tcs {
                crate::sweep::TcLimit::Profile => "profile".to_string(),
                crate::sweep::TcLimit::None => "none".to_string(),
                crate::sweep::TcLimit::At(n) => n.to_string(),
            },
        };
        ScenarioRow::push_row(Some(&scenario), &mut runs);
        Figures::push_row(ok.map(|r| &r.figures), &mut runs);
        FailureFigures::push_row(o.failures.as_ref().map(|f| &f.figures), &mut runs);
        let outcome = OutcomeRow {
            verified: ok.is_some_and(|r| r.verified),
            status: if ok.is_some() { "ok" } else { "failed" }.to_string(),
            error: o.result.as_ref().err().map(ToString::to_string),
            error_kind: o
                .result
                .as_ref()
                .err()
                .map(|e| e.error().kind().to_string()),
        };
        OutcomeRow::push_row(Some(&outcome), &mut runs);
        Timings::push_row(ok.map(|r| &r.seconds), &mut runs);
        let process = ProcessRow {
            memory_budget_bytes: s.memory_budget,
            memory_estimate_bytes: ok.map(|r| r.memory_estimate_bytes),
            peak_rss_bytes: o.peak_rss_bytes,
            threads: threads as u64,
            version: VERSION.to_string(),
        };
        ProcessRow::push_row(Some(&process), &mut runs);
        let of = ScenarioOf { scenario_id: s.id };
        for n in &o.nodes {
            ScenarioOf::push_row(Some(&of), &mut nodes);
            NodeRow::push_row(Some(n), &mut nodes);
        }
        for t in o.failures.iter().flat_map(|f| &f.trials) {
            ScenarioOf::push_row(Some(&of), &mut fails);
            TrialRow::push_row(Some(t), &mut fails);
        }
        for g in &o.growth {
            ScenarioOf::push_row(Some(&of), &mut growth);
            GrowthRow::push_row(Some(g), &mut growth);
        }
    }
    Tables {
        runs,
        nodes,
        fails,
        growth,
    }
}

/// The sweep's tables, built from outcomes.
pub(crate) struct Tables {
    pub runs: Table,
    pub nodes: Table,
    pub fails: Table,
    pub growth: Table,
}

record! {
    /// The scenario's own columns of `runs.parquet`, ahead of the run's
    /// [`Figures`]: known before it runs, so present on a failed row too.
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub struct ScenarioRow [prefix = ""] {
        /// The sweep's name (spec `name`).
        pub sweep: String,
        /// The scenario's index in the expanded spec; joins switches.parquet.
        pub scenario_id: u64,
        /// The spec group's name (quote it in SQL).
        pub group: String,
        /// Trial number within the grid point, from 0.
        pub trial: u64,
        /// The trial's seed (topology and ELP randomness).
        pub seed: u64,
        /// The topology spec, canonical, with the trial's seed.
        pub topology: String,
        /// The grid point's topology spec, canonical (fixed key order,
        /// defaults written out) and without the trial's seed unless the
        /// grid gave one: one value per grid point.
        pub topology_grid: String,
        /// Topology family.
        pub family: String,
        /// The ELP spec.
        pub elp: String,
        /// The tagging algorithm, with its options.
        pub algo: String,
        /// The incremental cycle-detection backend.
        pub cycle: String,
        /// The spec's traffic-class limit (`max_tcs`): `profile` (the
        /// switch profile's, the default), `none`, or a number.
        pub max_tcs_setting: String,
    }
}

record! {
    /// The outcome's columns of `runs.parquet`, between the figures and the
    /// timings.
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub struct OutcomeRow [prefix = ""] {
        /// True when independent verification passed (false on a failed row).
        pub verified: bool,
        /// `ok` or `failed`.
        pub status: String,
        /// Why the scenario failed (null when ok).
        pub error: Option<String>,
        /// What kind of error stopped it, for grouping without parsing
        /// `error`: `memory_budget`, `verification`, `elp_topology`, ...
        /// (null when ok; the list is in docs/formats.md).
        pub error_kind: Option<String>,
    }
}

record! {
    /// Memory and process columns of `runs.parquet`, last.
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub struct ProcessRow [prefix = ""] {
        /// The scenario's memory budget (null: none).
        pub memory_budget_bytes: Option<u64>,
        /// The largest memory estimate charged during the run (deterministic).
        pub memory_estimate_bytes: Option<u64>,
        /// The process's memory high-water mark when the scenario finished (with concurrent scenarios, an upper bound on its own peak).
        pub peak_rss_bytes: Option<u64>,
        /// Worker threads of the sweep.
        pub threads: u64,
        /// The engine's version.
        pub version: String,
    }
}

record! {
    /// The first column of `switches.parquet` and `failures.parquet`: the
    /// scenario a row belongs to.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct ScenarioOf [prefix = ""] {
        /// The scenario (joins runs.parquet).
        pub scenario_id: u64,
    }
}

/// Columns of `runs.parquet`, in order: the scenario's, the run's
/// [`Figures`], the outcome, [`Timings`], memory and process.
pub fn runs_columns() -> Vec<ColumnDef> {
    [
        ScenarioRow::COLUMNS,
        Figures::COLUMNS,
        FailureFigures::COLUMNS,
        OutcomeRow::COLUMNS,
        Timings::COLUMNS,
        ProcessRow::COLUMNS,
    ]
    .concat()
}

/// Both output tables' columns, by file name: what `tagger schema` prints.
pub fn schema() -> Vec<(&'static str, Vec<ColumnDef>)> {
    vec![
        ("runs.parquet", runs_columns()),
        ("switches.parquet", switches_columns()),
        ("failures.parquet", failures_columns()),
        ("growth.parquet", growth_columns()),
        ("update.parquet", crate::update::StepRow::COLUMNS.to_vec()),
    ]
}

/// Columns of `growth.parquet` (written when the spec has `growth`): the
/// scenario id, then a [`GrowthRow`]: one row per scenario and growth step.
pub fn growth_columns() -> Vec<ColumnDef> {
    [ScenarioOf::COLUMNS, GrowthRow::COLUMNS].concat()
}

/// Columns of `failures.parquet` (written when the spec has `failures`):
/// the scenario id, then a [`TrialRow`]: one row per scenario and trial.
pub fn failures_columns() -> Vec<ColumnDef> {
    [ScenarioOf::COLUMNS, TrialRow::COLUMNS].concat()
}

/// Columns of `switches.parquet`, in order: the scenario id, then a
/// [`NodeRow`].
pub fn switches_columns() -> Vec<ColumnDef> {
    [ScenarioOf::COLUMNS, NodeRow::COLUMNS].concat()
}

/// The parts of a `runs.parquet` row the summary table shows.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// The scenario's id.
    pub scenario_id: u64,
    /// Its topology spec.
    pub topology: String,
    /// Its ELP spec.
    pub elp: String,
    /// Its algorithm.
    pub algo: String,
    /// Its traffic-class limit setting (`profile`, `none` or a number).
    pub max_tcs_setting: String,
    /// The most traffic classes one switch needs.
    pub tcs_max: Option<u32>,
    /// The error, when it failed.
    pub error: Option<String>,
    /// Nodes of the topology.
    pub nodes: Option<u64>,
    /// Hops of the longest ELP.
    pub longest_elp: Option<u32>,
    /// Lossless priorities of the plan.
    pub priorities: Option<u32>,
    /// The proven lower bound on priorities.
    pub bound: Option<u32>,
    /// Most exact-match ACL entries at one switch.
    pub acl_exact_max: Option<u64>,
    /// Most rules at one switch.
    pub rules_max: Option<u64>,
    /// Total seconds.
    pub seconds: Option<f64>,
    /// The failure what-if's aggregates, when the scenario ran one.
    pub failures: Option<FailureRow>,
}

/// The failure columns of a `runs.parquet` row the failures table shows.
#[derive(Clone, Debug, PartialEq)]
pub struct FailureRow {
    /// The failure spec.
    pub spec: String,
    /// The routing model.
    pub routing: String,
    /// Trials run.
    pub trials: u32,
    /// Share of trials where plain PFC has a cyclic buffer dependency.
    pub cbd_rate: Option<f64>,
    /// Median share of routes kept lossless by the installed rules.
    pub lossless_paths_median: Option<f64>,
    /// Worst trial's share of routes kept lossless.
    pub lossless_paths_min: Option<f64>,
    /// Worst trial's share of connected pairs whose routes all stay lossless.
    pub lossless_pairs_min: Option<f64>,
    /// Most priorities a replanned plan needed.
    pub replanned_max: Option<u32>,
    /// Priorities of the failure-aware plan.
    pub aware: Option<u32>,
}

/// The summary rows of runs tables, read back through the records that
/// wrote them.
///
/// # Errors
/// [`crate::Error::Column`] when a column is missing or of another type
/// than its record declares.
pub fn rows_of(batches: &[RecordBatch]) -> Result<Vec<Row>> {
    let mut rows = Vec::new();
    for b in batches {
        let scenarios = ScenarioRow::read_rows(b)?;
        let figures = Figures::read_rows(b)?;
        let failures = FailureFigures::read_rows(b)?;
        let outcomes = OutcomeRow::read_rows(b)?;
        let seconds = Timings::read_rows(b)?;
        for i in 0..b.num_rows() {
            let (Some(s), Some(o)) = (&scenarios[i], &outcomes[i]) else {
                return Err(Error::Column {
                    column: "scenario_id".into(),
                    reason: format!("row {i} lacks its scenario or outcome"),
                });
            };
            let f = figures[i].as_ref();
            rows.push(Row {
                scenario_id: s.scenario_id,
                topology: s.topology_grid.clone(),
                elp: s.elp.clone(),
                algo: s.algo.clone(),
                max_tcs_setting: s.max_tcs_setting.clone(),
                tcs_max: f.map(|f| f.tcs_max),
                error: o.error.clone(),
                nodes: f.map(|f| f.switches + f.servers),
                longest_elp: f.map(|f| f.longest_elp),
                priorities: f.map(|f| f.priorities),
                bound: f.map(|f| f.priorities_lower_bound),
                acl_exact_max: f.map(|f| f.acl_exact_max),
                rules_max: f.map(|f| f.rules_max),
                seconds: seconds[i].map(|t| t.total),
                failures: failures[i].as_ref().map(|x| FailureRow {
                    spec: x.spec.clone(),
                    routing: x.routing.clone(),
                    trials: x.trials,
                    cbd_rate: Some(x.cbd_rate),
                    lossless_paths_median: x.lossless_paths_median,
                    lossless_paths_min: x.lossless_paths_min,
                    lossless_pairs_min: x.lossless_pairs_min,
                    replanned_max: x.replanned_priorities_max,
                    aware: x.aware_priorities,
                }),
            });
        }
    }
    Ok(rows)
}
