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
//! `exact` is not run: its limit is wall-clock time, and `auto` answers
//! the same at any speed and thread count.
//!
//! Complexity: at most the sum of the three; `clos` and `greedy` are
//! near-linear in the ELP, and `search` only runs when they leave a gap
//! to the lower bound.

use super::*;
use std::time::Instant;

/// Plans with `clos`, `greedy` and `search` in turn (see the module
/// documentation) and returns the best, with [`Tagging::tried`] listing
/// each algorithm run.
///
/// # Errors
/// A memory budget or stop request from any algorithm; [`Error::Algo`]
/// when none produced a plan (each one's reason in the message).
pub(super) fn plan(cx: &Context<'_>, time_ms: Option<u64>) -> Result<Tagging> {
    let mut candidates = Vec::new();
    if cx.topo.has_levels() {
        candidates.push(Algo::Clos { k: None });
    }
    candidates.push(Algo::GREEDY);
    candidates.push(Algo::Search(SearchParams {
        time_ms,
        ..SearchParams::DEFAULT
    }));
    let mut tried: Vec<Attempt> = Vec::new();
    let mut best: Option<Tagging> = None;
    let mut bound = 0;
    for algo in candidates {
        if best.as_ref().is_some_and(|b| b.priorities <= bound) {
            break;
        }
        // Where the Clos scheme gave a plan, greedy is not run on its own:
        // it needs a priority more there, and `search` starts from its
        // plan anyway. Fitted to the traffic classes it cost 44 of auto's
        // 53 s on fat-tree k=32 `kbounce:2` (clos 3, greedy 4, search 3).
        if algo == Algo::GREEDY
            && best
                .as_ref()
                .is_some_and(|b| b.algo == Algo::Clos { k: None })
        {
            continue;
        }
        let start = Instant::now();
        match tag_in(cx, algo) {
            Ok(t) => {
                bound = bound.max(t.lower_bound);
                tried.push(Attempt {
                    algo: algo.name(),
                    priorities: Some(t.priorities),
                    keys: Some(t.keys.len() as u64),
                    error: None,
                    seconds: start.elapsed().as_secs_f64(),
                });
                if best.as_ref().is_none_or(|b| rank(&t) < rank(b)) {
                    best = Some(t);
                }
            }
            // An algorithm that does not apply (clos on ELPs past its
            // bounces, a plan over the traffic classes) leaves the others.
            Err(Error::Algo { reason, .. }) => tried.push(Attempt {
                algo: algo.name(),
                priorities: None,
                keys: None,
                error: Some(reason),
                seconds: start.elapsed().as_secs_f64(),
            }),
            Err(e) => return Err(e),
        }
    }
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

/// Priorities, then traffic classes at the busiest switch (under a
/// traffic-class budget), then rules: smaller is better.
fn rank(t: &Tagging) -> (u32, u32, usize) {
    (
        t.priorities,
        t.class_fit.as_ref().map_or(0, |f| f.tcs_max),
        t.keys.len(),
    )
}
