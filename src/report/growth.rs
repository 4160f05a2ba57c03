//! "How many entries does each growth step rewrite?": churn per growth
//! step, extended against replanned, from growth.parquet.

use super::draw::{Axes, Scale};
use super::{Cols, Draft, Grid, Runs, grid_panels, grid_push, read_batches, s};
use crate::error::Result;
use std::collections::BTreeMap;

/// The chart, or none for a sweep without growth paths.
pub(super) fn draft(r: &Runs) -> Result<Option<Draft>> {
    let growth_file = r.dir.join("growth.parquet");
    if !growth_file.exists() {
        return Ok(None);
    }
    let gb = read_batches(&growth_file)?;
    let g = Cols(&gb);
    let row_of: BTreeMap<u64, usize> = r
        .cols
        .num("scenario_id")
        .iter()
        .enumerate()
        .filter_map(|(i, id)| Some((id.map(|x| x as u64)?, i)))
        .collect();
    let (ids, step) = (g.num("scenario_id"), g.num("growth_step"));
    let (churn, scratch) = (
        g.num("growth_churn_entries"),
        g.num("growth_scratch_churn_entries"),
    );
    let mut grid = Grid::new();
    for j in 0..g.len() {
        let Some(&i) = ids[j].and_then(|id| row_of.get(&(id as u64))) else {
            continue;
        };
        let (Some(x), true) = (step[j], r.ok[i]) else {
            continue;
        };
        let panel = format!("{} {}", s(&r.topo, i), s(&r.elp, i));
        for (series, y) in [("extended", churn[j]), ("from scratch", scratch[j])] {
            if let Some(y) = y {
                let name = format!("{} {series}", s(&r.algo, i));
                grid_push(&mut grid, &panel, &name, (x, y));
            }
        }
    }
    let axes = Axes {
        x: "growth step",
        y: "entries rewritten",
        xs: Scale::Integer,
        ys: Scale::Linear,
    };
    let (panels, names) = grid_panels(grid, axes, None);
    Ok(Some(Draft::new(
        "How many entries does each growth step rewrite?",
        "Per growth step (sweep key growth), the entries added, removed or changed against the step before: with the plan extended as tagger update extends it, and replanned from scratch with the same algorithm. Every extended step's schedule is verified; growth.parquet also has the priorities each needs.".into(),
        panels,
        names,
    )))
}
