//! "Where does the time go as networks grow?" (seconds per stage, with
//! growth exponents) and "How long does each algorithm take to tag?".

use super::draw::{Axes, Line, Panel, Scale, lines, loglog_slope};
use super::{Draft, Names, Runs, s};
use std::collections::{BTreeMap, BTreeSet};

/// Seconds against network size, log-log.
fn axes(y: &'static str) -> Axes {
    Axes {
        x: "switches",
        y,
        xs: Scale::Log,
        ys: Scale::Log,
    }
}

pub(super) fn drafts(r: &Runs) -> [Draft; 2] {
    [stages(r), tag(r)]
}

/// Stage seconds per stage and family, with growth exponents where a
/// family has several sizes.
fn stages(r: &Runs) -> Draft {
    let mut names = Names::default();
    // The stages some scenario spent time in (a sweep without failures
    // has no failures stage to list).
    let (stages, secs): (Vec<&str>, Vec<Vec<Option<f64>>>) =
        ["generate", "elp", "tag", "rules", "verify", "failures"]
            .into_iter()
            .map(|st| (st, r.cols.num(&format!("seconds_{st}"))))
            .filter(|(_, v)| r.ok_rows().any(|i| v[i].is_some_and(|x| x > 0.0)))
            .unzip();
    for st in &stages {
        names.idx(st);
    }
    let mut panels = Vec::new();
    let mut slopes = Vec::new();
    for f in &r.families {
        let rows: Vec<usize> = r
            .ok_rows()
            .filter(|&i| s(&r.family, i) == *f && r.size[i].is_some())
            .collect();
        let sizes: BTreeSet<u64> = rows
            .iter()
            .filter_map(|&i| r.size[i].map(f64::to_bits))
            .collect();
        let mut lines = Vec::new();
        let mut fitted = Vec::new();
        for (si, stage) in stages.iter().enumerate() {
            let pts: Vec<(f64, f64)> = rows
                .iter()
                .filter_map(|&i| match (r.size[i], secs[si][i]) {
                    (Some(x), Some(t)) if t > 0.0 => Some((x, t)),
                    _ => None,
                })
                .collect();
            if pts.is_empty() {
                continue;
            }
            if sizes.len() > 1
                && let Some(k) = loglog_slope(&pts)
            {
                fitted.push(format!("{stage} {k:.2}"));
            }
            lines.push(Line { idx: si, pts });
        }
        if !fitted.is_empty() {
            slopes.push(format!("{f}: {}", fitted.join(", ")));
        }
        panels.push(Panel::new(f.clone(), axes("seconds"), lines));
    }
    Draft::new(
        "Where does the time go as networks grow?",
        format!(
            "One panel per family: seconds of each stage against network size, log-log, one circle per scenario. {}",
            if slopes.is_empty() {
                "No family has more than one size, so no growth exponent is fitted.".to_string()
            } else {
                format!(
                    "Growth exponents (least squares on the logs, per family with several sizes): {}.",
                    slopes.join("; ")
                )
            }
        ),
        panels,
        names,
    )
}

/// The tag stage per algorithm: the one stage the algorithm decides, in
/// the first chart's colours.
fn tag(r: &Runs) -> Draft {
    let tag_secs = r.cols.num("seconds_tag");
    let mut names = Names::algorithms(&r.algos);
    let mut panels = Vec::new();
    for f in &r.families {
        let mut series: BTreeMap<usize, Vec<(f64, f64)>> = BTreeMap::new();
        for i in r.ok_rows().filter(|&i| s(&r.family, i) == *f) {
            if let (Some(x), Some(y)) = (r.size[i], tag_secs[i].filter(|&y| y > 0.0)) {
                series
                    .entry(names.idx(&s(&r.algo, i)))
                    .or_default()
                    .push((x, y));
            }
        }
        if series.is_empty() {
            continue;
        }
        panels.push(Panel::new(f.clone(), axes("seconds to tag"), lines(series)));
    }
    Draft::new(
        "How long does each algorithm take to tag?",
        "One panel per family: the tag stage's seconds (the stage the algorithm is; the others are the same for every algorithm on a scenario) against network size, log-log, one circle per scenario, coloured by algorithm as in the first chart. `search` and `exact` run until their budget, stall rule or proof, so their times are budgets more than costs.".into(),
        panels,
        names,
    )
}
