//! `tagger update`: the change, the new plan against the installed one,
//! the schedule a line per step, and the exported steps.

use super::Lines;
use crate::update::{Action, ScheduleKind, Update};

/// `tagger update --export-steps`: the directories written, in the order
/// to apply them, and what each is for.
pub fn export_steps(
    u: &crate::update::Update,
    exports: &[crate::update::StepExport],
    dir: &std::path::Path,
) -> String {
    let mut l = Lines::new();
    line!(
        l,
        "exported      {} in {}, to apply in this order; what every switch runs after each was decoded and judged for every packet (as `tagger verify --exported` does against {})",
        super::count(exports.len(), "directory"),
        dir.display(),
        crate::update::UNION_FILE
    );
    // Drains the export adds to the schedule's: its traffic classes could
    // not be chosen so that the configurations before and after run
    // together.
    let added = exports
        .iter()
        .filter(|x| x.drain && x.step.is_none_or(|i| !u.steps[i].drain))
        .count();
    if added > 0 {
        line!(
            l,
            "drains        {added} more directory(ies) marked DRAIN than the schedule's steps: what the switches run before and after it, together, close a dependency cycle through their traffic classes (each alone passes), so let the fabric's lossless queues empty before loading it"
        );
    }
    for x in exports.iter().take(MAX_STEP_LINES) {
        let n = x.switches.len();
        let what = match x.step {
            Some(i) => {
                let tables = &u.steps[i].switches;
                let extra = x.switches.iter().filter(|v| !tables.contains(v)).count();
                if extra == 0 {
                    String::new()
                } else {
                    format!(" ({extra} of them for their traffic classes only: they receive tags they did not, or no longer)")
                }
            }
            None if x.dir.ends_with("-ports") => {
                ": the ports the change adds, bound (no lossless traffic on them yet) before the new cables carry any".into()
            }
            None if x.dir.ends_with("-tidy") => {
                ": classes of tags no longer sent dropped (tables unchanged), so that what runs is the new plan's export".into()
            }
            None => ": traffic classes only (tables unchanged): the classes they run were chosen apart from the next step's, and together would not pass the read-back".into(),
        };
        line!(
            l,
            "  {:<18} {n} switch{}{what}{}",
            x.dir,
            if n == 1 { "" } else { "es" },
            if x.drain { "; DRAIN first" } else { "" }
        );
    }
    if exports.len() > MAX_STEP_LINES {
        line!(
            l,
            "  ... {} more (the directory's summary.json lists them all)",
            exports.len() - MAX_STEP_LINES
        );
    }
    l.done()
}

/// `tagger update`'s summary: the new plan against the installed one (and
/// a from-scratch plan), then the schedule, a line per step.
pub fn update(u: &Update, old: &str, new: &str, elp: &str) -> String {
    let mut l = Lines::new();
    line!(l, "change        {old} -> {new}, ELP {elp}");
    link_lines(&mut l, u);
    plan_lines(&mut l, u);
    churn_lines(&mut l, u);
    step_lines(&mut l, u);
    after_lines(&mut l, u);
    l.done()
}

/// The links the change drops and adds, named by their ends.
fn link_lines(l: &mut Lines, u: &Update) {
    let co = &u.correspondence;
    let (dropped, added) = (co.dropped(), co.added());
    for (what, count, links) in [
        (
            "dropped",
            format!("{} of {} old links", dropped.len(), co.link.len()),
            dropped,
        ),
        ("added", format!("{} new links", added.len()), added),
    ] {
        const SHOWN: usize = 6;
        if links.is_empty() {
            continue;
        }
        let mut names: Vec<String> = links.iter().take(SHOWN).map(|&x| co.link_name(x)).collect();
        if links.len() > SHOWN {
            names.push(format!(
                "and {} more (--json lists them)",
                links.len() - SHOWN
            ));
        }
        line!(l, "links {what:<8}{count}: {}", names.join("; "));
    }
    if let Some(w) = u.correspondence.mismatch() {
        line!(l, "warning       {w}");
    }
}

/// The new plan against the installed one, and why it is not an
/// extension or fits no SONiC switch where that is so.
fn plan_lines(l: &mut Lines, u: &Update) {
    let fewer = if u.plan.priorities > u.old_priorities {
        match &u.scratch {
            Some(s) if s.priorities >= u.plan.priorities => format!(
                " (the installed plan has {}; the changed fabric needs more: planned from scratch it needs {})",
                u.old_priorities, s.priorities
            ),
            _ if u.reordered.as_ref().is_some_and(|r| r.forced.is_some()) => format!(
                " (the installed plan has {}: no extension that keeps its decisions fits in it, proven below)",
                u.old_priorities
            ),
            _ => format!(
                " (the installed plan has {}: keeping its decisions for the new paths needed more)",
                u.old_priorities
            ),
        }
    } else {
        format!(" (the installed plan: {})", u.old_priorities)
    };
    line!(
        l,
        "new plan      {}: {}{fewer}, lower bound {}, {} entries, verified on the new topology",
        u.plan.algo,
        super::count(u.plan.priorities, "lossless priority"),
        u.lower_bound,
        u.plan.entries.len()
    );
    if let Some(why) = &u.extension_refused {
        let instead = match &u.near {
            Some(n) if n.taken => {
                "the near plan taken instead of one from scratch (as many priorities or fewer, less churn)"
            }
            _ => "planned from scratch instead",
        };
        line!(
            l,
            "extension     refused, {instead}: keeping the installed decisions, {why}"
        );
    }
    if let Some(why) = &u.unfit {
        line!(
            l,
            "not taken     the plan the update would move to: the switches cannot hold it ({why}); the near plan, which they hold, is the new plan"
        );
    }
    if let Some(why) = &u.classes_over {
        line!(
            l,
            "classes       the new plan needs more traffic classes than the switches have ({why}): a SONiC export of it is refused; the neutral table (json:DIR) expresses it"
        );
    }
    if let Some(r) = &u.reordered {
        let e = &r.effort;
        let why = if let Some(f) = &r.forced {
            let route: Vec<String> = f
                .example
                .first()
                .map(|&(a, _)| a)
                .into_iter()
                .chain(f.example.iter().map(|&(_, b)| b))
                .map(|v| v.to_string())
                .collect();
            format!(
                "no plan keeps {} priorities with the installed decisions and acyclic together with the installed entries (what a two-phase change needs): {} new paths are forced past {} whatever the order (the installed decisions, and installed dependencies leading back, raise their tags), e.g. switches {}",
                r.target,
                f.paths,
                r.target,
                route.join(" -> ")
            )
        } else if let Some(s) = &e.skipped {
            format!("skipped: {s}")
        } else if r.reached {
            format!(
                "kept {} priorities (the greedy extension needed {}) in {} evaluations",
                r.target, r.greedy_priorities, e.evaluations
            )
        } else {
            format!(
                "did not keep {}: {} paths left past it after {} evaluations ({})",
                r.target,
                e.residue,
                e.evaluations,
                if e.stopped_early {
                    "stopped"
                } else if e.stalled {
                    "stalled"
                } else {
                    "budget spent; --search-budget raises it"
                }
            )
        };
        line!(l, "reorder       {why}");
    }
}

/// Each candidate plan against the switch model, as `tagger run`'s queues
/// and buffer lines judge a plan.
fn fit_line(l: &mut Lines, u: &Update) {
    let Some(f) = &u.fit else { return };
    let verdict = |f: &crate::update::PlanFit| match f.misfit() {
        None => format!(
            "fits (the busiest switch needs {} of {} lossless queues)",
            f.queues_needed, f.queues
        ),
        Some(why) => format!("does NOT fit: {why}"),
    };
    let mut parts = vec![format!("new plan {}", verdict(f))];
    if let Some(s) = u.scratch.as_ref().and_then(|s| s.fit.as_ref()) {
        parts.push(format!("from scratch {}", verdict(s)));
    }
    if let Some(n) = u.near.as_ref().filter(|n| !n.taken)
        && let Some(nf) = &n.fit
    {
        parts.push(format!("near {}", verdict(nf)));
    }
    line!(l, "fit           {}: {}", f.profile, parts.join("; "));
}

/// Entries changed, against a plan from scratch.
fn churn_lines(l: &mut Lines, u: &Update) {
    let c = &u.churn;
    line!(
        l,
        "churn         {} entries ({} added, {} removed, {} changed) on {}",
        c.entries(),
        c.added,
        c.removed,
        c.changed,
        super::count(c.switches_touched, "switch")
    );
    if let Some(s) = &u.scratch {
        line!(
            l,
            "from scratch  {}: {}, churn {} entries on {}",
            s.algo,
            super::count(s.priorities, "priority"),
            s.churn.entries(),
            super::count(s.churn.switches_touched, "switch")
        );
    }
    if let Some(n) = &u.near {
        line!(
            l,
            "near          {} priorities, churn {} entries on {} switches: a local search from the installed orders ({} path evaluations) that changes some installed decisions, so it is reached switch by switch; {}",
            n.priorities,
            n.churn.entries(),
            n.churn.switches_touched,
            n.evaluations,
            match (&n.unreachable, n.taken) {
                (Some(why), _) => format!(
                    "not taken, since no safe schedule reaches it ({why}): the new plan is the update's own"
                ),
                (None, true) => "it is the new plan".to_string(),
                (None, false) => "--near moves to it".to_string(),
            }
        );
    }
    if let Some(why) = &u.near_refused {
        line!(l, "near          none: {why}");
    }
    fit_line(l, u);
    if let Some(s) = u
        .scratch
        .as_ref()
        .filter(|s| s.priorities < u.plan.priorities)
        .filter(|s| u.near.as_ref().is_none_or(|n| s.priorities < n.priorities))
    {
        line!(
            l,
            "fewer         planning from scratch needs {} priorities instead of {}, at the churn above: write it with `tagger run`, then move to it with --new-rules (a switch-by-switch schedule)",
            s.priorities,
            u.plan.priorities
        );
    }
}

/// The schedule, a line per step, and the ids the steps use.
fn step_lines(l: &mut Lines, u: &Update) {
    let co = &u.correspondence;
    match u.kind {
        ScheduleKind::Empty => line!(l, "schedule      nothing to change"),
        ScheduleKind::TwoPhase => line!(
            l,
            "schedule      two-phase, {}, {} verified: old and new entries together pass the verifier, so every order of every switch within a step is safe",
            super::count(u.steps.len(), "step"),
            u.verified_steps()
        ),
        ScheduleKind::SwitchBySwitch => line!(
            l,
            "schedule      switch by switch, {}, {} verified{}",
            super::count(u.steps.len(), "step"),
            u.verified_steps(),
            u.two_phase_refused
                .as_ref()
                .map_or(String::new(), |v| format!(
                    " (two-phase refused: [{}] {v})",
                    v.kind()
                ))
        ),
    }
    let lossless = |x: &Option<crate::verify::Violation>| if x.is_none() { "yes" } else { "no" };
    for r in u.rows().iter().take(MAX_STEP_LINES) {
        let switches = if r.switches <= 8 {
            let names: Vec<String> = u.steps[r.step as usize - 1]
                .switches
                .iter()
                .map(|&v| co.node_label(v))
                .collect();
            format!("switch {}", names.join(", "))
        } else {
            super::count(r.switches, "switch")
        };
        line!(
            l,
            "  step {:>3}  {:<8} {switches}: +{} -{} entries, {}{}; old ELPs lossless: {}, new: {}",
            r.step,
            r.action,
            r.entries_added,
            r.entries_removed,
            if r.verified {
                "verified"
            } else {
                "NOT verified"
            },
            if r.any_order {
                ", any order"
            } else if r.drain {
                ", DRAIN the switch first"
            } else {
                ""
            },
            lossless(&u.steps[r.step as usize - 1].old_lossy),
            lossless(&u.steps[r.step as usize - 1].new_lossy),
        );
    }
    if u.steps.len() > MAX_STEP_LINES {
        line!(
            l,
            "  ... {} more steps (--json or --out list them all)",
            u.steps.len() - MAX_STEP_LINES
        );
    }
    let moved = co.renumbered();
    if !u.steps.is_empty() && !co.by_name && !moved.is_empty() {
        let shown: Vec<String> = moved
            .iter()
            .take(4)
            .map(|(v, w)| format!("old {v} is {w}"))
            .collect();
        line!(
            l,
            "ids           switches are numbered as in the new topology (--topology-out writes it): {} of the old switches have new ids ({}{})",
            moved.len(),
            shown.join(", "),
            if moved.len() > shown.len() {
                ", ..."
            } else {
                ""
            }
        );
    }
}

/// What the operator does between steps: recabling, waits, routing.
fn after_lines(l: &mut Lines, u: &Update) {
    let step_of = |a: Action| u.steps.iter().position(|s| s.action == a).map(|i| i + 1);
    if let Some(i) = step_of(Action::Unplug) {
        line!(
            l,
            "recabling     before step {i}, move the routing off the links being recabled; recable them after it (a port carries one link at a time)"
        );
    }
    let drains = u.steps.iter().filter(|s| s.drain).count();
    if u.kind == ScheduleKind::SwitchBySwitch {
        line!(
            l,
            "waits         {}",
            if drains == 0 {
                "none: each step's state and every state before it, together, are acyclic, so packets a replaced table decided need not drain".to_string()
            } else {
                format!(
                    "{drains} step(s) marked DRAIN: the state after such a step and the states since the last drain, together, have a dependency cycle, so packets the earlier tables decided must be gone first: take the switch out of the routing and let the fabric's lossless queues empty before replacing its table"
                )
            }
        );
    }
    if u.kind == ScheduleKind::TwoPhase {
        let routing = match (step_of(Action::Add), step_of(Action::Remove)) {
            (Some(a), Some(_)) => format!(
                "after step {a}, move the routing to the new ELPs (and drain the dropped links): the old ELPs keep their entries until then, the new ones have theirs from its end"
            ),
            (Some(a), None) => format!(
                "after step {a}, the routing may move to the new ELPs: they are lossless from its end"
            ),
            (None, Some(r)) => format!(
                "before step {r}, move the routing to the new ELPs (and drain the dropped links): they stay lossless throughout"
            ),
            (None, None) => "nothing to move".to_string(),
        };
        line!(l, "routing       {routing}");
    }
}

/// Steps the summary lists one per line.
const MAX_STEP_LINES: usize = 20;
