//! `tagger run`'s summary and a plan's fit to its switch model.

use super::Lines;
use crate::budget::human;
use crate::capacity::{Fit, MAX_CABLE_M};
use crate::pipeline::{RunResult, Summary};
use crate::sonic::Export;
use crate::tagging::Algo;

/// `tagger run`'s summary: the scenario, its priorities against the proven
/// bound, rule counts, the fit to the switch model, the verifier's verdict,
/// stage seconds and memory (`peak_rss_bytes` as measured by the caller,
/// e.g. [`crate::pipeline::peak_rss_bytes`]).
///
/// The plan's entries are counted once; how a switch holds them is
/// counted in its own words: the ACL rules an ACL switch installs, or,
/// where `export` is a SONiC export, the port maps it writes (and no ACL).
pub fn run(r: &RunResult, peak_rss_bytes: Option<u64>, export: Option<&Export>) -> String {
    let mut l = Lines::new();
    let s = &r.summary;
    line!(
        l,
        "topology      {} ({}{}, {}, {}, {})",
        s.topology,
        super::count(s.figures.switches, "switch"),
        // Forwarding servers (BCube's) only where there are any.
        if s.figures.servers > 0 {
            format!(", {}", super::count(s.figures.servers, "forwarding server"))
        } else {
            String::new()
        },
        super::count(s.figures.hosts, "host"),
        super::count(s.figures.links, "link"),
        super::count(s.figures.endpoints, "endpoint")
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
    for w in &r.elp.warnings {
        line!(l, "warning       {w}");
    }
    line!(l, "algorithm     {} (cycle detection: {})", s.algo, s.cycle);
    if !s.tried.is_empty() {
        let each: Vec<String> = s
            .tried
            .iter()
            .map(|a| match (a.priorities, &a.error) {
                (Some(p), _) => format!(
                    "{} {p} priorities, {} entries ({:.2} s)",
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
    priority_lines(&mut l, r);
    search_lines(&mut l, r);
    for (i, p) in r.tagging.per_priority.iter().enumerate() {
        line!(
            l,
            "  priority {}: {} channels, {} same-priority dependencies",
            i + 1,
            p.channels,
            p.edges
        );
    }
    // A SONiC export (the neutral table sizes no buffers, so has no fit):
    // the install is counted in port maps and no ACL is used.
    let sonic = export.filter(|e| e.switches.iter().any(|s| s.fit.is_some()));
    installed_lines(&mut l, s, sonic);
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
    line!(l, "{}", fit(s, &r.fit, sonic.is_some()));
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

/// The plan's entries, and what a switch installs for them: port maps
/// where `sonic` is the plan's SONiC export, else ACL rules.
fn installed_lines(l: &mut Lines, s: &Summary, sonic: Option<&Export>) {
    let f = &s.figures;
    line!(
        l,
        "entries       {}, one per (in port, tag, out port); at most {} at a switch (p50 {}, p99 {})",
        super::count(f.acl_exact_total, "lossless entry"),
        f.acl_exact_max,
        f.acl_exact_p50,
        f.acl_exact_p99
    );
    match sonic {
        Some(ex) => {
            let m = ex.port_maps();
            line!(
                l,
                "as SONiC      port maps, no ACL: {} holding {} over {}, at most {} at a switch",
                super::count(m.maps, "TAGGER_* map"),
                super::count(m.entries, "entry"),
                super::count(ex.switches.len(), "switch"),
                m.max_maps
            );
        }
        None => line!(
            l,
            "as ACL        {}: {} over port sets and {}; at most {} at a switch (p50 {}, p99 {})",
            super::count(f.rules_total, "rule"),
            super::count(f.acl_compressed_total, "ACL entry"),
            super::count(f.queue_rules_total, "tag-to-queue entry"),
            f.rules_max,
            f.rules_p50,
            f.rules_p99
        ),
    }
}

/// The priorities against the lower bound, and what the traffic-class
/// limit cost.
fn priority_lines(l: &mut Lines, r: &RunResult) {
    let s = &r.summary;
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
}

/// What the local search or the solver did, and the proof of the bound.
fn search_lines(l: &mut Lines, r: &RunResult) {
    let s = &r.summary;
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
                    Algo::Search(p) => format!(
                        "search        {steps} steps, {e} of a budget of {} path evaluations{}",
                        p.budget,
                        match s.figures.search_restarts {
                            Some(n) if n > 0 => format!(", {n} restarts"),
                            _ => String::new(),
                        }
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
        if let (Some(target), Some(fitted), Some(left), Some(n)) = (
            s.figures.search_class_target,
            s.figures.search_class_fitted,
            s.figures.search_class_left,
            s.figures.max_tcs,
        ) {
            line!(
                l,
                "held to TCs   its orders reached {target} priorities but needed more than {n} traffic classes; searched on held to them: {}",
                if fitted {
                    format!("a plan with {target} fits")
                } else if left == 0 {
                    "gave up: its orders fit every switch's class bound, but their plan's classification needs more".to_string()
                } else {
                    format!(
                        "gave up, at best {left} paths past {target} priorities or classes over the switches' bounds"
                    )
                }
            );
        }
        if let Some(n) = s.figures.proof_paths {
            line!(
                l,
                "proof         {} priorities are impossible already on {n} of the ELP's paths",
                s.figures.priorities_lower_bound - 1
            );
        }
    }
}

/// The fit of a plan to its switch model: the model, then one verdict per
/// check (buffer, queues, ACL, cable length); `sonic` when the plan is
/// exported to SONiC, whose port maps leave the ACL unused.
pub fn fit(s: &Summary, fit: &Fit, sonic: bool) -> String {
    let mut l = Lines::new();
    let f = &s.figures;
    let switches = fit.nodes.iter().flatten().count();
    line!(
        l,
        "switch        {} ({} headroom), {} Gb/s, {}: the busiest switch sees {} of the plan's {} lossless priorities, headroom up to {}",
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
        _ if sonic => line!(
            l,
            "  ACL         none used (the SONiC export rewrites tags with port maps)"
        ),
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
