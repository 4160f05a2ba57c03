//! `extend`: greedy merging seeded with an installed plan, for changing a
//! fabric that runs (`tagger update`, [`crate::update`]).
//!
//! The walk over the new ELPs follows the installed decision wherever a
//! key `(c1, t, c2)` already has one, so every path both plans carry keeps
//! its tags and its switches' entries. A key the installed plan lacks is
//! decided as `greedy` decides it, against each priority's dependency graph
//! *seeded with every installed same-priority dependency*, those of links
//! the new topology drops included. The installed entries and the new ones
//! together are then acyclic per priority, which is what makes any mix of
//! old and new tables safe while switches update (the two-phase schedule).
//!
//! When that needs more priorities than the installed plan has, [`reorder`]
//! tries the installed count with `search`'s local search over order plans
//! ([`super::search`]), pinned to the installed plan
//! ([`super::pins::Pins`]): the installed decisions stay, and every order
//! keeps the installed dependencies of its priority forward, so the result
//! is again an extension whose entries and the installed ones are acyclic
//! together.
//!
//! Reference: the greedy algorithm is Tagger's (Hu et al., "Tagger:
//! practical PFC deadlock prevention in data center networks", CoNEXT
//! 2017, §5); seeding it with installed state is this project's.

use super::pins::{MAX_PINNED_TARGET, Pins};
use super::search::LocalSearch;
use super::*;
use rustc_hash::FxHashMap as HashMap;

/// What the installed plan contributes to an extension.
#[derive(Debug, Default)]
pub struct Seed {
    /// Vertices of the dependency graphs: channels of the topology the walk
    /// runs on, then those of links only the installed plan still has.
    pub vertices: usize,
    /// Installed same-priority dependencies `(priority, from, to)`.
    pub edges: Vec<(u32, ChannelId, ChannelId)>,
    /// Installed decisions `(in channel, tag, out channel) -> next tag`,
    /// on the walk's topology.
    pub kept: HashMap<(ChannelId, u32, ChannelId), u32>,
}

/// Plans `cx.elp` on `cx.topo`, keeping `seed`'s decisions and deciding
/// the rest greedily against graphs that hold `seed`'s dependencies.
///
/// # Arguments
/// * `cx` - the new topology and ELPs.
/// * `seed` - the installed plan, translated to the new topology's channels.
///
/// # Returns
/// The plan (algorithm name `greedy`): every key the new ELPs reach.
///
/// # Errors
/// [`Error::Algo`] when the installed dependencies are themselves cyclic
/// (the installed plan was not deadlock-free) or a tag passes [`MAX_TAG`];
/// the walk's budget errors.
///
/// # Complexity
/// As `greedy`, plus one insertion per installed dependency.
pub fn plan(cx: &Context<'_>, seed: &Seed) -> Result<Tagging> {
    plan_forced(cx, seed, None)
}

/// [`plan`] with `forced` keys the installed plan does not decide moved up
/// a priority whatever the graph allows (the traffic-class repair,
/// [`super::fit`]); installed decisions stay.
pub(crate) fn plan_forced(
    cx: &Context<'_>,
    seed: &Seed,
    forced: Option<&super::fit::Forced>,
) -> Result<Tagging> {
    let mut d = Extender {
        n: seed.vertices,
        dags: Vec::new(),
        kept: &seed.kept,
        forced,
    };
    for &(p, a, b) in &seed.edges {
        if !d.dag(p).try_add_edge(a, b) {
            return Err(Error::Algo {
                algo: "extend".into(),
                reason: format!(
                    "the installed plan's priority {p} dependencies are cyclic (at channel {a} -> {b}): it is not deadlock-free"
                ),
            });
        }
    }
    let walk = engine::walk(cx.topo, cx.elp, None, Decider::InOrder(&mut d), cx.budget)?;
    checked(plan::finish(
        cx.topo,
        Algo::GREEDY,
        CycleBackend::Ordered,
        walk,
        cx.budget,
    )?)
}

/// [`plan_forced`] from the last plan `base` (an extension of `seed`):
/// every key `base` decides keeps its decision unless `forced` moves it
/// up, and only the keys the forced moves newly reach are decided, against
/// graphs holding `seed`'s dependencies and `base`'s (less the forced
/// ones). A repair round of [`super::fit`] that replans only what it
/// changed, as [`super::greedy`]'s fitting does.
///
/// # Errors
/// As [`plan`].
pub(crate) fn refit(
    cx: &Context<'_>,
    seed: &Seed,
    base: &Tagging,
    forced: &super::fit::Forced,
) -> Result<Tagging> {
    let mut kept = seed.kept.clone();
    kept.extend(
        base.keys
            .iter()
            .filter_map(|k| Some(((k.in_channel?, k.tag, k.out_channel), k.next_tag)))
            .filter(|k| !forced.contains(&k.0)),
    );
    let mut edges = seed.edges.clone();
    edges.extend(
        same_priority_edges(&base.keys)
            .into_iter()
            .enumerate()
            .flat_map(|(p, e)| e.into_iter().map(move |(a, b)| (p as u32 + 1, a, b)))
            .filter(|&(p, a, b)| !forced.contains(&(a, p, b))),
    );
    edges.sort_unstable();
    edges.dedup();
    let last = Seed {
        vertices: seed.vertices,
        edges,
        kept,
    };
    plan_forced(cx, &last, Some(forced))
}

/// What [`reorder`] found.
#[derive(Debug)]
pub struct Reordering {
    /// The extension within the target, when found.
    pub plan: Option<Tagging>,
    /// The local search's effort (`residue`: the paths left past the
    /// target, or the forced ones).
    pub effort: Effort,
    /// The proof that no extension fits the target, when there is one
    /// (then no search ran).
    pub forced: Option<Forced>,
}

/// New paths that no plan within the target fits while it keeps every
/// installed decision and stays acyclic together with the installed
/// entries: along each, the installed decisions and the installed
/// dependencies (a chain of them from the next channel back to the
/// current one, which keeping the tag would close into a cycle) raise the
/// tag past the target whatever the orders. See
/// [`Pins::forced_past`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Forced {
    /// How many maximal paths are forced past the target.
    pub paths: u64,
    /// The first of them (by path index), as channels.
    pub example: Vec<ChannelId>,
}

/// Memory the pinned search may assume where neither a budget nor the
/// machine's memory is known.
const FALLBACK_ROOM: u64 = 1 << 30;

/// Tries to extend the installed plan within `target` priorities (the
/// installed count, which [`plan`] passed): a local search over order
/// plans, from `greedy`'s (the greedy extension's) orders, that follows
/// every installed decision and keeps every installed dependency forward.
///
/// # Arguments
/// * `cx` - the new topology and ELPs.
/// * `seed` - the installed plan, as [`plan`] takes it.
/// * `greedy` - [`plan`]'s extension, the start.
/// * `target` - the priorities to reach, at most [`MAX_PINNED_TARGET`].
/// * `work` - path evaluations the search may spend (`search:budget=N`'s
///   unit); the stall rule may end it sooner.
/// * `rng` - the search's seed.
///
/// # Returns
/// The extension within `target` when the search reached it; the effort
/// spent (with `skipped` set when the search's state did not fit the
/// memory budget, and `residue` the fewest paths left past `target`); or,
/// without a search, the proof that no extension fits `target`.
///
/// # Errors
/// [`Error::SelfCheck`] if the start breaks an installed dependency or the
/// plan found needs more than `target` priorities on the whole ELP (a
/// bug either way); walk and budget errors.
///
/// # Complexity
/// The ELP's maximal paths held as channel sequences (about 20 bytes per
/// channel of every path), then `search`'s steps: O(L * (occ * L + d log
/// d)) each.
pub fn reorder(
    cx: &Context<'_>,
    seed: &Seed,
    greedy: &Tagging,
    target: u32,
    work: u64,
    rng: u64,
) -> Result<Reordering> {
    assert!((1..=MAX_PINNED_TARGET).contains(&target), "target {target}");
    let (topo, budget) = (cx.topo, cx.budget);
    let mut effort = Effort::default();
    let counts = cx.elp.counts(topo);
    let room = budget
        .left()
        .or_else(crate::budget::machine_default)
        .unwrap_or(FALLBACK_ROOM);
    let state = u64::try_from(counts.paths)
        .unwrap_or(u64::MAX)
        .saturating_mul(20 * (counts.longest as u64 + 1));
    if state > room {
        effort.skipped = Some(format!(
            "its state for the ELP's {} paths, about {}, does not fit the {} left of the memory budget",
            counts.paths,
            crate::budget::human(state),
            crate::budget::human(room)
        ));
        return Ok(Reordering {
            plan: None,
            effort,
            forced: None,
        });
    }
    budget.check("tagging", state)?;
    let paths = crate::elp::enumerate::maximal_channel_paths(topo, cx.elp, u64::MAX)?
        .retain(|p| p.len() > target as usize);
    let n = seed.vertices;
    let pins = Pins::new(&paths, n, target, &seed.kept, &seed.edges);
    let start = start_orders(seed, greedy, target, &pins)?;
    let mut ls = LocalSearch::pinned(&paths, n, &start.pos, target, rng, &pins);
    // A path every valid order leaves past the target is past it at the
    // start too: only those need the proof's walk.
    let mut forced: Vec<u32> = ls
        .violated_paths()
        .iter()
        .copied()
        .filter(|&p| {
            let p = p as usize;
            pins.forced_past(paths.path(p), paths.start(p), target, &start.pos) == Some(true)
        })
        .collect();
    if !forced.is_empty() {
        forced.sort_unstable();
        effort.residue = forced.len() as u64;
        let example = paths.path(forced[0] as usize).to_vec();
        return Ok(Reordering {
            plan: None,
            effort,
            forced: Some(Forced {
                paths: forced.len() as u64,
                example,
            }),
        });
    }
    let out = ls.run(
        work,
        &|| cx.control.expired(None),
        |steps, violated, evaluations| {
            cx.control.report(control::Progress {
                target,
                steps,
                violated: violated as u64,
                evaluations,
                budget: work,
            })
        },
    );
    effort.steps = out.steps;
    effort.evaluations = out.work;
    effort.stalled = out.stalled;
    effort.stopped_early = out.timed_out;
    if !out.reached {
        effort.residue = out.residue;
        return Ok(Reordering {
            plan: None,
            effort,
            forced: None,
        });
    }
    let t = walk_reordered(cx, seed, order::OrderPlan { pos: ls.pos }, target)?;
    Ok(Reordering {
        plan: Some(t),
        effort,
        forced: None,
    })
}

/// A plan near the installed one that may change its decisions: `search`'s
/// local search from the installed orders (per priority, a topological
/// order of the installed dependencies on the new topology's channels,
/// following `extension`'s orders wherever they leave a choice), lowering
/// the plan they give target by target, so it moves only what the new
/// paths need. Then, churn as a second objective, each channel is pulled
/// back toward its place in the installed orders wherever that costs no
/// path and no node's class bound (one pass; kept where the plan still
/// has as many priorities and fits the classes). Where [`plan`] and
/// [`reorder`] must keep every installed decision and stay acyclic
/// together with the installed entries (a two-phase change), this plan is
/// reached switch by switch; its churn usually lies between the
/// extension's and a from-scratch plan's (the pull took a Jellyfish
/// 200/32 r=12 seed 1 `search` plan grown by 10 from 10,815 entries to
/// 10,715, the extension's being 10,675).
///
/// # Arguments
/// * `cx` - the new topology and ELPs.
/// * `seed` - the installed plan, as [`plan`] takes it.
/// * `extension` - the extension, whose orders place the new channels and
///   whose lower bound (the new ELP's) no target goes below.
/// * `target` - the installed plan's priorities: the orders it starts from.
/// * `work` - path evaluations the search may spend (`search:budget=N`'s
///   unit); the stall rule may end it sooner.
///
/// # Returns
/// The plan (algorithm `search`), with the fewest priorities the search
/// reached from there; its effort says what it spent.
///
/// # Errors
/// Walk and budget errors.
///
/// # Complexity
/// As `search`'s local search: the ELP's maximal paths, then O(L * (occ *
/// L + d log d)) per step.
pub fn near(
    cx: &Context<'_>,
    seed: &Seed,
    extension: &Tagging,
    target: u32,
    work: u64,
) -> Result<Tagging> {
    let n = cx.topo.channel_count();
    let follow = order::OrderPlan::from_keys(n, &extension.keys, extension.priorities);
    let edges: Vec<Vec<(ChannelId, ChannelId)>> = (1..=target.max(1))
        .map(|t| {
            seed.edges
                .iter()
                .filter(|e| e.0 == t && (e.1 as usize) < n && (e.2 as usize) < n)
                .map(|e| (e.1, e.2))
                .collect()
        })
        .collect();
    let start = order::OrderPlan::from_edges(n, edges, &follow);
    super::search::plan_near(
        cx,
        &SearchParams {
            budget: work,
            seed: NEAR_SEED,
            ..SearchParams::DEFAULT
        },
        start,
        extension.lower_bound,
    )
}

/// The seed of [`near`]'s local search: fixed, so an update is a function
/// of its inputs.
const NEAR_SEED: u64 = 1;

/// The start of the reordering: per priority, a topological order of the
/// installed dependencies and the greedy extension's own, which its
/// dependency graphs held together (acyclic), following the extension's
/// order elsewhere.
///
/// # Errors
/// [`Error::SelfCheck`] if it breaks an installed dependency (a bug).
fn start_orders(
    seed: &Seed,
    greedy: &Tagging,
    target: u32,
    pins: &Pins,
) -> Result<order::OrderPlan> {
    let n = seed.vertices;
    let near = order::OrderPlan::from_keys(n, &greedy.keys, greedy.priorities);
    let edges: Vec<Vec<(ChannelId, ChannelId)>> = (1..=target)
        .map(|t| {
            let installed = seed.edges.iter().filter(|e| e.0 == t).map(|e| (e.1, e.2));
            let extended = greedy
                .keys
                .iter()
                .filter(|k| k.priority == t && k.next_priority == t)
                .filter_map(|k| Some((k.in_channel?, k.out_channel)));
            installed.chain(extended).collect()
        })
        .collect();
    let start = order::OrderPlan::from_edges(n, edges, &near);
    if let Some(t) = (0..target as usize).find(|&t| !pins.respected_by(t, &start.pos[t])) {
        return Err(Error::SelfCheck {
            stage: "tagging",
            reason: format!(
                "extend: the start of priority {}'s order breaks an installed dependency",
                t + 1
            ),
        });
    }
    Ok(start)
}

/// The plan of the orders found, keeping every installed decision, walked
/// over the whole ELP.
///
/// # Errors
/// [`Error::SelfCheck`] if it needs more than `target` priorities (a bug);
/// walk and budget errors.
fn walk_reordered(
    cx: &Context<'_>,
    seed: &Seed,
    plan: order::OrderPlan,
    target: u32,
) -> Result<Tagging> {
    let (topo, budget) = (cx.topo, cx.budget);
    let decide = |c1: ChannelId, t: u32, c2: ChannelId| -> Result<u32> {
        Ok(match seed.kept.get(&(c1, t, c2)) {
            Some(&t2) => t2,
            None => plan.next_tag(c1, t, c2),
        })
    };
    let walk = engine::walk(topo, cx.elp, None, Decider::Independent(&decide), budget)?;
    let t = checked(plan::finish(
        topo,
        Algo::GREEDY,
        CycleBackend::Ordered,
        walk,
        budget,
    )?)?;
    orders_fit("extend", target, t.priorities)?;
    Ok(t)
}

struct Extender<'a> {
    n: usize,
    dags: Vec<OrderedDag>,
    kept: &'a HashMap<(ChannelId, u32, ChannelId), u32>,
    forced: Option<&'a super::fit::Forced>,
}

impl Extender<'_> {
    fn dag(&mut self, p: u32) -> &mut OrderedDag {
        while self.dags.len() < p as usize {
            self.dags.push(OrderedDag::with_vertices(self.n));
        }
        &mut self.dags[p as usize - 1]
    }
}

impl HopDecider for Extender<'_> {
    fn heap_bytes(&self) -> u64 {
        self.dags.iter().map(OrderedDag::heap_bytes).sum()
    }

    fn decide_hop(&mut self, keys: &[(ChannelId, u32, ChannelId)]) -> Result<Vec<u32>> {
        keys.iter()
            .map(|&(c1, t, c2)| {
                if let Some(&t2) = self.kept.get(&(c1, t, c2)) {
                    return Ok(t2);
                }
                if t >= MAX_TAG {
                    return Err(Error::Algo {
                        algo: "extend".into(),
                        reason: format!("needs more than {MAX_TAG} priorities"),
                    });
                }
                if self.forced.is_some_and(|f| f.contains(&(c1, t, c2))) {
                    return Ok(t + 1);
                }
                Ok(if self.dag(t).try_add_edge(c1, c2) {
                    t
                } else {
                    t + 1
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::elp::ElpSpec;

    /// A pinned search on a small Jellyfish, pinned to a random half of
    /// greedy's decisions and all of its dependencies: whatever it reaches,
    /// its orders keep every dependency forward, its count of violated
    /// paths is what an independent walk (pinned decisions first, then the
    /// orders) gives, and every path the proof calls forced is violated
    /// there too (a necessary consequence of the proof being sound).
    #[test]
    fn pinned_search_keeps_its_pins_and_the_proof_holds() {
        let topo = crate::TopologySpec::parse("jellyfish:n=40,ports=12,r=6,seed=3")
            .unwrap()
            .build()
            .unwrap();
        let elp = ElpSet::build(&topo, &ElpSpec::parse("shortest").unwrap()).unwrap();
        let g = tag(&topo, &elp, Algo::GREEDY, CycleBackend::Ordered).unwrap();
        let n = topo.channel_count();
        let paths = crate::elp::enumerate::maximal_channel_paths(&topo, &elp, u64::MAX)
            .unwrap()
            .retain(|p| p.len() > 2);
        for (round, target) in [(1u64, 2u32), (2, 2), (3, 1)] {
            let mut x = round * 0x9E37_79B9_7F4A_7C15;
            let mut coin = || {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x & 1 == 1
            };
            let mut kept = HashMap::default();
            let mut edges = Vec::new();
            for k in &g.keys {
                let Some(c1) = k.in_channel else { continue };
                if k.priority == k.next_priority && k.priority <= target {
                    edges.push((k.priority, c1, k.out_channel));
                }
                if k.priority <= target && coin() {
                    kept.insert((c1, k.tag, k.out_channel), k.next_tag);
                }
            }
            let pins = Pins::new(&paths, n, target, &kept, &edges);
            let start = order::OrderPlan::from_keys(n, &g.keys, g.priorities).truncated(3);
            let pos: Vec<Vec<u64>> = (0..target as usize)
                .map(|t| start.pos[t].iter().map(|&p| p * 4).collect())
                .collect();
            assert!((0..target as usize).all(|t| pins.respected_by(t, &pos[t])));
            let forced: Vec<usize> = (0..paths.len())
                .filter(|&p| {
                    pins.forced_past(paths.path(p), paths.start(p), target, &pos) == Some(true)
                })
                .collect();
            let mut ls = LocalSearch::pinned(&paths, n, &pos, target, round, &pins);
            ls.run(3_000_000, &|| false, |_, _, _| {});
            for t in 0..target as usize {
                assert!(pins.respected_by(t, &ls.pos[t]), "round {round} order {t}");
            }
            let walk = |p: usize| -> u32 {
                let path = paths.path(p);
                let mut tag = 1u32;
                for w in path.windows(2) {
                    if tag > target {
                        break;
                    }
                    tag = match kept.get(&(w[0], tag, w[1])) {
                        Some(&t2) => t2,
                        None => {
                            let o = &ls.pos[tag as usize - 1];
                            tag + u32::from(o[w[0] as usize] >= o[w[1] as usize])
                        }
                    };
                }
                tag
            };
            let violated: Vec<bool> = (0..paths.len()).map(|p| walk(p) > target).collect();
            assert_eq!(
                violated.iter().filter(|v| **v).count(),
                ls.violated(),
                "round {round}"
            );
            assert!(forced.iter().all(|&p| violated[p]), "round {round}");
            if round == 3 {
                // One priority on a Jellyfish: cycles of installed
                // dependencies force paths past it.
                assert!(!forced.is_empty());
            }
        }
    }
}
