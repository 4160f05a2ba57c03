//! `exact`: the minimum number of priorities, with a proof.
//!
//! "Do P priorities suffice?" as SAT (CaDiCaL through `rustsat`), over the
//! maximal ELPs held as a trie of channel prefixes:
//!
//! - `keep[t][e]` for every transition `e = (c1, c2)` of the ELP and every
//!   priority `t` in `1..=P`: key `(c1, t, c2)` keeps tag `t` (else `t + 1`);
//! - `above[x][t]` for every trie node `x` and `t` in `1..P`: the prefix `x`
//!   carries a tag above `t` (order encoding);
//! - along a trie edge `x -> y` over `e`: the tag never falls; a prefix at
//!   tag `t < P` whose key does not keep goes above `t`; a prefix at `P`
//!   must keep;
//! - each priority's graph `{e : keep[t][e]}` acyclic, enforced lazily: a
//!   model's cycles become clauses "not all of these keep", and the solver
//!   runs again (Benders-style cuts).
//!
//! The encoding may over-estimate a prefix's tag, never under-estimate it,
//! and every reached key that keeps is an edge whether or not its prefix
//! reaches it at that tag, so a model is always a valid plan; and every
//! valid plan is a model (take its real tags). So UNSAT under P is a proof
//! that P priorities are impossible: the lower bound becomes P + 1.
//!
//! `exact` starts from `search`'s plan (an upper bound) and asks P = upper
//! bound - 1 until the solver says UNSAT (optimal, proven) or time runs out
//! (the best plan and the best proven bound are reported).

use super::engine::HOST;
use super::{Algo, Effort, Tagging};
use crate::budget::Budget;
use crate::cycle::CycleBackend;
use crate::elp::ElpSet;
use crate::elp::enumerate::{ChannelPaths, maximal_channel_paths};
use crate::error::{Error, Result};
use rustc_hash::FxHashMap;
use rustsat::solvers::{ControlSignal, Solve, SolverResult, Terminate};
use rustsat::types::{Clause, Lit, TernaryVal};
use std::time::Instant;
use tagger_generators::{ChannelId, Topology};

/// Maximal ELPs past which `exact` refuses (the trie and its clauses would
/// not fit a solver run in minutes).
pub const EXACT_MAX_PATHS: u64 = 2_000_000;

/// Lazy cuts added per priority and round, at most.
const CUTS_PER_ROUND: usize = 2_000;

/// The trie of maximal ELPs: node `i` is a prefix ending in `chan[i]`, with
/// `parent[i]` its prefix one channel shorter (`u32::MAX` at the root
/// level).
#[derive(Debug, Default)]
struct Trie {
    chan: Vec<ChannelId>,
    parent: Vec<u32>,
}

impl Trie {
    fn build(paths: &ChannelPaths) -> Self {
        let mut t = Trie::default();
        let mut child: FxHashMap<(u32, ChannelId), u32> = FxHashMap::default();
        for i in 0..paths.len() {
            let mut at = u32::MAX;
            for &c in paths.path(i) {
                at = *child.entry((at, c)).or_insert_with(|| {
                    t.chan.push(c);
                    t.parent.push(at);
                    (t.chan.len() - 1) as u32
                });
            }
        }
        t
    }
}

/// The answer to "P priorities?".
enum Answer {
    /// A plan: keep decisions per (priority, transition).
    Plan(FxHashMap<(ChannelId, ChannelId), Vec<bool>>),
    Impossible,
    TimedOut,
}

/// Solves "do `p` priorities suffice?" on the trie, with lazy cycle cuts.
/// The solver's memory is charged to `budget` as clauses are added (an
/// estimate: 64 bytes per clause and 4 per literal, doubled for what it
/// learns), so a growing cut loop stops with a budget error rather than
/// running the machine out of memory.
fn solve(
    trie: &Trie,
    p: u32,
    deadline: Option<Instant>,
    calls: &mut u64,
    budget: &Budget,
) -> Result<Answer> {
    let sat_err = |e: anyhow::Error| Error::Algo {
        algo: "exact".into(),
        reason: format!("SAT solver: {e:#}"),
    };
    let p = p as usize;
    // Transitions, numbered in first-seen order over the trie.
    let mut trans: FxHashMap<(ChannelId, ChannelId), u32> = FxHashMap::default();
    let mut edges: Vec<(ChannelId, ChannelId)> = Vec::new();
    let mut edge_of = vec![u32::MAX; trie.chan.len()];
    for (y, &c2) in trie.chan.iter().enumerate() {
        let x = trie.parent[y];
        if x == u32::MAX {
            continue;
        }
        let e = (trie.chan[x as usize], c2);
        let id = *trans.entry(e).or_insert_with(|| {
            edges.push(e);
            (edges.len() - 1) as u32
        });
        edge_of[y] = id;
    }
    let m = edges.len();
    // Variables: keep[t][e] = t * m + e; above[x][t] (t in 1..p) after.
    let keep = |t: usize, e: u32| Lit::positive((t * m + e as usize) as u32);
    let above_base = p * m;
    let above = |x: u32, t: usize| -> Lit {
        // t in 1..p (1-based "above t").
        Lit::positive((above_base + x as usize * (p - 1) + (t - 1)) as u32)
    };
    let mut s = rustsat_cadical::CaDiCaL::default();
    let held = std::cell::Cell::new(0u64);
    let add = |s: &mut rustsat_cadical::CaDiCaL, lits: &[Lit]| -> Result<()> {
        held.set(held.get() + 2 * (64 + 4 * lits.len() as u64));
        s.add_clause(lits.iter().copied().collect::<Clause>())
            .map_err(sat_err)
    };
    for (y, &e) in edge_of.iter().enumerate() {
        let x = trie.parent[y];
        if x == u32::MAX {
            // A first hop carries tag 1.
            for t in 1..p {
                add(&mut s, &[!above(y as u32, t)])?;
            }
            continue;
        }
        for t in 1..p {
            // Order encoding, and tags never fall.
            if t + 1 < p {
                add(&mut s, &[!above(y as u32, t + 1), above(y as u32, t)])?;
            }
            add(&mut s, &[!above(x, t), above(y as u32, t)])?;
            // At tag t exactly, a key that does not keep goes above t.
            let mut cl = vec![above(x, t), keep(t - 1, e), above(y as u32, t)];
            if t > 1 {
                cl.push(!above(x, t - 1));
            }
            add(&mut s, &cl)?;
        }
        // At the last priority every key must keep.
        if p > 1 {
            add(&mut s, &[!above(x, p - 1), keep(p - 1, e)])?;
        } else {
            add(&mut s, &[keep(0, e)])?;
        }
    }
    s.attach_terminator(move || {
        if deadline.is_some_and(|d| Instant::now() >= d) || super::control::stop_requested() {
            ControlSignal::Terminate
        } else {
            ControlSignal::Continue
        }
    });
    loop {
        // Cut rounds on a large ELP take seconds of their own: the limit
        // is checked between them too, not only inside the solver.
        if deadline.is_some_and(|d| Instant::now() >= d) || super::control::stop_requested() {
            return Ok(Answer::TimedOut);
        }
        budget.check("tagging", held.get())?;
        *calls += 1;
        super::control::report(super::control::Progress {
            target: p as u32,
            steps: *calls,
            violated: 0,
        });
        match s.solve().map_err(sat_err)? {
            SolverResult::Unsat => return Ok(Answer::Impossible),
            SolverResult::Interrupted => return Ok(Answer::TimedOut),
            SolverResult::Sat => {}
        }
        let mut kept = vec![vec![false; m]; p];
        for (t, row) in kept.iter_mut().enumerate() {
            for (e, k) in row.iter_mut().enumerate() {
                *k = s.lit_val(keep(t, e as u32)).map_err(sat_err)? == TernaryVal::True;
            }
        }
        let mut cuts = 0;
        for (t, row) in kept.iter().enumerate() {
            for cycle in cycles(&edges, row, CUTS_PER_ROUND) {
                let cl: Vec<Lit> = cycle.iter().map(|&e| !keep(t, e)).collect();
                add(&mut s, &cl)?;
                cuts += 1;
            }
        }
        if cuts == 0 {
            let mut plan: FxHashMap<(ChannelId, ChannelId), Vec<bool>> = FxHashMap::default();
            for (e, &pair) in edges.iter().enumerate() {
                plan.insert(pair, (0..p).map(|t| kept[t][e]).collect());
            }
            return Ok(Answer::Plan(plan));
        }
    }
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

/// `exact`: see the module docs. `search` runs first for the upper bound.
pub(super) fn exact_plan(
    topo: &Topology,
    elp: &ElpSet,
    algo: Algo,
    cycle: CycleBackend,
    budget: &Budget,
    timeout_ms: Option<u64>,
) -> Result<Tagging> {
    let start = Instant::now();
    let deadline = timeout_ms.map(|ms| start + std::time::Duration::from_millis(ms));
    let mut best = super::tag_within(
        topo,
        elp,
        Algo::Search {
            budget: super::SEARCH_BUDGET,
            seed: 0,
            time_ms: timeout_ms,
            max_paths: super::SEARCH_MAX_PATHS,
        },
        cycle,
        budget,
    )?;
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
        budget.check(
            "tagging",
            (counts.paths as u64).saturating_mul(64 * (counts.longest as u64 + 1)),
        )?;
        let paths = maximal_channel_paths(topo, elp, EXACT_MAX_PATHS)?;
        let trie = Trie::build(&paths);
        while best.priorities > lb {
            let p = best.priorities - 1;
            match solve(&trie, p, deadline, &mut effort.steps, budget)? {
                Answer::Impossible => lb = p + 1,
                Answer::TimedOut => {
                    effort.stopped_early = true;
                    break;
                }
                Answer::Plan(plan) => {
                    let walk = super::engine::walk(
                        topo,
                        elp,
                        None,
                        &mut super::engine::Independent(|c1: ChannelId, t: u32, c2: ChannelId| {
                            debug_assert!(c1 != HOST);
                            let kept = plan
                                .get(&(c1, c2))
                                .and_then(|k| k.get(t as usize - 1))
                                .copied()
                                .unwrap_or(false);
                            Ok(if kept { t } else { t + 1 })
                        }),
                        budget,
                    )?;
                    let t = super::finish(topo, algo, cycle, walk);
                    if t.priorities > p {
                        return Err(Error::SelfCheck {
                            stage: "tagging",
                            reason: format!(
                                "exact: the solver's {p}-priority plan needs {} on the ELP",
                                t.priorities
                            ),
                        });
                    }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Every reported cycle is a closed walk of enabled edges, the cycles
    /// are distinct, and the graph left after removing one edge of each is
    /// acyclic (checked by the Kahn oracle).
    #[test]
    fn cycles_are_real_and_cover_the_graph() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        for _ in 0..200 {
            let n = rng.random_range(2..12u32);
            let m = rng.random_range(1..30usize);
            let mut edges: Vec<(u32, u32)> = (0..m)
                .map(|_| (rng.random_range(0..n), rng.random_range(0..n)))
                .filter(|(a, b)| a != b)
                .collect();
            edges.sort_unstable();
            edges.dedup();
            let on: Vec<bool> = edges.iter().map(|_| rng.random_ratio(3, 4)).collect();
            let found = cycles(&edges, &on, usize::MAX);
            let enabled: Vec<(u32, u32)> = edges
                .iter()
                .zip(&on)
                .filter(|(_, o)| **o)
                .map(|(e, _)| *e)
                .collect();
            assert_eq!(
                found.is_empty(),
                !crate::tagging::has_cycle(enabled.clone()),
                "{enabled:?}"
            );
            let mut cut = on.clone();
            for c in &found {
                for (i, &e) in c.iter().enumerate() {
                    assert!(on[e as usize]);
                    let next = c[(i + 1) % c.len()];
                    assert_eq!(edges[e as usize].1, edges[next as usize].0, "{c:?}");
                }
                cut[*c.last().unwrap() as usize] = false;
            }
            let left: Vec<(u32, u32)> = edges
                .iter()
                .zip(&cut)
                .filter(|(_, o)| **o)
                .map(|(e, _)| *e)
                .collect();
            assert!(!crate::tagging::has_cycle(left));
        }
    }

    /// One priority on a triangle of transitions is impossible; two are
    /// enough.
    #[test]
    fn the_solver_proves_and_finds() {
        let paths = ChannelPaths {
            channels: vec![0, 1, 2, 1, 2, 0, 2, 0, 1],
            offsets: vec![0, 3, 6, 9],
        };
        let trie = Trie::build(&paths);
        let mut calls = 0;
        assert!(matches!(
            solve(&trie, 1, None, &mut calls, &Budget::unlimited()).unwrap(),
            Answer::Impossible
        ));
        let Answer::Plan(plan) = solve(&trie, 2, None, &mut calls, &Budget::unlimited()).unwrap()
        else {
            panic!("two priorities fit a triangle");
        };
        // Replay each path through the plan: it stays within 2.
        for i in 0..paths.len() {
            let mut t = 1usize;
            for w in paths.path(i).windows(2) {
                if !plan[&(w[0], w[1])][t - 1] {
                    t += 1;
                }
            }
            assert!(t <= 2);
        }
    }
}
