//! The `tagger` command line: thin glue over the library.

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand, ValueEnum};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use tagger::cycle::CycleBackend;
use tagger::elp::{ElpSet, ElpSpec, enumerate};
use tagger::output::write_string;
use tagger::pipeline::{self, RunConfig};
use tagger::rules::RuleSet;
use tagger::sweep::{self, Sweep};
use tagger::tagging::Algo;
use tagger::topo::{self, Summary, TopologySpec};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const TOPO_HELP: &str = "\
Topology specs:
  fattree:k=K                          K-ary fat-tree (K even): 5K^2/4 switches, K/2 hosts per ToR, levels 0-2
  leafspine:leaves=L,spines=S[,hosts=H][,links=K]
                                       two-tier Clos, every leaf to every spine (K parallel links), H hosts per leaf
  bcube:n=N,k=K                        BCube: N^(K+1) forwarding servers (the endpoints), K+1 levels of N^K switches
  hyperx:l=L,s=S[,k=K][,t=T]           S^L switches, all-to-all per dimension, K parallel links, T hosts per switch
  jellyfish:n=N,ports=P,r=R[,seed=X]   random R-regular switch graph, P-R hosts per switch (Singla's construction)
  file:PATH                            a tagger-topology/1 JSON file";

const FAIL_HELP: &str = "\
Failure what-if:
  --fail links:F[,trials=T][,seed=S]   F random links down per trial (default links:1,trials=20,seed=1)
  --fail switches:F[,trials=T][,seed=S] F random switches down (with their links)
  --fail file:PATH                     one trial: the links of each `u v` line
  --routing converged                  traffic on the degraded network's shortest paths (default)
  --routing local                      fast reroute: healthy path up to the failure, deflect to the
                                       neighbours nearest the destination, then degraded shortest paths
Traffic is routed on shortest paths; the plan's ELP must contain them (shortest, or kbounce:K).";

const ELP_HELP: &str = "\
ELP specs (combine with +, e.g. shortest+random:20000):
  shortest                             all shortest paths between every ordered endpoint pair
  kbounce:K                            up-down walks with at most K bounces (needs levels)
  dor                                  dimension-order routing (HyperX, BCube)
  ksp:K[,pairs=N][,seed=X]             K shortest simple paths per endpoint pair (Yen), optionally N sampled pairs
  random:N[,maxlen=M][,seed=X]         N random self-avoiding walks between random endpoint pairs
  file:PATH                            one path per line, node ids separated by spaces";

/// Set when a data output goes to standard output (`-`): the human
/// summary then goes to standard error, so the data stays clean.
static DATA_ON_STDOUT: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Writes one formatted line to standard output (or standard error) the way
/// coreutils and ripgrep do when the reader goes away: a closed pipe ends
/// the program quietly with success (`tagger sweep | head`), where
/// `println!` would panic. Any other write error ends it with a message and
/// exit 1.
fn emit(args: std::fmt::Arguments<'_>, newline: bool, to_stderr: bool) {
    use std::io::Write;
    let r = if to_stderr {
        let mut e = std::io::stderr().lock();
        e.write_fmt(args)
            .and_then(|()| if newline { e.write_all(b"\n") } else { Ok(()) })
    } else {
        let mut o = std::io::stdout().lock();
        o.write_fmt(args)
            .and_then(|()| if newline { o.write_all(b"\n") } else { Ok(()) })
            .and_then(|()| o.flush())
    };
    if let Err(e) = r {
        quit_on_write_error(&e, to_stderr);
    }
}

/// Ends the program after a failed write to a standard stream (see
/// [`emit`]).
fn quit_on_write_error(e: &std::io::Error, stderr: bool) -> ! {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        std::process::exit(0);
    }
    if !stderr {
        let _ = std::io::Write::write_fmt(
            &mut std::io::stderr(),
            format_args!("error: writing to standard output: {e}\n"),
        );
    }
    std::process::exit(1);
}

/// An error message as printed: each line at most 500 characters and at
/// most 40 lines (an input's 10 MB line once became a 10 MB error), control
/// and bidirectional characters escaped so that a name read from a file
/// cannot rewrite the terminal.
fn bounded(msg: &str) -> String {
    const LINE: usize = 500;
    const LINES: usize = 40;
    let total = msg.lines().count();
    let mut out: Vec<String> = msg
        .lines()
        .take(LINES)
        .map(|l| tagger::error::excerpt(l, LINE))
        .collect();
    if total > LINES {
        out.push(format!("... ({} more lines)", total - LINES));
    }
    out.join("\n")
}

/// `println!` through [`emit`].
macro_rules! outln {
    () => { emit(format_args!(""), true, false) };
    ($($t:tt)*) => { emit(format_args!($($t)*), true, false) };
}

/// `print!` through [`emit`].
macro_rules! out {
    ($($t:tt)*) => { emit(format_args!($($t)*), false, false) };
}

/// `eprintln!` through [`emit`].
macro_rules! errln {
    ($($t:tt)*) => { emit(format_args!($($t)*), true, true) };
}

/// [`outln!`], or [`errln!`] while standard output carries data.
macro_rules! say {
    ($($t:tt)*) => {
        emit(
            format_args!($($t)*),
            true,
            DATA_ON_STDOUT.load(std::sync::atomic::Ordering::Relaxed),
        )
    };
}

#[derive(Parser)]
#[command(
    name = "tagger",
    version,
    about = "Plans PFC deadlock prevention (Tagger) for lossless data-center networks"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Build a topology, print a summary, optionally write it out.
    #[command(after_help = TOPO_HELP)]
    Topo {
        /// Topology spec, e.g. fattree:k=8 or jellyfish:n=1000,ports=64,r=12,seed=1
        spec: String,
        /// Output format for --out.
        #[arg(long, value_enum, default_value_t = Format::Json)]
        format: Format,
        /// Write the topology here (atomically; `-` for standard output).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Compute the endpoint diameter even on networks where it is
        /// skipped for its cost.
        #[arg(long)]
        diameter: bool,
    },
    /// Build the expected lossless paths of a topology and count them.
    #[command(after_help = format!("{TOPO_HELP}\n\n{ELP_HELP}"))]
    Elp {
        topology: String,
        #[arg(long)]
        elp: String,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
        /// Write every path, one line of node ids each.
        #[arg(long)]
        paths_out: Option<PathBuf>,
        /// Refuse --paths-out beyond this many paths.
        #[arg(long, default_value_t = 10_000_000)]
        max_paths: u64,
        /// Fail if the ELP tables or the tagged graph are estimated past
        /// this (e.g. 8GiB), before they are built where they can be;
        /// `none` lifts it (default: half the machine's memory).
        #[arg(long, value_parser = parse_budget)]
        memory_budget: Option<MemoryBudget>,
    },
    /// Run the whole pipeline on one scenario: generate, ELP, tag, rules, verify.
    #[command(after_help = format!("{TOPO_HELP}\n\n{ELP_HELP}\n\nAlgorithms: brute, greedy (default), greedy:restarts=R,seed=X, greedy-ttl, clos, clos:K,\nsearch[:budget=N,seed=X,time=S,paths=N] (fewest priorities: order plans and local search),\nexact[:timeout=S] (fewest priorities, proven by a SAT solver; default timeout 600 s)"))]
    Run {
        topology: String,
        #[arg(long)]
        elp: String,
        /// Parsed by clap, so a bad name is a usage error (exit 2) naming the
        /// option, before any work.
        #[arg(long, default_value = "greedy")]
        algo: Algo,
        /// Incremental cycle detection backend: ordered, pk (alias bitset), petgraph, naive.
        #[arg(long, default_value = "ordered")]
        cycle: CycleBackend,
        #[arg(long)]
        json: bool,
        #[arg(long)]
        topology_out: Option<PathBuf>,
        #[arg(long)]
        rules_out: Option<PathBuf>,
        /// Also export the verified plan, as `tagger export`: sonic:DIR
        /// writes per-switch SONiC config_db JSON, json:DIR the neutral
        /// per-switch table.
        #[arg(long)]
        export: Option<String>,
        #[arg(long)]
        paths_out: Option<PathBuf>,
        #[arg(long, default_value_t = 10_000_000)]
        max_paths: u64,
        /// Fail if the run's estimated memory exceeds this (e.g. 8GiB);
        /// `none` lifts it (default: half the machine's memory).
        #[arg(long, value_parser = parse_budget)]
        memory_budget: Option<MemoryBudget>,
        /// Seconds `search` and `exact` may run (the smaller of this and
        /// their own `time=` / `timeout=`); a run stopped by it keeps its
        /// best verified plan and says so.
        #[arg(long, value_parser = |s: &str| tagger::tagging::millis("--time-limit", s))]
        time_limit: Option<u64>,
        #[command(flatten)]
        switch: SwitchArgs,
        #[command(flatten)]
        mapping: MappingArgs,
        /// Lossless application classes sharing the network: the plan is
        /// shifted per class with the smallest stride proven deadlock-free,
        /// verified for every class, and that shared plan is what the rule
        /// counts, the fit and --rules-out describe.
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=64))]
        classes: u32,
        #[command(flatten)]
        limits: LimitArgs,
    },
    /// Failure what-if: plan the scenario, then fail links or switches and
    /// count, per trial, what the installed rules keep lossless, whether
    /// plain PFC would deadlock, and what a replanned or failure-aware plan
    /// costs.
    #[command(after_help = format!("{TOPO_HELP}\n\n{ELP_HELP}\n\n{FAIL_HELP}"))]
    Failures {
        topology: String,
        #[arg(long)]
        elp: String,
        /// What fails: links:F[,trials=T][,seed=S], switches:F[,...] or
        /// file:PATH (one `u v` node pair per line).
        #[arg(long, default_value = "links:1,trials=20,seed=1")]
        fail: String,
        /// Routing after a failure: converged, local, or both
        /// (converged,local).
        #[arg(long, default_value = "converged", value_delimiter = ',')]
        routing: Vec<tagger::failures::Routing>,
        /// Algorithm of the installed plan, and of the replanned and
        /// failure-aware plans.
        #[arg(long, default_value = "greedy")]
        algo: Algo,
        #[arg(long, default_value = "ordered")]
        cycle: CycleBackend,
        /// Print one JSON object (the plan's summary, then per routing the
        /// aggregates and every trial) instead of tables.
        #[arg(long)]
        json: bool,
        /// Write one row per (routing, trial) to this Parquet file.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Skip replanning each trial's converged routes.
        #[arg(long)]
        no_replan: bool,
        /// Skip the failure-aware plan.
        #[arg(long)]
        no_aware: bool,
        /// Fail if the run's estimated memory exceeds this (e.g. 8GiB);
        /// `none` lifts it (default: half the machine's memory).
        #[arg(long, value_parser = parse_budget)]
        memory_budget: Option<MemoryBudget>,
    },
    /// Export a rule set per switch (DIR/<node>.json and DIR/summary.json):
    /// SONiC config_db JSON (port maps, PFC, buffers sized by the switch
    /// profile, ACL rules where the traffic classes run out) or the neutral
    /// table; `tagger verify --exported DIR` reads either back.
    Export {
        #[arg(long)]
        topology: PathBuf,
        #[arg(long)]
        rules: PathBuf,
        /// Output directory.
        #[arg(long)]
        out: PathBuf,
        /// sonic (config_db JSON) or json (neutral per-switch table).
        #[arg(long, value_enum, default_value_t = ExportFormat::Sonic)]
        format: ExportFormat,
        /// Paths that must stay lossless, one per line: the plan is
        /// verified on them before anything is written.
        #[arg(long)]
        paths: Option<PathBuf>,
        #[command(flatten)]
        switch: SwitchArgs,
        #[command(flatten)]
        mapping: MappingArgs,
        #[command(flatten)]
        limits: LimitArgs,
    },
    /// Independently verify a rule set against a topology (and paths).
    Verify {
        #[arg(long)]
        topology: PathBuf,
        /// A tagger-rules/1 file (or use --exported).
        #[arg(
            long,
            required_unless_present = "exported",
            conflicts_with = "exported"
        )]
        rules: Option<PathBuf>,
        /// A directory written by `tagger export` / `run --export`: the rule
        /// set is rebuilt from what the switches are configured with (SONiC
        /// port maps, ACL rules, PFC and buffers; or the neutral table's
        /// classes).
        #[arg(long, alias = "sonic")]
        exported: Option<PathBuf>,
        /// Paths that must stay lossless, one per line.
        #[arg(long)]
        paths: Option<PathBuf>,
        #[command(flatten)]
        limits: LimitArgs,
    },
    /// Print the columns of runs.parquet and switches.parquet: name, type
    /// and what each holds (the keys of `run --json` are the runs columns a
    /// single run has).
    Schema {
        /// markdown (as in the README) or json.
        #[arg(long, value_enum, default_value_t = SchemaFormat::Markdown)]
        format: SchemaFormat,
    },
    /// Merge a sweep's shard files (--shard I/N, e.g. a cluster job array)
    /// in DIR into runs.parquet and switches.parquet, in scenario order.
    Merge {
        /// The directory holding runs-shard-I-of-N.parquet and
        /// switches-shard-I-of-N.parquet.
        dir: PathBuf,
    },
    /// Write a sweep directory's report: one self-contained HTML page of
    /// charts (inline SVG), summary tables, failed scenarios and the spec.
    Report {
        /// The sweep's output directory (runs.parquet, switches.parquet,
        /// failures.parquet when present).
        dir: PathBuf,
        /// Where to write the page (default DIR/report.html).
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Run a batch sweep (the embedded default when no spec is given).
    Sweep {
        /// A TOML sweep spec (see datasets/).
        spec: Option<PathBuf>,
        /// Output directory for runs.parquet and switches.parquet.
        #[arg(long, default_value = "sweep-out")]
        out: PathBuf,
        /// Scenarios run concurrently (default: all cores).
        #[arg(long)]
        jobs: Option<usize>,
        /// Refuse specs that expand to more scenarios than this.
        #[arg(long, default_value_t = sweep::DEFAULT_MAX_SCENARIOS)]
        max_scenarios: usize,
        /// Skip scenarios whose results are already in --out (same spec).
        #[arg(long)]
        resume: bool,
        /// Run only shard I of N (1-based; scenario ids round-robin) and write
        /// runs-shard-I-of-N.parquet, e.g. for a cluster job array.
        #[arg(long)]
        shard: Option<sweep::Shard>,
        /// Per-scenario memory budget (e.g. 8GiB, or none), overriding the
        /// spec's; a scenario whose estimate exceeds it is recorded as
        /// failed. Scenarios without one get half the machine's memory.
        #[arg(long, value_parser = parse_budget)]
        memory_budget: Option<MemoryBudget>,
        /// Do not write DIR/report.html at the end.
        #[arg(long)]
        no_report: bool,
    },
}

/// What the switches hold: a plan beyond it is refused (`run`, `export`,
/// `verify` alike).
#[derive(clap::Args)]
struct LimitArgs {
    /// Lossless queues per port on the switches: a rule set that uses
    /// more priorities is refused.
    #[arg(long, default_value_t = tagger::verify::SWITCH_QUEUES)]
    max_priorities: u32,
    /// Tags the packet header carries (DSCP: 64): a rule set using a
    /// larger tag is refused.
    #[arg(long, default_value_t = tagger::verify::DSCP_TAGS)]
    max_tags: u32,
}

impl LimitArgs {
    fn limits(&self) -> tagger::verify::Limits {
        tagger::verify::Limits {
            max_priorities: Some(self.max_priorities),
            max_tags: Some(self.max_tags),
        }
    }
}

/// The ELP of a path file (`--paths`), if given.
fn read_paths(topo: &topo::Topology, paths: Option<&Path>) -> Result<Option<ElpSet>> {
    paths
        .map(|p| -> Result<ElpSet> {
            Ok(ElpSet::build(
                topo,
                &ElpSpec::parse(&format!("file:{}", p.display()))?,
            )?)
        })
        .transpose()
}

/// The file an input spec reads (`file:PATH`), if any, for the overlap
/// check of outputs against inputs; ELP unions are split at `+`.
fn spec_files(spec: &str) -> Vec<PathBuf> {
    spec.split('+')
        .filter_map(|p| p.strip_prefix("file:"))
        .map(|p| PathBuf::from(p.split('#').next().unwrap_or(p)))
        .collect()
}

/// The switch model a plan is fitted to and its buffers are sized for.
#[derive(clap::Args)]
struct SwitchArgs {
    /// Switch profile: a built-in name (spectrum2, spectrum1, tomahawk,
    /// tomahawk5, drafts-40g), file:PATH or file:PATH#NAME.
    #[arg(long = "switch", default_value = tagger::capacity::profile::DEFAULT_PROFILE)]
    name: String,
    /// Switch-to-switch cable length in metres (default: the profile's).
    #[arg(long)]
    cable_m: Option<f64>,
    /// Switch-to-switch port speed in Gb/s (default: the profile's).
    #[arg(long)]
    speed_gbps: Option<f64>,
    /// Headroom model: sonic or simple (default: the profile's).
    #[arg(long)]
    headroom: Option<tagger::capacity::HeadroomModel>,
}

impl SwitchArgs {
    fn profile(&self) -> Result<tagger::capacity::Profile> {
        Ok(tagger::capacity::Profile::resolve(&self.name)?.with_links(
            self.cable_m,
            self.speed_gbps,
            self.headroom,
        )?)
    }
}

/// How tags and priorities map onto DSCP values and queues in a SONiC
/// export.
#[derive(clap::Args)]
struct MappingArgs {
    /// DSCP value of each tag, tag 1 first (default: tag t is DSCP t + 2).
    #[arg(long, value_parser = |s: &str| tagger::sonic::Mapping::parse_list(s).map(List))]
    dscp: Option<List>,
    /// Queue (priority group) of each lossless priority, priority 1 first
    /// (default: 3,4,2,5,6,1,7).
    #[arg(long, value_parser = |s: &str| tagger::sonic::Mapping::parse_list(s).map(List))]
    queues: Option<List>,
}

/// A comma-separated list of numbers, as one option value.
#[derive(Clone)]
struct List(Vec<u32>);

impl MappingArgs {
    fn options(&self, profile: tagger::capacity::Profile) -> Result<tagger::sonic::Options> {
        let d = tagger::sonic::Mapping::default();
        let mapping = tagger::sonic::Mapping::new(
            self.dscp.clone().map_or(d.dscp, |l| l.0),
            self.queues.clone().map_or(d.queues, |l| l.0),
        )
        .context("--dscp / --queues")?;
        Ok(tagger::sonic::Options { mapping, profile })
    }
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum ExportFormat {
    Sonic,
    Json,
}

/// The export of `rules` in `format`, in memory: everything that can refuse
/// the plan happens here, before any file is written.
fn build_export(
    topo: &topo::Topology,
    rules: &RuleSet,
    format: ExportFormat,
    opts: &tagger::sonic::Options,
) -> Result<tagger::sonic::Export> {
    Ok(match format {
        ExportFormat::Sonic => tagger::sonic::export(topo, rules, opts)?,
        ExportFormat::Json => tagger::sonic::table(topo, rules)?,
    })
}

/// Says what an export wrote.
fn print_export(
    ex: &tagger::sonic::Export,
    format: ExportFormat,
    opts: &tagger::sonic::Options,
    dir: &Path,
) {
    let s = &ex.summary;
    match format {
        ExportFormat::Sonic => say!(
            "exported {} switches to {} (SONiC config_db, buffers for {}): at most {} traffic classes per switch; {} switches over the {} a switch has use ACL rules{}",
            ex.switches.len(),
            dir.display(),
            opts.profile.name,
            s["sonic_tcs_max"],
            s["sonic_switches_over_tcs"],
            tagger::sonic::FREE_TCS,
            if s["sonic_switches_over_tcs"].as_u64().unwrap_or(0) > 0 {
                " (a custom egress ACL table type setting DSCP and queue: check that your platform offers it)"
            } else {
                ""
            }
        ),
        ExportFormat::Json => say!(
            "exported {} switches to {} (neutral table): at most {} classes per switch",
            ex.switches.len(),
            dir.display(),
            s["classes_max"],
        ),
    }
}

/// `--memory-budget`: a size, or `none` for no limit. Without the option
/// a run gets [`tagger::budget::machine_default`].
#[derive(Clone, Copy)]
struct MemoryBudget(Option<u64>);

impl MemoryBudget {
    /// The budget in force: the option's, or the machine's default.
    fn resolve(arg: Option<MemoryBudget>) -> Option<u64> {
        arg.map_or_else(tagger::budget::machine_default, |b| b.0)
    }
}

fn parse_budget(s: &str) -> std::result::Result<MemoryBudget, String> {
    if s.eq_ignore_ascii_case("none") {
        return Ok(MemoryBudget(None));
    }
    tagger::budget::parse_size(s).map(|b| MemoryBudget(Some(b)))
}

#[derive(Clone, Copy, ValueEnum)]
enum SchemaFormat {
    Markdown,
    Json,
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    Json,
    Edgelist,
}

/// `algo` with its time limit lowered to `limit` milliseconds (search and
/// exact; other algorithms have none, and a limit for them is refused).
fn with_time_limit(algo: Algo, limit: Option<u64>) -> Result<Algo> {
    let Some(ms) = limit else {
        return Ok(algo);
    };
    Ok(match algo {
        Algo::Search {
            budget,
            seed,
            time_ms,
            max_paths,
        } => Algo::Search {
            budget,
            seed,
            time_ms: Some(time_ms.map_or(ms, |t| t.min(ms))),
            max_paths,
        },
        Algo::Exact { timeout_ms } => Algo::Exact {
            timeout_ms: timeout_ms.min(ms),
        },
        other => bail!(
            "--time-limit applies to search and exact; '{}' has no time limit",
            other.name()
        ),
    })
}

/// At most one output may be `-` (standard output), and not beside
/// `--json`, which prints there too; when one is, the summary moves to
/// standard error.
fn claim_stdout(outputs: &[(&str, Option<&Path>)], json: bool) -> Result<()> {
    let dashes: Vec<&str> = outputs
        .iter()
        .filter(|(_, p)| p.is_some_and(|p| p == Path::new("-")))
        .map(|(flag, _)| *flag)
        .collect();
    match dashes.as_slice() {
        [] => {}
        [flag] if json => bail!("{flag} - and --json would both write to standard output"),
        [_] => DATA_ON_STDOUT.store(true, std::sync::atomic::Ordering::Relaxed),
        many => bail!(
            "{} are all '-': only one output can go to standard output",
            many.join(", ")
        ),
    }
    Ok(())
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(code) => code,
        Err(e) => {
            // Standard output closed under a data write (`run --rules-out
            // - | head`): quiet, as for the summary lines.
            let broken_pipe = e.chain().any(|c| {
                c.downcast_ref::<std::io::Error>().map(std::io::Error::kind)
                    == Some(std::io::ErrorKind::BrokenPipe)
                    || c.downcast_ref::<tagger::Error>()
                        .and_then(tagger::Error::io_kind)
                        == Some(std::io::ErrorKind::BrokenPipe)
            });
            if broken_pipe {
                return ExitCode::SUCCESS;
            }
            errln!("error: {}", bounded(&format!("{e:#}")));
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Command::Topo {
            spec,
            format,
            out,
            diameter,
        } => {
            claim_stdout(&[("--out", out.as_deref())], false)?;
            let t = std::time::Instant::now();
            let topo = TopologySpec::parse(&spec)?.build()?;
            let built = t.elapsed().as_secs_f64();
            // The file first: the summary's figures can take longer than
            // the topology itself, and a user asking for the file should
            // not wait for them.
            if let Some(out) = &out {
                let text = match format {
                    Format::Json => topo::file::to_json(&topo),
                    Format::Edgelist => topo::file::to_edgelist(&topo),
                };
                write_string(out, &text)?;
            }
            let t = std::time::Instant::now();
            let summary = if diameter {
                Summary::with_diameter(&topo)
            } else {
                Summary::of(&topo)
            };
            say!("{summary}");
            say!(
                "seconds    build {built:.3}, summary {:.3}",
                t.elapsed().as_secs_f64()
            );
            if let Some(out) = out {
                say!("wrote      {}", out.display());
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Elp {
            topology,
            elp,
            json,
            paths_out,
            max_paths,
            memory_budget,
        } => {
            claim_stdout(&[("--paths-out", paths_out.as_deref())], json)?;
            let budget = tagger::budget::Budget::new(MemoryBudget::resolve(memory_budget));
            let topo = pipeline::build_topology(&TopologySpec::parse(&topology)?, &budget)?;
            let spec = ElpSpec::parse(&elp)?;
            elp_command(&topo, &spec, json, paths_out.as_deref(), max_paths, &budget)
        }
        Command::Run {
            topology,
            elp,
            algo,
            cycle,
            json,
            topology_out,
            rules_out,
            paths_out,
            max_paths,
            memory_budget,
            time_limit,
            switch,
            mapping,
            classes,
            export,
            limits,
        } => {
            let export_to = match export.as_deref().map(|e| e.split_once(':')) {
                None => None,
                Some(Some(("sonic", d))) if !d.is_empty() => {
                    Some((ExportFormat::Sonic, PathBuf::from(d)))
                }
                Some(Some(("json", d))) if !d.is_empty() => {
                    Some((ExportFormat::Json, PathBuf::from(d)))
                }
                Some(_) => bail!(
                    "--export {}: expected sonic:DIR or json:DIR",
                    export.as_deref().unwrap_or("")
                ),
            };
            claim_stdout(
                &[
                    ("--topology-out", topology_out.as_deref()),
                    ("--rules-out", rules_out.as_deref()),
                    ("--paths-out", paths_out.as_deref()),
                ],
                json,
            )?;
            // Outputs that would overwrite each other or an input are
            // refused before any work, and so is an export directory that
            // holds something else.
            let inputs: Vec<(String, PathBuf)> = spec_files(&topology)
                .into_iter()
                .map(|p| ("--topology".to_string(), p))
                .chain(spec_files(&elp).into_iter().map(|p| ("--elp".into(), p)))
                .chain(
                    spec_files(&switch.name)
                        .into_iter()
                        .map(|p| ("--switch".into(), p)),
                )
                .collect();
            let outputs: Vec<(&str, &Path)> = [
                ("--topology-out", topology_out.as_deref()),
                ("--rules-out", rules_out.as_deref()),
                ("--paths-out", paths_out.as_deref()),
            ]
            .into_iter()
            .filter_map(|(f, p)| p.map(|p| (f, p)))
            .collect();
            let dirs: Vec<(&str, &Path)> = export_to
                .iter()
                .map(|(_, d)| ("--export", d.as_path()))
                .collect();
            let ins: Vec<(&str, &Path)> = inputs
                .iter()
                .map(|(f, p)| (f.as_str(), p.as_path()))
                .collect();
            tagger::output::check_distinct(&outputs, &dirs, &ins)?;
            if let Some((_, d)) = &export_to {
                tagger::sonic::replaceable(d)?;
            }
            let cfg = RunConfig {
                topology: TopologySpec::parse(&topology)?,
                elp: ElpSpec::parse(&elp)?,
                algo: with_time_limit(algo, time_limit)?,
                cycle,
                memory_budget: MemoryBudget::resolve(memory_budget),
                switch: switch.profile()?,
                classes,
                limits: limits.limits(),
            };
            // Checked before any work, like every other option.
            let export_opts = export_to
                .as_ref()
                .map(|_| mapping.options(cfg.switch.clone()))
                .transpose()?;
            let long = matches!(cfg.algo, Algo::Search { .. } | Algo::Exact { .. });
            let bar = long.then(|| watch_search(std::io::stderr().is_terminal()));
            let r = pipeline::run(&cfg);
            if let Some(bar) = bar {
                bar.finish_and_clear();
                tagger::tagging::control::observe(None);
            }
            let r = r?;
            // Everything that can refuse the plan has run; the outputs are
            // written all or nothing.
            let export = match (&export_to, &export_opts) {
                (Some((format, dir)), Some(opts)) => Some((
                    build_export(&r.topo, &r.rules, *format, opts)?,
                    *format,
                    dir,
                    opts,
                )),
                _ => None,
            };
            let mut staging = tagger::output::Staging::default();
            if let Some(p) = &topology_out {
                let text = topo::file::to_json(&r.topo);
                staging.file(p, move |w| write_text(w, p, &text));
            }
            if let Some(p) = &rules_out {
                let text = r.rules.to_json();
                staging.file(p, move |w| write_text(w, p, &text));
            }
            if let Some((ex, _, dir, _)) = &export {
                staging.dir(dir, tagger::sonic::replaceable, |tmp| {
                    tagger::sonic::write_files(tmp, ex)
                });
            }
            if let Some(p) = &paths_out {
                let (topo, elp) = (&r.topo, &r.elp);
                staging.file(p, move |w| write_paths(w, topo, elp, p, max_paths));
            }
            staging
                .commit()
                .with_context(|| "writing the run's outputs (none was changed)")?;
            if let Some((ex, format, dir, opts)) = &export
                && !json
            {
                print_export(ex, *format, opts, dir);
            }
            if json {
                let mut v = serde_json::to_value(&r.summary)?;
                v["peak_rss_bytes"] = pipeline::peak_rss_bytes().into();
                say!("{}", serde_json::to_string_pretty(&v)?);
            } else {
                print_run(&r);
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Failures {
            topology,
            elp,
            fail,
            routing,
            algo,
            cycle,
            json,
            out,
            no_replan,
            no_aware,
            memory_budget,
        } => {
            claim_stdout(&[("--out", out.as_deref())], json)?;
            let cfg = RunConfig {
                topology: TopologySpec::parse(&topology)?,
                elp: ElpSpec::parse(&elp)?,
                algo,
                cycle,
                memory_budget: MemoryBudget::resolve(memory_budget),
                switch: tagger::capacity::Profile::resolve(
                    tagger::capacity::profile::DEFAULT_PROFILE,
                )?,
                classes: 1,
                limits: Default::default(),
            };
            let spec = tagger::failures::FailureSpec::parse(&fail)?;
            let mut routing = routing;
            routing.dedup();
            let r = pipeline::run(&cfg)?;
            let plan = tagger::failures::Plan {
                topo: &r.topo,
                elp: &cfg.elp,
                rules: &r.rules,
                algo,
                cycle,
            };
            let opts = tagger::failures::Options {
                replan: !no_replan,
                aware: !no_aware,
            };
            let t0 = std::time::Instant::now();
            let budget = tagger::budget::Budget::new(MemoryBudget::resolve(memory_budget));
            let bar = indicatif::ProgressBar::new(0);
            if std::io::stderr().is_terminal() {
                bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
                bar.set_style(
                    indicatif::ProgressStyle::with_template(
                        "{bar:40} {pos}/{len} trial steps [{elapsed} < {eta}]",
                    )
                    .expect("the template is valid"),
                );
            } else {
                bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());
            }
            let reports = tagger::failures::what_if_with_progress(
                &plan,
                &spec,
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
            if let Some(p) = &out {
                tagger::failures::write_trials(p, &reports, &r.summary)?;
            }
            if json {
                let v = serde_json::json!({
                    "plan": r.summary,
                    "failures": reports,
                    "seconds": secs,
                });
                say!("{}", serde_json::to_string_pretty(&v)?);
            } else {
                print_failures(&r, &reports, secs);
            }
            Ok(if reports.iter().all(|x| x.figures.verified) {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            })
        }
        Command::Export {
            topology,
            rules,
            out,
            format,
            paths,
            switch,
            mapping,
            limits,
        } => {
            let mut inputs = vec![
                ("--topology", topology.as_path()),
                ("--rules", rules.as_path()),
            ];
            if let Some(p) = &paths {
                inputs.push(("--paths", p.as_path()));
            }
            let profile_files = spec_files(&switch.name);
            inputs.extend(profile_files.iter().map(|p| ("--switch", p.as_path())));
            tagger::output::check_distinct(&[], &[("--out", out.as_path())], &inputs)?;
            tagger::sonic::replaceable(&out)?;
            let opts = mapping.options(switch.profile()?)?;
            let topo = topo::file::read_json_file(&topology)?;
            tagger::capacity::check(&topo, &opts.profile)?;
            let plan = RuleSet::read(&rules)?;
            // Only a verified plan leaves: the same verifier as `tagger
            // verify`, with the same limits and paths.
            let elp = read_paths(&topo, paths.as_deref())?;
            let report =
                tagger::verify::verify_within(&topo, &plan, elp.as_ref(), &limits.limits());
            if !report.ok() {
                bail!(
                    "{}: not exported, nothing written: {report}",
                    rules.display()
                );
            }
            let ex = build_export(&topo, &plan, format, &opts)?;
            tagger::sonic::write(&out, &ex)?;
            print_export(&ex, format, &opts, &out);
            Ok(ExitCode::SUCCESS)
        }
        Command::Verify {
            topology,
            rules,
            exported,
            paths,
            limits,
        } => {
            let topo = topo::file::read_json_file(&topology)?;
            let rules = match (&rules, &exported) {
                (Some(r), _) => RuleSet::read(r)?,
                (None, Some(d)) => tagger::sonic::read(&topo, d)?,
                (None, None) => bail!("give --rules or --exported"),
            };
            let elp = read_paths(&topo, paths.as_deref())?;
            let report =
                tagger::verify::verify_within(&topo, &rules, elp.as_ref(), &limits.limits());
            say!("{report}");
            Ok(if report.ok() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            })
        }
        Command::Merge { dir } => {
            let m = sweep::merge::merge(&dir)?;
            outln!(
                "{} shards, {} scenarios ({} failed): wrote {} and {}{}",
                m.shards,
                m.runs,
                m.failed,
                m.runs_path.display(),
                m.switches_path.display(),
                m.failures_path
                    .as_ref()
                    .map_or(String::new(), |p| format!(" and {}", p.display()))
            );
            Ok(if m.failed == 0 {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            })
        }
        Command::Report { dir, out } => {
            let out = out.unwrap_or_else(|| dir.join("report.html"));
            // The page may not replace the sweep's own files.
            let results: Vec<PathBuf> = std::fs::read_dir(&dir)
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
            tagger::output::check_distinct(&[("--out", out.as_path())], &[], &inputs)?;
            tagger::report::write(&dir, &out)?;
            outln!("wrote {}", out.display());
            Ok(ExitCode::SUCCESS)
        }
        Command::Schema { format } => {
            let tables = sweep::schema();
            match format {
                SchemaFormat::Markdown => out!("{}", tagger::output::record::markdown(&tables)),
                SchemaFormat::Json => outln!(
                    "{}",
                    serde_json::to_string_pretty(&tagger::output::record::json(&tables))?
                ),
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Sweep {
            spec,
            out,
            jobs,
            max_scenarios,
            resume,
            shard,
            memory_budget,
            no_report,
        } => sweep_command(SweepArgs {
            spec: spec.as_deref(),
            out: &out,
            jobs,
            max: max_scenarios,
            resume,
            shard,
            memory_budget,
            report: !no_report,
        }),
    }
}

/// The run's fit section: the switch model, then one verdict per check.
fn print_fit(s: &pipeline::Summary, fit: &tagger::capacity::Fit) {
    let f = &s.figures;
    let switches = fit.nodes.iter().flatten().count();
    say!(
        "switch        {} ({} headroom), {} Gb/s, {} m cables: at most {} of {} priorities at one switch, headroom up to {}",
        f.switch_profile,
        f.headroom_model,
        f.port_speed_gbps,
        f.cable_m,
        f.priorities_per_switch_max,
        f.queues_shared,
        tagger::budget::human(f.headroom_total_max_bytes)
    );
    let verdict = |over: u64| {
        if over == 0 {
            format!("all {switches} switches fit")
        } else {
            format!("{over} of {switches} switches do NOT fit")
        }
    };
    let margin = f.buffer_margin_min_bytes;
    say!(
        "  buffer      {}; smallest margin {}{}",
        verdict(f.switches_over_buffer),
        if margin < 0 { "-" } else { "" },
        tagger::budget::human(margin.unsigned_abs())
    );
    say!(
        "  queues      {} ({} lossless queues per port; the busiest switch needs {})",
        verdict(f.switches_over_queues),
        f.lossless_queues,
        f.priorities_per_switch_max
    );
    match f.switches_over_acl {
        Some(over) => say!("  ACL         {}", verdict(over)),
        None => say!("  ACL         not checked (the profile gives no ACL capacity)"),
    }
    match f.max_cable_m_fit {
        Some(c) if c >= tagger::capacity::MAX_CABLE_M => {
            say!("  cables      every switch fits with cables of any length up to 100 km")
        }
        Some(c) => say!("  cables      every switch fits with switch-to-switch cables up to {c} m"),
        None => say!("  cables      some switch does not fit even with 0 m cables"),
    }
}

fn elp_command(
    topo: &tagger::Topology,
    spec: &ElpSpec,
    json: bool,
    paths_out: Option<&Path>,
    max: u64,
    budget: &tagger::budget::Budget,
) -> Result<ExitCode> {
    use std::time::Instant;
    let t = Instant::now();
    let elp = pipeline::build_elp(topo, spec, budget)?;
    let build = t.elapsed().as_secs_f64();
    // The counts and the tagged graph are independent; run side by side, the
    // counting fills the cores while the walk is in its sequential steps.
    let t = Instant::now();
    let ((counts, count_s), (bf, bf_s)) = rayon::join(
        || {
            let t = Instant::now();
            (elp.counts(topo), t.elapsed().as_secs_f64())
        },
        || {
            let t = Instant::now();
            let bf = tagger::tagging::tagged_graph(topo, &elp, budget);
            (bf, t.elapsed().as_secs_f64())
        },
    );
    let bf = bf?;
    let total = build + t.elapsed().as_secs_f64();
    let mut used = vec![false; topo.channel_count()];
    for &(c, _) in &bf.states {
        used[c as usize] = true;
    }
    let channels = used.iter().filter(|&&u| u).count();
    let bf_edges = bf.key_count() - bf.first_hops.len();
    if let Some(p) = paths_out {
        tagger::output::write_atomic_with(p, |w| write_paths(w, topo, &elp, p, max))
            .with_context(|| format!("writing paths to {}", p.display()))?;
    }
    if json {
        let v = serde_json::json!({
            "topology": topo.name(), "elp": spec.text,
            // JSON numbers stop at u64 here; the full count is in
            // paths_decimal, as in `tagger run` (paths saturates, exact false).
            "paths": u64::try_from(counts.paths).unwrap_or(u64::MAX),
            "paths_exact": counts.paths_exact && counts.paths <= u64::MAX as u128,
            "paths_decimal": counts.paths.to_string(),
            "longest_elp": counts.longest, "pairs_covered": counts.pairs_covered, "pairs_total": counts.pairs_total,
            "channels_used": channels, "bf_nodes": bf.states.len(), "bf_edges": bf_edges,
            "seconds": {"build": build, "count": count_s, "tagged_graph": bf_s, "total": total},
        });
        say!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        say!("topology        {}", topo.name());
        say!("elp             {}", spec.text);
        say!(
            "paths           {}{}",
            counts.paths,
            if counts.paths_exact {
                ""
            } else {
                " (upper bound: union of families, or saturated)"
            }
        );
        say!("longest ELP     {} links", counts.longest);
        say!(
            "pairs covered   {} / {}",
            counts.pairs_covered,
            counts.pairs_total
        );
        say!("channels used   {} / {}", channels, topo.channel_count());
        say!(
            "brute-force tagged graph: {} nodes, {} edges",
            bf.states.len(),
            bf_edges
        );
        say!(
            "seconds         {total:.3}: build {build:.3}, then side by side count {count_s:.3} and tagged graph {bf_s:.3}"
        );
        if counts.pairs_covered < counts.pairs_total {
            errln!(
                "warning: {} ordered endpoint pairs have no ELP; their traffic is lossy",
                counts.pairs_total - counts.pairs_covered
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Writes the ELP's paths, one per line (node ids), to `w`.
fn write_paths(
    w: &mut (dyn Write + Send),
    topo: &tagger::Topology,
    elp: &ElpSet,
    path: &Path,
    max: u64,
) -> tagger::Result<()> {
    let shown = tagger::output::shown(path);
    let mut w = std::io::BufWriter::new(w);
    enumerate::for_each_path(topo, elp, max, |nodes| {
        let line: Vec<String> = nodes.iter().map(u32::to_string).collect();
        writeln!(w, "{}", line.join(" ")).map_err(|e| tagger::Error::io(shown, e))
    })?;
    w.flush().map_err(|e| tagger::Error::io(shown, e))
}

/// Writes `text` to `w`, errors naming `path`.
fn write_text(w: &mut (dyn Write + Send), path: &Path, text: &str) -> tagger::Result<()> {
    w.write_all(text.as_bytes())
        .map_err(|e| tagger::Error::io(tagger::output::shown(path), e))
}

/// A progress line for `search` and `exact` (target, steps, paths still
/// violated; on a terminal), and Ctrl-C: the first ends the search with
/// its best plan, which is then verified and written as usual; a second one
/// quits.
fn watch_search(show: bool) -> indicatif::ProgressBar {
    use tagger::tagging::control;
    let first = std::sync::atomic::AtomicBool::new(true);
    let handler = ctrlc::set_handler(move || {
        if first.swap(false, std::sync::atomic::Ordering::SeqCst) {
            control::request_stop();
            errln!(
                "\nstopping: the best plan so far is verified and written (Ctrl-C again to quit)"
            );
        } else {
            std::process::exit(130);
        }
    });
    let bar = if show {
        indicatif::ProgressBar::new_spinner()
    } else {
        indicatif::ProgressBar::hidden()
    };
    bar.set_style(
        indicatif::ProgressStyle::with_template("{spinner} {elapsed} {msg}")
            .expect("the template is valid"),
    );
    bar.enable_steady_tick(std::time::Duration::from_millis(200));
    let b = bar.clone();
    control::observe(Some(std::sync::Arc::new(move |p: control::Progress| {
        b.set_message(if p.violated > 0 {
            format!(
                "trying {} priorities: step {}, {} paths still need more",
                p.target, p.steps, p.violated
            )
        } else {
            format!("trying {} priorities: solver call {}", p.target, p.steps)
        });
    })));
    if let Err(e) = handler {
        errln!("warning: Ctrl-C will not stop the search gracefully: {e}");
    }
    bar
}

fn print_failures(r: &pipeline::RunResult, reports: &[tagger::failures::Report], secs: f64) {
    let s = &r.summary;
    say!(
        "plan          {} {} {}: {} lossless priorities (lower bound {}), verified",
        s.topology,
        s.elp,
        s.algo,
        s.figures.priorities,
        s.figures.priorities_lower_bound
    );
    let Some(first) = reports.first() else {
        return;
    };
    let f = &first.figures;
    say!(
        "failures      {}: {} trials in {secs:.1} s",
        f.spec,
        f.trials
    );
    let pct = |x: Option<f64>| {
        x.map_or("-".to_string(), |v| {
            format!("{}%", tagger::failures::percent(v))
        })
    };
    let num = |x: Option<u32>| x.map_or("-".to_string(), |v| v.to_string());
    say!(
        "{:<10} {:>8} {:>17} {:>17} {:>17} {:>17} {:>9} {:>9} {:>6} {:>8}",
        "routing",
        "CBD",
        "lossless routes",
        "(min)",
        "lossless pairs",
        "(min)",
        "fallback",
        "replanned",
        "aware",
        "verified"
    );
    say!(
        "{:<10} {:>8} {:>17} {:>17} {:>17} {:>17} {:>9} {:>9} {:>6} {:>8}",
        "",
        "no Tagger",
        "median",
        "",
        "median",
        "",
        "hops max",
        "prio max",
        "prio",
        ""
    );
    for rep in reports {
        let f = &rep.figures;
        say!(
            "{:<10} {:>8} {:>17} {:>17} {:>17} {:>17} {:>9} {:>9} {:>6} {:>8}",
            f.routing,
            format!("{:.0}%", 100.0 * f.cbd_rate),
            pct(f.lossless_paths_median),
            pct(f.lossless_paths_min),
            pct(f.lossless_pairs_median),
            pct(f.lossless_pairs_min),
            rep.trials
                .iter()
                .map(|t| t.fallback_hops)
                .max()
                .unwrap_or(0),
            num(f.replanned_priorities_max),
            num(f.aware_priorities),
            if f.verified { "yes" } else { "NO" }
        );
    }
    let cycles: Vec<u32> = reports
        .iter()
        .flat_map(|r| r.trials.iter().filter_map(|t| t.cbd_cycle_len))
        .collect();
    if let Some(m) = cycles.iter().min() {
        say!("shortest CBD  {m} channels (plain PFC, one lossless priority)");
    }
}

fn print_run(r: &pipeline::RunResult) {
    let s = &r.summary;
    say!(
        "topology      {} ({} switches, {} servers, {} links, {} endpoints)",
        s.topology,
        s.figures.switches,
        s.figures.servers,
        s.figures.links,
        s.figures.endpoints
    );
    say!(
        "elp           {}: {} paths{}, longest {} links, {} / {} pairs",
        s.elp,
        s.figures.paths,
        if s.figures.paths_exact {
            ""
        } else {
            " (upper bound)"
        },
        s.figures.longest_elp,
        s.figures.pairs_covered,
        s.figures.pairs_total
    );
    say!("algorithm     {} (cycle detection: {})", s.algo, s.cycle);
    say!(
        "priorities    {} lossless; lower bound {}{}",
        s.figures.priorities,
        s.figures.priorities_lower_bound,
        if s.figures.priorities_optimal {
            " (optimal)"
        } else {
            " (optimality not proven)"
        }
    );
    if let (Some(steps), Some(residue)) = (s.figures.search_steps, s.figures.search_residue) {
        let exact = s.algo.starts_with("exact");
        say!(
            "{}{}{}",
            if exact {
                format!("solver        {steps} SAT calls")
            } else {
                format!("search        {steps} steps")
            },
            if residue > 0 {
                format!(
                    "; {residue} paths still needed priority {} at the lowest target tried",
                    s.figures.priorities
                )
            } else {
                String::new()
            },
            if s.figures.search_stopped_early == Some(true) {
                "; stopped early (time limit or Ctrl-C)"
            } else {
                ""
            }
        );
        if let Some(n) = s.figures.proof_paths {
            say!(
                "proof         {} priorities are impossible already on {n} of the ELP's paths",
                s.figures.priorities_lower_bound - 1
            );
        }
    }
    for (i, p) in r.tagging.per_priority.iter().enumerate() {
        say!(
            "  priority {}: {} channels, {} same-priority dependencies",
            i + 1,
            p.channels,
            p.edges
        );
    }
    say!(
        "ACL entries   exact {} total, {} max; compressed {} total, {} max",
        s.figures.acl_exact_total,
        s.figures.acl_exact_max,
        s.figures.acl_compressed_total,
        s.figures.acl_compressed_max
    );
    say!(
        "rules         {} total, {} at the bottleneck node (p50 {}, p99 {})",
        s.figures.rules_total,
        s.figures.rules_max,
        s.figures.rules_p50,
        s.figures.rules_p99
    );
    say!(
        "headroom      {:.1} MB at the busiest node (40 Gb/s, 300 m, MTU 1500, every priority of the node at every port)",
        s.figures.headroom_max_bytes as f64 / 1e6
    );
    if let Some(sh) = &r.shared {
        say!(
            "classes       {} classes share {} lossless queues ({} with a copy each): class i sends tag 1 + {} x i; deadlock-free (every priority's union acyclic) and verified for every class",
            sh.classes,
            sh.queues_shared,
            sh.queues_separate,
            sh.stride
        );
    }
    print_fit(s, &r.fit);
    say!("{}", r.report);
    let t = &s.seconds;
    say!(
        "seconds       generate {:.3}, elp {:.3}, tag {:.3}, rules {:.3}, verify {:.3}, total {:.3}",
        t.generate,
        t.elp,
        t.tag,
        t.rules,
        t.verify,
        t.total
    );
    say!(
        "memory        estimated {}{}; peak RSS {}",
        tagger::budget::human(s.memory_estimate_bytes),
        s.memory_budget_bytes.map_or(String::new(), |b| format!(
            " of a {} budget",
            tagger::budget::human(b)
        )),
        pipeline::peak_rss_bytes().map_or("unknown".into(), tagger::budget::human)
    );
}

/// What `tagger sweep` was asked.
struct SweepArgs<'a> {
    spec: Option<&'a Path>,
    out: &'a Path,
    jobs: Option<usize>,
    max: usize,
    resume: bool,
    shard: Option<sweep::Shard>,
    memory_budget: Option<MemoryBudget>,
    report: bool,
}

fn sweep_command(a: SweepArgs) -> Result<ExitCode> {
    let SweepArgs {
        spec,
        out,
        jobs,
        max,
        resume,
        shard,
        memory_budget,
        report,
    } = a;
    let (text, file) = match spec {
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
    let mut sw = Sweep::parse(&text, &file, max)?;
    if let Some(MemoryBudget(b)) = memory_budget {
        for s in &mut sw.scenarios {
            s.memory_budget = b;
            s.default_budget = None;
        }
    }
    let jobs = jobs.unwrap_or_else(rayon::current_num_threads);
    if jobs == 0 {
        bail!("--jobs must be at least 1");
    }
    let selected = sweep::selected(&sw, shard).len();
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
        shard.map_or(String::new(), |s| format!(
            " (shard {}/{} of {})",
            s.index,
            s.count,
            sw.scenarios.len()
        )),
        jobs,
        out.display()
    );
    let bar = if std::io::stderr().is_terminal() {
        indicatif::ProgressBar::new(selected as u64)
    } else {
        indicatif::ProgressBar::hidden()
    };
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{bar:40} {pos}/{len} scenarios, {msg} [{elapsed} < {eta}]",
        )
        .expect("the template is valid"),
    );
    let failed = std::sync::atomic::AtomicUsize::new(0);
    let opts = sweep::Options {
        jobs,
        resume,
        shard,
    };
    let done = sweep::execute(out, &sw, &opts, |o| {
        if o.result.is_err() {
            failed.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        bar.set_message(format!(
            "{} failed",
            failed.load(std::sync::atomic::Ordering::Relaxed)
        ));
        bar.inc(1);
    })?;
    bar.finish_and_clear();
    out!("{}", sweep::summary_table(&done.rows));
    let failures = sweep::failures_table(&done.rows);
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
        done.failures_path
            .as_ref()
            .map_or(String::new(), |p| format!(" and {}", p.display()))
    );
    // A shard's tables are a slice: its report comes after `tagger merge`.
    if report && shard.is_none() {
        let page = out.join("report.html");
        tagger::report::write(out, &page)?;
        outln!("report: {}", page.display());
    }
    Ok(if done.failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
