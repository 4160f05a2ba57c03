//! One scenario: run it through the pipeline (and its failure what-if),
//! its outcome and per-switch rows; many on a pool of threads.

use super::outcome::{Failed, NodeRow, Outcome};
use super::spec::Scenario;
use crate::error::{Error, Result};
use crate::pipeline::{self, RunConfig};
use rayon::prelude::*;

/// Runs one scenario; an error becomes a failed outcome, never a panic.
pub fn run_scenario(s: &Scenario) -> Outcome {
    let cfg = RunConfig {
        topology: s.topology.clone(),
        elp: s.elp.clone(),
        algo: s.algo,
        cycle: s.cycle,
        memory_budget: s.memory_budget.or(s.default_budget),
        switch: s.switch.clone(),
        max_tcs: s.max_tcs.resolve(&s.switch),
        classes: s.classes,
        // A sweep measures plans, large ones too; fit says what a switch
        // holds.
        limits: Default::default(),
    };
    let mut failures = None;
    let mut growth = Vec::new();
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
                        tcs: r.tcs[v],
                        fits_tcs: f.map(|f| f.fits_tcs),
                    }
                })
                .collect();
            let grown = match &s.growth {
                None => Ok(Vec::new()),
                Some(g) => crate::update::grow_path(
                    &r.topo,
                    &r.rules,
                    &s.elp,
                    g,
                    s.max_tcs.resolve(&s.switch),
                    &crate::tagging::Control::new(),
                ),
            };
            match (what_if(s, &r), grown) {
                (Err(e), _) => (Err(Failed::Failures(e)), Vec::new()),
                (_, Err(e)) => (Err(Failed::Growth(e)), Vec::new()),
                (Ok(report), Ok(rows)) => {
                    if let Some((report, secs)) = report {
                        r.summary.seconds.failures = secs;
                        r.summary.seconds.total += secs;
                        failures = Some(report);
                    }
                    growth = rows;
                    (Ok(r.summary), nodes)
                }
            }
        }
        Err(e) => (Err(Failed::Run(e)), Vec::new()),
    };
    Outcome {
        scenario: s.clone(),
        result,
        nodes,
        failures,
        growth,
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

/// Runs scenarios on a pool of `jobs` threads without keeping their
/// outcomes, calling `each` as each finishes.
pub(super) fn for_each(
    scenarios: &[Scenario],
    jobs: usize,
    each: impl Fn(&Outcome) + Sync,
) -> Result<()> {
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
        .map_err(|cause| Error::Threads { jobs, cause })
}
