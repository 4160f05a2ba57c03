//! `tagger sweep`, `merge` and `report`: batches of scenarios.

use super::args::{MemoryBudget, SweepArgs};
use super::{exit, progress};
use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use tagger::sweep::{self, Sweep};
use tagger::{output, render};

/// `tagger sweep`: run a spec's scenarios (or one shard of them), print the
/// summary tables and write the report.
pub fn sweep(a: SweepArgs) -> Result<ExitCode> {
    let (text, file) = match &a.spec {
        Some(p) => (
            tagger::generators::file::read_input(p)
                .with_context(|| format!("reading sweep spec {}", p.display()))?,
            p.display().to_string(),
        ),
        None => (
            sweep::DEFAULT_SPEC.to_string(),
            "<embedded default sweep>".to_string(),
        ),
    };
    let mut sw = Sweep::parse(&text, &file, a.max_scenarios)?;
    if let Some(MemoryBudget(b)) = a.budget.given() {
        sw.override_budget(b);
    }
    let jobs = a.jobs.unwrap_or_else(rayon::current_num_threads);
    if jobs == 0 {
        bail!("--jobs must be at least 1");
    }
    let selected = sweep::selected(&sw, a.shard).len();
    let jobs = {
        let j = sweep::effective_jobs(jobs, selected);
        if j < jobs.min(selected.max(1)) {
            errln!("{}", render::jobs_capped(jobs, j));
        }
        j
    };
    errln!(
        "{}",
        render::sweep_started(&sw, selected, a.shard, jobs, &a.out)
    );
    let bar = progress::bar(
        selected as u64,
        "{bar:40} {pos}/{len} scenarios, {msg} [{elapsed} < {eta}]",
    );
    let failed = AtomicUsize::new(0);
    let opts = sweep::Options {
        jobs,
        resume: a.resume,
        shard: a.shard,
    };
    let done = sweep::execute(&a.out, &sw, &opts, |o| {
        if o.result.is_err() {
            failed.fetch_add(1, Ordering::Relaxed);
        }
        bar.set_message(format!("{} failed", failed.load(Ordering::Relaxed)));
        bar.inc(1);
    })?;
    bar.finish_and_clear();
    out!("{}", render::sweep_done(&done));
    // A shard's tables are a slice: its report comes after `tagger merge`.
    if !a.no_report && a.shard.is_none() {
        let page = a.out.join("report.html");
        tagger::report::write(&a.out, &page)?;
        outln!("{}", render::report_written(&page));
    }
    Ok(exit(done.failed == 0))
}

/// `tagger merge`: a sweep's shards into one pair of tables.
pub fn merge(dir: &Path) -> Result<ExitCode> {
    let m = sweep::merge::merge(dir)?;
    outln!("{}", render::merged(&m));
    Ok(exit(m.failed == 0))
}

/// `tagger report`: a sweep directory as one HTML page.
pub fn report(dir: &Path, out: Option<PathBuf>) -> Result<ExitCode> {
    let out = out.unwrap_or_else(|| dir.join("report.html"));
    // The page may not replace the sweep's own files.
    let results: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.is_file() && p.extension().is_none_or(|x| x != "html"))
                .collect()
        })
        .unwrap_or_default();
    let inputs: Vec<(&str, &Path)> = results
        .iter()
        .map(|p| ("the sweep's", p.as_path()))
        .collect();
    output::check_distinct(&[("--out", out.as_path())], &[], &inputs)?;
    tagger::report::write(dir, &out)?;
    outln!("{}", render::wrote(&out));
    Ok(ExitCode::SUCCESS)
}
