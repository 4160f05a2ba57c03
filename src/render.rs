//! What a person reads: the text reports of a run, an ELP study, a failure
//! what-if, an export and a sweep, rendered from the library's own result
//! types. The command line prints these as they are, so a program using the
//! library gets the same report, and every human-readable table has this
//! one home.
//!
//! A report of one item (a run, a what-if, an export) is its lines joined
//! by newlines, without a trailing one; a sweep's tables end each line in a
//! newline.

use crate::budget::human;
use crate::capacity::{Fit, MAX_CABLE_M};
use crate::failures::{self, Report as FailureReport};
use crate::pipeline::{RunResult, Summary};
use crate::sonic::{Export, Format};
use crate::sweep::Row;
use crate::tagging::Algo;
use std::fmt::Write as _;
use std::path::Path;

/// Lines collected with `line!`, joined without a trailing newline.
struct Lines(String);

impl Lines {
    fn new() -> Self {
        Lines(String::new())
    }

    fn push(&mut self, line: std::fmt::Arguments<'_>) {
        if !self.0.is_empty() {
            self.0.push('\n');
        }
        let _ = self.0.write_fmt(line);
    }

    fn done(self) -> String {
        self.0
    }
}

macro_rules! line {
    ($l:expr, $($t:tt)*) => { $l.push(format_args!($($t)*)) };
}

/// `tagger run`'s summary: the scenario, its priorities against the proven
/// bound, rule counts, the fit to the switch model, the verifier's verdict,
/// stage seconds and memory (`peak_rss_bytes` as measured by the caller,
/// e.g. [`crate::pipeline::peak_rss_bytes`]).
pub fn run(r: &RunResult, peak_rss_bytes: Option<u64>) -> String {
    let mut l = Lines::new();
    let s = &r.summary;
    line!(
        l,
        "topology      {} ({} switches, {} servers, {} links, {} endpoints)",
        s.topology,
        s.figures.switches,
        s.figures.servers,
        s.figures.links,
        s.figures.endpoints
    );
    line!(
        l,
        "elp           {}: {} paths{}, longest {} links, {} / {} pairs",
        s.elp,
        s.figures.paths,
        if s.figures.paths_exact {
            ""
        } else {
            " (upper bound)"
        },
        s.figures.longest_elp,
        s.figures.pairs_covered,
        s.figures.pairs_total
    );
    line!(l, "algorithm     {} (cycle detection: {})", s.algo, s.cycle);
    if !s.tried.is_empty() {
        let each: Vec<String> = s
            .tried
            .iter()
            .map(|a| match (a.priorities, &a.error) {
                (Some(p), _) => format!(
                    "{} {p} priorities, {} keys ({:.2} s)",
                    a.algo,
                    a.keys.unwrap_or(0),
                    a.seconds
                ),
                (None, e) => format!(
                    "{} no plan: {} ({:.2} s)",
                    a.algo,
                    e.as_deref().unwrap_or("none"),
                    a.seconds
                ),
            })
            .collect();
        line!(l, "auto          kept {}; ran {}", s.algo, each.join("; "));
    }
    line!(
        l,
        "priorities    {} lossless; lower bound {}{}",
        s.figures.priorities,
        s.figures.priorities_lower_bound,
        if s.figures.priorities_optimal {
            " (optimal)"
        } else if s.algo.starts_with("clos") {
            // Measured with `exact`: K+1 is the minimum on fat-tree k=4
            // (K = 2, 3) and leaf-spines with 4 spines, but a 2-spine
            // leaf-spine needs only 2 for kbounce:2 and 3 for kbounce:3.
            " (optimality not proven: clos's K+1 for kbounce:K is the minimum on some Clos networks, not all, e.g. leafspine:leaves=4,spines=2 with kbounce:2 needs 2; --algo exact decides)"
        } else {
            " (optimality not proven)"
        }
    );
    if let (Some(u), Some(n), Some(k)) = (
        s.figures.priorities_unconstrained,
        s.figures.max_tcs,
        s.figures.tcs_forced_keys,
    ) && u == s.figures.priorities
        && k > 0
    {
        line!(
            l,
            "              within {n} traffic classes per switch: {k} keys moved up a priority to fit (same priorities, more rules)"
        );
    }
    if let (Some(u), Some(n)) = (s.figures.priorities_unconstrained, s.figures.max_tcs)
        && u < s.figures.priorities
    {
        line!(
            l,
            "              within {n} traffic classes per switch; without that limit {} found {u}{}",
            s.algo,
            match s.figures.tcs_forced_keys {
                Some(k) if k > 0 => format!(" ({k} keys moved up a priority to fit)"),
                _ => String::new(),
            }
        );
    }
    if let Some(why) = &s.figures.search_skipped {
        line!(l, "search        local search not run: {why}");
    }
    let nothing_to_search = s.figures.search_evaluations == Some(0) && s.figures.priorities_optimal;
    if nothing_to_search {
        line!(
            l,
            "search        no local search needed: greedy or a construction already meets the lower bound"
        );
    } else if let (Some(steps), Some(residue)) = (s.figures.search_steps, s.figures.search_residue)
    {
        let exact = s.algo.starts_with("exact");
        line!(
            l,
            "{}{}{}",
            match (exact, s.figures.search_evaluations) {
                (true, _) => format!("solver        {steps} SAT calls"),
                (false, Some(e)) => match r.tagging.algo {
                    Algo::Search { budget, .. } => format!(
                        "search        {steps} steps, {e} of a budget of {budget} path evaluations"
                    ),
                    _ => format!("search        {steps} steps, {e} path evaluations"),
                },
                (false, None) => format!("search        {steps} steps"),
            },
            if residue > 0 {
                format!(
                    "; {residue} paths still needed priority {} at the lowest target tried",
                    s.figures.priorities
                )
            } else {
                String::new()
            },
            if s.figures.search_stopped_early == Some(true) {
                "; stopped early (time limit or Ctrl-C)"
            } else if s.figures.search_stalled == Some(true) {
                "; gave up there: it had stopped making progress, or at its rate would need more than the budget left"
            } else if residue > 0 && !exact {
                "; the budget ran out (search:budget=N raises it)"
            } else {
                ""
            }
        );
        if let Some(n) = s.figures.proof_paths {
            line!(
                l,
                "proof         {} priorities are impossible already on {n} of the ELP's paths",
                s.figures.priorities_lower_bound - 1
            );
        }
    }
    for (i, p) in r.tagging.per_priority.iter().enumerate() {
        line!(
            l,
            "  priority {}: {} channels, {} same-priority dependencies",
            i + 1,
            p.channels,
            p.edges
        );
    }
    line!(
        l,
        "ACL entries   exact {} total, {} max; compressed {} total, {} max",
        s.figures.acl_exact_total,
        s.figures.acl_exact_max,
        s.figures.acl_compressed_total,
        s.figures.acl_compressed_max
    );
    line!(
        l,
        "rules         {} total, {} at the bottleneck node (p50 {}, p99 {})",
        s.figures.rules_total,
        s.figures.rules_max,
        s.figures.rules_p50,
        s.figures.rules_p99
    );
    if let Some(sh) = &r.shared {
        line!(
            l,
            "classes       {} classes share {} lossless queues ({} with a copy each): class i sends tag 1 + {} x i; deadlock-free (every priority's union acyclic) and verified for every class",
            sh.classes,
            sh.queues_shared,
            sh.queues_separate,
            sh.stride
        );
    }
    line!(l, "{}", fit(s, &r.fit));
    line!(l, "{}", r.report);
    let t = &s.seconds;
    line!(
        l,
        "seconds       generate {:.3}, elp {:.3}, tag {:.3}, rules {:.3}, verify {:.3}, total {:.3}",
        t.generate,
        t.elp,
        t.tag,
        t.rules,
        t.verify,
        t.total
    );
    line!(
        l,
        "memory        estimated {}{}; peak RSS {}",
        human(s.memory_estimate_bytes),
        s.memory_budget_bytes
            .map_or(String::new(), |b| format!(" of a {} budget", human(b))),
        peak_rss_bytes.map_or("unknown".into(), human)
    );
    l.done()
}

/// The fit of a plan to its switch model: the model, then one verdict per
/// check (buffer, queues, ACL, cable length).
pub fn fit(s: &Summary, fit: &Fit) -> String {
    let mut l = Lines::new();
    let f = &s.figures;
    let switches = fit.nodes.iter().flatten().count();
    line!(
        l,
        "switch        {} ({} headroom), {} Gb/s, {}: at most {} of {} priorities at one switch, headroom up to {}",
        f.switch_profile,
        f.headroom_model,
        f.port_speed_gbps,
        match fit.cable_m_used {
            Some((lo, hi)) if lo != hi => format!("{lo}-{hi} m cables (per link)"),
            Some((lo, _)) if lo != f.cable_m => format!("{lo} m cables (per link)"),
            _ => format!("{} m cables", f.cable_m),
        },
        f.priorities_per_switch_max,
        f.queues_shared,
        human(f.headroom_total_max_bytes)
    );
    let verdict = |over: u64| {
        if over == 0 {
            format!("all {switches} switches fit")
        } else {
            format!("{over} of {switches} switches do NOT fit")
        }
    };
    let margin = f.buffer_margin_min_bytes;
    line!(
        l,
        "  buffer      {}; smallest margin {}{}",
        verdict(f.switches_over_buffer),
        if margin < 0 { "-" } else { "" },
        human(margin.unsigned_abs())
    );
    line!(
        l,
        "  queues      {} ({} lossless queues per port; the busiest switch needs {})",
        verdict(f.switches_over_queues),
        f.lossless_queues,
        f.priorities_per_switch_max
    );
    line!(
        l,
        "  classes     {} ({} traffic classes for lossless traffic, one of {} kept lossy; the busiest switch needs {}{})",
        verdict(f.switches_over_tcs),
        f.traffic_classes.saturating_sub(1),
        f.traffic_classes,
        f.tcs_max,
        match f.max_tcs {
            Some(n) => format!("; planned within {n}"),
            None => "; planned without a limit (--max-tcs none)".into(),
        }
    );
    match f.switches_over_acl {
        Some(over) => line!(l, "  ACL         {}", verdict(over)),
        None => line!(
            l,
            "  ACL         not checked (the profile gives no ACL capacity)"
        ),
    }
    match f.max_cable_m_fit {
        Some(c) if c >= MAX_CABLE_M => line!(
            l,
            "  cables      every switch fits with cables of any length up to 100 km"
        ),
        Some(c) => line!(
            l,
            "  cables      every switch fits with switch-to-switch cables up to {c} m"
        ),
        None => line!(
            l,
            "  cables      some switch does not fit even with 0 m cables"
        ),
    }
    l.done()
}

/// `tagger failures`' table: the plan, then per routing model the CBD rate
/// of plain PFC, the lossless shares of routes and pairs, fallback hops,
/// replanned and failure-aware priorities (`secs`: the what-if's seconds).
pub fn failures(plan: &crate::failures::Installed, reports: &[FailureReport], secs: f64) -> String {
    let mut l = Lines::new();
    let s = plan;
    line!(
        l,
        "plan          {} {} {}: {} lossless priorities (lower bound {}), verified{}",
        s.topology,
        s.elp,
        s.algo,
        s.priorities,
        s.priorities_lower_bound,
        s.rules
            .as_ref()
            .map_or(String::new(), |r| format!(" (rules {r})"))
    );
    let Some(first) = reports.first() else {
        return l.done();
    };
    let f = &first.figures;
    line!(
        l,
        "failures      {}: {} trials in {secs:.1} s",
        f.spec,
        f.trials
    );
    let pct = |x: Option<f64>| x.map_or("-".to_string(), |v| format!("{}%", failures::percent(v)));
    let num = |x: Option<u32>| x.map_or("-".to_string(), |v| v.to_string());
    line!(
        l,
        "{:<10} {:>8} {:>17} {:>17} {:>17} {:>17} {:>9} {:>9} {:>6} {:>8}",
        "routing",
        "CBD",
        "lossless routes",
        "(min)",
        "lossless pairs",
        "(min)",
        "fallback",
        "replanned",
        "aware",
        "verified"
    );
    line!(
        l,
        "{:<10} {:>8} {:>17} {:>17} {:>17} {:>17} {:>9} {:>9} {:>6} {:>8}",
        "",
        "no Tagger",
        "median",
        "",
        "median",
        "",
        "hops max",
        "prio max",
        "prio",
        ""
    );
    for rep in reports {
        let f = &rep.figures;
        line!(
            l,
            "{:<10} {:>8} {:>17} {:>17} {:>17} {:>17} {:>9} {:>9} {:>6} {:>8}",
            f.routing,
            format!("{:.0}%", 100.0 * f.cbd_rate),
            pct(f.lossless_paths_median),
            pct(f.lossless_paths_min),
            pct(f.lossless_pairs_median),
            pct(f.lossless_pairs_min),
            rep.trials
                .iter()
                .map(|t| t.fallback_hops)
                .max()
                .unwrap_or(0),
            num(f.replanned_priorities_max),
            num(f.aware_priorities),
            if f.verified { "yes" } else { "NO" }
        );
    }
    let cycles: Vec<u32> = reports
        .iter()
        .flat_map(|r| r.trials.iter().filter_map(|t| t.cbd_cycle_len))
        .collect();
    if let Some(m) = cycles.iter().min() {
        line!(
            l,
            "shortest CBD  {m} channels (plain PFC, one lossless priority)"
        );
    }
    l.done()
}

/// What an export wrote to `dir`: switches and traffic classes (SONiC,
/// buffers sized for `profile`, and the switches that do not fit it when
/// the export was told to write them anyway), or classes (neutral table).
pub fn export(ex: &Export, format: Format, profile: &str, dir: &Path) -> String {
    let s = &ex.summary;
    match format {
        Format::Sonic => {
            let mis = ex.misfits();
            format!(
                "exported {} switches to {} (SONiC config_db, port maps only, buffers for {}): at most {} of the {} traffic classes a switch has for lossless traffic{}",
                ex.switches.len(),
                dir.display(),
                profile,
                s["tcs_max"],
                s["traffic_classes"].as_u64().unwrap_or(8).saturating_sub(1),
                if mis.is_empty() {
                    String::new()
                } else {
                    format!(
                        "; {} switch(es) do NOT fit {profile} (e.g. switch {}: {} lossless queues at a port, {} of headroom), written because --require-fit is off",
                        mis.len(),
                        mis[0].0,
                        mis[0].1.lossless_queues,
                        crate::budget::human(mis[0].1.headroom_bytes)
                    )
                }
            )
        }
        Format::Json => format!(
            "exported {} switches to {} (neutral table): at most {} classes per switch",
            ex.switches.len(),
            dir.display(),
            s["classes_max"],
        ),
    }
}

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
        ("CBD%", Right),
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
    t.render()
}

/// `tagger update --export-steps`: the directories written, in the order
/// to apply them, and what each is for.
pub fn export_steps(
    u: &crate::update::Update,
    exports: &[crate::update::StepExport],
    dir: &std::path::Path,
) -> String {
    let mut l = Lines::new();
    line!(
        l,
        "exported      {} directories in {}, to apply in this order; what every switch runs after each was decoded and judged for every packet (as `tagger verify --exported` does against {})",
        exports.len(),
        dir.display(),
        crate::update::UNION_FILE
    );
    // Drains the export adds to the schedule's: its traffic classes could
    // not be chosen so that the configurations before and after run
    // together.
    let added = exports
        .iter()
        .filter(|x| x.drain && x.step.is_none_or(|i| !u.steps[i].drain))
        .count();
    if added > 0 {
        line!(
            l,
            "drains        {added} more directory(ies) marked DRAIN than the schedule's steps: what the switches run before and after it, together, close a dependency cycle through their traffic classes (each alone passes), so let the fabric's lossless queues empty before loading it"
        );
    }
    for x in exports.iter().take(MAX_STEP_LINES) {
        let n = x.switches.len();
        let what = match x.step {
            Some(i) => {
                let tables = &u.steps[i].switches;
                let extra = x.switches.iter().filter(|v| !tables.contains(v)).count();
                if extra == 0 {
                    String::new()
                } else {
                    format!(" ({extra} of them for their traffic classes only: they receive tags they did not, or no longer)")
                }
            }
            None if x.dir.ends_with("-ports") => {
                ": the ports the change adds, bound (no lossless traffic on them yet) before the new cables carry any".into()
            }
            None if x.dir.ends_with("-tidy") => {
                ": classes of tags no longer sent dropped (tables unchanged), so that what runs is the new plan's export".into()
            }
            None => ": traffic classes only (tables unchanged): the classes they run were chosen apart from the next step's, and together would not pass the read-back".into(),
        };
        line!(
            l,
            "  {:<18} {n} switch{}{what}{}",
            x.dir,
            if n == 1 { "" } else { "es" },
            if x.drain { "; DRAIN first" } else { "" }
        );
    }
    if exports.len() > MAX_STEP_LINES {
        line!(
            l,
            "  ... {} more (the directory's summary.json lists them all)",
            exports.len() - MAX_STEP_LINES
        );
    }
    l.done()
}

/// `tagger update`'s summary: the new plan against the installed one (and
/// a from-scratch plan), then the schedule, a line per step.
pub fn update(u: &crate::update::Update, old: &str, new: &str, elp: &str) -> String {
    use crate::update::ScheduleKind;
    let mut l = Lines::new();
    let c = &u.churn;
    line!(l, "change        {old} -> {new}, ELP {elp}");
    let co = &u.correspondence;
    let (dropped, added) = (co.dropped(), co.added());
    for (what, count, links) in [
        (
            "dropped",
            format!("{} of {} old links", dropped.len(), co.link.len()),
            dropped,
        ),
        ("added", format!("{} new links", added.len()), added),
    ] {
        const SHOWN: usize = 6;
        if links.is_empty() {
            continue;
        }
        let mut names: Vec<String> = links.iter().take(SHOWN).map(|&x| co.link_name(x)).collect();
        if links.len() > SHOWN {
            names.push(format!(
                "and {} more (--json lists them)",
                links.len() - SHOWN
            ));
        }
        line!(l, "links {what:<8}{count}: {}", names.join("; "));
    }
    if let Some(w) = u.correspondence.mismatch() {
        line!(l, "warning       {w}");
    }
    let fewer = if u.plan.priorities > u.old_priorities {
        match &u.scratch {
            Some(s) if s.priorities >= u.plan.priorities => format!(
                " (the installed plan has {}; the changed fabric needs more: planned from scratch it needs {})",
                u.old_priorities, s.priorities
            ),
            _ if u.reordered.as_ref().is_some_and(|r| r.forced.is_some()) => format!(
                " (the installed plan has {}: no extension that keeps its decisions fits in it, proven below)",
                u.old_priorities
            ),
            _ => format!(
                " (the installed plan has {}: keeping its decisions for the new paths needed more)",
                u.old_priorities
            ),
        }
    } else {
        format!(" (the installed plan: {})", u.old_priorities)
    };
    line!(
        l,
        "new plan      {}: {} lossless priorities{fewer}, lower bound {}, {} entries, verified on the new topology",
        u.plan.algo,
        u.plan.priorities,
        u.lower_bound,
        u.plan.entries.len()
    );
    if let Some(why) = &u.extension_refused {
        line!(
            l,
            "extension     refused, planned from scratch instead: keeping the installed decisions, {why}"
        );
    }
    if let Some(why) = &u.classes_over {
        line!(
            l,
            "classes       the new plan needs more traffic classes than the switches have ({why}): a SONiC export of it is refused; the neutral table (json:DIR) expresses it"
        );
    }
    if let Some(r) = &u.reordered {
        let e = &r.effort;
        let why = if let Some(f) = &r.forced {
            let route: Vec<String> = f
                .example
                .first()
                .map(|&(a, _)| a)
                .into_iter()
                .chain(f.example.iter().map(|&(_, b)| b))
                .map(|v| v.to_string())
                .collect();
            format!(
                "no plan keeps {} priorities with the installed decisions and acyclic together with the installed entries (what a two-phase change needs): {} new paths are forced past {} whatever the order (the installed decisions, and installed dependencies leading back, raise their tags), e.g. switches {}",
                r.target,
                f.paths,
                r.target,
                route.join(" -> ")
            )
        } else if let Some(s) = &e.skipped {
            format!("skipped: {s}")
        } else if r.reached {
            format!(
                "kept {} priorities (the greedy extension needed {}) in {} evaluations",
                r.target, r.greedy_priorities, e.evaluations
            )
        } else {
            format!(
                "did not keep {}: {} paths left past it after {} evaluations ({})",
                r.target,
                e.residue,
                e.evaluations,
                if e.stopped_early {
                    "stopped"
                } else if e.stalled {
                    "stalled"
                } else {
                    "budget spent; --search-budget raises it"
                }
            )
        };
        line!(l, "reorder       {why}");
    }
    line!(
        l,
        "churn         {} entries ({} added, {} removed, {} changed) on {} switches",
        c.entries(),
        c.added,
        c.removed,
        c.changed,
        c.switches_touched
    );
    if let Some(s) = &u.scratch {
        line!(
            l,
            "from scratch  {}: {} priorities, churn {} entries on {} switches",
            s.algo,
            s.priorities,
            s.churn.entries(),
            s.churn.switches_touched
        );
    }
    if let Some(s) = u
        .scratch
        .as_ref()
        .filter(|s| s.priorities < u.plan.priorities)
    {
        line!(
            l,
            "fewer         planning from scratch needs {} priorities instead of {}, at the churn above: write it with `tagger run`, then move to it with --new-rules (a switch-by-switch schedule)",
            s.priorities,
            u.plan.priorities
        );
    }
    match u.kind {
        ScheduleKind::Empty => line!(l, "schedule      nothing to change"),
        ScheduleKind::TwoPhase => line!(
            l,
            "schedule      two-phase, {} steps, {} verified: old and new entries together pass the verifier, so every order of every switch within a step is safe",
            u.steps.len(),
            u.verified_steps()
        ),
        ScheduleKind::SwitchBySwitch => line!(
            l,
            "schedule      switch by switch, {} steps, {} verified{}",
            u.steps.len(),
            u.verified_steps(),
            u.two_phase_refused
                .as_ref()
                .map_or(String::new(), |v| format!(
                    " (two-phase refused: [{}] {v})",
                    v.kind()
                ))
        ),
    }
    let lossless = |x: &Option<crate::verify::Violation>| if x.is_none() { "yes" } else { "no" };
    for r in u.rows().iter().take(MAX_STEP_LINES) {
        let switches = if r.switches <= 8 {
            let names: Vec<String> = u.steps[r.step as usize - 1]
                .switches
                .iter()
                .map(|&v| co.node_label(v))
                .collect();
            format!("switch {}", names.join(", "))
        } else {
            format!("{} switches", r.switches)
        };
        line!(
            l,
            "  step {:>3}  {:<8} {switches}: +{} -{} entries, {}{}; old ELPs lossless: {}, new: {}",
            r.step,
            r.action,
            r.entries_added,
            r.entries_removed,
            if r.verified {
                "verified"
            } else {
                "NOT verified"
            },
            if r.any_order {
                ", any order"
            } else if r.drain {
                ", DRAIN the switch first"
            } else {
                ""
            },
            lossless(&u.steps[r.step as usize - 1].old_lossy),
            lossless(&u.steps[r.step as usize - 1].new_lossy),
        );
    }
    if u.steps.len() > MAX_STEP_LINES {
        line!(
            l,
            "  ... {} more steps (--json or --out list them all)",
            u.steps.len() - MAX_STEP_LINES
        );
    }
    let moved = co.renumbered();
    if !u.steps.is_empty() && !co.union.has_node_names() && !moved.is_empty() {
        let shown: Vec<String> = moved
            .iter()
            .take(4)
            .map(|(v, w)| format!("old {v} is {w}"))
            .collect();
        line!(
            l,
            "ids           switches are numbered as in the new topology (--topology-out writes it): {} of the old switches have new ids ({}{})",
            moved.len(),
            shown.join(", "),
            if moved.len() > shown.len() {
                ", ..."
            } else {
                ""
            }
        );
    }
    use crate::update::Action;
    let step_of = |a: Action| u.steps.iter().position(|s| s.action == a).map(|i| i + 1);
    if let Some(i) = step_of(Action::Unplug) {
        line!(
            l,
            "recabling     before step {i}, move the routing off the links being recabled; recable them after it (a port carries one link at a time)"
        );
    }
    let drains = u.steps.iter().filter(|s| s.drain).count();
    if u.kind == ScheduleKind::SwitchBySwitch {
        line!(
            l,
            "waits         {}",
            if drains == 0 {
                "none: each step's state and every state before it, together, are acyclic, so packets a replaced table decided need not drain".to_string()
            } else {
                format!(
                    "{drains} step(s) marked DRAIN: the state after such a step and the states since the last drain, together, have a dependency cycle, so packets the earlier tables decided must be gone first: take the switch out of the routing and let the fabric's lossless queues empty before replacing its table"
                )
            }
        );
    }
    if u.kind == ScheduleKind::TwoPhase {
        let routing = match (step_of(Action::Add), step_of(Action::Remove)) {
            (Some(a), Some(_)) => format!(
                "after step {a}, move the routing to the new ELPs (and drain the dropped links): the old ELPs keep their entries until then, the new ones have theirs from its end"
            ),
            (Some(a), None) => format!(
                "after step {a}, the routing may move to the new ELPs: they are lossless from its end"
            ),
            (None, Some(r)) => format!(
                "before step {r}, move the routing to the new ELPs (and drain the dropped links): they stay lossless throughout"
            ),
            (None, None) => "nothing to move".to_string(),
        };
        line!(l, "routing       {routing}");
    }
    l.done()
}

/// Steps the summary lists one per line.
const MAX_STEP_LINES: usize = 20;

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
