//! Batch sweeps: run every scenario of a spec in parallel, verify each, and
//! write `runs.parquet` (one row per scenario) and `switches.parquet` (one row
//! per scenario and node).
//!
//! `spec.rs` parses and expands a sweep spec, `scenario.rs` runs one
//! scenario, `tables.rs` declares the tables and builds their rows,
//! `store.rs` owns the output directory (lock, part files, publishing), and
//! [`execute`] below ties them together; `merge.rs` combines shards.

pub mod merge;
mod outcome;
mod scenario;
pub mod spec;
mod store;
mod tables;

pub use outcome::{Failed, NodeRow, Outcome};
pub use scenario::{JOBS_PER_CORE, effective_jobs, run_all, run_scenario};
pub use spec::{DEFAULT_MAX_SCENARIOS, Scenario, Sweep, TcLimit};
pub use store::write;
pub use tables::{
    FailureRow, Row, failures_columns, growth_columns, rows_of, runs_columns, schema,
    switches_columns,
};

use crate::error::{Error, Result};
use crate::output::parquet::{Table, read_batches, write_batches};
use crate::output::record::ColumnDef;
use arrow_array::RecordBatch;
use scenario::for_each;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Mutex;
use store::{lock, meta, publish_pair, remove_temporaries, write_part};

/// The sweep that `tagger sweep` runs when given no spec.
pub const DEFAULT_SPEC: &str = include_str!("../../datasets/default.toml");

/// The engine version written into every output's metadata.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

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
    /// `growth.parquet` (or the shard's), when the spec has growth paths.
    pub growth_path: Option<PathBuf>,
    /// One line per scenario of the final table, for [`crate::render::sweep_summary`].
    pub rows: Vec<Row>,
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
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir.to_path_buf(), e))?;
    let lock_file = lock(dir, &tag, "sweep")?;
    let selected = selected(sweep, opts.shard);
    let (runs_path, switches_path) = match opts.shard {
        None => (dir.join("runs.parquet"), dir.join("switches.parquet")),
        Some(sh) => (
            dir.join(format!("runs-{}.parquet", sh.tag())),
            dir.join(format!("switches-{}.parquet", sh.tag())),
        ),
    };
    let extra_path = |table: &str| match opts.shard {
        None => dir.join(format!("{table}.parquet")),
        Some(sh) => dir.join(format!("{table}-{}.parquet", sh.tag())),
    };
    let extras = (
        sweep.has_failures().then(|| extra_path("failures")),
        sweep.has_growth().then(|| extra_path("growth")),
    );
    // A finished sweep keeps no parts: resumed (a requeued job), it finds
    // its tables published for this very spec and runs nothing.
    if opts.resume
        && !parts.join("spec.toml").exists()
        && let Some(done) = published(sweep, opts.shard, &runs_path, &switches_path, &extras)?
    {
        release(dir, &tag, lock_file);
        return Ok(Done {
            selected: selected.len(),
            ran: 0,
            skipped: selected.len(),
            ..done
        });
    }
    let resuming = start_parts(dir, &parts, sweep, opts.resume)?;
    // Temporaries of a run that died (its parts, its last merge) go first.
    remove_temporaries(&parts, None)?;
    remove_temporaries(dir, Some(&runs_path))?;
    remove_temporaries(dir, Some(&switches_path))?;
    let done = if resuming {
        finished(&parts, sweep, &selected)?
    } else {
        BTreeSet::new()
    };
    let todo: Vec<Scenario> = selected
        .iter()
        .filter(|s| !done.contains(&s.id))
        .map(|s| (*s).clone())
        .collect();
    run_parts(&parts, sweep, &todo, opts.jobs, progress)?;
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
    publish_pair(
        (&runs_path, &runs),
        (&switches_path, &nodes),
        &meta(sweep, opts.shard),
    )?;
    // The failure trials and growth steps after the pair: a reader of
    // them finds the runs they join already published.
    let extra = Extra {
        dir,
        parts: &parts,
        selected: &selected,
        meta: meta(sweep, opts.shard),
    };
    let failures_path = extra.publish("failures", extras.0.as_deref(), failures_columns())?;
    let growth_path = extra.publish("growth", extras.1.as_deref(), growth_columns())?;
    let rows = rows_of(&runs)?;
    // Everything is published: the parts and the lock are not needed (a
    // resume finds the tables instead), and a finished directory holds
    // only what a reader wants.
    std::fs::remove_dir_all(&parts).map_err(|e| Error::io(parts.clone(), e))?;
    let _ = std::fs::remove_dir(dir.join(".parts"));
    release(dir, &tag, lock_file);
    Ok(Done {
        selected: selected.len(),
        ran: todo.len(),
        skipped: selected.len() - todo.len(),
        failed: rows.iter().filter(|r| r.error.is_some()).count(),
        runs_path,
        switches_path,
        failures_path,
        growth_path,
        rows,
    })
}

/// Readies the parts directory: with `resume` and parts of this spec there,
/// keeps them (returns true); parts of another spec are an error; else
/// starts it afresh, stamped with the spec's text.
fn start_parts(dir: &Path, parts: &Path, sweep: &Sweep, resume: bool) -> Result<bool> {
    let io = |p: &Path| {
        let p = p.to_path_buf();
        move |e| Error::io(p, e)
    };
    let stamp = parts.join("spec.toml");
    let resuming = resume && stamp.exists();
    if resuming {
        let old = std::fs::read_to_string(&stamp).map_err(io(&stamp))?;
        if old != sweep.text {
            return Err(different_spec(dir));
        }
    } else {
        if parts.exists() {
            std::fs::remove_dir_all(parts).map_err(io(parts))?;
        }
        std::fs::create_dir_all(parts).map_err(io(parts))?;
        crate::output::write_string(&stamp, &sweep.text)?;
    }
    Ok(resuming)
}

/// The scenarios of `selected` whose parts are all there and readable (the
/// others run again).
fn finished(parts: &Path, sweep: &Sweep, selected: &[&Scenario]) -> Result<BTreeSet<u64>> {
    let names: BTreeSet<String> = std::fs::read_dir(parts)
        .map_err(|e| Error::io(parts.to_path_buf(), e))?
        .filter_map(|e| Some(e.ok()?.file_name().to_str()?.to_string()))
        .collect();
    Ok(selected
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
            if sweep.has_growth() {
                want.push(format!("{id}.growth.parquet"));
            }
            want.iter()
                .all(|n| names.contains(n) && crate::output::parquet::readable(&parts.join(n)))
        })
        .collect())
}

/// Runs `todo`, `jobs` at a time, each scenario's rows written as part
/// files the moment it finishes.
fn run_parts(
    parts: &Path,
    sweep: &Sweep,
    todo: &[Scenario],
    jobs: usize,
    progress: impl Fn(&Outcome) + Sync,
) -> Result<()> {
    // A part that is not a regular file (a FIFO, a device) would take the
    // rerun's write in place, and a FIFO would block it: it goes first.
    // The parts directory is the sweep's own, under its lock.
    for s in todo {
        for table in ["runs", "switches", "failures", "growth"] {
            let p = parts.join(format!("{}.{table}.parquet", s.id));
            if p.symlink_metadata().is_ok_and(|m| !m.is_file()) {
                std::fs::remove_file(&p).map_err(|e| Error::io(p.clone(), e))?;
            }
        }
    }
    let errors = Mutex::new(Vec::new());
    let threads = rayon::current_num_threads();
    for_each(todo, effective_jobs(jobs, todo.len()), |o| {
        if let Err(e) = write_part(parts, sweep, o, threads) {
            errors
                .lock()
                .expect("no panics while holding the lock")
                .push(e);
        }
        progress(o);
    })?;
    match errors
        .into_inner()
        .expect("no panics while holding the lock")
        .into_iter()
        .next()
    {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// The tables beside runs and switches (failure trials, growth steps),
/// merged from the parts.
struct Extra<'a> {
    dir: &'a Path,
    parts: &'a Path,
    selected: &'a [&'a Scenario],
    meta: Vec<(&'static str, String)>,
}

impl Extra<'_> {
    /// `table`'s parts merged and published at `path`, where the sweep
    /// has the table (`path` given).
    fn publish(
        &self,
        table: &str,
        path: Option<&Path>,
        columns: Vec<ColumnDef>,
    ) -> Result<Option<PathBuf>> {
        let Some(path) = path else {
            return Ok(None);
        };
        remove_temporaries(self.dir, Some(path))?;
        let mut batches: Vec<RecordBatch> = Vec::new();
        for s in self.selected {
            batches.extend(read_batches(
                &self.parts.join(format!("{}.{table}.parquet", s.id)),
            )?);
        }
        batches.retain(|b| b.num_rows() > 0);
        if batches.is_empty() {
            batches.push(Table::with_columns(&columns).into_batch(path)?);
        }
        write_batches(path, &batches, &self.meta)?;
        Ok(Some(path.to_path_buf()))
    }
}

/// A sweep already finished into `dir`: every table it writes is there,
/// stamped with this spec (and shard), so a resume has nothing to do. Its
/// rows, read back; `None` where any table is missing or from another
/// spec, and the sweep runs.
fn published(
    sweep: &Sweep,
    shard: Option<Shard>,
    runs_path: &Path,
    switches_path: &Path,
    extras: &(Option<PathBuf>, Option<PathBuf>),
) -> Result<Option<Done>> {
    let want = meta(sweep, shard);
    let tables = [
        Some(runs_path),
        Some(switches_path),
        extras.0.as_deref(),
        extras.1.as_deref(),
    ];
    for path in tables.into_iter().flatten() {
        if !path.is_file() {
            return Ok(None);
        }
        let kv = crate::output::parquet::read_metadata(path)?;
        // Tables of another spec: a resume is refused, as with its parts.
        let spec = crate::output::parquet::meta_value(&kv, "tagger.spec");
        if path == runs_path && spec.is_some_and(|t| t != sweep.text) {
            return Err(different_spec(runs_path));
        }
        let same = want
            .iter()
            .filter(|(k, _)| *k != "tagger.version")
            .all(|(k, v)| crate::output::parquet::meta_value(&kv, k) == Some(v.as_str()));
        if !same {
            return Ok(None);
        }
    }
    let runs = read_batches(runs_path)?;
    let rows = rows_of(&runs)?;
    Ok(Some(Done {
        selected: 0,
        ran: 0,
        skipped: 0,
        failed: rows.iter().filter(|r| r.error.is_some()).count(),
        runs_path: runs_path.to_path_buf(),
        switches_path: switches_path.to_path_buf(),
        failures_path: extras.0.clone(),
        growth_path: extras.1.clone(),
        rows,
    }))
}

/// A resume refused: `what` (the output directory, or its published
/// tables) holds results of another spec.
fn different_spec(what: &Path) -> Error {
    Error::SweepSpec {
        file: what.display().to_string(),
        location: "resume".into(),
        cause: Box::new(
            "the directory holds results of a different sweep spec; start over without resuming"
                .into(),
        ),
    }
}

/// Removes `dir`'s lock file for `tag`, then releases the lock: a process
/// that opened the file meanwhile still finds it locked and is refused,
/// and the next one creates it afresh.
fn release(dir: &Path, tag: &str, lock: std::fs::File) {
    let _ = std::fs::remove_file(dir.join(format!(".lock-{tag}")));
    drop(lock);
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
