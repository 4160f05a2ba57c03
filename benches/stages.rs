//! One criterion group per pipeline stage, three sizes each (`BenchmarkId`
//! by size), plus the cycle-detection replay that compares our `ordered`
//! and `pk` backends with petgraph's `Acyclic` on the same recorded
//! insertions.
//!
//! `cargo bench` runs the default sizes in a few minutes. Set
//! `TAGGER_BENCH_LARGE=1` for the issue-scale instances (Jellyfish 2,000 and
//! fat-tree k=48), which take far longer.

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use std::time::Duration;
use tagger::cycle::{self, CycleBackend, NaiveDag, OrderedDag, PearceKelly, PetgraphDag};
use tagger::elp::{ElpSet, ElpSpec};
use tagger::rules::RuleSet;
use tagger::tagging::{self, Algo};
use tagger::{Topology, TopologySpec};

/// Shared fixtures: (label, topology spec, ELP spec) at three sizes.
mod fixtures {
    pub fn large() -> bool {
        std::env::var_os("TAGGER_BENCH_LARGE").is_some()
    }
    pub fn jellyfish() -> Vec<(&'static str, &'static str)> {
        if large() {
            vec![
                ("500", "jellyfish:n=500,ports=64,r=12,seed=1"),
                ("1000", "jellyfish:n=1000,ports=64,r=12,seed=1"),
                ("2000", "jellyfish:n=2000,ports=64,r=12,seed=1"),
            ]
        } else {
            vec![
                ("100", "jellyfish:n=100,ports=32,r=8,seed=1"),
                ("250", "jellyfish:n=250,ports=64,r=12,seed=1"),
                ("500", "jellyfish:n=500,ports=64,r=12,seed=1"),
            ]
        }
    }
    pub fn fattree() -> Vec<(&'static str, &'static str)> {
        if large() {
            vec![
                ("16", "fattree:k=16"),
                ("32", "fattree:k=32"),
                ("48", "fattree:k=48"),
            ]
        } else {
            vec![
                ("8", "fattree:k=8"),
                ("12", "fattree:k=12"),
                ("16", "fattree:k=16"),
            ]
        }
    }
    pub fn generators() -> Vec<(&'static str, &'static str)> {
        vec![
            ("jellyfish-1000", "jellyfish:n=1000,ports=64,r=12,seed=1"),
            ("jellyfish-10000", "jellyfish:n=10000,ports=64,r=16,seed=1"),
            ("fattree-64", "fattree:k=64"),
            ("bcube-16-2", "bcube:n=16,k=2"),
            ("hyperx-3-14", "hyperx:l=3,s=14,k=1,t=4"),
        ]
    }
}

fn topo(spec: &str) -> Topology {
    TopologySpec::parse(spec).unwrap().build().unwrap()
}

fn elp(t: &Topology, spec: &str) -> ElpSet {
    ElpSet::build(t, &ElpSpec::parse(spec).unwrap()).unwrap()
}

fn quick<'a>(
    c: &'a mut Criterion,
    name: &str,
) -> criterion::BenchmarkGroup<'a, criterion::measurement::WallTime> {
    let mut g = c.benchmark_group(name);
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    g
}

fn generators(c: &mut Criterion) {
    let mut g = quick(c, "generate");
    for (label, spec) in fixtures::generators() {
        let parsed = TopologySpec::parse(spec).unwrap();
        g.bench_with_input(BenchmarkId::from_parameter(label), &parsed, |b, s| {
            b.iter(|| black_box(s.build().unwrap()))
        });
    }
    g.finish();
}

fn elp_stage(c: &mut Criterion) {
    let mut g = quick(c, "elp");
    for (label, spec) in fixtures::jellyfish() {
        let t = topo(spec);
        g.bench_with_input(BenchmarkId::new("jellyfish-shortest", label), &t, |b, t| {
            b.iter(|| {
                let e = elp(t, "shortest");
                black_box(e.counts(t))
            })
        });
    }
    for (label, spec) in fixtures::fattree() {
        let t = topo(spec);
        g.bench_with_input(BenchmarkId::new("fattree-kbounce2", label), &t, |b, t| {
            b.iter(|| {
                let e = elp(t, "kbounce:2");
                black_box(e.counts(t))
            })
        });
    }
    g.finish();
}

fn tagged_graph(c: &mut Criterion) {
    let mut g = quick(c, "tagged-graph");
    for (label, spec) in fixtures::jellyfish() {
        let t = topo(spec);
        let e = elp(&t, "shortest");
        g.bench_with_input(
            BenchmarkId::new("jellyfish-shortest", label),
            &(t, e),
            |b, (t, e)| {
                b.iter(|| {
                    black_box(tagging::tag(t, e, Algo::Brute, CycleBackend::Ordered).unwrap())
                })
            },
        );
    }
    g.finish();
}

fn tagging_stage(c: &mut Criterion) {
    let mut g = quick(c, "tag");
    for (label, spec) in fixtures::jellyfish() {
        let t = topo(spec);
        let e = elp(&t, "shortest");
        g.bench_with_input(
            BenchmarkId::new("jellyfish-greedy", label),
            &(t, e),
            |b, (t, e)| {
                b.iter(|| {
                    black_box(tagging::tag(t, e, Algo::GREEDY, CycleBackend::Ordered).unwrap())
                })
            },
        );
    }
    for (label, spec) in fixtures::fattree() {
        let t = topo(spec);
        let e = elp(&t, "kbounce:2");
        for algo in [Algo::Clos { k: None }, Algo::GREEDY] {
            g.bench_with_input(
                BenchmarkId::new(format!("fattree-kbounce2-{algo}"), label),
                &(&t, &e),
                |b, (t, e)| {
                    b.iter(|| black_box(tagging::tag(t, e, algo, CycleBackend::Ordered).unwrap()))
                },
            );
        }
    }
    g.finish();
}

/// `search` and `exact` on instances where greedy needs one priority too
/// many (2 is optimal on the Jellyfish; the leaf-spine's optimum is proven
/// by the solver).
fn fewest_priorities(c: &mut Criterion) {
    let mut g = quick(c, "fewest-priorities");
    for (label, spec, elp_spec, algo) in [
        (
            "jellyfish-100-r8",
            "jellyfish:n=100,ports=32,r=8,seed=1",
            "shortest",
            "search",
        ),
        (
            "jellyfish-100-r12",
            "jellyfish:n=100,ports=32,r=12,seed=1",
            "shortest",
            "search",
        ),
        (
            "leafspine-4-3-kbounce2",
            "leafspine:leaves=4,spines=3,hosts=1",
            "kbounce:2",
            "exact",
        ),
    ] {
        let t = topo(spec);
        let e = elp(&t, elp_spec);
        let a: Algo = algo.parse().unwrap();
        g.bench_with_input(BenchmarkId::new(algo, label), &(t, e), |b, (t, e)| {
            b.iter(|| black_box(tagging::tag(t, e, a, CycleBackend::Ordered).unwrap()))
        });
    }
    g.finish();
}

fn cycle_replay(c: &mut Criterion) {
    let mut g = quick(c, "cycle-replay");
    for (label, spec) in fixtures::jellyfish() {
        let t = topo(spec);
        let seq = tagging::greedy_insertions(&t, &elp(&t, "shortest")).unwrap();
        let n = t.channel_count();
        g.bench_with_input(BenchmarkId::new("ordered", label), &seq, |b, s| {
            b.iter(|| black_box(cycle::replay::<OrderedDag>(n, s)))
        });
        g.bench_with_input(BenchmarkId::new("pk", label), &seq, |b, s| {
            b.iter(|| black_box(cycle::replay::<PearceKelly>(n, s)))
        });
        g.bench_with_input(BenchmarkId::new("petgraph", label), &seq, |b, s| {
            b.iter(|| black_box(cycle::replay::<PetgraphDag>(n, s)))
        });
        if label == fixtures::jellyfish()[0].0 {
            g.bench_with_input(BenchmarkId::new("naive", label), &seq, |b, s| {
                b.iter(|| black_box(cycle::replay::<NaiveDag>(n, s)))
            });
        }
    }
    g.finish();
}

fn rules_and_verify(c: &mut Criterion) {
    let mut g = quick(c, "rules-verify");
    for (label, spec) in fixtures::jellyfish() {
        let t = topo(spec);
        let e = elp(&t, "shortest");
        let tg = tagging::tag(&t, &e, Algo::GREEDY, CycleBackend::Ordered).unwrap();
        g.bench_with_input(
            BenchmarkId::new("rules+compress", label),
            &(&t, &tg),
            |b, (t, tg)| {
                b.iter(|| {
                    let r = RuleSet::from_tagging(t, tg);
                    black_box(r.counts(t.node_count()))
                })
            },
        );
        let r = RuleSet::from_tagging(&t, &tg);
        g.bench_with_input(
            BenchmarkId::new("verify", label),
            &(&t, &r, &e),
            |b, (t, r, e)| b.iter(|| black_box(tagger::verify::verify(t, r, Some(e)))),
        );
    }
    g.finish();
}

fn parquet_write(c: &mut Criterion) {
    let mut g = quick(c, "parquet");
    let dir = tempfile::tempdir().unwrap();
    for scenarios in [10usize, 100, 1000] {
        let spec = format!(
            "name = \"b\"\ntrials = {scenarios}\n[[group]]\nname = \"g\"\ntopology = \"fattree:k=4\"\nelp = \"kbounce:1\"\nalgo = \"clos\"\n"
        );
        let sw = tagger::sweep::Sweep::parse(&spec, "bench", 100_000).unwrap();
        let one = tagger::sweep::run_scenario(&sw.scenarios[0]);
        let outcomes: Vec<_> = sw
            .scenarios
            .iter()
            .map(|s| tagger::sweep::Outcome {
                scenario: s.clone(),
                result: Ok(one.result.as_ref().expect("the scenario runs").clone()),
                nodes: one.nodes.clone(),
                failures: one.failures.clone(),
                growth: one.growth.clone(),
                peak_rss_bytes: one.peak_rss_bytes,
            })
            .collect();
        g.bench_with_input(BenchmarkId::from_parameter(scenarios), &outcomes, |b, o| {
            b.iter(|| tagger::sweep::write(dir.path(), &sw, o, 2).unwrap())
        });
    }
    g.finish();
}

criterion_group!(
    benches,
    generators,
    elp_stage,
    tagged_graph,
    tagging_stage,
    fewest_priorities,
    cycle_replay,
    rules_and_verify,
    parquet_write
);
criterion_main!(benches);
