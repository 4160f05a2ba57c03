//! Mutated exports: `verify --exported` (the reader, then the verifier with
//! the ELP) must accept exactly the directories the switches would run as
//! the plan promises, as judged by an independent model of the switches
//! written here from SONiC's semantics (and the neutral table's own), not
//! from the reader's code.
//!
//! The model decodes each switch into the function it applies to every
//! packet. SONiC: a port's binding (`PORT_QOS_MAP`) applies only when every
//! map it names exists; a packet arriving with a DSCP goes to the TC its
//! port's `DSCP_TO_TC_MAP` gives (unlisted: TC 0) and the priority group of
//! `TC_TO_PRIORITY_GROUP_MAP`; the group is lossless when it is in the
//! port's `pfc_enable`, and then it needs a `BUFFER_PG` whose profile is in
//! the lossless ingress pool and holds the headroom SONiC's formula gives
//! for the port's speed and cable under the profile the export records. At
//! an out port the TC goes to the queue of `TC_TO_QUEUE_MAP` and leaves
//! with the DSCP of `TC_TO_DSCP_MAP` (unlisted, or no map: unchanged); the
//! queue stops when paused when it is in `pfc_enable`, and then it needs a
//! `BUFFER_QUEUE` in the lossless egress pool. The neutral table: a listed
//! (port, tag) is lossless in its class's priority; a class sends each
//! listed port its tag and priority, other link ports lossy with tag 0, and
//! delivers to hosts in its priority; anything unlisted is lossy, tag 0.
//!
//! The standard the model holds the directory to:
//!
//! - what is lossless carries a tag of the plan in one of its priorities,
//!   from hosts a tag they send; no ACL table;
//! - a packet the next switch classifies lossless left in the queue it
//!   pauses (not lossy, not another priority);
//! - a lossless packet delivered to a host leaves in a paused queue of its
//!   own priority;
//! - priorities never fall on a lossless transition, and the most in use
//!   is the summary's;
//! - the graph of buffer dependencies of every packet, any routing, U-turns
//!   included, has no cycle;
//! - each switch's traffic classes, lossless queues per port and headroom
//!   fit the recorded profile, and agree with summary.json; host ports act
//!   alike; a neutral table's entries are what its classes do;
//! - every ELP path, from every host port of its first switch, is lossless
//!   at every hop.
//!
//! The independent switch model is in `model.rs` (decoding a SONiC or
//! neutral switch file into what it does to every packet) and `judge.rs`
//! (the standard above, over every switch), apart from the reader it
//! checks; the mutations in `mutate.rs`.

use proptest::prelude::*;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use tagger::elp::{ElpSet, ElpSpec, enumerate};
use tagger::rules::RuleSet;
use tagger::sonic::{Options, export, read, table, write};
use tagger::{Topology, TopologySpec};

use judge::{judge, switch_would_run};
use model::{Arrive, Broken, Leave, Model, Summary, broken, num, sonic_switch, table_switch};
use mutate::{mutate, mutate_dir, mutate_table, w_of};

struct Plan {
    topo: Topology,
    elp: ElpSet,
    elp_text: String,
    rules: RuleSet,
    paths: Vec<Vec<u32>>,
}

fn plan(topo: &str, elp: &str, algo: &str) -> Plan {
    let t = TopologySpec::parse(topo).unwrap().build().unwrap();
    let e = ElpSet::build(&t, &ElpSpec::parse(elp).unwrap()).unwrap();
    let budget = tagger::budget::Budget::unlimited();
    let control = tagger::tagging::Control::new();
    let cx = tagger::tagging::Context::new(&t, &e, &budget, &control).with_max_tcs(Some(7));
    let tg = tagger::tagging::tag_in(&cx, algo.parse().unwrap()).unwrap();
    let rules = RuleSet::from_tagging(&t, &tg);
    let mut paths = Vec::new();
    enumerate::for_each_path(&t, &e, 1_000_000, |p| {
        paths.push(p.to_vec());
        Ok(())
    })
    .unwrap();
    Plan {
        topo: t,
        elp: e,
        elp_text: elp.to_string(),
        rules,
        paths,
    }
}

/// Options whose profile has room for every plan here (queues, buffer).
fn options(p: &Plan) -> Options {
    let mut o = Options {
        elp: Some(p.elp_text.clone()),
        ..Default::default()
    };
    o.profile.lossless_queues = 6;
    // Fewer queues than the eight a map can name: a queue past them is
    // one the switch does not have.
    o.profile.queues_per_port = 6;
    o.mapping = tagger::sonic::Mapping::for_profile(&o.profile);
    o
}

/// What `tagger verify --exported DIR` decides: the read-back, then the
/// verifier with the ELP the export records.
fn verified(p: &Plan, dir: &std::path::Path) -> bool {
    match read(&p.topo, dir) {
        Ok(r) => tagger::verify::verify(&p.topo, &r.rules, Some(&p.elp)).ok(),
        Err(_) => false,
    }
}

fn why(p: &Plan, dir: &std::path::Path) -> String {
    read(&p.topo, dir)
        .map(|r| tagger::verify::verify(&p.topo, &r.rules, Some(&p.elp)).to_string())
        .unwrap_or_else(|e| e.to_string())
}

fn plans() -> &'static [Plan] {
    static PLANS: std::sync::OnceLock<Vec<Plan>> = std::sync::OnceLock::new();
    PLANS.get_or_init(|| {
        vec![
            plan("fattree:k=4", "kbounce:1", "clos"),
            plan("jellyfish:n=20,ports=6,r=4,seed=1", "shortest", "brute"),
            plan("leafspine:leaves=4,spines=2,hosts=1", "kbounce:1", "search"),
            plan("jellyfish:n=16,ports=6,r=4,seed=3", "shortest", "greedy"),
        ]
    })
}

/// The unmutated exports, SONiC and neutral: both sides accept.
#[test]
fn exports_run_as_verified() {
    for p in plans() {
        for ex in [
            export(&p.topo, &p.rules, &options(p)).unwrap(),
            table(&p.topo, &p.rules, Some(&p.elp_text)).unwrap(),
        ] {
            let d = tempfile::tempdir().unwrap();
            let dir = d.path().join("ex");
            write(&dir, &ex).unwrap();
            assert!(verified(p, &dir), "{}: {}", p.topo.name(), why(p, &dir));
            let j = judge(&p.topo, &dir, &p.paths);
            assert!(j.is_ok(), "{}: {:?}", p.topo.name(), j.err());
        }
    }
}

/// Edits `n` random switch files of an export of plan `which` with
/// `edit`, then compares the two verdicts.
fn fuzz_one(which: usize, seeds: &[u64], neutral: bool) -> Result<(), TestCaseError> {
    let p = &plans()[which];
    let ex = if neutral {
        table(&p.topo, &p.rules, Some(&p.elp_text)).unwrap()
    } else {
        export(&p.topo, &p.rules, &options(p)).unwrap()
    };
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("ex");
    write(&dir, &ex).unwrap();
    let mut edits = Vec::new();
    for &seed in seeds {
        let mut x = seed;
        let mut pick = |n: usize| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((x >> 33) as usize) % n.max(1)
        };
        let s = &ex.switches[pick(ex.switches.len())];
        let f = dir.join(format!("{}.json", s.node));
        let mut db: Value = serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
        let before = db.clone();
        if neutral {
            mutate_table(&mut db, &mut pick);
        } else {
            mutate(&mut db, &mut pick);
        }
        edits.push((s.node, diff(&before, &db)));
        std::fs::write(&f, db.to_string()).unwrap();
        // The patch follows the edit (the switch runs what it makes of
        // its base): the mutation is of what the switch would hold.
        let base = dir.join(format!("{}.base.json", s.node));
        if let Ok(text) = std::fs::read_to_string(&base) {
            let base: Value = serde_json::from_str(&text).unwrap();
            let patch = json_patch::diff(&base, &db);
            std::fs::write(
                dir.join(format!("{}.patch.json", s.node)),
                serde_json::to_string(&patch).unwrap(),
            )
            .unwrap();
        }
    }
    // Now and then, the directory as a whole.
    if seeds[0].is_multiple_of(8) {
        let mut x = seeds[0] ^ 0x9e37_79b9_7f4a_7c15;
        let mut pick = |n: usize| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((x >> 33) as usize) % n.max(1)
        };
        edits.push((u32::MAX, vec![mutate_dir(&dir, &mut pick)]));
    }
    let model = switch_would_run(&p.topo, &dir, &p.paths);
    let verdict = verified(p, &dir);
    // FUZZ_SHOW=1 prints each verdict: how the cases split between
    // accepted and refused, and why.
    if std::env::var_os("FUZZ_SHOW").is_some() {
        eprintln!(
            "VERDICT neutral={neutral} which={which} accept={verdict} why={}",
            why(p, &dir).lines().next().unwrap_or("")
        );
    }
    let judged = judge(&p.topo, &dir, &p.paths).err();
    prop_assert_eq!(
        verdict,
        model,
        "{} edits {:?}: verify: {}; model: {:?}",
        p.topo.name(),
        edits,
        why(p, &dir),
        judged.map(|b| b.0)
    );
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: std::env::var("FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(160), ..ProptestConfig::default() })]

    /// One or two random edits of random SONiC switch files: the verifier
    /// accepts exactly when the switch model says the network runs as the
    /// plan promises.
    #[test]
    fn verify_exported_accepts_exactly_what_runs(
        which in 0usize..4,
        seeds in proptest::collection::vec(any::<u64>(), 1..=2),
    ) {
        fuzz_one(which, &seeds, false)?;
    }

    /// The same for the neutral table.
    #[test]
    fn verify_exported_tables_accept_exactly_what_runs(
        which in 0usize..4,
        seeds in proptest::collection::vec(any::<u64>(), 1..=2),
    ) {
        fuzz_one(which, &seeds, true)?;
    }
}

/// The tables an edit changed, for the failure message.
fn diff(a: &Value, b: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let empty = serde_json::Map::new();
    for (t, x) in a.as_object().unwrap() {
        if b.get(t) != Some(x) {
            match (x.as_object(), b[t].as_object()) {
                (Some(xo), Some(yo)) => {
                    for k in xo.keys().chain(yo.keys()).collect::<BTreeSet<_>>() {
                        if xo.get(k) != yo.get(k) {
                            out.push(format!(
                                "{t}|{k}: {} -> {}",
                                xo.get(k).map_or("none".into(), |v| v.to_string()),
                                yo.get(k).map_or("deleted".into(), |v| v.to_string())
                            ));
                        }
                    }
                }
                _ => out.push(format!("{t}: {x} -> {}", b[t])),
            }
        }
    }
    for (t, y) in b.as_object().unwrap_or(&empty) {
        if a.get(t).is_none() {
            out.push(format!("{t}: added {y}"));
        }
    }
    out
}

mod judge;
mod model;
mod mutate;
