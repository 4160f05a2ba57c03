//! `tagger elp`: what an ELP family amounts to on a topology before any
//! tagging: its paths, the pairs it covers, the channels it uses and the
//! size of the brute-force tagged graph that bounds every algorithm's work.

use super::build_elp;
use crate::budget::Budget;
use crate::elp::{ElpCounts, ElpSet, ElpSpec};
use crate::error::Result;
use std::fmt;
use std::time::Instant;
use tagger_generators::Topology;

/// Seconds of an ELP study.
#[derive(Clone, Copy, Debug, Default)]
pub struct ElpSeconds {
    /// Building the ELP language.
    pub build: f64,
    /// Counting its paths (side by side with the tagged graph).
    pub count: f64,
    /// Building the brute-force tagged graph.
    pub tagged_graph: f64,
    /// The whole study.
    pub total: f64,
}

/// An ELP's figures ([`elp_report`]).
#[derive(Clone, Debug)]
pub struct ElpReport {
    /// The topology's name.
    pub topology: String,
    /// The ELP spec as written.
    pub elp: String,
    /// Path counts, longest path, pairs covered.
    pub counts: ElpCounts,
    /// Channels some ELP uses.
    pub channels_used: usize,
    /// Channels of the topology.
    pub channels: usize,
    /// Nodes `(channel, hop)` of the brute-force tagged graph.
    pub tagged_nodes: usize,
    /// Its edges (rule keys past the first hops).
    pub tagged_edges: usize,
    /// Stage seconds.
    pub seconds: ElpSeconds,
}

/// Builds `spec`'s ELP on `topo` within `budget` and measures it; the path
/// counts and the tagged graph are independent and run side by side, the
/// counting filling the cores while the walk is in its sequential steps.
///
/// Returns the ELP (e.g. to write its paths) and its report.
///
/// # Errors
/// As [`build_elp`] and [`crate::tagging::tagged_graph`].
pub fn elp_report(topo: &Topology, spec: &ElpSpec, budget: &Budget) -> Result<(ElpSet, ElpReport)> {
    let t = Instant::now();
    let elp = build_elp(topo, spec, budget)?;
    let build = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let ((counts, count), (bf, tagged_graph)) = rayon::join(
        || {
            let t = Instant::now();
            (elp.counts(topo), t.elapsed().as_secs_f64())
        },
        || {
            let t = Instant::now();
            let bf = crate::tagging::tagged_graph(topo, &elp, budget);
            (bf, t.elapsed().as_secs_f64())
        },
    );
    let bf = bf?;
    let total = build + t.elapsed().as_secs_f64();
    let mut used = vec![false; topo.channel_count()];
    for &(c, _) in &bf.states {
        used[c as usize] = true;
    }
    let report = ElpReport {
        topology: topo.name().to_string(),
        elp: spec.text.clone(),
        counts,
        channels_used: used.iter().filter(|&&u| u).count(),
        channels: topo.channel_count(),
        tagged_nodes: bf.states.len(),
        tagged_edges: bf.key_count() - bf.first_hops.len(),
        seconds: ElpSeconds {
            build,
            count,
            tagged_graph,
            total,
        },
    };
    Ok((elp, report))
}

impl ElpReport {
    /// Ordered endpoint pairs without an ELP: their traffic is lossy.
    pub fn uncovered_pairs(&self) -> u64 {
        self.counts.pairs_total - self.counts.pairs_covered
    }

    /// The warning `tagger elp` prints when some pairs have no ELP.
    pub fn uncovered_warning(&self) -> Option<String> {
        let n = self.uncovered_pairs();
        (n > 0).then(|| {
            format!("warning: {n} ordered endpoint pairs have no ELP; their traffic is lossy")
        })
    }

    /// The report as `tagger elp --json` prints it.
    pub fn to_json(&self) -> serde_json::Value {
        let (c, s) = (&self.counts, &self.seconds);
        serde_json::json!({
            "topology": self.topology, "elp": self.elp,
            // JSON numbers stop at u64 here; the full count is in
            // paths_decimal, as in `tagger run` (paths saturates, exact false).
            "paths": u64::try_from(c.paths).unwrap_or(u64::MAX),
            "paths_exact": c.paths_exact && c.paths <= u64::MAX as u128,
            "paths_decimal": c.paths.to_string(),
            "longest_elp": c.longest, "pairs_covered": c.pairs_covered, "pairs_total": c.pairs_total,
            "channels_used": self.channels_used, "bf_nodes": self.tagged_nodes, "bf_edges": self.tagged_edges,
            "seconds": {"build": s.build, "count": s.count, "tagged_graph": s.tagged_graph, "total": s.total},
        })
    }
}

/// The report as `tagger elp` prints it (lines, no trailing newline).
impl fmt::Display for ElpReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (c, s) = (&self.counts, &self.seconds);
        writeln!(f, "topology        {}", self.topology)?;
        writeln!(f, "elp             {}", self.elp)?;
        writeln!(
            f,
            "paths           {}{}",
            c.paths,
            if c.paths_exact {
                ""
            } else {
                " (upper bound: union of families, or saturated)"
            }
        )?;
        writeln!(f, "longest ELP     {} links", c.longest)?;
        writeln!(f, "pairs covered   {} / {}", c.pairs_covered, c.pairs_total)?;
        writeln!(
            f,
            "channels used   {} / {}",
            self.channels_used, self.channels
        )?;
        writeln!(
            f,
            "brute-force tagged graph: {} nodes, {} edges",
            self.tagged_nodes, self.tagged_edges
        )?;
        write!(
            f,
            "seconds         {:.3}: build {:.3}, then side by side count {:.3} and tagged graph {:.3}",
            s.total, s.build, s.count, s.tagged_graph
        )
    }
}
