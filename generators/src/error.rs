//! Errors of the topology stage. Every variant carries the offending value so
//! the binary can print it without guessing.

use std::path::PathBuf;

/// Anything that can go wrong while parsing a spec, generating a topology or
/// reading one from a file.
#[derive(Debug, thiserror::Error)]
pub enum TopologyError {
    /// The spec string is not `family:key=value,...`.
    #[error("topology spec '{spec}': {reason}")]
    Spec { spec: String, reason: String },
    /// The family name is not one we know.
    #[error(
        "unknown topology family '{family}' (expected fattree, leafspine, bcube, hyperx, jellyfish or file)"
    )]
    UnknownFamily { family: String },
    /// A parameter is missing, unknown, malformed or out of range.
    #[error("{family}: parameter {param} = {value}: {reason}")]
    Param {
        family: &'static str,
        param: String,
        value: String,
        reason: String,
    },
    /// The requested network is larger than this engine will build.
    #[error("{family}: {what} = {value} exceeds the limit of {limit}")]
    TooLarge {
        family: &'static str,
        what: &'static str,
        value: u128,
        limit: u128,
    },
    /// A random construction could not finish (only tiny or degenerate graphs).
    #[error("{family}: {reason}")]
    Construction {
        family: &'static str,
        reason: String,
    },
    /// A structural problem in an explicitly given topology.
    #[error("{location}: {reason}")]
    Invalid { location: String, reason: String },
    /// A topology file could not be read.
    /// The OS error is part of the message and deliberately not a
    /// `source()`, so that a caller printing the chain does not say it twice.
    #[error("cannot read topology file {}: {cause}", path.display())]
    Io {
        path: PathBuf,
        cause: std::io::Error,
    },
    /// A topology file is not valid JSON of our format.
    #[error("{}: {location}: {reason}", path.display())]
    File {
        path: PathBuf,
        location: String,
        reason: String,
    },
}

pub type Result<T, E = TopologyError> = std::result::Result<T, E>;
