//! A tagging's result ([`Tagging`]: its keys, tags and priorities), how a
//! walk becomes one, and the checks every result passes before it leaves
//! the tagging stage.

use super::*;

/// How a packet's state is carried and matched.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scheme {
    /// The tag is the lossless priority, rewritten (DSCP).
    Dscp,
    /// The tag is the hop count (TTL); the priority is a function of the
    /// ingress port and the hop count.
    Ttl,
}

/// One decided key: a packet in `in_channel` (or from a host port, `None`)
/// with `tag` that leaves on `out_channel` gets `next_tag`; it sits in queue
/// `priority` here and `next_priority` at the next node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Key {
    /// The switch.
    pub node: NodeId,
    /// The channel the packet arrives on (`None`: from a host port).
    pub in_channel: Option<ChannelId>,
    /// The tag it carries.
    pub tag: u32,
    /// The channel it leaves on.
    pub out_channel: ChannelId,
    /// The tag it leaves with.
    pub next_tag: u32,
    /// Its priority here.
    pub priority: u32,
    /// Its priority at the next node.
    pub next_priority: u32,
}

/// Per-priority size of the dependency graph.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PriorityStats {
    /// Channels with a dependency at this priority.
    pub channels: u64,
    /// Dependencies at this priority.
    pub edges: u64,
}

/// The result of the tagging stage.
#[derive(Clone, Debug)]
pub struct Tagging {
    /// The algorithm that ran.
    pub algo: Algo,
    /// The cycle detection backend.
    pub cycle: CycleBackend,
    /// How tags map to queues (DSCP rewrite, or TTL hop counts).
    pub scheme: Scheme,
    /// Lossless priorities used: the largest priority.
    pub priorities: u32,
    /// Decided keys sorted by (node, in channel, tag, out channel).
    pub keys: Vec<Key>,
    /// Every reached packet state `(channel, tag, priority)`, sorted.
    pub states: Vec<(ChannelId, u32, u32)>,
    /// Per priority, the dependency graph's size.
    pub per_priority: Vec<PriorityStats>,
    /// `greedy-ttl` only: keys `(in channel, priority, out channel)` that
    /// would need two different next priorities if the priorities were used
    /// as rewritten DSCP tags, i.e. rules no switch could hold.
    pub dscp_conflicts: Option<u64>,
    /// A proven lower bound on the priorities any deadlock-free plan of this
    /// ELP needs: see [`dependency_lower_bound`], raised by `exact` when its
    /// solver proves fewer priorities impossible.
    pub lower_bound: u32,
    /// Search effort of `search` and `exact` (moves evaluated, or solver
    /// calls), and whether a limit cut it short; see [`Effort`].
    pub effort: Option<Effort>,
    /// Under a traffic-class budget ([`Context::max_tcs`]): how the plan
    /// fits it ([`super::fit`]); `None` without one.
    pub class_fit: Option<super::fit::ClassFit>,
    /// `auto`: every algorithm it ran, in order (empty for the others).
    pub tried: Vec<Attempt>,
}

/// One algorithm `auto` ran: what it found, or why it found nothing.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Attempt {
    /// The algorithm as written (`clos`, `greedy`, `search`).
    pub algo: String,
    /// Priorities of its plan (null when it had none).
    pub priorities: Option<u32>,
    /// Rules of its plan, ACL keys after fitting (null when it had none).
    pub keys: Option<u64>,
    /// Why it had no plan (an algorithm that does not apply).
    pub error: Option<String>,
    /// Seconds it took (wall clock; everything else is deterministic).
    pub seconds: f64,
}

/// What an optimising algorithm (`search`, `exact`) spent and where it
/// stopped.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Effort {
    /// Local-search moves applied, or SAT solver calls.
    pub steps: u64,
    /// Paths still needing more priorities at the last target that was not
    /// reached (0 when every target down to the lower bound was reached).
    pub residue: u64,
    /// True when a time limit (`search:time=S`, `exact:timeout=S`) or a
    /// stop request ([`Control::request_stop`](super::Control::request_stop)) ended the work.
    pub stopped_early: bool,
    /// `exact`: paths of the sub-ELP on which the solver proved the last
    /// priority count impossible (0 when it proved nothing). Any plan for
    /// the ELP fits those paths, so the proof holds for the whole ELP.
    pub proof_paths: u64,
    /// `search`: why its local search did not run although the plan was
    /// above the lower bound (the ELP has more paths than `paths=N`, or the
    /// budget is 0); `steps` and `residue` then mean nothing and read as
    /// null in the outputs.
    pub skipped: Option<String>,
    /// `search`: path evaluations its local search spent (the unit of
    /// `search:budget=N`).
    pub evaluations: u64,
    /// `search`: true when the local search gave up at the last target for
    /// lack of progress rather than for the budget or a time limit.
    pub stalled: bool,
    /// `search`: local searches started again with a new seed after they
    /// stalled close to their target.
    pub restarts: u64,
    /// A near plan's moves toward the installed orders, after its search
    /// (`update`'s near plan; 0 elsewhere).
    pub pulled: u64,
    /// `search` under a traffic-class budget: the search held to the
    /// classes (run where orders reached a target but their plan missed
    /// the classes), at the lowest target it ran for.
    pub class_held: Option<ClassHeld>,
}

/// What the search held to the traffic classes did at one target.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClassHeld {
    /// The priorities it searched for.
    pub target: u32,
    /// True when it found a plan within the classes.
    pub fitted: bool,
    /// Where it gave up: at its best, paths past the target plus classes
    /// over the switches' bounds (0 when it fitted).
    pub left: u64,
    /// Plans whose bound fitted and that it classified.
    pub checks: u32,
}

/// Tags must fit the DSCP field with room for the lossy class.
pub const MAX_TAG: u32 = 63;

/// The lower bound every plan of an ELP obeys, from its transitions alone:
/// 0 without keys, 1 when the single-priority dependency graph (every key
/// keeps its tag, so every transition `(c1, c2)` of the ELP is an edge) is
/// acyclic, 2 when it has a cycle (then one priority cannot be deadlock-free).
///
/// Any plan's keys cover every transition of the ELP, whatever their tags,
/// so the keys of the plan at hand give the graph.
///
/// Complexity: O(K + C) for K keys over C channels.
pub fn dependency_lower_bound(keys: &[Key]) -> u32 {
    KeyScan::of(keys).lower_bound(keys)
}

/// What one pass over a plan's keys gives the checks every plan passes
/// ([`self_check_scanned`] and [`dependency_lower_bound`]): on fat-tree k=64
/// `kbounce:2` (30M keys, 960 MB) each check's own passes over the keys
/// were bound by memory, 0.9 s together.
#[derive(Debug, Default)]
pub(crate) struct KeyScan {
    /// The first key lowering its tag or priority, or leaving a host port
    /// at a tag other than 1.
    fault: Option<usize>,
    /// The first key decided again or out of order by the next.
    disorder: Option<usize>,
    /// Each in channel's run of keys `[start, end)`; `None` when some in
    /// channel's keys are not one run.
    runs: Option<Vec<(usize, usize)>>,
    /// In-degrees: `[0]` in the graph of every key's dependency, `[p]` in
    /// priority `p`'s same-priority dependencies.
    indeg: Vec<Vec<u32>>,
}

impl KeyScan {
    /// Complexity: O(K + C * P) for K keys over C channels and P priorities.
    pub(crate) fn of(keys: &[Key]) -> KeyScan {
        let at = |k: &Key| (k.node, k.in_channel, k.tag, k.out_channel);
        let mut scan = KeyScan {
            runs: Some(Vec::new()),
            indeg: vec![Vec::new()],
            ..Default::default()
        };
        let grow = |v: &mut Vec<u32>, c: ChannelId| {
            if v.len() <= c as usize {
                v.resize(c as usize + 1, 0);
            }
        };
        for (i, k) in keys.iter().enumerate() {
            if scan.fault.is_none()
                && (k.next_tag < k.tag
                    || k.tag == 0
                    || k.next_priority < k.priority
                    || k.priority == 0
                    || (k.in_channel.is_none() && k.tag != 1))
            {
                scan.fault = Some(i);
            }
            if scan.disorder.is_none() && i + 1 < keys.len() && at(k) >= at(&keys[i + 1]) {
                scan.disorder = Some(i);
            }
            let Some(c1) = k.in_channel else { continue };
            if let Some(runs) = &mut scan.runs {
                if runs.len() <= c1 as usize {
                    runs.resize(c1 as usize + 1, (0, 0));
                }
                let r = &mut runs[c1 as usize];
                if r.1 == 0 {
                    *r = (i, i + 1);
                } else if r.1 == i {
                    r.1 = i + 1;
                } else {
                    scan.runs = None;
                }
            }
            grow(&mut scan.indeg[0], c1.max(k.out_channel));
            scan.indeg[0][k.out_channel as usize] += 1;
            // A priority past the DSCP field fails the self-check before
            // any cycle is looked for: it gets no array.
            if k.priority == k.next_priority && (1..=MAX_TAG).contains(&k.priority) {
                let p = k.priority as usize;
                if scan.indeg.len() <= p {
                    scan.indeg.resize_with(p + 1, Vec::new);
                }
                let d = &mut scan.indeg[p];
                grow(d, k.out_channel);
                d[k.out_channel as usize] += 1;
            }
        }
        scan
    }

    /// Whether the dependencies `(in channel, out channel)` of the keys
    /// `keep` selects, whose in-degrees are `indeg`, have a cycle.
    ///
    /// A plan's keys are sorted by (node, in channel, ...), and a
    /// channel's keys all sit at its head node, so each in channel's keys
    /// are one run: the graph is read from the keys in place (Kahn's peel
    /// over the runs) instead of from an edge list, which on fat-tree k=64
    /// `kbounce:2` was 30M edges built and sorted per check. Keys in
    /// another order are checked through an edge list ([`has_cycle`]).
    ///
    /// Complexity: O(K + C) for K keys over C channels.
    fn cyclic(&self, keys: &[Key], indeg: &[u32], keep: impl Fn(&Key) -> bool) -> bool {
        let Some(runs) = &self.runs else {
            return has_cycle(
                keys.iter()
                    .filter(|k| keep(k))
                    .filter_map(|k| Some((k.in_channel?, k.out_channel)))
                    .collect(),
            );
        };
        // Channels up to the largest any key names.
        let mut indeg = indeg.to_vec();
        indeg.resize(runs.len().max(self.indeg[0].len()), 0);
        crate::cycle::peel_leaves_some(indeg, |v| {
            let (start, end) = runs.get(v as usize).copied().unwrap_or((0, 0));
            keys[start..end]
                .iter()
                .filter(|k| keep(k))
                .map(|k| k.out_channel)
        })
    }

    /// [`dependency_lower_bound`] of the scanned keys.
    pub(crate) fn lower_bound(&self, keys: &[Key]) -> u32 {
        if keys.is_empty() {
            0
        } else if !self.cyclic(keys, &self.indeg[0], |_| true) {
            1
        } else {
            2
        }
    }

    /// The first priority whose same-priority dependencies have a cycle.
    fn cyclic_priority(&self, keys: &[Key]) -> Option<u32> {
        use rayon::prelude::*;
        (1..self.indeg.len() as u32)
            .into_par_iter()
            .find_first(|&p| {
                self.cyclic(keys, &self.indeg[p as usize], |k| {
                    k.priority == p && k.next_priority == p
                })
            })
    }
}

/// Whether the dependencies `(in channel, out channel)` of the keys `keep`
/// selects have a cycle ([`KeyScan::cyclic`], with their in-degrees).
#[cfg(test)]
pub(crate) fn keys_have_cycle(keys: &[Key], keep: impl Fn(&Key) -> bool) -> bool {
    let scan = KeyScan::of(keys);
    let mut indeg = vec![0u32; scan.indeg[0].len()];
    for k in keys.iter().filter(|k| k.in_channel.is_some() && keep(k)) {
        indeg[k.out_channel as usize] += 1;
    }
    scan.cyclic(keys, &indeg, keep)
}

/// Builds the result of a DSCP-scheme walk: the priority is the tag.
pub(crate) fn finish(
    topo: &Topology,
    algo: Algo,
    cycle: CycleBackend,
    walk: Walk,
    budget: &Budget,
) -> Result<Tagging> {
    build(
        topo,
        algo,
        cycle,
        Scheme::Dscp,
        walk,
        |_, t| t,
        None,
        budget,
    )
}

/// Builds a [`Tagging`] from a walk and the priority of each state. A
/// packet from a host port starts in queue 1 under every scheme (it carries
/// the initial tag 1, which [`self_check`] enforces).
///
/// # Errors
/// [`Error::MemoryBudget`] when the keys and states, beside the walk that
/// still holds them, would not fit: checked before they are built, since on
/// a large Clos they are most of the run's memory.
#[allow(clippy::too_many_arguments)]
pub(crate) fn build(
    topo: &Topology,
    algo: Algo,
    cycle: CycleBackend,
    scheme: Scheme,
    walk: Walk,
    prio: impl Fn(ChannelId, u32) -> u32 + Sync,
    dscp_conflicts: Option<u64>,
    budget: &Budget,
) -> Result<Tagging> {
    use crate::budget::bytes_of;
    use rayon::slice::ParallelSliceMut;
    let (n_keys, n_states) = (walk.key_count(), walk.states.len());
    // Keys and states, and the channel list below.
    budget.check(
        "tagging",
        walk.heap_bytes()
            + bytes_of::<Key>(n_keys)
            + bytes_of::<(ChannelId, u32, u32)>(n_states)
            + bytes_of::<(u32, ChannelId)>(n_states),
    )?;
    let blank = Key {
        node: 0,
        in_channel: None,
        tag: 0,
        out_channel: 0,
        next_tag: 0,
        priority: 0,
        next_priority: 0,
    };
    let keys = walk.sorted_keys(
        topo,
        blank,
        |node, in_channel, tag, out_channel, next_tag| Key {
            node,
            in_channel,
            tag,
            out_channel,
            next_tag,
            priority: in_channel.map_or(1, |c1| prio(c1, tag)),
            next_priority: prio(out_channel, next_tag),
        },
    );
    let mut states: Vec<(ChannelId, u32, u32)> = walk
        .states
        .into_iter()
        .map(|(c, t)| (c, t, prio(c, t)))
        .collect();
    states.par_sort_unstable();
    let priorities = states.iter().map(|s| s.2).max().unwrap_or(0);
    let per = priority_stats(&keys, &states, priorities);
    Ok(Tagging {
        algo,
        cycle,
        scheme,
        priorities,
        keys,
        states,
        per_priority: per,
        dscp_conflicts,
        lower_bound: 0,
        effort: None,
        class_fit: None,
        tried: Vec::new(),
    })
}

/// Per priority: the channels packets occupy at it and its same-priority
/// dependencies `(in channel, out channel)`, from sorted keys and states.
pub(crate) fn priority_stats(
    keys: &[Key],
    states: &[(ChannelId, u32, u32)],
    priorities: u32,
) -> Vec<PriorityStats> {
    let mut per = vec![PriorityStats::default(); priorities as usize];
    let mut chans: Vec<(u32, ChannelId)> = states.iter().map(|s| (s.2, s.0)).collect();
    chans.sort_unstable();
    chans.dedup();
    for (p, _) in chans {
        per[p as usize - 1].channels += 1;
    }
    // Same-priority dependencies, deduplicated per node (keys are sorted by
    // node first): one list over all keys was as large as the keys. Nodes
    // in parallel, their counts summed.
    use rayon::prelude::*;
    let edges = keys
        .par_chunk_by(|a, b| a.node == b.node)
        .fold(
            || (vec![0u64; priorities as usize], Vec::new()),
            |(mut count, mut same): (Vec<u64>, Vec<(u32, ChannelId, ChannelId)>), group| {
                same.clear();
                same.extend(group.iter().filter_map(|k| {
                    (k.priority == k.next_priority).then_some((
                        k.priority,
                        k.in_channel?,
                        k.out_channel,
                    ))
                }));
                same.sort_unstable();
                same.dedup();
                for &(p, _, _) in &same {
                    count[p as usize - 1] += 1;
                }
                (count, same)
            },
        )
        .map(|(count, _)| count)
        .reduce(
            || vec![0u64; priorities as usize],
            |mut a, b| {
                a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
                a
            },
        );
    for (s, e) in per.iter_mut().zip(edges) {
        s.edges = e;
    }
    per
}

impl Tagging {
    /// One rule entry per decided key, sorted by (node, in link, tag, out
    /// link): what [`crate::rules::RuleSet::from_tagging`] installs.
    pub fn entries(&self) -> Vec<crate::compress::Entry> {
        use rayon::prelude::*;
        // Written from both cores: on fat-tree k=64 `kbounce:2` the 30M
        // entries' first touch of their pages was most of this.
        let mut entries: Vec<crate::compress::Entry> = self
            .keys
            .par_iter()
            .map(|k| crate::compress::Entry {
                node: k.node,
                in_link: k.in_channel.map(|c| c >> 1),
                tag: k.tag,
                out_link: k.out_channel >> 1,
                next_tag: k.next_tag,
                priority: k.priority,
                next_priority: k.next_priority,
            })
            .collect();
        // Sorted keys give sorted entries (a link's one channel into a
        // node stands for it there), so the sort is only a fallback.
        // Entries are distinct and totally ordered: the parallel sort
        // gives the sequential one's order.
        if !entries.par_windows(2).all(|w| w[0] <= w[1]) {
            entries.par_sort_unstable();
        }
        entries
    }

    /// Per node, the ingress map: the distinct `(tag, lossless queue)`
    /// pairs of packets arriving at its ports, including packets from its
    /// hosts, sorted.
    pub fn ingress(&self, topo: &Topology) -> Vec<Vec<(u32, u32)>> {
        let mut ingress: Vec<Vec<(u32, u32)>> = vec![Vec::new(); topo.node_count()];
        for &(c, tag, p) in &self.states {
            ingress[topo.channel_dst(c) as usize].push((tag, p));
        }
        for k in self.keys.iter().filter(|k| k.in_channel.is_none()) {
            ingress[k.node as usize].push((k.tag, k.priority));
        }
        for v in &mut ingress {
            v.sort_unstable();
            v.dedup();
        }
        ingress
    }

    /// Compressed ACL entries plus ingress map entries over all nodes: the
    /// rules the plan installs (`search`'s tie-break at equal priorities).
    pub fn rule_count(&self, topo: &Topology) -> u64 {
        let entries = self.entries();
        let ingress = self.ingress(topo);
        crate::compress::by_node(&entries, ingress.len())
            .iter()
            .zip(&ingress)
            .map(|(es, map)| crate::compress::node_counts(es, map.len()).rules())
            .sum()
    }

    /// Heap bytes held by the keys and states (for memory budgets).
    pub fn heap_bytes(&self) -> u64 {
        crate::budget::bytes_of::<Key>(self.keys.len())
            + crate::budget::bytes_of::<(u32, u32, u32)>(self.states.len())
    }
}

/// [`self_check_scanned`], scanning the keys here.
#[cfg(test)]
pub(crate) fn self_check(t: &Tagging) -> Result<()> {
    self_check_scanned(t, &KeyScan::of(&t.keys))
}

/// Checks what the stage promises: tags and priorities start at 1 and never
/// decrease, priorities fit the DSCP field, every key has one decision, and
/// each priority's same-priority dependencies are acyclic (a guard against a
/// faulty cycle-detection backend; the independent verifier checks the rules
/// again with its own code). What it reads of the keys is `scan`, their
/// [`KeyScan`].
pub(crate) fn self_check_scanned(t: &Tagging, scan: &KeyScan) -> Result<()> {
    let fail = |reason: String| {
        Err(Error::SelfCheck {
            stage: "tagging",
            reason,
        })
    };
    if let Some(i) = scan.fault {
        let k = &t.keys[i];
        if k.next_tag < k.tag || k.tag == 0 || k.next_priority < k.priority || k.priority == 0 {
            return fail(format!("key {k:?} lowers the tag or priority"));
        }
        return fail(format!("first-hop key {k:?} does not start at tag 1"));
    }
    if let Some(i) = scan.disorder {
        let at = |k: &Key| (k.node, k.in_channel, k.tag, k.out_channel);
        let (a, b) = (&t.keys[i], &t.keys[i + 1]);
        // Keys are looked up by binary search everywhere after this.
        return fail(if at(a) == at(b) {
            format!("key decided twice: {a:?} and {b:?}")
        } else {
            format!("keys out of order: {a:?} before {b:?}")
        });
    }
    if t.priorities > MAX_TAG {
        return Err(Error::Algo {
            algo: t.algo.name(),
            reason: format!(
                "needs {} priorities, more than the {MAX_TAG} a DSCP field leaves",
                t.priorities
            ),
        });
    }
    if let Some(p) = scan.cyclic_priority(&t.keys) {
        return fail(format!("priority {p}'s dependency graph has a cycle"));
    }
    Ok(())
}

/// The first priority whose same-priority edges `(in channel, out channel)`
/// contain a cycle.
#[cfg(test)]
pub(crate) fn cyclic_priority(keys: &[Key]) -> Option<u32> {
    KeyScan::of(keys).cyclic_priority(keys)
}

/// Per priority `p` (at index `p - 1`, up to the largest present), the
/// dependencies `(in channel, out channel)` of keys that keep it.
pub(crate) fn same_priority_edges(keys: &[Key]) -> Vec<Vec<(ChannelId, ChannelId)>> {
    let mut by_prio: Vec<Vec<(ChannelId, ChannelId)>> = Vec::new();
    for k in keys {
        if let Some(c1) = k.in_channel
            && k.priority == k.next_priority
        {
            let p = k.priority as usize;
            if by_prio.len() < p {
                by_prio.resize_with(p, Vec::new);
            }
            by_prio[p - 1].push((c1, k.out_channel));
        }
    }
    by_prio
}
