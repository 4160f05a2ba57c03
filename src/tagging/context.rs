//! What every tagging algorithm works in: [`Context`].

use super::control::Control;
use crate::budget::Budget;
use crate::cycle::CycleBackend;
use crate::elp::ElpSet;
use tagger_generators::Topology;

/// The inputs and limits of one tagging run, the same for every algorithm:
/// each algorithm's file exposes `plan(cx, <its parameters>)`.
#[derive(Clone, Copy, Debug)]
pub struct Context<'a> {
    /// The topology.
    pub topo: &'a Topology,
    /// The ELP to plan for.
    pub elp: &'a ElpSet,
    /// Incremental cycle detection backend (greedy and search).
    pub cycle: CycleBackend,
    /// Memory budget, checked as the walk grows.
    pub budget: &'a Budget,
    /// Stop requests and progress reports (search and exact).
    pub control: &'a Control,
    /// Traffic classes a switch may use for lossless traffic: every
    /// algorithm returns a plan within them, or fails saying why
    /// ([`super::fit`]). `None`: no limit.
    pub max_tcs: Option<u32>,
}

impl<'a> Context<'a> {
    /// A context on the default cycle backend.
    pub fn new(
        topo: &'a Topology,
        elp: &'a ElpSet,
        budget: &'a Budget,
        control: &'a Control,
    ) -> Self {
        Context {
            topo,
            elp,
            cycle: CycleBackend::default(),
            budget,
            control,
            max_tcs: None,
        }
    }

    /// This context on another cycle backend.
    pub fn with_cycle(self, cycle: CycleBackend) -> Self {
        Context { cycle, ..self }
    }

    /// This context with a traffic-class budget (`None`: none).
    pub fn with_max_tcs(self, max_tcs: Option<u32>) -> Self {
        Context { max_tcs, ..self }
    }
}
