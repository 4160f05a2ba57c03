//! "How many rules does each switch hold?": a step CDF of rules per switch
//! per algorithm, on each family's largest network, from switches.parquet.

use super::draw::{Axes, Join, Line, Panel, Scale};
use super::{Draft, Names, Runs, read_batches, s, same_sweep};
use crate::error::Result;
use std::collections::{BTreeMap, BTreeSet};

/// The chart, or none for a sweep without switch rows (none written yet);
/// switch rows that are there but unreadable, or of another sweep, are an
/// error, not a missing chart.
pub(super) fn draft(r: &Runs) -> Result<Option<Draft>> {
    let switches = r.dir.join("switches.parquet");
    if switches.symlink_metadata().is_err() {
        return Ok(None);
    }
    same_sweep(&r.dir.join("runs.parquet"), &switches)?;
    let nodes_b = read_batches(&switches)?;
    let nodes = super::Cols(&nodes_b);
    let ids = r.cols.num("scenario_id");
    let nid = nodes.num("scenario_id");
    let nrules = nodes.num("rules");
    let nkind = nodes.str("kind");
    let mut per_scenario: BTreeMap<u64, Vec<f64>> = BTreeMap::new();
    for j in 0..nodes.len() {
        if let (Some(id), Some(rules), Some("switch")) = (nid[j], nrules[j], nkind[j].as_deref()) {
            per_scenario.entry(id as u64).or_default().push(rules);
        }
    }
    let mut names = Names::algorithms(&r.algos);
    let mut panels = Vec::new();
    for (f, e) in &r.family_elp {
        let rows: Vec<usize> = r
            .ok_rows()
            .filter(|&i| s(&r.family, i) == *f && s(&r.elp, i) == *e && r.size[i].is_some())
            .collect();
        let Some(largest) = rows.iter().filter_map(|&i| r.size[i]).reduce(f64::max) else {
            continue;
        };
        // One topology of that size (the first), every plan on it.
        let Some(t) = rows
            .iter()
            .find(|&&i| r.size[i] == Some(largest))
            .map(|&i| s(&r.topo, i))
        else {
            continue;
        };
        let mut lines = Vec::new();
        let mut seen = BTreeSet::new();
        for &i in rows.iter().filter(|&&i| s(&r.topo, i) == t) {
            let label = s(&r.algo, i);
            let Some(v) = ids[i].and_then(|id| per_scenario.get(&(id as u64))) else {
                continue;
            };
            // Trials of one plan: the first.
            if !seen.insert(label.clone()) || v.is_empty() {
                continue;
            }
            lines.push(Line {
                idx: names.idx(&label),
                pts: cdf(v),
            });
        }
        if lines.is_empty() {
            continue;
        }
        let axes = Axes {
            x: "rules per switch",
            y: "share of switches",
            xs: Scale::Linear,
            ys: Scale::Linear,
        };
        panels.push(Panel {
            join: Join::Step,
            y_range: Some((0.0, 1.05)),
            ..Panel::new(format!("{t}, {e}"), axes, lines)
        });
    }
    Ok(Some(Draft::new(
        "How many rules does each switch hold?",
        "One panel per family and ELP, on the family's largest network: the share of switches holding at most that many rules (compressed ACL entries plus ingress map entries), a step line per algorithm (coloured as above). Further left holds fewer rules; a circle marks each distinct count.".into(),
        panels,
        names,
    )))
}

/// The empirical CDF of `v`: a point per distinct value.
fn cdf(v: &[f64]) -> Vec<(f64, f64)> {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    let m = v.len() as f64;
    let mut pts = Vec::new();
    for (j, x) in v.iter().enumerate() {
        if v.get(j + 1) != Some(x) {
            pts.push((*x, (j + 1) as f64 / m));
        }
    }
    pts
}
