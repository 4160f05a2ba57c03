//! # tagger
//!
//! Plans PFC deadlock prevention for lossless (RDMA) data-center networks
//! with the Tagger scheme: generate a topology, take its expected lossless
//! paths (ELPs), assign packet tags (brute force, rule-level greedy with
//! incremental cycle detection, or Clos bounce tagging), emit per-switch
//! match-action rules, verify them independently, and report priority and
//! rule counts.
//!
//! The pipeline, one module per stage:
//! [`topo`] -> [`elp`] -> [`tagging`] -> [`rules`] -> [`verify`] -> [`stats`]
//! -> [`output`]; [`pipeline`] runs one scenario and [`sweep`] a batch.
//! [`capacity`] fits a plan to a switch model, [`failures`] replays it
//! under link and switch failures, [`sonic`] exports it as per-switch
//! SONiC configuration (and reads that back for verification), and
//! [`report`] draws a sweep's tables as one HTML page.
//!
//! The model, its terms and the algorithms with their literature are in
//! the repository's `docs/model.md`; `docs/priorities.md` covers the search
//! for the fewest priorities.
//!
//! # Layers
//!
//! Bottom first. A module uses only modules of the layers below it (tests
//! aside), so the module graph has no circle; `scripts/check_layers.py`
//! checks this list against every `crate::` path in CI.
//!
//! 1. `bits`, `bucket`, `seed`, [`compress`], [`topo`]: bit sets, bucket
//!    queues, seeded randomness, rule compression and topology figures,
//!    which use nothing of the crate.
//! 2. [`error`]: the error type and the causes it carries that are pure
//!    data.
//! 3. [`budget`], [`output`]: the memory budget; files written whole or
//!    not at all, and the tables' columns.
//! 4. [`cycle`]: incremental cycle detection.
//! 5. [`elp`]: expected lossless paths.
//! 6. [`tagging`]: the algorithms.
//! 7. [`rules`]: per-switch match-action rules.
//! 8. [`verify`]: the independent verifier.
//! 9. [`capacity`]: the fit to a switch model.
//! 10. [`stats`]: rule and priority statistics.
//! 11. [`pipeline`]: one scenario, end to end.
//! 12. [`failures`], [`sonic`]: the failure what-if; SONiC exports and
//!     their read-back.
//! 13. [`update`]: changing a running fabric.
//! 14. [`sweep`]: a batch of scenarios.
//! 15. [`render`]: every printed report.
//! 16. [`report`]: a sweep's HTML page.
//!
//! # Example
//!
//! Plan a 4-ary fat-tree for paths with at most one bounce, with the Clos
//! scheme, and read the verified result:
//!
//! ```
//! use tagger::elp::ElpSpec;
//! use tagger::pipeline::{run, RunConfig};
//!
//! let cfg = RunConfig {
//!     topology: tagger::TopologySpec::parse("fattree:k=4")?,
//!     elp: ElpSpec::parse("kbounce:1")?,
//!     algo: "clos".parse()?,
//!     cycle: Default::default(),
//!     memory_budget: None,
//!     switch: tagger::capacity::Profile::resolve("spectrum2")?,
//!     max_tcs: Some(7), // the traffic classes a switch has for lossless traffic
//!     classes: 1,
//!     limits: tagger::verify::Limits::SWITCH, // 8 lossless queues, 64 tags
//! };
//! let r = run(&cfg)?; // ends in independent verification
//! assert!(r.report.ok());
//! assert_eq!(r.summary.figures.priorities, 2); // one bounce: two priorities
//! assert!(r.summary.figures.priorities_optimal); // and no plan can use fewer
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![deny(missing_docs)]

pub(crate) mod bits;
pub(crate) mod bucket;
pub mod budget;
pub mod capacity;
pub mod compress;
pub mod cycle;
pub mod elp;
pub mod error;
pub mod failures;
pub mod output;
pub mod pipeline;
pub mod render;
#[cfg(feature = "tables")]
pub mod report;
pub mod rules;
pub(crate) mod seed;
pub mod sonic;
pub mod stats;
#[cfg(feature = "tables")]
pub mod sweep;
pub mod tagging;
pub mod topo;
pub mod update;
pub mod verify;

#[cfg(test)]
mod testing;

pub use error::{
    Error, ExportKind, NotExtendable, ParamError, Result, SpecFault, TableFault, ValueError,
};
pub use tagger_generators as generators;
pub use tagger_generators::{Topology, TopologySpec};

/// The README's Rust example, compiled and run as a doctest so that it
/// cannot drift from the library (its shell examples run in
/// `tests/doc_examples.rs`).
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
