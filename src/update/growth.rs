//! A growth path: a change applied in steps to a planned fabric, each step
//! an update of the last ([`super::plan`]), for the sweep key `growth`.

use super::{Request, Target, Update};
use crate::elp::ElpSpec;
use crate::error::{Error, Result};
use crate::output::record::record;
use crate::rules::RuleSet;
use crate::tagging::Control;
use crate::verify::Limits;
use serde::Serialize;
use tagger_generators::change::Change;
use tagger_generators::{NodeKind, Topology};

/// Most steps one growth path takes.
pub const MAX_GROWTH_STEPS: u32 = 100;

/// A change and how many times to apply it: `grow:switches=10,steps=3`
/// (each step draws with the change's seed plus the step number, from 0).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Growth {
    /// The change of one step.
    pub change: Change,
    /// Steps.
    pub steps: u32,
    /// Whether each step moves to the plan near the one before where one
    /// is offered (`near=1`, as `tagger update --near`), instead of
    /// going on with the extension.
    pub near: bool,
}

impl Growth {
    /// Parses a change ([`Change::parse`]) with an optional `steps=N`
    /// (default 1) and `near=0|1` (default 0).
    ///
    /// # Errors
    /// [`Error::Update`] naming the parameter at fault.
    pub fn parse(text: &str) -> Result<Self> {
        let bad = |reason: String| Error::Update {
            reason: format!("growth '{text}': {reason}"),
        };
        let (kind, rest) = text.trim().split_once(':').unwrap_or((text.trim(), ""));
        let mut steps = None;
        let mut near = None;
        let mut others = Vec::new();
        for item in rest.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            match item.split_once('=') {
                Some(("steps", v)) => {
                    let n = tagger_generators::params::non_negative(v.trim())
                        .filter(|n| (1..=MAX_GROWTH_STEPS as u64).contains(n))
                        .ok_or_else(|| {
                            bad(format!(
                                "steps = {v}: must be a count in 1..={MAX_GROWTH_STEPS}"
                            ))
                        })?;
                    if steps.replace(n as u32).is_some() {
                        return Err(bad("steps given twice".into()));
                    }
                }
                Some(("near", v)) => {
                    let on = match v.trim() {
                        "0" => false,
                        "1" => true,
                        _ => return Err(bad(format!("near = {v}: must be 0 or 1"))),
                    };
                    if near.replace(on).is_some() {
                        return Err(bad("near given twice".into()));
                    }
                }
                _ => others.push(item),
            }
        }
        let change = Change::parse(&format!("{kind}:{}", others.join(",")))
            .map_err(|cause| Error::Growth {
                spec: text.to_string(),
                cause: Box::new(cause),
            })?
            .ok_or_else(|| {
                bad("not a change: grow:switches=N[,seed=S,steps=K,near=1], grow:leaves=N[,steps=K,near=1] or drain:links=N[,seed=S,steps=K,near=1]".into())
            })?;
        Ok(Growth {
            change,
            steps: steps.unwrap_or(1),
            near: near.unwrap_or(false),
        })
    }

    /// The canonical text (`near=1` only where set).
    pub fn canonical(&self) -> String {
        let near = if self.near { ",near=1" } else { "" };
        format!("{},steps={}{near}", self.change.canonical(), self.steps)
    }

    /// Step `i`'s change (from 0): the seed moves on by `i`.
    pub fn step(&self, i: u32) -> Change {
        self.change
            .clone()
            .with_seed(self.change.seed().wrapping_add(i as u64))
    }
}

record! {
    /// One step of a growth path (a row of `growth.parquet`).
    #[derive(Clone, Debug, Serialize, PartialEq)]
    pub struct GrowthRow [prefix = "growth_"] {
        /// Step number, from 1.
        pub step: u32,
        /// The change of this step, e.g. grow:switches=10,seed=2.
        pub change: String,
        /// Switches after the step.
        pub switches: u32,
        /// Links after the step.
        pub links: u64,
        /// Lossless priorities of the extended plan.
        pub priorities: u32,
        /// A proven lower bound on the priorities after the step.
        pub lower_bound: u32,
        /// Entries of the extended plan.
        pub entries: u64,
        /// Entries added, removed and changed against the plan before the
        /// step.
        pub churn_entries: u64,
        /// Of those, entries added.
        pub entries_added: u64,
        /// Of those, entries removed.
        pub entries_removed: u64,
        /// Switches whose tables change.
        pub switches_touched: u64,
        /// When the greedy extension needed more priorities than the plan
        /// before the step: kept (the local search found an extension
        /// within them), forced (proven impossible for any extension),
        /// stalled, budget, stopped or skipped. Null when it did not run.
        pub reorder: Option<String>,
        /// forced: the new paths proven to need more priorities.
        pub forced_paths: Option<u64>,
        /// Priorities of a from-scratch plan with the scenario's algorithm.
        pub scratch_priorities: u32,
        /// Its churn against the plan before the step.
        pub scratch_churn_entries: u64,
        /// Priorities of the plan near the one before the step (update's
        /// near: a local search from its orders), where one is offered
        /// (null otherwise).
        pub near_priorities: Option<u32>,
        /// Its churn against the plan before the step.
        pub near_churn_entries: Option<u64>,
        /// Whether the step moved to the near plan (the growth spec's
        /// `near=1`, or where the extension missed the traffic classes);
        /// else the path goes on with the extension (or the plan from
        /// scratch that replaced it).
        pub near_taken: bool,
        /// Steps of the update schedule.
        pub update_steps: u32,
        /// two-phase or switch-by-switch.
        pub schedule: String,
        /// The extended plan and every state of the schedule verified.
        pub verified: bool,
        /// Seconds the step took (the extension, the from-scratch plan
        /// and every state's verification).
        pub seconds: f64,
    }
}

impl GrowthRow {
    fn of(step: u32, change: &Change, topo: &Topology, u: &Update, seconds: f64) -> Self {
        let scratch = u.scratch.as_ref();
        GrowthRow {
            step,
            change: change.canonical(),
            switches: topo.count_kind(NodeKind::Switch) as u32,
            links: topo.link_count() as u64,
            priorities: u.plan.priorities,
            lower_bound: u.lower_bound,
            entries: u.plan.entries.len() as u64,
            churn_entries: u.churn.entries(),
            entries_added: u.churn.added,
            entries_removed: u.churn.removed,
            switches_touched: u.churn.switches_touched,
            reorder: u.reordered.as_ref().map(|r| r.outcome().to_string()),
            forced_paths: u
                .reordered
                .as_ref()
                .and_then(|r| r.forced.as_ref())
                .map(|f| f.paths),
            scratch_priorities: scratch.map_or(0, |s| s.priorities),
            scratch_churn_entries: scratch.map_or(0, |s| s.churn.entries()),
            near_priorities: u.near.as_ref().map(|n| n.priorities),
            near_churn_entries: u.near.as_ref().map(|n| n.churn.entries()),
            near_taken: u.near.as_ref().is_some_and(|n| n.taken),
            update_steps: u.steps.len() as u32,
            schedule: u.kind.as_str().into(),
            verified: u.ok(),
            seconds,
        }
    }
}

/// Grows `topo` (planned as `rules`) along `growth`: each step applies the
/// step's change to the last topology and extends the last plan, fitted
/// to `max_tcs` traffic classes per switch (`None`: no limit).
///
/// # Errors
/// The change's error (no link left to take over, a drain that would
/// disconnect), or the update's ([`super::plan`]).
pub fn grow_path(
    topo: &Topology,
    rules: &RuleSet,
    elp: &ElpSpec,
    growth: &Growth,
    max_tcs: Option<u32>,
    control: &Control,
) -> Result<Vec<GrowthRow>> {
    let mut rows = Vec::new();
    let (mut topo, mut rules) = (topo.clone(), rules.clone());
    for i in 0..growth.steps {
        let t0 = std::time::Instant::now();
        let change = growth.step(i);
        let next = change.apply(&topo)?;
        let u = super::plan(
            &Request {
                old: &topo,
                installed: &rules,
                new: &next,
                elp,
                new_elp: None,
                target: Target::Extend,
                limits: Limits::default(),
                compare_scratch: true,
                order: None,
                search_budget: crate::tagging::SEARCH_BUDGET,
                near: if growth.near {
                    super::NearChoice::Prefer
                } else {
                    super::NearChoice::Refused
                },
                max_tcs,
                // A growth path compares plans; fitting them to a switch
                // is the sweep's capacity tables' work.
                profile: None,
            },
            control,
        )?;
        rows.push(GrowthRow::of(
            i + 1,
            &change,
            &next,
            &u,
            t0.elapsed().as_secs_f64(),
        ));
        topo = next;
        // The from-scratch comparison of the next step replans with the
        // scenario's algorithm, which the installed plan's name gives.
        let algo = std::mem::take(&mut rules.algo);
        rules = u.plan;
        rules.algo = algo;
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_takes_steps_apart() {
        let g = Growth::parse("grow:switches=5,steps=3,seed=2").unwrap();
        assert_eq!(g.steps, 3);
        assert_eq!(
            g.step(1),
            Change::Grow {
                switches: 5,
                seed: 3
            }
        );
        assert_eq!(g.canonical(), "grow:switches=5,seed=2,steps=3");
        let n = Growth::parse("grow:switches=5,near=1,steps=3,seed=2").unwrap();
        assert!(n.near && !g.near);
        assert_eq!(n.canonical(), "grow:switches=5,seed=2,steps=3,near=1");
        assert_eq!(Growth::parse(&n.canonical()).unwrap(), n);
        for (bad, says) in [
            ("grow:switches=5,steps=0", "steps"),
            ("grow:switches=5,near=2", "near = 2"),
            ("grow:switches=5,near=1,near=0", "twice"),
            ("grow:switches=5,steps=2,steps=3", "twice"),
            ("fattree:k=4", "not a change"),
            ("drain:links=x", "links"),
        ] {
            let e = Growth::parse(bad).unwrap_err().to_string();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }

    /// Each step starts from the last one's plan: the installed entries of
    /// step 2 are step 1's extended plan, so churn is per step.
    #[test]
    fn steps_chain() {
        let t = crate::TopologySpec::parse("jellyfish:n=20,ports=8,r=4,seed=1")
            .unwrap()
            .build()
            .unwrap();
        let elp = ElpSpec::parse("shortest").unwrap();
        let set = crate::elp::ElpSet::build(&t, &elp).unwrap();
        let rules = RuleSet::from_tagging(
            &t,
            &crate::tagging::tag(&t, &set, crate::tagging::Algo::GREEDY, Default::default())
                .unwrap(),
        );
        let g = Growth::parse("grow:switches=2,steps=3").unwrap();
        let rows = grow_path(&t, &rules, &elp, &g, None, &Control::new()).unwrap();
        assert_eq!(rows.len(), 3);
        assert_eq!(
            rows.iter().map(|r| r.switches).collect::<Vec<_>>(),
            vec![22, 24, 26]
        );
        assert!(rows.iter().all(|r| r.verified && r.churn_entries > 0));
        assert!(rows.iter().all(|r| r.priorities >= r.lower_bound));
    }
}
