//! Batch sweeps: run every scenario of a spec in parallel, verify each, and
//! write `runs.parquet` (one row per scenario) and `switches.parquet` (one row
//! per scenario and node).

pub mod spec;

use crate::output::parquet::Table;
use crate::pipeline::{self, RunConfig, Summary};
use rayon::prelude::*;
pub use spec::{DEFAULT_MAX_SCENARIOS, Scenario, Sweep};
use std::path::Path;
use tagger_generators::NodeKind;

/// The sweep that `tagger sweep` runs when given no spec.
pub const DEFAULT_SPEC: &str = include_str!("../../datasets/default.toml");

pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// One node's row of `switches.parquet`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeRow {
    pub node: u32,
    pub kind: NodeKind,
    pub level: Option<u32>,
    pub degree: u32,
    pub hosts: u32,
    pub acl_exact: u64,
    pub acl_compressed: u64,
    pub queue_rules: u64,
    pub priorities: u32,
}

/// The outcome of one scenario.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub scenario: Scenario,
    pub result: Result<Summary, String>,
    pub nodes: Vec<NodeRow>,
    pub peak_rss_bytes: Option<u64>,
}

/// Runs one scenario; an error becomes a failed outcome, never a panic.
pub fn run_scenario(s: &Scenario) -> Outcome {
    let cfg = RunConfig {
        topology: s.topology.clone(),
        elp: s.elp.clone(),
        algo: s.algo,
        cycle: s.cycle,
    };
    let (result, nodes) = match pipeline::run(&cfg) {
        Ok(r) => {
            let nodes = (0..r.topo.node_count())
                .map(|v| {
                    let n = r.topo.nodes()[v];
                    let c = r.node_counts[v];
                    NodeRow {
                        node: v as u32,
                        kind: n.kind,
                        level: n.level,
                        degree: r.topo.degree(v as u32) as u32,
                        hosts: n.hosts,
                        acl_exact: c.acl_exact,
                        acl_compressed: c.acl_compressed,
                        queue_rules: c.queue_rules,
                        priorities: r.rules.ingress_tags[v].len() as u32,
                    }
                })
                .collect();
            (Ok(r.summary), nodes)
        }
        Err(e) => (Err(e.to_string()), Vec::new()),
    };
    Outcome {
        scenario: s.clone(),
        result,
        nodes,
        peak_rss_bytes: pipeline::peak_rss_bytes(),
    }
}

/// Runs `scenarios` on a pool of `jobs` threads, calling `progress` after
/// each; outcomes come back in scenario order.
pub fn run_all(
    scenarios: &[Scenario],
    jobs: usize,
    progress: impl Fn(&Outcome) + Sync,
) -> Vec<Outcome> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs.max(1))
        .build()
        .expect("a thread pool of a positive size builds");
    pool.install(|| {
        scenarios
            .par_iter()
            .map(|s| {
                let o = run_scenario(s);
                progress(&o);
                o
            })
            .collect()
    })
}

/// Builds both tables. Timing and memory columns aside, the rows depend only
/// on the spec.
pub fn tables(sweep: &str, outcomes: &[Outcome], threads: usize) -> (Table, Table) {
    let mut runs = Table::default();
    let mut nodes = Table::default();
    for o in outcomes {
        let s = &o.scenario;
        let ok = o.result.as_ref().ok();
        runs.str("sweep", Some(sweep));
        runs.u64("scenario_id", Some(s.id));
        runs.str("group", Some(s.group.as_str()));
        runs.u64("trial", Some(s.trial));
        runs.u64("seed", Some(s.seed));
        runs.str("topology", Some(s.topology.canonical()));
        runs.str("topology_grid", Some(s.topology_text.as_str()));
        runs.str("family", Some(family_of(&s.topology)));
        runs.str("elp", Some(s.elp.text.as_str()));
        runs.str("algo", Some(s.algo.name()));
        runs.str("cycle", Some(s.cycle.as_str()));
        runs.u64("switches", ok.map(|r| r.switches));
        runs.u64("servers", ok.map(|r| r.servers));
        runs.u64("hosts", ok.map(|r| r.hosts));
        runs.u64("links", ok.map(|r| r.links));
        runs.u64("endpoints", ok.map(|r| r.endpoints));
        runs.u64("paths", ok.map(|r| r.paths));
        runs.bool("paths_exact", ok.map(|r| r.paths_exact));
        runs.u32("longest_elp", ok.map(|r| r.longest_elp));
        runs.u64("pairs_covered", ok.map(|r| r.pairs_covered));
        runs.u64("pairs_total", ok.map(|r| r.pairs_total));
        runs.u32("priorities", ok.map(|r| r.priorities));
        runs.u64("acl_exact_total", ok.map(|r| r.acl_exact_total));
        runs.u64("acl_exact_max", ok.map(|r| r.acl_exact_max));
        runs.u64("acl_exact_p50", ok.map(|r| r.acl_exact_p50));
        runs.u64("acl_exact_p99", ok.map(|r| r.acl_exact_p99));
        runs.u64("acl_compressed_total", ok.map(|r| r.acl_compressed_total));
        runs.u64("acl_compressed_max", ok.map(|r| r.acl_compressed_max));
        runs.u64("acl_compressed_p50", ok.map(|r| r.acl_compressed_p50));
        runs.u64("acl_compressed_p99", ok.map(|r| r.acl_compressed_p99));
        runs.u64("queue_rules_total", ok.map(|r| r.queue_rules_total));
        runs.u64("queue_rules_max", ok.map(|r| r.queue_rules_max));
        runs.u64("rules_total", ok.map(|r| r.rules_total));
        runs.u64("rules_max", ok.map(|r| r.rules_max));
        runs.u64("rules_p50", ok.map(|r| r.rules_p50));
        runs.u64("rules_p99", ok.map(|r| r.rules_p99));
        runs.u64("headroom_max_bytes", ok.map(|r| r.headroom_max_bytes));
        runs.bool("verified", Some(ok.is_some_and(|r| r.verified)));
        runs.str("status", Some(if ok.is_some() { "ok" } else { "failed" }));
        runs.str("error", o.result.as_ref().err().map(String::as_str));
        runs.f64("seconds_generate", ok.map(|r| r.seconds.generate));
        runs.f64("seconds_elp", ok.map(|r| r.seconds.elp));
        runs.f64("seconds_tag", ok.map(|r| r.seconds.tag));
        runs.f64("seconds_rules", ok.map(|r| r.seconds.rules));
        runs.f64("seconds_verify", ok.map(|r| r.seconds.verify));
        runs.f64("seconds_total", ok.map(|r| r.seconds.total));
        runs.u64("peak_rss_bytes", o.peak_rss_bytes);
        runs.u64("threads", Some(threads as u64));
        runs.str("version", Some(VERSION));
        for n in &o.nodes {
            nodes.u64("scenario_id", Some(s.id));
            nodes.u32("node", Some(n.node));
            nodes.str("kind", Some(n.kind.as_str()));
            nodes.u32("level", n.level);
            nodes.u32("degree", Some(n.degree));
            nodes.u32("hosts", Some(n.hosts));
            nodes.u64("acl_exact", Some(n.acl_exact));
            nodes.u64("acl_compressed", Some(n.acl_compressed));
            nodes.u64("queue_rules", Some(n.queue_rules));
            nodes.u64("rules", Some(n.acl_compressed + n.queue_rules));
            nodes.u32("priorities", Some(n.priorities));
        }
    }
    (runs, nodes)
}

fn family_of(t: &tagger_generators::TopologySpec) -> &'static str {
    use tagger_generators::TopologySpec as T;
    match t {
        T::FatTree { .. } => "fattree",
        T::LeafSpine { .. } => "leafspine",
        T::BCube { .. } => "bcube",
        T::HyperX { .. } => "hyperx",
        T::Jellyfish { .. } => "jellyfish",
        T::File { .. } => "file",
    }
}

/// Writes `runs.parquet` and `switches.parquet` into `dir` (created if
/// needed), each atomically, with the spec text and engine version in the
/// files' key-value metadata.
///
/// # Errors
/// I/O or Parquet errors naming the file.
pub fn write(dir: &Path, sweep: &Sweep, outcomes: &[Outcome], threads: usize) -> crate::Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| crate::Error::io(dir, e))?;
    let (runs, nodes) = tables(&sweep.name, outcomes, threads);
    let meta = [
        ("tagger.sweep", sweep.name.clone()),
        ("tagger.spec", sweep.text.clone()),
        ("tagger.version", VERSION.to_string()),
    ];
    runs.write(&dir.join("runs.parquet"), &meta)?;
    nodes.write(&dir.join("switches.parquet"), &meta)?;
    Ok(())
}

/// The summary table: one line per (topology, ELP, algorithm), medians over
/// trials.
pub fn summary_table(outcomes: &[Outcome]) -> String {
    use std::collections::BTreeMap;
    use std::fmt::Write as _;
    let mut groups: BTreeMap<(u64, String, String, String), Vec<&Outcome>> = BTreeMap::new();
    let mut first_id: BTreeMap<(String, String, String), u64> = BTreeMap::new();
    for o in outcomes {
        let s = &o.scenario;
        let k = (s.topology_text.clone(), s.elp.text.clone(), s.algo.name());
        let id = *first_id.entry(k.clone()).or_insert(s.id);
        groups.entry((id, k.0, k.1, k.2)).or_default().push(o);
    }
    let med = |mut v: Vec<f64>| -> Option<f64> {
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        Some(v[(v.len() - 1) / 2])
    };
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<38} {:<24} {:<8} {:>4} {:>7} {:>7} {:>4} {:>9} {:>9} {:>8}  status",
        "topology",
        "elp",
        "algo",
        "runs",
        "nodes",
        "longest",
        "P",
        "acl_max",
        "rules_max",
        "seconds"
    );
    for ((_, topo, elp, algo), os) in groups {
        let ok: Vec<&Summary> = os.iter().filter_map(|o| o.result.as_ref().ok()).collect();
        let failed = os.len() - ok.len();
        let f = |get: fn(&Summary) -> f64| med(ok.iter().map(|r| get(r)).collect());
        let show =
            |x: Option<f64>, prec: usize| x.map_or("-".to_string(), |v| format!("{v:.prec$}"));
        let status = if failed == 0 {
            "ok".to_string()
        } else {
            let first = os
                .iter()
                .find_map(|o| o.result.as_ref().err())
                .cloned()
                .unwrap_or_default();
            let first: String = first.chars().take(70).collect();
            format!("{failed} FAILED: {first}")
        };
        let _ = writeln!(
            out,
            "{:<38} {:<24} {:<8} {:>4} {:>7} {:>7} {:>4} {:>9} {:>9} {:>8}  {status}",
            topo.chars().take(38).collect::<String>(),
            elp.chars().take(24).collect::<String>(),
            algo,
            os.len(),
            show(f(|r| (r.switches + r.servers) as f64), 0),
            show(f(|r| r.longest_elp as f64), 0),
            show(f(|r| r.priorities as f64), 0),
            show(f(|r| r.acl_exact_max as f64), 0),
            show(f(|r| r.rules_max as f64), 0),
            show(f(|r| r.seconds.total), 3),
        );
    }
    out
}
