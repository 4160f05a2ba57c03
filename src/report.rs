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

/// One chart: its caption, what it shows, its SVG and its data points.
#[derive(Debug)]
pub struct Chart {
    /// The chart's caption.
    pub title: String,
    /// What it shows and how to read it.
    pub note: String,
    /// The chart as inline SVG.
    pub svg: String,
    /// Data points drawn (one mark each).
    pub points: usize,
    /// Per series: name, colour (`#rrggbb`), and its mark (`dot`, `ring`
    /// or `cross`); written as HTML under the chart, so no legend box
    /// covers the data.
    pub legend: Vec<(String, String, &'static str)>,
}

/// Colour and mark of series `i` of `n` circle series: ten colours, filled
/// for the first ten series and rings for the next ten.
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
    } else if a >= 0.01 {
        format!("{v:.2}")
    } else {
        format!("{v:.0e}")
    }
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

/// A named series of points.
type Series = BTreeMap<String, Vec<(f64, f64)>>;

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

/// How an axis is scaled.
#[derive(Clone, Copy, PartialEq)]
enum Scale {
    Linear,
    Log,
}

struct Axes<'a> {
    x: &'a str,
    y: &'a str,
    xs: Scale,
    ys: Scale,
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
        Scale::Log => (lo / 1.5, hi * 1.5),
        Scale::Linear => {
            let pad = ((hi - lo) * 0.08).max(if hi.abs() > 0.0 { hi.abs() * 0.05 } else { 0.5 });
            (lo - pad, hi + pad)
        }
    }
}

/// Draws `series` as circles joined by lines (when `lines`), with `extra`
/// drawn as crosses (not counted as points); returns the SVG.
fn draw(
    title: &str,
    axes: &Axes,
    series: &Series,
    extra: &Series,
    lines: bool,
) -> std::result::Result<String, String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (760, 420)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let all = || series.values().chain(extra.values()).flatten();
        let (x0, x1) = range(all().map(|p| p.0), axes.xs);
        let (y0, y1) = range(all().map(|p| p.1), axes.ys);
        let mut b = ChartBuilder::on(&root);
        b.caption(title, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(44)
            .y_label_area_size(64);
        macro_rules! body {
            ($chart:expr) => {{
                let mut chart = $chart.map_err(|e| e.to_string())?;
                let mut mesh = chart.configure_mesh();
                mesh.x_desc(axes.x)
                    .y_desc(axes.y)
                    .label_style(("sans-serif", 13))
                    .x_label_formatter(&|v| tick(v))
                    .y_label_formatter(&|v| tick(v));
                // Log axes keep plotters' own ticks (a count would leave
                // only the decades).
                if axes.xs == Scale::Linear {
                    mesh.x_labels(8);
                }
                if axes.ys == Scale::Linear {
                    mesh.y_labels(8);
                }
                mesh.draw().map_err(|e| e.to_string())?;
                // Secondary marks first, so the counted circles stay on top.
                for (i, pts) in extra.values().enumerate() {
                    let color = PALETTE[(i + 3) % PALETTE.len()].mix(0.8);
                    chart
                        .draw_series(pts.iter().map(|&p| Cross::new(p, 4, color.stroke_width(2))))
                        .map_err(|e| e.to_string())?;
                }
                for (i, pts) in series.values().enumerate() {
                    let (color, filled) = style(i);
                    if lines {
                        let mut sorted = pts.clone();
                        sorted.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
                        chart
                            .draw_series(LineSeries::new(sorted, color.stroke_width(1)))
                            .map_err(|e| e.to_string())?;
                    }
                    let shape = if filled {
                        color.filled()
                    } else {
                        color.stroke_width(2)
                    };
                    chart
                        .draw_series(pts.iter().map(|&p| Circle::new(p, 3, shape)))
                        .map_err(|e| e.to_string())?;
                }
            }};
        }
        match (axes.xs, axes.ys) {
            (Scale::Log, Scale::Log) => {
                body!(b.build_cartesian_2d((x0..x1).log_scale(), (y0..y1).log_scale()))
            }
            (Scale::Log, Scale::Linear) => {
                body!(b.build_cartesian_2d((x0..x1).log_scale(), y0..y1))
            }
            (Scale::Linear, Scale::Log) => {
                body!(b.build_cartesian_2d(x0..x1, (y0..y1).log_scale()))
            }
            (Scale::Linear, Scale::Linear) => body!(b.build_cartesian_2d(x0..x1, y0..y1)),
        }
        root.present().map_err(|e| e.to_string())?;
    }
    // The drawing's own size is a default; the page scales it to its width.
    Ok(svg.replacen(
        "<svg width=\"760\" height=\"420\"",
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

/// [`charts`] of the runs table `runs_b` already read from `dir`.
fn charts_of(dir: &Path, runs_b: &[RecordBatch]) -> Result<Vec<Chart>> {
    let runs = Cols(runs_b);
    let status = runs.str("status");
    let ok: Vec<bool> = status.iter().map(|s| s.as_deref() == Some("ok")).collect();
    let family = runs.str("family");
    let algo = runs.str("algo");
    let elp = runs.str("elp");
    let topo = runs.str("topology_grid");
    let switches = runs.num("switches");
    let servers = runs.num("servers");
    let size: Vec<Option<f64>> = switches
        .iter()
        .zip(&servers)
        .map(|(a, b)| Some(a.unwrap_or(0.0) + b.unwrap_or(0.0)).filter(|&x| x > 0.0))
        .collect();
    let key = |i: usize, parts: &[&Vec<Option<String>>]| {
        parts
            .iter()
            .map(|p| p[i].clone().unwrap_or_default())
            .collect::<Vec<_>>()
            .join(" ")
    };
    let bad = |e: String| Error::Parquet {
        path: dir.join("report.html"),
        reason: format!("drawing a chart: {e}"),
    };
    let mut out = Vec::new();
    let mut push = |title: &str, note: &str, axes: Axes, s: Series, x: Series, lines: bool| {
        let points = s.values().map(Vec::len).sum();
        if points == 0 {
            return Ok::<(), Error>(());
        }
        let svg = draw(title, &axes, &s, &x, lines).map_err(bad)?;
        let mut legend: Vec<(String, String, &'static str)> = s
            .keys()
            .enumerate()
            .map(|(i, name)| {
                let (c, filled) = style(i);
                (name.clone(), hex(c), if filled { "dot" } else { "ring" })
            })
            .collect();
        legend.extend(
            x.keys()
                .enumerate()
                .map(|(i, name)| (name.clone(), hex(PALETTE[(i + 3) % PALETTE.len()]), "cross")),
        );
        out.push(Chart {
            title: title.into(),
            note: note.into(),
            svg,
            points,
            legend,
        });
        Ok(())
    };
    // 1. Priorities against size, with the proven lower bound.
    let prio = runs.num("priorities");
    let bound = runs.num("priorities_lower_bound");
    let (mut s, mut x) = (Series::new(), Series::new());
    for i in 0..runs.len() {
        if let (true, Some(n), Some(p)) = (ok[i], size[i], prio[i]) {
            s.entry(key(i, &[&family])).or_default().push((n, p));
            if let Some(b) = bound[i] {
                x.entry("proven lower bound".into())
                    .or_default()
                    .push((n, b));
            }
        }
    }
    push(
        "Lossless priorities against network size",
        "One circle per scenario, coloured by family (every algorithm); crosses mark the proven lower bound on priorities.",
        Axes {
            x: "switches and servers",
            y: "lossless priorities",
            xs: Scale::Log,
            ys: Scale::Linear,
        },
        s,
        x,
        false,
    )?;
    // 2. Rules per switch: the bottleneck (max) and p99.
    let rmax = runs.num("rules_max");
    let rp99 = runs.num("rules_p99");
    let (mut s, mut x) = (Series::new(), Series::new());
    for i in 0..runs.len() {
        if let (true, Some(n), Some(r)) = (ok[i], size[i], rmax[i]) {
            s.entry(key(i, &[&family]))
                .or_default()
                .push((n, r.max(1.0)));
            if let Some(p) = rp99[i] {
                x.entry("99th percentile".into())
                    .or_default()
                    .push((n, p.max(1.0)));
            }
        }
    }
    push(
        "Rules per switch against network size",
        "Circles: the busiest switch's rules (compressed ACL entries plus ingress map entries), one per scenario, coloured by family; crosses: the 99th percentile of the same scenario.",
        Axes {
            x: "switches and servers",
            y: "rules per switch",
            xs: Scale::Log,
            ys: Scale::Log,
        },
        s,
        x,
        false,
    )?;
    // 3. Per-switch rule distribution of the largest scenario per family.
    if let Ok(nodes_b) = read_batches(&dir.join("switches.parquet")) {
        let nodes = Cols(&nodes_b);
        let ids = runs.num("scenario_id");
        let mut largest: BTreeMap<String, (f64, u64, String)> = BTreeMap::new();
        for i in 0..runs.len() {
            if let (true, Some(n), Some(id)) = (ok[i], size[i], ids[i]) {
                let f = family[i].clone().unwrap_or_default();
                let label = key(i, &[&topo, &elp, &algo]);
                let e = largest.entry(f).or_insert((n, id as u64, label.clone()));
                if n > e.0 {
                    *e = (n, id as u64, label);
                }
            }
        }
        let nid = nodes.num("scenario_id");
        let nrules = nodes.num("rules");
        let nkind = nodes.str("kind");
        let mut s = Series::new();
        for (id, label) in largest.values().map(|(_, id, l)| (*id, l)) {
            let mut v: Vec<f64> = (0..nodes.len())
                .filter(|&j| nid[j] == Some(id as f64) && nkind[j].as_deref() == Some("switch"))
                .filter_map(|j| nrules[j])
                .collect();
            if v.is_empty() {
                continue;
            }
            v.sort_by(f64::total_cmp);
            let n = v.len() as f64;
            // One point per distinct value: the share of switches at or
            // below it.
            let mut pts = Vec::new();
            for (j, r) in v.iter().enumerate() {
                if v.get(j + 1) != Some(r) {
                    pts.push((*r, (j + 1) as f64 / n));
                }
            }
            s.insert(label.clone(), pts);
        }
        push(
            "Rules per switch: distribution (CDF)",
            "The largest scenario of each family: the share of its switches holding at most that many rules.",
            Axes {
                x: "rules per switch",
                y: "share of switches",
                xs: Scale::Linear,
                ys: Scale::Linear,
            },
            s,
            Series::new(),
            true,
        )?;
    }
    // 4. Stage seconds against size, log-log, with fitted exponents.
    let mut s = Series::new();
    for stage in ["generate", "elp", "tag", "rules", "verify", "failures"] {
        let secs = runs.num(&format!("seconds_{stage}"));
        let pts: Vec<(f64, f64)> = (0..runs.len())
            .filter_map(|i| match (ok[i], size[i], secs[i]) {
                (true, Some(n), Some(t)) if t > 0.0 => Some((n, t)),
                _ => None,
            })
            .collect();
        if pts.is_empty() {
            continue;
        }
        let name = match loglog_slope(&pts) {
            Some(k) => format!("{stage} (slope {k:.2})"),
            None => stage.to_string(),
        };
        s.insert(name, pts);
    }
    push(
        "Stage seconds against network size",
        "Log-log; the legend gives each stage's fitted growth exponent (least squares on the logs, all families together).",
        Axes {
            x: "switches and servers",
            y: "seconds",
            xs: Scale::Log,
            ys: Scale::Log,
        },
        s,
        Series::new(),
        false,
    )?;
    // 5. Capacity: buffer margin against cable length, per switch model.
    let profile = runs.str("switch_profile");
    let cable = runs.num("cable_m");
    let margin = runs.num("buffer_margin_min_bytes");
    let settings: std::collections::BTreeSet<(String, u64)> = (0..runs.len())
        .filter_map(|i| Some((profile[i].clone()?, cable[i]?.to_bits())))
        .collect();
    if settings.len() > 1 {
        let mut s = Series::new();
        for i in 0..runs.len() {
            if let (true, Some(c), Some(m)) = (ok[i], cable[i], margin[i]) {
                let k = format!(
                    "{} {} on {}",
                    topo[i].as_deref().unwrap_or(""),
                    elp[i].as_deref().unwrap_or(""),
                    profile[i].as_deref().unwrap_or("")
                );
                s.entry(k).or_default().push((c, m / (1u64 << 20) as f64));
            }
        }
        push(
            "Smallest buffer margin against cable length",
            "Per plan and switch model: the least lossless buffer left after PFC headroom at any switch (below 0: some switch does not fit).",
            Axes {
                x: "switch-to-switch cable (m)",
                y: "buffer margin (MiB)",
                xs: Scale::Linear,
                ys: Scale::Linear,
            },
            s,
            Series::new(),
            true,
        )?;
    }
    // 6. Failures: CBD rate and lossless share against failed links.
    let fspec = runs.str("failures_spec");
    let routing = runs.str("failures_routing");
    let cbd = runs.num("failures_cbd_rate");
    let lossless = runs.num("failures_lossless_paths_median");
    let failed_count = |spec: &str| -> Option<f64> {
        let (_, rest) = spec.split_once(':')?;
        rest.split(',').next()?.parse().ok()
    };
    let (mut c, mut l) = (Series::new(), Series::new());
    for i in 0..runs.len() {
        let (true, Some(sp)) = (ok[i], fspec[i].as_deref()) else {
            continue;
        };
        let Some(f) = failed_count(sp) else { continue };
        let kind = sp.split(':').next().unwrap_or("");
        let r = routing[i].clone().unwrap_or_default();
        if let Some(v) = cbd[i] {
            c.entry(format!("{} {kind}, {r}", topo[i].as_deref().unwrap_or("")))
                .or_default()
                .push((f, 100.0 * v));
        }
        if let Some(v) = lossless[i] {
            l.entry(format!(
                "{} {} {kind}, {r}",
                topo[i].as_deref().unwrap_or(""),
                elp[i].as_deref().unwrap_or("")
            ))
            .or_default()
            .push((f, 100.0 * v));
        }
    }
    for pts in c.values_mut() {
        // Plans of one topology share their trials: one point per count.
        pts.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
        pts.dedup();
    }
    push(
        "Plain PFC: trials with a cyclic buffer dependency",
        "Without Tagger (one lossless priority on every route), per topology and routing model after the failures.",
        Axes {
            x: "failed links (or switches)",
            y: "trials with CBD (%)",
            xs: Scale::Linear,
            ys: Scale::Linear,
        },
        c,
        Series::new(),
        true,
    )?;
    push(
        "With Tagger: routes that stay lossless",
        "Median trial, under the rules installed for the healthy network (packets no rule matches continue lossy).",
        Axes {
            x: "failed links (or switches)",
            y: "lossless routes (%)",
            xs: Scale::Linear,
            ys: Scale::Linear,
        },
        l,
        Series::new(),
        true,
    )?;
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
    page.push_str("<h2>Charts</h2>\n<div class=\"grid\">\n");
    for c in &charts {
        let mut legend = String::new();
        for (name, color, mark) in &c.legend {
            let _ = write!(
                legend,
                "<li><span class=\"{mark}\" style=\"--c:{color}\"></span>{}</li>",
                esc(name)
            );
        }
        let _ = write!(
            page,
            "<figure class=\"chart\" data-points=\"{}\">\n{}\n<ul class=\"legend\">{legend}</ul>\n<figcaption><b>{}</b> {}</figcaption>\n</figure>\n",
            c.points,
            c.svg.trim(),
            esc(&c.title),
            esc(&c.note)
        );
    }
    page.push_str("</div>\n<h2>Summary</h2>\n<pre>");
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

const CSS: &str = "body{font-family:system-ui,sans-serif;margin:1.5rem auto;max-width:1400px;padding:0 1rem;color:#222}\
h1{font-size:1.5rem}h2{font-size:1.2rem;margin-top:2rem;border-bottom:1px solid #ddd}\
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(560px,1fr));gap:1rem}\
figure.chart{margin:0;border:1px solid #e4e4e4;border-radius:4px;padding:.5rem;background:#fff}\
figure.chart svg{width:100%;height:auto;display:block}\
figcaption{font-size:.85rem;color:#444;margin-top:.3rem}\
pre{font-size:.75rem;overflow-x:auto;background:#f7f7f7;padding:.6rem;border-radius:4px}\
table{border-collapse:collapse;font-size:.8rem}td,th{border:1px solid #ddd;padding:.2rem .4rem;text-align:left}\
ul.legend{list-style:none;padding:0;margin:.3rem 0;font-size:.78rem;columns:2;column-gap:1rem}\
ul.legend li{break-inside:avoid;margin:.1rem 0}\
ul.legend span{display:inline-block;width:.7rem;height:.7rem;margin-right:.35rem;vertical-align:middle;box-sizing:border-box}\
span.dot{border-radius:50%;background:var(--c)}span.ring{border-radius:50%;border:2px solid var(--c)}\
span.cross{background:linear-gradient(45deg,transparent 42%,var(--c) 42%,var(--c) 58%,transparent 58%),linear-gradient(-45deg,transparent 42%,var(--c) 42%,var(--c) 58%,transparent 58%)}";

#[cfg(test)]
mod tests {
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
