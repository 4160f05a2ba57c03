//! A sweep's tables: one row per scenario, and the failure what-ifs.

use crate::failures;
use crate::sweep::Row;
use std::path::Path;

/// `tagger sweep`'s summary table: one line per (topology, ELP, algorithm)
/// in grid order, medians over trials; each line ends in a newline.
pub fn sweep_summary(rows: &[Row]) -> String {
    use std::collections::BTreeMap;
    type Key = (String, String, String, String);
    let mut groups: BTreeMap<(u64, Key), Vec<&Row>> = BTreeMap::new();
    let mut first_id: BTreeMap<Key, u64> = BTreeMap::new();
    for r in rows {
        let k = (
            r.topology.clone(),
            r.elp.clone(),
            r.algo.clone(),
            r.max_tcs_setting.clone(),
        );
        let id = *first_id.entry(k.clone()).or_insert(r.scenario_id);
        groups.entry((id, k)).or_default().push(r);
    }
    let med = |mut v: Vec<f64>| -> Option<f64> {
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        Some(v[(v.len() - 1) / 2])
    };
    let mut t = Table::new(&[
        ("topology", Left),
        ("elp", Left),
        ("algo", Left),
        ("runs", Right),
        ("nodes", Right),
        ("longest", Right),
        ("P", Right),
        ("LB", Right),
        ("TCs", Right),
        ("TC_limit", Left),
        ("acl_max", Right),
        ("rules_max", Right),
        ("seconds", Right),
        ("status", Left),
    ]);
    for ((_, (topo, elp, algo, limit)), rs) in groups {
        let ok: Vec<&&Row> = rs.iter().filter(|r| r.error.is_none()).collect();
        let failed = rs.len() - ok.len();
        let f = |get: fn(&Row) -> Option<f64>| med(ok.iter().filter_map(|r| get(r)).collect());
        let show =
            |x: Option<f64>, prec: usize| x.map_or("-".to_string(), |v| format!("{v:.prec$}"));
        let status = if failed == 0 {
            "ok".to_string()
        } else {
            let first: String = rs
                .iter()
                .find_map(|r| r.error.clone())
                .unwrap_or_default()
                .chars()
                .take(70)
                .collect();
            format!("{failed} FAILED: {first}")
        };
        t.row(vec![
            topo,
            elp,
            algo,
            rs.len().to_string(),
            show(f(|r| r.nodes.map(|x| x as f64)), 0),
            show(f(|r| r.longest_elp.map(f64::from)), 0),
            show(f(|r| r.priorities.map(f64::from)), 0),
            show(f(|r| r.bound.map(f64::from)), 0),
            show(f(|r| r.tcs_max.map(f64::from)), 0),
            limit,
            show(f(|r| r.acl_exact_max.map(|x| x as f64)), 0),
            show(f(|r| r.rules_max.map(|x| x as f64)), 0),
            show(f(|r| r.seconds), 3),
            status,
        ]);
    }
    t.render()
}

use Align::{Left, Right};

/// How a [`Table`] column lines up.
#[derive(Clone, Copy)]
enum Align {
    Left,
    Right,
}

/// A text table whose columns are as wide as their widest cell, so no
/// label is ever cut (a sweep's spec strings can be long).
struct Table {
    cols: Vec<(String, Align)>,
    rows: Vec<Vec<String>>,
}

impl Table {
    fn new(cols: &[(&str, Align)]) -> Self {
        Table {
            cols: cols.iter().map(|&(h, a)| (h.to_string(), a)).collect(),
            rows: Vec::new(),
        }
    }

    fn row(&mut self, cells: Vec<String>) {
        debug_assert_eq!(cells.len(), self.cols.len());
        self.rows.push(cells);
    }

    /// Header and rows, each line ending in a newline and without trailing
    /// spaces.
    fn render(&self) -> String {
        let header: Vec<String> = self.cols.iter().map(|c| c.0.clone()).collect();
        let width: Vec<usize> = (0..self.cols.len())
            .map(|i| {
                std::iter::once(&header)
                    .chain(&self.rows)
                    .map(|r| r[i].chars().count())
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let mut out = String::new();
        for r in std::iter::once(&header).chain(&self.rows) {
            let mut line = String::new();
            for (i, cell) in r.iter().enumerate() {
                if i > 0 {
                    line.push(' ');
                }
                let pad = width[i] - cell.chars().count();
                match self.cols[i].1 {
                    Left => {
                        line.push_str(cell);
                        line.extend(std::iter::repeat_n(' ', pad));
                    }
                    Right => {
                        line.extend(std::iter::repeat_n(' ', pad));
                        line.push_str(cell);
                    }
                }
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }
}

/// One line per sweep scenario that ran a failure what-if (newline-terminated):
/// CBD rate of plain PFC and the lossless share of routes under the
/// installed rules (median and worst trial), replanned and failure-aware
/// priorities; empty when none did.
pub fn sweep_failures(rows: &[Row]) -> String {
    let pct = |x: Option<f64>| x.map_or("-".to_string(), failures::percent);
    let num = |x: Option<u32>| x.map_or("-".to_string(), |v| v.to_string());
    let mut t = Table::new(&[
        ("topology", Left),
        ("elp", Left),
        ("algo", Left),
        ("failures", Left),
        ("routing", Left),
        ("pri", Right),
        // Plain PFC's, not the plan's: a Tagger plan has no CBD.
        ("PFC-CBD%", Right),
        ("lossl%", Right),
        ("min%", Right),
        ("pairs%", Right),
        ("repl", Right),
        ("aware", Right),
    ]);
    for r in rows {
        let (Some(f), Some(p)) = (&r.failures, r.priorities) else {
            continue;
        };
        t.row(vec![
            r.topology.clone(),
            r.elp.clone(),
            r.algo.clone(),
            f.spec.clone(),
            f.routing.clone(),
            p.to_string(),
            f.cbd_rate
                .map_or("-".to_string(), |v| format!("{:.0}", 100.0 * v)),
            pct(f.lossless_paths_median),
            pct(f.lossless_paths_min),
            pct(f.lossless_pairs_min),
            num(f.replanned_max),
            num(f.aware),
        ]);
    }
    if t.rows.is_empty() {
        return String::new();
    }
    let mut out = t.render();
    out.push_str(
        "PFC-CBD%: trials in which plain PFC, without the plan, would have a cyclic buffer dependency (the plan itself never has one); lossl%, min%, pairs%: routes (median and worst trial) and pairs the installed plan keeps lossless\n",
    );
    out
}

/// The line a sweep starts with: what runs, how many at a time, where to.
pub fn sweep_started(
    sweep: &crate::sweep::Sweep,
    selected: usize,
    shard: Option<crate::sweep::Shard>,
    jobs: usize,
    out: &Path,
) -> String {
    format!(
        "sweep '{}': {} scenarios{}, {} at a time, output in {}",
        sweep.name,
        selected,
        shard.map_or(String::new(), |s| format!(
            " (shard {}/{} of {})",
            s.index,
            s.count,
            sweep.scenarios.len()
        )),
        jobs,
        out.display()
    )
}

/// The HTML report's path, once written beside a sweep's tables.
pub fn report_written(page: &std::path::Path) -> String {
    format!("report: {}", page.display())
}

/// A file written on its own (`tagger report --out`).
pub fn wrote(path: &std::path::Path) -> String {
    format!("wrote {}", path.display())
}

/// Why fewer scenarios run at once than asked.
pub fn jobs_capped(asked: usize, jobs: usize) -> String {
    format!(
        "--jobs {asked} capped at {jobs} ({} per core: more would only compete for cores and memory)",
        crate::sweep::JOBS_PER_CORE
    )
}

/// " and A and B" for the tables written beside the first two, if any.
fn and_paths(paths: [&Option<std::path::PathBuf>; 2]) -> String {
    paths
        .iter()
        .filter_map(|p| p.as_ref())
        .map(|p| format!(" and {}", p.display()))
        .collect()
}

/// A finished sweep: its summary table, its failure what-ifs, the counts
/// and the files written (each line ending in a newline).
pub fn sweep_done(done: &crate::sweep::Done) -> String {
    let mut out = sweep_summary(&done.rows);
    let failures = sweep_failures(&done.rows);
    if !failures.is_empty() {
        out.push_str(
            "\nfailure what-if (lossless shares of routes under the installed rules; pairs% is the worst trial):\n",
        );
        out.push_str(&failures);
    }
    out.push_str(&format!(
        "{} scenarios: {} ok, {} failed ({} run now, {} resumed); wrote {} and {}{}\n",
        done.selected,
        done.selected - done.failed,
        done.failed,
        done.ran,
        done.skipped,
        done.runs_path.display(),
        done.switches_path.display(),
        and_paths([&done.failures_path, &done.growth_path])
    ));
    out
}

/// `tagger merge`'s line: shards, scenarios and the tables written.
pub fn merged(m: &crate::sweep::merge::Merged) -> String {
    format!(
        "{} shards, {} scenarios ({} failed): wrote {} and {}{}",
        m.shards,
        m.runs,
        m.failed,
        m.runs_path.display(),
        m.switches_path.display(),
        and_paths([&m.failures_path, &m.growth_path])
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: u64, topology: &str, algo: &str) -> Row {
        Row {
            scenario_id: id,
            topology: topology.into(),
            elp: "shortest+random:20000,seed=9".into(),
            algo: algo.into(),
            max_tcs_setting: "profile".into(),
            tcs_max: Some(7),
            error: None,
            nodes: Some(2000),
            longest_elp: Some(10),
            priorities: Some(4),
            bound: Some(2),
            acl_exact_max: Some(51),
            rules_max: Some(60),
            seconds: Some(1.5),
            failures: None,
        }
    }

    /// Labels are never cut, and every column lines up under its header.
    #[test]
    fn summary_columns_fit_their_longest_label() {
        let long = "jellyfish:n=2000,ports=64,r=12,seed=1";
        let algo = "search:budget=1000000000,seed=0,paths=5000000";
        let t = sweep_summary(&[row(0, long, algo), row(1, "fattree:k=4", "greedy")]);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines.len(), 3, "{t}");
        assert!(lines[1].contains(long) && lines[1].contains(algo), "{t}");
        assert!(lines[1].contains("shortest+random:20000,seed=9"), "{t}");
        // Every line puts its P column (right-aligned) at the same end.
        let p_end = |l: &str, needle: &str| l.find(needle).map(|i| i + needle.len());
        let header_p = lines[0].find(" P ").unwrap() + 2;
        for l in &lines[1..] {
            assert_eq!(p_end(l, " 4 "), Some(header_p + 1), "{t}");
        }
        assert!(
            t.lines().all(|l| l == l.trim_end()),
            "trailing spaces:\n{t}"
        );
    }
}
