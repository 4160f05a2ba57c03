//! Errors of the topology stage. Every variant carries the offending value so
//! the binary can print it without guessing.

use std::path::PathBuf;

/// Anything that can go wrong while parsing a spec, generating a topology or
/// reading one from a file.
#[derive(Debug, thiserror::Error)]
pub enum TopologyError {
    /// The spec string is not `family:key=value,...`.
    #[error("topology spec '{spec}': {reason}")]
    Spec {
        /// The spec as given.
        spec: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The family name is not one we know.
    #[error(
        "unknown topology family '{family}' (expected fattree, leafspine, bcube, hyperx, jellyfish, or a topology file as file:PATH)"
    )]
    UnknownFamily {
        /// The name as given.
        family: String,
    },
    /// A parameter is missing, unknown, malformed or out of range.
    #[error("{family}: parameter {param} = {value}: {reason}")]
    Param {
        /// The family.
        family: &'static str,
        /// The parameter.
        param: String,
        /// Its value as given.
        value: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The requested network is larger than this engine will build.
    #[error("{family}: {what} = {value} exceeds the limit of {limit}")]
    TooLarge {
        /// The family.
        family: &'static str,
        /// What was counted (nodes, links).
        what: &'static str,
        /// How many the parameters ask for.
        value: u128,
        /// The most allowed.
        limit: u128,
    },
    /// A random construction could not finish (only tiny or degenerate graphs).
    #[error("{family}: {reason}")]
    Construction {
        /// The family.
        family: &'static str,
        /// What went wrong.
        reason: String,
    },
    /// A structural problem in an explicitly given topology.
    #[error("{location}: {reason}")]
    Invalid {
        /// The element at fault (`links[3] = [0, 9]`, `nodes[2].port_names`).
        location: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A topology file could not be read.
    /// The OS error is part of the message and deliberately not a
    /// `source()`, so that a caller printing the chain does not say it twice.
    #[error("cannot read topology file {}: {cause}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        cause: std::io::Error,
    },
    /// A topology file is not valid JSON of our format.
    #[error("{}: {location}: {reason}", path.display())]
    File {
        /// The file.
        path: PathBuf,
        /// The line and column, or the element (`nodes[3].hosts`).
        location: String,
        /// What is wrong there.
        reason: String,
    },
}

/// The crate's result type.
pub type Result<T, E = TopologyError> = std::result::Result<T, E>;
