//! `tagger report`: a sweep directory as one self-contained HTML page:
//! charts as inline SVG (drawn with `plotters`), the summary tables, the
//! failed scenarios with their errors, and the spec and engine version. No
//! script, no stylesheet or font from elsewhere: it opens offline.
//!
//! Every chart is a `<figure class="chart" data-points="N">` whose SVG holds
//! exactly N circles, one per data point, so a reader (and the tests) can
//! check that nothing was dropped; bounds and secondary series are drawn
//! with other marks.
//!
//! One file past 600 lines on purpose: one HTML page, its charts and its
//! tables, with the test that every column it reads is declared.

use crate::error::{Error, Result};
use crate::output::parquet::read_batches;
use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int64Type, UInt32Type, UInt64Type};
use arrow_array::{Array, RecordBatch};
use plotters::prelude::*;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

/// One chart: the question it answers, how to read it, its panels (small
/// multiples: one per family, routing model or plan) and its data points.
#[derive(Debug)]
pub struct Chart {
    /// The question the chart answers (its caption).
    pub title: String,
    /// How to read it.
    pub note: String,
    /// Its panels, each a titled inline SVG.
    pub panels: Vec<(String, String)>,
    /// Data points drawn (one circle each, over all panels).
    pub points: usize,
    /// Per series: name, colour (`#rrggbb`), and its mark (`dot`, `ring`
    /// or `cross`); written as HTML under the chart, so no legend box
    /// covers the data. A series keeps its colour in every panel.
    pub legend: Vec<(String, String, &'static str)>,
    /// Rows of a table under the chart (header first), when the answer
    /// needs exact figures.
    pub table: Vec<Vec<String>>,
}

/// Colour and mark of series `i`: ten colours, filled for the first ten
/// series and rings for the next ten.
fn style(i: usize) -> (RGBColor, bool) {
    (
        PALETTE[i % PALETTE.len()],
        (i / PALETTE.len()).is_multiple_of(2),
    )
}

fn hex(c: RGBColor) -> String {
    format!("#{:02x}{:02x}{:02x}", c.0, c.1, c.2)
}

/// Tick labels without a spurious `.0`, and small values in few digits.
fn tick(v: &f64) -> String {
    let a = v.abs();
    if a >= 1000.0 || (a >= 1.0 && v.fract() == 0.0) {
        format!("{v:.0}")
    } else if a >= 1.0 {
        format!("{v:.1}")
    } else if a == 0.0 {
        "0".into()
    } else if a >= 1e-4 {
        // 0.1, 0.05, 0.001: no trailing zeros.
        let t = format!("{v:.4}");
        t.trim_end_matches('0').to_string()
    } else {
        format!("{v:.0e}")
    }
}

/// Whether an axis's ticks go below 0.001: its labels under 1 are then
/// all written `1e-3`, `1e-4`, ..., so that one axis never mixes 0.0001
/// with 1e-5.
fn sci(ticks: &[f64]) -> bool {
    ticks.iter().any(|&v| v > 0.0 && v < 1e-3)
}

/// [`tick`], in scientific notation under 1 on an axis where [`sci`].
fn tick_on(v: &f64, sci: bool) -> String {
    if sci && v.abs() < 1.0 && *v != 0.0 {
        format!("{v:.0e}")
    } else {
        tick(v)
    }
}

/// Round tick values for an axis over `lo..hi`: 1-2-5 steps on linear
/// axes (whole numbers only on an integer axis), 1-2-5 per decade on log
/// axes (decades alone when that is too many). Never two ticks with the
/// same label.
fn ticks(lo: f64, hi: f64, scale: Scale) -> Vec<f64> {
    let mut out: Vec<f64> = Vec::new();
    match scale {
        Scale::Log => {
            let (a, b) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
            for mult in [&[1.0, 2.0, 5.0][..], &[1.0][..]] {
                out = (a..=b)
                    .flat_map(|e| mult.iter().map(move |m| m * 10f64.powi(e)))
                    .filter(|&v| v >= lo && v <= hi)
                    .collect();
                if out.len() <= 8 {
                    break;
                }
            }
            if out.len() > 8 {
                // Many decades: every other one.
                out = out.into_iter().step_by(2).collect();
            }
            if out.len() < 3 {
                // Under a decade (a family measured at one size): every
                // whole multiple, so the points sit between labelled ticks.
                out = (a..=b)
                    .flat_map(|e| (1..10).map(move |m| f64::from(m) * 10f64.powi(e)))
                    .filter(|&v| v >= lo && v <= hi)
                    .collect();
            }
        }
        Scale::Linear | Scale::Integer => {
            let raw = (hi - lo) / 5.0;
            let mag = 10f64.powf(raw.log10().floor());
            let mut step = [1.0, 2.0, 5.0, 10.0]
                .iter()
                .map(|m| m * mag)
                .find(|&s| s >= raw)
                .unwrap_or(raw);
            if scale == Scale::Integer {
                // Every whole number while they fit.
                step = if hi - lo <= 12.0 {
                    1.0
                } else {
                    step.max(1.0).round()
                };
            }
            let mut v = (lo / step).ceil() * step;
            while v <= hi + step * 1e-9 && out.len() < 50 {
                // Exact zero, not -0 or 1e-17.
                out.push(if v.abs() < step * 1e-9 { 0.0 } else { v });
                v += step;
            }
        }
    }
    let mut seen = std::collections::BTreeSet::new();
    out.retain(|v| seen.insert(tick(v)));
    out
}

/// A column of a table, by name, as optional values (a column the file
/// lacks: all `None`, so reports read files of older versions). Every name
/// asked for is one the tables declare: the test
/// `every_column_the_report_reads_is_declared` holds it, so a misspelt
/// name cannot silently chart nothing.
struct Cols<'a>(&'a [RecordBatch]);

impl Cols<'_> {
    fn len(&self) -> usize {
        self.0.iter().map(RecordBatch::num_rows).sum()
    }
    fn each<T>(&self, name: &str, f: impl Fn(&dyn Array, usize) -> Option<T>) -> Vec<Option<T>> {
        let mut out = Vec::with_capacity(self.len());
        for b in self.0 {
            match b.column_by_name(name) {
                Some(c) => out.extend((0..b.num_rows()).map(|i| {
                    if c.is_valid(i) {
                        f(c.as_ref(), i)
                    } else {
                        None
                    }
                })),
                None => out.extend((0..b.num_rows()).map(|_| None)),
            }
        }
        out
    }
    fn str(&self, name: &str) -> Vec<Option<String>> {
        self.each(name, |c, i| {
            c.as_string_opt::<i32>().map(|s| s.value(i).to_string())
        })
    }
    fn num(&self, name: &str) -> Vec<Option<f64>> {
        self.each(name, |c, i| {
            if let Some(a) = c.as_primitive_opt::<UInt64Type>() {
                Some(a.value(i) as f64)
            } else if let Some(a) = c.as_primitive_opt::<UInt32Type>() {
                Some(f64::from(a.value(i)))
            } else if let Some(a) = c.as_primitive_opt::<Int64Type>() {
                Some(a.value(i) as f64)
            } else {
                c.as_primitive_opt::<Float64Type>().map(|a| a.value(i))
            }
        })
    }
}

const PALETTE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

/// The grey of bounds, limits and reference lines.
const GREY: RGBColor = RGBColor(80, 80, 80);

/// How an axis is scaled.
#[derive(Clone, Copy, PartialEq)]
enum Scale {
    Linear,
    Log,
    /// Linear, with ticks at whole numbers only (priorities, queues).
    Integer,
}

#[derive(Clone, Copy)]
struct Axes<'a> {
    x: &'a str,
    y: &'a str,
    xs: Scale,
    ys: Scale,
}

/// How a series' points are joined.
#[derive(Clone, Copy, PartialEq)]
enum Join {
    None,
    Straight,
    /// A step function (a CDF): flat to the next x, then up.
    Step,
}

/// One series in a panel; `idx` is its index in the chart's legend, so it
/// keeps its colour in every panel.
struct Line {
    idx: usize,
    pts: Vec<(f64, f64)>,
}

/// One small multiple.
struct Panel<'a> {
    title: String,
    axes: Axes<'a>,
    lines: Vec<Line>,
    join: Join,
    /// Grey crosses (bounds, limits); not data points.
    crosses: Vec<(f64, f64)>,
    /// A grey dashed horizontal reference line (e.g. 0).
    hline: Option<f64>,
    /// A y range shared with the other panels, when they compare values.
    y_range: Option<(f64, f64)>,
}

fn range(v: impl Iterator<Item = f64>, scale: Scale) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for x in v {
        lo = lo.min(x);
        hi = hi.max(x);
    }
    if !lo.is_finite() {
        return if scale == Scale::Log {
            (1.0, 10.0)
        } else {
            (0.0, 1.0)
        };
    }
    match scale {
        Scale::Log => (lo / 1.4, hi * 1.4),
        Scale::Integer => (lo - 0.5, hi + 0.5),
        Scale::Linear => {
            let pad = ((hi - lo) * 0.08).max(if hi.abs() > 0.0 { hi.abs() * 0.05 } else { 0.5 });
            (lo - pad, hi + pad)
        }
    }
}

/// Panel size in SVG units. The page shows three across at 1280 px (about
/// 400 px each), and plotters writes a size-N font as N / 1.24 units: the
/// labels' 18 are 14.5 units, 12 px on the page (`scripts/render-report.sh`
/// measures it in the browser and fails under 11 px).
const PANEL: (u32, u32) = (480, 330);
/// Font size of tick labels and axis names, in plotters' units.
const LABEL: u32 = 18;

/// Draws one panel as SVG: circles for the points (the only circles, so
/// they can be counted), joined as `join` says, over a reference line and
/// under grey crosses (bounds and limits stay visible).
fn draw_panel(p: &Panel) -> std::result::Result<String, String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, PANEL).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let xs = || p.lines.iter().flat_map(|l| l.pts.iter()).chain(&p.crosses);
        let (x0, x1) = range(xs().map(|q| q.0), p.axes.xs);
        let (y0, y1) = p
            .y_range
            .unwrap_or_else(|| range(xs().map(|q| q.1).chain(p.hline), p.axes.ys));
        let (tx, ty) = (ticks(x0, x1, p.axes.xs), ticks(y0, y1, p.axes.ys));
        let (sx, sy) = (sci(&tx), sci(&ty));
        let mut b = ChartBuilder::on(&root);
        b.caption(&p.title, ("sans-serif", 20))
            .margin(10)
            // A last x tick label centred on the edge stays whole.
            .margin_right(26)
            .x_label_area_size(52)
            .y_label_area_size(72);
        macro_rules! body {
            ($chart:expr) => {{
                let mut chart = $chart.map_err(|e| e.to_string())?;
                chart
                    .configure_mesh()
                    .x_desc(p.axes.x)
                    .y_desc(p.axes.y)
                    .label_style(("sans-serif", LABEL))
                    .light_line_style(WHITE)
                    .axis_desc_style(("sans-serif", LABEL))
                    .x_labels(tx.len())
                    .y_labels(ty.len())
                    .x_label_formatter(&|v| tick_on(v, sx))
                    .y_label_formatter(&|v| tick_on(v, sy))
                    .draw()
                    .map_err(|e| e.to_string())?;
                if let Some(h) = p.hline {
                    chart
                        .draw_series(DashedLineSeries::new(
                            [(x0, h), (x1, h)],
                            6,
                            4,
                            GREY.stroke_width(1),
                        ))
                        .map_err(|e| e.to_string())?;
                }
                for l in &p.lines {
                    let (color, filled) = style(l.idx);
                    let mut sorted = l.pts.clone();
                    sorted.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
                    let path: Vec<(f64, f64)> = match p.join {
                        Join::None => Vec::new(),
                        Join::Straight => sorted.clone(),
                        Join::Step => {
                            let mut v = Vec::with_capacity(2 * sorted.len() + 1);
                            let mut last = 0.0;
                            for &(x, y) in &sorted {
                                v.push((x, last));
                                v.push((x, y));
                                last = y;
                            }
                            v
                        }
                    };
                    if !path.is_empty() {
                        chart
                            .draw_series(LineSeries::new(path, color.stroke_width(2)))
                            .map_err(|e| e.to_string())?;
                    }
                    let shape = if filled {
                        color.filled()
                    } else {
                        color.stroke_width(2)
                    };
                    chart
                        .draw_series(l.pts.iter().map(|&q| Circle::new(q, 4, shape)))
                        .map_err(|e| e.to_string())?;
                }
                // Bounds and limits over the circles, so that none hides.
                chart
                    .draw_series(
                        p.crosses
                            .iter()
                            .map(|&q| Cross::new(q, 5, GREY.stroke_width(2))),
                    )
                    .map_err(|e| e.to_string())?;
            }};
        }
        let log = |s: Scale| s == Scale::Log;
        match (log(p.axes.xs), log(p.axes.ys)) {
            (true, true) => body!(b.build_cartesian_2d(
                (x0..x1).log_scale().with_key_points(tx.clone()),
                (y0..y1).log_scale().with_key_points(ty.clone())
            )),
            // Linear axes keep plotters' own 1-2-5 steps, asked for no more
            // ticks than `ticks` gives, so an integer axis gets whole steps.
            (true, false) => body!(
                b.build_cartesian_2d((x0..x1).log_scale().with_key_points(tx.clone()), y0..y1)
            ),
            (false, true) => body!(
                b.build_cartesian_2d(x0..x1, (y0..y1).log_scale().with_key_points(ty.clone()))
            ),
            (false, false) => body!(b.build_cartesian_2d(x0..x1, y0..y1)),
        }
        root.present().map_err(|e| e.to_string())?;
    }
    // The drawing's own size is a default; the page scales it to its cell.
    Ok(svg.replacen(
        &format!("<svg width=\"{}\" height=\"{}\"", PANEL.0, PANEL.1),
        "<svg role=\"img\" preserveAspectRatio=\"xMidYMid meet\"",
        1,
    ))
}

/// Least-squares slope of log(y) on log(x): the growth exponent.
pub fn loglog_slope(pts: &[(f64, f64)]) -> Option<f64> {
    let logs: Vec<(f64, f64)> = pts
        .iter()
        .filter(|p| p.0 > 0.0 && p.1 > 0.0)
        .map(|p| (p.0.ln(), p.1.ln()))
        .collect();
    let n = logs.len() as f64;
    if logs.len() < 2 {
        return None;
    }
    let mx = logs.iter().map(|p| p.0).sum::<f64>() / n;
    let my = logs.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = logs.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = logs.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    (sxx > 0.0).then(|| sxy / sxx)
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Builds every chart the sweep's tables support.
///
/// # Errors
/// Parquet and I/O errors naming the file; [`Error::Parquet`] when the
/// drawing fails.
pub fn charts(dir: &Path) -> Result<Vec<Chart>> {
    charts_of(dir, &read_batches(&dir.join("runs.parquet"))?)
}

/// Refuses two tables of a sweep directory written by different sweeps
/// (spec, engine version or shard differ in their metadata).
fn same_sweep(runs: &Path, other: &Path) -> Result<()> {
    let (a, b) = (
        crate::output::parquet::read_metadata(runs)?,
        crate::output::parquet::read_metadata(other)?,
    );
    let keys = ["tagger.spec", "tagger.version", "tagger.shard"];
    match crate::output::parquet::differing_key(&a, &b, &keys) {
        Some(key) => Err(Error::Parquet {
            path: other.to_path_buf(),
            reason: format!(
                "its {key} differs from {}'s: the two tables are of different sweeps",
                runs.display()
            ),
        }),
        None => Ok(()),
    }
}

/// An algorithm as a legend names it: without wall-clock limits and
/// without `clos`'s K, which the ELP implies (`clos:1`,
/// `exact:timeout=120`, `auto:time=60` are clos, exact, auto); every other
/// option changes the plan found and stays (`greedy:restarts=8,seed=1` is
/// `greedy restarts=8,seed=1`).
fn algo_label(spec: &str) -> String {
    let (name, opts) = spec.split_once(':').unwrap_or((spec, ""));
    let kept: Vec<&str> = opts
        .split(',')
        .filter(|o| !o.is_empty() && name != "clos")
        .filter(|o| !o.starts_with("timeout=") && !o.starts_with("time="))
        .collect();
    if kept.is_empty() {
        name.to_string()
    } else {
        format!("{name} {}", kept.join(","))
    }
}

/// Series names in first-seen order, each with its legend index.
#[derive(Default)]
struct Names(Vec<String>);

impl Names {
    /// Names in this order first: every chart coloured by algorithm
    /// seeds them with the same sorted list, so an algorithm keeps its
    /// colour from chart to chart.
    fn seeded(first: &[String]) -> Names {
        Names(first.to_vec())
    }
    fn idx(&mut self, name: &str) -> usize {
        match self.0.iter().position(|n| n == name) {
            Some(i) => i,
            None => {
                self.0.push(name.to_string());
                self.0.len() - 1
            }
        }
    }
    fn legend(&self) -> Vec<(String, String, &'static str)> {
        self.0
            .iter()
            .enumerate()
            .map(|(i, n)| {
                let (c, filled) = style(i);
                (n.clone(), hex(c), if filled { "dot" } else { "ring" })
            })
            .collect()
    }
}

/// Panel title -> series name -> points, in first-seen order of panels.
type Grid = Vec<(String, BTreeMap<String, Vec<(f64, f64)>>)>;

fn grid_push(g: &mut Grid, panel: &str, series: &str, pt: (f64, f64)) {
    let at = match g.iter().position(|(t, _)| t == panel) {
        Some(i) => i,
        None => {
            g.push((panel.to_string(), BTreeMap::new()));
            g.len() - 1
        }
    };
    g[at].1.entry(series.to_string()).or_default().push(pt);
}

/// Rows of the "which switches do not fit" table: the worst scenarios.
const MISFITS_SHOWN: usize = 12;

/// [`charts`] of the runs table `runs_b` already read from `dir`.
fn charts_of(dir: &Path, runs_b: &[RecordBatch]) -> Result<Vec<Chart>> {
    let runs = Cols(runs_b);
    let n = runs.len();
    let status = runs.str("status");
    let ok: Vec<bool> = status.iter().map(|s| s.as_deref() == Some("ok")).collect();
    let family = runs.str("family");
    let algo: Vec<Option<String>> = runs
        .str("algo")
        .into_iter()
        .map(|a| a.map(|a| algo_label(&a)))
        .collect();
    let elp = runs.str("elp");
    let topo = runs.str("topology_grid");
    let switches = runs.num("switches");
    let servers = runs.num("servers");
    let size: Vec<Option<f64>> = switches
        .iter()
        .zip(&servers)
        .map(|(a, b)| Some(a.unwrap_or(0.0) + b.unwrap_or(0.0)).filter(|&x| x > 0.0))
        .collect();
    let s_of = |v: &Vec<Option<String>>, i: usize| v[i].clone().unwrap_or_default();
    let bad = |e: String| Error::Parquet {
        path: dir.join("report.html"),
        reason: format!("drawing a chart: {e}"),
    };
    let mut out = Vec::new();
    let mut push = |title: &str,
                    note: String,
                    panels: Vec<Panel>,
                    names: &Names,
                    extra_legend: &[(&str, &'static str)],
                    table: Vec<Vec<String>>|
     -> Result<()> {
        let points: usize = panels
            .iter()
            .flat_map(|p| p.lines.iter())
            .map(|l| l.pts.len())
            .sum();
        if points == 0 {
            return Ok(());
        }
        let mut svgs = Vec::new();
        for p in &panels {
            svgs.push((p.title.clone(), draw_panel(p).map_err(bad)?));
        }
        let mut legend = names.legend();
        legend.extend(
            extra_legend
                .iter()
                .map(|(name, mark)| (name.to_string(), hex(GREY), *mark)),
        );
        out.push(Chart {
            title: title.into(),
            note,
            panels: svgs,
            points,
            legend,
            table,
        });
        Ok(())
    };
    let family_panels = {
        let mut f: Vec<String> = (0..n)
            .filter(|&i| ok[i])
            .map(|i| s_of(&family, i))
            .collect();
        f.sort();
        f.dedup();
        f
    };

    // 1. Priorities per algorithm against the proven bound, per family.
    let prio = runs.num("priorities");
    let bound = runs.num("priorities_lower_bound");
    let mut all_algos: Vec<String> = (0..n).filter(|&i| ok[i]).map(|i| s_of(&algo, i)).collect();
    all_algos.sort();
    all_algos.dedup();
    let mut names = Names::seeded(&all_algos);
    let ys: Vec<f64> = (0..n)
        .filter(|&i| ok[i])
        .flat_map(|i| [prio[i], bound[i]])
        .flatten()
        .collect();
    let shared = range(ys.iter().copied(), Scale::Integer);
    let shared = (shared.0.max(0.5), shared.1);
    let mut panels = Vec::new();
    // One panel per family and ELP: how many priorities a plan needs
    // depends on the paths as much as on the network.
    let family_elp: Vec<(String, String)> = {
        let mut v: Vec<(String, String)> = (0..n)
            .filter(|&i| ok[i])
            .map(|i| (s_of(&family, i), s_of(&elp, i)))
            .collect();
        v.sort();
        v.dedup();
        v
    };
    for (f, e) in &family_elp {
        let rows: Vec<usize> = (0..n)
            .filter(|&i| {
                ok[i]
                    && s_of(&family, i) == *f
                    && s_of(&elp, i) == *e
                    && size[i].is_some()
                    && prio[i].is_some()
            })
            .collect();
        if rows.is_empty() {
            continue;
        }
        let here: Vec<usize> = {
            let mut v: Vec<usize> = rows.iter().map(|&i| names.idx(&s_of(&algo, i))).collect();
            v.sort();
            v.dedup();
            v
        };
        // Algorithms side by side around each size, so equal counts stay
        // visible (a ratio: the axis is logarithmic).
        let shift = |idx: usize| {
            let k = here.iter().position(|&x| x == idx).unwrap_or(0) as f64;
            1.0 + 0.06 * (k - (here.len() as f64 - 1.0) / 2.0)
        };
        let mut lines: BTreeMap<usize, Vec<(f64, f64)>> = BTreeMap::new();
        let mut crosses = Vec::new();
        for &i in &rows {
            let (x, p) = (size[i].unwrap_or(1.0), prio[i].unwrap_or(0.0));
            let idx = names.idx(&s_of(&algo, i));
            lines.entry(idx).or_default().push((x * shift(idx), p));
            if let Some(b) = bound[i] {
                crosses.push((x, b));
            }
        }
        crosses.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
        crosses.dedup();
        panels.push(Panel {
            title: format!("{f}, {e}"),
            axes: Axes {
                x: "switches and servers",
                y: "lossless priorities",
                xs: Scale::Log,
                ys: Scale::Integer,
            },
            lines: lines
                .into_iter()
                .map(|(idx, pts)| Line { idx, pts })
                .collect(),
            join: Join::None,
            crosses,
            hline: None,
            y_range: Some(shared),
        });
    }
    push(
        "Which algorithm needs the fewest lossless priorities?",
        "One panel per topology family and ELP: one circle per scenario, coloured by algorithm and set side by side around its network size; grey crosses mark the proven lower bound. A circle on a cross is proven optimal: no plan can use fewer. The lowest circle of a colour at a size is that algorithm's fewest priorities there.".into(),
        panels,
        &names,
        &[("proven lower bound", "cross")],
        Vec::new(),
    )?;

    // 2. Which switches do not fit their switch model, and by how much.
    let profile = runs.str("switch_profile");
    let cable = runs.num("cable_m");
    let margin = runs.num("buffer_margin_min_bytes");
    let p_switch = runs.num("priorities_per_switch_max");
    let queues = runs.num("lossless_queues");
    let (over_b, over_q, over_a) = (
        runs.num("switches_over_buffer"),
        runs.num("switches_over_queues"),
        runs.num("switches_over_acl"),
    );
    let classes = runs.num("classes");
    let cables_vary = (0..n)
        .filter_map(|i| cable[i].map(f64::to_bits))
        .collect::<std::collections::BTreeSet<_>>()
        .len()
        > 1;
    let (mut buf, mut que) = (
        BTreeMap::<usize, Vec<(f64, f64)>>::new(),
        BTreeMap::<usize, Vec<(f64, f64)>>::new(),
    );
    let mut limits = Vec::new();
    // One switch model (the default sweep): colour by algorithm instead,
    // which then says whose plans do not fit.
    let one_model = (0..n)
        .filter(|&i| ok[i])
        .map(|i| s_of(&profile, i))
        .collect::<std::collections::BTreeSet<_>>()
        .len()
        <= 1;
    let mut names = Names::seeded(if one_model { &all_algos } else { &[] });
    let trial = runs.num("trial");
    let mut table = vec![
        [
            "topology",
            "trial",
            "ELP",
            "algorithm",
            "switch",
            "cable m",
            "classes",
            "switches",
            "over buffer",
            "least buffer left MiB",
            "over queues",
            "priorities / queues",
            "over ACL",
        ]
        .map(String::from)
        .to_vec(),
    ];
    let mut misfit_rows: Vec<((f64, f64), Vec<String>)> = Vec::new();
    let mib = |b: f64| b / f64::from(1u32 << 20);
    for i in 0..n {
        if !ok[i] {
            continue;
        }
        let idx = names.idx(&if one_model {
            s_of(&algo, i)
        } else {
            s_of(&profile, i)
        });
        let x = if cables_vary { cable[i] } else { size[i] };
        if let (Some(x), Some(m)) = (x, margin[i]) {
            buf.entry(idx).or_default().push((x, mib(m)));
        }
        if let (Some(x), Some(p), Some(q)) = (size[i], p_switch[i], queues[i]) {
            que.entry(idx).or_default().push((x, p));
            limits.push((x, q));
        }
        let over = |v: &Vec<Option<f64>>| v[i].unwrap_or(0.0);
        let failing = over(&over_b) + over(&over_q) + over(&over_a);
        if failing > 0.0 {
            let num = |v: Option<f64>| v.map_or("-".to_string(), |x| format!("{x:.0}"));
            // Worst first: most switches failing, then the least buffer.
            misfit_rows.push((
                (-failing, margin[i].unwrap_or(0.0)),
                vec![
                    s_of(&topo, i),
                    num(trial[i]),
                    s_of(&elp, i),
                    s_of(&algo, i),
                    s_of(&profile, i),
                    num(cable[i]),
                    num(classes[i]),
                    num(switches[i]),
                    num(over_b[i]),
                    margin[i].map_or("-".into(), |m| format!("{:.1}", mib(m))),
                    num(over_q[i]),
                    format!("{} / {}", num(p_switch[i]), num(queues[i])),
                    num(over_a[i]),
                ],
            ));
        }
    }
    let misfits = misfit_rows.len();
    misfit_rows.sort_by(|a, b| a.0.0.total_cmp(&b.0.0).then(a.0.1.total_cmp(&b.0.1)));
    table.extend(misfit_rows.into_iter().take(MISFITS_SHOWN).map(|r| r.1));
    limits.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
    limits.dedup();
    let panels = vec![
        Panel {
            title: "buffer left at the tightest switch".into(),
            axes: Axes {
                x: if cables_vary {
                    "switch-to-switch cable (m)"
                } else {
                    "switches and servers"
                },
                y: "buffer margin (MiB)",
                xs: if cables_vary {
                    Scale::Linear
                } else {
                    Scale::Log
                },
                ys: Scale::Linear,
            },
            lines: buf
                .into_iter()
                .map(|(idx, pts)| Line { idx, pts })
                .collect(),
            join: Join::None,
            crosses: Vec::new(),
            hline: Some(0.0),
            y_range: None,
        },
        Panel {
            title: "lossless queues the busiest switch needs".into(),
            axes: Axes {
                x: "switches and servers",
                y: "priorities at one switch",
                xs: Scale::Log,
                ys: Scale::Integer,
            },
            lines: que
                .into_iter()
                .map(|(idx, pts)| Line { idx, pts })
                .collect(),
            join: Join::None,
            crosses: limits,
            hline: None,
            y_range: None,
        },
    ];
    push(
        "Which switches do not fit, and by how much?",
        format!(
            "{colour} One circle per scenario in each panel. Left: the lossless buffer left after PFC headroom at the tightest switch; below the dashed zero line some switch does not fit. Right: the most lossless priorities at one switch; above the grey cross (the model's lossless queues) it does not fit. {misfit}",
            misfit = if misfits == 0 {
                "Every switch of every scenario fits.".to_string()
            } else if misfits <= MISFITS_SHOWN {
                format!(
                    "The table lists the {misfits} scenarios where some switch does not fit, with how many switches fail each check."
                )
            } else {
                format!(
                    "In {misfits} scenarios some switch does not fit; the table lists the {MISFITS_SHOWN} worst (most switches failing, then the least buffer left), and DuckDB lists them all: SELECT * FROM 'runs.parquet' WHERE switches_over_buffer + switches_over_queues + coalesce(switches_over_acl, 0) > 0."
                )
            },
            colour = if one_model {
                (0..n).find(|&i| ok[i]).map_or(String::new(), |i| {
                    format!(
                        "Every scenario uses the {} switch model: coloured by algorithm.",
                        s_of(&profile, i)
                    )
                })
            } else {
                "Coloured by switch model.".to_string()
            }
        ),
        panels,
        &names,
        &[("lossless queues of the model", "cross")],
        if misfits == 0 { Vec::new() } else { table },
    )?;

    // 3. Rules per switch: a step CDF per ELP and algorithm, on each
    // family's largest network.
    // A sweep without switch rows (none written yet) has no such chart;
    // one that is there but unreadable, or of another sweep, is an error,
    // not a missing chart.
    let switches = dir.join("switches.parquet");
    let nodes_b = match switches.symlink_metadata() {
        Ok(_) => {
            same_sweep(&dir.join("runs.parquet"), &switches)?;
            Some(read_batches(&switches)?)
        }
        Err(_) => None,
    };
    if let Some(nodes_b) = nodes_b {
        let nodes = Cols(&nodes_b);
        let ids = runs.num("scenario_id");
        let nid = nodes.num("scenario_id");
        let nrules = nodes.num("rules");
        let nkind = nodes.str("kind");
        let mut per_scenario: BTreeMap<u64, Vec<f64>> = BTreeMap::new();
        for j in 0..nodes.len() {
            if let (Some(id), Some(r), Some("switch")) = (nid[j], nrules[j], nkind[j].as_deref()) {
                per_scenario.entry(id as u64).or_default().push(r);
            }
        }
        let mut names = Names::seeded(&all_algos);
        let mut panels = Vec::new();
        for (f, e) in &family_elp {
            let rows: Vec<usize> = (0..n)
                .filter(|&i| {
                    ok[i] && s_of(&family, i) == *f && s_of(&elp, i) == *e && size[i].is_some()
                })
                .collect();
            let Some(largest) = rows.iter().filter_map(|&i| size[i]).reduce(f64::max) else {
                continue;
            };
            // One topology of that size (the first), every plan on it.
            let Some(t) = rows
                .iter()
                .find(|&&i| size[i] == Some(largest))
                .map(|&i| s_of(&topo, i))
            else {
                continue;
            };
            let mut lines = Vec::new();
            let mut seen = std::collections::BTreeSet::new();
            for &i in rows.iter().filter(|&&i| s_of(&topo, i) == t) {
                let label = s_of(&algo, i);
                let Some(v) = ids[i].and_then(|id| per_scenario.get(&(id as u64))) else {
                    continue;
                };
                // Trials of one plan: the first.
                if !seen.insert(label.clone()) || v.is_empty() {
                    continue;
                }
                let mut v = v.clone();
                v.sort_by(f64::total_cmp);
                let m = v.len() as f64;
                let mut pts = Vec::new();
                for (j, r) in v.iter().enumerate() {
                    if v.get(j + 1) != Some(r) {
                        pts.push((*r, (j + 1) as f64 / m));
                    }
                }
                lines.push(Line {
                    idx: names.idx(&label),
                    pts,
                });
            }
            if lines.is_empty() {
                continue;
            }
            panels.push(Panel {
                title: format!("{t}, {e}"),
                axes: Axes {
                    x: "rules per switch",
                    y: "share of switches",
                    xs: Scale::Linear,
                    ys: Scale::Linear,
                },
                lines,
                join: Join::Step,
                crosses: Vec::new(),
                hline: None,
                y_range: Some((0.0, 1.05)),
            });
        }
        push(
            "How many rules does each switch hold?",
            "One panel per family and ELP, on the family's largest network: the share of switches holding at most that many rules (compressed ACL entries plus ingress map entries), a step line per algorithm (coloured as above). Further left holds fewer rules; a circle marks each distinct count.".into(),
            panels,
            &names,
            &[],
            Vec::new(),
        )?;
    }

    // 4. Stage seconds per stage and family, with growth exponents where
    // a family has several sizes.
    let mut names = Names::default();
    // The stages some scenario spent time in (a sweep without failures
    // has no failures stage to list).
    let (stages, secs): (Vec<&str>, Vec<Vec<Option<f64>>>) =
        ["generate", "elp", "tag", "rules", "verify", "failures"]
            .into_iter()
            .map(|s| (s, runs.num(&format!("seconds_{s}"))))
            .filter(|(_, v)| (0..n).any(|i| ok[i] && v[i].is_some_and(|x| x > 0.0)))
            .unzip();
    for s in &stages {
        names.idx(s);
    }
    let mut panels = Vec::new();
    let mut slopes = Vec::new();
    for f in &family_panels {
        let rows: Vec<usize> = (0..n)
            .filter(|&i| ok[i] && s_of(&family, i) == *f && size[i].is_some())
            .collect();
        let sizes: std::collections::BTreeSet<u64> = rows
            .iter()
            .filter_map(|&i| size[i].map(f64::to_bits))
            .collect();
        let mut lines = Vec::new();
        let mut fitted = Vec::new();
        for (si, stage) in stages.iter().enumerate() {
            let pts: Vec<(f64, f64)> = rows
                .iter()
                .filter_map(|&i| match (size[i], secs[si][i]) {
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
        panels.push(Panel {
            title: f.clone(),
            axes: Axes {
                x: "switches and servers",
                y: "seconds",
                xs: Scale::Log,
                ys: Scale::Log,
            },
            lines,
            join: Join::None,
            crosses: Vec::new(),
            hline: None,
            y_range: None,
        });
    }
    push(
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
        &names,
        &[],
        Vec::new(),
    )?;

    // 4b. The tag stage per algorithm: the one stage the algorithm
    // decides, in the first chart's colours.
    let tag_secs = runs.num("seconds_tag");
    let mut names = Names::seeded(&all_algos);
    let mut panels = Vec::new();
    for f in &family_panels {
        let mut lines: BTreeMap<usize, Vec<(f64, f64)>> = BTreeMap::new();
        for i in (0..n).filter(|&i| ok[i] && s_of(&family, i) == *f) {
            if let (Some(x), Some(y)) = (size[i], tag_secs[i].filter(|&y| y > 0.0)) {
                lines
                    .entry(names.idx(&s_of(&algo, i)))
                    .or_default()
                    .push((x, y));
            }
        }
        if lines.is_empty() {
            continue;
        }
        panels.push(Panel {
            title: f.clone(),
            axes: Axes {
                x: "switches and servers",
                y: "seconds to tag",
                xs: Scale::Log,
                ys: Scale::Log,
            },
            lines: lines
                .into_iter()
                .map(|(idx, pts)| Line { idx, pts })
                .collect(),
            join: Join::None,
            crosses: Vec::new(),
            hline: None,
            y_range: None,
        });
    }
    push(
        "How long does each algorithm take to tag?",
        "One panel per family: the tag stage's seconds (the stage the algorithm is; the others are the same for every algorithm on a scenario) against network size, log-log, one circle per scenario, coloured by algorithm as in the first chart. `search` and `exact` run until their budget, stall rule or proof, so their times are budgets more than costs.".into(),
        panels,
        &names,
        &[],
        Vec::new(),
    )?;

    // 5. Failures: plain PFC's deadlocks, and what Tagger keeps lossless,
    // per routing model.
    let fspec = runs.str("failures_spec");
    let routing = runs.str("failures_routing");
    let cbd = runs.num("failures_cbd_rate");
    let lossless = runs.num("failures_lossless_paths_median");
    let failed_count = |spec: &str| -> Option<f64> {
        let (_, rest) = spec.split_once(':')?;
        rest.split(',').next()?.parse().ok()
    };
    let (mut c, mut l) = (Grid::new(), Grid::new());
    for i in 0..n {
        let (true, Some(sp)) = (ok[i], fspec[i].as_deref()) else {
            continue;
        };
        let Some(k) = failed_count(sp) else { continue };
        let kind = sp.split(':').next().unwrap_or("");
        let r = format!("{} routing, {kind} failing", s_of(&routing, i));
        if let Some(v) = cbd[i] {
            grid_push(&mut c, &r, &s_of(&topo, i), (k, 100.0 * v));
        }
        if let Some(v) = lossless[i] {
            grid_push(
                &mut l,
                &r,
                &format!("{} {} {}", s_of(&topo, i), s_of(&elp, i), s_of(&algo, i)),
                (k, 100.0 * v),
            );
        }
    }
    for (_, g) in c.iter_mut() {
        for pts in g.values_mut() {
            // Plans of one topology share their trials: one point per count.
            pts.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
            pts.dedup();
        }
    }
    for (grid, title, note, y) in [
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
    ] {
        let mut names = Names::default();
        let panels = grid
            .into_iter()
            .map(|(t, series)| Panel {
                title: t,
                axes: Axes {
                    x: "failed links (or switches)",
                    y,
                    xs: Scale::Integer,
                    ys: Scale::Linear,
                },
                lines: series
                    .into_iter()
                    .map(|(name, pts)| Line {
                        idx: names.idx(&name),
                        pts,
                    })
                    .collect(),
                join: Join::Straight,
                crosses: Vec::new(),
                hline: None,
                y_range: Some((-5.0, 105.0)),
            })
            .collect();
        push(title, note.into(), panels, &names, &[], Vec::new())?;
    }

    // 6. Growth paths: entries each step rewrites, extended against
    // replanned.
    let growth_file = dir.join("growth.parquet");
    if growth_file.exists() {
        let gb = read_batches(&growth_file)?;
        let g = Cols(&gb);
        let row_of: BTreeMap<u64, usize> = runs
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
            let (Some(x), true) = (step[j], ok[i]) else {
                continue;
            };
            let panel = format!("{} {}", s_of(&topo, i), s_of(&elp, i));
            for (series, y) in [("extended", churn[j]), ("from scratch", scratch[j])] {
                if let Some(y) = y {
                    grid_push(
                        &mut grid,
                        &panel,
                        &format!("{} {series}", s_of(&algo, i)),
                        (x, y),
                    );
                }
            }
        }
        let mut names = Names::default();
        let panels = grid
            .into_iter()
            .map(|(t, series)| Panel {
                title: t,
                axes: Axes {
                    x: "growth step",
                    y: "entries rewritten",
                    xs: Scale::Integer,
                    ys: Scale::Linear,
                },
                lines: series
                    .into_iter()
                    .map(|(name, pts)| Line {
                        idx: names.idx(&name),
                        pts,
                    })
                    .collect(),
                join: Join::Straight,
                crosses: Vec::new(),
                hline: None,
                y_range: None,
            })
            .collect();
        push(
            "How many entries does each growth step rewrite?",
            "Per growth step (sweep key growth), the entries added, removed or changed against the step before: with the plan extended as tagger update extends it, and replanned from scratch with the same algorithm. Every extended step's schedule is verified; growth.parquet also has the priorities each needs.".into(),
            panels,
            &names,
            &[],
            Vec::new(),
        )?;
    }
    Ok(out)
}

/// The whole page for the sweep in `dir`.
///
/// # Errors
/// As [`charts`].
pub fn html(dir: &Path) -> Result<String> {
    let runs_b = read_batches(&dir.join("runs.parquet"))?;
    let charts = charts_of(dir, &runs_b)?;
    let meta = crate::output::parquet::read_metadata(&dir.join("runs.parquet"))?;
    let get = |k: &str| {
        meta.iter()
            .find(|(x, _)| x == k)
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    };
    let rows = crate::sweep::rows_of(&runs_b).map_err(|e| Error::Parquet {
        path: dir.join("runs.parquet"),
        reason: e.to_string(),
    })?;
    let runs = Cols(&runs_b);
    let (status, error) = (runs.str("status"), runs.str("error"));
    let ids = runs.num("scenario_id");
    let (topo, elp, algo) = (runs.str("topology"), runs.str("elp"), runs.str("algo"));
    let mut page = String::new();
    let name = get("tagger.sweep");
    let _ = write!(
        page,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n<title>tagger sweep {}</title>\n<style>{CSS}</style>\n</head>\n<body>\n<h1>Sweep <code>{}</code></h1>\n<p>{} scenarios, {} failed; engine version {}.</p>\n",
        esc(&name),
        esc(&name),
        rows.len(),
        rows.iter().filter(|r| r.error.is_some()).count(),
        esc(&get("tagger.version"))
    );
    page.push_str("<h2>Charts</h2>\n");
    for c in &charts {
        let mut legend = String::new();
        for (name, color, mark) in &c.legend {
            let _ = write!(
                legend,
                "<li><span class=\"{mark}\" style=\"--c:{color}\"></span>{}</li>",
                esc(name)
            );
        }
        let mut panels = String::new();
        for (title, svg) in &c.panels {
            let _ = writeln!(
                panels,
                "<div class=\"panel\" title=\"{}\">{}</div>",
                esc(title),
                svg.trim()
            );
        }
        let mut table = String::new();
        if let Some((head, rows)) = c.table.split_first() {
            table.push_str("<div class=\"scroll\"><table>\n<tr>");
            for h in head {
                let _ = write!(table, "<th>{}</th>", esc(h));
            }
            table.push_str("</tr>\n");
            for r in rows {
                table.push_str("<tr>");
                for x in r {
                    let _ = write!(table, "<td>{}</td>", esc(x));
                }
                table.push_str("</tr>\n");
            }
            table.push_str("</table></div>\n");
        }
        let _ = write!(
            page,
            "<figure class=\"chart\" data-points=\"{}\">\n<figcaption><b>{}</b> {}</figcaption>\n<div class=\"panels\">\n{panels}</div>\n<ul class=\"legend\">{legend}</ul>\n{table}</figure>\n",
            c.points,
            esc(&c.title),
            esc(&c.note)
        );
    }
    page.push_str("<h2>Summary</h2>\n<pre>");
    page.push_str(&esc(&crate::render::sweep_summary(&rows)));
    page.push_str("</pre>\n");
    let f = crate::render::sweep_failures(&rows);
    if !f.is_empty() {
        page.push_str("<h2>Failure what-if</h2>\n<pre>");
        page.push_str(&esc(&f));
        page.push_str("</pre>\n");
    }
    let failed: Vec<usize> = (0..runs.len())
        .filter(|&i| status[i].as_deref() != Some("ok"))
        .collect();
    if !failed.is_empty() {
        page.push_str("<h2>Failed scenarios</h2>\n<table>\n<tr><th>id</th><th>topology</th><th>ELP</th><th>algorithm</th><th>error</th></tr>\n");
        for i in failed {
            let _ = writeln!(
                page,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                ids[i].map_or(String::new(), |x| (x as u64).to_string()),
                esc(topo[i].as_deref().unwrap_or("")),
                esc(elp[i].as_deref().unwrap_or("")),
                esc(algo[i].as_deref().unwrap_or("")),
                esc(error[i].as_deref().unwrap_or(""))
            );
        }
        page.push_str("</table>\n");
    }
    let _ = write!(
        page,
        "<h2>Spec</h2>\n<pre>{}</pre>\n</body>\n</html>\n",
        esc(&get("tagger.spec"))
    );
    Ok(page)
}

/// Writes the report of the sweep in `dir` to `out` (atomically).
///
/// # Errors
/// As [`html`], and I/O errors naming `out`.
pub fn write(dir: &Path, out: &Path) -> Result<()> {
    crate::output::write_string(out, &html(dir)?)
}

const CSS: &str = "body{font-family:system-ui,sans-serif;margin:1.5rem auto;max-width:1400px;padding:0 1rem;color:#222;font-size:15px}\
h1{font-size:1.5rem}h2{font-size:1.2rem;margin-top:2rem;border-bottom:1px solid #ddd}\
figure.chart{margin:0 0 1.5rem;border:1px solid #e4e4e4;border-radius:4px;padding:.6rem;background:#fff}\
div.panels{display:grid;grid-template-columns:repeat(auto-fill,minmax(360px,1fr));gap:.5rem}\
div.panel{max-width:620px}div.panel svg{width:100%;height:auto;display:block}\
figcaption{font-size:14px;color:#333;margin-bottom:.4rem}figcaption b{font-size:16px;display:block;margin-bottom:.2rem}\
pre{font-size:13px;overflow-x:auto;background:#f7f7f7;padding:.6rem;border-radius:4px}\
table{border-collapse:collapse;font-size:13px;margin-top:.5rem}div.scroll{overflow-x:auto}td,th{border:1px solid #ddd;padding:.2rem .4rem;text-align:left}\
ul.legend{list-style:none;padding:0;margin:.4rem 0;font-size:13px;display:flex;flex-wrap:wrap;gap:.2rem 1.2rem}\
ul.legend span{display:inline-block;width:.75rem;height:.75rem;margin-right:.35rem;vertical-align:middle;box-sizing:border-box}\
span.dot{border-radius:50%;background:var(--c)}span.ring{border-radius:50%;border:2px solid var(--c)}\
span.cross{background:linear-gradient(45deg,transparent 42%,var(--c) 42%,var(--c) 58%,transparent 58%),linear-gradient(-45deg,transparent 42%,var(--c) 42%,var(--c) 58%,transparent 58%)}";

#[cfg(test)]
mod tests {
    use super::{Scale, tick, ticks};

    /// Ticks are round, inside the range, and never share a label; an
    /// integer axis gets whole numbers only.
    #[test]
    fn ticks_are_round_and_distinct() {
        for (lo, hi) in [(0.5, 3.5), (1.5, 2.5), (0.5, 12.5), (0.5, 64.5)] {
            let t = ticks(lo, hi, Scale::Integer);
            assert!(!t.is_empty(), "{lo}..{hi}");
            assert!(
                t.iter().all(|v| v.fract() == 0.0 && *v >= lo && *v <= hi),
                "{t:?}"
            );
        }
        assert_eq!(ticks(0.5, 4.5, Scale::Integer), [1.0, 2.0, 3.0, 4.0]);
        assert_eq!(
            ticks(7.0, 700.0, Scale::Log),
            [10.0, 20.0, 50.0, 100.0, 200.0, 500.0]
        );
        // Many decades: fewer marks, still round.
        let t = ticks(1e-4, 1e4, Scale::Log);
        assert!(
            t.len() <= 8 && t.iter().all(|v| v.log10().fract() == 0.0),
            "{t:?}"
        );
        for (lo, hi, s) in [
            (0.9, 1.3, Scale::Log),
            (-31.0, 40.0, Scale::Linear),
            (0.0, 1.05, Scale::Linear),
            (3e-4, 2.0, Scale::Log),
        ] {
            let t = ticks(lo, hi, s);
            let labels: std::collections::BTreeSet<String> = t.iter().map(tick).collect();
            assert_eq!(labels.len(), t.len(), "{t:?}");
        }
    }
    /// Every column name this file reads through [`super::Cols`] is one a
    /// table declares (a misspelt name would chart nothing, silently).
    #[test]
    fn every_column_the_report_reads_is_declared() {
        let declared: std::collections::BTreeSet<&str> = crate::sweep::schema()
            .into_iter()
            .flat_map(|(_, cols)| cols.into_iter().map(|c| c.name))
            .collect();
        let source = include_str!("report.rs");
        let mut asked = 0;
        for call in [".str(\"", ".num(\""] {
            for (at, _) in source.match_indices(call) {
                let rest = &source[at + call.len()..];
                let name = &rest[..rest.find('"').expect("a closing quote")];
                if name.is_empty() || name.contains(' ') {
                    continue; // this test's own patterns
                }
                asked += 1;
                assert!(
                    declared.contains(name),
                    "the report reads column '{name}', which no table declares"
                );
            }
        }
        assert!(asked > 10, "found only {asked} column reads");
    }
}
