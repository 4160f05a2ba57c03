//! Fixtures and strategies the integration tests share (as petgraph's
//! `tests/utils`): the CLI runner, small plans, the worked example, and
//! proptest strategies over small networks.
#![allow(dead_code)]

use proptest::prelude::*;
use std::process::{Command, Output};
use tagger::cycle::CycleBackend;
use tagger::elp::{ElpSet, ElpSpec};
use tagger::rules::RuleSet;
use tagger::tagging::{Algo, tag};
use tagger::{Topology, TopologySpec};

/// Runs the `tagger` binary.
pub fn tagger(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tagger"))
        .args(args)
        .output()
        .unwrap()
}

/// A command's standard output and error, for messages and matching.
pub fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Runs `tagger` with `args`, expecting it to exit with `code` and say
/// `needle` (on either stream), once, without a panic; returns the text.
pub fn fails_with(args: &[&str], code: i32, needle: &str) -> String {
    let o = tagger(args);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(code), "{args:?}: {t}");
    assert_eq!(
        t.matches(needle).count(),
        1,
        "{args:?}: want '{needle}' once in: {t}"
    );
    assert!(!t.contains("panicked"), "{args:?}: {t}");
    t
}

/// The topology a spec string names.
pub fn topo(spec: &str) -> Topology {
    TopologySpec::parse(spec).unwrap().build().unwrap()
}

/// A topology, its ELP and the rules `algo` tags it with (not verified).
pub fn plan(spec: &str, elp: &str, algo: &str) -> (Topology, ElpSet, RuleSet) {
    let t = topo(spec);
    let e = ElpSet::build(&t, &ElpSpec::parse(elp).unwrap()).unwrap();
    let tg = tag(&t, &e, algo.parse::<Algo>().unwrap(), CycleBackend::Ordered).unwrap();
    let r = RuleSet::from_tagging(&t, &tg);
    (t, e, r)
}

/// The repository's worked example (docs/model.md): its topology file and
/// path file.
pub fn design_example() -> (Topology, ElpSet) {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/datasets/topologies");
    let t = tagger::generators::file::read_json_file(std::path::Path::new(&format!(
        "{dir}/design-example.json"
    )))
    .unwrap();
    let e = ElpSet::build(
        &t,
        &ElpSpec::parse(&format!("file:{dir}/design-example.paths")).unwrap(),
    )
    .unwrap();
    (t, e)
}

/// Small networks of every family (at most a few dozen switches), as spec
/// strings; tiered ones (where `clos` applies) are flagged.
pub fn small_topology() -> impl Strategy<Value = (String, bool)> {
    prop_oneof![
        (2u32..=3).prop_map(|k| (format!("fattree:k={}", 2 * k), true)),
        (2u32..=5, 1u32..=3)
            .prop_map(|(l, s)| (format!("leafspine:leaves={l},spines={s},hosts=1"), true)),
        (10u32..=24, 0u64..1000)
            .prop_map(|(n, seed)| (format!("jellyfish:n={n},ports=6,r=4,seed={seed}"), false)),
        (2u32..=3).prop_map(|n| (format!("bcube:n={n},k=1"), false)),
        (3u32..=4).prop_map(|s| (format!("hyperx:l=2,s={s},t=1"), false)),
    ]
}

/// A small plan: a network of [`small_topology`], an ELP family (shortest,
/// or one bounce on tiered networks) and an algorithm that applies (`clos`
/// only on tiered networks), as (topology, ELP, algorithm) specs.
pub fn small_plan() -> impl Strategy<Value = (String, String, String)> {
    (
        small_topology(),
        prop::sample::select(vec!["shortest", "kbounce:1"]),
        prop::sample::select(vec!["greedy", "clos", "brute"]),
    )
        .prop_map(|((t, tiered), elp, algo)| {
            let elp = if tiered { elp } else { "shortest" };
            let algo = if algo == "clos" && !tiered {
                "greedy"
            } else {
                algo
            };
            (t, elp.to_string(), algo.to_string())
        })
}

/// Writes a fat-tree k=4 `kbounce:1` clos plan into `dir` (t.json,
/// r.json, elp.paths) and returns the two paths as strings.
pub fn plan_files(dir: &std::path::Path) -> (String, String) {
    let t = dir.join("t.json").to_str().unwrap().to_string();
    let r = dir.join("r.json").to_str().unwrap().to_string();
    let paths = dir.join("elp.paths").to_str().unwrap().to_string();
    let o = tagger(&[
        "run",
        "fattree:k=4",
        "--elp",
        "kbounce:1",
        "--algo",
        "clos",
        "--topology-out",
        &t,
        "--rules-out",
        &r,
        "--paths-out",
        &paths,
    ]);
    assert!(o.status.success(), "{}", text(&o));
    (t, r)
}
