//! Fitting a plan to the traffic classes a switch has.
//!
//! A stock switch rewrites tags with its port maps only
//! ([`super::traffic`]): every (port, tag) pair it classifies goes into one
//! of its traffic classes, 8 on most ASICs with one kept for lossy
//! traffic. A plan whose rewrites need more classes at some switch cannot
//! be installed there, so the budget is a constraint on the plan, not on
//! its export.
//!
//! A switch needs two classes where two of its members (packets arriving
//! on one port with one tag) are sent differently on some egress port, one
//! kept at its priority and the other moved up (or one kept where the
//! other could not be without closing a cycle). Moving the kept one up too
//! merges them: it is always safe (a move up adds no same-priority
//! dependency), but it sends those packets on at the next priority, which
//! changes what arrives downstream and may need one more priority. So
//! fitting is a repair loop: classify the plan; at every switch over the
//! budget, merge the pair of classes (of one arriving priority) whose
//! merge forces the fewest keys up, until the switch is within it; plan
//! again with those keys forced up; repeat until every switch fits, or no
//! merge is left. The plan's own decisions are kept wherever no key is
//! forced: greedy and update's extensions plan again from the last round's
//! plan, deciding only the keys the forced moves newly reach
//! (`greedy::refit`, [`super::extend`]'s `refit`), and fall back to whole
//! replans where that gets stuck (a switch whose classes differ only where
//! kept decisions hold them apart).
//!
//! Complexity per round: one tagging walk and one classification, plus
//! O(G^2 * D) per switch over the budget for its G classes and D ports.

use super::traffic::{Classification, NodeClasses, classify};
use super::{Key, Tagging};
use crate::error::Result;
use rustc_hash::FxHashSet;
use tagger_generators::{ChannelId, NodeId, Topology};

/// A key `(in channel, tag, out channel)`, as fitting forces it up.
type KeyId = (ChannelId, u32, ChannelId);

/// Keys `(in channel, tag, out channel)` forced one priority up.
pub(crate) type Forced = FxHashSet<KeyId>;

/// Rounds of the repair loop before it gives up.
const ROUNDS: u32 = 32;

/// The traffic-class budget's effect on a plan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClassFit {
    /// Traffic classes a switch may use for lossless traffic.
    pub max_tcs: u32,
    /// The most classes one switch of the plan needs.
    pub tcs_max: u32,
    /// Priorities of the plan the algorithm found before it was fitted to
    /// the budget (equal to the plan's when it fitted as found).
    pub unconstrained_priorities: u32,
    /// Keys moved up a priority to fit (0 when it fitted as found).
    pub forced_keys: u64,
    /// Repair rounds run.
    pub rounds: u32,
    /// Classes each switch needs for the plan, by node id (what
    /// [`super::traffic::Classification::per_node`] gives for its keys):
    /// kept so that the rules stage does not classify the plan again.
    pub per_node: Vec<u32>,
}

/// Why no plan within the budget was found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NoFit {
    /// The budget.
    pub max_tcs: u32,
    /// Switches still over it, with the classes each needs (at most ten,
    /// the most needing first), and how many there are in all.
    pub over: Vec<(NodeId, u32)>,
    /// Switches over the budget in all.
    pub switches_over: u64,
    /// Why the repair stopped.
    pub reason: String,
}

impl std::fmt::Display for NoFit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let list: Vec<String> = self
            .over
            .iter()
            .map(|(v, n)| format!("switch {v} needs {n}"))
            .collect();
        write!(
            f,
            "no plan found within {} traffic classes per switch: {} switch(es) over ({}{}); {}. A switch with more traffic classes, or --max-tcs none for a plan that only the neutral table can express",
            self.max_tcs,
            self.switches_over,
            list.join(", "),
            if self.switches_over > self.over.len() as u64 {
                ", ..."
            } else {
                ""
            },
            self.reason
        )
    }
}

fn no_fit(c: &Classification, max_tcs: u32, reason: String) -> NoFit {
    let mut over: Vec<(NodeId, u32)> = c
        .over(max_tcs as usize)
        .into_iter()
        .map(|(v, n)| (v, n as u32))
        .collect();
    let switches_over = over.len() as u64;
    over.sort_by_key(|&(v, n)| (std::cmp::Reverse(n), v));
    over.truncate(10);
    NoFit {
        max_tcs,
        over,
        switches_over,
        reason,
    }
}

/// Fits `first` (the algorithm's plan) to `max_tcs` classes per switch,
/// planning again with keys forced up through `replan` as needed.
///
/// Arguments: the topology, the budget, the plan, and how to plan again
/// from the last plan with a set of keys forced one priority up (every
/// other key decided as the algorithm would).
///
/// Returns: the plan (unchanged when it already fits) with what fitting
/// did, or why no plan within the budget was found.
///
/// # Errors
/// The replanning's own errors (memory budget, the algorithm's limits).
pub(crate) fn fit(
    topo: &Topology,
    max_tcs: u32,
    first: Tagging,
    replan: &mut dyn FnMut(&Tagging, &Forced) -> Result<Tagging>,
) -> Result<std::result::Result<(Tagging, ClassFit), NoFit>> {
    fit_moving(topo, max_tcs, first, &|_| true, replan)
}

/// [`fit`] where only keys `movable` accepts may be forced up (an
/// extension keeps the installed decisions).
pub(crate) fn fit_moving(
    topo: &Topology,
    max_tcs: u32,
    first: Tagging,
    movable: &dyn Fn(&KeyId) -> bool,
    replan: &mut dyn FnMut(&Tagging, &Forced) -> Result<Tagging>,
) -> Result<std::result::Result<(Tagging, ClassFit), NoFit>> {
    let unconstrained = first.priorities;
    let mut plan = first;
    let mut forced = Forced::default();
    let mut rounds = 0;
    loop {
        let c = classify(topo, &plan.keys)?;
        let over = c.over(max_tcs as usize);
        if over.is_empty() {
            let fit = ClassFit {
                max_tcs,
                tcs_max: c.max() as u32,
                unconstrained_priorities: unconstrained,
                forced_keys: forced.len() as u64,
                rounds,
                per_node: c.per_node(topo.node_count()),
            };
            return Ok(Ok((plan, fit)));
        }
        if rounds == ROUNDS {
            return Ok(Err(no_fit(
                &c,
                max_tcs,
                format!("the repair stopped after {ROUNDS} rounds"),
            )));
        }
        let before = forced.len();
        let mut stuck = None;
        for n in c
            .nodes
            .iter()
            .filter(|n| n.classes.len() > max_tcs as usize)
        {
            match merges(topo, &plan, n, max_tcs as usize, movable) {
                Some(keys) => forced.extend(keys),
                None => {
                    stuck.get_or_insert(n.node);
                }
            }
        }
        if forced.len() == before {
            let reason = match stuck {
                Some(v) => format!(
                    "at switch {v} no two classes of one arriving priority can be merged by moving keys up (its host ports' first hops, or packets arriving at too many priorities)"
                ),
                None => "moving keys up merged no further classes".to_string(),
            };
            return Ok(Err(no_fit(&c, max_tcs, reason)));
        }
        rounds += 1;
        plan = replan(&plan, &forced)?;
    }
}

/// A class being merged: its arriving priority, what it sends on each
/// port, and its members `(in channel or host, tag)`.
struct Work {
    priority: u32,
    egress: Vec<Option<(u32, u32)>>,
    members: Vec<(Option<ChannelId>, u32)>,
}

/// The keys to force up at node `n` so that its classes, merged pairwise
/// (cheapest first, within one arriving priority), number at most
/// `budget`; `None` when no merge is possible and it is still over.
fn merges(
    topo: &Topology,
    plan: &Tagging,
    n: &NodeClasses,
    budget: usize,
    movable: &dyn Fn(&KeyId) -> bool,
) -> Option<Vec<KeyId>> {
    let keys = &plan.keys;
    let v = n.node;
    // What forcing a key up costs: little where its next state already
    // exists (the packets join traffic the next switch already
    // classifies), more where it creates one (a new member there), most
    // where it opens a new priority.
    let weight = |out: ChannelId, tag: u32| -> u64 {
        if tag >= plan.priorities {
            1000
        } else if plan
            .states
            .binary_search_by(|s| (s.0, s.1).cmp(&(out, tag + 1)))
            .is_ok()
        {
            1
        } else {
            10
        }
    };
    let outs = topo.out_channels(v);
    // The node's keys, sorted by (in channel, tag, out channel).
    let lo = keys.partition_point(|k| k.node < v);
    let hi = keys.partition_point(|k| k.node <= v);
    let here = &keys[lo..hi];
    let key_at = |from: Option<ChannelId>, tag: u32, out: ChannelId| -> Option<&Key> {
        here.binary_search_by(|k| (k.in_channel, k.tag, k.out_channel).cmp(&(from, tag, out)))
            .ok()
            .map(|i| &here[i])
    };
    let mut work: Vec<Work> = n
        .classes
        .iter()
        .map(|c| Work {
            priority: c.priority,
            egress: c.egress.clone(),
            members: Vec::new(),
        })
        .collect();
    for &(from, tag, ci) in &n.ingress {
        work[ci as usize].members.push((from, tag));
    }
    // The keys of class `a` kept at port j, to force up; None when one is a
    // host port's first hop (always kept) or may not move.
    let kept = |a: &Work, j: usize| -> Option<Vec<KeyId>> {
        let mut out = Vec::new();
        for &(from, tag) in &a.members {
            if let Some(k) = key_at(from, tag, outs[j])
                && k.next_priority == k.priority
            {
                let key = (from?, tag, outs[j]);
                if !movable(&key) {
                    return None;
                }
                out.push(key);
            }
        }
        Some(out)
    };
    // The keys merging a and b forces up, or None when they cannot merge.
    let cost = |a: &Work, b: &Work| -> Option<Vec<KeyId>> {
        if a.priority != b.priority {
            return None;
        }
        let p = a.priority;
        let mut out = Vec::new();
        for j in 0..outs.len() {
            let (x, y) = (a.egress[j], b.egress[j]);
            if x == y {
                continue;
            }
            let keep = |e: Option<(u32, u32)>| e.is_some_and(|(_, q)| q == p);
            match (x, y) {
                (Some(_), Some(_)) if !keep(x) && !keep(y) => return None,
                _ if keep(x) => out.extend(kept(a, j)?),
                _ if keep(y) => out.extend(kept(b, j)?),
                _ => {}
            }
        }
        Some(out)
    };
    merge_cheapest(&mut work, budget, &cost, &weight)
}

/// Merges the pair of classes whose merge forces the lightest keys up
/// (`weight` of each key `cost` lists), until at most `budget` are left.
/// Returns the keys forced, or `None` when no pair can merge and the
/// classes are still over the budget.
fn merge_cheapest(
    work: &mut Vec<Work>,
    budget: usize,
    cost: &dyn Fn(&Work, &Work) -> Option<Vec<KeyId>>,
    weight: &dyn Fn(ChannelId, u32) -> u64,
) -> Option<Vec<KeyId>> {
    let mut forced = Vec::new();
    while work.len() > budget {
        // (weight, the two classes, the keys their merge forces up).
        type Merge = (u64, usize, usize, Vec<KeyId>);
        let mut best: Option<Merge> = None;
        for i in 0..work.len() {
            for j in i + 1..work.len() {
                if let Some(f) = cost(&work[i], &work[j]) {
                    let w: u64 = f.iter().map(|&(_, t, o)| weight(o, t)).sum();
                    if best.as_ref().is_none_or(|b| w < b.0) {
                        best = Some((w, i, j, f));
                    }
                }
            }
        }
        let (_, i, j, f) = best?;
        let b = work.swap_remove(j);
        let a = &mut work[i];
        let p = a.priority;
        for (x, y) in a.egress.iter_mut().zip(b.egress) {
            if *x != y {
                // What is left after the keeps moved up: a move up, or
                // lossy where neither side sends.
                let up = [*x, y].into_iter().flatten().find(|&(_, q)| q > p);
                *x = up.or(Some((p + 1, p + 1)).filter(|_| x.is_some() || y.is_some()));
            }
        }
        a.members.extend(b.members);
        forced.extend(f);
    }
    Some(forced)
}
