//! `auto`: the best plan the other algorithms find within their
//! deterministic budgets, stopping as soon as one meets the lower bound.
//!
//! In order: `clos` where the topology has levels (a formula per hop, the
//! minimum on fat-trees), `greedy` (Tagger's Algorithm 2 at rule level, the
//! floor; skipped where `clos` gave a plan), then `search` (greedy's plan,
//! the order constructions and a
//! local search, within [`SEARCH_BUDGET`](super::SEARCH_BUDGET) path
//! evaluations) while the best plan is still above the lower bound. Plans
//! rank by priorities, then traffic classes at the busiest switch (under a
//! traffic-class budget), then rules; ties go to the earlier algorithm.
//! Under a traffic-class budget, where greedy's plan misses the classes
//! and `search` runs after it anyway, the plan is fitted (repair rounds,
//! [`super::fit`]) after `search`, only where `search` did not beat its
//! unfitted priorities, and only until a round needs more priorities than
//! the best plan: on Jellyfish 2000/64 r=12 `shortest` that is one round
//! (`auto` 32-35 s -> 17-18 s when each round was a whole replan, the
//! same plan).
//!
//! On small networks (at most [`AUTO_EXACT_PATHS`] ELP paths), where
//! the best plan before `search` is above the bound, `exact`'s solver runs
//! beside `search`, each on a core: from that plan (greedy's, fitted to
//! the traffic classes at once there), with [`exact::AUTO_WORK`] of work
//! per target (deterministic, no local search of its own), and under a
//! traffic-class budget its plan is fitted and searched from as `exact`
//! does. Where `search` reaches the bound, its plan is taken and the
//! solver stopped; else both finish and the better plan wins (`search`'s
//! on a tie), so the answer is the same on one thread or two. On small
//! Jellyfish with long paths the local search stalls short of 2
//! priorities where the solver, with acyclicity propagated inside it,
//! finds them (Jellyfish 48/8 r=4 seeds 1, 4, 5, 7 `shortest`: 2 in
//! 0.1-0.9 s of it; 60/8 seed 3 in 3.5 s; 64/8 seed 11 in 25 s). Run
//! after `search` instead, as it was until 2026-11-27, the two added up:
//! 64/8 seed 11 took 35 s (search 11.5, then the solver 23), 80/9 r=5
//! seed 1, where neither finds 2, 40 s. Where greedy's plan was not
//! fitted first the solver's start differs, and on 64/8 seed 11 it then
//! finds nothing within its work: which start the solver succeeds from
//! is a matter of luck on these networks, measured, not derived. Built
//! with the `cadical` feature, `auto` leaves `exact` out: CaDiCaL here
//! takes no theory, so there is no work counter to bound it by.
//!
//! Complexity: at most the sum of the four (`search` and `exact` side
//! by side on two cores); `clos` and `greedy` are
//! near-linear in the ELP, `search` only runs when they leave a gap to
//! the lower bound, and `exact` only on small ELPs, with bounded work.

use super::*;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// Plans with `clos`, `greedy`, `search` and `exact` in turn (see the
/// module documentation) and returns the best, with [`Tagging::tried`] listing
/// each algorithm run.
///
/// # Errors
/// A memory budget or stop request from any algorithm; [`Error::Algo`]
/// when none produced a plan (each one's reason in the message).
pub(super) fn plan(cx: &Context<'_>, time_ms: Option<u64>) -> Result<Tagging> {
    plan_up_to(cx, time_ms, AUTO_EXACT_PATHS)
}

/// [`plan`], with `exact` beside `search` on ELPs of at most
/// `exact_paths` paths (tests pass 0 to see the rest on small networks).
pub(super) fn plan_up_to(
    cx: &Context<'_>,
    time_ms: Option<u64>,
    exact_paths: u64,
) -> Result<Tagging> {
    let mut candidates = Vec::new();
    if cx.topo.has_levels() {
        candidates.push(Algo::Clos { k: None });
    }
    candidates.push(Algo::GREEDY);
    candidates.push(Algo::Search(SearchParams {
        time_ms,
        ..SearchParams::DEFAULT
    }));
    let began = Instant::now();
    let mut runs = Runs::default();
    let mut deferred: Option<Deferred> = None;
    // The ELP is small enough for `exact` beside `search`.
    let small = exact::sat::THEORY && cx.elp.counts(cx.topo).paths <= exact_paths as u128;
    let mut exact_ran = false;
    // Greedy's plan over the traffic classes, handed to `search`, which
    // starts from the same plan (rather than planning it again).
    let mut greedy_plan: Option<Tagging> = None;
    for algo in candidates {
        if runs
            .best
            .as_ref()
            .is_some_and(|b| b.priorities <= runs.bound)
        {
            break;
        }
        // Where the Clos scheme gave a plan, greedy is not run on its own:
        // it needs a priority more there, and `search` starts from its
        // plan anyway. Fitted to the traffic classes it cost 44 of auto's
        // 53 s on fat-tree k=32 `kbounce:2` (clos 3, greedy 4, search 3).
        if algo == Algo::GREEDY
            && runs
                .best
                .as_ref()
                .is_some_and(|b| b.algo == Algo::Clos { k: None })
        {
            continue;
        }
        let start = Instant::now();
        if let Algo::Search(_) = algo
            && small
            && let Some(from) = runs.best.clone()
        {
            runs.search_beside_exact(cx, algo, from, ms_left(began, time_ms))?;
            exact_ran = true;
            continue;
        }
        if let (Algo::Search(p), Some(g)) = (algo, greedy_plan.take()) {
            runs.record(algo, start, search_from(cx, p, g))?;
            continue;
        }
        let (Algo::Greedy { restarts, seed }, Some(n)) = (algo, cx.max_tcs) else {
            runs.record(algo, start, tag_in(cx, algo))?;
            continue;
        };
        let free = match greedy::plan(cx, restarts, seed).and_then(checked) {
            Ok(free) => free,
            Err(e) => {
                runs.record(algo, start, Err(e))?;
                continue;
            }
        };
        let misses = !traffic::classify(cx.topo, &free.keys)?
            .over(n as usize)
            .is_empty();
        // On small ELPs the fitted plan is what `exact` starts from beside
        // `search`: from greedy's plan fitted, Jellyfish 64/8 r=4 seed 11
        // `shortest` gets 2 priorities in 25 s; from it unfitted, none.
        if misses && !small && free.priorities > free.lower_bound.max(runs.bound) {
            // `search` runs next; the fitting waits for what it finds.
            runs.bound = runs.bound.max(free.lower_bound);
            let seconds = start.elapsed().as_secs_f64();
            deferred = Some(Deferred {
                greedy: (restarts, seed),
                max_tcs: n,
                attempt: runs.tried.len(),
                priorities: free.priorities,
                seconds,
            });
            runs.tried.push(Attempt {
                algo: algo.name(),
                priorities: None,
                keys: None,
                error: Some(format!(
                    "{} priorities over the traffic classes; not fitted, since search found fewer",
                    free.priorities
                )),
                seconds,
            });
            if (restarts, seed) == (1, 0) {
                greedy_plan = Some(free);
            }
            continue;
        }
        runs.record(algo, start, fitted(cx, algo, free, n))?;
    }
    if let Some(d) = deferred
        && runs
            .best
            .as_ref()
            .is_none_or(|b| b.priorities >= d.priorities)
    {
        runs.fit_deferred(cx, d)?;
    }
    // Where no plan fitted before `search` (greedy's fitting failed), the
    // solver starts from `search`'s plan after it.
    if let Some(b) = &runs.best
        && small
        && !exact_ran
        && b.priorities > runs.bound
    {
        let start = Instant::now();
        let left = ms_left(began, time_ms);
        runs.record(Algo::EXACT, start, exact::after_search(cx, b.clone(), left))?;
    }
    let Runs { tried, best, bound } = runs;
    let Some(mut best) = best else {
        return Err(Error::Algo {
            algo: Algo::Auto { time_ms }.name(),
            reason: tried
                .iter()
                .map(|a| format!("{}: {}", a.algo, a.error.as_deref().unwrap_or("no plan")))
                .collect::<Vec<_>>()
                .join("; "),
        });
    };
    best.lower_bound = best.lower_bound.max(bound);
    best.tried = tried;
    Ok(best)
}

/// `search` with `p` as [`tag_in`] runs it, from greedy's plan `greedy`
/// (`greedy:restarts=1,seed=0`, checked), which it would otherwise plan
/// again (0.6 s of `auto` on Jellyfish 2000).
fn search_from(cx: &Context<'_>, p: SearchParams, greedy: Tagging) -> Result<Tagging> {
    let t = checked(search::plan_given(cx, &p, None, Some(greedy))?)?;
    match cx.max_tcs {
        None => Ok(t),
        Some(n) => fitted(cx, Algo::Search(p), t, n),
    }
}

/// ELP paths up to which `auto` runs `exact` after `search` (see the
/// module documentation).
const AUTO_EXACT_PATHS: u64 = 20_000;

/// Greedy's plan over the traffic classes, not fitted yet.
struct Deferred {
    /// Greedy's restarts and seed.
    greedy: (u32, u64),
    /// The traffic-class budget.
    max_tcs: u32,
    /// Its attempt in [`Runs::tried`].
    attempt: usize,
    /// Its unfitted priorities.
    priorities: u32,
    /// Seconds it took unfitted.
    seconds: f64,
}

/// What `auto` has run so far: each attempt, the best plan, the best
/// lower bound.
#[derive(Default)]
struct Runs {
    tried: Vec<Attempt>,
    best: Option<Tagging>,
    bound: u32,
}

impl Runs {
    /// `algo`'s result, started at `start`: an attempt, and the best plan
    /// where it ranks better. An algorithm that does not apply (clos on
    /// ELPs past its bounces, a plan over the traffic classes) leaves the
    /// others; any other error ends the run.
    fn record(&mut self, algo: Algo, start: Instant, result: Result<Tagging>) -> Result<()> {
        self.record_took(algo, start.elapsed().as_secs_f64(), result)
    }

    /// [`Runs::record`], for a run that took `seconds`.
    fn record_took(&mut self, algo: Algo, seconds: f64, result: Result<Tagging>) -> Result<()> {
        match result {
            Ok(t) => {
                self.bound = self.bound.max(t.lower_bound);
                self.tried.push(Attempt {
                    algo: algo.name(),
                    priorities: Some(t.priorities),
                    keys: Some(t.keys.len() as u64),
                    error: None,
                    seconds,
                });
                if self.best.as_ref().is_none_or(|b| rank(&t) < rank(b)) {
                    self.best = Some(t);
                }
            }
            Err(Error::Algo { reason, .. }) => self.tried.push(Attempt {
                algo: algo.name(),
                priorities: None,
                keys: None,
                error: Some(reason),
                seconds,
            }),
            Err(e) => return Err(e),
        }
        Ok(())
    }

    /// `search` (as `algo`) and `exact`'s solver from `from` side by side,
    /// each on a core, within `time_ms` if given. Where `search` reaches
    /// the lower bound its plan is taken and the solver is stopped (its
    /// attempt says so); else both run to the end, and the better plan
    /// wins (`search`'s on a tie). The outcome depends on neither thread's
    /// speed: the solver's work is bounded ([`exact::AUTO_WORK`] per
    /// target) and it is only stopped where its plan is not used, so one
    /// thread or two give the same plan.
    fn search_beside_exact(
        &mut self,
        cx: &Context<'_>,
        algo: Algo,
        from: Tagging,
        time_ms: Option<u64>,
    ) -> Result<()> {
        let bound = self.bound;
        let reached = Arc::new(AtomicBool::new(false));
        let control = cx.control.linked(Arc::clone(&reached));
        let ecx = Context {
            control: &control,
            ..*cx
        };
        let ((s, s_took), (e, e_took)) = rayon::join(
            || {
                let start = Instant::now();
                let s = tag_in(cx, algo);
                if s.as_ref()
                    .is_ok_and(|t| t.priorities <= t.lower_bound.max(bound))
                {
                    reached.store(true, Ordering::Relaxed);
                }
                (s, start.elapsed().as_secs_f64())
            },
            || {
                let start = Instant::now();
                let e = exact::after_search(&ecx, from, time_ms);
                (e, start.elapsed().as_secs_f64())
            },
        );
        let search_reached = reached.load(Ordering::Relaxed);
        self.record_took(algo, s_took, s)?;
        if search_reached {
            self.tried.push(Attempt {
                algo: Algo::EXACT.name(),
                priorities: None,
                keys: None,
                error: Some("stopped: search reached the lower bound beside it".into()),
                seconds: e_took,
            });
            return Ok(());
        }
        self.record_took(Algo::EXACT, e_took, e)
    }

    /// Greedy's plan `d` fitted to the traffic classes after all, where
    /// `search` did not beat its unfitted priorities: its attempt gets the
    /// result, and the plan wins ties, as it would have run first. Fitting
    /// never lowers the unfitted count, and stops at a round above the best
    /// plan's ([`fitted_below`]), so the plan kept is the one fitting
    /// greedy's first would have given.
    fn fit_deferred(&mut self, cx: &Context<'_>, d: Deferred) -> Result<()> {
        let start = Instant::now();
        // A fitting above the best plan's priorities cannot win.
        let cap = self.best.as_ref().map(|b| b.priorities);
        let (restarts, seed) = d.greedy;
        // Planned again rather than held through `search`: on Jellyfish
        // 2000 its keys are hundreds of MB and replanning takes 0.5 s.
        let result = greedy::plan(cx, restarts, seed)
            .and_then(checked)
            .and_then(|t| fitted_below(cx, Algo::Greedy { restarts, seed }, t, d.max_tcs, cap));
        let attempt = &mut self.tried[d.attempt];
        attempt.seconds = d.seconds + start.elapsed().as_secs_f64();
        match result {
            Ok(t) => {
                attempt.priorities = Some(t.priorities);
                attempt.keys = Some(t.keys.len() as u64);
                attempt.error = None;
                if self.best.as_ref().is_none_or(|b| rank(&t) <= rank(b)) {
                    self.best = Some(t);
                }
            }
            Err(Error::Algo { reason, .. }) => attempt.error = Some(reason),
            Err(e) => return Err(e),
        }
        Ok(())
    }
}

/// Priorities, then traffic classes at the busiest switch (under a
/// traffic-class budget), then rules: smaller is better.
pub(super) fn rank(t: &Tagging) -> (u32, u32, usize) {
    (
        t.priorities,
        t.class_fit.as_ref().map_or(0, |f| f.tcs_max),
        t.keys.len(),
    )
}
