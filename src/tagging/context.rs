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
        }
    }

    /// This context on another cycle backend.
    pub fn with_cycle(self, cycle: CycleBackend) -> Self {
        Context { cycle, ..self }
    }
}
