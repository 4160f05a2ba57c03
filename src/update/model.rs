//! What an update is asked and what it gives back: the request, the
//! result (the new plan, its churn, the schedule) and their parts.

use super::Correspondence;
use crate::elp::ElpSpec;
use crate::error::Result;
use crate::rules::{Entry, RuleSet};
use crate::verify::{Limits, Report, Violation};
use tagger_generators::{NodeId, Topology};

/// The plan to move to.
#[derive(Clone, Debug)]
pub enum Target {
    /// Extend the installed plan ([`crate::tagging::extend`]).
    Extend,
    /// This plan, on the new topology (e.g. one planned from scratch).
    Given(RuleSet),
}

/// What to change.
#[derive(Clone, Debug)]
pub struct Request<'a> {
    /// The topology the installed plan is for.
    pub old: &'a Topology,
    /// The installed plan.
    pub installed: &'a RuleSet,
    /// The topology after the change.
    pub new: &'a Topology,
    /// The installed plan's ELPs, on the old topology (the traffic in
    /// flight when the change starts).
    pub elp: &'a ElpSpec,
    /// The ELPs after the change, on the new topology (`None`: the same
    /// spec as `elp`).
    pub new_elp: Option<&'a ElpSpec>,
    /// The plan to move to.
    pub target: Target,
    /// What the switches hold (every state is checked against it).
    pub limits: Limits,
    /// Also plan from scratch (with the installed plan's algorithm, when its
    /// name parses, else greedy; bare `exact` with `auto`) and count its
    /// churn, to compare.
    pub compare_scratch: bool,
    /// Replace the switches' tables one at a time in this order (every
    /// switch whose table changes, once) instead of finding a schedule:
    /// each state is verified and the first unsafe one refuses it.
    pub order: Option<Vec<NodeId>>,
    /// Path evaluations the extension's local search may spend when the
    /// greedy extension needs more priorities than the installed plan
    /// ([`crate::tagging::extend::reorder`]), and the near plan's search
    /// ([`crate::tagging::extend::near`]) each; 0: search for neither.
    pub search_budget: u64,
    /// When to move to the plan near the installed one ([`Update::near`]),
    /// switch by switch, instead of the extension.
    pub near: NearChoice,
    /// Traffic classes a switch may use for lossless traffic: the
    /// extension is fitted to them ([`crate::tagging::fit`], moving new
    /// keys up; installed decisions stay), and the from-scratch comparison
    /// planned within them. `None`: no limit.
    pub max_tcs: Option<u32>,
    /// The switch model every candidate plan is fitted to (lossless
    /// queues per port, headroom): an extension that does not fit it
    /// where the plan from scratch does is refused for that plan. `None`:
    /// fit is not judged.
    pub profile: Option<&'a crate::capacity::Profile>,
}

/// How one candidate plan fits the switch model ([`Request::profile`]),
/// as `tagger run` judges a plan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlanFit {
    /// The switch model's name.
    pub profile: String,
    /// Switches judged.
    pub switches: u64,
    /// The most lossless priorities one switch needs at its ports.
    pub queues_needed: u32,
    /// Lossless queues per port the model has.
    pub queues: u32,
    /// Switches needing more lossless queues than it has.
    pub over_queues: u64,
    /// Switches whose headroom exceeds its lossless buffer.
    pub over_buffer: u64,
    /// Switches needing more traffic classes than it has for lossless
    /// traffic.
    pub over_tcs: u64,
}

impl PlanFit {
    /// `rules` (on `topo`) fitted to `p`.
    ///
    /// # Errors
    /// As [`crate::capacity::fit_rules`].
    pub fn of(topo: &Topology, rules: &RuleSet, p: &crate::capacity::Profile) -> Result<Self> {
        let f = crate::capacity::fit_rules(topo, rules, p)?;
        Ok(PlanFit {
            profile: p.name.clone(),
            switches: f.nodes.iter().flatten().count() as u64,
            queues_needed: f.priorities_per_switch_max,
            queues: p.lossless_queues,
            over_queues: f.switches_over_queues,
            over_buffer: f.switches_over_buffer,
            over_tcs: f.switches_over_tcs,
        })
    }

    /// Whether every switch holds the plan's lossless queues and headroom.
    pub fn fits(&self) -> bool {
        self.over_queues == 0 && self.over_buffer == 0
    }

    /// Why it does not fit, where it does not.
    pub fn misfit(&self) -> Option<String> {
        (!self.fits()).then(|| {
            let mut why = Vec::new();
            if self.over_queues > 0 {
                why.push(format!(
                    "{} switch(es) need {} lossless queues at a port, and {} has {}",
                    self.over_queues, self.queues_needed, self.profile, self.queues
                ));
            }
            if self.over_buffer > 0 {
                why.push(format!(
                    "{} switch(es) need more headroom than {}'s lossless buffer",
                    self.over_buffer, self.profile
                ));
            }
            why.join("; ")
        })
    }
}

/// The extension's local search, run when the greedy extension needed more
/// priorities than the installed plan has.
#[derive(Clone, Debug)]
pub struct Reordered {
    /// The priorities it tried to keep: the installed plan's.
    pub target: u32,
    /// The greedy extension's priorities.
    pub greedy_priorities: u32,
    /// True when it found an extension within `target` (the new plan).
    pub reached: bool,
    /// What it spent, why it ended, and the paths left past `target`.
    pub effort: crate::tagging::Effort,
    /// The proof that no extension keeps `target`, when there is one (then
    /// the search did not run).
    pub forced: Option<ForcedPaths>,
}

impl Reordered {
    /// How it ended: `kept`, `forced` (no extension can keep the target),
    /// `skipped` (its state did not fit the memory budget), `stopped`,
    /// `stalled` or `budget` (spent).
    pub fn outcome(&self) -> &'static str {
        let e = &self.effort;
        if self.reached {
            "kept"
        } else if self.forced.is_some() {
            "forced"
        } else if e.skipped.is_some() {
            "skipped"
        } else if e.stopped_early {
            "stopped"
        } else if e.stalled {
            "stalled"
        } else {
            "budget"
        }
    }
}

/// New paths that no plan within the installed priorities fits while it
/// keeps every installed decision and stays acyclic together with the
/// installed entries (what a two-phase change needs):
/// [`crate::tagging::extend::Forced`] in switches.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ForcedPaths {
    /// How many maximal paths are forced past the installed priorities.
    pub paths: u64,
    /// The first, as its links `(from switch, to switch)`.
    pub example: Vec<(NodeId, NodeId)>,
}

/// Entries added, removed and changed against the installed plan.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Churn {
    /// Keys the new plan has and the installed one lacks.
    pub added: u64,
    /// Keys the installed plan has and the new one lacks.
    pub removed: u64,
    /// Keys both have, with a different action.
    pub changed: u64,
    /// Switches with any of the above.
    pub switches_touched: u64,
    /// Per touched switch: `(node, added, removed, changed)`, by node.
    pub per_switch: Vec<(NodeId, u32, u32, u32)>,
}

impl Churn {
    /// Entries written or deleted: added + removed + changed.
    pub fn entries(&self) -> u64 {
        self.added + self.removed + self.changed
    }
}

/// From-scratch planning of the same change, for comparison.
#[derive(Clone, Debug)]
pub struct Scratch {
    /// The algorithm: the one that made the installed plan, when its name
    /// parses, else greedy.
    pub algo: String,
    /// Its priorities.
    pub priorities: u32,
    /// Its churn against the installed plan.
    pub churn: Churn,
    /// The plan, on the new topology.
    pub plan: RuleSet,
    /// How it fits the switch model ([`Request::profile`]).
    pub fit: Option<PlanFit>,
}

/// When an update moves to the plan near the installed one
/// ([`Update::near`]) where one is offered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum NearChoice {
    /// Only where the extension missed the traffic classes and the near
    /// plan has as many priorities as the plan from scratch or fewer, at
    /// less churn; where no safe order reaches it, the plan from scratch.
    #[default]
    Refused,
    /// Wherever one is offered; where no safe order reaches it, the
    /// update's own plan (a growth path's `near=1`).
    Prefer,
    /// Wherever one is offered; where no safe order reaches it, the update
    /// fails (`--near`).
    Require,
}

/// A plan near the installed one that may change some of its decisions
/// ([`crate::tagging::extend::near`]): offered where it needs fewer
/// priorities than the new plan, or, where the new plan was planned from
/// scratch because the extension missed the traffic classes, as many at
/// less churn; under a class limit, only where it fits them. Moving to it
/// ([`Request::near`]) is a switch-by-switch change.
#[derive(Clone, Debug)]
pub struct Near {
    /// Its priorities.
    pub priorities: u32,
    /// Its churn against the installed plan.
    pub churn: Churn,
    /// Path evaluations its local search spent.
    pub evaluations: u64,
    /// The plan, on the new topology (verified as every plan is).
    pub plan: RuleSet,
    /// Whether the update moves to it: then it is the new plan. When it
    /// is taken, [`Request::near`] says ([`NearChoice`]): by default where
    /// the extension did not fit the traffic classes (the plan from
    /// scratch it would otherwise move to needs as many priorities or
    /// more, at more churn).
    pub taken: bool,
    /// Where it was to be taken but no safe schedule reaches it, why: the
    /// update moves to its own plan instead (the plan from scratch, or the
    /// extension).
    pub unreachable: Option<String>,
    /// How it fits the switch model ([`Request::profile`]); one that does
    /// not fit where the new plan does is not taken by default.
    pub fit: Option<PlanFit>,
}

/// What a step does to the switches it names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// Delete the entries of dropped links whose ports the change recables,
    /// once the routing has moved off them and before they are recabled
    /// (first, when any).
    Unplug,
    /// Install new entries beside the old (phase 1 of two).
    Add,
    /// Delete entries the new plan no longer has (phase 2 of two).
    Remove,
    /// Replace one switch's table with its new one.
    Replace,
}

impl Action {
    /// The name printed and written.
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Unplug => "unplug",
            Action::Add => "add",
            Action::Remove => "remove",
            Action::Replace => "replace",
        }
    }
}

/// One step of the schedule and the state it leaves.
#[derive(Clone, Debug)]
pub struct Step {
    /// What the step does.
    pub action: Action,
    /// The switches it changes.
    pub switches: Vec<NodeId>,
    /// Entries it installs, on the union topology.
    pub add: Vec<Entry>,
    /// Entries it deletes, on the union topology.
    pub remove: Vec<Entry>,
    /// Whether the switches may change in any order within the step (the
    /// verified state bounds every partial one).
    pub any_order: bool,
    /// The verifier's report on the state the step leaves (two-phase: the
    /// largest state of the step, which bounds every partial one).
    pub state: Report,
    /// The first old-ELP transition that falls lossy in that state (`None`:
    /// every old ELP stays lossless).
    pub old_lossy: Option<Violation>,
    /// The same for the new ELPs.
    pub new_lossy: Option<Violation>,
    /// Switch by switch: the state after the step and every state since
    /// the last drain, taken together, have a dependency cycle, so packets
    /// the earlier tables decided must drain before the step's new table
    /// goes in (take the switch out of the routing, let the queues empty,
    /// replace, put it back). Two-phase steps never need it: every state of
    /// a phase is a subset of the verified union.
    pub drain: bool,
}

/// How the schedule was built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScheduleKind {
    /// Add everywhere, then remove everywhere; any order within each.
    TwoPhase,
    /// One switch at a time, each state verified.
    SwitchBySwitch,
    /// Nothing to change.
    Empty,
}

impl ScheduleKind {
    /// The name printed and written.
    pub fn as_str(self) -> &'static str {
        match self {
            ScheduleKind::TwoPhase => "two-phase",
            ScheduleKind::SwitchBySwitch => "switch-by-switch",
            ScheduleKind::Empty => "none",
        }
    }
}

/// A planned change.
#[derive(Debug)]
pub struct Update {
    /// The old topology's nodes and links in the new one.
    pub correspondence: Correspondence,
    /// The new plan, on the new topology.
    pub plan: RuleSet,
    /// Priorities of the installed plan.
    pub old_priorities: u32,
    /// A proven lower bound on the new ELPs' priorities (the new plan's own
    /// dependencies).
    pub lower_bound: u32,
    /// The new plan against the installed one.
    pub churn: Churn,
    /// From-scratch planning of the same change, when asked.
    pub scratch: Option<Scratch>,
    /// A plan near the installed one, where one is offered (see [`Near`]).
    pub near: Option<Near>,
    /// Why no such plan is offered, where one was searched for (the
    /// extension needed more priorities than the installed plan).
    pub near_refused: Option<String>,
    /// How the schedule was built.
    pub kind: ScheduleKind,
    /// The steps, in order.
    pub steps: Vec<Step>,
    /// The verifier's full report on the new plan: the new topology, its
    /// ELPs replayed.
    pub final_report: Report,
    /// Why a two-phase change was not possible (switch-by-switch only).
    pub two_phase_refused: Option<Violation>,
    /// Why no extension keeping the installed decisions was used: it does
    /// not fit the switches' traffic classes, so the new plan was planned
    /// from scratch within them.
    pub extension_refused: Option<String>,
    /// Why the new plan needs more traffic classes than the limit: no
    /// extension fits and the plan from scratch within them cannot be
    /// reached safely (`None`: it fits, or there is no limit).
    pub classes_over: Option<String>,
    /// The installed plan on the union topology: the state before step 1.
    pub installed: RuleSet,
    /// The extension's local search, when it ran.
    pub reordered: Option<Reordered>,
    /// How the new plan fits the switch model ([`Request::profile`]).
    pub fit: Option<PlanFit>,
    /// Where the near plan was taken because the plan the update would
    /// otherwise move to does not fit the switches, why that one does not.
    pub unfit: Option<String>,
}

impl Update {
    /// Steps whose state passed verification.
    pub fn verified_steps(&self) -> usize {
        self.steps.iter().filter(|s| s.state.ok()).count()
    }

    /// Whether the new plan and every step verified.
    pub fn ok(&self) -> bool {
        self.final_report.ok() && self.verified_steps() == self.steps.len()
    }
}
