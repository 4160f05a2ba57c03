//! "Which algorithm needs the fewest lossless priorities?": priorities per
//! scenario against the proven lower bound, a panel per family and ELP.

use super::draw::{Axes, Band, Panel, Scale, lines, range};
use super::{Draft, Names, Runs, s};
use std::collections::BTreeMap;

pub(super) fn draft(r: &Runs) -> Draft {
    let prio = r.cols.num("priorities");
    let bound = r.cols.num("priorities_lower_bound");
    let mut names = Names::algorithms(&r.algos);
    let ys: Vec<f64> = r
        .ok_rows()
        .flat_map(|i| [prio[i], bound[i]])
        .flatten()
        .collect();
    let shared = range(ys.iter().copied(), Scale::Integer);
    let shared = (shared.0.max(0.5), shared.1);
    let mut panels = Vec::new();
    // One panel per family and ELP: how many priorities a plan needs
    // depends on the paths as much as on the network.
    for (f, e) in &r.family_elp {
        let rows: Vec<usize> = r
            .ok_rows()
            .filter(|&i| {
                s(&r.family, i) == *f
                    && s(&r.elp, i) == *e
                    && r.size[i].is_some()
                    && prio[i].is_some()
            })
            .collect();
        if rows.is_empty() {
            continue;
        }
        let here: Vec<usize> = {
            let mut v: Vec<usize> = rows.iter().map(|&i| names.idx(&s(&r.algo, i))).collect();
            v.sort();
            v.dedup();
            v
        };
        // Algorithms side by side around each size, within a band that
        // keeps the size readable (the axis is logarithmic).
        let band = Band::new(rows.iter().filter_map(|&i| r.size[i]), here);
        let mut series: BTreeMap<usize, Vec<(f64, f64)>> = BTreeMap::new();
        let mut bars = Vec::new();
        for &i in &rows {
            let (x, p) = (r.size[i].unwrap_or(1.0), prio[i].unwrap_or(0.0));
            let idx = names.idx(&s(&r.algo, i));
            series.entry(idx).or_default().push((band.at(idx, x), p));
            if let Some(b) = bound[i] {
                let (lo, hi) = band.around(x);
                bars.push((lo, hi, b));
            }
        }
        bars.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.2.total_cmp(&b.2)));
        bars.dedup();
        let axes = Axes {
            x: "switches",
            y: "lossless priorities",
            xs: Scale::Log,
            ys: Scale::Integer,
        };
        panels.push(Panel {
            bars,
            x_ticks: band.ticks,
            y_range: Some(shared),
            ..Panel::new(format!("{f}, {e}"), axes, lines(series))
        });
    }
    Draft {
        marks: &[("proven lower bound", "bar")],
        ..Draft::new(
            "Which algorithm needs the fewest lossless priorities?",
            "One panel per topology family and ELP: one circle per scenario, coloured by algorithm (baselines as rings) and set side by side in a band around its network size, the switches (BCube's forwarding servers count as switches: they forward); a grey bar across the band marks the proven lower bound. A circle on the bar is proven optimal: no plan can use fewer. The lowest circle of a colour at a size is that algorithm's fewest priorities there.".into(),
            panels,
            names,
        )
    }
}
