//! The library's error type. Each stage has variants that carry the value at
//! fault; the binary adds context with `anyhow` and prints `{:#}`.

use std::path::PathBuf;
pub use tagger_generators::TopologyError;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Topology(#[from] TopologyError),
    /// An ELP spec that does not parse or does not fit the topology.
    #[error("ELP '{spec}': {reason}")]
    ElpSpec { spec: String, reason: String },
    /// A failure spec (`--fail`) that does not parse or does not fit the
    /// topology.
    #[error("failures '{spec}': {reason}")]
    FailureSpec { spec: String, reason: String },
    /// A plan that cannot be exported, or an export that cannot be read
    /// back; names the file, table or node at fault.
    #[error("export: {reason}")]
    Export { reason: String },
    /// A line of a path file that is not a path of the topology.
    #[error("{}: line {line}: {reason}", path.display())]
    PathFile {
        path: PathBuf,
        line: usize,
        reason: String,
    },
    /// An algorithm name or parameter that is not known or not applicable.
    #[error("algorithm '{algo}': {reason}")]
    Algo { algo: String, reason: String },
    /// A result larger than the caller allowed.
    #[error("{what} = {value} exceeds the limit of {limit}")]
    Limit {
        what: &'static str,
        value: u128,
        limit: u128,
    },
    /// A rules file that is not valid `tagger-rules/1`.
    #[error("{}: {location}: {reason}", path.display())]
    RulesFile {
        path: PathBuf,
        location: String,
        reason: String,
    },
    /// Verification found the configuration unsafe; the text lists violations.
    #[error("verification failed: {0}")]
    Verification(String),
    /// An invariant the tagging stage checks on its own result did not hold.
    #[error("internal check failed in {stage}: {reason}")]
    SelfCheck { stage: &'static str, reason: String },
    /// A switch profile that is invalid or unknown; names where it came
    /// from (a file, or `built-in`), the profile and the field.
    #[error("switch profile {origin}: [{profile}] {field}: {reason}")]
    Profile {
        origin: String,
        profile: String,
        field: String,
        reason: String,
    },
    /// A sweep spec that is invalid; names file, group and key.
    #[error("{file}: {location}: {reason}")]
    SweepSpec {
        file: String,
        location: String,
        reason: String,
    },
    /// The OS error is part of the message and deliberately not a
    /// `source()`, so that a caller printing the chain does not say it twice.
    #[error("{}: {cause}", path.display())]
    Io {
        path: PathBuf,
        cause: std::io::Error,
    },
    /// A scenario whose estimated memory exceeds its budget.
    #[error(
        "memory budget exceeded in {stage}: needs an estimated {} (the budget is {})",
        human(*needed),
        human(*budget)
    )]
    MemoryBudget {
        stage: &'static str,
        needed: u64,
        budget: u64,
    },
    #[error("Parquet file {}: {reason}", path.display())]
    Parquet { path: PathBuf, reason: String },
    /// Shard files that cannot be merged: none, different sweeps, or some
    /// missing (named by index).
    #[error("cannot merge {}: {reason}", dir.display())]
    Merge { dir: PathBuf, reason: String },
    /// Another process holds the output directory's lock.
    #[error(
        "{}: another tagger sweep is writing this output ({holder}); wait for it to finish or choose another --out",
        path.display()
    )]
    Busy { path: PathBuf, holder: String },
    /// A worker pool that could not be built (threads the OS refused).
    #[error("starting {jobs} worker threads: {reason}")]
    Threads { jobs: usize, reason: String },
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            cause: source,
        }
    }
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
