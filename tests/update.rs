//! `tagger update` end to end: the three changes (small sizes),
//! what it writes, and what it refuses.

mod common;

use common::{tagger, text};
use std::path::{Path, PathBuf};
use tagger::rules::RuleSet;
use tagger::verify::{Limits, verify_within};

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("tagger-update-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Plans `topology` with greedy, then updates it to `to`; returns the
/// JSON summary.
fn update(dir: &Path, topology: &str, to: &str, elp: &str, extra: &[&str]) -> serde_json::Value {
    let old = dir.join("old.rules.json");
    let o = tagger(&["run", topology, "--elp", elp, "--rules-out", s(&old)]);
    assert!(o.status.success(), "{}", text(&o));
    let mut args = vec![
        "update",
        "--topology",
        topology,
        "--rules",
        s(&old),
        "--to",
        to,
        "--elp",
        elp,
        "--json",
    ];
    args.extend(extra);
    let o = tagger(&args);
    assert!(o.status.success(), "{}", text(&o));
    serde_json::from_slice(&o.stdout).unwrap()
}

#[test]
fn three_changes_verify_every_step_with_less_churn() {
    for (topology, to, elp) in [
        (
            "jellyfish:n=60,ports=16,r=6,seed=1",
            "grow:switches=4,seed=2",
            "shortest",
        ),
        ("fattree:k=8", "drain:links=4,seed=1", "kbounce:1"),
        (
            "leafspine:leaves=6,spines=3,hosts=2",
            "leafspine:leaves=7,spines=3,hosts=2",
            "shortest",
        ),
        // The same rack added by name, keeping the levels kbounce needs.
        (
            "leafspine:leaves=6,spines=3,hosts=2",
            "grow:leaves=2",
            "kbounce:1",
        ),
    ] {
        let dir = tmp("three");
        let v = update(&dir, topology, to, elp, &[]);
        assert_eq!(v["verified"], true, "{topology}: {v}");
        assert_eq!(v["steps"], v["verified_steps"], "{topology}");
        assert!(v["steps"].as_u64().unwrap() >= 1, "{topology}");
        assert_eq!(v["schedule"], "two-phase", "{topology}");
        assert_eq!(v["entries_changed"], 0, "{topology}");
        assert!(
            v["churn_entries"].as_u64().unwrap() <= v["scratch_churn_entries"].as_u64().unwrap(),
            "{topology}: {v}"
        );
        for key in [
            "priorities",
            "churn_entries",
            "switches_touched",
            "steps",
            "verified_steps",
        ] {
            assert!(v[key].is_u64(), "{topology}: {key} in {v}");
        }
        let rows = v["step_rows"].as_array().unwrap();
        assert!(
            rows.iter()
                .all(|r| r["verified"] == true && r["any_order"] == true)
        );
        std::fs::remove_dir_all(&dir).ok();
    }
}

/// The new rules, the new topology, the step files and the Parquet rows are
/// written, and they agree: the new rules verify on the new topology, and
/// applying the step files to the installed rules (on the union topology)
/// gives the new rules.
#[test]
fn outputs_agree_with_each_other() {
    let dir = tmp("outputs");
    let (rules, topo, steps, pq) = (
        dir.join("new.rules.json"),
        dir.join("new.json"),
        dir.join("steps"),
        dir.join("steps.parquet"),
    );
    let topology = "jellyfish:n=40,ports=12,r=6,seed=3";
    let v = update(
        &dir,
        topology,
        "grow:switches=3,seed=1",
        "shortest",
        &[
            "--rules-out",
            s(&rules),
            "--topology-out",
            s(&topo),
            "--steps-out",
            s(&steps),
            "--out",
            s(&pq),
        ],
    );
    let new_topo = tagger::topo::file::read_json_file(&topo).unwrap();
    let new_rules = RuleSet::read(&rules).unwrap();
    let elp =
        tagger::elp::ElpSet::build(&new_topo, &tagger::elp::ElpSpec::parse("shortest").unwrap())
            .unwrap();
    assert!(verify_within(&new_topo, &new_rules, Some(&elp), &Limits::SWITCH).ok());
    let o = tagger(&["verify", "--topology", s(&topo), "--rules", s(&rules)]);
    assert!(o.status.success(), "{}", text(&o));
    // Replay the step files over the installed entries, on the union.
    let old = tagger::topo::TopologySpec::parse(topology)
        .unwrap()
        .build()
        .unwrap();
    let installed = RuleSet::read(&dir.join("old.rules.json")).unwrap();
    let corr = tagger::update::correspond(&old, &new_topo).unwrap();
    let mut entries: std::collections::BTreeSet<tagger::rules::Entry> =
        corr.old_on_union(&installed).entries.into_iter().collect();
    let n = v["steps"].as_u64().unwrap();
    for i in 1..=n {
        let file = std::fs::read_dir(&steps)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| {
                p.file_name()
                    .unwrap()
                    .to_str()
                    .unwrap()
                    .starts_with(&format!("step-{i}-"))
            })
            .unwrap();
        let step: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
        assert_eq!(step["format"], tagger::update::STEPS_FORMAT);
        for e in step["add"].as_array().unwrap() {
            entries.insert(serde_json::from_value(e.clone()).unwrap());
        }
        for e in step["remove"].as_array().unwrap() {
            let e: tagger::rules::Entry = serde_json::from_value(e.clone()).unwrap();
            assert!(entries.remove(&e));
        }
    }
    assert_eq!(
        entries.into_iter().collect::<Vec<_>>(),
        corr.new_on_union(&new_rules).entries
    );
    // The union topology the step files use is written beside them.
    let union = tagger::topo::file::read_json_file(&steps.join("topology.json")).unwrap();
    assert_eq!(union.link_count(), corr.union.link_count());
    let batches = tagger::output::parquet::read_batches(&pq).unwrap();
    let rows: usize = batches.iter().map(|b| b.num_rows()).sum();
    assert_eq!(rows as u64, n);
    // A second update replaces its own steps directory.
    update(
        &dir,
        topology,
        "grow:switches=2,seed=1",
        "shortest",
        &["--steps-out", s(&steps)],
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn bad_input_is_named_and_writes_nothing() {
    let dir = tmp("bad");
    let old = dir.join("old.rules.json");
    let out = dir.join("new.rules.json");
    let o = tagger(&[
        "run",
        "fattree:k=4",
        "--elp",
        "shortest",
        "--rules-out",
        s(&old),
    ]);
    assert!(o.status.success());
    let run = |to: &str, extra: &[&str]| {
        let mut a = vec![
            "update",
            "--topology",
            "fattree:k=4",
            "--rules",
            s(&old),
            "--to",
            to,
            "--elp",
            "shortest",
            "--rules-out",
            s(&out),
        ];
        a.extend(extra);
        tagger(&a)
    };
    for (to, extra, says) in [
        ("drain:links=4,sed=1", &[][..], "sed"),
        ("drain:links=0", &[][..], "links"),
        ("grow:switches=2,seed=x", &[][..], "seed"),
        ("fattree:k=2", &[][..], "no counterpart"),
        (
            "drain:links=1",
            &["--max-priorities", "0"][..],
            "priorities",
        ),
        (
            "drain:links=1",
            &["--order", "1,2"][..],
            "every switch whose table changes",
        ),
        (
            "drain:links=1",
            &["--search-budget", "lots"][..],
            "--search-budget",
        ),
    ] {
        let o = run(to, extra);
        assert!(!o.status.success(), "{to}: {}", text(&o));
        assert!(text(&o).contains(says), "{to}: {}", text(&o));
        assert!(!out.exists(), "{to}: wrote the rules");
    }
    // Rules for another topology are refused by the verifier first.
    let o = tagger(&[
        "update",
        "--topology",
        "fattree:k=6",
        "--rules",
        s(&old),
        "--to",
        "drain:links=1",
        "--elp",
        "shortest",
    ]);
    assert!(!o.status.success());
    assert!(text(&o).contains("does not verify"), "{}", text(&o));
    std::fs::remove_dir_all(&dir).ok();
}

/// `--export-steps` writes a directory per step with the configuration
/// of exactly the switches the step changes (their state after it is
/// checked against a whole export in the library's tests).
#[test]
fn step_exports_hold_each_steps_switches() {
    let dir = tmp("export");
    for format in ["sonic", "json"] {
        let ex = dir.join("export");
        let target = format!("{format}:{}", s(&ex));
        let v = update(
            &dir,
            "jellyfish:n=30,ports=10,r=4,seed=2",
            "grow:switches=2,seed=1",
            "shortest",
            &["--export-steps", &target, "--require-fit", "off"],
        );
        let listed: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(ex.join("summary.json")).unwrap())
                .unwrap();
        assert_eq!(listed["format"], tagger::update::EXPORT_FORMAT);
        let listed = listed["steps"].as_array().unwrap();
        assert_eq!(listed.len() as u64, v["steps"].as_u64().unwrap());
        for (step, row) in listed.iter().zip(v["step_rows"].as_array().unwrap()) {
            let sub = ex.join(step["dir"].as_str().unwrap());
            let mut files: Vec<String> = std::fs::read_dir(&sub)
                .unwrap()
                .map(|e| e.unwrap().file_name().into_string().unwrap())
                .filter(|f| f != "summary.json")
                .collect();
            files.sort();
            let cleared = step["cleared"].as_array().unwrap().len();
            let mut want: Vec<String> = row["switch_list"]
                .as_str()
                .unwrap()
                .split(' ')
                .map(|n| format!("{n}.json"))
                .collect();
            want.sort();
            assert_eq!(files.len() + cleared, want.len(), "{}", step["dir"]);
            assert!(files.iter().all(|f| want.contains(f)), "{}", step["dir"]);
        }
        std::fs::remove_dir_all(&ex).ok();
    }
    std::fs::remove_dir_all(&dir).ok();
}
