//! The subcommands: [`args`] declares what each takes, one function per
//! subcommand runs it ([`plan`]: run, export, verify, failures; [`inspect`]:
//! topo, elp, schema; [`sweep`]: sweep, merge, report), [`out`] writes to
//! the standard streams and [`progress`] draws the progress lines. Every
//! figure and table printed is rendered by the library
//! ([`tagger::render`]).

#[macro_use]
pub mod out;
pub mod args;
mod inspect;
mod plan;
pub mod progress;
mod sweep;

use anyhow::{Result, bail};
use args::{Cli, Command};
use out::Out;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

/// Runs the command `cli` names.
pub fn run(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Command::Topo(a) => inspect::topo(a),
        Command::Elp(a) => inspect::elp(a),
        Command::Schema { format } => inspect::schema(format),
        Command::Run(a) => plan::run(*a),
        Command::Failures(a) => plan::failures(a),
        Command::Export(a) => plan::export(a),
        Command::Verify(a) => plan::verify(a),
        Command::Update(a) => plan::update(*a),
        Command::Merge { dir } => sweep::merge(&dir),
        Command::Report { dir, out } => sweep::report(&dir, out),
        Command::Sweep(a) => sweep::sweep(a),
        Command::Help { command } => help(command.as_deref()),
    }
}

/// At most one output may be `-` (standard output), and not beside
/// `--json`, which prints there too; when one is, the summary moves to
/// standard error.
fn claim_stdout(outputs: &[(&str, Option<&Path>)], json: bool) -> Result<Out> {
    let dashes: Vec<&str> = outputs
        .iter()
        .filter(|(_, p)| p.is_some_and(|p| p == Path::new("-")))
        .map(|(flag, _)| *flag)
        .collect();
    Ok(match dashes.as_slice() {
        [] => Out::default(),
        [flag] if json => bail!("{flag} - and --json would both write to standard output"),
        [_] => Out {
            data_on_stdout: true,
        },
        many => bail!(
            "{} are all '-': only one output can go to standard output",
            many.join(", ")
        ),
    })
}

/// Refuses, before any work, outputs that would overwrite each other or an
/// input ([`tagger::output::check_distinct`]): `files` as [`claim_stdout`]
/// takes them (absent ones skipped), `dirs` the output directories,
/// `inputs` each file an option reads.
fn check_outputs(
    files: &[(&str, Option<&Path>)],
    dirs: &[(&str, &Path)],
    inputs: &[(&str, std::path::PathBuf)],
) -> Result<()> {
    let outputs: Vec<(&str, &Path)> = files
        .iter()
        .filter_map(|&(f, p)| p.map(|p| (f, p)))
        .collect();
    let inputs: Vec<(&str, &Path)> = inputs.iter().map(|(f, p)| (*f, p.as_path())).collect();
    Ok(tagger::output::check_distinct(&outputs, dirs, &inputs)?)
}

/// Writes `text` to `w`, errors naming `path`.
fn write_text(w: &mut (dyn Write + Send), path: &Path, text: &str) -> tagger::Result<()> {
    w.write_all(text.as_bytes())
        .map_err(|e| tagger::Error::io(tagger::output::shown(path), e))
}

/// Streams `rules` as `tagger-rules/1` JSON to `w`, the file at `path`.
fn write_rules(
    w: &mut (dyn Write + Send),
    path: &Path,
    rules: &tagger::rules::RuleSet,
) -> tagger::Result<()> {
    rules
        .write_json(w)
        .map_err(|e| tagger::Error::io(tagger::output::shown(path), e))
}

/// Exit 0 when `ok`, else 1.
fn exit(ok: bool) -> ExitCode {
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// `tagger help [COMMAND]`: what `tagger --help` or `tagger COMMAND
/// --help` prints, on standard output (an error when it cannot be
/// written).
fn help(command: Option<&str>) -> Result<ExitCode> {
    use clap::Parser as _;
    let argv: Vec<&str> = std::iter::once("tagger")
        .chain(command)
        .chain(["--help"])
        .collect();
    match args::Cli::try_parse_from(argv) {
        Err(e) if e.kind() == clap::error::ErrorKind::DisplayHelp => {
            print_help(&styled(e.render()))?;
            Ok(ExitCode::SUCCESS)
        }
        _ => bail!(
            "no subcommand '{}' (tagger help lists them)",
            command.unwrap_or_default()
        ),
    }
}

/// Help text styled for a terminal, plain for a file or pipe.
pub fn styled(text: clap::builder::StyledStr) -> String {
    use std::io::IsTerminal as _;
    if std::io::stdout().is_terminal() {
        text.ansi().to_string()
    } else {
        text.to_string()
    }
}

/// Writes help text to standard output, failing when it cannot be written
/// (`--help > /dev/full` is an error, not a success).
pub fn print_help(text: &str) -> Result<()> {
    use anyhow::Context as _;
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .context("writing the help to standard output")
}
