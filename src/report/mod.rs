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
//! One file per chart, each turning the runs table (`Runs`) into `Draft`s;
//! `draw` draws their panels and this file lays out the page.

mod cols;
mod draw;
mod failures;
mod fit;
mod growth;
mod priorities;
mod rules;
mod seconds;

use crate::error::{Error, Result};
use crate::output::parquet::read_batches;
use arrow_array::RecordBatch;
use cols::Cols;
use draw::{Axes, GREY, Join, Line, Panel, draw_panel, hex, style};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

pub use draw::{DrawError, loglog_slope};

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
    /// `cross` or `bar`); written as HTML under the chart, so no legend box
    /// covers the data. A series keeps its colour in every panel.
    pub legend: Vec<(String, String, &'static str)>,
    /// Rows of a table under the chart (header first), when the answer
    /// needs exact figures.
    pub table: Vec<Vec<String>>,
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
            cause: format!(
                "its {key} differs from {}'s: the two tables are of different sweeps",
                runs.display()
            )
            .into(),
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

/// Series names in first-seen order, each with its style slot
/// ([`style`]): the next free slot, or for algorithms a slot fixed by the
/// algorithm's name ([`algo_slot`]), so an algorithm has one colour in
/// every chart of every report.
#[derive(Default)]
struct Names {
    names: Vec<String>,
    slots: Vec<usize>,
    algorithms: bool,
}

impl Names {
    /// Algorithm names, these first: every chart coloured by algorithm
    /// seeds them with the same sorted list, so a variant of an algorithm
    /// (`greedy restarts=8,seed=1`) also keeps its colour from chart to
    /// chart.
    fn algorithms(first: &[String]) -> Names {
        let mut n = Names {
            algorithms: true,
            ..Names::default()
        };
        for name in first {
            n.idx(name);
        }
        n
    }

    /// Algorithm names (as [`Names::algorithms`]) or, with `false`, plain
    /// series in first-seen order.
    fn seeded_if(algorithms: bool, first: &[String]) -> Names {
        if algorithms {
            Names::algorithms(first)
        } else {
            Names::default()
        }
    }

    /// `name`'s style slot, given one on first sight.
    fn idx(&mut self, name: &str) -> usize {
        if let Some(i) = self.names.iter().position(|n| n == name) {
            return self.slots[i];
        }
        let fixed = if self.algorithms {
            algo_slot(name)
        } else {
            None
        };
        let free = |s: &usize| !self.slots.contains(s);
        let slot = match fixed.filter(free) {
            Some(s) => s,
            // A variant or an unknown algorithm: the slots no algorithm
            // owns, then any free one.
            None if self.algorithms => VARIANT_SLOTS
                .into_iter()
                .chain(20..)
                .find(free)
                .expect("an unbounded range has a free slot"),
            None => self.slots.len(),
        };
        self.names.push(name.to_string());
        self.slots.push(slot);
        slot
    }

    fn legend(&self) -> Vec<(String, String, &'static str)> {
        let mut rows: Vec<(bool, String, String, &'static str)> = self
            .names
            .iter()
            .zip(&self.slots)
            .map(|(n, &i)| {
                let (c, filled) = style(i);
                let baseline = self.algorithms && is_baseline(n);
                let name = if baseline {
                    format!("{n} (baseline)")
                } else {
                    n.clone()
                };
                (baseline, name, hex(c), if filled { "dot" } else { "ring" })
            })
            .collect();
        // Candidate plans first, the baselines after them.
        rows.sort_by_key(|r| r.0);
        rows.into_iter().map(|(_, n, c, m)| (n, c, m)).collect()
    }
}

/// The algorithms the paper compares against (tag = hop number; the
/// node-level greedy on hop counts): drawn as rings and listed last, so
/// their misfits are not read as the candidate plans'.
const BASELINES: [&str; 2] = ["brute", "greedy-ttl"];

/// Whether a legend name (`algo_label`) is a baseline algorithm.
fn is_baseline(label: &str) -> bool {
    BASELINES.contains(&label.split([' ', ':']).next().unwrap_or(label))
}

/// The style slot of an algorithm by its name: the same colour in every
/// report. Candidates are filled, the baselines rings (slots 10-19 are
/// rings); a variant with parameters takes a free [`VARIANT_SLOTS`] slot.
fn algo_slot(label: &str) -> Option<usize> {
    Some(match label {
        "auto" => 0,
        "clos" => 1,
        "exact" => 2,
        "greedy" => 3,
        "search" => 4,
        "brute" => 15,
        "greedy-ttl" => 17,
        _ => return None,
    })
}

/// Slots no algorithm owns, in the order variants and other series take
/// them.
const VARIANT_SLOTS: [usize; 9] = [6, 8, 9, 5, 7, 16, 18, 19, 10];

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

/// `v` sorted, without repeats.
fn sorted<T: Ord>(mut v: Vec<T>) -> Vec<T> {
    v.sort();
    v.dedup();
    v
}

/// A text column's value in row `i` (empty where missing).
fn s(v: &[Option<String>], i: usize) -> String {
    v[i].clone().unwrap_or_default()
}

/// The runs table's columns that most charts read, and the sets they are
/// laid out by.
struct Runs<'a> {
    dir: &'a Path,
    cols: Cols<'a>,
    /// Rows.
    n: usize,
    /// Per row: the scenario succeeded.
    ok: Vec<bool>,
    family: Vec<Option<String>>,
    /// The algorithm as legends name it ([`algo_label`]).
    algo: Vec<Option<String>>,
    elp: Vec<Option<String>>,
    topo: Vec<Option<String>>,
    switches: Vec<Option<f64>>,
    /// Switches and servers (`None` when there are none).
    size: Vec<Option<f64>>,
    /// Algorithms of the scenarios that succeeded, sorted: every chart
    /// coloured by algorithm seeds its legend with them.
    algos: Vec<String>,
    /// Families of the scenarios that succeeded, sorted.
    families: Vec<String>,
    /// (family, ELP) pairs of the scenarios that succeeded, sorted.
    family_elp: Vec<(String, String)>,
}

impl<'a> Runs<'a> {
    fn new(dir: &'a Path, batches: &'a [RecordBatch]) -> Runs<'a> {
        let cols = Cols(batches);
        let n = cols.len();
        let ok: Vec<bool> = cols
            .str("status")
            .iter()
            .map(|s| s.as_deref() == Some("ok"))
            .collect();
        let family = cols.str("family");
        let algo: Vec<Option<String>> = cols
            .str("algo")
            .into_iter()
            .map(|a| a.map(|a| algo_label(&a)))
            .collect();
        let elp = cols.str("elp");
        let switches = cols.num("switches");
        let size = switches
            .iter()
            .zip(&cols.num("servers"))
            .map(|(a, b)| Some(a.unwrap_or(0.0) + b.unwrap_or(0.0)).filter(|&x| x > 0.0))
            .collect();
        let ok_rows = || (0..n).filter(|&i| ok[i]);
        Runs {
            algos: sorted(ok_rows().map(|i| s(&algo, i)).collect()),
            families: sorted(ok_rows().map(|i| s(&family, i)).collect()),
            family_elp: sorted(ok_rows().map(|i| (s(&family, i), s(&elp, i))).collect()),
            topo: cols.str("topology_grid"),
            dir,
            cols,
            n,
            ok,
            family,
            algo,
            elp,
            switches,
            size,
        }
    }

    /// Rows of scenarios that succeeded.
    fn ok_rows(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.n).filter(|&i| self.ok[i])
    }
}

/// A chart before drawing: its panels, their series' names and the page
/// text around them.
struct Draft {
    title: &'static str,
    note: String,
    panels: Vec<Panel>,
    names: Names,
    /// Legend entries for grey marks (name, mark), after the series.
    marks: &'static [(&'static str, &'static str)],
    table: Vec<Vec<String>>,
}

impl Draft {
    /// A chart of `panels` with no grey marks and no table.
    fn new(title: &'static str, note: String, panels: Vec<Panel>, names: Names) -> Draft {
        Draft {
            title,
            note,
            panels,
            names,
            marks: &[],
            table: Vec::new(),
        }
    }

    /// The chart drawn, or `None` when it has no data point.
    fn draw(self, dir: &Path) -> Result<Option<Chart>> {
        let points: usize = self
            .panels
            .iter()
            .flat_map(|p| p.lines.iter())
            .map(|l| l.pts.len())
            .sum();
        if points == 0 {
            return Ok(None);
        }
        let mut panels = Vec::new();
        for p in &self.panels {
            let svg = draw_panel(p).map_err(|cause| Error::Chart {
                path: dir.join("report.html"),
                title: p.title.clone(),
                cause,
            })?;
            panels.push((p.title.clone(), svg));
        }
        let mut legend = self.names.legend();
        legend.extend(
            self.marks
                .iter()
                .map(|(name, mark)| (name.to_string(), hex(GREY), *mark)),
        );
        Ok(Some(Chart {
            title: self.title.into(),
            note: self.note,
            panels,
            points,
            legend,
            table: self.table,
        }))
    }
}

/// Panels of a grid (one per panel title, a line per series), each with
/// `axes`, joined straight, in `y_range`; the series named in first-seen
/// order.
fn grid_panels(grid: Grid, axes: Axes, y_range: Option<(f64, f64)>) -> (Vec<Panel>, Names) {
    let mut names = Names::default();
    let panels = grid
        .into_iter()
        .map(|(title, series)| {
            let lines = series
                .into_iter()
                .map(|(name, pts)| Line {
                    idx: names.idx(&name),
                    pts,
                })
                .collect();
            Panel {
                join: Join::Straight,
                y_range,
                ..Panel::new(title, axes, lines)
            }
        })
        .collect();
    (panels, names)
}

/// [`charts`] of the runs table `runs_b` already read from `dir`, in the
/// page's order.
fn charts_of(dir: &Path, runs_b: &[RecordBatch]) -> Result<Vec<Chart>> {
    let runs = Runs::new(dir, runs_b);
    let mut drafts = vec![priorities::draft(&runs), fit::draft(&runs)];
    drafts.extend(rules::draft(&runs)?);
    drafts.extend(seconds::drafts(&runs));
    drafts.extend(failures::drafts(&runs));
    drafts.extend(growth::draft(&runs)?);
    let mut out = Vec::new();
    for d in drafts {
        out.extend(d.draw(dir)?);
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
        cause: crate::error::TableFault::Column(Box::new(e)),
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

const CSS: &str = include_str!("style.css");

#[cfg(test)]
mod tests {
    use super::draw::{Scale, tick, ticks};

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
    /// An algorithm has one colour in every report, whatever else the
    /// sweep ran; a variant never takes a colour an algorithm owns; the
    /// baselines are rings, listed after the candidates.
    #[test]
    fn an_algorithm_keeps_its_colour_across_reports() {
        use super::{Names, algo_slot, draw::style};
        let names =
            |v: &[&str]| Names::algorithms(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        let mut a = names(&["brute", "clos", "greedy"]);
        let mut b = names(&["clos", "exact", "greedy restarts=8,seed=1", "search"]);
        assert_eq!(a.idx("clos"), b.idx("clos"));
        assert_eq!(a.idx("clos"), algo_slot("clos").unwrap());
        let variant = b.idx("greedy restarts=8,seed=1");
        let owned: Vec<usize> = [
            "auto",
            "clos",
            "exact",
            "greedy",
            "search",
            "brute",
            "greedy-ttl",
        ]
        .iter()
        .map(|n| algo_slot(n).unwrap())
        .collect();
        assert!(!owned.contains(&variant), "{variant}");
        // Distinct colour-and-mark for every algorithm.
        let looks: std::collections::BTreeSet<_> = owned
            .iter()
            .map(|&i| (super::hex(style(i).0), style(i).1))
            .collect();
        assert_eq!(looks.len(), owned.len());
        assert!(!style(a.idx("brute")).1, "a baseline is a ring");
        let legend = a.legend();
        assert_eq!(legend.last().unwrap().0, "brute (baseline)", "{legend:?}");
        // Plain series (stages, switch models) take slots in order.
        let mut plain = Names::default();
        assert_eq!(
            (plain.idx("elp"), plain.idx("tag"), plain.idx("elp")),
            (0, 1, 0)
        );
    }

    /// Circles of a band stay within 8% of their x and a third of the way
    /// to the next x; a size's ticks are the sizes only where they fit.
    #[test]
    fn bands_keep_the_size_readable_and_never_meet() {
        use super::draw::Band;
        let b = Band::new([20.0, 80.0, 320.0, 80.0], vec![1, 3, 15]);
        assert_eq!(b.ticks.as_deref(), Some(&[20.0, 80.0, 320.0][..]));
        assert_eq!(b.at(3, 80.0), 80.0);
        assert!(b.at(1, 80.0) < 80.0 && b.at(1, 80.0) >= 80.0 / 1.08 - 1e-9);
        assert!(b.at(15, 80.0) > 80.0 && b.at(15, 80.0) <= 80.0 * 1.08 + 1e-9);
        let close = Band::new([94.0, 100.0], vec![0, 1]);
        assert!(close.ticks.is_none());
        assert!(close.at(1, 94.0) < close.at(0, 100.0));
        let (_, hi) = close.around(94.0);
        let (lo, _) = close.around(100.0);
        assert!(hi < lo, "bands meet: {hi} {lo}");
        let one = Band::new([6.0], vec![2]);
        assert_eq!(one.at(2, 6.0), 6.0);
    }

    /// Every column name this file reads through [`super::Cols`] is one a
    /// table declares (a misspelt name would chart nothing, silently).
    #[test]
    fn every_column_the_report_reads_is_declared() {
        let declared: std::collections::BTreeSet<&str> = crate::sweep::schema()
            .into_iter()
            .flat_map(|(_, cols)| cols.into_iter().map(|c| c.name))
            .collect();
        let source = [
            include_str!("mod.rs"),
            include_str!("priorities.rs"),
            include_str!("fit.rs"),
            include_str!("rules.rs"),
            include_str!("seconds.rs"),
            include_str!("failures.rs"),
            include_str!("growth.rs"),
        ]
        .concat();
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
