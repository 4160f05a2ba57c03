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

pub mod bits;
pub mod budget;
pub mod cycle;
pub mod elp;
pub mod error;
pub mod output;
pub mod pipeline;
pub mod rules;
pub mod seed;
pub mod stats;
pub mod sweep;
pub mod tagging;
pub mod topo;
pub mod verify;

pub use error::{Error, Result};
pub use tagger_generators as generators;
pub use tagger_generators::{Topology, TopologySpec};
