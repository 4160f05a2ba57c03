//! `tagger topo`, `elp` and `schema`: look at a topology, an ELP, the
//! output columns.

use super::args::{ElpArgs, Format, SchemaFormat, TopoArgs};
use super::{check_outputs, claim_stdout};
use anyhow::{Context, Result, bail};
use std::process::ExitCode;
use tagger::budget::Budget;
use tagger::output::write_string;
use tagger::pipeline;
use tagger::topo::Summary;

/// `tagger topo`: build a topology, write it, summarise it.
pub fn topo(a: TopoArgs) -> Result<ExitCode> {
    let out = claim_stdout(&[("--out", a.out.as_deref())], false)?;
    let input: Vec<_> = a
        .topology
        .file()
        .map(|p| ("TOPOLOGY", p))
        .into_iter()
        .collect();
    check_outputs(&[("--out", a.out.as_deref())], &[], &input)?;
    let t = std::time::Instant::now();
    let topo = a.topology.spec().build()?;
    let built = t.elapsed().as_secs_f64();
    // The file first: the summary's figures can take longer than the
    // topology itself, and a user asking for the file should not wait for
    // them.
    if let Some(path) = &a.out {
        let text = match a.format {
            Format::Json => tagger::generators::file::to_json(&topo),
            Format::Edgelist => tagger::generators::file::to_edgelist(&topo),
        };
        write_string(path, &text)?;
    }
    let t = std::time::Instant::now();
    let summary = if a.diameter {
        Summary::with_diameter(&topo)
    } else {
        Summary::of(&topo)
    };
    let secs = (built, t.elapsed().as_secs_f64());
    say!(
        out,
        "{}",
        tagger::render::topo(&summary, secs, a.out.as_deref())
    );
    Ok(ExitCode::SUCCESS)
}

/// `tagger elp`: build an ELP and measure it.
pub fn elp(a: ElpArgs) -> Result<ExitCode> {
    let out = claim_stdout(&[("--paths-out", a.paths.paths_out.as_deref())], a.json.on)?;
    let inputs: Vec<(&str, std::path::PathBuf)> = a
        .topology
        .file()
        .map(|p| ("TOPOLOGY", p))
        .into_iter()
        .chain(a.elp.files().map(|p| ("--elp", p.to_path_buf())))
        .collect();
    check_outputs(
        &[("--paths-out", a.paths.paths_out.as_deref())],
        &[],
        &inputs,
    )?;
    let budget = Budget::new(a.budget.bytes());
    let topo = pipeline::build_topology(a.topology.spec(), &budget)?;
    let (elp, report) = pipeline::elp_report(&topo, &a.elp, &budget)?;
    if let Some(p) = &a.paths.paths_out {
        tagger::output::write_atomic_with(p, |w| {
            tagger::elp::enumerate::write_paths(
                w,
                &topo,
                &elp,
                tagger::output::shown(p),
                a.paths.max_paths,
            )
        })
        .with_context(|| format!("writing paths to {}", p.display()))?;
    }
    if a.json.on {
        say!(out, "{}", serde_json::to_string_pretty(&report.to_json())?);
    } else {
        say!(out, "{report}");
        if let Some(w) = report.uncovered_warning() {
            errln!("{w}");
        }
    }
    for w in &elp.warnings {
        errln!("warning: {w}");
    }
    if a.coverage.require_coverage
        && let Some(why) = elp.warnings.first().cloned().or_else(|| {
            report
                .uncovered_warning()
                .map(|w| w.trim_start_matches("warning: ").to_string())
        })
    {
        bail!("--require-coverage: {why}");
    }
    Ok(ExitCode::SUCCESS)
}

/// `tagger schema`: the output tables' columns.
pub fn schema(format: SchemaFormat) -> Result<ExitCode> {
    let tables = tagger::sweep::schema();
    match format {
        SchemaFormat::Markdown => out!("{}", tagger::output::record::markdown(&tables)),
        SchemaFormat::Json => outln!(
            "{}",
            serde_json::to_string_pretty(&tagger::output::record::json(&tables))?
        ),
    }
    Ok(ExitCode::SUCCESS)
}
