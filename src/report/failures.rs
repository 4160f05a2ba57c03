//! "Does plain PFC deadlock after failures?" and "How much traffic does
//! Tagger keep lossless after failures?", a panel per routing model.

use super::draw::{Axes, Scale};
use super::{Draft, Grid, Runs, grid_panels, grid_push, s};

/// The failed links (or switches) of a failure spec (`links:4,...`).
fn failed_count(spec: &str) -> Option<f64> {
    let (_, rest) = spec.split_once(':')?;
    rest.split(',').next()?.parse().ok()
}

pub(super) fn drafts(r: &Runs) -> Vec<Draft> {
    let fspec = r.cols.str("failures_spec");
    let routing = r.cols.str("failures_routing");
    let cbd = r.cols.num("failures_cbd_rate");
    let lossless = r.cols.num("failures_lossless_paths_median");
    let (mut c, mut l) = (Grid::new(), Grid::new());
    for i in r.ok_rows() {
        let Some(sp) = fspec[i].as_deref() else {
            continue;
        };
        let Some(k) = failed_count(sp) else { continue };
        let kind = sp.split(':').next().unwrap_or("");
        let panel = format!("{} routing, {kind} failing", s(&routing, i));
        if let Some(v) = cbd[i] {
            grid_push(&mut c, &panel, &s(&r.topo, i), (k, 100.0 * v));
        }
        if let Some(v) = lossless[i] {
            let plan = format!("{} {} {}", s(&r.topo, i), s(&r.elp, i), s(&r.algo, i));
            grid_push(&mut l, &panel, &plan, (k, 100.0 * v));
        }
    }
    for (_, g) in c.iter_mut() {
        for pts in g.values_mut() {
            // Plans of one topology share their trials: one point per count.
            pts.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
            pts.dedup();
        }
    }
    [
        (
            c,
            "Does plain PFC deadlock after failures?",
            "Without Tagger (one lossless priority on every route): the share of trials with a cyclic buffer dependency, per topology, one panel per routing model after the failures.",
            "trials with a CBD (%)",
        ),
        (
            l,
            "How much traffic does Tagger keep lossless after failures?",
            "The median trial's share of routes that stay lossless under the rules installed for the healthy network (packets no rule matches continue lossy), per plan, one panel per routing model.",
            "lossless routes (%)",
        ),
    ]
    .into_iter()
    .map(|(grid, title, note, y)| {
        let axes = Axes {
            x: "failed links (or switches)",
            y,
            xs: Scale::Integer,
            ys: Scale::Linear,
        };
        let (panels, names) = grid_panels(grid, axes, Some((-5.0, 105.0)));
        Draft::new(title, note.into(), panels, names)
    })
    .collect()
}
