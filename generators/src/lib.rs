//! Topology model and generators for the tagger engine: Fat-tree, leaf-spine,
//! BCube, HyperX, Jellyfish and the project's JSON file format.
//!
//! Every generator is deterministic: the same parameters (and seed, for
//! Jellyfish) give the same node and link ids on any machine.

#![deny(missing_docs)]

pub mod bcube;
pub mod change;
pub mod error;
pub mod fattree;
pub mod file;
pub mod hyperx;
pub mod ibnet;
pub mod jellyfish;
pub mod leafspine;
pub mod model;
pub mod params;
pub mod spec;

pub use error::TopologyError;
pub use model::{
    ChannelId, Family, LinkId, LinkProps, MAX_CABLE_M, MAX_SPEED_GBPS, NOT_ENDPOINT, Node, NodeId,
    NodeKind, Topology, digits,
};
pub use spec::{TopologySpec, build};
