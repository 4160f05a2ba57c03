//! Drawing: one panel (a small multiple) as inline SVG with plotters, its
//! axes, ticks and marks, and the series' colours.

use plotters::prelude::*;

/// Colour and mark of series `i`: ten colours, filled for the first ten
/// series and rings for the next ten.
pub(super) fn style(i: usize) -> (RGBColor, bool) {
    (
        PALETTE[i % PALETTE.len()],
        (i / PALETTE.len()).is_multiple_of(2),
    )
}

pub(super) fn hex(c: RGBColor) -> String {
    format!("#{:02x}{:02x}{:02x}", c.0, c.1, c.2)
}

/// Tick labels without a spurious `.0`, and small values in few digits.
pub(super) fn tick(v: &f64) -> String {
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
pub(super) fn sci(ticks: &[f64]) -> bool {
    ticks.iter().any(|&v| v > 0.0 && v < 1e-3)
}

/// [`tick`], in scientific notation under 1 on an axis where [`sci`].
pub(super) fn tick_on(v: &f64, sci: bool) -> String {
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
pub(super) fn ticks(lo: f64, hi: f64, scale: Scale) -> Vec<f64> {
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
pub(super) const GREY: RGBColor = RGBColor(80, 80, 80);

/// How an axis is scaled.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum Scale {
    Linear,
    Log,
    /// Linear, with ticks at whole numbers only (priorities, queues).
    Integer,
}

/// A panel's axis names and scales.
#[derive(Clone, Copy)]
pub(super) struct Axes {
    pub(super) x: &'static str,
    pub(super) y: &'static str,
    pub(super) xs: Scale,
    pub(super) ys: Scale,
}

/// How a series' points are joined.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum Join {
    None,
    Straight,
    /// A step function (a CDF): flat to the next x, then up.
    Step,
}

/// One series in a panel; `idx` is its index in the chart's legend, so it
/// keeps its colour in every panel.
pub(super) struct Line {
    pub(super) idx: usize,
    pub(super) pts: Vec<(f64, f64)>,
}

/// Lines of series index -> points, in index order.
pub(super) fn lines(series: std::collections::BTreeMap<usize, Vec<(f64, f64)>>) -> Vec<Line> {
    series
        .into_iter()
        .map(|(idx, pts)| Line { idx, pts })
        .collect()
}

/// One small multiple.
pub(super) struct Panel {
    pub(super) title: String,
    pub(super) axes: Axes,
    pub(super) lines: Vec<Line>,
    pub(super) join: Join,
    /// Grey crosses (bounds, limits); not data points.
    pub(super) crosses: Vec<(f64, f64)>,
    /// Grey bars `(x from, x to, y)` under the circles (bounds across a
    /// band of dodged circles: a circle on its bound sits on the bar, not
    /// under a mark); not data points.
    pub(super) bars: Vec<(f64, f64, f64)>,
    /// X ticks where the data's own x values read better than round ones
    /// (a few network sizes, each a band of dodged circles).
    pub(super) x_ticks: Option<Vec<f64>>,
    /// A grey dashed horizontal reference line (e.g. 0).
    pub(super) hline: Option<f64>,
    /// A y range shared with the other panels, when they compare values.
    pub(super) y_range: Option<(f64, f64)>,
}

impl Panel {
    /// A panel of points only: not joined, no marks, its own y range.
    pub(super) fn new(title: String, axes: Axes, lines: Vec<Line>) -> Panel {
        Panel {
            title,
            axes,
            lines,
            join: Join::None,
            crosses: Vec::new(),
            bars: Vec::new(),
            x_ticks: None,
            hline: None,
            y_range: None,
        }
    }
}

pub(super) fn range(v: impl Iterator<Item = f64>, scale: Scale) -> (f64, f64) {
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

/// Why plotters could not draw a panel into its SVG string (the cause of
/// [`crate::Error::Chart`]).
pub type DrawError = plotters::drawing::DrawingAreaErrorKind<std::io::Error>;

/// Draws one panel as SVG: circles for the points (the only circles, so
/// they can be counted), joined as `join` says, over a reference line and
/// under grey crosses (bounds and limits stay visible).
pub(super) fn draw_panel(p: &Panel) -> std::result::Result<String, DrawError> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, PANEL).into_drawing_area();
        root.fill(&WHITE)?;
        let bar_ends: Vec<(f64, f64)> = p
            .bars
            .iter()
            .flat_map(|&(a, b, y)| [(a, y), (b, y)])
            .collect();
        let xs = || {
            p.lines
                .iter()
                .flat_map(|l| l.pts.iter())
                .chain(&p.crosses)
                .chain(&bar_ends)
        };
        let (x0, x1) = range(xs().map(|q| q.0), p.axes.xs);
        let (y0, y1) = p
            .y_range
            .unwrap_or_else(|| range(xs().map(|q| q.1).chain(p.hline), p.axes.ys));
        let tx = match &p.x_ticks {
            Some(t) => t.clone(),
            None => ticks(x0, x1, p.axes.xs),
        };
        let ty = ticks(y0, y1, p.axes.ys);
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
                let mut chart = $chart?;
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
                    .draw()?;
                if let Some(h) = p.hline {
                    chart.draw_series(DashedLineSeries::new(
                        [(x0, h), (x1, h)],
                        6,
                        4,
                        GREY.stroke_width(1),
                    ))?;
                }
                for &(a, b, y) in &p.bars {
                    chart.draw_series(LineSeries::new([(a, y), (b, y)], GREY.stroke_width(3)))?;
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
                        chart.draw_series(LineSeries::new(path, color.stroke_width(2)))?;
                    }
                    let shape = if filled {
                        color.filled()
                    } else {
                        color.stroke_width(2)
                    };
                    chart.draw_series(l.pts.iter().map(|&q| Circle::new(q, 4, shape)))?;
                }
                // Bounds and limits over the circles, so that none hides.
                chart.draw_series(
                    p.crosses
                        .iter()
                        .map(|&q| Cross::new(q, 5, GREY.stroke_width(2))),
                )?;
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
        root.present()?;
    }
    // The drawing's own size is a default; the page scales it to its cell.
    Ok(svg.replacen(
        &format!("<svg width=\"{}\" height=\"{}\"", PANEL.0, PANEL.1),
        "<svg role=\"img\" preserveAspectRatio=\"xMidYMid meet\"",
        1,
    ))
}

/// Circles of several series at one x, side by side on a log axis within
/// a band that keeps the x readable: at most 8% either side of it, and at
/// most a third of the way to the next x, so bands never meet.
pub(super) struct Band {
    /// Half the band's width, as a log ratio.
    half: f64,
    /// The series in the band, in drawing order.
    series: Vec<usize>,
    /// The distinct x values, when they are few and far enough apart to
    /// be the axis' ticks.
    pub(super) ticks: Option<Vec<f64>>,
}

impl Band {
    /// The band for circles at `xs` (positive) of the `series` indices.
    pub(super) fn new(xs: impl IntoIterator<Item = f64>, series: Vec<usize>) -> Band {
        let mut xs: Vec<f64> = xs.into_iter().filter(|x| *x > 0.0).collect();
        xs.sort_by(f64::total_cmp);
        xs.dedup();
        let gap = xs
            .windows(2)
            .map(|w| (w[1] / w[0]).ln())
            .fold(f64::INFINITY, f64::min);
        let half = (1.08f64).ln().min(gap / 3.0);
        let span = match (xs.first(), xs.last()) {
            (Some(a), Some(b)) => (b / a).log10(),
            _ => 0.0,
        };
        // A label is about a tenth of a panel wide: sizes closer than that
        // would print over each other.
        let ticks = (xs.len() <= 7 && gap / 10f64.ln() >= (span / 10.0).max(0.1)).then_some(xs);
        Band {
            half,
            series,
            ticks,
        }
    }

    /// Where series `idx`'s circle at `x` is drawn.
    pub(super) fn at(&self, idx: usize, x: f64) -> f64 {
        let n = self.series.len();
        let k = self.series.iter().position(|&s| s == idx).unwrap_or(0);
        if n < 2 {
            return x;
        }
        x * (self.half * (2.0 * k as f64 / (n - 1) as f64 - 1.0)).exp()
    }

    /// The band around `x`, a little wider than its outermost circles
    /// and short of the next band (a half of at most a third of the gap).
    pub(super) fn around(&self, x: f64) -> (f64, f64) {
        let w = self.half * 1.4;
        (x * (-w).exp(), x * w.exp())
    }
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
