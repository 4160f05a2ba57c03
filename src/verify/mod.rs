//! Independent verification of a rule set. It reads only the topology, the
//! entries and (for replay) the ELP language; it shares no code with the
//! tagging algorithms or their cycle detection.
//!
//! Checks: (a) each key `(node, in_link, tag, out_link)` has one action;
//! (b) the queue of a packet state is a function of `(node, in_link, tag)`;
//! (c) priorities never decrease along an entry; (d) per priority, the
//! channel dependency graph that the entries allow is acyclic (on failure one
//! cycle is printed); (e) every ELP transition (or every given path, on every
//! parallel link) finds a lossless entry from its first hop to its last.

mod cycles;
mod entries;
mod replay;
mod violation;

pub use violation::Violation;

use crate::elp::ElpSet;
use crate::rules::RuleSet;
use std::fmt;
use tagger_generators::{LinkId, Topology};

/// Outcome of verification: the first violation of each kind, if any.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// Entries checked.
    pub entries: usize,
    /// True when the entries were read back from an export: every lossless
    /// transition the switches apply, ELP or not, which is more than the
    /// plan's entries where a port map covers keys no ELP uses. Only the
    /// report's wording depends on it.
    pub read_back: bool,
    /// Lossless priorities the entries use.
    pub priorities: u32,
    /// Distinct same-priority dependencies checked for cycles.
    pub dependency_edges: u64,
    /// ELP transitions replayed.
    pub transitions_replayed: u64,
    /// The first violation of each kind, in check order.
    pub violations: Vec<Violation>,
}

impl Report {
    /// Whether no check found a violation.
    pub fn ok(&self) -> bool {
        self.violations.is_empty()
    }

    /// The first violation of `kind` (see [`Violation::kind`]), if any.
    pub fn find(&self, kind: &str) -> Option<&Violation> {
        self.violations.iter().find(|v| v.kind() == kind)
    }

    fn violate(&mut self, v: Violation) {
        if !self.violations.iter().any(|x| x.kind() == v.kind()) {
            self.violations.push(v);
        }
    }
}

/// A report is the cause [`crate::Error::Verification`] carries.
impl std::error::Error for Report {}

impl crate::Error {
    /// The verifier's report, where the plan was refused by the verifier
    /// ([`crate::Error::Verification`]).
    ///
    /// ```
    /// use tagger::verify::{Report, Violation};
    /// let mut report = Report::default();
    /// report.violations.push(Violation::Header { field: "topology", reason: "x".into() });
    /// let e = tagger::Error::Verification { what: String::new(), report: Box::new(report.clone()) };
    /// assert_eq!(e.verification_report(), Some(&report));
    /// assert!(e.to_string().contains("[header]"));
    /// assert_eq!(tagger::Error::Update { reason: "no".into() }.verification_report(), None);
    /// ```
    pub fn verification_report(&self) -> Option<&Report> {
        match self {
            crate::Error::Verification { report, .. } => report.downcast_ref::<Report>(),
            _ => None,
        }
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.ok() {
            write!(
                f,
                "verified: deadlock-free with {} lossless {} ({}, {} same-priority dependencies, {} ELP transitions replayed)",
                self.priorities,
                if self.priorities == 1 {
                    "priority"
                } else {
                    "priorities"
                },
                if self.read_back {
                    format!(
                        "{} lossless transitions as the switches apply them, ELP or not",
                        self.entries
                    )
                } else {
                    format!("{} lossless entries", self.entries)
                },
                self.dependency_edges,
                self.transitions_replayed
            )
        } else {
            write!(f, "NOT verified:")?;
            for v in &self.violations {
                write!(f, "\n  [{}] {v}", v.kind())?;
            }
            Ok(())
        }
    }
}

/// Per node, `(in_link, tag, out_link) -> (next_tag, priority, next_priority)`:
/// the indices of the node's well-formed entries sorted by key, one per
/// key (the last in the file where a key repeats), searched by bisection.
/// Four bytes per entry: a hash map per node held about 30 (Jellyfish
/// 10000: 6.4M entries, about 300 MB against 26 MB), and the replay's
/// lookups stay within one node's entries.
struct Table<'a> {
    entries: &'a [crate::rules::Entry],
    /// Node `v`'s entries are `idx[off[v]..off[v + 1]]`.
    off: Vec<u32>,
    idx: Vec<u32>,
}

impl Table<'_> {
    /// The action of `node`'s entry for `key`, if any.
    fn get(&self, node: usize, key: (Option<LinkId>, u32, LinkId)) -> Option<(u32, u32, u32)> {
        self.in_run(self.run(node, key.0, key.1), key.2)
    }

    /// `node`'s entries matching `(in_link, tag)`, by out link: every
    /// lookup of one replayed state falls in this run, so it is found once
    /// per state and each transition searches only its few entries.
    fn run(&self, node: usize, in_link: Option<LinkId>, tag: u32) -> &[u32] {
        let mine = &self.idx[self.off[node] as usize..self.off[node + 1] as usize];
        let at = |i: &u32| {
            let e = &self.entries[*i as usize];
            (e.in_link, e.tag)
        };
        let lo = mine.partition_point(|i| at(i) < (in_link, tag));
        let len = mine[lo..].partition_point(|i| at(i) == (in_link, tag));
        &mine[lo..lo + len]
    }

    /// The action of the entry of `run` ([`Table::run`]) for `out_link`.
    fn in_run(&self, run: &[u32], out_link: LinkId) -> Option<(u32, u32, u32)> {
        let i = run
            .binary_search_by_key(&out_link, |&i| self.entries[i as usize].out_link)
            .ok()?;
        let e = &self.entries[run[i] as usize];
        Some((e.next_tag, e.priority, e.next_priority))
    }
}

/// An entry's match key.
fn entry_key(e: &crate::rules::Entry) -> (Option<LinkId>, u32, LinkId) {
    (e.in_link, e.tag, e.out_link)
}

/// What the switches the rules are for can hold.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Limits {
    /// Lossless queues per port: a rule set using more priorities is
    /// refused (`None`: no limit).
    pub max_priorities: Option<u32>,
    /// Tags the packet header can carry: a rule set using a larger tag is
    /// refused (`None`: no limit). DSCP has 64 values ([`DSCP_TAGS`]).
    pub max_tags: Option<u32>,
}

impl Limits {
    /// What a stock switch holds: [`SWITCH_QUEUES`] lossless queues per
    /// port and [`DSCP_TAGS`] tags; `tagger verify`'s and `tagger run`'s
    /// defaults.
    pub const SWITCH: Limits = Limits {
        max_priorities: Some(SWITCH_QUEUES),
        max_tags: Some(DSCP_TAGS),
    };
}

/// Values of the DSCP field (6 bits), which carries the tag.
pub const DSCP_TAGS: u32 = 64;

/// Lossless queues per port on most switch ASICs (8 queues per port, and
/// at most all of them lossless): the `tagger verify` default.
pub const SWITCH_QUEUES: u32 = 8;

/// Bytes [`verify`] works with, before it starts: the replay's prefix
/// record per packet state (`states`, the tagging's count), and for the
/// entry checks' working arrays (entry indices grouped and sorted, the
/// same-priority dependencies) at most two entries' size per entry.
pub fn estimate_bytes(topo: &Topology, elp: &ElpSet, states: usize, rules: &RuleSet) -> u64 {
    let per_state = std::mem::size_of::<crate::elp::Prefixes>() as u64
        + elp
            .shortest
            .as_ref()
            .map_or(0, |_| 8 * topo.endpoints().len().div_ceil(64) as u64);
    per_state * states as u64
        + 2 * crate::budget::bytes_of::<crate::rules::Entry>(rules.entries.len())
}

/// Verifies `rules` on `topo`; with `elp`, also replays its transitions.
/// No limit on priorities (see [`verify_within`]).
///
/// ```
/// use tagger::elp::{ElpSet, ElpSpec};
/// use tagger::rules::RuleSet;
/// use tagger::verify::{Violation, verify};
/// let t = tagger::TopologySpec::parse("fattree:k=4")?.build()?;
/// let elp = ElpSet::build(&t, &ElpSpec::parse("kbounce:1")?)?;
/// let tagging = tagger::tagging::tag(&t, &elp, "clos".parse()?, Default::default())?;
/// let mut rules = RuleSet::from_tagging(&t, &tagging);
/// assert!(verify(&t, &rules, Some(&elp)).ok());
/// // Keep every bounced packet at priority 1: the cycle the plan broke
/// // comes back, and the verifier names it.
/// for e in &mut rules.entries {
///     (e.next_tag, e.priority, e.next_priority) = (1, 1, 1);
///     e.tag = 1;
/// }
/// rules.priorities = 1;
/// let report = verify(&t, &rules, Some(&elp));
/// assert!(matches!(report.find("cycle"), Some(Violation::Cycle { priority: 1, .. })));
/// # Ok::<(), tagger::Error>(())
/// ```
pub fn verify(topo: &Topology, rules: &RuleSet, elp: Option<&ElpSet>) -> Report {
    verify_within(topo, rules, elp, &Limits::default())
}

/// [`verify`], also checking the rule set against `limits`. Besides the
/// entries, every header field it reads is checked: the topology name
/// against `topo`'s, `priorities` against the entries', and `initial_tag`
/// (what hosts send) against the host-port entries, and the replay starts
/// from it.
///
/// The checks run in this order, and the report keeps the first violation
/// of each kind: the header against the topology; the entries
/// ([`entries`](self): well-formed, one action per key, one queue per
/// state, no decrease); the priority count against the header and
/// `limits`; each priority's dependency graph acyclic; the ELP replay.
///
/// Complexity: O(E log E + C + T) for E entries, C channels and T replayed
/// transitions, the entry checks and the replay in parallel.
pub fn verify_within(
    topo: &Topology,
    rules: &RuleSet,
    elp: Option<&ElpSet>,
    limits: &Limits,
) -> Report {
    let mut r = Report {
        entries: rules.entries.len(),
        ..Default::default()
    };
    for v in check_header(topo, rules) {
        r.violate(v);
    }
    let host_tags = rules.host_tags();
    let checked = entries::check(topo, rules, &host_tags);
    for v in checked.findings {
        r.violate(v);
    }
    r.priorities = rules
        .entries
        .iter()
        .map(|e| e.next_priority.max(e.priority))
        .max()
        .unwrap_or(0);
    if rules.priorities != r.priorities {
        r.violate(Violation::Header {
            field: "priorities",
            reason: format!(
                "the header says {} priorities, the entries use {}",
                rules.priorities, r.priorities
            ),
        });
    }
    if let Some(max) = limits.max_priorities
        && r.priorities > max
    {
        r.violate(Violation::Priorities {
            used: r.priorities,
            queues: max,
        });
    }
    if let Some(max) = limits.max_tags {
        let used = rules
            .entries
            .iter()
            .map(|e| e.tag.max(e.next_tag))
            .chain(host_tags.iter().copied())
            .max()
            .unwrap_or(0);
        if used > max {
            r.violate(Violation::Tags { used, max });
        }
    }
    let (edges, cycle) = cycles::priority_cycles(topo, &checked.same);
    r.dependency_edges += edges;
    if let Some(v) = cycle {
        r.violate(v);
    }
    // Every class's packets follow every ELP, from the tag its hosts send.
    if let Some(elp) = elp {
        for &tag in &host_tags {
            replay::replay(topo, &checked.table, elp, tag, &mut r);
        }
    }
    r
}

/// The header against the topology: its name, `initial_tag` and `classes`.
fn check_header(topo: &Topology, rules: &RuleSet) -> Vec<Violation> {
    let mut found = Vec::new();
    // A topology file without a name is named by the path it was read
    // from, which differs between `run file:./net.json` and `verify
    // --topology /abs/net.json`: the same file name is the same topology.
    let same_topology = rules.topology == topo.name()
        || std::path::Path::new(&rules.topology).file_name()
            == std::path::Path::new(topo.name()).file_name()
            && (rules.topology.contains('/') || topo.name().contains('/'));
    if !same_topology {
        found.push(Violation::Header {
            field: "topology",
            reason: format!(
                "the rules are for topology '{}', but the topology is '{}'",
                rules.topology,
                topo.name()
            ),
        });
    }
    if rules.initial_tag == 0 {
        found.push(Violation::Header {
            field: "initial_tag",
            reason: "initial_tag is 0: tags start at 1 (0 is the lossy class)".into(),
        });
    }
    if !rules.classes.is_empty()
        && (rules.classes[0] != rules.initial_tag || rules.classes.windows(2).any(|w| w[0] >= w[1]))
    {
        found.push(Violation::Header {
            field: "classes",
            reason: format!(
                "classes {:?} must rise strictly and start at initial_tag {}",
                rules.classes, rules.initial_tag
            ),
        });
    }
    found
}

/// Check (d) on a subset of the entries: the same-priority dependencies
/// that the entries `used(i)` create are acyclic per priority. This is how
/// traffic the plan never anticipated (routes after a failure) is proven
/// safe: a packet no entry matches is lossy and creates no dependency, so
/// the entries it did use are all its dependencies.
///
/// # Returns
/// The number of distinct same-priority dependencies, or the cycle found.
///
/// # Errors
/// [`Violation::Cycle`] when a priority's graph has a cycle.
pub fn check_used(
    topo: &Topology,
    rules: &RuleSet,
    used: impl Fn(usize) -> bool + Sync,
) -> std::result::Result<u64, Violation> {
    let same = cycles::same_by_priority(topo, &rules.entries, used);
    match cycles::priority_cycles(topo, &same) {
        (edges, None) => Ok(edges),
        (_, Some(cycle)) => Err(cycle),
    }
}
