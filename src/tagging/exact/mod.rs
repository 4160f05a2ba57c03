//! `exact`: the minimum number of priorities, with a proof.
//!
//! "Do P priorities suffice?" as SAT (BatSat, or CaDiCaL with the `cadical`
//! feature: see `tagging/exact/sat.rs`), over the
//! maximal ELPs held as a trie of channel prefixes:
//!
//! - `keep[t][e]` for every transition `e = (c1, c2)` of the ELP and every
//!   priority `t` in `1..=P`: key `(c1, t, c2)` keeps tag `t` (else `t + 1`);
//! - `above[x][t]` for every trie node `x` and `t` in `1..P`: the prefix `x`
//!   carries a tag above `t` (order encoding);
//! - along a trie edge `x -> y` over `e`: the tag never falls; a prefix at
//!   tag `t < P` whose key does not keep goes above `t`; a prefix at `P`
//!   must keep;
//! - each priority's graph `{e : keep[t][e]}` acyclic. With BatSat this is
//!   a theory inside the search (`tagging/exact/acyclic.rs`): a cycle is a
//!   conflict the moment its last edge is assigned, and the solver learns
//!   from it and goes on. CaDiCaL takes no theory here, so there it is
//!   enforced lazily: a model's cycles become clauses "not all of these
//!   keep", and the solver runs again (Benders-style cuts).
//!
//! The encoding may over-estimate a prefix's tag, never under-estimate it,
//! and every reached key that keeps is an edge whether or not its prefix
//! reaches it at that tag, so a model is always a valid plan; and every
//! valid plan is a model (take its real tags). So UNSAT under P is a proof
//! that P priorities are impossible: the lower bound becomes P + 1.
//!
//! Only some of the paths are encoded (counterexample-guided, as in
//! CEGAR): the instance starts with the paths the best plan so far cannot
//! fit in P; each model becomes an order plan (topological orders of its
//! kept transitions that follow the previous plan wherever they leave a
//! choice), which is walked over every maximal path; the paths it cannot
//! fit join the instance, and the solver runs again. A model that fits
//! every path is a P-priority plan. UNSAT on a subset is a proof for the
//! whole ELP, since any plan for the ELP is a plan for each subset of its
//! paths; the subset's size is reported (`proof_paths`). On fat-tree k=4
//! `kbounce:3`, 3,981 of the 668,652 paths the search's plan could not
//! fit in 3 already prove 3 impossible.
//!
//! `exact` starts from `search`'s plan (an upper bound) and asks P = upper
//! bound - 1 until the solver says UNSAT (optimal, proven) or time runs out
//! (the best plan and the best proven bound are reported).
//!
//! The in-solver theory took the solver's part of the proofs on Clos
//! fabrics from seconds to fractions of a second (leaf-spine 8x4
//! `kbounce:3`: 13.3 s of cut rounds, 9 solver calls, to 0.31 s in one
//! call). The weak point stays Jellyfish: there the cycles, not the paths,
//! decide, and on 250 switches and up the solver neither finds the
//! 2-priority plans the local search finds nor refutes 2 within minutes.

pub(crate) mod acyclic;
pub(crate) mod sat;

use super::SearchParams;
use super::engine::HOST;
use super::order::OrderPlan;
use super::{Algo, Effort, Tagging};
use crate::budget::Budget;
use crate::elp::enumerate::{ChannelPaths, maximal_channel_paths};
use crate::error::{Error, Result};
use rustc_hash::FxHashMap;
use sat::{Lit, Outcome, Sat};
use std::time::Instant;
use tagger_generators::ChannelId;

/// ELP paths up to which `exact`'s first step, `search`, runs its local
/// search for an upper bound. Past it the proof does the work: on fat-tree
/// k=6 `kbounce:2` (26M paths) a local search first took the run from
/// 42-46 s and 5.5 GB to 126 s and 6.6 GB for the same answer.
const UPPER_BOUND_PATHS: u64 = 5_000_000;

/// ELP paths past which `exact` refuses: its maximal paths are held in
/// memory, to check each model's plan against.
pub const EXACT_MAX_PATHS: u64 = 30_000_000;

/// Lazy cuts added per priority and round, at most.
const CUTS_PER_ROUND: usize = 2_000;

/// Paths added to the encoding per round at most: the violated paths of
/// the last model, spread evenly over them.
const ADD_PER_ROUND: usize = 4_000;

/// "Do `p` priorities suffice?" for the paths added so far, as one
/// incremental SAT instance: paths join as a trie of channel prefixes
/// (variables and clauses are created as nodes and transitions first
/// appear), and cycle cuts stay valid as the set grows, since they only
/// speak of keep variables.
struct Encoding {
    p: usize,
    solver: Sat,
    trans: FxHashMap<(ChannelId, ChannelId), u32>,
    edges: Vec<(ChannelId, ChannelId)>,
    /// `keep(t, e)` is variable `keep_base[e] + t`, `t` in `0..p`.
    keep_base: Vec<u32>,
    /// Whether the solver keeps each priority's graph acyclic inside its
    /// search (BatSat); else (CaDiCaL) each model's cycles become clauses
    /// and the solver runs again.
    in_solver: bool,
    /// Trie nodes by (parent, channel); `above(x, t)` is variable
    /// `above_base[x] + t - 1`, `t` in `1..p`.
    child: FxHashMap<(u32, ChannelId), u32>,
    above_base: Vec<u32>,
    next_var: u32,
    /// Estimated solver bytes (64 per clause and 4 per literal, doubled
    /// for what it learns).
    held: u64,
    /// Paths added.
    paths: u64,
    /// New transitions' keep variables start (as the solver's default
    /// phase) at what this plan decides: an acyclic start, so the solver
    /// moves away from it only where the paths force it.
    reference: Option<OrderPlan>,
}

impl Encoding {
    fn new(p: u32) -> Self {
        let mut solver = Sat::new();
        let in_solver = solver.keep_acyclic();
        Encoding {
            in_solver,
            p: p as usize,
            solver,
            trans: FxHashMap::default(),
            edges: Vec::new(),
            keep_base: Vec::new(),
            child: FxHashMap::default(),
            above_base: Vec::new(),
            next_var: 0,
            held: 0,
            paths: 0,
            reference: None,
        }
    }

    fn keep(&self, t: usize, e: u32) -> Lit {
        Lit::positive(self.keep_base[e as usize] + t as u32)
    }

    fn above(&self, x: u32, t: usize) -> Lit {
        Lit::positive(self.above_base[x as usize] + t as u32 - 1)
    }

    fn add(&mut self, lits: &[Lit]) -> Result<()> {
        self.held += 2 * (64 + 4 * lits.len() as u64);
        self.solver.add_clause(lits)
    }

    /// Adds one path: its new trie nodes and transitions, with their
    /// clauses.
    ///
    /// - A first hop carries tag 1.
    /// - Along a trie edge `x -> y` over `e`: the tag never falls; a prefix
    ///   at tag `t < P` whose key does not keep goes above `t`; a prefix at
    ///   `P` must keep.
    fn add_path(&mut self, path: &[ChannelId]) -> Result<()> {
        let p = self.p;
        let mut at = u32::MAX;
        let mut prev = HOST;
        for &c in path {
            let before = std::mem::replace(&mut prev, c);
            if let Some(&y) = self.child.get(&(at, c)) {
                at = y;
                continue;
            }
            let y = self.above_base.len() as u32;
            self.child.insert((at, c), y);
            self.above_base.push(self.next_var);
            self.next_var += p as u32 - 1;
            let x = at;
            at = y;
            if x == u32::MAX {
                for t in 1..p {
                    self.add(&[!self.above(y, t)])?;
                }
                continue;
            }
            let pair = (before, c);
            let e = match self.trans.get(&pair) {
                Some(&e) => e,
                None => {
                    let e = self.edges.len() as u32;
                    self.trans.insert(pair, e);
                    self.edges.push(pair);
                    self.keep_base.push(self.next_var);
                    self.next_var += p as u32;
                    for t in 0..p {
                        let k = self.keep(t, e);
                        self.solver.acyclic_edge(k, t as u32, before, c);
                    }
                    if let Some(r) = &self.reference {
                        for t in 0..p {
                            let k = self.keep(t, e);
                            let lit = if r.next_tag(before, t as u32 + 1, c) == t as u32 + 1 {
                                k
                            } else {
                                !k
                            };
                            self.solver.phase(lit)?;
                        }
                    }
                    e
                }
            };
            for t in 1..p {
                // Order encoding, and tags never fall.
                if t + 1 < p {
                    self.add(&[!self.above(y, t + 1), self.above(y, t)])?;
                }
                self.add(&[!self.above(x, t), self.above(y, t)])?;
                // At tag t exactly, a key that does not keep goes above t.
                let mut cl = vec![self.above(x, t), self.keep(t - 1, e), self.above(y, t)];
                if t > 1 {
                    cl.push(!self.above(x, t - 1));
                }
                self.add(&cl)?;
            }
            // At the last priority every key must keep.
            if p > 1 {
                self.add(&[!self.above(x, p - 1), self.keep(p - 1, e)])?;
            } else {
                self.add(&[self.keep(0, e)])?;
            }
        }
        self.paths += 1;
        Ok(())
    }

    /// Solves, adding cycle cuts until a model's priority graphs are all
    /// acyclic. A plan comes back as the kept transitions per priority.
    /// With `work`, the solver stops once its acyclicity theory has taken
    /// in that many edges in all (a measure of effort that, unlike time,
    /// gives the same answer on every machine): [`Answer::OutOfWork`].
    fn solve(
        &mut self,
        deadline: Option<Instant>,
        work: Option<u64>,
        control: &super::control::Control,
        calls: &mut u64,
        budget: &Budget,
    ) -> Result<Answer> {
        let p = self.p;
        let m = self.edges.len();
        let counter = self.solver.acyclic_work().filter(|_| work.is_some());
        let out_of_work = || {
            counter
                .as_ref()
                .zip(work)
                .is_some_and(|(c, w)| c.get() >= w)
        };
        loop {
            // Cut rounds on a large ELP take seconds of their own: the
            // limit is checked between them too, not only inside the
            // solver.
            if control.expired(deadline) {
                return Ok(Answer::TimedOut);
            }
            if out_of_work() {
                return Ok(Answer::OutOfWork);
            }
            budget.check("tagging", self.held)?;
            *calls += 1;
            let expired = control.expiry(deadline);
            let stop: Box<dyn Fn() -> bool> = match (counter.clone(), work) {
                (Some(c), Some(w)) => Box::new(move || expired() || c.get() >= w),
                _ => expired,
            };
            match self.solver.solve(stop)? {
                Outcome::Unsat => return Ok(Answer::Impossible),
                Outcome::Interrupted if out_of_work() && !control.expired(deadline) => {
                    return Ok(Answer::OutOfWork);
                }
                Outcome::Interrupted => return Ok(Answer::TimedOut),
                Outcome::Sat => {}
            }
            let mut kept = vec![vec![false; m]; p];
            for (t, row) in kept.iter_mut().enumerate() {
                for (e, k) in row.iter_mut().enumerate() {
                    *k = self.solver.value(self.keep(t, e as u32))?;
                }
            }
            let mut cuts = 0;
            for (t, row) in kept.iter().enumerate() {
                for cycle in cycles(&self.edges, row, CUTS_PER_ROUND) {
                    // The in-solver theory must not have let one through.
                    if self.in_solver {
                        return Err(Error::SelfCheck {
                            stage: "tagging",
                            reason: format!(
                                "exact: the solver's model has a cycle of {} transitions at priority {}",
                                cycle.len(),
                                t + 1
                            ),
                        });
                    }
                    let cl: Vec<Lit> = cycle.iter().map(|&e| !self.keep(t, e)).collect();
                    self.add(&cl)?;
                    cuts += 1;
                }
            }
            if cuts == 0 {
                return Ok(Answer::Plan(
                    kept.iter()
                        .map(|row| {
                            self.edges
                                .iter()
                                .zip(row)
                                .filter(|(_, k)| **k)
                                .map(|(e, _)| *e)
                                .collect()
                        })
                        .collect(),
                ));
            }
        }
    }
}

/// The answer to "P priorities?".
enum Answer {
    /// A plan: the transitions each priority keeps (each set acyclic).
    Plan(Vec<Vec<(ChannelId, ChannelId)>>),
    Impossible,
    TimedOut,
    /// The effort given to a first try ran out (see [`FIRST_TRY_WORK`]).
    OutOfWork,
}

/// Up to `max` cycles of the graph of `edges` whose `on` flag is set, each
/// as edge indices: DFS finds a cycle, one of its edges is set aside, and
/// the search goes on, so the cycles differ.
fn cycles(edges: &[(ChannelId, ChannelId)], on: &[bool], max: usize) -> Vec<Vec<u32>> {
    let mut ids: Vec<u32> = (0..edges.len() as u32)
        .filter(|&e| on[e as usize])
        .collect();
    ids.sort_by_key(|&e| edges[e as usize]);
    let mut verts: Vec<ChannelId> = ids
        .iter()
        .flat_map(|&e| [edges[e as usize].0, edges[e as usize].1])
        .collect();
    verts.sort_unstable();
    verts.dedup();
    let index = |c: ChannelId| verts.binary_search(&c).expect("vertex") as u32;
    let nv = verts.len();
    let mut start = vec![0usize; nv + 1];
    for &e in &ids {
        start[index(edges[e as usize].0) as usize + 1] += 1;
    }
    for i in 0..nv {
        start[i + 1] += start[i];
    }
    let out: Vec<(u32, u32)> = ids
        .iter()
        .map(|&e| (index(edges[e as usize].1), e))
        .collect();
    let mut removed = vec![false; edges.len()];
    let mut found = Vec::new();
    // 0 new, 1 on the stack, 2 done.
    let mut state = vec![0u8; nv];
    'outer: loop {
        state.iter_mut().for_each(|s| *s = 0);
        let mut any = false;
        for root in 0..nv {
            if state[root] != 0 {
                continue;
            }
            // Stack of (vertex, next out-edge position, edge taken into it).
            let mut stack: Vec<(u32, usize, u32)> = vec![(root as u32, start[root], u32::MAX)];
            state[root] = 1;
            while let Some(&mut (v, ref mut i, _)) = stack.last_mut() {
                if *i == start[v as usize + 1] {
                    state[v as usize] = 2;
                    stack.pop();
                    continue;
                }
                let (w, e) = out[*i];
                *i += 1;
                if removed[e as usize] {
                    continue;
                }
                match state[w as usize] {
                    0 => {
                        state[w as usize] = 1;
                        stack.push((w, start[w as usize], e));
                    }
                    1 => {
                        // A cycle: the stack from w up, then e.
                        let from = stack.iter().position(|s| s.0 == w).expect("on stack");
                        let mut cyc: Vec<u32> = stack[from + 1..].iter().map(|s| s.2).collect();
                        cyc.push(e);
                        removed[e as usize] = true;
                        found.push(cyc);
                        any = true;
                        if found.len() >= max {
                            break 'outer;
                        }
                    }
                    _ => {}
                }
            }
        }
        if !any {
            break;
        }
    }
    found
}

/// Indices of the paths whose tag passes `p` under `order`, in order.
fn violated(paths: &ChannelPaths, order: &OrderPlan, p: u32) -> Vec<u32> {
    use rayon::prelude::*;
    (0..paths.len() as u32)
        .into_par_iter()
        .filter(|&i| {
            let mut t = 1u32;
            for w in paths.path(i as usize).windows(2) {
                t = order.next_tag(w[0], t, w[1]);
                if t > p {
                    return true;
                }
            }
            false
        })
        .collect()
}

/// `exact`: see the module docs.
///
/// The upper bound comes first from greedy and the constructions (no local
/// search), and the solver gets a first try at beating it, bounded by
/// [`FIRST_TRY_WORK`]: on Clos fabrics the constructions are already
/// optimal and the proof takes a fraction of a second, where the local
/// search would spend tens of seconds failing to beat them. Only when the
/// first try settles nothing does `search`'s local search run; the solver
/// then goes on from where it stopped, with no bound but the time limit.
/// (With CaDiCaL, which takes no theory to count work by, the local search
/// runs first.)
///
/// Under a traffic-class budget the proof is the unconstrained one (the
/// fewest priorities any plan needs, a lower bound for plans within the
/// budget too); the plan returned is the better of the solver's, fitted
/// to the budget by moving keys up ([`super::fit`]), and `search`'s within
/// it, started from the solver's orders (so its class-held search starts
/// where the solver's plan reached fewer priorities than the classes
/// allow), within what is left of the time limit.
pub(super) fn plan(cx: &super::Context<'_>, timeout_ms: u64) -> Result<Tagging> {
    plan_in(
        cx,
        Algo::Exact { timeout_ms },
        Some(timeout_ms),
        Start {
            from: None,
            first_try: FIRST_TRY_WORK,
            work: 0,
        },
    )
}

/// `auto`'s last step, where `search` left its plan `from` above the lower
/// bound: the solver asks for one priority fewer, and fewer again, with
/// [`AUTO_WORK`] of work per target and no local search (`search` has
/// run), within `time_ms` if given. Under a traffic-class limit, as
/// [`plan`]: a plan the solver finds is fitted and searched from.
///
/// Returns a plan with fewer priorities than `from`, or `from` itself
/// with a higher lower bound where the solver proved one.
///
/// # Errors
/// [`Error::Algo`] when it did neither.
pub(super) fn after_search(
    cx: &super::Context<'_>,
    from: Tagging,
    time_ms: Option<u64>,
) -> Result<Tagging> {
    let (priorities, bound) = (from.priorities, from.lower_bound);
    let t = plan_in(
        cx,
        Algo::EXACT,
        time_ms,
        Start {
            from: Some(from),
            first_try: 0,
            work: AUTO_WORK,
        },
    )?;
    if t.priorities < priorities || t.lower_bound > bound {
        return Ok(t);
    }
    Err(Error::Algo {
        algo: Algo::EXACT.name(),
        reason: format!(
            "no plan with fewer than {priorities} priorities and no proof within its work"
        ),
    })
}

/// Where the solver starts and what bounds it.
struct Start {
    /// The plan to beat, with no local search (`auto`, after `search`);
    /// `None`: `search`'s constructions, and its local search once the
    /// first try runs out.
    from: Option<Tagging>,
    /// The first try's work, without `from`.
    first_try: u64,
    /// With `from`: the solver's work per target; the run ends when it is
    /// spent.
    work: u64,
}

/// Solver work `auto` gives each target of [`after_search`] (the units
/// of [`FIRST_TRY_WORK`]).
pub(super) const AUTO_WORK: u64 = 200_000_000;

/// [`plan`] as `algo`, bounded by `timeout_ms` where given and by
/// `start`.
fn plan_in(
    cx: &super::Context<'_>,
    algo: Algo,
    timeout_ms: Option<u64>,
    start: Start,
) -> Result<Tagging> {
    let Some(n) = cx.max_tcs else {
        return plan_with(cx, algo, timeout_ms, start);
    };
    let began = Instant::now();
    let from = start.from.as_ref().map(|t| t.priorities);
    let free = cx.with_max_tcs(None);
    let best = plan_with(&free, algo, timeout_ms, start)?;
    if from.is_some_and(|p| best.priorities >= p) {
        // Nothing found below `from`, which fits already.
        return Ok(best);
    }
    let (lb, effort, unconstrained) = (best.lower_bound, best.effort.clone(), best.priorities);
    let orders = best.clone();
    let mut candidates = Vec::new();
    if let Ok((t, _)) = super::repair(cx, algo, best, n)? {
        candidates.push(t);
    }
    // `search` from the solver's orders, ranked by fit first: where they
    // reach fewer priorities than any plan within the classes, its
    // class-held search starts from them (Jellyfish 50/8 r=4 seed 2
    // `shortest`: 2 priorities within 7 classes where the solver's plan,
    // moved up to fit, needs 3), within what is left of the time limit.
    let left = super::ms_left(began, timeout_ms);
    let built = super::checked(super::search::plan_from(
        cx,
        &SearchParams {
            time_ms: left,
            ..SearchParams::DEFAULT
        },
        Some(&orders),
    )?)?;
    if built.class_fit.is_some() {
        candidates.push(built);
    }
    let mut t = candidates
        .into_iter()
        .min_by_key(|t| t.priorities)
        .ok_or_else(|| Error::Algo {
            algo: algo.name(),
            reason: format!(
                "no plan found within {n} traffic classes per switch: neither the solver's plan moved up to fit nor search's constructions fit; a switch with more traffic classes, or --max-tcs none"
            ),
        })?;
    let c = super::traffic::classify(cx.topo, &t.keys)?;
    t.algo = algo;
    t.lower_bound = lb;
    // The solver's effort, and the class-held search's where it ran.
    let held = t.effort.as_ref().and_then(|e| e.class_held);
    t.effort = effort.map(|mut e| {
        e.class_held = e.class_held.or(held);
        e
    });
    t.class_fit = Some(super::fit::ClassFit {
        max_tcs: n,
        tcs_max: c.max() as u32,
        unconstrained_priorities: unconstrained,
        forced_keys: 0,
        rounds: 0,
        per_node: c.per_node(cx.topo.node_count()),
    });
    Ok(t)
}

/// [`plan`] without the traffic classes, from `start`.
fn plan_with(
    cx: &super::Context<'_>,
    algo: Algo,
    timeout_ms: Option<u64>,
    start: Start,
) -> Result<Tagging> {
    let (topo, elp, budget) = (cx.topo, cx.elp, cx.budget);
    let began = Instant::now();
    let deadline = timeout_ms.map(|ms| began + std::time::Duration::from_millis(ms));
    let upper_bound = |work: u64| -> Result<Tagging> {
        super::checked(super::search::plan(
            cx,
            &SearchParams {
                budget: work,
                time_ms: super::ms_left(began, timeout_ms),
                max_paths: Some(UPPER_BOUND_PATHS),
                ..SearchParams::DEFAULT
            },
        )?)
    };
    let Start {
        from,
        first_try,
        work: given,
    } = start;
    // Given a plan, the local search has run: the solver alone goes on.
    let alone = from.is_some();
    let mut searched = !sat::THEORY || alone;
    let mut best = match from {
        Some(t) => t,
        None => upper_bound(if searched { super::SEARCH_BUDGET } else { 0 })?,
    };
    let mut lb = best.lower_bound;
    let mut effort = Effort::default();
    if best.priorities > lb {
        let counts = elp.counts(topo);
        if counts.paths > EXACT_MAX_PATHS as u128 {
            return Err(Error::Algo {
                algo: algo.name(),
                reason: format!(
                    "the ELP has {} paths; exact solves up to {EXACT_MAX_PATHS} (use search)",
                    counts.paths
                ),
            });
        }
        // The maximal paths while they are collected: 5.6 GB peak on
        // fat-tree k=6 kbounce:2 (26M paths of at most 13 channels), where
        // this says 6.8 GB.
        budget.check(
            "tagging",
            (counts.paths as u64).saturating_mul(20 * (counts.longest as u64 + 1)),
        )?;
        // A path of lb channels or fewer never passes a target of lb or
        // more.
        let paths =
            maximal_channel_paths(topo, elp, EXACT_MAX_PATHS)?.retain(|x| x.len() > lb as usize);
        // The open target's instance, kept when the first try runs out and
        // the local search does not beat the bound.
        let mut open: Option<Target> = None;
        while best.priorities > lb {
            let p = best.priorities - 1;
            let mut target = match open.take() {
                Some(t) if t.enc.p == p as usize => t,
                _ => Target::new(topo.channel_count(), &best, p),
            };
            let work = if alone {
                Some(target.work() + given)
            } else {
                (!searched).then(|| target.work() + first_try)
            };
            let outcome = target.settle(cx, &paths, deadline, work, &mut effort, budget)?;
            match outcome {
                Answer::Impossible => {
                    lb = p + 1;
                    effort.proof_paths = target.enc.paths;
                }
                Answer::TimedOut | Answer::OutOfWork if alone => {
                    effort.stopped_early = true;
                    effort.residue = violated(&paths, &target.order, p).len() as u64;
                    break;
                }
                Answer::TimedOut => {
                    effort.stopped_early = true;
                    effort.residue = violated(&paths, &target.order, p).len() as u64;
                    break;
                }
                Answer::OutOfWork => {
                    searched = true;
                    let s = upper_bound(super::SEARCH_BUDGET)?;
                    if s.priorities < best.priorities {
                        best = s;
                    } else {
                        if s.priorities == best.priorities {
                            best = s;
                        }
                        // Same target: the solver goes on, its counterexamples
                        // now drawn from the searched plan.
                        target.rebase(topo.channel_count(), &best);
                        open = Some(target);
                    }
                }
                Answer::Plan(_) => {
                    let t = super::finish(
                        topo,
                        algo,
                        cx.cycle,
                        target.order.walk(topo, elp, budget)?,
                        budget,
                    )?;
                    super::orders_fit("exact", p, t.priorities)?;
                    best = t;
                }
            }
        }
    }
    best.algo = algo;
    best.lower_bound = lb;
    best.effort = Some(effort);
    Ok(best)
}

/// Effort of the solver's first try at beating the constructions' bound,
/// in edges its acyclicity theory takes in (about a second; the proofs of
/// the Clos rows in docs/priorities.md take 4,000-90,000).
const FIRST_TRY_WORK: u64 = 2_000_000;

/// "Do `p` priorities suffice?" under way: the instance, and the order
/// plan whose failing paths join it next.
struct Target {
    enc: Encoding,
    order: OrderPlan,
    /// Whether `order` is the plan of the solver's last model (which fits
    /// every path encoded), rather than a plan from elsewhere (which need
    /// not).
    from_model: bool,
    /// Paths encoded, by index: a plan from elsewhere may fail them again.
    added: rustc_hash::FxHashSet<u32>,
}

impl Target {
    /// A new instance for `p` priorities, starting from `best`'s plan.
    fn new(channels: usize, best: &Tagging, p: u32) -> Self {
        let mut t = Target {
            enc: Encoding::new(p),
            // Set just below, as a rebase would.
            order: OrderPlan { pos: Vec::new() },
            from_model: false,
            added: Default::default(),
        };
        t.rebase(channels, best);
        for (g, pos) in t.order.pos.iter().enumerate() {
            t.enc.solver.acyclic_hint(g as u32, pos);
        }
        t
    }

    /// Draws the next counterexamples from `best`'s plan instead (the
    /// clauses stay: they hold for every plan).
    fn rebase(&mut self, channels: usize, best: &Tagging) {
        self.order =
            OrderPlan::from_keys(channels, &best.keys, best.priorities).truncated(self.enc.p);
        self.enc.reference = Some(self.order.clone());
        self.from_model = false;
    }

    /// The theory's work so far (0 without one).
    fn work(&self) -> u64 {
        self.enc.solver.acyclic_work().map_or(0, |c| c.get())
    }

    /// Counterexample-guided: the paths the current plan cannot fit in p
    /// join the instance; each model's plan, walked over every maximal
    /// path, adds the paths it cannot fit. A model that fits them all is a
    /// p-priority plan ([`Answer::Plan`], the plan in `self.order`); UNSAT
    /// on a subset is a proof for the whole ELP (a plan for the ELP is a
    /// plan for every subset of its paths).
    fn settle(
        &mut self,
        cx: &super::Context<'_>,
        paths: &ChannelPaths,
        deadline: Option<Instant>,
        work: Option<u64>,
        effort: &mut Effort,
        budget: &Budget,
    ) -> Result<Answer> {
        let p = self.enc.p as u32;
        loop {
            let bad = violated(paths, &self.order, p);
            cx.control.report(super::control::Progress {
                target: p,
                steps: effort.steps,
                violated: bad.len() as u64,
                evaluations: 0,
                budget: 0,
            });
            if bad.is_empty() {
                return Ok(Answer::Plan(Vec::new()));
            }
            let stride = bad.len().div_ceil(ADD_PER_ROUND);
            let nodes = self.enc.above_base.len();
            for &i in bad.iter().step_by(stride) {
                if self.added.insert(i) {
                    self.enc.add_path(paths.path(i as usize))?;
                }
            }
            // A path already encoded always fits the model's plan, so
            // every round after a model grows the trie; if not, the loop
            // would spin.
            if self.from_model && self.enc.above_base.len() == nodes {
                return Err(Error::SelfCheck {
                    stage: "tagging",
                    reason: format!(
                        "exact: the plan of a {p}-priority model fails paths the model holds"
                    ),
                });
            }
            match self
                .enc
                .solve(deadline, work, cx.control, &mut effort.steps, budget)?
            {
                Answer::Plan(kept) => {
                    self.order = OrderPlan::from_edges(cx.topo.channel_count(), kept, &self.order);
                    self.enc.reference = Some(self.order.clone());
                    self.from_model = true;
                }
                other => return Ok(other),
            }
        }
    }
}

#[cfg(test)]
mod tests;
