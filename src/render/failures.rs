//! `tagger failures`: a failure what-if's tables.

use super::Lines;
use crate::failures::{self, Report as FailureReport};

/// `tagger failures`' table: the plan, then per routing model the CBD rate
/// of plain PFC, the lossless shares of routes and pairs, fallback hops,
/// replanned and failure-aware priorities (`secs`: the what-if's seconds).
pub fn failures(plan: &crate::failures::Installed, reports: &[FailureReport], secs: f64) -> String {
    let mut l = Lines::new();
    let s = plan;
    line!(
        l,
        "plan          {} {} {}: {} (lower bound {}), verified{}",
        s.topology,
        s.elp,
        s.algo,
        super::count(s.priorities, "lossless priority"),
        s.priorities_lower_bound,
        s.rules
            .as_ref()
            .map_or(String::new(), |r| format!(" (rules {r})"))
    );
    let Some(first) = reports.first() else {
        return l.done();
    };
    let f = &first.figures;
    line!(
        l,
        "failures      {}: {} in {secs:.1} s",
        f.spec,
        super::count(f.trials, "trial")
    );
    let pct = |x: Option<f64>| x.map_or("-".to_string(), |v| format!("{}%", failures::percent(v)));
    let num = |x: Option<u32>| x.map_or("-".to_string(), |v| v.to_string());
    line!(
        l,
        "{:<10} {:>8} {:>17} {:>17} {:>17} {:>17} {:>9} {:>9} {:>6} {:>8}",
        "routing",
        "CBD",
        "lossless routes",
        "(min)",
        "lossless pairs",
        "(min)",
        "fallback",
        "replanned",
        "aware",
        "verified"
    );
    line!(
        l,
        "{:<10} {:>8} {:>17} {:>17} {:>17} {:>17} {:>9} {:>9} {:>6} {:>8}",
        "",
        "no Tagger",
        "median",
        "",
        "median",
        "",
        "hops max",
        "prio max",
        "prio",
        ""
    );
    for rep in reports {
        let f = &rep.figures;
        line!(
            l,
            "{:<10} {:>8} {:>17} {:>17} {:>17} {:>17} {:>9} {:>9} {:>6} {:>8}",
            f.routing,
            format!("{:.0}%", 100.0 * f.cbd_rate),
            pct(f.lossless_paths_median),
            pct(f.lossless_paths_min),
            pct(f.lossless_pairs_median),
            pct(f.lossless_pairs_min),
            rep.trials
                .iter()
                .map(|t| t.fallback_hops)
                .max()
                .unwrap_or(0),
            num(f.replanned_priorities_max),
            num(f.aware_priorities),
            if f.verified { "yes" } else { "NO" }
        );
    }
    let cycles: Vec<u32> = reports
        .iter()
        .flat_map(|r| r.trials.iter().filter_map(|t| t.cbd_cycle_len))
        .collect();
    if let Some(m) = cycles.iter().min() {
        line!(
            l,
            "shortest CBD  {m} channels (plain PFC, one lossless priority)"
        );
    }
    l.done()
}
