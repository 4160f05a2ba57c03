//! `tagger run`, `export`, `verify`, `failures` and `update`: plan, install,
//! check and change.

use super::args::{
    ExportArgs, FailuresArgs, MemoryBudget, PathsOutArgs, PlanOutArgs, RunArgs, TopologyArg,
    UpdateArgs, VerifyArgs,
};
use super::{check_outputs, claim_stdout, exit, progress, write_rules, write_text};
use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use tagger::budget::Budget;
use tagger::elp::{ElpSet, enumerate};
use tagger::output::{Staging, check_distinct};
use tagger::pipeline::{self, RunConfig};
use tagger::rules::RuleSet;
use tagger::tagging::{Algo, Control};
use tagger::{render, sonic};

/// The topology of `export` and `verify`, within the machine's default
/// memory budget.
fn read_topology(arg: &TopologyArg) -> Result<tagger::Topology> {
    let budget = Budget::new(MemoryBudget::resolve(None));
    Ok(pipeline::build_topology(arg.spec(), &budget)?)
}

/// The ELP of a path file (`--paths`), if given.
fn read_paths(topo: &tagger::Topology, paths: Option<&Path>) -> Result<Option<ElpSet>> {
    Ok(paths.map(|p| ElpSet::from_path_file(topo, p)).transpose()?)
}

/// Charges `copies` exports of `rules` (beside the rules themselves) to a
/// memory budget of `limit` bytes before any is built.
fn export_budget(
    topo: &tagger::Topology,
    rules: &RuleSet,
    limit: Option<u64>,
    copies: u64,
) -> Result<u64> {
    let budget = tagger::budget::Budget::new(limit);
    budget.hold("rules", rules.heap_bytes())?;
    let bytes = sonic::estimate_bytes(topo, rules).saturating_mul(copies);
    budget.check("export", bytes)?;
    Ok(bytes)
}

/// `tagger run`: the whole pipeline on one scenario, its outputs written
/// all or nothing once everything that can refuse the plan has run.
pub fn run(a: RunArgs) -> Result<ExitCode> {
    let out = run_guard(&a)?;
    let algo = match a.time_limit {
        Some(ms) => a.algo.with_time_limit(ms).context("--time-limit")?,
        None => a.algo,
    };
    let switch = a.switch.profile()?;
    let cfg = RunConfig {
        topology: a.topology.into_spec(),
        elp: a.elp,
        algo,
        cycle: a.cycle,
        memory_budget: a.budget.bytes(),
        max_tcs: a.switch.max_tcs(&switch),
        switch,
        classes: a.classes,
        limits: a.limits.limits(),
    };
    // Checked before any work, like every other option.
    let export_opts = a
        .export
        .as_ref()
        .map(|_| {
            a.mapping.options(
                cfg.switch.clone(),
                a.fit.exports_must_fit(),
                Some(cfg.elp.text.clone()),
            )
        })
        .transpose()?;
    let mut r = plan_watched(&cfg)?;
    for w in &r.elp.warnings {
        errln!("warning: {w}");
    }
    let (covered, total) = (
        r.summary.figures.pairs_covered,
        r.summary.figures.pairs_total,
    );
    if a.coverage.require_coverage && (covered < total || !r.elp.warnings.is_empty()) {
        say!(out, "{}", render::run(&r, pipeline::peak_rss_bytes(), None));
        bail!(
            "--require-coverage: {}",
            r.elp.warnings.first().cloned().unwrap_or_else(|| format!(
                "the ELP covers {covered} of the {total} ordered endpoint pairs; the others' traffic is lossy"
            ))
        );
    }
    if a.fit.strict()
        && let Err(e) = r.summary.figures.require_fit()
    {
        say!(out, "{}", render::run(&r, pipeline::peak_rss_bytes(), None));
        return Err(e).context("--require-fit");
    }
    // Everything that can refuse the plan has run; the outputs are
    // written all or nothing.
    let export = match (&a.export, &export_opts) {
        (Some(t), Some(opts)) => {
            let bytes = export_budget(&r.topo, &r.rules, r.summary.memory_budget_bytes, 1)?;
            // The export is built beside everything the run holds: the
            // run's estimate bounds that.
            r.summary.memory_estimate_bytes = r.summary.memory_estimate_bytes.saturating_add(bytes);
            Some((sonic::build(&r.topo, &r.rules, t.format, opts)?, t, opts))
        }
        _ => None,
    };
    let ex = export.as_ref().map(|(ex, t, _)| (ex, *t));
    write_run(&a.plan_out, &a.paths, &r, ex)?;
    if let Some((ex, t, opts)) = &export
        && !a.json.on
    {
        say!(
            out,
            "{}",
            render::export(ex, t.format, &opts.profile.name, &t.dir)
        );
    }
    if a.json.on {
        let mut v = serde_json::to_value(&r.summary)?;
        v["peak_rss_bytes"] = pipeline::peak_rss_bytes().into();
        say!(out, "{}", serde_json::to_string_pretty(&v)?);
    } else {
        let ex = export.as_ref().map(|(ex, _, _)| ex);
        say!(out, "{}", render::run(&r, pipeline::peak_rss_bytes(), ex));
        let files = render::written(&[
            ("tagger-topology/1", a.plan_out.topology_out.as_deref()),
            ("tagger-rules/1", a.plan_out.rules_out.as_deref()),
            ("paths", a.paths.paths_out.as_deref()),
        ]);
        if !files.is_empty() {
            say!(out, "{files}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `run`'s outputs that would overwrite each other or an input are refused
/// before any work, and so is an export directory that holds something
/// else.
fn run_guard(a: &RunArgs) -> Result<super::Out> {
    let files = [
        ("--topology-out", a.plan_out.topology_out.as_deref()),
        ("--rules-out", a.plan_out.rules_out.as_deref()),
        ("--paths-out", a.paths.paths_out.as_deref()),
    ];
    let out = claim_stdout(&files, a.json.on)?;
    let inputs: Vec<(&str, PathBuf)> = a
        .topology
        .file()
        .map(|p| ("TOPOLOGY", p))
        .into_iter()
        .chain(a.elp.files().map(|p| ("--elp", p.to_path_buf())))
        .chain(a.switch.file().map(|p| ("--switch", p)))
        .collect();
    let dirs: Vec<(&str, &Path)> = a
        .export
        .iter()
        .map(|t| ("--export", t.dir.as_path()))
        .collect();
    check_outputs(&files, &dirs, &inputs)?;
    if let Some(t) = &a.export {
        sonic::replaceable(&t.dir)?;
    }
    Ok(out)
}

/// The pipeline under `cfg`; a search shows its progress and stops
/// early, with its best verified plan, on a signal.
fn plan_watched(cfg: &RunConfig) -> tagger::Result<pipeline::RunResult> {
    if matches!(
        cfg.algo,
        Algo::Search(_) | Algo::Exact { .. } | Algo::Auto { .. }
    ) {
        let (control, bar) = progress::watch_search();
        let r = pipeline::run_with(cfg, &control);
        // Past the search, a signal removes the temporaries and exits
        // (writing to a pipe nobody reads would never see a stop request).
        progress::search_over();
        bar.finish_and_clear();
        r
    } else {
        pipeline::run_with(cfg, &Control::new())
    }
}

/// `run`'s files, all or nothing: the topology, the rules, the export and
/// the paths asked for.
fn write_run(
    plan_out: &PlanOutArgs,
    paths: &PathsOutArgs,
    r: &pipeline::RunResult,
    export: Option<(&sonic::Export, &sonic::Target)>,
) -> Result<()> {
    let mut staging = Staging::default();
    if let Some(p) = &plan_out.topology_out {
        let text = tagger::generators::file::to_json(&r.topo);
        staging.file(p, move |w| write_text(w, p, &text));
    }
    if let Some(p) = &plan_out.rules_out {
        let rules = &r.rules;
        staging.file(p, move |w| write_rules(w, p, rules));
    }
    if let Some((ex, t)) = export {
        staging.dir(&t.dir, sonic::replaceable, |tmp| {
            sonic::write_files(tmp, ex)
        });
    }
    if let Some(p) = &paths.paths_out {
        let (topo, elp, max) = (&r.topo, &r.elp, paths.max_paths);
        staging.file(p, move |w| {
            enumerate::write_paths(w, topo, elp, tagger::output::shown(p), max)
        });
    }
    staging
        .commit()
        .with_context(|| "writing the run's outputs (none was changed)")?;
    Ok(())
}

/// `tagger failures`: plan the scenario (or take the installed rules),
/// then replay it under failures.
pub fn failures(a: FailuresArgs) -> Result<ExitCode> {
    let out = claim_stdout(&[("--out", a.out.as_deref())], a.json.on)?;
    let inputs: Vec<(&str, PathBuf)> = a
        .topology
        .file()
        .map(|p| ("TOPOLOGY", p))
        .into_iter()
        .chain(a.elp.files().map(|p| ("--elp", p.to_path_buf())))
        .chain(a.fail.file().map(|p| ("--fail", p.to_path_buf())))
        .chain(a.rules.iter().map(|p| ("--rules", p.clone())))
        .chain(a.switch.file().map(|p| ("--switch", p)))
        .collect();
    check_outputs(&[("--out", a.out.as_deref())], &[], &inputs)?;
    let switch = a.switch.profile()?;
    let budget = Budget::new(a.budget.bytes());
    let (topo, rules, installed, plan_json) = match &a.rules {
        Some(path) => {
            let topo = pipeline::build_topology(a.topology.spec(), &budget)?;
            let rules = RuleSet::read(path)?;
            let elp = pipeline::build_elp(&topo, &a.elp, &budget)?;
            let installed = tagger::failures::Installed::of_rules(&topo, &rules, &elp, path)?;
            let v = serde_json::to_value(&installed)?;
            (topo, rules, installed, v)
        }
        None => {
            let cfg = RunConfig {
                topology: a.topology.into_spec(),
                elp: a.elp.clone(),
                algo: a.algo,
                cycle: a.cycle,
                memory_budget: a.budget.bytes(),
                switch,
                max_tcs: a.switch.max_tcs.and_then(|m| m.0),
                classes: 1,
                limits: Default::default(),
            };
            let r = pipeline::run(&cfg)?;
            let installed = tagger::failures::Installed::of(&r.summary);
            let v = serde_json::to_value(&r.summary)?;
            (r.topo, r.rules, installed, v)
        }
    };
    // In the order given, each model once (`both` is converged, local).
    let mut routing: Vec<tagger::failures::Routing> = Vec::new();
    for r in a.routing.iter().flat_map(|r| &r.0) {
        if !routing.contains(r) {
            routing.push(*r);
        }
    }
    let plan = tagger::failures::Plan {
        topo: &topo,
        elp: &a.elp,
        rules: &rules,
        algo: a.replan_algo,
        cycle: a.cycle,
    };
    let opts = tagger::failures::Options {
        replan: !a.no_replan,
        aware: !a.no_aware,
    };
    let t0 = std::time::Instant::now();
    let bar = progress::bar(0, "{bar:40} {pos}/{len} trial steps [{elapsed} < {eta}]");
    let reports = tagger::failures::what_if_with_progress(
        &plan,
        &a.fail,
        &routing,
        opts,
        &budget,
        &|done, total| {
            bar.set_length(total);
            bar.set_position(done);
        },
    );
    bar.finish_and_clear();
    let reports = reports?;
    let secs = t0.elapsed().as_secs_f64();
    if let Some(p) = &a.out {
        tagger::failures::write_trials(p, &reports, &installed)?;
    }
    if a.json.on {
        let v = serde_json::json!({
            "plan": plan_json,
            "failures": reports,
            "seconds": secs,
        });
        say!(out, "{}", serde_json::to_string_pretty(&v)?);
    } else {
        say!(out, "{}", render::failures(&installed, &reports, secs));
        let files = render::written(&[("failures Parquet", a.out.as_deref())]);
        if !files.is_empty() {
            say!(out, "{files}");
        }
    }
    Ok(exit(reports.iter().all(|x| x.figures.verified)))
}

/// `tagger export`: verify a rule set, then write it per switch.
pub fn export(a: ExportArgs) -> Result<ExitCode> {
    let topology_file = a.topology.file();
    let mut inputs: Vec<(&str, &Path)> = topology_file
        .iter()
        .map(|p| ("TOPOLOGY", p.as_path()))
        .collect();
    inputs.push(("--rules", a.rules.as_path()));
    if let Some(p) = &a.paths {
        inputs.push(("--paths", p.as_path()));
    }
    let profile_file = a.switch.file();
    inputs.extend(profile_file.iter().map(|p| ("--switch", p.as_path())));
    check_distinct(&[], &[("--out", a.out.as_path())], &inputs)?;
    sonic::replaceable(&a.out)?;
    let opts = a.mapping.options(
        a.switch.profile()?,
        a.fit.exports_must_fit(),
        a.elp.as_ref().map(|e| e.text.clone()),
    )?;
    let topo = read_topology(&a.topology)?;
    tagger::capacity::check(&topo, &opts.profile)?;
    let plan = RuleSet::read(&a.rules)?;
    // Only a verified plan leaves: the same verifier as `tagger verify`,
    // with the same limits and paths (or ELP).
    let elp = match &a.elp {
        Some(spec) => Some(ElpSet::build(&topo, spec).context("--elp")?),
        None => read_paths(&topo, a.paths.as_deref())?,
    };
    let report = tagger::verify::verify_within(&topo, &plan, elp.as_ref(), &a.limits.limits());
    if !report.ok() {
        bail!(
            "{}: not exported, nothing written: {report}",
            a.rules.display()
        );
    }
    let format = a.format.into();
    export_budget(&topo, &plan, MemoryBudget::resolve(None), 1)?;
    let ex = sonic::build(&topo, &plan, format, &opts)?;
    sonic::write(&a.out, &ex)?;
    say!(
        super::Out::default(),
        "{}",
        render::export(&ex, format, &opts.profile.name, &a.out)
    );
    Ok(ExitCode::SUCCESS)
}

/// `tagger verify`: the independent verifier on a rule set or an export.
/// An export is read back whole (every packet at every switch) and its
/// recorded ELP replayed unless --paths or --elp says otherwise.
pub fn verify(a: VerifyArgs) -> Result<ExitCode> {
    let topo = read_topology(&a.topology)?;
    let out = super::Out::default();
    let (rules, recorded, limits) = match (&a.rules, &a.exported) {
        (Some(r), _) => (RuleSet::read(r)?, None, a.limits.limits()),
        (None, Some(d)) => {
            let back = sonic::read(&topo, d)?;
            let limits = match &back.profile {
                Some(p) => a.limits.limits_or(p.lossless_queues),
                None => a.limits.limits(),
            };
            for m in &back.misfits {
                say!(out, "does not fit (exported with --require-fit off): {m}");
            }
            (back.rules, back.elp, limits)
        }
        (None, None) => bail!("give --rules or --exported"),
    };
    let elp = match (&a.elp, &a.paths, &recorded) {
        (Some(spec), _, _) => Some(ElpSet::build(&topo, spec).context("--elp")?),
        (None, Some(p), _) => read_paths(&topo, Some(p))?,
        (None, None, Some(text)) => {
            let spec = tagger::elp::ElpSpec::parse(text)
                .with_context(|| format!("the ELP the export records ({text})"))?;
            Some(
                ElpSet::build(&topo, &spec)
                    .with_context(|| format!("the ELP the export records ({text})"))?,
            )
        }
        (None, None, None) => None,
    };
    let mut report = tagger::verify::verify_within(&topo, &rules, elp.as_ref(), &limits);
    report.read_back = a.exported.is_some();
    say!(out, "{report}");
    Ok(exit(report.ok()))
}

/// `tagger update`: a new plan extending the installed one, and a schedule
/// with every state verified; outputs written all or nothing.
pub fn update(a: UpdateArgs) -> Result<ExitCode> {
    let out = update_guard(&a)?;
    // The switch and mapping options are checked whatever else is given:
    // a typo fails before any work, not only with --export-steps.
    let profile = a.switch.profile()?;
    let export_opts = a.mapping.options(
        profile.clone(),
        a.fit.exports_must_fit(),
        Some(a.elp.text.clone()),
    )?;
    let export_opts = a.export_steps.as_ref().map(|_| export_opts);
    let old = a.topology.spec().build().context("TOPOLOGY")?;
    let installed = RuleSet::read(&a.rules)?;
    let new = tagger::update::resolve_to(&old, &a.to).context("--to")?;
    let target = match &a.new_rules {
        Some(p) => tagger::update::Target::Given(RuleSet::read(p)?),
        None => tagger::update::Target::Extend,
    };
    let req = tagger::update::Request {
        old: &old,
        installed: &installed,
        new: &new,
        elp: &a.elp,
        new_elp: a.new_elp.as_ref(),
        target,
        limits: a.limits.limits(),
        compare_scratch: !a.no_compare,
        order: a.order.clone(),
        search_budget: a.search_budget,
        near: if a.near {
            tagger::update::NearChoice::Require
        } else {
            tagger::update::NearChoice::Refused
        },
        max_tcs: a.switch.max_tcs(&profile),
        profile: Some(&profile),
    };
    let u = tagger::update::plan(&req, &Control::new())?;
    if a.near && u.near.is_none() {
        eprintln!(
            "note: --near: no plan near the installed one is offered for this change (the summary's near line says why, where one was searched for); the new plan is the update's own"
        );
    }
    if !u.ok() {
        bail!(
            "the new plan or a step did not verify: nothing written\n{}",
            render::update(&u, old.name(), new.name(), &a.elp.text)
        );
    }
    let export = match (&a.export_steps, &export_opts) {
        (Some(t), Some(opts)) => {
            tagger::capacity::check(&u.correspondence.union, &opts.profile)?;
            // What runs and the window's exports, side by side.
            let union = &u.correspondence.union;
            export_budget(union, &u.plan, MemoryBudget::resolve(None), 3)?;
            Some((t, opts))
        }
        _ => None,
    };
    let elp = match &a.new_elp {
        Some(n) if n.text != a.elp.text => format!("{} -> {}", a.elp.text, n.text),
        _ => a.elp.text.clone(),
    };
    let summary = u.to_json(old.name(), new.name(), &elp);
    let names = (old.name(), new.name(), elp.as_str());
    let exports = write_update(&a, &u, (&old, &new), names, &summary, export)?;
    if a.json.on {
        let mut summary = summary;
        if let Some((ex, _)) = &exports {
            summary["export_dirs"] = ex.iter().map(|x| x.dir.clone()).collect();
        }
        say!(out, "{}", serde_json::to_string_pretty(&summary)?);
    } else {
        say!(out, "{}", render::update(&u, old.name(), new.name(), &elp));
        if let Some((ex, t)) = &exports {
            say!(out, "{}", render::export_steps(&u, ex, &t.dir));
        }
        let files = render::written(&[
            (
                "tagger-rules/1, the new plan",
                a.plan_out.rules_out.as_deref(),
            ),
            (
                "tagger-topology/1, the new topology",
                a.plan_out.topology_out.as_deref(),
            ),
            ("the steps' entries", a.steps_out.as_deref()),
            ("update Parquet", a.out.as_deref()),
        ]);
        if !files.is_empty() {
            say!(out, "{files}");
        }
    }
    Ok(exit(u.ok()))
}

/// `update`'s outputs that would overwrite each other or an input, or a
/// directory holding something else, are refused before any work.
fn update_guard(a: &UpdateArgs) -> Result<super::Out> {
    let files = [
        ("--rules-out", a.plan_out.rules_out.as_deref()),
        ("--topology-out", a.plan_out.topology_out.as_deref()),
        ("--out", a.out.as_deref()),
    ];
    let out = claim_stdout(&files, a.json.on)?;
    if a.out.as_deref() == Some(Path::new("-")) {
        bail!("--out writes Parquet: give a file, not -");
    }
    let inputs: Vec<(&str, PathBuf)> = a
        .topology
        .file()
        .map(|p| ("TOPOLOGY", p))
        .into_iter()
        .chain([("--rules", a.rules.clone())])
        .chain(a.new_rules.clone().map(|p| ("--new-rules", p)))
        .chain(tagger::update::to_file(&a.to).map(|p| ("--to", p)))
        .chain(a.elp.files().map(|p| ("--elp", p.to_path_buf())))
        .chain(
            a.new_elp
                .iter()
                .flat_map(|e| e.files().map(|p| ("--new-elp", p.to_path_buf()))),
        )
        .chain(a.switch.file().map(|p| ("--switch", p)))
        .collect();
    let dirs: Vec<(&str, &Path)> = a
        .steps_out
        .iter()
        .map(|d| ("--steps-out", d.as_path()))
        .chain(
            a.export_steps
                .iter()
                .map(|t| ("--export-steps", t.dir.as_path())),
        )
        .collect();
    check_outputs(&files, &dirs, &inputs)?;
    for (_, d) in &dirs {
        sonic::replaceable_steps(d)?;
    }
    Ok(out)
}

/// `update`'s files, all or nothing: the new plan and topology, the steps,
/// their exports and the step table.
///
/// The steps' exports are made as their directory is written, each
/// directory written as soon as it is complete (a SONiC one holds three
/// files per switch): returned without their switch files, with the
/// target they went to.
fn write_update<'t>(
    a: &UpdateArgs,
    u: &tagger::update::Update,
    (old, new): (&tagger::Topology, &tagger::Topology),
    (old_name, new_name, elp): (&str, &str, &str),
    summary: &serde_json::Value,
    export: Option<(&'t sonic::Target, &sonic::Options)>,
) -> Result<Option<(Vec<tagger::update::StepExport>, &'t sonic::Target)>> {
    let written = std::cell::RefCell::new(Vec::new());
    let mut staging = Staging::default();
    if let Some(p) = &a.plan_out.rules_out {
        let rules = &u.plan;
        staging.file(p, move |w| write_rules(w, p, rules));
    }
    if let Some(p) = &a.plan_out.topology_out {
        // With the ports named as the switches have them after the change,
        // so that a later export from it matches them.
        let text = tagger::generators::file::to_json(&u.correspondence.new_named(new)?);
        staging.file(p, move |w| write_text(w, p, &text));
    }
    if let Some(d) = &a.steps_out {
        let (u, summary) = (u, summary);
        staging.dir(d, sonic::replaceable_steps, move |tmp| {
            u.write_steps(tmp, summary)
        });
    }
    if let Some((t, opts)) = export {
        let written = &written;
        staging.dir(&t.dir, sonic::replaceable_steps, move |tmp| {
            *written.borrow_mut() = u.write_export_steps_from(tmp, old, t.format, opts)?;
            Ok(())
        });
    }
    if let Some(p) = &a.out {
        let (old, new) = (old_name, new_name);
        staging.file(p, move |w| u.write_parquet_to(w, p, old, new, elp));
    }
    staging
        .commit()
        .with_context(|| "writing the update's outputs (none was changed)")?;
    Ok(export.map(|(t, _)| (written.into_inner(), t)))
}
