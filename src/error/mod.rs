//! The library's error type. Each stage has variants that carry the value at
//! fault; the binary adds context with `anyhow` and prints `{:#}`.

use std::path::PathBuf;
pub use tagger_generators::TopologyError;

mod causes;
pub use causes::{MAX_BOUNCES, MAX_RANDOM_PATHS, MappingError, Mismatch, SpecError};

/// Anything a stage of the engine can refuse or fail at; every variant
/// carries the value at fault.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A topology spec, generator or file (see [`TopologyError`]).
    #[error(transparent)]
    Topology(#[from] TopologyError),
    /// An ELP that cannot be built on the topology for a reason given as
    /// text: forwarding tables on a fabric without switch names and ports,
    /// paths a plan does not keep (a spec that does not parse is
    /// [`Error::ElpSyntax`], a family that does not apply
    /// [`Error::ElpTopology`]).
    #[error("ELP '{spec}': {reason}")]
    ElpSpec {
        /// The spec as given.
        spec: String,
        /// What is wrong, naming the part and parameter.
        reason: String,
    },
    /// An ELP spec whose grammar is wrong: the part and parameter at
    /// fault, typed.
    #[error("ELP '{spec}': {cause}")]
    ElpSyntax {
        /// The spec as given.
        spec: String,
        /// What is wrong with it.
        #[source]
        cause: SpecError,
    },
    /// An ELP family that does not apply to the topology (kbounce off a
    /// tiered network, dor off HyperX and BCube, fewer than two endpoints).
    #[error("ELP '{spec}': {cause}")]
    ElpTopology {
        /// The spec as given.
        spec: String,
        /// Why the family does not apply.
        #[source]
        cause: Mismatch,
    },
    /// A failure spec (`--fail`) that does not parse or does not fit the
    /// topology.
    #[error("failures '{spec}': {reason}")]
    FailureSpec {
        /// The spec as given.
        spec: String,
        /// What is wrong, naming the parameter.
        reason: String,
    },
    /// A plan that cannot be exported, or an export that cannot be read
    /// back; names the file, table or node at fault.
    #[error("export: {reason}")]
    Export {
        /// Which stage of exporting refused, for a caller to match.
        kind: ExportKind,
        /// What is wrong, naming the file, table, port or node.
        reason: String,
    },
    /// A tag -> DSCP or priority -> queue mapping that is invalid (a value
    /// out of range or listed twice) or has no value for what the plan
    /// uses; `origin` names where it was read, if not given by the caller.
    #[error("export: {}{cause}", origin.as_ref().map(|o| format!("{o}: ")).unwrap_or_default())]
    Mapping {
        /// The file it was read from (`summary.json` of an export).
        origin: Option<String>,
        /// What is wrong with it.
        #[source]
        cause: MappingError,
    },
    /// A line of a path file that is not a path of the topology.
    #[error("{}: line {line}: {reason}", path.display())]
    PathFile {
        /// The path file.
        path: PathBuf,
        /// The line at fault, from 1.
        line: usize,
        /// What is wrong with it.
        reason: String,
    },
    /// A name that is not one of the choices (a routing model, a cycle
    /// detection backend, a headroom model).
    #[error("unknown {what} '{value}' (expected {expected})")]
    Choice {
        /// What was being chosen.
        what: &'static str,
        /// The name as given.
        value: String,
        /// The choices.
        expected: &'static str,
    },
    /// A `--shard` that is not `I/N` with `1 <= I <= N`.
    #[error("shard '{value}' must be I/N with 1 <= I <= N (e.g. 3/16)")]
    Shard {
        /// The value as given.
        value: String,
    },
    /// An algorithm name or parameter that is not known or not applicable.
    #[error("algorithm '{algo}': {reason}")]
    Algo {
        /// The algorithm as given.
        algo: String,
        /// What is wrong, naming the parameter.
        reason: String,
    },
    /// A run's settings that cannot go together or are out of range,
    /// refused before any work ([`crate::pipeline::RunConfig::validate`]).
    #[error("run settings: {field} = {value}: {reason}")]
    Config {
        /// The setting (`RunConfig`'s field).
        field: &'static str,
        /// Its value.
        value: String,
        /// Why it is refused.
        reason: String,
    },
    /// An algorithm or failure spec whose parameters their own parser
    /// refused (a list that is not `key=value,...`, seconds that are not a
    /// number).
    #[error("{what} '{spec}': {cause}")]
    Param {
        /// `algorithm` or `failures`.
        what: &'static str,
        /// The spec as given.
        spec: String,
        /// The parser's error.
        #[source]
        cause: ParamError,
    },
    /// A result larger than the caller allowed: counting stopped once it
    /// passed the limit, so how many there are is not known.
    #[error("more than {limit} {what}: over the limit (counting stopped there)")]
    Limit {
        /// What was counted.
        what: &'static str,
        /// The count when it stopped (the limit + 1).
        value: u128,
        /// How many are allowed.
        limit: u128,
    },
    /// A rules file that is not valid `tagger-rules/1`.
    #[error("{}: {location}: {reason}", path.display())]
    RulesFile {
        /// The rules file.
        path: PathBuf,
        /// The line and column, or the field (`entries[3].node`).
        location: String,
        /// What is wrong there.
        reason: String,
    },
    /// The independent verifier refused a plan: its report, whose
    /// violations are typed (`verify::Violation`; the report itself is
    /// [`Error::verification_report`], kept as a cause here so that this
    /// type names no stage above it).
    #[error("verification failed: {}{report}", if what.is_empty() { String::new() } else { format!("{what}: ") })]
    Verification {
        /// Which plan, where it is not the run's own (e.g. "the installed
        /// rules r.json on fattree:k=4 with ELP kbounce:1"); may be empty.
        what: String,
        /// The verifier's report (a `verify::Report`).
        report: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A change to a running fabric cannot be planned or scheduled safely
    /// (`tagger update`); the reason names the node, switch or check.
    #[error("update: {reason}")]
    Update {
        /// What stops it.
        reason: String,
    },
    /// A growth path (`growth = "grow:switches=10"`) whose change does not
    /// parse: the change parser's own error.
    #[error("update: growth '{spec}': {cause}")]
    Growth {
        /// The growth spec as given.
        spec: String,
        /// Why its change does not parse (boxed: a topology error is
        /// large, and every `Result` carries the largest variant).
        #[source]
        cause: Box<TopologyError>,
    },
    /// The installed plan given to `tagger update` cannot be extended
    /// (only planned afresh, with `--new-rules`).
    #[error("update: {0}")]
    NotExtendable(#[from] NotExtendable),
    /// An invariant the tagging stage checks on its own result did not hold.
    #[error("internal check failed in {stage}: {reason}")]
    SelfCheck {
        /// The stage whose check failed.
        stage: &'static str,
        /// What did not hold.
        reason: String,
    },
    /// A switch profile that is invalid or unknown; names where it came
    /// from (a file, or `built-in`), the profile and the field.
    #[error("switch profile {origin}: [{profile}] {field}: {reason}")]
    Profile {
        /// The file, or `built-in`.
        origin: String,
        /// The profile's name.
        profile: String,
        /// The field (or line) at fault.
        field: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A sweep spec that is invalid; names file, group and key.
    #[error("{file}: {location}: {cause}")]
    SweepSpec {
        /// The spec file.
        file: String,
        /// The group and key, or the line.
        location: String,
        /// What is wrong there: the value's own typed error where its
        /// parser gave one (boxed, to keep every `Result` small).
        #[source]
        cause: Box<SpecFault>,
    },
    /// Two outputs that name one file, or an output that is one of the
    /// run's inputs (or inside an output directory): refused before any
    /// work, so nothing is overwritten.
    #[error("{first} and {second} name the same file {}", path.display())]
    SameFile {
        /// The first option (or input) naming it.
        first: String,
        /// The second.
        second: String,
        /// The file.
        path: PathBuf,
    },
    /// An output directory that holds files this program did not write:
    /// refused rather than mixed with or replaced.
    #[error("{}: {reason}", path.display())]
    OutputDir {
        /// The directory.
        path: PathBuf,
        /// Why it is refused.
        reason: String,
    },
    /// The OS error is part of the message and deliberately not a
    /// `source()`, so that a caller printing the chain does not say it twice.
    #[error("{}: {cause}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The operating system's error.
        cause: std::io::Error,
    },
    /// A scenario whose estimated memory exceeds its budget.
    #[error(
        "memory budget exceeded in {stage}: needs an estimated {} (the budget is {})",
        human(*needed),
        human(*budget)
    )]
    MemoryBudget {
        /// The stage that would exceed it.
        stage: &'static str,
        /// Bytes it would need (estimated before the work).
        needed: u64,
        /// Bytes allowed.
        budget: u64,
    },
    /// A table column that is not what its record declares: missing, or
    /// of another type.
    #[error("column '{column}': {reason}")]
    Column {
        /// The column's name.
        column: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A Parquet file that cannot be written or read.
    #[error("Parquet file {}: {cause}", path.display())]
    Parquet {
        /// The file.
        path: PathBuf,
        /// What went wrong: Arrow's or Parquet's own error where one of
        /// them refused.
        #[source]
        cause: TableFault,
    },
    /// A chart of the sweep's HTML report that plotters could not draw.
    #[cfg(feature = "tables")]
    #[error("{}: drawing the chart '{title}': {cause}", path.display())]
    Chart {
        /// The report being written.
        path: PathBuf,
        /// The chart's title.
        title: String,
        /// plotters' error (`report::DrawError`).
        #[source]
        cause: plotters::drawing::DrawingAreaErrorKind<std::io::Error>,
    },
    /// Shard files that cannot be merged: none, different sweeps, or some
    /// missing (named by index).
    #[error("cannot merge {}: {reason}", dir.display())]
    Merge {
        /// The sweep directory.
        dir: PathBuf,
        /// What does not fit together.
        reason: String,
    },
    /// Another process holds the output directory's lock.
    #[error(
        "{}: another process is writing this output ({holder}); wait for it to finish or choose another output directory",
        path.display()
    )]
    Busy {
        /// The lock file.
        path: PathBuf,
        /// Who holds it (the command and its process id), as the lock file
        /// says.
        holder: String,
    },
    /// Some switch does not fit the switch model where every one must
    /// (`--require-fit`): nothing was written.
    #[error("switches do not fit {profile} ({}): nothing written", over_text(over))]
    DoesNotFit {
        /// The switch profile.
        profile: String,
        /// Per check failed (buffer, queues, traffic classes, ACL), the
        /// switches failing it.
        over: Vec<(&'static str, u64)>,
    },
    /// A worker pool that could not be built (threads the OS refused).
    #[error("starting {jobs} worker threads: {cause}")]
    Threads {
        /// Threads asked for.
        jobs: usize,
        /// rayon's error, with the operating system's answer.
        #[source]
        cause: rayon::ThreadPoolBuildError,
    },
}

/// `3 over buffer, 1 over queues`.
fn over_text(over: &[(&'static str, u64)]) -> String {
    let parts: Vec<String> = over
        .iter()
        .map(|(check, n)| format!("{n} over {check}"))
        .collect();
    parts.join(", ")
}

/// The library's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Why an installed plan cannot be extended to a changed topology: the
/// extension reads each tag as its priority and starts every host at tag
/// 1, as the DSCP plans of every algorithm but `greedy-ttl` do.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NotExtendable {
    /// Hosts send another first tag, or several application classes share
    /// the plan (`run --classes`).
    #[error(
        "extending a plan needs one class starting at tag 1 (this one: initial_tag {initial_tag}, classes {classes:?}); give the new plan with --new-rules instead"
    )]
    Classes {
        /// The tag hosts send.
        initial_tag: u32,
        /// The tags of the application classes (empty: one).
        classes: Vec<u32>,
    },
    /// An entry whose tag is not its priority (a hop-count plan).
    #[error(
        "extending a plan needs each tag to be its priority (DSCP rewrite); node {node}'s entry for tag {tag} is in queue {priority}: give the new plan with --new-rules instead"
    )]
    TagNotPriority {
        /// The node of the first such entry.
        node: u32,
        /// Its tag.
        tag: u32,
        /// Its priority (queue).
        priority: u32,
    },
}

/// A value given as text that is not what it must be: a size (`64GiB`,
/// as `--memory-budget` takes it) or a number of seconds (a time limit).
/// Each variant carries the text at fault;
/// callers that report it with more context keep it as a typed cause.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ValueError {
    /// Not a number with an optional unit.
    #[error("'{text}' is not a size (e.g. 8GiB, 500MB, 1048576)")]
    NotASize {
        /// The text given.
        text: String,
    },
    /// A number with a unit that is not one of the sizes'.
    #[error("'{text}': unknown unit '{unit}' (expected B, KB, MB, GB, TB, KiB, MiB, GiB or TiB)")]
    UnknownUnit {
        /// The text given.
        text: String,
        /// Its unit.
        unit: String,
    },
    /// A size under one byte.
    #[error("'{text}' must be at least 1 byte")]
    BelowOneByte {
        /// The text given.
        text: String,
    },
    /// A size past 1 PiB (no machine has a memory budget that large).
    #[error("'{text}' exceeds 1 PiB")]
    AbovePebibyte {
        /// The text given.
        text: String,
    },
    /// Seconds that are not a positive number.
    #[error("{key} = {value} must be seconds, a positive number")]
    NotSeconds {
        /// The parameter or option.
        key: String,
        /// The value given.
        value: String,
    },
    /// Seconds past 10^7.
    #[error("{key} = {value} is out of range (at most 10000000 seconds)")]
    SecondsOutOfRange {
        /// The parameter or option.
        key: String,
        /// The value given.
        value: String,
    },
}

/// What is wrong with a Parquet file ([`Error::Parquet`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TableFault {
    /// Said in words: tables of different sweeps, no record batch, a row
    /// without its scenario.
    #[error("{0}")]
    Reason(String),
    /// The Parquet reader refused the file.
    #[cfg(feature = "tables")]
    #[error("cannot read it: {0}")]
    Read(#[source] parquet::errors::ParquetError),
    /// A record batch of the file that cannot be decoded.
    #[cfg(feature = "tables")]
    #[error("cannot read it: {0}")]
    ReadBatch(#[source] arrow_schema::ArrowError),
    /// The Parquet writer failed (an I/O error is [`Error::Io`] instead).
    #[cfg(feature = "tables")]
    #[error("cannot write it: {0}")]
    Write(#[source] parquet::errors::ParquetError),
    /// Arrow refused to build or combine record batches.
    #[cfg(feature = "tables")]
    #[error(transparent)]
    Arrow(arrow_schema::ArrowError),
    /// Parquet refused a writer setting.
    #[cfg(feature = "tables")]
    #[error(transparent)]
    Setting(parquet::errors::ParquetError),
    /// A column that is not what its record declares ([`Error::Column`]).
    #[error(transparent)]
    Column(Box<Error>),
}

impl From<String> for TableFault {
    fn from(reason: String) -> Self {
        TableFault::Reason(reason)
    }
}

impl From<&str> for TableFault {
    fn from(reason: &str) -> Self {
        TableFault::Reason(reason.to_string())
    }
}

/// A parameter list or value that its own parser refused
/// ([`Error::Param`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ParamError {
    /// The list is not `key=value,...`.
    #[error(transparent)]
    List(#[from] tagger_generators::params::ParamsError),
    /// A value (seconds) that does not parse.
    #[error(transparent)]
    Value(#[from] ValueError),
}

/// What is wrong at one key of a sweep spec ([`Error::SweepSpec`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SpecFault {
    /// A rule of the spec itself (an empty list, a key without the key it
    /// needs, an ELP a topology cannot take), said in words.
    #[error("{0}")]
    Reason(String),
    /// A value its own parser refused (a topology, ELP, algorithm, failure
    /// spec, switch profile, ...): that parser's error.
    #[error(transparent)]
    Value(Box<Error>),
    /// A size (`memory_budget`) that does not parse.
    #[error(transparent)]
    Size(#[from] ValueError),
    /// A file the spec names that cannot be read.
    #[error("'{spec}': cannot read {}: {cause}", path.display())]
    Unreadable {
        /// The spec naming it (`file:PATH`).
        spec: String,
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        cause: std::io::Error,
    },
}

impl From<String> for SpecFault {
    fn from(reason: String) -> Self {
        SpecFault::Reason(reason)
    }
}

impl From<&str> for SpecFault {
    fn from(reason: &str) -> Self {
        SpecFault::Reason(reason.to_string())
    }
}

impl From<Error> for SpecFault {
    fn from(e: Error) -> Self {
        SpecFault::Value(Box::new(e))
    }
}

/// What an [`Error::Export`] is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ExportKind {
    /// An export target that is not `sonic:DIR` or `json:DIR`.
    Target,
    /// A plan the port maps cannot encode (an entry sending a packet back
    /// out of the link it came in on).
    Plan,
    /// An exported directory that cannot be read back: a file that is not
    /// JSON, a table or value that is missing, malformed or inconsistent, or
    /// a configuration under which the decoded priorities are not lossless.
    ReadBack,
    /// A switch's base configuration (`--base`) that cannot be read or
    /// built on: a file that is not one switch's `config_db`, a switch
    /// without one, a buffer model or port the plan cannot be written for.
    Base,
}

impl Error {
    /// An I/O error on `path`.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            cause: source,
        }
    }

    /// The variant's name in snake case (`memory_budget`, `verification`,
    /// `elp_topology`, ...): what kind of error this is, as a sweep's
    /// `runs.parquet` records it (`error_kind`) so that failed scenarios can
    /// be grouped without parsing their messages. Stable: a variant's name
    /// does not change.
    pub fn kind(&self) -> &'static str {
        match self {
            Error::Topology(_) => "topology",
            Error::ElpSpec { .. } => "elp_spec",
            Error::ElpSyntax { .. } => "elp_syntax",
            Error::ElpTopology { .. } => "elp_topology",
            Error::FailureSpec { .. } => "failure_spec",
            Error::Export { .. } => "export",
            Error::Mapping { .. } => "mapping",
            Error::PathFile { .. } => "path_file",
            Error::Choice { .. } => "choice",
            Error::Shard { .. } => "shard",
            Error::Algo { .. } => "algo",
            Error::Config { .. } => "config",
            Error::Param { .. } => "param",
            Error::Limit { .. } => "limit",
            Error::RulesFile { .. } => "rules_file",
            Error::Verification { .. } => "verification",
            Error::Update { .. } => "update",
            Error::Growth { .. } => "growth",
            Error::NotExtendable(_) => "not_extendable",
            Error::SelfCheck { .. } => "self_check",
            Error::Profile { .. } => "profile",
            Error::SweepSpec { .. } => "sweep_spec",
            Error::SameFile { .. } => "same_file",
            Error::OutputDir { .. } => "output_dir",
            Error::Io { .. } => "io",
            Error::MemoryBudget { .. } => "memory_budget",
            Error::Column { .. } => "column",
            Error::Parquet { .. } => "parquet",
            #[cfg(feature = "tables")]
            Error::Chart { .. } => "chart",
            Error::Merge { .. } => "merge",
            Error::Busy { .. } => "busy",
            Error::DoesNotFit { .. } => "does_not_fit",
            Error::Threads { .. } => "threads",
        }
    }

    /// The operating system's error kind, for an [`Error::Io`]: a caller
    /// can tell a closed pipe (`BrokenPipe`) from a real failure.
    pub fn io_kind(&self) -> Option<std::io::ErrorKind> {
        match self {
            Error::Io { cause, .. } => Some(cause.kind()),
            _ => None,
        }
    }
}

/// At most `max` characters of `text`, as an error quotes a value read from
/// an input: control and bidirectional characters escaped (`\u{1b}`), so a
/// name from a file cannot rewrite the terminal, and the rest counted
/// (`... (N more characters)`), so a 10 MB line does not become a 10 MB
/// error.
pub fn excerpt(text: &str, max: usize) -> String {
    let mut out = String::new();
    for (i, c) in text.chars().enumerate() {
        if i == max {
            let rest = text.chars().count() - max;
            out.push_str(&format!("... ({rest} more characters)"));
            break;
        }
        if c.is_control()
            || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
        {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    out
}

/// `bytes` for people: `1.50 GiB`.
pub fn human(bytes: u64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut v = bytes as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < units.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{bytes} B")
    } else {
        format!("{v:.2} {}", units[u])
    }
}

#[cfg(test)]
mod excerpt_tests {
    use super::excerpt;

    /// Long values are cut and counted, control and bidirectional
    /// characters escaped, short ones left as they are.
    #[test]
    fn excerpts_are_bounded_and_escaped() {
        assert_eq!(excerpt("Ethernet0", 80), "Ethernet0");
        assert_eq!(
            excerpt(&"y".repeat(100), 10),
            format!("{}... (90 more characters)", "y".repeat(10))
        );
        assert_eq!(
            excerpt("a\u{1b}[31m\u{202e}b", 80),
            "a\\u{1b}[31m\\u{202e}b"
        );
        assert_eq!(excerpt("abc", 3), "abc");
    }
}
