//! `greedy` (Tagger's greedy merging): keep a packet's tag wherever the
//! dependency edge leaves that priority's graph acyclic (incremental cycle
//! detection, `crate::cycle`), else move to the next tag; with restarts, the
//! best of several key orders. Fitted to a traffic-class budget
//! ([`fitted`]), a plan is planned again round by round from the last one,
//! deciding only the keys the keys forced up newly reach ([`refit`]).

use super::fit::Forced;
use super::*;

/// Greedy: keep the tag when the edge `(c1, t) -> (c2, t)` leaves priority
/// `t`'s dependency graph acyclic, else move to `t + 1`. `order` shuffles the
/// keys within each hop (restarts).
fn greedy<D: IncrementalDag>(
    topo: &Topology,
    elp: &ElpSet,
    order: Option<u64>,
    forced: Option<&Forced>,
    budget: &Budget,
) -> Result<Walk> {
    let mut g = GreedyDecider::<D> {
        n: topo.channel_count(),
        rank: clos_rank(topo),
        dags: Vec::new(),
        forced,
        fixed: None,
    };
    engine::walk(topo, elp, order, Decider::InOrder(&mut g), budget)
}

/// Decisions of a plan by key `(in channel, tag, out channel)` (host ports'
/// first hops left out: they are never asked).
type Fixed = rustc_hash::FxHashMap<(ChannelId, u32, ChannelId), u32>;

/// On a topology with levels, the order up-down routing respects: up
/// channels by rising level, then down channels by falling level. Every
/// valley-free dependency points forward in it, so seeding each priority's
/// graph with it leaves only the bounces to reorder (on `fattree:k=32`
/// `kbounce:2`, searched insertions fell from 312k to 60k). `None` elsewhere.
fn clos_rank(topo: &Topology) -> Option<Vec<u32>> {
    if !topo.has_levels() {
        return None;
    }
    let level = |v: NodeId| topo.level(v).unwrap_or(0);
    Some(
        (0..topo.channel_count() as ChannelId)
            .map(|c| {
                let (from, to) = (level(topo.channel_src(c)), level(topo.channel_dst(c)));
                if to > from { from } else { u32::MAX - from }
            })
            .collect(),
    )
}

/// One dependency graph per priority. A key at tag `t` reads and writes only
/// graph `t`, so a hop's keys are decided per priority in parallel, each
/// priority seeing its keys in the hop's order: the same decisions as one
/// thread taking the keys in order.
struct GreedyDecider<'f, D> {
    n: usize,
    rank: Option<Vec<u32>>,
    dags: Vec<D>,
    /// Keys that move up a priority whatever the graph says (to fit the
    /// switches' traffic classes, [`super::fit`]); they add no dependency.
    forced: Option<&'f Forced>,
    /// Keys decided already ([`refit`]): they keep their decision, whose
    /// dependencies the graphs start with.
    fixed: Option<&'f Fixed>,
}

impl<D: IncrementalDag> HopDecider for GreedyDecider<'_, D> {
    fn heap_bytes(&self) -> u64 {
        self.dags.iter().map(D::heap_bytes).sum::<u64>()
            + self
                .rank
                .as_ref()
                .map_or(0, |r| crate::budget::bytes_of::<u32>(r.len()))
    }

    fn decide_hop(&mut self, keys: &[(ChannelId, u32, ChannelId)]) -> Result<Vec<u32>> {
        use rayon::prelude::*;
        let top = keys.iter().map(|k| k.1).max().unwrap_or(0) as usize;
        while self.dags.len() < top {
            let mut dag = D::with_vertices(self.n);
            if let Some(rank) = &self.rank {
                dag.hint_order(rank);
            }
            self.dags.push(dag);
        }
        let mut by_tag: Vec<Vec<usize>> = vec![Vec::new(); top];
        for (i, k) in keys.iter().enumerate() {
            by_tag[k.1 as usize - 1].push(i);
        }
        let decided: Vec<Vec<(usize, u32)>> = self.dags[..top]
            .par_iter_mut()
            .zip(by_tag.par_iter())
            .map(|(dag, idx)| {
                let decide = |free: &[usize], dag: &mut D| -> Vec<(usize, u32)> {
                    let edges: Vec<(u32, u32)> =
                        free.iter().map(|&i| (keys[i].0, keys[i].2)).collect();
                    free.iter()
                        .zip(dag.try_add_edges(&edges))
                        .map(|(&i, ok)| (i, if ok { keys[i].1 } else { keys[i].1 + 1 }))
                        .collect()
                };
                if self.forced.is_none() && self.fixed.is_none() {
                    return decide(idx, dag);
                }
                let mut out = Vec::new();
                let mut free = Vec::new();
                for &i in idx {
                    if self.forced.is_some_and(|f| f.contains(&keys[i])) {
                        out.push((i, keys[i].1 + 1));
                    } else if let Some(&t2) = self.fixed.and_then(|f| f.get(&keys[i])) {
                        out.push((i, t2));
                    } else {
                        free.push(i);
                    }
                }
                out.extend(decide(&free, dag));
                out
            })
            .collect();
        let mut out = vec![0; keys.len()];
        for (i, t2) in decided.into_iter().flatten() {
            out[i] = t2;
        }
        Ok(out)
    }
}

/// The incremental cycle-detection workload of a greedy run: every
/// `(priority, from, to)` insertion in the order greedy asks it, for replaying
/// into other backends (benches). Decisions are the same for every backend.
///
/// # Errors
/// As [`tag`].
pub fn greedy_insertions(topo: &Topology, elp: &ElpSet) -> Result<Vec<(u32, u32, u32)>> {
    let n = topo.channel_count();
    let mut dags: Vec<OrderedDag> = Vec::new();
    let mut seq = Vec::new();
    let mut record = PerKey(|c1, t, c2| {
        while dags.len() < t as usize {
            dags.push(OrderedDag::with_vertices(n));
        }
        seq.push((t, c1, c2));
        Ok(if dags[t as usize - 1].try_add_edge(c1, c2) {
            t
        } else {
            t + 1
        })
    });
    engine::walk(
        topo,
        elp,
        None,
        Decider::InOrder(&mut record),
        &Budget::unlimited(),
    )?;
    Ok(seq)
}

/// `greedy`, with `restarts` runs in parallel when above 1 (run 0 in key
/// order, the others shuffled by `seed`): the fewest priorities win, then
/// the fewest rules, then the lowest run, so the choice is independent of
/// thread timing.
///
/// # Errors
/// As [`super::tag_in`].
pub(super) fn plan(cx: &Context<'_>, restarts: u32, seed: u64) -> Result<Tagging> {
    plan_forced(cx, restarts, seed, None)
}

/// [`plan`] with `forced` keys moving up a priority whatever the graph
/// says.
pub(super) fn plan_forced(
    cx: &Context<'_>,
    restarts: u32,
    seed: u64,
    forced: Option<&Forced>,
) -> Result<Tagging> {
    let (topo, elp, cycle, budget) = (cx.topo, cx.elp, cx.cycle, cx.budget);
    let algo = Algo::Greedy { restarts, seed };
    let run = |r: u32| -> Result<Tagging> {
        let order = (r > 0).then(|| crate::seed::mix(seed, r as u64));
        let walk = match cycle {
            CycleBackend::Ordered => greedy::<OrderedDag>(topo, elp, order, forced, budget)?,
            CycleBackend::Pk => greedy::<PearceKelly>(topo, elp, order, forced, budget)?,
            CycleBackend::Petgraph => greedy::<PetgraphDag>(topo, elp, order, forced, budget)?,
            CycleBackend::Naive => greedy::<NaiveDag>(topo, elp, order, forced, budget)?,
        };
        finish(topo, algo, cycle, walk, budget)
    };
    if restarts == 1 {
        return run(0);
    }
    use rayon::prelude::*;
    let all: Vec<Tagging> = (0..restarts)
        .into_par_iter()
        .map(run)
        .collect::<Result<_>>()?;
    // Fewest priorities, then fewest rules; ties keep the lowest
    // run, so the choice is independent of thread timing.
    Ok(all
        .into_iter()
        .enumerate()
        .min_by_key(|(r, t)| (t.priorities, t.keys.len(), *r))
        .map(|(_, t)| t)
        .expect("restarts >= 1"))
}

/// Greedy's plan `t` (run with `(restarts, seed)`) fitted to `max_tcs`
/// traffic classes per switch ([`super::fit`]): each round replans only
/// what the keys it forces up reach ([`refit`]); where that gets stuck (a
/// switch whose classes differ only where the kept decisions hold them
/// apart), every round is a whole greedy replan instead, as it was before
/// [`refit`], from `t` planned again (greedy is deterministic: the same
/// plan, not held through the quick rounds). `check` sees every replan and
/// may end the fitting with an error.
///
/// # Errors
/// As [`super::tag_in`], and `check`'s.
pub(super) fn fitted(
    cx: &Context<'_>,
    (restarts, seed): (u32, u64),
    t: Tagging,
    max_tcs: u32,
    check: &dyn Fn(Tagging) -> Result<Tagging>,
) -> Result<std::result::Result<(Tagging, super::fit::ClassFit), super::fit::NoFit>> {
    let quick = super::fit::fit(cx.topo, max_tcs, t, &mut |last, f| {
        check(refit(cx, last, f)?)
    })?;
    if quick.is_ok() {
        return Ok(quick);
    }
    let first = plan_forced(cx, restarts, seed, None)?;
    super::fit::fit(cx.topo, max_tcs, first, &mut |_, f| {
        check(plan_forced(cx, restarts, seed, Some(f))?)
    })
}

/// Greedy's plan `base` planned again with `forced` keys one priority up
/// ([`super::fit`]): every other key `base` decides keeps its decision,
/// and only the keys the forced moves newly reach are decided, as greedy
/// decides them, against `base`'s dependencies (less the forced ones) and
/// the new ones kept so far.
///
/// Each repair round was a whole greedy replan before (Jellyfish 2000/64
/// r=12 `shortest` within 7 classes: 26 rounds, 5 priorities, 17.6 s of
/// tagging); replanning only what the forced keys reach keeps the rest of
/// the plan, and its classes, where they were: 11 rounds, 4 priorities,
/// about 5 s.
///
/// # Errors
/// As [`super::tag_in`]; [`Error::SelfCheck`] when `base`'s dependencies
/// have a cycle.
pub(super) fn refit(cx: &Context<'_>, base: &Tagging, forced: &Forced) -> Result<Tagging> {
    let fixed: Fixed = base
        .keys
        .iter()
        .filter_map(|k| Some(((k.in_channel?, k.tag, k.out_channel), k.next_tag)))
        .collect();
    let walk = match cx.cycle {
        CycleBackend::Ordered => refit_walk::<OrderedDag>(cx, base, forced, &fixed)?,
        CycleBackend::Pk => refit_walk::<PearceKelly>(cx, base, forced, &fixed)?,
        CycleBackend::Petgraph => refit_walk::<PetgraphDag>(cx, base, forced, &fixed)?,
        CycleBackend::Naive => refit_walk::<NaiveDag>(cx, base, forced, &fixed)?,
    };
    finish(cx.topo, base.algo, cx.cycle, walk, cx.budget)
}

fn refit_walk<D: IncrementalDag>(
    cx: &Context<'_>,
    base: &Tagging,
    forced: &Forced,
    fixed: &Fixed,
) -> Result<Walk> {
    let topo = cx.topo;
    let n = topo.channel_count();
    let rank = clos_rank(topo);
    let mut dags = Vec::new();
    for (p, edges) in same_priority_edges(&base.keys).into_iter().enumerate() {
        let t = p as u32 + 1;
        let kept: Vec<(ChannelId, ChannelId)> = edges
            .into_iter()
            .filter(|&(a, b)| !forced.contains(&(a, t, b)))
            .collect();
        let dag = D::from_acyclic(n, &kept).ok_or_else(|| Error::SelfCheck {
            stage: "tagging",
            reason: format!("priority {t}'s dependencies have a cycle"),
        })?;
        dags.push(dag);
    }
    let mut g = GreedyDecider::<D> {
        n,
        rank,
        dags,
        forced: Some(forced),
        fixed: Some(fixed),
    };
    engine::walk(topo, cx.elp, None, Decider::InOrder(&mut g), cx.budget)
}
