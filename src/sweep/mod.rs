//! Batch sweeps: run every scenario of a spec in parallel, verify each, and
//! write `runs.parquet` (one row per scenario) and `switches.parquet` (one row
//! per scenario and node).

pub mod merge;
pub mod spec;

use crate::error::{Error, Result};
use crate::failures::{FailureFigures, TrialRow};
use crate::output::parquet::{Kind, Table, read_batches, write_batches};
use crate::output::record::{ColumnDef, record};
use crate::pipeline::{self, Figures, RunConfig, Summary, Timings};
use arrow_array::RecordBatch;
use rayon::prelude::*;
pub use spec::{DEFAULT_MAX_SCENARIOS, Scenario, Sweep};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Mutex;

/// The sweep that `tagger sweep` runs when given no spec.
pub const DEFAULT_SPEC: &str = include_str!("../../datasets/default.toml");

/// The engine version written into every output's metadata.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

record! {
    /// One node's row of `switches.parquet`.
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub struct NodeRow [prefix = ""] {
        /// Node id (as in the topology JSON and the rules file).
        pub node: u32,
        /// `switch` or `server`.
        pub kind: String,
        /// Tier on a tiered topology (0 = ToR), null elsewhere.
        pub level: Option<u32>,
        /// Links at the node (host ports not counted).
        pub degree: u32,
        /// Hosts attached.
        pub hosts: u32,
        /// ACL entries, one per distinct lossless key.
        pub acl_exact: u64,
        /// ACL entries after port-set compression (as installed).
        pub acl_compressed: u64,
        /// Ingress (tag, queue) map entries.
        pub queue_rules: u64,
        /// All entries: `acl_compressed + queue_rules`.
        pub rules: u64,
        /// Lossless priorities present at the node.
        pub priorities: u32,
        /// Ports (switch and host) where at least one lossless priority
        /// arrives (null for a BCube server: no switch profile applies).
        pub lossless_ports: Option<u32>,
        /// PFC headroom the switch reserves: over its ports, the priorities
        /// arriving there times the per-priority headroom of the profile.
        pub headroom_bytes: Option<u64>,
        /// The profile's lossless buffer minus `headroom_bytes` (negative:
        /// over).
        pub buffer_margin_bytes: Option<i64>,
        /// True when the headroom fits the lossless buffer.
        pub fits_buffer: Option<bool>,
        /// True when the priorities present fit the profile's lossless
        /// queues.
        pub fits_queues: Option<bool>,
        /// True when the compressed ACL entries fit the profile's ACL
        /// capacity (null when the profile gives none).
        pub fits_acl: Option<bool>,
    }
}

/// The outcome of one scenario.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// The scenario.
    pub scenario: Scenario,
    /// Its row, or the error that stopped it.
    pub result: Result<Summary, String>,
    /// Its per-switch rows.
    pub nodes: Vec<NodeRow>,
    /// The failure what-if's aggregates and trials, when it ran.
    pub failures: Option<crate::failures::Report>,
    /// Peak resident memory of the process after the scenario, if the OS reports it.
    pub peak_rss_bytes: Option<u64>,
}

/// Runs one scenario; an error becomes a failed outcome, never a panic.
pub fn run_scenario(s: &Scenario) -> Outcome {
    let cfg = RunConfig {
        topology: s.topology.clone(),
        elp: s.elp.clone(),
        algo: s.algo,
        cycle: s.cycle,
        memory_budget: s.memory_budget.or(s.default_budget),
        switch: s.switch.clone(),
        classes: s.classes,
        // A sweep measures plans, large ones too; fit says what a switch
        // holds.
        limits: Default::default(),
    };
    let mut failures = None;
    let (result, nodes) = match pipeline::run(&cfg) {
        Ok(mut r) => {
            let nodes = (0..r.topo.node_count())
                .map(|v| {
                    let n = r.topo.nodes()[v];
                    let c = r.node_counts[v];
                    let f = r.fit.nodes[v].as_ref();
                    NodeRow {
                        node: v as u32,
                        kind: n.kind.as_str().to_string(),
                        level: n.level,
                        degree: r.topo.degree(v as u32) as u32,
                        hosts: n.hosts,
                        acl_exact: c.acl_exact,
                        acl_compressed: c.acl_compressed,
                        queue_rules: c.queue_rules,
                        rules: c.acl_compressed + c.queue_rules,
                        priorities: r.rules.priorities_at(v) as u32,
                        lossless_ports: f.map(|f| f.lossless_ports),
                        headroom_bytes: f.map(|f| f.headroom_bytes),
                        buffer_margin_bytes: f.map(|f| f.buffer_margin_bytes),
                        fits_buffer: f.map(|f| f.fits_buffer),
                        fits_queues: f.map(|f| f.fits_queues),
                        fits_acl: f.and_then(|f| f.fits_acl),
                    }
                })
                .collect();
            match what_if(s, &r) {
                Ok(None) => (Ok(r.summary), nodes),
                Ok(Some((report, secs))) => {
                    r.summary.seconds.failures = secs;
                    r.summary.seconds.total += secs;
                    failures = Some(report);
                    (Ok(r.summary), nodes)
                }
                Err(e) => (Err(format!("failure what-if: {e}")), Vec::new()),
            }
        }
        Err(e) => (Err(e.to_string()), Vec::new()),
    };
    Outcome {
        scenario: s.clone(),
        result,
        nodes,
        failures,
        peak_rss_bytes: pipeline::peak_rss_bytes(),
    }
}

/// The scenario's failure what-if on its plan, with its seconds.
fn what_if(
    s: &Scenario,
    r: &pipeline::RunResult,
) -> Result<Option<(crate::failures::Report, f64)>> {
    let Some(f) = &s.failures else {
        return Ok(None);
    };
    let t0 = std::time::Instant::now();
    let plan = crate::failures::Plan {
        topo: &r.topo,
        elp: &s.elp,
        rules: &r.rules,
        algo: s.algo,
        cycle: s.cycle,
    };
    let budget = crate::budget::Budget::new(s.memory_budget.or(s.default_budget));
    let mut reports = crate::failures::what_if(&plan, &f.spec, &[f.routing], f.options, &budget)?;
    Ok(reports.pop().map(|rep| (rep, t0.elapsed().as_secs_f64())))
}

/// Runs `scenarios` on a pool of `jobs` threads, calling `progress` after
/// each; outcomes come back in scenario order.
///
/// # Errors
/// [`Error::Threads`] when the OS refuses the pool's threads.
pub fn run_all(
    scenarios: &[Scenario],
    jobs: usize,
    progress: impl Fn(&Outcome) + Sync,
) -> Result<Vec<Outcome>> {
    Ok(pool(jobs)?.install(|| {
        scenarios
            .par_iter()
            .map(|s| {
                let o = run_scenario(s);
                progress(&o);
                o
            })
            .collect()
    }))
}

/// Builds the three tables (runs, switches, failures). Timing and memory
/// columns aside, the rows depend only on the spec.
pub(crate) fn tables(sweep: &str, outcomes: &[Outcome], threads: usize) -> (Table, Table, Table) {
    let runs_columns = runs_columns();
    let mut runs = Table::with_columns(&runs_columns);
    let switches_columns = switches_columns();
    let mut nodes = Table::with_columns(&switches_columns);
    let mut fails = Table::with_columns(&failures_columns());
    for o in outcomes {
        let s = &o.scenario;
        let ok = o.result.as_ref().ok();
        runs.str("sweep", Some(sweep));
        runs.u64("scenario_id", Some(s.id));
        runs.str("group", Some(s.group.as_str()));
        runs.u64("trial", Some(s.trial));
        runs.u64("seed", Some(s.seed));
        runs.str("topology", Some(s.topology.canonical()));
        runs.str("topology_grid", Some(s.topology_text.as_str()));
        runs.str("family", Some(s.topology.family_name()));
        runs.str("elp", Some(s.elp.text.as_str()));
        runs.str("algo", Some(s.algo.name()));
        runs.str("cycle", Some(s.cycle.as_str()));
        Figures::push_row(ok.map(|r| &r.figures), &mut runs);
        FailureFigures::push_row(o.failures.as_ref().map(|f| &f.figures), &mut runs);
        runs.bool("verified", Some(ok.is_some_and(|r| r.verified)));
        runs.str("status", Some(if ok.is_some() { "ok" } else { "failed" }));
        runs.str("error", o.result.as_ref().err().map(String::as_str));
        Timings::push_row(ok.map(|r| &r.seconds), &mut runs);
        runs.u64("memory_budget_bytes", s.memory_budget);
        runs.u64("memory_estimate_bytes", ok.map(|r| r.memory_estimate_bytes));
        runs.u64("peak_rss_bytes", o.peak_rss_bytes);
        runs.u64("threads", Some(threads as u64));
        runs.str("version", Some(VERSION));
        for n in &o.nodes {
            nodes.u64("scenario_id", Some(s.id));
            NodeRow::push_row(Some(n), &mut nodes);
        }
        for t in o.failures.iter().flat_map(|f| &f.trials) {
            fails.u64("scenario_id", Some(s.id));
            TrialRow::push_row(Some(t), &mut fails);
        }
    }
    (runs, nodes, fails)
}

/// The scenario's own columns, ahead of the run's [`Figures`]: known before
/// it runs, so present on a failed row too.
const SCENARIO_COLUMNS: &[ColumnDef] = &[
    ColumnDef::new("sweep", Kind::Str, "The sweep's name (spec `name`)."),
    ColumnDef::new(
        "scenario_id",
        Kind::U64,
        "The scenario's index in the expanded spec; joins switches.parquet.",
    ),
    ColumnDef::new(
        "group",
        Kind::Str,
        "The spec group's name (quote it in SQL).",
    ),
    ColumnDef::new(
        "trial",
        Kind::U64,
        "Trial number within the grid point, from 0.",
    ),
    ColumnDef::new(
        "seed",
        Kind::U64,
        "The trial's seed (topology and ELP randomness).",
    ),
    ColumnDef::new(
        "topology",
        Kind::Str,
        "The topology spec, canonical, with the trial's seed.",
    ),
    ColumnDef::new(
        "topology_grid",
        Kind::Str,
        "The topology spec as the grid wrote it (one value per grid point).",
    ),
    ColumnDef::new("family", Kind::Str, "Topology family."),
    ColumnDef::new("elp", Kind::Str, "The ELP spec."),
    ColumnDef::new(
        "algo",
        Kind::Str,
        "The tagging algorithm, with its options.",
    ),
    ColumnDef::new(
        "cycle",
        Kind::Str,
        "The incremental cycle-detection backend.",
    ),
];

/// The outcome's columns, between the figures and the timings.
const OUTCOME_COLUMNS: &[ColumnDef] = &[
    ColumnDef::new(
        "verified",
        Kind::Bool,
        "True when independent verification passed (false on a failed row).",
    ),
    ColumnDef::new("status", Kind::Str, "`ok` or `failed`."),
    ColumnDef::new(
        "error",
        Kind::Str,
        "Why the scenario failed (null when ok).",
    ),
];

/// Memory and process columns, last.
const PROCESS_COLUMNS: &[ColumnDef] = &[
    ColumnDef::new(
        "memory_budget_bytes",
        Kind::U64,
        "The scenario's memory budget (null: none).",
    ),
    ColumnDef::new(
        "memory_estimate_bytes",
        Kind::U64,
        "The largest memory estimate charged during the run (deterministic).",
    ),
    ColumnDef::new(
        "peak_rss_bytes",
        Kind::U64,
        "The process's memory high-water mark when the scenario finished (with concurrent scenarios, an upper bound on its own peak).",
    ),
    ColumnDef::new("threads", Kind::U64, "Worker threads of the sweep."),
    ColumnDef::new("version", Kind::Str, "The engine's version."),
];

/// Columns of `runs.parquet`, in order: the scenario's, the run's
/// [`Figures`], the outcome, [`Timings`], memory and process.
pub fn runs_columns() -> Vec<ColumnDef> {
    [
        SCENARIO_COLUMNS,
        Figures::COLUMNS,
        FailureFigures::COLUMNS,
        OUTCOME_COLUMNS,
        Timings::COLUMNS,
        PROCESS_COLUMNS,
    ]
    .concat()
}

/// Both output tables' columns, by file name: what `tagger schema` prints.
pub fn schema() -> Vec<(&'static str, Vec<ColumnDef>)> {
    vec![
        ("runs.parquet", runs_columns()),
        ("switches.parquet", switches_columns()),
        ("failures.parquet", failures_columns()),
    ]
}

/// Columns of `failures.parquet` (written when the spec has `failures`):
/// the scenario id, then a [`TrialRow`]: one row per scenario and trial.
pub fn failures_columns() -> Vec<ColumnDef> {
    [
        &[ColumnDef::new(
            "scenario_id",
            Kind::U64,
            "The scenario (joins runs.parquet).",
        )][..],
        TrialRow::COLUMNS,
    ]
    .concat()
}

/// Columns of `switches.parquet`, in order: the scenario id, then a
/// [`NodeRow`].
pub fn switches_columns() -> Vec<ColumnDef> {
    [
        &[ColumnDef::new(
            "scenario_id",
            Kind::U64,
            "The scenario (joins runs.parquet).",
        )][..],
        NodeRow::COLUMNS,
    ]
    .concat()
}

/// One of N deterministic slices of a sweep: scenario `id` belongs to shard
/// `id % count + 1`. Written `I/N`, 1-based, as cluster job arrays count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// This shard, from 1.
    pub index: u64,
    /// Shards in all.
    pub count: u64,
}

impl Shard {
    /// Whether scenario `id` is in this shard.
    pub fn contains(&self, id: u64) -> bool {
        id % self.count == self.index - 1
    }
    fn tag(&self) -> String {
        format!("shard-{}-of-{}", self.index, self.count)
    }
}

impl FromStr for Shard {
    type Err = crate::Error;
    fn from_str(s: &str) -> Result<Self> {
        let bad = || crate::Error::Shard {
            value: s.to_string(),
        };
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let (index, count): (u64, u64) = (
            i.trim().parse().map_err(|_| bad())?,
            n.trim().parse().map_err(|_| bad())?,
        );
        if index == 0 || index > count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

/// How to run a sweep.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// Scenarios run concurrently.
    pub jobs: usize,
    /// Skip scenarios whose results are already in the output directory.
    pub resume: bool,
    /// Run only this slice of the scenarios.
    pub shard: Option<Shard>,
}

/// What [`execute`] did.
#[derive(Debug)]
pub struct Done {
    /// Scenarios in this run (this shard's).
    pub selected: usize,
    /// Scenarios run now.
    pub ran: usize,
    /// Scenarios skipped as already done (`--resume`).
    pub skipped: usize,
    /// Scenarios that failed.
    pub failed: usize,
    /// `runs.parquet` (or the shard's).
    pub runs_path: PathBuf,
    /// `switches.parquet` (or the shard's).
    pub switches_path: PathBuf,
    /// `failures.parquet` (or the shard's), when the spec has failures.
    pub failures_path: Option<PathBuf>,
    /// One line per scenario of the final table, for [`crate::render::sweep_summary`].
    pub rows: Vec<Row>,
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

fn meta(sweep: &Sweep) -> [(&'static str, String); 3] {
    [
        ("tagger.sweep", sweep.name.clone()),
        ("tagger.spec", sweep.text.clone()),
        ("tagger.version", VERSION.to_string()),
    ]
}

/// Runs a sweep into `dir`.
///
/// Each scenario's rows are written as part files under `dir/.parts/` the
/// moment it finishes, so an interrupted sweep keeps what it finished; with
/// `resume`, scenarios that have parts are skipped (the parts must come from
/// the same spec text). At the end the parts are merged, in scenario order,
/// into `runs.parquet` and `switches.parquet` (`runs-shard-I-of-N.parquet`
/// with a shard), each by atomic rename. Rows apart from timing and memory
/// columns depend only on the spec, whatever the job count or sharding.
///
/// # Errors
/// I/O and Parquet errors naming the file, or a resume against parts of a
/// different spec. A failing scenario is not an error: it is a `failed` row.
pub fn execute(
    dir: &Path,
    sweep: &Sweep,
    opts: &Options,
    progress: impl Fn(&Outcome) + Sync,
) -> Result<Done> {
    let tag = opts.shard.map_or_else(|| "all".to_string(), |s| s.tag());
    let parts = dir.join(".parts").join(&tag);
    let stamp = parts.join("spec.toml");
    let io = |p: &Path| {
        let p = p.to_path_buf();
        move |e| Error::io(p, e)
    };
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let _lock = lock(dir, &tag, "sweep")?;
    let resuming = opts.resume && stamp.exists();
    if resuming {
        let old = std::fs::read_to_string(&stamp).map_err(io(&stamp))?;
        if old != sweep.text {
            return Err(Error::SweepSpec {
                file: dir.display().to_string(),
                location: "--resume".into(),
                reason: "the directory holds results of a different sweep spec; run without --resume to start over".into(),
            });
        }
    } else {
        if parts.exists() {
            std::fs::remove_dir_all(&parts).map_err(io(&parts))?;
        }
        std::fs::create_dir_all(&parts).map_err(io(&parts))?;
        crate::output::write_string(&stamp, &sweep.text)?;
    }
    let selected = selected(sweep, opts.shard);
    let (runs_path, switches_path) = match opts.shard {
        None => (dir.join("runs.parquet"), dir.join("switches.parquet")),
        Some(sh) => (
            dir.join(format!("runs-{}.parquet", sh.tag())),
            dir.join(format!("switches-{}.parquet", sh.tag())),
        ),
    };
    // Temporaries of a run that died (its parts, its last merge) go first.
    remove_temporaries(&parts, None)?;
    remove_temporaries(dir, Some(&runs_path))?;
    remove_temporaries(dir, Some(&switches_path))?;
    let done: BTreeSet<u64> = if resuming {
        // A scenario counts as done only when both its parts are there and
        // readable; otherwise it runs again.
        let names: BTreeSet<String> = std::fs::read_dir(&parts)
            .map_err(io(&parts))?
            .filter_map(|e| Some(e.ok()?.file_name().to_str()?.to_string()))
            .collect();
        selected
            .iter()
            .map(|s| s.id)
            .filter(|id| {
                let mut want = vec![
                    format!("{id}.runs.parquet"),
                    format!("{id}.switches.parquet"),
                ];
                if sweep.has_failures() {
                    want.push(format!("{id}.failures.parquet"));
                }
                want.iter()
                    .all(|n| names.contains(n) && crate::output::parquet::readable(&parts.join(n)))
            })
            .collect()
    } else {
        BTreeSet::new()
    };
    let todo: Vec<Scenario> = selected
        .iter()
        .filter(|s| !done.contains(&s.id))
        .map(|s| (*s).clone())
        .collect();
    let errors = Mutex::new(Vec::new());
    let threads = rayon::current_num_threads();
    for_each(&todo, effective_jobs(opts.jobs, todo.len()), |o| {
        if let Err(e) = write_part(&parts, sweep, o, threads) {
            errors
                .lock()
                .expect("no panics while holding the lock")
                .push(e);
        }
        progress(o);
    })?;
    if let Some(e) = errors
        .into_inner()
        .expect("no panics while holding the lock")
        .into_iter()
        .next()
    {
        return Err(e);
    }
    let mut runs: Vec<RecordBatch> = Vec::new();
    let mut nodes: Vec<RecordBatch> = Vec::new();
    for s in &selected {
        runs.extend(read_batches(&parts.join(format!("{}.runs.parquet", s.id)))?);
        nodes.extend(read_batches(
            &parts.join(format!("{}.switches.parquet", s.id)),
        )?);
    }
    nodes.retain(|b| b.num_rows() > 0);
    if nodes.is_empty() {
        nodes.push(Table::with_columns(&switches_columns()).into_batch(&switches_path)?);
    }
    if runs.is_empty() {
        runs.push(Table::with_columns(&runs_columns()).into_batch(&runs_path)?);
    }
    publish_pair((&runs_path, &runs), (&switches_path, &nodes), &meta(sweep))?;
    // The failure trials after the pair: a reader of failures.parquet
    // finds the runs it joins already published.
    let failures_path = if sweep.has_failures() {
        let path = match opts.shard {
            None => dir.join("failures.parquet"),
            Some(sh) => dir.join(format!("failures-{}.parquet", sh.tag())),
        };
        remove_temporaries(dir, Some(&path))?;
        let mut fails: Vec<RecordBatch> = Vec::new();
        for s in &selected {
            fails.extend(read_batches(
                &parts.join(format!("{}.failures.parquet", s.id)),
            )?);
        }
        fails.retain(|b| b.num_rows() > 0);
        if fails.is_empty() {
            fails.push(Table::with_columns(&failures_columns()).into_batch(&path)?);
        }
        write_batches(&path, &fails, &meta(sweep))?;
        Some(path)
    } else {
        None
    };
    let rows = rows_of(&runs);
    Ok(Done {
        selected: selected.len(),
        ran: todo.len(),
        skipped: selected.len() - todo.len(),
        failed: rows.iter().filter(|r| r.error.is_some()).count(),
        runs_path,
        switches_path,
        failures_path,
        rows,
    })
}

/// Runs scenarios on a pool of `jobs` threads without keeping their
/// outcomes, calling `each` as each finishes.
fn for_each(scenarios: &[Scenario], jobs: usize, each: impl Fn(&Outcome) + Sync) -> Result<()> {
    pool(jobs)?.install(|| scenarios.par_iter().for_each(|s| each(&run_scenario(s))));
    Ok(())
}

/// Concurrent scenarios past which more only compete for cores and memory:
/// this many per available core.
pub const JOBS_PER_CORE: usize = 4;

/// The scenarios to run at once for a request of `requested`: at most one
/// per scenario and [`JOBS_PER_CORE`] per available core, at least one.
pub fn effective_jobs(requested: usize, scenarios: usize) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    requested.min(JOBS_PER_CORE * cores).min(scenarios).max(1)
}

/// A pool of `jobs` threads (at least one) for scenarios.
fn pool(jobs: usize) -> Result<rayon::ThreadPool> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(jobs.max(1))
        .build()
        .map_err(|e| Error::Threads {
            jobs,
            reason: e.to_string(),
        })
}

/// Takes the exclusive lock of `dir`'s output for `tag` (all, or a shard):
/// held while the returned file lives, released by the OS if the process
/// dies. Shards of one sweep lock apart, so a job array shares a directory.
/// `command` (`sweep`, `merge`) is written into the lock file, so a
/// refused process is told who holds it.
pub(crate) fn lock(dir: &Path, tag: &str, command: &str) -> Result<std::fs::File> {
    use std::io::{Read, Seek, Write};
    let path = dir.join(format!(".lock-{tag}"));
    let io = |e| Error::io(path.clone(), e);
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(io)?;
    match f.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => {
            let mut holder = String::new();
            let _ = f.read_to_string(&mut holder);
            let holder = holder.trim();
            return Err(Error::Busy {
                path: dir.to_path_buf(),
                holder: if holder.is_empty() {
                    "process unknown".into()
                } else {
                    holder.to_string()
                },
            });
        }
        Err(std::fs::TryLockError::Error(e)) => return Err(io(e)),
    }
    f.set_len(0).map_err(io)?;
    f.rewind().map_err(io)?;
    write!(f, "tagger {command}, pid {}", std::process::id()).map_err(io)?;
    Ok(f)
}

/// The scenarios of `sweep` that `shard` runs (all without a shard), in
/// scenario order.
pub fn selected(sweep: &Sweep, shard: Option<Shard>) -> Vec<&Scenario> {
    sweep
        .scenarios
        .iter()
        .filter(|s| shard.is_none_or(|sh| sh.contains(s.id)))
        .collect()
}

/// Publishes the merged pair so that a reader never sees a new runs file
/// beside an old switches file: both are written in full under temporary
/// names first (a full disk fails there, leaving the old pair as it was),
/// then renamed; if the second rename fails, the old runs file (kept as a
/// hard link) is put back. A crash between the two renames leaves the
/// parts, and `--resume` publishes the pair again.
fn publish_pair(
    (runs_path, runs): (&Path, &[RecordBatch]),
    (switches_path, nodes): (&Path, &[RecordBatch]),
    meta: &[(&str, String)],
) -> Result<()> {
    let tmp_runs = crate::output::temp_path(runs_path);
    let tmp_switches = crate::output::temp_path(switches_path);
    let backup = crate::output::temp_path(runs_path);
    let clean = || {
        let _ = std::fs::remove_file(&tmp_runs);
        let _ = std::fs::remove_file(&tmp_switches);
        let _ = std::fs::remove_file(&backup);
    };
    let result = (|| {
        write_batches(&tmp_runs, runs, meta)?;
        write_batches(&tmp_switches, nodes, meta)?;
        let had_runs = std::fs::hard_link(runs_path, &backup).is_ok();
        std::fs::rename(&tmp_runs, runs_path).map_err(|e| Error::io(runs_path, e))?;
        if let Err(e) = std::fs::rename(&tmp_switches, switches_path) {
            if had_runs {
                let _ = std::fs::rename(&backup, runs_path);
            } else {
                let _ = std::fs::remove_file(runs_path);
            }
            return Err(Error::io(switches_path, e));
        }
        Ok(())
    })();
    clean();
    result
}

/// Writes a scenario's parts, its failures part (with `failures` in the
/// spec) and switches part (empty for a failed scenario) first: a runs part
/// present means the others were written.
fn write_part(parts: &Path, sweep: &Sweep, o: &Outcome, threads: usize) -> Result<()> {
    let (runs, nodes, fails) = tables(&sweep.name, std::slice::from_ref(o), threads);
    let id = o.scenario.id;
    if sweep.has_failures() {
        fails.write(&parts.join(format!("{id}.failures.parquet")), &[])?;
    }
    nodes.write(&parts.join(format!("{id}.switches.parquet")), &[])?;
    runs.write(&parts.join(format!("{id}.runs.parquet")), &[])
}

/// Removes the temporaries [`crate::output::write_atomic`] leaves when a
/// process dies mid-write: in `dir`, those of `of` only (other shards may
/// be writing theirs), or all of them.
fn remove_temporaries(dir: &Path, of: Option<&Path>) -> Result<()> {
    let prefix = match of.and_then(Path::file_name) {
        Some(name) => format!(".{}.tmp-", name.to_string_lossy()),
        None => ".".to_string(),
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(());
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with(&prefix) && name.contains(".tmp-") {
            let p = e.path();
            std::fs::remove_file(&p).map_err(|err| Error::io(p, err))?;
        }
    }
    Ok(())
}

/// The summary rows of runs tables.
pub fn rows_of(batches: &[RecordBatch]) -> Vec<Row> {
    use arrow_array::cast::AsArray;
    use arrow_array::types::{Float64Type, UInt32Type, UInt64Type};
    use arrow_array::{Array, ArrayRef};
    let mut rows = Vec::new();
    for b in batches {
        let col =
            |n: &str| -> &ArrayRef { b.column_by_name(n).expect("runs tables have every column") };
        let s = |n: &str, i: usize| {
            let c = col(n).as_string::<i32>();
            c.is_valid(i).then(|| c.value(i).to_string())
        };
        let u64_ = |n: &str, i: usize| {
            let c = col(n).as_primitive::<UInt64Type>();
            c.is_valid(i).then(|| c.value(i))
        };
        let u32_ = |n: &str, i: usize| {
            let c = col(n).as_primitive::<UInt32Type>();
            c.is_valid(i).then(|| c.value(i))
        };
        let f64_ = |n: &str, i: usize| {
            let c = col(n).as_primitive::<Float64Type>();
            c.is_valid(i).then(|| c.value(i))
        };
        for i in 0..b.num_rows() {
            let secs = col("seconds_total").as_primitive::<Float64Type>();
            rows.push(Row {
                scenario_id: u64_("scenario_id", i).unwrap_or(0),
                topology: s("topology_grid", i).unwrap_or_default(),
                elp: s("elp", i).unwrap_or_default(),
                algo: s("algo", i).unwrap_or_default(),
                error: s("error", i),
                nodes: u64_("switches", i)
                    .zip(u64_("servers", i))
                    .map(|(a, b)| a + b),
                longest_elp: u32_("longest_elp", i),
                priorities: u32_("priorities", i),
                bound: u32_("priorities_lower_bound", i),
                acl_exact_max: u64_("acl_exact_max", i),
                rules_max: u64_("rules_max", i),
                seconds: secs.is_valid(i).then(|| secs.value(i)),
                failures: s("failures_spec", i).map(|spec| FailureRow {
                    spec,
                    routing: s("failures_routing", i).unwrap_or_default(),
                    trials: u32_("failures_trials", i).unwrap_or(0),
                    cbd_rate: f64_("failures_cbd_rate", i),
                    lossless_paths_median: f64_("failures_lossless_paths_median", i),
                    lossless_paths_min: f64_("failures_lossless_paths_min", i),
                    lossless_pairs_min: f64_("failures_lossless_pairs_min", i),
                    replanned_max: u32_("failures_replanned_priorities_max", i),
                    aware: u32_("failures_aware_priorities", i),
                }),
            });
        }
    }
    rows
}

/// Writes `runs.parquet` and `switches.parquet` for outcomes already in
/// memory (no parts, no resume); see [`execute`] for the sweep runner.
///
/// # Errors
/// I/O or Parquet errors naming the file.
pub fn write(dir: &Path, sweep: &Sweep, outcomes: &[Outcome], threads: usize) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let (runs, nodes, fails) = tables(&sweep.name, outcomes, threads);
    runs.write(&dir.join("runs.parquet"), &meta(sweep))?;
    nodes.write(&dir.join("switches.parquet"), &meta(sweep))?;
    if sweep.has_failures() {
        fails.write(&dir.join("failures.parquet"), &meta(sweep))?;
    }
    Ok(())
}
