//! Changing a fabric that runs: a new plan that extends the installed one,
//! and an update schedule whose every intermediate state is verified.
//!
//! **The model.** While the change is made, the fabric is the *union*
//! topology: the new one plus the old links it drops (still cabled until
//! the end). Each switch holds, at any moment, its old table, its new
//! table, or (in a two-phase change) both at once. Packets of the old ELPs
//! and of the new ones may be in flight. A state is safe when the entries
//! installed on all switches, taken together, pass the independent
//! verifier ([`crate::verify`]) on the union topology: one action per key,
//! one queue per packet state across neighbours, no priority decrease, and
//! every priority's dependency graph acyclic over *all* installed entries.
//! Acyclicity over all entries covers any traffic, not only the ELPs: a
//! packet that matches no entry goes lossy and adds no dependency.
//!
//! **The plan** ([`Target::Extend`]) keeps every installed decision the new
//! ELPs meet and decides the rest greedily against dependency graphs that
//! already hold all installed dependencies ([`crate::tagging::extend`]), so
//! old and new entries together are acyclic by construction.
//!
//! **The schedule.** If the union of old and new entries verifies, the
//! change is two-phase: (1) every switch adds its new entries beside the
//! old ones, in any order; the routing then moves to the new ELPs; (2)
//! every switch removes the entries the new plan no longer has, in any
//! order. Every state of either phase holds a subset of the union's
//! entries, and every check above is closed under taking subsets, so
//! verifying the union proves every order of every switch. The old ELPs
//! stay lossless through phase 1 (their entries are all still there), the
//! new ones through phase 2. Otherwise (a given target plan that changes
//! installed decisions), switches replace their tables one at a time, in an
//! order found greedily with each state verified; if no switch can go next
//! the change is refused, naming the violation. The schedule is in
//! `schedule.rs`.
//!
//! References: consistent network updates (Reitblatt et al., "Abstractions
//! for network update", SIGCOMM 2012: two-phase, per-packet consistency by
//! version tags); deadlock-free reconfiguration of interconnects (Lysne et
//! al., "An efficient and deadlock-free network reconfiguration protocol",
//! IEEE ToC 2008: old and new routing functions coexisting with their
//! channel dependencies combined acyclic).

mod correspond;
pub mod growth;
mod model;
mod output;
mod schedule;
mod step_export;

pub use correspond::{Correspondence, correspond, with_entries};
pub use growth::{Growth, GrowthRow, grow_path};
pub use model::*;
pub use output::{STEPS_FORMAT, StepRow};
pub use step_export::{EXPORT_FORMAT, StepExport, UNION_FILE};

use crate::budget::Budget;
use crate::elp::ElpSet;
use crate::error::{Error, Result};
use crate::rules::{Entry, RuleSet};
use crate::tagging::extend::Seed;
use crate::tagging::{Context, Control};
use crate::verify::{Violation, verify_within};
use schedule::{Check, nodes_of, schedule};
use std::collections::BTreeMap;
use tagger_generators::{LinkId, NodeId, Topology};

/// Most switches the switch-by-switch schedule orders: it verifies up to
/// one state per remaining switch per step.
pub const MAX_SWITCH_STEPS: usize = 2_000;

/// Plans the change `req` asks for: the new plan, its churn and a schedule
/// with every state verified.
///
/// # Errors
/// [`Error::Update`] when the installed plan does not verify on the old
/// topology, cannot be extended (it is not one tag per priority, or has
/// several classes), the new plan does not verify, or no safe schedule
/// exists (naming the violation); ELP and budget errors.
///
/// With a traffic-class limit, the new plan keeps within it where an
/// extension, or failing that a plan from scratch reached switch by
/// switch, can; where neither can, the extension without the limit is
/// returned and [`Update::classes_over`] says why (a SONiC export of it is
/// refused; the neutral table expresses it).
///
/// # Complexity
/// Extension as `greedy`; the two-phase schedule verifies three states;
/// the switch-by-switch one up to `s^2 / 2` states for `s` changed switches.
pub fn plan(req: &Request<'_>, control: &Control) -> Result<Update> {
    // An installed plan over the limit does not run on such switches: the
    // change is planned without it (an extension keeps its classes).
    // Rules that do not even read on the old topology are refused, with
    // the verifier's reason, by the attempt itself.
    let installed_tcs = req.max_tcs.and_then(|n| {
        let keys = req.installed.keys(req.old).ok()?;
        let most = crate::tagging::traffic::classify(req.old, &keys)
            .ok()?
            .max();
        (most > n as usize).then_some((most, n))
    });
    if let Some((most, n)) = installed_tcs {
        return unlimited(
            req,
            control,
            format!(
                "the installed plan already needs {most} at some switch, over the limit of {n}: planned without it"
            ),
        );
    }
    match attempt(req, control)? {
        Attempt::Done(u) => Ok(*u),
        Attempt::Unreachable { refused, reason } => unlimited(
            req,
            control,
            format!(
                "{refused}; the plan made from scratch within the classes instead cannot be reached safely ({reason})"
            ),
        ),
    }
}

/// The update planned without a traffic-class limit, `why` recorded as
/// [`Update::classes_over`].
fn unlimited(req: &Request<'_>, control: &Control, why: String) -> Result<Update> {
    let free = Request {
        max_tcs: None,
        ..req.clone()
    };
    match attempt(&free, control)? {
        Attempt::Done(mut u) => {
            u.classes_over = Some(why);
            Ok(*u)
        }
        // Only a limit makes an attempt unreachable rather than an error.
        Attempt::Unreachable { reason, .. } => Err(Error::Update { reason }),
    }
}

/// What one planning attempt gave.
enum Attempt {
    Done(Box<Update>),
    /// The extension did not fit the traffic classes (`refused`) and the
    /// plan from scratch within them has no safe schedule (`reason`).
    Unreachable {
        refused: String,
        reason: String,
    },
}

fn attempt(req: &Request<'_>, control: &Control) -> Result<Attempt> {
    let bad = |reason: String| Error::Update { reason };
    let old_elp = ElpSet::build(req.old, req.elp)?;
    let before = verify_within(req.old, req.installed, Some(&old_elp), &req.limits);
    if !before.ok() {
        return Err(bad(format!(
            "the installed plan does not verify on the old topology {}: {before}",
            req.old.name()
        )));
    }
    let corr = correspond(req.old, req.new)?;
    let new_elp = ElpSet::build(req.new, req.new_elp.unwrap_or(req.elp))?;
    // Half the machine, as a run without a budget gets: a fabric past it
    // is refused with a memory-budget error rather than swapping.
    let budget = Budget::new(crate::budget::machine_default());
    let cx = Context::new(req.new, &new_elp, &budget, control).with_max_tcs(req.max_tcs);
    let old_u = corr.old_on_union(req.installed);
    let mut reordered = None;
    // A given plan's lower bound comes from greedy's plan of the new ELPs,
    // which the from-scratch comparison reuses when it is greedy too.
    let mut greedy = None;
    // Why the extension was refused, and the from-scratch plan used instead.
    let mut extension_refused = None;
    let mut prior: Option<crate::tagging::Tagging> = None;
    let mut near_plan: Option<crate::tagging::Tagging> = None;
    let mut near_refused = None;
    let (mut plan, lower_bound) = match &req.target {
        Target::Extend => {
            let e = extend(req, &cx, &corr, &old_u)?;
            (reordered, extension_refused, prior) = (e.reordered, e.refused, e.prior);
            near_plan = e.near;
            near_refused = e.near_refused;
            (RuleSet::from_tagging(req.new, &e.plan), e.plan.lower_bound)
        }
        Target::Given(r) => {
            let t = crate::tagging::tag_in(&cx, crate::tagging::Algo::GREEDY)?;
            let bound = t.lower_bound;
            greedy = Some(t);
            (r.clone(), bound)
        }
    };
    let mut near = match near_plan {
        Some(t) => near_of(req, t, &plan, (&corr, &old_u), &new_elp)?,
        None => None,
    };
    let scratch = if req.compare_scratch {
        Some(scratch_of(
            req,
            &cx,
            (&corr, &old_u),
            (prior.take(), greedy.take()),
        )?)
    } else {
        None
    };
    // Every candidate is fitted to the switches, as `tagger run` fits a
    // plan; an extension they cannot hold gives way to the plan from
    // scratch where that one fits (reached switch by switch, as where the
    // extension misses the traffic classes).
    let fit_of = |r: &RuleSet| req.profile.map(|p| PlanFit::of(req.new, r, p)).transpose();
    let mut fit = fit_of(&plan)?;
    if let Some(n) = near.as_mut() {
        n.fit = fit_of(&n.plan)?;
    }
    if let (Target::Extend, None, Some(f), Some(s)) =
        (&req.target, &extension_refused, &fit, &scratch)
        && let Some(why) = f.misfit()
        && s.fit.as_ref().is_some_and(PlanFit::fits)
    {
        extension_refused = Some(format!(
            "the switches cannot hold it: {why} (the plan from scratch fits them)"
        ));
        plan = s.plan.clone();
        fit = s.fit.clone();
    }
    let check = Check {
        req,
        corr: &corr,
        old_elp: &old_elp,
        new_elp: &new_elp,
        old_u: &old_u,
    };
    // The extension, where it stays the plan, is named for what it extends
    // (a near plan taken replaces it, name and all).
    if matches!(req.target, Target::Extend) && extension_refused.is_none() {
        plan.algo = format!("extend({})", req.installed.algo);
    }
    let plan_fits = fit.as_ref().is_none_or(PlanFit::fits);
    let moved = move_to_chosen(
        &check,
        near.as_mut(),
        &mut plan,
        (&extension_refused, plan_fits),
    )?;
    let Moved {
        final_report,
        churn,
        kind,
        steps,
        two_phase_refused,
    } = match moved {
        Ok(m) => m,
        Err(unreachable) => return Ok(unreachable),
    };
    // Where the near plan replaced a plan the switches cannot hold, why.
    let mut unfit = None;
    if let Some(n) = near.as_ref().filter(|n| n.taken) {
        if !plan_fits {
            unfit = fit.as_ref().and_then(PlanFit::misfit);
        }
        fit = n.fit.clone();
    }
    Ok(Attempt::Done(Box::new(Update {
        old_priorities: req.installed.priorities,
        lower_bound,
        churn,
        scratch,
        near,
        near_refused,
        kind,
        steps,
        final_report,
        two_phase_refused,
        extension_refused,
        installed: old_u.clone(),
        correspondence: corr,
        plan,
        reordered,
        classes_over: None,
        fit,
        unfit,
    })))
}

/// Moves to the near plan `near` where [`Request::near`] takes it, else
/// (or where no safe order reaches it and the choice allows falling back)
/// to `plan`, which becomes the near plan where that is taken. Where the
/// extension did not fit the classes (`refused`), the plan from scratch
/// replaces it switch by switch anyway, and the near plan, offered there
/// only at as many priorities or fewer and less churn, is taken instead.
///
/// # Errors
/// As [`move_to`]; with `--near`, its failure to reach the near plan.
fn move_to_chosen(
    check: &Check<'_>,
    near: Option<&mut Near>,
    plan: &mut RuleSet,
    (refused, plan_fits): (&Option<String>, bool),
) -> Result<std::result::Result<Moved, Attempt>> {
    let choice = check.req.near;
    // Taken by default only where it fits the switches as well as the
    // plan it would replace.
    let by_default = refused.is_some()
        && near.as_ref().is_some_and(|n| {
            let fewer = n.priorities < plan.priorities
                || (n.priorities == plan.priorities
                    && n.churn.entries()
                        < churn_of(&check.old_u.entries, &check.corr.new_on_union(plan).entries)
                            .entries());
            fewer && n.fit.as_ref().is_none_or(PlanFit::fits)
        })
        // A near plan the switches hold replaces one they cannot.
        || (!plan_fits && near.as_ref().is_some_and(|n| n.fit.as_ref().is_some_and(PlanFit::fits)));
    let Some(n) = near.filter(|_| choice != NearChoice::Refused || by_default) else {
        return move_to(check, plan, refused);
    };
    n.taken = true;
    // The schedule is told of no refusal: the near plan is what it moves
    // to, not the plan from scratch.
    match move_to(check, &n.plan, &None) {
        Ok(Ok(m)) => {
            *plan = n.plan.clone();
            Ok(Ok(m))
        }
        Err(e) if choice == NearChoice::Require => Err(Error::Update {
            reason: format!(
                "the plan near the installed one (--near) cannot be reached safely: {e}; without --near the update moves to the plan it reports as the new plan"
            ),
        }),
        Err(Error::Update { reason }) => {
            n.taken = false;
            n.unreachable = Some(reason);
            move_to(check, plan, refused)
        }
        other => other,
    }
}

/// What moving to a new plan takes: its verification on the new topology,
/// its churn, and the schedule.
struct Moved {
    final_report: crate::verify::Report,
    churn: Churn,
    kind: ScheduleKind,
    steps: Vec<Step>,
    two_phase_refused: Option<Violation>,
}

/// Moving from the installed plan to `plan` (see [`Moved`]); `refused`:
/// why the extension was refused, where `plan` replaces it.
/// `Ok(Err(..))`: no safe schedule reaches a plan from scratch that
/// replaced a refused extension.
///
/// # Errors
/// [`Error::Update`] when `plan` does not verify on the new topology or no
/// safe schedule reaches it.
fn move_to(
    check: &Check<'_>,
    plan: &RuleSet,
    refused: &Option<String>,
) -> Result<std::result::Result<Moved, Attempt>> {
    let (req, corr, old_u) = (check.req, check.corr, check.old_u);
    let final_report = verify_within(req.new, plan, Some(check.new_elp), &req.limits);
    if !final_report.ok() {
        return Err(Error::Update {
            reason: format!("the new plan does not verify on the new topology: {final_report}"),
        });
    }
    let new_u = corr.new_on_union(plan);
    let churn = churn_of(&old_u.entries, &new_u.entries);
    // A recabled port carries one link at a time: the dropped link's
    // entries go first, and every later state is built on what is left.
    let recabled = |e: &Entry| {
        corr.recabled[e.out_link as usize] || e.in_link.is_some_and(|l| corr.recabled[l as usize])
    };
    let (unplug, kept): (Vec<Entry>, Vec<Entry>) = old_u.entries.iter().partition(|e| recabled(e));
    let old_after = with_entries(old_u, corr.union.name(), kept);
    let mut check = Check { ..*check };
    let mut steps = Vec::new();
    if !unplug.is_empty() {
        let switches = nodes_of(&unplug);
        steps.push(check.step(
            Action::Unplug,
            switches,
            Vec::new(),
            unplug,
            &old_after,
            true,
        ));
        check.old_u = &old_after;
    }
    let (kind, more, two_phase_refused) = match schedule(&check, &new_u, churn.entries(), refused)?
    {
        Ok(s) => s,
        Err(unreachable) => return Ok(Err(unreachable)),
    };
    steps.extend(more);
    Ok(Ok(Moved {
        final_report,
        churn,
        kind,
        steps,
        two_phase_refused,
    }))
}

/// The from-scratch comparison, by the installed plan's algorithm: `prior`
/// where the update already fell back on such a plan, greedy's plan of the
/// new ELPs (made for the bound) where that algorithm is greedy, else a
/// new plan.
fn scratch_of(
    req: &Request<'_>,
    cx: &Context<'_>,
    (corr, old_u): (&Correspondence, &RuleSet),
    (prior, greedy): (
        Option<crate::tagging::Tagging>,
        Option<crate::tagging::Tagging>,
    ),
) -> Result<Scratch> {
    let algo = installed_algo(req.installed);
    let t = match (prior, greedy) {
        (Some(t), _) => t,
        (None, Some(t)) if algo == crate::tagging::Algo::GREEDY => t,
        _ => crate::tagging::tag_in(cx, algo)?,
    };
    let plan = RuleSet::from_tagging(req.new, &t);
    let r = corr.new_on_union(&plan);
    Ok(Scratch {
        algo: r.algo.clone(),
        priorities: t.priorities,
        churn: churn_of(&old_u.entries, &r.entries),
        fit: req
            .profile
            .map(|p| PlanFit::of(req.new, &plan, p))
            .transpose()?,
        plan,
    })
}

/// The near plan `t` as [`Near`], verified on the new topology (against
/// the new ELPs), with its churn against the installed plan `old_u`;
/// `None` where it has as many priorities as the new plan `plan` and no
/// less churn.
///
/// # Errors
/// [`Error::Update`] when it does not verify (a bug).
fn near_of(
    req: &Request<'_>,
    t: crate::tagging::Tagging,
    plan: &RuleSet,
    (corr, old_u): (&Correspondence, &RuleSet),
    new_elp: &ElpSet,
) -> Result<Option<Near>> {
    let rules = RuleSet::from_tagging(req.new, &t);
    let report = verify_within(req.new, &rules, Some(new_elp), &req.limits);
    if !report.ok() {
        return Err(Error::Update {
            reason: format!(
                "the plan near the installed one does not verify on the new topology: {report}"
            ),
        });
    }
    let churn = churn_of(&old_u.entries, &corr.new_on_union(&rules).entries);
    if t.priorities >= plan.priorities {
        let base = churn_of(&old_u.entries, &corr.new_on_union(plan).entries);
        if churn.entries() >= base.entries() {
            return Ok(None);
        }
    }
    Ok(Some(Near {
        priorities: t.priorities,
        churn,
        evaluations: t.effort.as_ref().map_or(0, |e| e.evaluations),
        plan: rules,
        taken: false,
        unreachable: None,
        fit: None,
    }))
}

/// What extending the installed plan gave: the plan, the reordering tried
/// where keeping the installed decisions cost a priority, and, where the
/// extension could not fit the traffic classes, why and the plan from
/// scratch used instead.
struct Extended {
    plan: crate::tagging::Tagging,
    reordered: Option<Reordered>,
    refused: Option<String>,
    prior: Option<crate::tagging::Tagging>,
    /// The plan near the installed one, where it is offered (see
    /// [`Near`]; its churn is compared later).
    near: Option<crate::tagging::Tagging>,
    /// Why none is offered, where one was searched for.
    near_refused: Option<String>,
}

/// The installed plan extended to the new topology (see [`Extended`]).
fn extend(
    req: &Request<'_>,
    cx: &Context<'_>,
    corr: &Correspondence,
    old_u: &RuleSet,
) -> Result<Extended> {
    let mut reordered = None;
    let mut extension_refused = None;
    let mut prior = None;
    extendable(req.installed)?;
    let seed = seed(corr, old_u);
    let mut t = crate::tagging::extend::plan(cx, &seed)?;
    // Keeping the installed decisions greedily can cost a priority
    // a reordering of the new channels (and of the old ones, within
    // the installed dependencies) would not.
    let target = req.installed.priorities;
    if t.priorities > target
        && target >= t.lower_bound.max(1)
        && target <= crate::tagging::pins::MAX_PINNED_TARGET
        && req.search_budget > 0
    {
        let r = crate::tagging::extend::reorder(
            cx,
            &seed,
            &t,
            target,
            req.search_budget,
            REORDER_SEED,
        )?;
        reordered = Some(Reordered {
            target,
            greedy_priorities: t.priorities,
            reached: r.plan.is_some(),
            effort: r.effort,
            forced: r.forced.map(|f| ForcedPaths {
                paths: f.paths,
                example: f
                    .example
                    .iter()
                    .map(|&c| (corr.union.channel_src(c), corr.union.channel_dst(c)))
                    .collect(),
            }),
        });
        if let Some(found) = r.plan {
            t = found;
        }
    }
    // Where keeping every installed decision costs a priority, a plan that
    // may change some of them, searched from the installed orders, may
    // keep the installed count at a fraction of a new plan's churn.
    let searchable = target >= t.lower_bound.max(1) && req.search_budget > 0;
    let search_near = |ext: &crate::tagging::Tagging| {
        crate::tagging::extend::near(cx, &seed, ext, target, req.search_budget)
    };
    let mut near = None;
    if searchable && t.priorities > target {
        near = Some(search_near(&t)?);
    }
    // Where the extension cannot fit the classes, the plan from scratch
    // replaces it switch by switch; the near plan, reached the same way,
    // may fit them at less churn.
    let unfitted = (searchable && near.is_none() && req.max_tcs.is_some()).then(|| t.clone());
    if let Some(n) = req.max_tcs {
        let lower_bound = t.lower_bound;
        let unconstrained = t.priorities;
        let movable = |k: &(u32, u32, u32)| !seed.kept.contains_key(k);
        // Each round replans only what it forces up; where that gets
        // stuck, each round replans the whole extension instead.
        let quick =
            crate::tagging::fit::fit_moving(req.new, n, t.clone(), &movable, &mut |last, f| {
                crate::tagging::extend::refit(cx, &seed, last, f)
            })?;
        let fitted = match quick {
            Ok(done) => Ok(done),
            Err(_) => crate::tagging::fit::fit_moving(req.new, n, t, &movable, &mut |_, f| {
                crate::tagging::extend::plan_forced(cx, &seed, Some(f))
            })?,
        };
        t = match fitted {
            Ok((mut ft, mut info)) => {
                info.unconstrained_priorities = unconstrained;
                ft.lower_bound = lower_bound;
                ft.class_fit = Some(info);
                ft
            }
            Err(no) => {
                // Keeping the installed decisions cannot fit:
                // plan from scratch within the classes instead
                // (the schedule then replaces what it must).
                let algo = installed_algo(req.installed);
                let scratch = crate::tagging::tag_in(cx, algo)?;
                extension_refused = Some(no.to_string());
                prior = Some(scratch.clone());
                if let Some(ext) = &unfitted {
                    near = Some(search_near(ext)?);
                }
                scratch
            }
        };
    }
    let (near, near_refused) = offer_near(
        req,
        near,
        (t.priorities, target),
        extension_refused.is_some(),
    )?;
    Ok(Extended {
        plan: t,
        reordered,
        refused: extension_refused,
        prior,
        near,
        near_refused,
    })
}

/// The near plan found, if any, as offered against a new plan of `new`
/// priorities where the installed plan has `target`: where the new plan
/// needs more than `target`, offered where it needs fewer; where the new
/// plan was planned from scratch (`refused`: the extension did not fit
/// the classes), also at as many, since that plan is reached switch by
/// switch too (its churn is compared once known), and then without a
/// reason where it is not. Under a class limit only where it fits them.
fn offer_near(
    req: &Request<'_>,
    near: Option<crate::tagging::Tagging>,
    (new, target): (u32, u32),
    refused: bool,
) -> Result<(Option<crate::tagging::Tagging>, Option<String>)> {
    match near {
        Some(p) if new > target => near_fits(req, p, new + u32::from(refused)),
        Some(p) if refused && p.priorities <= new => Ok((near_fits(req, p, new + 1)?.0, None)),
        _ => Ok((None, None)),
    }
}

/// The near plan `p` ([`crate::tagging::extend::near`]) against a plan of
/// `priorities`: kept where it needs fewer and, under a class limit, fits
/// the classes as found; else why not.
fn near_fits(
    req: &Request<'_>,
    p: crate::tagging::Tagging,
    priorities: u32,
) -> Result<(Option<crate::tagging::Tagging>, Option<String>)> {
    if p.priorities >= priorities {
        let held = p.effort.as_ref().and_then(|e| e.class_held.as_ref());
        let why = match (held, req.max_tcs) {
            (Some(h), Some(n)) if !h.fitted && h.target < p.priorities => format!(
                "a local search from the installed orders reached {} priorities only with more than {} traffic classes at some switch (held to them, it stopped {} short), and needs {} within them, no fewer than the new plan",
                h.target, n, h.left, p.priorities
            ),
            _ => format!(
                "a local search from the installed orders needs {} priorities, no fewer than the new plan",
                p.priorities
            ),
        };
        return Ok((None, Some(why)));
    }
    let Some(n) = req.max_tcs else {
        return Ok((Some(p), None));
    };
    let over = crate::tagging::traffic::classify(req.new, &p.keys)?.over(n as usize);
    let Some(&(v, k)) = over.first() else {
        return Ok((Some(p), None));
    };
    let why = format!(
        "a local search from the installed orders reached {} priorities, but {} switch(es) then need more than {n} traffic classes (switch {v} needs {k})",
        p.priorities,
        over.len(),
    );
    Ok((None, Some(why)))
}

/// The extension's local search's seed: fixed, so an update is a function
/// of its inputs.
const REORDER_SEED: u64 = 1;

/// The topology `to` names, given the old one: a change
/// (`grow:switches=N,seed=S`, `grow:leaves=N`, `drain:links=N,seed=S`,
/// applied to `old`),
/// a topology spec or a `tagger-topology/1` file.
///
/// # Errors
/// The change's or the spec's error, naming the parameter at fault.
pub fn resolve_to(old: &Topology, to: &str) -> Result<Topology> {
    use tagger_generators::change::Change;
    Ok(match Change::parse(to)? {
        Some(c) => c.apply(old)?,
        None => crate::TopologySpec::parse(to)?.build()?,
    })
}

/// The topology file `--to` names, if it names one (not a change).
pub fn to_file(to: &str) -> Option<std::path::PathBuf> {
    use tagger_generators::change::Change;
    match Change::parse(to) {
        Ok(None) => match crate::TopologySpec::parse(to).ok()? {
            crate::TopologySpec::File { path } => Some(path),
            _ => None,
        },
        _ => None,
    }
}

/// The algorithm an update plans from scratch with: the one that planned
/// `r` (greedy when its name is not one), except bare `exact`, which is
/// replanned with `auto`. `auto` names a plan its bounded `exact` step
/// found `exact` too, and replanning a grown network with `exact`'s 600 s
/// limit would spend all of it wherever the solver cannot prove the bound;
/// `auto` runs the same solver with a fixed amount of work on small
/// networks. `exact:timeout=S` with another limit than the default 600 s
/// (which is written bare) names its own limit and is kept.
fn installed_algo(r: &RuleSet) -> crate::tagging::Algo {
    use crate::tagging::Algo;
    match r.algo.parse() {
        Ok(Algo::EXACT) => Algo::Auto { time_ms: None },
        Ok(a) => a,
        Err(_) => Algo::GREEDY,
    }
}

/// Whether the extension can read installed plan `r`: it reads tags as
/// priorities and starts at tag 1 with one class, what every DSCP-scheme
/// algorithm here writes.
fn extendable(r: &RuleSet) -> std::result::Result<(), crate::NotExtendable> {
    if r.initial_tag != 1 || !r.classes.is_empty() {
        return Err(crate::NotExtendable::Classes {
            initial_tag: r.initial_tag,
            classes: r.classes.clone(),
        });
    }
    if let Some(e) = r
        .entries
        .iter()
        .find(|e| e.tag != e.priority || e.next_tag != e.next_priority)
    {
        return Err(crate::NotExtendable::TagNotPriority {
            node: e.node,
            tag: e.tag,
            priority: e.priority,
        });
    }
    Ok(())
}

/// The extension's seed: every installed same-priority dependency on the
/// union's channels, and the installed decisions on links the new topology
/// keeps.
fn seed(corr: &Correspondence, old_u: &RuleSet) -> Seed {
    let u = &corr.union;
    let mut s = Seed {
        vertices: u.channel_count(),
        ..Default::default()
    };
    for e in &old_u.entries {
        let c_out = u.channel_from(e.out_link, e.node);
        let Some(l) = e.in_link else { continue };
        let c_in = u.channel_from(l, e.node) ^ 1;
        if e.priority == e.next_priority {
            s.edges.push((e.priority, c_in, c_out));
        }
        if (l as usize) < corr.new_links && (e.out_link as usize) < corr.new_links {
            s.kept.insert((c_in, e.tag, c_out), e.next_tag);
        }
    }
    s
}

type Key = (NodeId, Option<LinkId>, u32, LinkId);

fn key(e: &Entry) -> Key {
    (e.node, e.in_link, e.tag, e.out_link)
}

/// Churn of `new` against `old` (on the same topology).
fn churn_of(old: &[Entry], new: &[Entry]) -> Churn {
    let mut per: BTreeMap<NodeId, (u32, u32, u32)> = BTreeMap::new();
    let olds: BTreeMap<Key, &Entry> = old.iter().map(|e| (key(e), e)).collect();
    let news: BTreeMap<Key, &Entry> = new.iter().map(|e| (key(e), e)).collect();
    for (k, e) in &news {
        match olds.get(k) {
            None => per.entry(e.node).or_default().0 += 1,
            Some(o) if o != e => per.entry(e.node).or_default().2 += 1,
            Some(_) => {}
        }
    }
    for (k, e) in &olds {
        if !news.contains_key(k) {
            per.entry(e.node).or_default().1 += 1;
        }
    }
    let mut c = Churn::default();
    for (v, (a, r, ch)) in per {
        c.added += a as u64;
        c.removed += r as u64;
        c.changed += ch as u64;
        c.per_switch.push((v, a, r, ch));
    }
    c.switches_touched = c.per_switch.len() as u64;
    c
}

#[cfg(test)]
mod tests;
