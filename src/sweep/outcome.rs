//! What one scenario of a sweep gives: its row or its error, and its
//! per-switch, failure and growth rows, as the tables read them.

use super::spec::Scenario;
use crate::output::record::record;
use crate::pipeline::Summary;

/// The outcome of one scenario.
#[derive(Debug)]
pub struct Outcome {
    /// The scenario.
    pub scenario: Scenario,
    /// Its row, or the error that stopped it.
    pub result: Result<Summary, Failed>,
    /// Its per-switch rows.
    pub nodes: Vec<NodeRow>,
    /// The failure what-if's aggregates and trials, when it ran.
    pub failures: Option<crate::failures::Report>,
    /// The growth path's steps, when it ran.
    pub growth: Vec<crate::update::GrowthRow>,
    /// Peak resident memory of the process after the scenario, if the OS reports it.
    pub peak_rss_bytes: Option<u64>,
}

/// Why a scenario failed: the stage and its typed error, which a caller
/// can match ([`Failed::error`]) and `runs.parquet` names
/// (`error_kind`, [`crate::Error::kind`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Failed {
    /// The run itself: topology, ELP, tagging, rules, verification.
    #[error(transparent)]
    Run(crate::Error),
    /// The failure what-if on the scenario's plan.
    #[error("failure what-if: {0}")]
    Failures(#[source] crate::Error),
    /// The growth path from the scenario's plan.
    #[error("growth: {0}")]
    Growth(#[source] crate::Error),
}

impl Failed {
    /// The error that stopped the scenario.
    pub fn error(&self) -> &crate::Error {
        match self {
            Failed::Run(e) | Failed::Failures(e) | Failed::Growth(e) => e,
        }
    }
}

record! {
    /// One node's row of `switches.parquet`.
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub struct NodeRow [prefix = ""] {
        /// Node id (as in the topology JSON and the rules file).
        pub node: u32,
        /// `switch` or `server`.
        pub kind: String,
        /// Tier on a tiered topology (0 = ToR), null elsewhere.
        pub level: Option<u32>,
        /// Links at the node (host ports not counted).
        pub degree: u32,
        /// Hosts attached.
        pub hosts: u32,
        /// ACL entries, one per distinct lossless key.
        pub acl_exact: u64,
        /// ACL entries after port-set compression (as installed).
        pub acl_compressed: u64,
        /// Ingress (tag, queue) map entries.
        pub queue_rules: u64,
        /// All entries: `acl_compressed + queue_rules`.
        pub rules: u64,
        /// Lossless priorities present at the node.
        pub priorities: u32,
        /// Ports (switch and host) where at least one lossless priority
        /// arrives (null for a BCube server: no switch profile applies).
        pub lossless_ports: Option<u32>,
        /// PFC headroom the switch reserves: over its ports, the priorities
        /// arriving there times the per-priority headroom of the profile.
        pub headroom_bytes: Option<u64>,
        /// The profile's lossless buffer minus `headroom_bytes` (negative:
        /// over).
        pub buffer_margin_bytes: Option<i64>,
        /// True when the headroom fits the lossless buffer.
        pub fits_buffer: Option<bool>,
        /// True when the priorities present fit the profile's lossless
        /// queues.
        pub fits_queues: Option<bool>,
        /// True when the compressed ACL entries fit the profile's ACL
        /// capacity (null when the profile gives none).
        pub fits_acl: Option<bool>,
        /// Traffic classes the node's lossless traffic uses: what its port
        /// maps need (0 without lossless traffic).
        pub tcs: u32,
        /// True when they fit the profile's traffic classes, one kept lossy
        /// (null for a BCube server).
        pub fits_tcs: Option<bool>,
    }
}
