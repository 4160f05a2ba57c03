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
            tagger::topo::file::read_input(p)
                .with_context(|| format!("reading sweep spec {}", p.display()))?,
            p.display().to_string(),
        ),
        None => (
            sweep::DEFAULT_SPEC.to_string(),
            "<embedded default sweep>".to_string(),
        ),
    };
    let mut sw = Sweep::parse(&text, &file, a.max_scenarios)?;
    if let Some(MemoryBudget(b)) = a.memory_budget {
        for s in &mut sw.scenarios {
            s.memory_budget = b;
            s.default_budget = None;
        }
    }
    let jobs = a.jobs.unwrap_or_else(rayon::current_num_threads);
    if jobs == 0 {
        bail!("--jobs must be at least 1");
    }
    let selected = sweep::selected(&sw, a.shard).len();
    let jobs = {
        let j = sweep::effective_jobs(jobs, selected);
        if j < jobs.min(selected.max(1)) {
            errln!(
                "--jobs {jobs} capped at {j} ({} per core: more would only compete for cores and memory)",
                sweep::JOBS_PER_CORE
            );
        }
        j
    };
    errln!(
        "sweep '{}': {} scenarios{}, {} at a time, output in {}",
        sw.name,
        selected,
        a.shard.map_or(String::new(), |s| format!(
            " (shard {}/{} of {})",
            s.index,
            s.count,
            sw.scenarios.len()
        )),
        jobs,
        a.out.display()
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
    out!("{}", render::sweep_summary(&done.rows));
    let failures = render::sweep_failures(&done.rows);
    if !failures.is_empty() {
        outln!(
            "\nfailure what-if (lossless shares of routes under the installed rules; pairs% is the worst trial):"
        );
        out!("{failures}");
    }
    outln!(
        "{} scenarios: {} ok, {} failed ({} run now, {} resumed); wrote {} and {}{}",
        done.selected,
        done.selected - done.failed,
        done.failed,
        done.ran,
        done.skipped,
        done.runs_path.display(),
        done.switches_path.display(),
        [&done.failures_path, &done.growth_path]
            .iter()
            .filter_map(|p| p.as_ref())
            .map(|p| format!(" and {}", p.display()))
            .collect::<String>()
    );
    // A shard's tables are a slice: its report comes after `tagger merge`.
    if !a.no_report && a.shard.is_none() {
        let page = a.out.join("report.html");
        tagger::report::write(&a.out, &page)?;
        outln!("report: {}", page.display());
    }
    Ok(exit(done.failed == 0))
}

/// `tagger merge`: a sweep's shards into one pair of tables.
pub fn merge(dir: &Path) -> Result<ExitCode> {
    let m = sweep::merge::merge(dir)?;
    outln!(
        "{} shards, {} scenarios ({} failed): wrote {} and {}{}",
        m.shards,
        m.runs,
        m.failed,
        m.runs_path.display(),
        m.switches_path.display(),
        [&m.failures_path, &m.growth_path]
            .iter()
            .filter_map(|p| p.as_ref())
            .map(|p| format!(" and {}", p.display()))
            .collect::<String>()
    );
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
    outln!("wrote {}", out.display());
    Ok(ExitCode::SUCCESS)
}
