//! Expected lossless paths (ELPs): the paths that must stay lossless, held as
//! a *path language over channels* so that families far too large to list
//! (all shortest paths of a 2,000-switch Jellyfish, k-bounce walks of a large
//! fat-tree) are never materialised.
//!
//! A packet's *prefix* is the channel sequence it has crossed. The language
//! answers one question, [`ElpSet::successors`]: given the set of ELP prefixes
//! that end in channel `c` after `hop` channels, which channels may come next,
//! and which prefixes continue on each. Prefix sets are kept per family:
//!
//! * `shortest`: the set of sources (as a bitset over endpoints); after `hop`
//!   channels a source's prefix ends at distance `hop`, so the source alone
//!   fixes the continuations.
//! * `kbounce:K`: per bounce count `b = 0..=K`, the sources abstracted to
//!   none, one or many (`KbSources`), which is exact for k-bounce.
//! * `dor`: a flag; dimension-order continuations depend on the channel only.
//! * explicit paths (`random`, `file`): the path ids, whose position is `hop`.
//!
//! The spec grammar (`shortest+random:200`) is in `spec.rs`; each family's
//! construction in its own file.

mod count;
mod dor;
pub mod enumerate;
mod explicit;
mod kbounce;
mod kbounce_count;
mod ksp;
pub mod lfts;
mod shortest;
mod sources;
mod spec;

use crate::error::{Error, Result};
use std::collections::BTreeMap;

use tagger_generators::{ChannelId, NodeId, Topology};

pub use crate::error::Mismatch;
pub use dor::Dor;
pub use explicit::PathList;
pub use kbounce::KBounce;
pub(crate) use kbounce::KbSources;
pub use shortest::Shortest;
pub use sources::Sources;
pub use spec::{ElpSpec, FamilySpec, MAX_BOUNCES, MAX_RANDOM_PATHS, SpecError};

/// The built ELP set for one topology.
#[derive(Debug)]
pub struct ElpSet {
    /// The spec the set was built from.
    pub spec: String,
    /// Endpoints of the topology.
    pub endpoints: usize,
    /// The shortest-path family, if in the spec.
    pub shortest: Option<Shortest>,
    /// The k-bounce family, if in the spec.
    pub kbounce: Option<KBounce>,
    /// The dimension-order family, if in the spec.
    pub dor: Option<Dor>,
    /// Explicit paths (random, k-shortest and file families together), if any.
    pub explicit: Option<PathList>,
    /// The out channels of nodes with parallel links, by neighbour.
    pub(crate) parallel: Parallel,
    /// What the spec's sources leave out that a user must hear of (an
    /// `lfts:` dump routing to fewer HCA ports than the fabric has).
    pub warnings: Vec<String>,
}

/// Where a node's implicit continuations come from (see
/// [`ElpSet::successors_into`]).
enum Implicit<'a> {
    /// No implicit family continues.
    None,
    /// Only shortest paths, at a node with parallel links: by neighbour.
    Grouped(&'a Shortest, &'a Sources, &'a [(NodeId, ChannelId)]),
    /// Channel by channel.
    Each,
}

/// Per node with parallel links (two or more links to one neighbour), its
/// out channels sorted by (neighbour, channel); nothing for other nodes.
/// A shortest-path prefix continues over a link only if it continues to
/// the link's far end, so one test per neighbour settles all its links:
/// a prefix arriving at a node with 20,000 links to one neighbour costs
/// one test there, not 20,000.
#[derive(Debug, Default)]
pub(crate) struct Parallel {
    /// Per node, where its run starts in `by_neighbour` (n + 1 entries);
    /// empty when no node has parallel links.
    start: Vec<u32>,
    by_neighbour: Vec<(NodeId, ChannelId)>,
}

impl Parallel {
    /// Complexity: O(C log D) for C channels and the largest degree D.
    pub(crate) fn of(topo: &Topology) -> Self {
        let n = topo.node_count();
        let mut start = Vec::with_capacity(n + 1);
        start.push(0u32);
        let mut by_neighbour = Vec::new();
        let mut own: Vec<(NodeId, ChannelId)> = Vec::new();
        for v in 0..n as NodeId {
            own.clear();
            own.extend(
                topo.out_channels(v)
                    .iter()
                    .map(|&c| (topo.channel_dst(c), c)),
            );
            own.sort_unstable();
            if own.windows(2).any(|w| w[0].0 == w[1].0) {
                by_neighbour.extend_from_slice(&own);
            }
            start.push(u32::try_from(by_neighbour.len()).expect("channel ids fit u32"));
        }
        if by_neighbour.is_empty() {
            start = Vec::new();
        }
        Parallel {
            start,
            by_neighbour,
        }
    }

    /// Node `v`'s out channels by neighbour, if it has parallel links.
    fn of_node(&self, v: NodeId) -> Option<&[(NodeId, ChannelId)]> {
        let (lo, hi) = (*self.start.get(v as usize)?, self.start[v as usize + 1]);
        (lo < hi).then(|| &self.by_neighbour[lo as usize..hi as usize])
    }

    /// Heap bytes held.
    fn heap_bytes(&self) -> u64 {
        crate::budget::bytes_of::<u32>(self.start.capacity())
            + crate::budget::bytes_of::<(NodeId, ChannelId)>(self.by_neighbour.capacity())
    }
}

/// A set of ELP prefixes that end in the same channel after the same number of
/// hops, split by family (see the module docs).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Prefixes {
    pub(crate) shortest: Option<Sources>,
    pub(crate) kbounce: KbSources,
    pub(crate) dor: bool,
    pub(crate) paths: Vec<u32>,
}

impl Prefixes {
    /// Heap bytes behind this record (for memory budgets).
    pub fn heap_bytes(&self) -> u64 {
        self.shortest.as_ref().map_or(0, Sources::heap_bytes)
            + crate::budget::bytes_of::<u32>(self.paths.capacity())
    }

    /// Whether no prefix is left in any family.
    pub fn is_empty(&self) -> bool {
        self.shortest.is_none() && self.kbounce.is_empty() && !self.dor && self.paths.is_empty()
    }

    /// Adds every prefix of `other`.
    pub fn union(&mut self, other: Prefixes) {
        match (self.shortest.as_mut(), other.shortest) {
            (Some(x), Some(y)) => x.union(y),
            (None, Some(y)) => self.shortest = Some(y),
            _ => {}
        }
        self.kbounce.union(&other.kbounce);
        self.dor |= other.dor;
        self.paths.extend(other.paths);
    }

    /// Drops the implicit-family prefixes already in `seen` (their
    /// continuations were explored) and records the rest in `seen`. Explicit
    /// paths are kept: each path id is at one position per hop. So are
    /// shortest-path prefixes, and they are not recorded: a source (of a
    /// failure scenario's block) reaches a channel only after as many hops
    /// as the channel's tail is from it, so no state meets the same source
    /// at two hops, and recording them only copied every prefix set once
    /// more (on Jellyfish 2000, a copy of each of the walk's bitsets).
    pub fn subtract_seen(&mut self, seen: &mut Prefixes) {
        self.kbounce.subtract_seen(&mut seen.kbounce);
        if self.dor && seen.dor {
            self.dor = false;
        }
        seen.dor |= self.dor;
    }
}

/// Summary numbers of an ELP set, computed without enumerating paths.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ElpCounts {
    /// Number of ELPs (node sequences; parallel links do not multiply them).
    pub paths: u128,
    /// False when `paths` saturated, or when families of a union may overlap
    /// so `paths` is the sum of the parts (an upper bound).
    pub paths_exact: bool,
    /// Hops of the longest ELP.
    pub longest: u32,
    /// Ordered endpoint pairs with at least one ELP.
    pub pairs_covered: u64,
    /// Ordered endpoint pairs.
    pub pairs_total: u64,
}

impl ElpSet {
    /// The ELP of a path file (one path per line, node ids separated by
    /// spaces: the `file:PATH` family), e.g. the paths a plan must keep
    /// lossless when it is verified or exported.
    ///
    /// # Errors
    /// As [`ElpSet::build`] of `file:PATH`.
    pub fn from_path_file(topo: &Topology, path: &std::path::Path) -> Result<ElpSet> {
        ElpSet::build(topo, &ElpSpec::parse(&format!("file:{}", path.display()))?)
    }

    /// Builds the language of `spec` on `topo`: a prefix automaton, not a
    /// list of paths, so sets with billions of paths stay small.
    ///
    /// ```
    /// use tagger::elp::{ElpSet, ElpSpec};
    /// let t = tagger::TopologySpec::parse("fattree:k=4")?.build()?;
    /// let elp = ElpSet::build(&t, &ElpSpec::parse("kbounce:1")?)?;
    /// let c = elp.counts(&t);
    /// assert_eq!(c.pairs_covered, c.pairs_total); // every ToR pair has a path
    /// assert_eq!(c.longest, 8); // up to a core and down, bounce at a ToR, again
    /// # Ok::<(), tagger::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::ElpTopology`] when a family does not apply to the topology
    /// (no endpoints, `kbounce` without levels, `dor` on a family without
    /// dimensions, `random` finding no walk for a pair), or a path file
    /// error.
    pub fn build(topo: &Topology, spec: &ElpSpec) -> Result<Self> {
        let mismatch = |cause: Mismatch| Error::ElpTopology {
            spec: spec.text.clone(),
            cause,
        };
        if topo.endpoints().len() < 2 {
            return Err(mismatch(Mismatch::TooFewEndpoints {
                topology: topo.name().to_string(),
                endpoints: topo.endpoints().len(),
            }));
        }
        let mut set = ElpSet {
            spec: spec.text.clone(),
            endpoints: topo.endpoints().len(),
            shortest: None,
            kbounce: None,
            dor: None,
            explicit: None,
            parallel: Parallel::of(topo),
            warnings: Vec::new(),
        };
        let mut lists = Vec::new();
        for fam in &spec.families {
            match fam {
                FamilySpec::Shortest => set.shortest = Some(Shortest::build(topo)),
                FamilySpec::KBounce { k } => {
                    set.kbounce = Some(KBounce::build(topo, *k).map_err(mismatch)?)
                }
                FamilySpec::Dor => set.dor = Some(Dor::build(topo).map_err(mismatch)?),
                FamilySpec::Random { n, maxlen, seed } => {
                    lists.push(PathList::random(topo, *n, *maxlen, *seed).map_err(mismatch)?)
                }
                FamilySpec::File { path } => lists.push(PathList::read(topo, path)?),
                FamilySpec::Lfts { path } => {
                    let r = lfts::read_routes(topo, path)?;
                    if let Some(w) = r.shortfall() {
                        set.warnings.push(format!("lfts:{}: {w}", path.display()));
                    }
                    lists.push(r.paths);
                }
                FamilySpec::Ksp { k, pairs, seed } => lists.push(ksp::ksp(topo, *k, *pairs, *seed)),
            }
        }
        if !lists.is_empty() {
            set.explicit = Some(PathList::union(topo, lists));
        }
        Ok(set)
    }

    /// Whether the ELP is the shortest-path family alone (no k-bounce,
    /// dimension-order or explicit paths beside it).
    pub fn shortest_alone(&self) -> bool {
        self.shortest.is_some()
            && self.kbounce.is_none()
            && self.dor.is_none()
            && self.explicit.is_none()
    }

    /// Whether the ELP is the k-bounce family alone.
    pub fn kbounce_alone(&self) -> bool {
        self.kbounce.is_some()
            && self.shortest.is_none()
            && self.dor.is_none()
            && self.explicit.is_none()
    }

    /// Initial prefixes: for every first channel of an ELP, the prefixes
    /// (sources, paths) that start with it, in channel order.
    pub fn initial(&self, topo: &Topology) -> Vec<(ChannelId, Prefixes)> {
        let mut out: BTreeMap<ChannelId, Prefixes> = BTreeMap::new();
        for (i, &s) in topo.endpoints().iter().enumerate() {
            for &c in topo.out_channels(s) {
                let mut p = Prefixes::default();
                if let Some(sp) = &self.shortest {
                    p.shortest = sp.first_hop(topo, i, c);
                }
                if let Some(kb) = &self.kbounce {
                    p.kbounce = kb.first_hop(i, c);
                }
                if let Some(d) = &self.dor {
                    p.dor = d.first_hop(topo, c);
                }
                if !p.is_empty() {
                    out.insert(c, p);
                }
            }
        }
        if let Some(ex) = &self.explicit {
            for (c, ids) in ex.first_hops(topo) {
                out.entry(c).or_default().paths = ids;
            }
        }
        out.into_iter().collect()
    }

    /// The continuations of the prefixes `p` that end in channel `c` after
    /// `hop` channels: every next channel with the prefixes that continue on
    /// it, in channel order.
    pub fn successors(
        &self,
        topo: &Topology,
        c: ChannelId,
        hop: u32,
        p: &Prefixes,
    ) -> Vec<(ChannelId, Prefixes)> {
        let (mut chans, mut prefs) = (Vec::new(), Vec::new());
        self.successors_into(topo, c, hop, p, &mut chans, &mut prefs);
        chans.into_iter().zip(prefs).collect()
    }

    /// [`ElpSet::successors`], appended to `chans` and `prefs` (one entry
    /// each per continuation).
    pub fn successors_into(
        &self,
        topo: &Topology,
        c: ChannelId,
        hop: u32,
        p: &Prefixes,
        chans: &mut Vec<ChannelId>,
        prefs: &mut Vec<Prefixes>,
    ) {
        let v: NodeId = topo.channel_dst(c);
        let start = chans.len();
        match self.shortest_only(v, p) {
            Implicit::None => {}
            Implicit::Grouped(sp, src, runs) => {
                let mut found: Vec<(ChannelId, Sources)> = Vec::new();
                for run in runs.chunk_by(|a, b| a.0 == b.0) {
                    if sp.continues_to(src, hop, run[0].0) {
                        found.extend(
                            run.iter()
                                .filter_map(|&(_, c2)| Some((c2, sp.step(topo, src, hop, c2)?))),
                        );
                    }
                }
                found.sort_unstable_by_key(|e| e.0);
                for (c2, s) in found {
                    chans.push(c2);
                    prefs.push(Prefixes {
                        shortest: Some(s),
                        ..Default::default()
                    });
                }
            }
            Implicit::Each => self.each_successor(topo, c, hop, p, chans, prefs),
        }
        if let Some(ex) = &self.explicit
            && !p.paths.is_empty()
        {
            let implicit = chans.len();
            for (c2, ids) in ex.step(topo, &p.paths, hop) {
                match chans[start..implicit].iter().position(|&x| x == c2) {
                    Some(i) => prefs[start + i].paths = ids,
                    None => {
                        chans.push(c2);
                        prefs.push(Prefixes {
                            paths: ids,
                            ..Default::default()
                        });
                    }
                }
            }
            if chans.len() > implicit {
                // Out-channels of a node are in id order, and so are the
                // explicit continuations; interleave the two runs.
                let mut both: Vec<(ChannelId, Prefixes)> =
                    chans.drain(start..).zip(prefs.drain(start..)).collect();
                both.sort_by_key(|(x, _)| *x);
                for (x, q) in both {
                    chans.push(x);
                    prefs.push(q);
                }
            }
        }
    }

    /// The implicit families' continuations, one out channel at a time.
    fn each_successor(
        &self,
        topo: &Topology,
        c: ChannelId,
        hop: u32,
        p: &Prefixes,
        chans: &mut Vec<ChannelId>,
        prefs: &mut Vec<Prefixes>,
    ) {
        let v: NodeId = topo.channel_dst(c);
        for &c2 in topo.out_channels(v) {
            let mut q = Prefixes::default();
            if let (Some(sp), Some(src)) = (&self.shortest, &p.shortest) {
                q.shortest = sp.step(topo, src, hop, c2);
            }
            if let Some(kb) = &self.kbounce
                && !p.kbounce.is_empty()
            {
                q.kbounce = kb.step(&p.kbounce, c, c2);
            }
            if let Some(d) = &self.dor {
                q.dor = p.dor && d.step(topo, c, c2);
            }
            if !q.is_empty() {
                chans.push(c2);
                prefs.push(q);
            }
        }
    }

    /// How `p`'s implicit families continue from node `v`: not at all, by
    /// neighbour (only shortest-path prefixes, at a node with parallel
    /// links), or channel by channel.
    fn shortest_only<'a>(&'a self, v: NodeId, p: &'a Prefixes) -> Implicit<'a> {
        let kbounce = self.kbounce.is_some() && !p.kbounce.is_empty();
        let dor = self.dor.is_some() && p.dor;
        let shortest = match (&self.shortest, &p.shortest) {
            (Some(sp), Some(src)) => Some((sp, src)),
            _ => None,
        };
        match (shortest, kbounce || dor) {
            (None, false) => Implicit::None,
            (Some((sp, src)), false) => match self.parallel.of_node(v) {
                Some(runs) => Implicit::Grouped(sp, src, runs),
                None => Implicit::Each,
            },
            _ => Implicit::Each,
        }
    }

    /// The channels [`ElpSet::successors_into`] would append for the same
    /// arguments, in the same order, without building their prefix sets
    /// (the walk asks for the channels first, to collect a hop's keys, and
    /// builds the sets only once the keys are decided).
    pub fn successor_channels(
        &self,
        topo: &Topology,
        c: ChannelId,
        hop: u32,
        p: &Prefixes,
        chans: &mut Vec<ChannelId>,
    ) {
        let v: NodeId = topo.channel_dst(c);
        let start = chans.len();
        match self.shortest_only(v, p) {
            Implicit::None => {}
            Implicit::Grouped(sp, src, runs) => {
                let at = chans.len();
                for run in runs.chunk_by(|a, b| a.0 == b.0) {
                    if sp.continues_to(src, hop, run[0].0) {
                        chans.extend(
                            run.iter()
                                .map(|e| e.1)
                                .filter(|&c2| sp.continues(topo, src, hop, c2)),
                        );
                    }
                }
                chans[at..].sort_unstable();
            }
            Implicit::Each => {
                for &c2 in topo.out_channels(v) {
                    let any = matches!((&self.shortest, &p.shortest),
                            (Some(sp), Some(src)) if sp.continues(topo, src, hop, c2))
                        || self.kbounce.as_ref().is_some_and(|kb| {
                            !p.kbounce.is_empty() && !kb.step(&p.kbounce, c, c2).is_empty()
                        })
                        || self
                            .dor
                            .as_ref()
                            .is_some_and(|d| p.dor && d.step(topo, c, c2));
                    if any {
                        chans.push(c2);
                    }
                }
            }
        }
        if let Some(ex) = &self.explicit
            && !p.paths.is_empty()
        {
            let implicit = chans.len();
            for (c2, _) in ex.step(topo, &p.paths, hop) {
                if !chans[start..implicit].contains(&c2) {
                    chans.push(c2);
                }
            }
            if chans.len() > implicit {
                chans[start..].sort_unstable();
            }
        }
    }

    /// True when the prefixes `p` ending in channel `c` after `hop` channels
    /// include a complete ELP (the packet may be delivered here).
    pub fn accepts(&self, topo: &Topology, c: ChannelId, hop: u32, p: &Prefixes) -> bool {
        let d = topo.channel_dst(c);
        if !topo.is_endpoint(d) {
            return false;
        }
        p.shortest.is_some()
            || (p.dor && self.dor.is_some())
            || self
                .kbounce
                .as_ref()
                .is_some_and(|kb| kb.accepts(topo, c, &p.kbounce))
            || self
                .explicit
                .as_ref()
                .is_some_and(|ex| p.paths.iter().any(|&id| ex.len_of(id) == hop))
    }

    /// Heap bytes held by the language's tables (for memory budgets).
    pub fn heap_bytes(&self) -> u64 {
        self.shortest.as_ref().map_or(0, Shortest::heap_bytes)
            + self.kbounce.as_ref().map_or(0, KBounce::heap_bytes)
            + self.dor.as_ref().map_or(0, Dor::heap_bytes)
            + self.explicit.as_ref().map_or(0, PathList::heap_bytes)
            + self.parallel.heap_bytes()
    }

    /// Bytes [`ElpSet::counts`] works with beyond the tables: the k-bounce
    /// DP ([`KBounce::count_bytes`]) and the pair sets of explicit paths.
    pub fn count_bytes(&self, topo: &Topology) -> u64 {
        let e = topo.endpoints().len();
        let pairs = crate::budget::bytes_of::<u64>(e.saturating_mul(e.div_ceil(64)));
        match (&self.kbounce, &self.explicit) {
            (Some(kb), _) => kb.count_bytes(topo),
            (None, Some(_)) => pairs,
            (None, None) => 0,
        }
    }

    /// Path counts, longest ELP and pair coverage by dynamic programming.
    pub fn counts(&self, topo: &Topology) -> ElpCounts {
        count::counts(self, topo)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A spec's grammar errors carry a typed cause a caller can match, and
    /// read as they always did.
    #[test]
    fn spec_errors_are_typed() {
        let cause = |text: &str| match ElpSpec::parse(text) {
            Err(crate::Error::ElpSyntax { spec, cause }) => {
                assert_eq!(spec, text.trim());
                cause
            }
            other => panic!("{text}: {other:?}"),
        };
        assert_eq!(cause(" "), SpecError::Empty);
        assert_eq!(cause("kbounce:9"), SpecError::TooManyBounces { k: 9 });
        assert_eq!(cause("kbounce"), SpecError::KBounceArity);
        assert_eq!(
            cause("shortest+shortest"),
            SpecError::Twice {
                name: "shortest".into()
            }
        );
        assert_eq!(
            cause("dor:3"),
            SpecError::NoParameters {
                family: "dor".into(),
                got: "3".into()
            }
        );
        assert_eq!(cause("random:0"), SpecError::RandomCount { n: 0 });
        assert_eq!(cause("ksp:8,pairs=0"), SpecError::KspNoPairs);
        assert_eq!(
            cause("ksp:8,depth=2"),
            SpecError::UnknownParameter {
                family: "ksp".into(),
                key: "depth".into()
            }
        );
        assert!(matches!(
            cause("random:-5"),
            SpecError::NotACount { ref family, ref key, .. } if family == "random" && key == "N"
        ));
        assert!(matches!(cause("kbounce:k=1,k=2"), SpecError::Params { .. }));
        let e = ElpSpec::parse("lfts:").unwrap_err();
        assert_eq!(
            e.to_string(),
            "ELP 'lfts:': lfts: needs a path, e.g. lfts:opensm-lfts.dump"
        );
        assert!(std::error::Error::source(&e).is_some());
        assert_eq!(
            cause("spf").to_string(),
            "unknown family 'spf' (expected shortest, kbounce:K, dor, ksp:K, random:N, file:PATH)"
        );
    }

    /// `successor_channels` lists exactly the channels `successors_into`
    /// finds, in its order, at every prefix set met in the first hops of
    /// each family and of a union with explicit paths.
    #[test]
    fn successor_channels_match_successors() {
        for (topo, elp) in [
            (
                "jellyfish:n=40,ports=8,r=5,seed=3",
                "shortest+random:300,seed=2",
            ),
            ("fattree:k=6", "kbounce:2"),
            ("hyperx:l=2,s=4,t=1", "dor+ksp:3,pairs=30"),
            ("bcube:n=3,k=1", "dor+shortest"),
        ] {
            let t = tagger_generators::TopologySpec::parse(topo)
                .unwrap()
                .build()
                .unwrap();
            let e = ElpSet::build(&t, &ElpSpec::parse(elp).unwrap()).unwrap();
            let mut level = e.initial(&t);
            let mut compared = 0;
            for hop in 1..6 {
                let mut next = Vec::new();
                for (c, p) in &level {
                    let (mut chans, mut prefs, mut only) = (Vec::new(), Vec::new(), Vec::new());
                    e.successors_into(&t, *c, hop, p, &mut chans, &mut prefs);
                    e.successor_channels(&t, *c, hop, p, &mut only);
                    assert_eq!(only, chans, "{topo} {elp} hop {hop} channel {c}");
                    compared += chans.len();
                    next.extend(chans.into_iter().zip(prefs));
                }
                next.truncate(400);
                level = next;
            }
            assert!(
                compared > 100,
                "{topo} {elp}: only {compared} channels compared"
            );
        }
    }

    /// At nodes with parallel links, continuations found by neighbour are
    /// those found channel by channel (the same ELP without the index), in
    /// the same order, prefix sets included; with failed links too.
    #[test]
    fn parallel_links_continue_as_channel_by_channel() {
        for (topo, elp) in [
            ("leafspine:leaves=5,spines=3,hosts=2,links=3", "shortest"),
            ("hyperx:l=2,s=3,k=3,t=1", "shortest+random:40,seed=4"),
            ("hyperx:l=2,s=3,k=2,t=1", "shortest+dor"),
        ] {
            let t = tagger_generators::TopologySpec::parse(topo)
                .unwrap()
                .build()
                .unwrap();
            let mut dead = vec![false; t.link_count()];
            dead[1] = true;
            let build = |healthy: bool| {
                if healthy {
                    ElpSet::build(&t, &ElpSpec::parse(elp).unwrap()).unwrap()
                } else {
                    crate::failures::converged_elp(&t, &dead, "link 1")
                }
            };
            for healthy in [true, false] {
                let grouped = build(healthy);
                assert!(
                    grouped.parallel.of_node(0).is_some(),
                    "{topo}: node 0 has parallel links"
                );
                let mut each = build(healthy);
                each.parallel = Parallel::default();
                let mut level = grouped.initial(&t);
                let mut compared = 0;
                for hop in 1..5 {
                    let mut next = Vec::new();
                    for (c, p) in &level {
                        let p = Prefixes {
                            shortest: p.shortest.clone(),
                            ..Default::default()
                        };
                        let (mut c1, mut p1, mut c2, mut p2) =
                            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
                        grouped.successors_into(&t, *c, hop, &p, &mut c1, &mut p1);
                        each.successors_into(&t, *c, hop, &p, &mut c2, &mut p2);
                        assert_eq!((&c1, &p1), (&c2, &p2), "{topo} {elp} hop {hop} channel {c}");
                        let mut only = Vec::new();
                        grouped.successor_channels(&t, *c, hop, &p, &mut only);
                        assert_eq!(only, c1);
                        compared += c1.len();
                        next.extend(c1.into_iter().zip(p1));
                    }
                    next.truncate(300);
                    level = next;
                }
                assert!(compared > 50, "{topo} {elp}: only {compared} compared");
            }
        }
    }

    #[test]
    fn spec_parsing() {
        let s = ElpSpec::parse("shortest+random:20000,seed=3+kbounce:2").unwrap();
        assert_eq!(s.families.len(), 3);
        assert_eq!(s.kbounce(), Some(2));
        assert_eq!(
            ElpSpec::parse("random:5,maxlen=7").unwrap().families[0],
            FamilySpec::Random {
                n: 5,
                maxlen: Some(7),
                seed: 1
            }
        );
        for (bad, msg) in [
            ("", "empty"),
            ("kbounce", "exactly one"),
            ("kbounce:x", "K = x"),
            ("kbounce:99", "exceeds"),
            ("random:0", "N = 0"),
            ("random:5,foo=1", "unknown parameter 'foo'"),
            ("shortest:3", "no parameters"),
            ("updown", "unknown family 'updown'"),
            ("shortest+shortest", "given twice"),
            ("file:", "needs a path"),
        ] {
            let e = ElpSpec::parse(bad).unwrap_err().to_string();
            assert!(e.contains(msg), "{bad}: {e}");
        }
    }
}
