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
//! Reference: the greedy algorithm is Tagger's (Hu et al., "Tagger:
//! practical PFC deadlock prevention in data center networks", CoNEXT
//! 2017, §5); seeding it with installed state is this project's.

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
    let mut d = Extender {
        n: seed.vertices,
        dags: Vec::new(),
        kept: &seed.kept,
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

struct Extender<'a> {
    n: usize,
    dags: Vec<OrderedDag>,
    kept: &'a HashMap<(ChannelId, u32, ChannelId), u32>,
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
                Ok(if self.dag(t).try_add_edge(c1, c2) {
                    t
                } else {
                    t + 1
                })
            })
            .collect()
    }
}
