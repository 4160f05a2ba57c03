//! The update schedule: from the installed entries to the new plan's, two
//! phases where the union of old and new verifies, else one switch at a
//! time, every state the switches pass through verified.

use super::{
    Action, Attempt, Correspondence, MAX_SWITCH_STEPS, Request, ScheduleKind, Step, with_entries,
};
use crate::elp::ElpSet;
use crate::error::{Error, Result};
use crate::rules::{Entry, RuleSet};
use crate::verify::{Limits, Violation, verify_within};
use tagger_generators::{NodeId, Topology};

/// The schedule from the installed entries to `new_u`: none when nothing
/// changes, the order given, two-phase where the union verifies, else
/// switch by switch; `Err` holds the attempt's end when neither a
/// two-phase nor a switch-by-switch schedule exists for a plan made from
/// scratch because the extension was `refused`.
#[allow(clippy::type_complexity)]
pub(super) fn schedule(
    check: &Check<'_>,
    new_u: &RuleSet,
    churn: u64,
    refused: &Option<String>,
) -> Result<std::result::Result<(ScheduleKind, Vec<Step>, Option<Violation>), Attempt>> {
    let extension_refused = refused;
    Ok(Ok(if churn == 0 {
        (ScheduleKind::Empty, Vec::new(), None)
    } else if let Some(order) = &check.req.order {
        let steps = check.switch_by_switch(new_u, None, Some(order))?;
        (ScheduleKind::SwitchBySwitch, steps, None)
    } else {
        match check.two_phase(new_u) {
            Ok(steps) => (ScheduleKind::TwoPhase, steps, None),
            Err(why) => match (
                check.switch_by_switch(new_u, Some(&why), None),
                &extension_refused,
            ) {
                (Ok(steps), _) => (ScheduleKind::SwitchBySwitch, steps, Some(why)),
                (Err(Error::Update { reason }), Some(no)) => {
                    return Ok(Err(Attempt::Unreachable {
                        refused: format!("keeping the installed decisions, {no}"),
                        reason,
                    }));
                }
                (Err(e), _) => return Err(e),
            },
        }
    }))
}

/// The switches `es` are on, in order (`es` sorted).
pub(super) fn nodes_of(es: &[Entry]) -> Vec<NodeId> {
    let mut v: Vec<NodeId> = es.iter().map(|e| e.node).collect();
    v.dedup();
    v
}

/// What every state is checked with.
pub(super) struct Check<'a> {
    pub(super) req: &'a Request<'a>,
    pub(super) corr: &'a Correspondence,
    pub(super) old_elp: &'a ElpSet,
    pub(super) new_elp: &'a ElpSet,
    pub(super) old_u: &'a RuleSet,
}

impl Check<'_> {
    pub(super) fn state(&self, entries: Vec<Entry>) -> RuleSet {
        with_entries(self.old_u, self.corr.union.name(), entries)
    }

    /// The verifier on the union (no replay: the ELPs live on the old and
    /// the new topology), and the replay of each family on its own.
    pub(super) fn step(
        &self,
        action: Action,
        switches: Vec<NodeId>,
        add: Vec<Entry>,
        remove: Vec<Entry>,
        state: &RuleSet,
        any_order: bool,
    ) -> Step {
        let report = verify_within(&self.corr.union, state, None, &self.req.limits);
        let replay = |topo: &Topology, rules: RuleSet, elp: &ElpSet| {
            verify_within(topo, &rules, Some(elp), &Limits::default())
                .find("replay")
                .cloned()
        };
        Step {
            action,
            switches,
            add,
            remove,
            any_order,
            drain: false,
            state: report,
            old_lossy: replay(
                self.req.old,
                self.corr.union_on_old(state, self.req.old),
                self.old_elp,
            ),
            new_lossy: replay(
                self.req.new,
                self.corr.union_on_new(state, self.req.new),
                self.new_elp,
            ),
        }
    }

    /// The first switch whose traffic classes in `state` are more than
    /// the request allows (none without a limit).
    pub(super) fn classes_over(&self, state: &RuleSet) -> Option<Violation> {
        let has = self.req.max_tcs?;
        let keys = state.keys(&self.corr.union).ok()?;
        let classes = crate::tagging::traffic::classify(&self.corr.union, &keys).ok()?;
        let &(node, needs) = classes.over(has as usize).first()?;
        Some(Violation::Classes {
            node,
            needs: needs as u32,
            has,
        })
    }

    /// Add everywhere, then remove everywhere; `Err` with the union
    /// state's first violation when old and new entries cannot coexist.
    pub(super) fn two_phase(&self, new_u: &RuleSet) -> std::result::Result<Vec<Step>, Violation> {
        let old = &self.old_u.entries;
        let new = &new_u.entries;
        let mut both: Vec<Entry> = old.iter().chain(new).copied().collect();
        both.sort_unstable();
        both.dedup();
        let union = self.state(both);
        let report = verify_within(&self.corr.union, &union, None, &self.req.limits);
        if let Some(v) = report.violations.first() {
            return Err(v.clone());
        }
        // Every switch holds both tables at once: the traffic classes of
        // the union, not of either plan, must fit the switches.
        if let Some(v) = self.classes_over(&union) {
            return Err(v);
        }
        let olds: std::collections::BTreeSet<&Entry> = old.iter().collect();
        let news: std::collections::BTreeSet<&Entry> = new.iter().collect();
        let add: Vec<Entry> = new.iter().filter(|e| !olds.contains(e)).copied().collect();
        let remove: Vec<Entry> = old.iter().filter(|e| !news.contains(e)).copied().collect();
        let mut steps = Vec::new();
        if !add.is_empty() {
            steps.push(self.step(Action::Add, nodes_of(&add), add, Vec::new(), &union, true));
        }
        if !remove.is_empty() {
            let end = self.state(new.clone());
            steps.push(self.step(
                Action::Remove,
                nodes_of(&remove),
                Vec::new(),
                remove,
                &end,
                true,
            ));
        }
        Ok(steps)
    }

    /// One switch at a time: the lowest-numbered switch whose new table
    /// leaves a verified state whose dependencies, together with those of
    /// every state since the last drain (packets they decided may still be
    /// in flight), are acyclic goes next; failing that, the lowest whose
    /// state verifies alone, marked [`Step::drain`] (everything in flight
    /// drains first); with `order`, the next one it names. `why`: what
    /// refused the two-phase change.
    pub(super) fn switch_by_switch(
        &self,
        new_u: &RuleSet,
        why: Option<&Violation>,
        order: Option<&[NodeId]>,
    ) -> Result<Vec<Step>> {
        let n = self.corr.union.node_count();
        let old_by = crate::compress::by_node(&self.old_u.entries, n);
        let new_by = crate::compress::by_node(&new_u.entries, n);
        let todo: Vec<NodeId> = (0..n)
            .filter(|&v| old_by[v] != new_by[v])
            .map(|v| v as NodeId)
            .collect();
        let why = why.map_or(String::new(), |v| {
            format!("old and new entries cannot coexist ({v}), and ")
        });
        let fixed = order.is_some();
        let todo = switch_order(todo, order, &why)?;
        let mut updated = vec![false; n];
        let mut left = todo;
        let mut steps = Vec::new();
        let entries_of = |updated: &[bool]| -> Vec<Entry> {
            (0..n)
                .flat_map(|v| if updated[v] { new_by[v] } else { old_by[v] })
                .copied()
                .collect()
        };
        let mut before: Vec<Entry> = entries_of(&updated);
        while !left.is_empty() {
            let mut first_refusal = None;
            // The first safe state, and whether it needs a drain.
            let mut chosen: Option<(usize, RuleSet, bool)> = None;
            let candidates = if fixed { &left[..1] } else { &left[..] };
            for (i, &v) in candidates.iter().enumerate() {
                updated[v as usize] = true;
                let entries = entries_of(&updated);
                let state = self.state(entries.clone());
                let mut report = verify_within(&self.corr.union, &state, None, &self.req.limits);
                if report.ok()
                    && let Some(v) = self.classes_over(&state)
                {
                    report.violations.push(v);
                }
                if report.ok() {
                    let mut both: Vec<Entry> = before.iter().chain(&entries).copied().collect();
                    both.sort_unstable();
                    both.dedup();
                    // Packets decided by any table since the last drain
                    // may still be in flight: their dependencies together
                    // must be acyclic (the states differ in the actions of
                    // some keys, so the union is no state a switch holds;
                    // only its dependencies matter).
                    let together =
                        crate::verify::check_used(&self.corr.union, &self.state(both), |_| true)
                            .is_ok();
                    if together {
                        chosen = Some((i, state, false));
                        updated[v as usize] = false;
                        break;
                    }
                    chosen.get_or_insert((i, state, true));
                }
                updated[v as usize] = false;
                if !report.ok() {
                    first_refusal.get_or_insert((v, report));
                }
            }
            let Some((i, state, drain)) = chosen else {
                let (v, report) = first_refusal.expect("at least one switch is left");
                let reason = if fixed {
                    format!(
                        "unsafe order: after {} of {} switches, updating switch {v} would leave: {report}",
                        steps.len(),
                        steps.len() + left.len(),
                    )
                } else {
                    format!(
                        "no safe schedule: {why}with {} of {} switches updated one at a time, none of the {} left can go next; switch {v} would leave: {report}",
                        steps.len(),
                        steps.len() + left.len(),
                        left.len()
                    )
                };
                return Err(Error::Update { reason });
            };
            let v = left.remove(i);
            updated[v as usize] = true;
            // In flight from now on: every state since the last drain.
            if drain {
                before = entries_of(&updated);
            } else {
                before.extend(entries_of(&updated));
                before.sort_unstable();
                before.dedup();
            }
            let (o, nw) = (old_by[v as usize], new_by[v as usize]);
            let add = nw.iter().filter(|e| !o.contains(e)).copied().collect();
            let remove = o.iter().filter(|e| !nw.contains(e)).copied().collect();
            let mut step = self.step(Action::Replace, vec![v], add, remove, &state, false);
            step.drain = drain;
            steps.push(step);
        }
        Ok(steps)
    }
}

/// The switches of a switch-by-switch schedule in the order they are
/// tried: `todo` (those whose table changes, by id) unless `order` names
/// them, each once. `why` prefixes the errors (why the two-phase change
/// was refused).
///
/// # Errors
/// [`Error::Update`] past [`MAX_SWITCH_STEPS`] switches, or when `order`
/// does not name every switch of `todo` exactly once.
pub(super) fn switch_order(
    todo: Vec<NodeId>,
    order: Option<&[NodeId]>,
    why: &str,
) -> Result<Vec<NodeId>> {
    if todo.len() > MAX_SWITCH_STEPS {
        return Err(Error::Update {
            reason: format!(
                "{why}ordering {} switches one at a time is past the limit of {MAX_SWITCH_STEPS}",
                todo.len()
            ),
        });
    }
    Ok(match order {
        None => todo,
        Some(order) => {
            let mut sorted = order.to_vec();
            sorted.sort_unstable();
            sorted.dedup();
            if sorted.len() != order.len() || sorted != todo {
                return Err(Error::Update {
                    reason: format!(
                        "the order must name every switch whose table changes, once: {todo:?} (it names {order:?})"
                    ),
                });
            }
            order.to_vec()
        }
    })
}
