//! The command line's arguments: every subcommand's options as one type,
//! parsed and checked by clap before any work (spec types through their
//! library `FromStr`, so a bad spec is a usage error naming the option).

use clap::{Parser, Subcommand, ValueEnum};
use std::path::PathBuf;
use tagger::TopologySpec;
use tagger::cycle::CycleBackend;
use tagger::elp::ElpSpec;
use tagger::failures::{FailureSpec, Routing};
use tagger::sweep;
use tagger::tagging::Algo;

const TOPO_HELP: &str = "\
Topology specs:
  fattree:k=K                          K-ary fat-tree (K even): 5K^2/4 switches, K/2 hosts per ToR, levels 0-2
  leafspine:leaves=L,spines=S[,hosts=H][,links=K]
                                       two-tier Clos, every leaf to every spine (K parallel links), H hosts per leaf
  bcube:n=N,k=K                        BCube: N^(K+1) forwarding servers (the endpoints), K+1 levels of N^K switches
  hyperx:l=L,s=S[,k=K][,t=T]           S^L switches, all-to-all per dimension, K parallel links, T hosts per switch
  jellyfish:n=N,ports=P,r=R[,seed=X]   random R-regular switch graph, P-R hosts per switch (Singla's construction)
  file:PATH                            a tagger-topology/1 JSON file, as --topology-out writes it
                                       (a bare path works too: one ending in .json, holding a /, or naming a file)
  ibnet:PATH                           an InfiniBand fabric: ibnetdiscover's output or an ibsim net file";

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
  file:PATH                            one path per line, node ids separated by spaces
  lfts:PATH                            the routes of OpenSM's forwarding tables (opensm-lfts.dump) on an ibnet: fabric";

#[derive(Debug, Parser)]
#[command(
    name = "tagger",
    version,
    about = "Plans PFC deadlock prevention (Tagger) for lossless data-center networks",
    // Our own `help` subcommand: clap's takes no options, so `tagger help
    // --help` was an error.
    disable_help_subcommand = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Build a topology, print a summary, optionally write it out.
    #[command(after_help = TOPO_HELP)]
    Topo(TopoArgs),
    /// Build the expected lossless paths of a topology and count them.
    #[command(after_help = format!("{TOPO_HELP}\n\n{ELP_HELP}"))]
    Elp(ElpArgs),
    /// Run the whole pipeline on one scenario: generate, ELP, tag, rules, verify.
    #[command(after_help = format!("{TOPO_HELP}\n\n{ELP_HELP}\n\nAlgorithms: auto[:time=S] (the default: the best of clos, greedy, search and, on small networks, exact with fixed work beside search, stopping at the lower bound), brute, greedy, greedy:restarts=R,seed=X, greedy-ttl, clos, clos:K,\nsearch[:budget=N,seed=X,time=S,paths=N,symmetric=1] (fewest priorities: order plans and local search),\nexact[:timeout=S] (fewest priorities, proven by a SAT solver; default timeout 600 s)"))]
    Run(Box<RunArgs>),
    /// Failure what-if: plan the scenario, then fail links or switches and
    /// count, per trial, what the installed rules keep lossless, whether
    /// plain PFC would deadlock, and what a replanned or failure-aware plan
    /// costs.
    #[command(after_help = format!("{TOPO_HELP}\n\n{ELP_HELP}\n\n{FAIL_HELP}"))]
    Failures(FailuresArgs),
    /// Export a rule set per switch (DIR/<node>.json and DIR/summary.json):
    /// SONiC config_db JSON (port QoS maps, PFC and buffers sized by the
    /// switch profile: what a stock SONiC switch accepts; a plan needing
    /// more traffic classes than the switch has is refused) or the neutral
    /// table; `tagger verify --exported DIR` reads either back.
    #[command(after_help = TOPO_HELP)]
    Export(ExportArgs),
    /// Independently verify a rule set against a topology (and paths), or
    /// an exported directory read back as the switches run it. The
    /// topology is the one the plan was made on. A step directory of
    /// `update --export-steps` holds only the switches that step changes,
    /// so it is no whole fabric: copy the step directories' switch files,
    /// in order, over the installed export, delete each step's `cleared`
    /// switches and merge the summaries' switch lists, then verify the
    /// result against the steps' union-topology.json with `--paths` of an
    /// empty file (docs/update.md, "Files", says why; `update` itself
    /// judges every such state before it writes any).
    #[command(after_help = format!("{TOPO_HELP}\n\n{ELP_HELP}"))]
    Verify(VerifyArgs),
    /// Change a fabric that runs: a new plan that extends the installed one
    /// (fewest entries changed), and an update schedule with every
    /// intermediate state verified (old and new rules side by side, old and
    /// new ELPs in flight).
    #[command(after_help = format!("{UPDATE_HELP}\n\n{TOPO_HELP}\n\n{ELP_HELP}"))]
    Update(Box<UpdateArgs>),
    /// Print the columns of the five tables (runs, switches, failures,
    /// growth and update .parquet): name, type and what each holds (the
    /// keys of `run --json` are the runs columns a single run has).
    Schema {
        /// markdown (as in docs/formats.md) or json.
        #[arg(long, value_enum, default_value_t = SchemaFormat::Markdown)]
        format: SchemaFormat,
    },
    /// Merge a sweep's shard files (--shard I/N, e.g. a cluster job array)
    /// in DIR into runs.parquet and switches.parquet (and failures.parquet
    /// and growth.parquet when the shards carry them), in scenario order.
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
    Sweep(SweepArgs),
    /// Print this message or the help of the given subcommand.
    Help {
        /// The subcommand (none: tagger's own help).
        command: Option<String>,
    },
}

/// The network a subcommand works on, given the same way by every one:
/// as its first argument or as `--topology` (one or the other).
#[derive(Debug, clap::Args)]
pub struct TopologyArg {
    /// The network: a generator spec (fattree:k=8,
    /// jellyfish:n=200,ports=32,r=12,seed=1, ... listed below), a topology
    /// file (file:PATH, or a bare path ending in .json, holding a / or
    /// naming a file, as `--topology-out` writes it) or an InfiniBand
    /// fabric (ibnet:PATH).
    /// The rules a plan was written with name it; give the same one back.
    #[arg(
        value_name = "TOPOLOGY",
        required_unless_present = "topology_opt",
        conflicts_with = "topology_opt"
    )]
    topology: Option<TopologySpec>,
    /// TOPOLOGY given as an option instead (the same values).
    #[arg(long = "topology", value_name = "TOPOLOGY")]
    topology_opt: Option<TopologySpec>,
}

impl TopologyArg {
    /// The topology spec, however it was given.
    pub fn spec(&self) -> &TopologySpec {
        self.topology
            .as_ref()
            .or(self.topology_opt.as_ref())
            .expect("clap requires TOPOLOGY or --topology")
    }

    /// The topology spec, owned.
    pub fn into_spec(self) -> TopologySpec {
        self.topology
            .or(self.topology_opt)
            .expect("clap requires TOPOLOGY or --topology")
    }

    /// The file the topology is read from, if it is one (to keep outputs
    /// off it).
    pub fn file(&self) -> Option<PathBuf> {
        match self.spec() {
            TopologySpec::File { path } | TopologySpec::IbNet { path } => Some(path.clone()),
            TopologySpec::Generated(_) => None,
        }
    }
}

// `tagger topo`.
#[derive(Debug, clap::Args)]
pub struct TopoArgs {
    #[command(flatten)]
    pub topology: TopologyArg,
    /// Output format for --out.
    #[arg(long, value_enum, default_value_t = Format::Json)]
    pub format: Format,
    /// Write the topology here (atomically; `-` for standard output).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Compute the endpoint diameter even on networks where it is
    /// skipped for its cost.
    #[arg(long)]
    pub diameter: bool,
}

// `tagger elp`.
#[derive(Debug, clap::Args)]
pub struct ElpArgs {
    #[command(flatten)]
    pub topology: TopologyArg,
    /// The expected lossless paths: shortest, kbounce:K, dor, ksp:K,
    /// random:N, file:PATH or lfts:PATH (see below); `+` joins several.
    #[arg(long)]
    pub elp: ElpSpec,
    #[command(flatten)]
    pub json: JsonArg,
    #[command(flatten)]
    pub paths: PathsOutArgs,
    #[command(flatten)]
    pub budget: BudgetArg,
    #[command(flatten)]
    pub coverage: CoverageArg,
}

/// `--require-coverage`, for the subcommands that build an ELP to plan
/// or count.
#[derive(Debug, clap::Args)]
pub struct CoverageArg {
    /// Fail (exit 1, nothing written) when the ELP leaves an ordered
    /// endpoint pair without a path, or an lfts: dump routes to fewer HCA
    /// ports than the fabric has; without it, both are warnings on
    /// standard error.
    #[arg(long)]
    pub require_coverage: bool,
}

// `tagger run`.
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub topology: TopologyArg,
    /// The expected lossless paths: shortest, kbounce:K, dor, ksp:K,
    /// random:N, file:PATH or lfts:PATH (see below); `+` joins several.
    #[arg(long)]
    pub elp: ElpSpec,
    /// The tagging algorithm: auto (the best of clos, greedy, search and,
    /// on small networks, exact),
    /// greedy, search, exact, clos, brute or greedy-ttl, with options such
    /// as search:budget=N (see below).
    #[arg(long, default_value = "auto")]
    pub algo: Algo,
    /// Cycle detection inside greedy: ordered (the fast default); pk,
    /// petgraph and naive are there to benchmark against.
    #[arg(long, default_value = "ordered")]
    pub cycle: CycleBackend,
    #[command(flatten)]
    pub json: JsonArg,
    #[command(flatten)]
    pub plan_out: PlanOutArgs,
    /// Also export the verified plan, as `tagger export`: sonic:DIR
    /// writes per-switch SONiC config_db JSON, json:DIR the neutral
    /// per-switch table.
    #[arg(long)]
    pub export: Option<tagger::sonic::Target>,
    #[command(flatten)]
    pub paths: PathsOutArgs,
    #[command(flatten)]
    pub budget: BudgetArg,
    /// Seconds `search` and `exact` (and `auto`'s search and exact) may run (the
    /// smaller of this and their own `time=` / `timeout=`); a run stopped
    /// by it keeps its best verified plan and says so.
    #[arg(long, value_parser = |s: &str| tagger::tagging::millis("--time-limit", s))]
    pub time_limit: Option<u64>,
    #[command(flatten)]
    pub switch: SwitchArgs,
    #[command(flatten)]
    pub mapping: MappingArgs,
    /// Lossless application classes sharing the network: the plan is
    /// shifted per class with the smallest stride proven deadlock-free,
    /// verified for every class, and that shared plan is what the rule
    /// counts, the fit and --rules-out describe.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub classes: u32,
    #[command(flatten)]
    pub limits: LimitArgs,
    #[command(flatten)]
    pub fit: FitArg,
    #[command(flatten)]
    pub coverage: CoverageArg,
}

/// `--memory-budget`, for every subcommand that builds large tables.
#[derive(Debug, clap::Args)]
pub struct BudgetArg {
    /// Memory the work may take (e.g. 8GiB), checked against estimates
    /// before each large table is built: past it the run fails with nothing
    /// written (a sweep records the scenario as failed and goes on, and
    /// this replaces its spec's budgets); `none` lifts it (default: half
    /// the machine's memory).
    #[arg(long, value_parser = parse_budget)]
    memory_budget: Option<MemoryBudget>,
}

impl BudgetArg {
    /// The budget in force, in bytes (`None`: no limit).
    pub fn bytes(&self) -> Option<u64> {
        MemoryBudget::resolve(self.memory_budget)
    }

    /// The budget the option gives, if it was given.
    pub fn given(&self) -> Option<MemoryBudget> {
        self.memory_budget
    }
}

/// `--json`.
#[derive(Debug, clap::Args)]
pub struct JsonArg {
    /// Print the result as one JSON object instead of text, for scripts:
    /// `run`'s keys are the runs columns `tagger schema` lists; `failures`
    /// gives the plan, then per routing the aggregates and every trial;
    /// `update` the change, the plans and every step; `elp` its counts.
    #[arg(long = "json")]
    pub on: bool,
}

/// `--paths-out` and its cap.
#[derive(Debug, clap::Args)]
pub struct PathsOutArgs {
    /// Write every ELP path, one line of node ids each (`-`: standard
    /// output).
    #[arg(long)]
    pub paths_out: Option<PathBuf>,
    /// Refuse --paths-out beyond this many paths.
    #[arg(long, default_value_t = 10_000_000)]
    pub max_paths: u64,
}

/// The plan's files, for `run` (the plan made) and `update` (the new plan,
/// on the new topology).
#[derive(Debug, clap::Args)]
pub struct PlanOutArgs {
    /// Write the topology (tagger-topology/1; `-`: standard output), to
    /// export, verify or update against later; for `update`, the new one,
    /// its ports named as the switches will have them.
    #[arg(long)]
    pub topology_out: Option<PathBuf>,
    /// Write the verified rule set (tagger-rules/1; `-`: standard output):
    /// what `tagger export`, `verify` and `update` read; for `update`, the
    /// new plan, on the new topology.
    #[arg(long)]
    pub rules_out: Option<PathBuf>,
}

/// `--require-fit`: whether switches that do not fit the switch model stop
/// the work.
#[derive(Debug, clap::Args)]
pub struct FitArg {
    /// Whether switches that do not fit the switch model stop the work.
    /// Without the flag, switch configurations (`export`, `run --export`,
    /// `update --export-steps`) are refused where a switch's lossless
    /// queues or headroom do not fit, and `run` only reports the fit. `on`
    /// (or the bare flag): the same, and `run` also fails, with nothing
    /// written, unless every switch fits (buffer, lossless queues, traffic
    /// classes and, where the profile gives one, ACL capacity), printing
    /// its summary either way. `off`: configurations of switches that do
    /// not fit are written anyway, each switch's fit recorded in
    /// summary.json. A switch needing more traffic classes than it has is
    /// never exported to SONiC.
    #[arg(long, value_name = "on|off", num_args = 0..=1, default_missing_value = "on", value_parser = parse_on_off)]
    require_fit: Option<bool>,
}

impl FitArg {
    /// Every switch must fit, or nothing is written (`on`).
    pub fn strict(&self) -> bool {
        self.require_fit == Some(true)
    }

    /// Configurations are refused where a switch does not fit (all but
    /// `off`).
    pub fn exports_must_fit(&self) -> bool {
        self.require_fit != Some(false)
    }
}

/// `on` or `off`.
pub fn parse_on_off(s: &str) -> Result<bool, String> {
    match s {
        "on" => Ok(true),
        "off" => Ok(false),
        _ => Err(format!("'{s}': expected on or off")),
    }
}

// `tagger failures`.
#[derive(Debug, clap::Args)]
pub struct FailuresArgs {
    #[command(flatten)]
    pub topology: TopologyArg,
    /// The expected lossless paths: shortest, kbounce:K, dor, ksp:K,
    /// random:N, file:PATH or lfts:PATH (see below); `+` joins several.
    #[arg(long)]
    pub elp: ElpSpec,
    /// What fails: links:F[,trials=T][,seed=S], switches:F[,...] or
    /// file:PATH (one `u v` node pair per line).
    #[arg(long, default_value = "links:1,trials=20,seed=1")]
    pub fail: FailureSpec,
    /// Routing after a failure: converged, local, or both (the same as
    /// converged,local).
    #[arg(long, default_value = "converged", value_delimiter = ',', value_parser = parse_routing)]
    pub routing: Vec<Routings>,
    /// Algorithm of the installed plan, unless --rules gives it: the same
    /// default as `run`'s, so that the what-if judges the plan `run` would
    /// install.
    #[arg(long, default_value = "auto")]
    pub algo: Algo,
    /// Algorithm of the replanned and failure-aware plans, one per trial
    /// and routing model (greedy's speed suits hundreds of them; `clos`
    /// on a Clos fabric).
    #[arg(long, default_value = "greedy")]
    pub replan_algo: Algo,
    /// The installed plan to judge, as `run --rules-out` wrote it
    /// (tagger-rules/1), instead of planning one: it must verify on the
    /// topology (the file it was planned on) with --elp first.
    #[arg(long)]
    pub rules: Option<PathBuf>,
    /// Cycle detection inside greedy: ordered (the fast default); pk,
    /// petgraph and naive are there to benchmark against.
    #[arg(long, default_value = "ordered")]
    pub cycle: CycleBackend,
    #[command(flatten)]
    pub json: JsonArg,
    /// Write one row per (routing, trial) to this Parquet file.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Skip replanning each trial's converged routes.
    #[arg(long)]
    pub no_replan: bool,
    /// Skip the failure-aware plan.
    #[arg(long)]
    pub no_aware: bool,
    /// The switch model the planned plan's summary is fitted to; --max-tcs
    /// limits the plan made here (default: none). Replanned and
    /// failure-aware plans have no traffic-class limit, and --rules plans
    /// nothing.
    #[command(flatten)]
    pub switch: SwitchArgs,
    #[command(flatten)]
    pub budget: BudgetArg,
}

// `tagger export`.
#[derive(Debug, clap::Args)]
pub struct ExportArgs {
    #[command(flatten)]
    pub topology: TopologyArg,
    /// The rule set to export (tagger-rules/1, as `run --rules-out`
    /// writes it); it is verified first.
    #[arg(long)]
    pub rules: PathBuf,
    /// Output directory.
    #[arg(long)]
    pub out: PathBuf,
    /// sonic (config_db JSON) or json (neutral per-switch table).
    #[arg(long, value_enum, default_value_t = ExportFormat::Sonic)]
    pub format: ExportFormat,
    /// Paths that must stay lossless, one per line: the plan is
    /// verified on them before anything is written.
    #[arg(long)]
    pub paths: Option<PathBuf>,
    #[command(flatten)]
    pub switch: SwitchArgs,
    #[command(flatten)]
    pub mapping: MappingArgs,
    #[command(flatten)]
    pub limits: LimitArgs,
    /// The ELP the plan was made for (recorded in summary.json, so that
    /// `tagger verify --exported` replays it by default).
    #[arg(long)]
    pub elp: Option<ElpSpec>,
    #[command(flatten)]
    pub fit: FitArg,
}

// `tagger verify`.
#[derive(Debug, clap::Args)]
pub struct VerifyArgs {
    #[command(flatten)]
    pub topology: TopologyArg,
    /// A tagger-rules/1 file (or use --exported).
    #[arg(
        long,
        required_unless_present = "exported",
        conflicts_with = "exported"
    )]
    pub rules: Option<PathBuf>,
    /// A directory written by `tagger export` / `run --export`: what every
    /// switch does to every packet is decoded from its configuration
    /// (SONiC port maps, PFC and buffers, sized again for the switch
    /// profile the export records; or the neutral table's classes) and
    /// judged over the whole fabric, then verified as a rule set with its
    /// ELP replayed.
    #[arg(long, alias = "sonic")]
    pub exported: Option<PathBuf>,
    /// Paths that must stay lossless, one per line.
    #[arg(long, conflicts_with = "elp")]
    pub paths: Option<PathBuf>,
    /// The ELP to replay (default with --exported: the one the export
    /// records).
    #[arg(long)]
    pub elp: Option<ElpSpec>,
    #[command(flatten)]
    pub limits: LimitArgs,
}

/// What `tagger update --to` takes, beside a topology spec or file.
const UPDATE_HELP: &str = "Changes (--to): grow:switches=N,seed=S (Jellyfish expansion: each new switch takes over\nrandom links), grow:leaves=N (racks added to a tiered fabric, each leaf joined like the first),\ndrain:links=N,seed=S (take N random switch links out of service), drain:link=A-B[+C-D...] (the links\nbetween switches A and B, names or ids: maintenance), or the new topology as a spec or file\n(nodes match by kind, level and rank, so a leaf-spine with one more leaf matches).";

// `tagger update`.
#[derive(Debug, clap::Args)]
pub struct UpdateArgs {
    #[command(flatten)]
    pub topology: TopologyArg,
    /// The installed plan (tagger-rules/1).
    #[arg(long)]
    pub rules: PathBuf,
    /// The topology after the change: grow:..., drain:..., a spec or a file.
    #[arg(long)]
    pub to: String,
    /// The installed plan's ELPs (on the old topology: the traffic in
    /// flight when the change starts).
    #[arg(long)]
    pub elp: ElpSpec,
    /// The ELPs after the change, on the new topology (default: --elp),
    /// e.g. moving from `shortest` to `kbounce:1` on the same fabric.
    #[arg(long)]
    pub new_elp: Option<ElpSpec>,
    /// Move to this plan (tagger-rules/1, on the new topology) instead of
    /// extending the installed one.
    #[arg(long)]
    pub new_rules: Option<PathBuf>,
    /// Check this switch order (node ids, comma-separated, every switch
    /// whose table changes once) instead of finding a schedule; each switch
    /// replaces its table in one step.
    #[arg(long, value_delimiter = ',')]
    pub order: Option<Vec<u32>>,
    /// Do not also plan from scratch to compare churn.
    #[arg(long)]
    pub no_compare: bool,
    /// Move to the plan near the installed one, where the summary offers
    /// one (`near`: fewer priorities than the new plan, or as many at less
    /// churn where that was planned from scratch; some installed decisions
    /// changed), switch by switch. Where none is offered, the summary says
    /// so and the new plan stays.
    #[arg(long, conflicts_with = "new_rules")]
    pub near: bool,
    /// Path evaluations the extension's local search may spend when
    /// keeping the installed decisions greedily needs more priorities than
    /// the installed plan has, and the near plan's search after it
    /// (search:budget=N's unit each; 0: search for neither).
    #[arg(long, default_value = "1e9", value_parser = parse_evaluations)]
    pub search_budget: u64,
    #[command(flatten)]
    pub json: JsonArg,
    #[command(flatten)]
    pub plan_out: PlanOutArgs,
    /// Write the steps an operator applies into this directory: the union
    /// topology, step-N-ACTION.json per step (entries to add and remove),
    /// summary.json.
    #[arg(long)]
    pub steps_out: Option<PathBuf>,
    /// Write a Parquet row per step (see `tagger schema`, update.parquet).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Export each step's switch configurations, as they are after the
    /// step: sonic:DIR (SONiC config_db JSON) or json:DIR (the neutral
    /// table), one directory per step.
    #[arg(long)]
    pub export_steps: Option<tagger::sonic::Target>,
    #[command(flatten)]
    pub fit: FitArg,
    #[command(flatten)]
    pub switch: SwitchArgs,
    #[command(flatten)]
    pub mapping: MappingArgs,
    #[command(flatten)]
    pub limits: LimitArgs,
}

// `tagger sweep`.
#[derive(Debug, clap::Args)]
pub struct SweepArgs {
    /// A TOML sweep spec (see datasets/).
    pub spec: Option<PathBuf>,
    /// Output directory for runs.parquet and switches.parquet.
    #[arg(long, default_value = "sweep-out")]
    pub out: PathBuf,
    /// Scenarios run concurrently (default: all cores).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Refuse specs that expand to more scenarios than this.
    #[arg(long, default_value_t = sweep::DEFAULT_MAX_SCENARIOS)]
    pub max_scenarios: usize,
    /// Skip scenarios whose results are already in --out (same spec).
    #[arg(long)]
    pub resume: bool,
    /// Run only shard I of N (1-based; scenario ids round-robin) and write
    /// runs-shard-I-of-N.parquet, e.g. for a cluster job array.
    #[arg(long)]
    pub shard: Option<sweep::Shard>,
    #[command(flatten)]
    pub budget: BudgetArg,
    /// Do not write DIR/report.html at the end.
    #[arg(long)]
    pub no_report: bool,
}

/// What the switches hold: a plan beyond it is refused (`run`, `export`,
/// `verify` alike).
#[derive(Debug, clap::Args)]
pub struct LimitArgs {
    /// Lossless queues per port on the switches: a rule set that uses
    /// more priorities is refused (default 8; for `verify --exported` of a
    /// SONiC export, the lossless queues of the switch profile it
    /// records).
    #[arg(long)]
    pub max_priorities: Option<u32>,
    /// Tags the packet header carries (DSCP: 64): a rule set using a
    /// larger tag is refused.
    #[arg(long, default_value_t = tagger::verify::DSCP_TAGS)]
    pub max_tags: u32,
}

impl LimitArgs {
    pub fn limits(&self) -> tagger::verify::Limits {
        self.limits_or(tagger::verify::SWITCH_QUEUES)
    }

    /// The limits, with `queues` lossless queues unless --max-priorities
    /// says otherwise.
    pub fn limits_or(&self, queues: u32) -> tagger::verify::Limits {
        tagger::verify::Limits {
            max_priorities: Some(self.max_priorities.unwrap_or(queues)),
            max_tags: Some(self.max_tags),
        }
    }
}

/// The switch model a plan is fitted to and its buffers are sized for.
#[derive(Debug, clap::Args)]
pub struct SwitchArgs {
    /// Switch profile: a built-in name (spectrum2, spectrum1, tomahawk,
    /// tomahawk5, drafts-40g), file:PATH or file:PATH#NAME.
    #[arg(long = "switch", default_value = tagger::capacity::profile::DEFAULT_PROFILE)]
    pub name: tagger::capacity::ProfileSpec,
    /// Switch-to-switch cable length in metres (default: the profile's).
    #[arg(long)]
    pub cable_m: Option<f64>,
    /// Switch-to-switch port speed in Gb/s (default: the profile's).
    #[arg(long)]
    pub speed_gbps: Option<f64>,
    /// Headroom model: sonic or simple (default: the profile's).
    #[arg(long)]
    pub headroom: Option<tagger::capacity::HeadroomModel>,
    /// Traffic classes a plan may use at each switch for lossless
    /// traffic, or `none` for no limit (default: the profile's traffic
    /// classes less the lossy one, 7 on the built-in profiles). A stock
    /// SONiC switch rewrites tags with its port maps only, so a plan over
    /// this cannot be installed there: the algorithm keeps within it, or
    /// the run says why it cannot.
    #[arg(long, value_parser = parse_max_tcs)]
    pub max_tcs: Option<MaxTcs>,
}

/// `--max-tcs`: a count, or `none`.
#[derive(Clone, Copy, Debug)]
pub struct MaxTcs(pub Option<u32>);

fn parse_max_tcs(s: &str) -> Result<MaxTcs, String> {
    if s == "none" {
        return Ok(MaxTcs(None));
    }
    match s.parse::<u32>() {
        Ok(n) if (1..=15).contains(&n) => Ok(MaxTcs(Some(n))),
        _ => Err(format!(
            "'{s}': expected a number of traffic classes from 1 to 15, or none"
        )),
    }
}

impl SwitchArgs {
    pub fn profile(&self) -> tagger::Result<tagger::capacity::Profile> {
        self.name
            .resolve()?
            .with_links(self.cable_m, self.speed_gbps, self.headroom)
    }

    /// The traffic-class budget: `--max-tcs`, else the profile's.
    pub fn max_tcs(&self, profile: &tagger::capacity::Profile) -> Option<u32> {
        match self.max_tcs {
            Some(MaxTcs(n)) => n,
            None => Some(profile.lossless_tcs()),
        }
    }

    /// The profile file `--switch file:PATH[#NAME]` reads, if any.
    pub fn file(&self) -> Option<PathBuf> {
        self.name.file().map(PathBuf::from)
    }
}

/// How tags and priorities map onto DSCP values and queues in a SONiC
/// export.
#[derive(Debug, clap::Args)]
pub struct MappingArgs {
    /// DSCP value of each tag, tag 1 first (default: tag t is DSCP t + 2).
    #[arg(long, value_parser = |s: &str| tagger::sonic::Mapping::parse_list(s).map(List))]
    pub dscp: Option<List>,
    /// Queue (priority group) of each lossless priority, priority 1 first
    /// (default: 3,4,2,5,6,1,7, keeping those the switch profile's ports
    /// have).
    #[arg(long, value_parser = |s: &str| tagger::sonic::Mapping::parse_list(s).map(List))]
    pub queues: Option<List>,
    /// Each switch's configuration before the install, one config_db JSON
    /// per switch as `show runningconfiguration all` prints it (matched by
    /// DEVICE_METADATA hostname = the node's name or id, else by file
    /// name). Without it, a stock SONiC configuration rendered for the
    /// switch profile. Each switch's export is that base with the plan
    /// written in, and the JSON Patch from it.
    #[arg(long, value_name = "DIR")]
    pub base: Option<PathBuf>,
    /// DSCP values that keep the lossy class their base gives them: all,
    /// none, or a list (default: all with --base, none with the stock
    /// base). Others that are no tag join the base's default class (DSCP
    /// 0's), their DSCP unchanged.
    #[arg(long, value_name = "LIST")]
    pub keep_dscp: Option<tagger::sonic::KeepDscp>,
}

/// A comma-separated list of numbers, as one option value.
#[derive(Clone, Debug)]
pub struct List(Vec<u32>);

impl MappingArgs {
    /// The export's options: this mapping, the profile, whether switches
    /// must fit it, and the ELP spec to record.
    pub fn options(
        &self,
        profile: tagger::capacity::Profile,
        require_fit: bool,
        elp: Option<String>,
    ) -> anyhow::Result<tagger::sonic::Options> {
        use anyhow::Context as _;
        let d = tagger::sonic::Mapping::for_profile(&profile);
        let mapping = tagger::sonic::Mapping::new(
            self.dscp.clone().map_or(d.dscp, |l| l.0),
            self.queues.clone().map_or(d.queues, |l| l.0),
        )
        .context("--dscp / --queues")?;
        mapping
            .check_queues(&profile)
            .map_err(|e| anyhow::anyhow!("--queues: {e}"))?;
        let base = match &self.base {
            None => tagger::sonic::Base::Stock,
            Some(d) => tagger::sonic::Base::read(d).context("--base")?,
        };
        Ok(tagger::sonic::Options {
            mapping,
            profile,
            require_fit,
            elp,
            base,
            keep: self.keep_dscp.clone(),
        })
    }
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum ExportFormat {
    Sonic,
    Json,
}

impl From<ExportFormat> for tagger::sonic::Format {
    fn from(f: ExportFormat) -> Self {
        match f {
            ExportFormat::Sonic => tagger::sonic::Format::Sonic,
            ExportFormat::Json => tagger::sonic::Format::Json,
        }
    }
}

/// `--memory-budget`: a size, or `none` for no limit. Without the option
/// a run gets [`tagger::budget::machine_default`].
#[derive(Clone, Copy, Debug)]
pub struct MemoryBudget(pub Option<u64>);

impl MemoryBudget {
    /// The budget in force: the option's, or the machine's default.
    pub fn resolve(arg: Option<MemoryBudget>) -> Option<u64> {
        arg.map_or_else(tagger::budget::machine_default, |b| b.0)
    }
}

fn parse_evaluations(s: &str) -> std::result::Result<u64, String> {
    tagger::tagging::count(s).ok_or_else(|| {
        format!(
            "{s} is {} (e.g. 1000000000 or 1e9)",
            tagger::generators::params::not_a_count(s)
        )
    })
}

fn parse_budget(s: &str) -> std::result::Result<MemoryBudget, tagger::ValueError> {
    if s.eq_ignore_ascii_case("none") {
        return Ok(MemoryBudget(None));
    }
    tagger::budget::parse_size(s).map(|b| MemoryBudget(Some(b)))
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum SchemaFormat {
    Markdown,
    Json,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum Format {
    Json,
    Edgelist,
}

#[cfg(test)]
mod tests {
    use super::Cli;
    use clap::CommandFactory;

    /// clap's own consistency checks, and every argument of every
    /// subcommand has help written for its user.
    #[test]
    fn every_argument_has_help() {
        let cmd = Cli::command();
        cmd.clone().debug_assert();
        let mut missing = Vec::new();
        for sub in cmd.get_subcommands() {
            for arg in sub.get_arguments() {
                let id = arg.get_id().as_str();
                if matches!(id, "help" | "version") {
                    continue;
                }
                if arg.get_help().is_none() && arg.get_long_help().is_none() {
                    missing.push(format!("{} {id}", sub.get_name()));
                }
            }
        }
        assert!(missing.is_empty(), "arguments without help: {missing:?}");
    }
}

/// One `--routing` value: a routing model, or `both`.
#[derive(Clone, Debug)]
pub struct Routings(pub Vec<Routing>);

fn parse_routing(s: &str) -> Result<Routings, String> {
    match s.trim() {
        "both" => Ok(Routings(vec![Routing::Converged, Routing::Local])),
        one => one
            .parse::<Routing>()
            .map(|r| Routings(vec![r]))
            .map_err(|e| format!("{e} (or both)")),
    }
}
