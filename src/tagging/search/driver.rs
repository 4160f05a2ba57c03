//! `search`'s driver: greedy's plan and the order plans, then a local
//! search per target below the best plan found, a portfolio of searches
//! per target.

use super::symmetric::{Halved, one_of_each_reversal};
use super::{FALLBACK_ROOM, LocalSearch, Occurrences, Outcome, SLICE};
use crate::elp::enumerate::ChannelPaths;
use crate::tagging::{
    Algo, ClassHeld, Context, Effort, MAX_TAG, Result, SearchParams, Tagging, checked, control,
    finish, fit, greedy, order, orders_fit, repair, traffic,
};
use rayon::prelude::*;

/// Times the class-held search checks its orders with the classification
/// and holds the nodes it finds over lower, before it gives up.
const MAX_CHECKS: u32 = 32;

/// A plan of orders and the ELP as it tags it.
type Tagged = (order::OrderPlan, Tagging);

/// `search`'s options and its deadline.
struct Options {
    p: SearchParams,
    deadline: Option<std::time::Instant>,
}

/// The plan kept so far, ranked by (fits the traffic classes, priorities,
/// compressed rules), and the orders that seed the next target.
struct Best {
    /// 0 when the plan fits the traffic-class budget (or there is none).
    misfit: u8,
    priorities: u32,
    rules: u64,
    plan: Tagging,
    /// The orders with the fewest priorities seen, truncated to them.
    seed_orders: (u32, order::OrderPlan),
    /// The fewest priorities of any plan seen, fitting or not.
    fewest: u32,
    /// How `plan` was fitted to the traffic classes, where keys were
    /// forced up to fit them (`None`: it fitted as found, or misfits).
    fitted: Option<fit::ClassFit>,
    /// The orders `plan` was walked from as found, where it was.
    orders: Option<order::OrderPlan>,
}

/// The search's shared setting: the stage's context and the algorithm as
/// the plans name it.
struct Driver<'a, 'c> {
    cx: &'a Context<'c>,
    algo: Algo,
}

/// `search`: see [`Algo::Search`].
pub(in crate::tagging) fn plan(cx: &Context<'_>, p: &SearchParams) -> Result<Tagging> {
    plan_from(cx, p, None)
}

/// [`plan`], with `start`'s orders among the starts (after greedy's,
/// before the constructions): where it needs the fewest priorities, the
/// local search starts from it, and where its orders reach a target but
/// not the traffic classes, the class-held search does (`exact`'s plan,
/// found without the class limit).
pub(in crate::tagging) fn plan_from(
    cx: &Context<'_>,
    p: &SearchParams,
    start: Option<&Tagging>,
) -> Result<Tagging> {
    plan_given(cx, p, start, None)
}

/// [`plan_from`], with greedy's plan (`greedy:restarts=1,seed=0`, checked)
/// given where the caller has it (`auto` ran it just before).
pub(in crate::tagging) fn plan_given(
    cx: &Context<'_>,
    p: &SearchParams,
    start: Option<&Tagging>,
    greedy: Option<Tagging>,
) -> Result<Tagging> {
    let topo = cx.topo;
    let (d, opts) = Driver::start(cx, p);
    let greedy = match greedy {
        Some(g) => g,
        None => checked(greedy::plan(cx, 1, 0)?)?,
    };
    let greedy_misfit = d.misfit(&greedy)?;
    // Kept for the fallback below (a small copy where it is needed: the
    // traffic classes are only limited where a plan can misfit them).
    let greedy_copy = (greedy_misfit > 0).then(|| greedy.clone());
    let lb = greedy.lower_bound;
    let levels = (greedy.priorities as usize).max(1);
    let mut plans = vec![order::OrderPlan::from_keys(
        topo.channel_count(),
        &greedy.keys,
        greedy.priorities,
    )];
    if let Some(t) = start {
        plans.push(order::OrderPlan::from_keys(
            topo.channel_count(),
            &t.keys,
            t.priorities,
        ));
    }
    for (_, rank) in order::rankings(topo) {
        plans.push(order::OrderPlan::mountain(topo, &rank, levels));
        plans.push(order::OrderPlan::alternating(topo, &rank, levels));
    }
    // The orders with the fewest priorities seed the local search; the
    // plan kept is the best by (fits, priorities, compressed rules),
    // greedy's own first so that ties keep it.
    let mut best = Best {
        misfit: greedy_misfit,
        priorities: greedy.priorities,
        rules: greedy.rule_count(topo),
        seed_orders: (u32::MAX, plans[0].clone()),
        fewest: greedy.priorities,
        fitted: None,
        orders: None,
        plan: greedy,
    };
    for plan in &plans {
        d.consider(plan, &mut best)?;
    }
    let effort = d.descend(&opts, &mut best, lb)?;
    if let Some(g) = greedy_copy {
        d.greedy_within_classes(g, &mut best)?;
    }
    d.keep(best, lb, effort)
}

/// The local search from `start`'s orders alone, lowering the plan they
/// give target by target while each is reached (no greedy plan, no
/// constructions: the plan found stays near `start`, so an update that
/// starts from the installed plan's orders changes few of its decisions).
/// Ranked and held to the traffic classes as [`plan`]'s targets are;
/// `lb` is a lower bound on the priorities (no target goes below it).
pub(in crate::tagging) fn plan_near(
    cx: &Context<'_>,
    p: &SearchParams,
    start: order::OrderPlan,
    lb: u32,
) -> Result<Tagging> {
    let (d, opts) = Driver::start(cx, p);
    let orders = start.pos.len() as u32;
    let t = d.tagged(&start)?;
    let misfit = d.misfit(&t)?;
    let mut best = Best {
        misfit,
        // Orders that reach their own count (or the lower bound) but miss
        // the traffic classes rank one above, so that the first target is
        // that count, held to the classes (else, at the bound, nothing
        // would run, and above it the search would go straight below).
        priorities: t.priorities + u32::from(misfit > 0 && t.priorities <= orders.max(lb)),
        rules: t.rule_count(cx.topo),
        seed_orders: (t.priorities, start.truncated(t.priorities as usize)),
        fewest: t.priorities,
        fitted: None,
        orders: Some(start.truncated(t.priorities as usize)),
        plan: t,
    };
    let mut effort = d.descend(&opts, &mut best, lb)?;
    effort.pulled = d.pull_back(&mut best, &start)?;
    d.keep(best, lb, effort)
}

/// Tries of [`Driver::pull_back`], each with half the moves of the last.
const PULL_TRIES: usize = 6;

/// Whether a member that stalled `best` paths short of the target, of
/// `paths`, after `spent` evaluations, starts again from the target's
/// start orders with a new seed: when it came close (at most one path in
/// twenty left) and the budget left holds at least four more such
/// searches. On small networks with long paths the searches stall a few
/// paths short, each seed somewhere else, and one in 20-40 reaches the
/// target (Jellyfish 70/9 r=5 seed 4 `shortest`: 9-14 of 4,706 paths
/// left after 2-8x10^7 evaluations); where the target is out of reach
/// they stall far from it (fat-tree k=4 `kbounce:2`: 38,469 of 48,704),
/// and on large networks a search spends most of the budget before it
/// stalls, so neither restarts. The same start orders with a new seed
/// did better than random start orders, alone or every other restart
/// (measured on the two networks of docs/priorities.md's table).
fn restartable(best: u64, paths: usize, spent: u64, left: u64) -> bool {
    best.saturating_mul(20) <= paths as u64 && spent.saturating_mul(4) <= left
}

/// Whether a member with `best` of `paths` paths still past the target
/// after `spent` evaluations is given up: more than one path in twenty
/// after two evaluations per path (at least [`super::PATIENCE`]). Where
/// the local search reaches a target it is far closer by then (Jellyfish
/// 300/64 r=12 seeds 1-3 `shortest`, target 2: 0.14% of 321k paths after
/// 2x10^7 evaluations, 0 by 3-4x10^8); Jellyfish 2000/64 r=12 had 10.6% of
/// 17.3M paths left after 2x10^7 and 9% after 2.7x10^8, where the stall
/// rule ended it (12 s of `auto`'s 21 s); Jellyfish 500, which never
/// reaches 2, levels off at about 2%, and is left to the stall rule.
fn hopeless(best: u64, paths: usize, spent: u64) -> bool {
    let paths = paths as u64;
    spent >= super::PATIENCE.max(paths.saturating_mul(2)) && best.saturating_mul(20) > paths
}

/// The local search's state for the whole ELP: channels, offsets,
/// occurrences, cached tags, weights and slots, about 16 bytes per
/// channel of every path (the count is known beforehand and bounds the
/// maximal ones); the symmetric search's own tags, weights and slots (it
/// shares the rest) add about 4 more, counted as 8 (as when it held a
/// copy of its paths): the estimate errs high, and a budget turns the
/// local search down early rather than late (Jellyfish 2000 `shortest`,
/// 17.3M paths of up to 6 channels: 2.5 GB, against a 0.95 GB peak).
fn state_bytes(opts: &Options, counts: &crate::elp::ElpCounts) -> u64 {
    let per_channel = if opts.p.symmetric { 24 } else { 16 };
    u64::try_from(counts.paths)
        .unwrap_or(u64::MAX)
        .saturating_mul(per_channel * (counts.longest as u64 + 1))
}

impl<'a, 'c> Driver<'a, 'c> {
    /// The driver of `search` with `p`, and its options (the deadline
    /// counts from now).
    fn start(cx: &'a Context<'c>, p: &SearchParams) -> (Self, Options) {
        let d = Driver {
            cx,
            algo: Algo::Search(*p),
        };
        let opts = Options {
            p: *p,
            deadline: p
                .time_ms
                .map(|ms| std::time::Instant::now() + std::time::Duration::from_millis(ms)),
        };
        (d, opts)
    }
}

impl Driver<'_, '_> {
    /// The local search below `best`, down to `lb`, where it is above and
    /// its state fits the memory budget; what it spent (with why it did
    /// not run, if it did not).
    fn descend(&self, opts: &Options, best: &mut Best, lb: u32) -> Result<Effort> {
        let mut effort = Effort::default();
        let counts = self.cx.elp.counts(self.cx.topo);
        let state = state_bytes(opts, &counts);
        effort.skipped = self.skip_reason(opts, best, lb, (counts.paths, state));
        if best.priorities > lb && effort.skipped.is_none() {
            self.lower(opts, best, &mut effort, lb, state)?;
        }
        Ok(effort)
    }

    /// 1 when `t` needs more traffic classes at some switch than the
    /// budget allows: a plan no switch can install is no answer.
    fn misfit(&self, t: &Tagging) -> Result<u8> {
        Ok(match self.cx.max_tcs {
            None => 0,
            Some(n) => u8::from(
                !traffic::classify(self.cx.topo, &t.keys)?
                    .over(n as usize)
                    .is_empty(),
            ),
        })
    }

    /// Greedy's plan `g`, over the traffic-class budget, fitted to it as
    /// `greedy` is ([`greedy::fitted`]), kept where it beats `best`:
    /// without it, a search whose plans all miss the budget could end
    /// above greedy's (Jellyfish 60/8 r=4 seed 3 `shortest`: 4 priorities,
    /// where greedy fits 7 classes with 3). Only run where the best plan
    /// is above greedy's own count, since each fitting round walks the
    /// whole ELP.
    fn greedy_within_classes(&self, g: Tagging, best: &mut Best) -> Result<()> {
        let Some(n) = self.cx.max_tcs else {
            return Ok(());
        };
        if best.misfit == 0 && best.priorities <= g.priorities {
            return Ok(());
        }
        let fitted = greedy::fitted(self.cx, (1, 0), g, n, &Ok)?;
        if let Ok((t, info)) = fitted {
            let r = t.rule_count(self.cx.topo);
            if (0, t.priorities, r) < (best.misfit, best.priorities, best.rules) {
                (best.misfit, best.priorities, best.rules) = (0, t.priorities, r);
                best.plan = t;
                best.fitted = Some(info);
                best.orders = None;
            }
        }
        Ok(())
    }

    /// The ELP tagged by the plan of orders `plan`, checked.
    fn tagged(&self, plan: &order::OrderPlan) -> Result<Tagging> {
        let (topo, elp, budget) = (self.cx.topo, self.cx.elp, self.cx.budget);
        finish(
            topo,
            self.algo,
            self.cx.cycle,
            plan.walk(topo, elp, budget)?,
            budget,
        )
    }

    /// The plan of orders `plan`, kept where it beats `best`; its orders
    /// seed the next target where they need the fewest priorities yet.
    fn consider(&self, plan: &order::OrderPlan, best: &mut Best) -> Result<()> {
        self.consider_tagged(plan, self.tagged(plan)?, best)
    }

    /// [`Driver::consider`] of `t`, the ELP as `plan` tags it.
    fn consider_tagged(&self, plan: &order::OrderPlan, t: Tagging, best: &mut Best) -> Result<()> {
        let topo = self.cx.topo;
        if t.priorities < best.seed_orders.0 {
            best.seed_orders = (t.priorities, plan.truncated(t.priorities as usize));
        }
        best.fewest = best.fewest.min(t.priorities);
        if t.priorities <= MAX_TAG && (best.misfit, best.priorities) >= (0, t.priorities) {
            let m = self.misfit(&t)?;
            if (m, t.priorities) <= (best.misfit, best.priorities) {
                // Compressed rules plus ingress maps: the tie-breaker at
                // equal priorities.
                let r = t.rule_count(topo);
                if (m, t.priorities, r) < (best.misfit, best.priorities, best.rules) {
                    (best.misfit, best.priorities, best.rules) = (m, t.priorities, r);
                    best.orders = Some(plan.truncated(t.priorities as usize));
                    best.plan = t;
                    best.fitted = None;
                }
            }
        }
        Ok(())
    }

    /// Why the local search does not run although the plan is above the
    /// bound, if it does not. It runs where its state fits the memory
    /// budget, or up to `paths=N` ELPs when that is given. Without a
    /// budget, the machine's default one decides: an unlimited run still
    /// cannot hold more than the machine has (fat-tree k=8 `kbounce:2`:
    /// 1.9x10^9 paths).
    fn skip_reason(
        &self,
        opts: &Options,
        best: &Best,
        lb: u32,
        (paths, state): (u128, u64),
    ) -> Option<String> {
        let room = self
            .cx
            .budget
            .left()
            .or_else(crate::budget::machine_default)
            .unwrap_or(FALLBACK_ROOM);
        if best.priorities <= lb {
            None
        } else if opts.p.budget == 0 {
            Some("the budget is 0".into())
        } else if let Some(max) = opts.p.max_paths.filter(|&m| paths > m as u128) {
            Some(format!(
                "the ELP's {paths} paths pass paths={max} (raise search:paths=N)"
            ))
        } else if opts.p.max_paths.is_none() && state > room {
            Some(format!(
                "its state for the ELP's {paths} paths, about {}, does not fit the {} left of the memory budget (--memory-budget raises it)",
                crate::budget::human(state),
                crate::budget::human(room)
            ))
        } else {
            None
        }
    }

    /// Targets one below the best plan, down to the lower bound, while
    /// each is reached and work is left.
    fn lower(
        &self,
        opts: &Options,
        best: &mut Best,
        effort: &mut Effort,
        lb: u32,
        state: u64,
    ) -> Result<()> {
        let (topo, elp) = (self.cx.topo, self.cx.elp);
        self.cx.budget.check("tagging", state)?;
        let paths = crate::elp::enumerate::maximal_channel_paths(
            topo,
            elp,
            opts.p.max_paths.unwrap_or(u64::MAX),
        )?;
        // A path of L links carries at most L tags: it can never pass a
        // target of L or more.
        let floor = lb.max(1) as usize;
        let paths = paths.retain(|p| p.len() > floor);
        // The symmetric search needs one of each path and its reverse: a
        // symmetric plan fits a path exactly when it fits the reverse.
        let halved = if opts.p.symmetric {
            one_of_each_reversal(&paths)
        } else {
            Halved::default()
        };
        let mut left = opts.p.budget;
        let mut target = best.priorities - 1;
        while target >= lb.max(1) && left > 0 {
            // Greedy's orders (or the last target's) start it: measured
            // against starting from the plan with the fewest violated
            // paths (the alternating plans), they left 4 paths instead
            // of 100 on Jellyfish 300/64 seed 1 and reached 2 on seed 2
            // where the other stalled at 69.
            let start = best.seed_orders.1.truncated(target as usize);
            let before = left;
            let Some(pos) = self.portfolio(
                opts,
                (&paths, &halved),
                &start.pos,
                target,
                &mut left,
                effort,
            ) else {
                break;
            };
            let reached_with = before - left;
            let mut held = |plan: &order::OrderPlan, n: u32| {
                let work = (&mut left, reached_with);
                self.within_classes(opts, &paths, plan, (target, n), work, effort)
            };
            if !self.accept(order::OrderPlan { pos }, best, target, &mut held)? {
                break;
            }
            target = best.priorities - 1;
        }
        Ok(())
    }

    /// One target's portfolio: with `symmetric`, two searches side by
    /// side, one per core, a slice of work each per round: the
    /// reversal-symmetric one (on one of each path and its reverse, with
    /// half the order variables) and the unrestricted one, which reaches
    /// plans the symmetric space lacks. Each one's moves depend on its own
    /// seed and work alone, and the rounds are checked in member order, so
    /// the winner (the first to reach the target, the symmetric one on a
    /// tie) depends on the seed and the budget, not on the thread count.
    /// Measured on Jellyfish 300 and 350/64 r=12 (docs/priorities.md): the
    /// pair reached 2 in 8.6-21 s where the unrestricted search alone took
    /// 16-25 s, and left fewer paths at 350 in half the time.
    ///
    /// Returns the winner's orders, or `None` (with `effort` saying why)
    /// when no member reached the target.
    fn portfolio(
        &self,
        opts: &Options,
        (paths, halved): (&ChannelPaths, &Halved),
        start: &[Vec<u64>],
        target: u32,
        left: &mut u64,
        effort: &mut Effort,
    ) -> Option<Vec<Vec<u64>>> {
        let mix = crate::seed::mix(opts.p.seed, target as u64);
        let n = self.cx.topo.channel_count();
        let members = 1 + usize::from(opts.p.symmetric);
        // Where each channel occurs (the symmetric member's kept paths
        // first): built once, lent to every member and restart.
        let occ = Occurrences::build_keeping(paths, n, opts.p.symmetric.then_some(halved));
        // Member `i`'s `k`-th search (k = 0 the first; its seeds are the
        // ones the portfolio used before restarts existed).
        let fresh = |i: usize, k: u64| {
            if opts.p.symmetric && i == 0 {
                let seed = crate::seed::mix(mix, 1 + 2 * k);
                LocalSearch::new_symmetric((paths, halved), &occ, n, start, target, seed)
            } else {
                let seed = if k == 0 {
                    mix
                } else {
                    crate::seed::mix(mix, 2 * k)
                };
                LocalSearch::with(
                    paths,
                    std::borrow::Cow::Borrowed(&occ),
                    n,
                    start,
                    target,
                    seed,
                )
            }
        };
        let mut portfolio: Vec<LocalSearch<'_>> = (0..members).map(|i| fresh(i, 0)).collect();
        // Per member: searches started, and work spent by the current one.
        let mut tries = vec![0u64; members];
        let mut since = vec![0u64; members];
        let mut reached = None;
        let mut timed_out = false;
        let mut stalled = vec![false; portfolio.len()];
        while *left > 0 && stalled.contains(&false) && reached.is_none() && !timed_out {
            let outs = self.round(opts, &mut portfolio, &stalled, target, *left);
            for (i, out) in outs.into_iter().enumerate() {
                let Some(out) = out else { continue };
                effort.steps += out.steps;
                effort.evaluations += out.work;
                stalled[i] = out.stalled;
                since[i] += out.work;
                *left = left.saturating_sub(out.work);
                if out.reached && reached.is_none() {
                    reached = Some(i);
                }
                timed_out |= out.timed_out;
            }
            if reached.is_none() && !timed_out {
                for i in 0..members {
                    let ls = &portfolio[i];
                    if stalled[i] && restartable(ls.best, paths.len(), since[i], *left) {
                        tries[i] += 1;
                        effort.restarts += 1;
                        portfolio[i] = fresh(i, tries[i]);
                        since[i] = 0;
                        stalled[i] = false;
                    }
                }
            }
            // A member that, at its recent rate, would need more than the
            // whole budget left is given up too (the stall rule's
            // projection): Jellyfish 2000/64 r=12 seed 1 `shortest` still
            // lost 1.76M paths of target 2 by a fiftieth every 10^8
            // evaluations or so and had spent the default budget 1.38M
            // paths short (about 30 s).
            for (i, ls) in portfolio.iter().enumerate() {
                if !stalled[i] && ls.needs().is_some_and(|n| n > *left) {
                    stalled[i] = true;
                }
            }
            // A member still far from the target after a few evaluations
            // per path is given up too.
            for (i, ls) in portfolio.iter().enumerate() {
                if !stalled[i] && hopeless(ls.best, paths.len(), since[i]) {
                    stalled[i] = true;
                }
            }
        }
        let Some(winner) = reached else {
            // The closest any search came, in paths of the whole ELP.
            effort.residue = portfolio.iter().map(|ls| ls.best).min().unwrap_or(0);
            effort.stopped_early = timed_out;
            effort.stalled = !timed_out && !stalled.contains(&false);
            return None;
        };
        Some(portfolio.swap_remove(winner).pos)
    }

    /// One round: every member not stalled runs a slice of the work left,
    /// in parallel; the last member reports progress for all.
    fn round(
        &self,
        opts: &Options,
        portfolio: &mut [LocalSearch<'_>],
        stalled: &[bool],
        target: u32,
        left: u64,
    ) -> Vec<Option<Outcome>> {
        let control = self.cx.control;
        let reporter = portfolio.len() - 1;
        let active = stalled.iter().filter(|s| !**s).count() as u64;
        let each = (left / active).clamp(1, SLICE);
        let spent = opts.p.budget - left;
        portfolio
            .par_iter_mut()
            .zip(stalled)
            .enumerate()
            .map(|(i, (ls, &done))| {
                (!done).then(|| {
                    ls.run(
                        each,
                        &|| control.expired(opts.deadline),
                        |steps, violated, now| {
                            // The members run at about the same pace: the
                            // reporter's share stands for each.
                            if i == reporter {
                                control.report(control::Progress {
                                    target,
                                    steps,
                                    violated: violated as u64,
                                    evaluations: (spent + now * active).min(opts.p.budget),
                                    budget: opts.p.budget,
                                })
                            }
                        },
                    )
                })
            })
            .collect()
    }

    /// Orders that reached `target` (after `reached_with` evaluations) but
    /// need more traffic classes than a switch has (`n` for lossless
    /// traffic), searched on from until every node's class bound fits too
    /// (see `class_bound.rs`), with part of the budget `left`; restarted
    /// with a new seed where a search stalls close, as the portfolio's
    /// members are. Returns the orders found and the ELP they tag, if any.
    fn within_classes(
        &self,
        opts: &Options,
        paths: &ChannelPaths,
        start: &order::OrderPlan,
        (target, n): (u32, u32),
        (left, reached_with): (&mut u64, u64),
        effort: &mut Effort,
    ) -> Result<Option<Tagged>> {
        let control = self.cx.control;
        // Its own seeds, apart from the portfolio's.
        let mix = crate::seed::mix(crate::seed::mix(opts.p.seed, target as u64), 0xC1A5);
        let mut tries = 0u64;
        // At most half the budget left, the rest kept for the targets
        // below, and at most ten times what reaching the target took (at
        // least the patience): where the orders came easily and the
        // classes do not, the search's time is not spent on them
        // (Jellyfish 200/32 r=12 seeds 2 and 3 `shortest` reach 2 in under
        // 10^6 evaluations, and 10^8 held to the classes did not fit them).
        let share = (*left / 2).min(reached_with.saturating_mul(10).max(super::PATIENCE));
        let keep = *left - share;
        // `left` is the least over its runs.
        let mut held = ClassHeld {
            target,
            left: u64::MAX,
            ..ClassHeld::default()
        };
        let mut found = None;
        while *left > keep {
            let mut ls = LocalSearch::within_classes(
                paths,
                self.cx.topo,
                &start.pos,
                target,
                crate::seed::mix(mix, tries),
                n,
            );
            let mut spent = 0u64;
            let mut checks = 0;
            let out = loop {
                let out = ls.run(
                    left.saturating_sub(keep).min(SLICE),
                    &|| control.expired(opts.deadline),
                    |steps, violated, now| {
                        control.report(control::Progress {
                            target,
                            steps,
                            violated: violated as u64,
                            evaluations: (opts.p.budget - *left + now).min(opts.p.budget),
                            budget: opts.p.budget,
                        })
                    },
                );
                effort.steps += out.steps;
                effort.evaluations += out.work;
                spent += out.work;
                *left = left.saturating_sub(out.work);
                if out.reached {
                    // The bound fits everywhere; the classification may
                    // still need more where its first fit strays from the
                    // orders: those nodes' bounds are held lower.
                    let plan = order::OrderPlan {
                        pos: ls.pos.clone(),
                    };
                    let t = self.tagged(&plan)?;
                    let over = traffic::classify(self.cx.topo, &t.keys)?.over(n as usize);
                    held.checks += 1;
                    if over.is_empty() {
                        found = Some((plan, t));
                        break out;
                    }
                    checks += 1;
                    if checks > MAX_CHECKS || *left <= keep {
                        break out;
                    }
                    for (v, k) in over {
                        let lower = ls.class_bound(v).saturating_sub(k as u32 - n);
                        ls.tighten(v, lower);
                    }
                    continue;
                }
                // At its recent rate it would need more than the budget it
                // has left (the portfolio's projection): Jellyfish 300/64
                // r=12 `shortest` came down from 637 classes over to about
                // 40 at a class per 10^7 evaluations or so, and stalled.
                let hopeless = ls
                    .needs()
                    .is_some_and(|need| need > left.saturating_sub(keep));
                if out.stalled || out.timed_out || hopeless || *left <= keep {
                    break out;
                }
            };
            held.left = held.left.min(ls.best);
            if found.is_some()
                || out.reached
                || out.timed_out
                || !restartable(ls.best, paths.len(), spent, left.saturating_sub(keep))
            {
                break;
            }
            tries += 1;
            effort.restarts += 1;
        }
        // Not run where no budget was left for it.
        if share > 0 {
            held.fitted = found.is_some();
            if held.fitted {
                held.left = 0;
            }
            effort.class_held = Some(held);
        }
        Ok(found)
    }

    /// Takes the orders a search found for `target` into `best`. Returns
    /// whether a lower target is worth a try.
    ///
    /// # Errors
    /// [`crate::Error::SelfCheck`] when orders that fit every maximal path need
    /// more priorities on the whole ELP (a bug).
    fn accept(
        &self,
        plan: order::OrderPlan,
        best: &mut Best,
        target: u32,
        held: &mut dyn FnMut(&order::OrderPlan, u32) -> Result<Option<Tagged>>,
    ) -> Result<bool> {
        let topo = self.cx.topo;
        let before = best.priorities;
        self.consider(&plan, best)?;
        // No plan within `target` that fits the classes yet (the best may
        // reach it without fitting, where every plan so far misfits).
        let unfit = |b: &Best| b.misfit > 0 || b.priorities > target;
        if unfit(best)
            && let Some(n) = self.cx.max_tcs
            && let Some((within, t)) = held(&plan, n)?
        {
            // The orders moved on until every node's class bound fits.
            self.consider_tagged(&within, t, best)?;
        }
        if unfit(best)
            && let Some(n) = self.cx.max_tcs
        {
            // The orders fit every path in `target` priorities but need
            // more traffic classes than a switch has: fitted by moving keys
            // up, they may still beat the best plan that fits.
            let found = self.tagged(&plan)?;
            if let Ok((t, info)) = repair(self.cx, self.algo, found, n)?
                && (0, t.priorities) < (best.misfit, best.priorities)
            {
                let r = t.rule_count(topo);
                (best.misfit, best.priorities, best.rules) = (0, t.priorities, r);
                best.plan = t;
                best.fitted = Some(info);
                best.orders = None;
            }
            if best.misfit > 0 || best.priorities >= before {
                // The search reached the target, but no plan with it fits
                // the traffic classes: lower targets would not fit better.
                return Ok(false);
            }
        }
        // Every maximal ELP fits the target, so the walk over the whole ELP
        // must agree; anything else is a bug.
        orders_fit("search", target, best.priorities)?;
        Ok(true)
    }

    /// The near plan's orders pulled toward the installed ones `start`
    /// ([`LocalSearch::pull_toward`]): kept where they tag the ELP in as
    /// many priorities and, under a class limit, fit. Only where the best
    /// plan is the one its orders give as found. Where the pulled plan
    /// misses the classes (the pull keeps each node's class bound, not the
    /// classes the keys then need), half as many moves are tried, down to
    /// one in [`PULL_TRIES`] tries. Returns the moves kept.
    fn pull_back(&self, best: &mut Best, start: &order::OrderPlan) -> Result<u64> {
        let p = best.priorities;
        let (Some(orders), 0) = (best.orders.clone(), best.misfit) else {
            return Ok(0);
        };
        let (topo, elp) = (self.cx.topo, self.cx.elp);
        let paths = crate::elp::enumerate::maximal_channel_paths(topo, elp, u64::MAX)?
            .retain(|x| x.len() > p as usize);
        let mut limit = u64::MAX;
        for _ in 0..PULL_TRIES {
            let mut ls = match self.cx.max_tcs {
                Some(n) => LocalSearch::within_classes(&paths, topo, &orders.pos, p, 0, n),
                None => LocalSearch::new(&paths, topo.channel_count(), &orders.pos, p, 0),
            };
            if ls.violated() > 0 {
                return Ok(0);
            }
            let moved = ls.pull_toward(&start.pos, limit);
            if moved == 0 {
                return Ok(0);
            }
            let plan = order::OrderPlan {
                pos: ls.pos[..p as usize].to_vec(),
            };
            let t = self.tagged(&plan)?;
            if t.priorities == p && self.misfit(&t)? == 0 {
                best.rules = t.rule_count(topo);
                best.plan = t;
                best.orders = Some(plan);
                return Ok(moved);
            }
            limit = moved / 2;
        }
        Ok(0)
    }

    /// The plan kept, with what the search did.
    fn keep(&self, best: Best, lb: u32, effort: Effort) -> Result<Tagging> {
        let topo = self.cx.topo;
        let mut t = best.plan;
        t.algo = self.algo;
        t.lower_bound = lb;
        t.effort = Some(effort);
        if let Some(info) = best.fitted {
            // Keys were forced up to fit: say how many.
            t.class_fit = Some(fit::ClassFit {
                unconstrained_priorities: info.unconstrained_priorities.min(best.fewest),
                ..info
            });
        } else if let Some(n) = self.cx.max_tcs
            && best.misfit == 0
        {
            let c = traffic::classify(topo, &t.keys)?;
            t.class_fit = Some(fit::ClassFit {
                max_tcs: n,
                tcs_max: c.max() as u32,
                unconstrained_priorities: best.fewest,
                forced_keys: 0,
                rounds: 0,
                per_node: c.per_node(topo.node_count()),
            });
        }
        Ok(t)
    }
}
