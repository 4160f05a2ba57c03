//! `tagger update` end to end: the three changes (small sizes),
//! what it writes, and what it refuses.

mod common;

use common::{tagger, text};
use std::path::{Path, PathBuf};
use tagger::rules::RuleSet;
use tagger::verify::{Limits, verify_within};

/// A test's scratch directory, removed when the test ends (pass or fail:
/// two tests used to leave theirs behind in the system's temp directory).
struct Scratch(PathBuf);

impl std::ops::Deref for Scratch {
    type Target = PathBuf;
    fn deref(&self) -> &PathBuf {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn tmp(name: &str) -> Scratch {
    let d = std::env::temp_dir().join(format!("tagger-update-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    Scratch(d)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Plans `topology` with greedy, then updates it to `to`; returns the
/// JSON summary.
fn update(dir: &Path, topology: &str, to: &str, elp: &str, extra: &[&str]) -> serde_json::Value {
    let old = dir.join("old.rules.json");
    let o = tagger(&[
        "run",
        topology,
        "--elp",
        elp,
        "--algo",
        "greedy",
        "--rules-out",
        s(&old),
    ]);
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
    let new_topo = tagger::generators::file::read_json_file(&topo).unwrap();
    let new_rules = RuleSet::read(&rules).unwrap();
    let elp =
        tagger::elp::ElpSet::build(&new_topo, &tagger::elp::ElpSpec::parse("shortest").unwrap())
            .unwrap();
    assert!(verify_within(&new_topo, &new_rules, Some(&elp), &Limits::SWITCH).ok());
    let o = tagger(&["verify", "--topology", s(&topo), "--rules", s(&rules)]);
    assert!(o.status.success(), "{}", text(&o));
    // Replay the step files over the installed entries, on the union.
    let old = tagger::TopologySpec::parse(topology)
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
    let union = tagger::generators::file::read_json_file(&steps.join("topology.json")).unwrap();
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
        // Switch and mapping options are checked without --export-steps.
        ("drain:links=1", &["--cable-m", "1e18"][..], "cable_m"),
        ("drain:links=1", &["--speed-gbps", "0"][..], "speed_gbps"),
        (
            "drain:links=1",
            &["--switch", "file:/nonexistent"][..],
            "/nonexistent",
        ),
        ("drain:links=1", &["--dscp", "99"][..], "dscp[0] = 99"),
        ("drain:links=1", &["--queues", "9"][..], "queues[0] = 9"),
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
}

/// `--export-steps` writes a directory per step (and any `ports`,
/// `prepare` or `tidy` directory around them) with the configuration of
/// exactly the switches it changes: every switch of the step's row, and
/// any whose classes alone change (`classes_only`).
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
        assert!(ex.join(tagger::update::UNION_FILE).is_file());
        let listed = listed["steps"].as_array().unwrap();
        let rows = v["step_rows"].as_array().unwrap();
        let dirs: Vec<&str> = listed.iter().map(|d| d["dir"].as_str().unwrap()).collect();
        assert_eq!(v["export_dirs"], serde_json::json!(dirs));
        let mut steps = 0;
        for step in listed {
            let sub = ex.join(step["dir"].as_str().unwrap());
            let mut files: Vec<String> = std::fs::read_dir(&sub)
                .unwrap()
                .map(|e| e.unwrap().file_name().into_string().unwrap())
                .filter(|f| {
                    f != "summary.json" && !f.ends_with(".patch.json") && !f.ends_with(".base.json")
                })
                .collect();
            files.sort();
            let switches: Vec<String> = step["switches"]
                .as_array()
                .unwrap()
                .iter()
                .map(|n| format!("{n}.json"))
                .collect();
            // Cleared switches too (SONiC): their base with nothing lossless.
            let cleared = step["cleared"].as_array().unwrap().len();
            let idle = if format == "sonic" { 0 } else { cleared };
            assert_eq!(files.len() + idle, switches.len(), "{}", step["dir"]);
            assert!(
                files.iter().all(|f| switches.contains(f)),
                "{}",
                step["dir"]
            );
            let action = step["action"].as_str().unwrap();
            if ["ports", "prepare", "tidy"].contains(&action) {
                assert_eq!(step["classes_only"], step["switches"], "{}", step["dir"]);
                continue;
            }
            let row = &rows[steps];
            steps += 1;
            assert_eq!(row["action"], step["action"]);
            for n in row["switch_list"].as_str().unwrap().split(' ') {
                assert!(switches.contains(&format!("{n}.json")), "{}", step["dir"]);
            }
        }
        assert_eq!(steps, rows.len());
        std::fs::remove_dir_all(&ex).ok();
    }
}

/// The ports of every step's export have the names the switches were
/// installed with (the link to the same neighbour), and ports the change
/// adds get names no installed port of the switch has; with port names in
/// the topology file, growth keeps them too (#52 item 10).
#[test]
fn step_exports_keep_installed_port_names() {
    let dir = tmp("ports");
    let peer = |d: &str| d.rsplit(" to ").next().unwrap().to_string();
    for (topology, to, elp, algo) in [
        ("fattree:k=4", "drain:links=3,seed=1", "kbounce:1", "clos"),
        (
            "jellyfish:n=30,ports=10,r=4,seed=2",
            "grow:switches=2,seed=1",
            "shortest",
            "search",
        ),
    ] {
        let (t, r, ex, steps) = (
            dir.join("t.json"),
            dir.join("r.json"),
            dir.join("ex"),
            dir.join("steps"),
        );
        let _ = std::fs::remove_dir_all(&ex);
        let _ = std::fs::remove_dir_all(&steps);
        let o = tagger(&[
            "run",
            topology,
            "--elp",
            elp,
            "--algo",
            algo,
            "--topology-out",
            s(&t),
            "--rules-out",
            s(&r),
            "--export",
            &format!("sonic:{}", s(&ex)),
            "--require-fit",
            "off",
        ]);
        assert!(o.status.success(), "{}", text(&o));
        let o = tagger(&[
            "update",
            "--topology",
            s(&t),
            "--rules",
            s(&r),
            "--to",
            to,
            "--elp",
            elp,
            "--export-steps",
            &format!("sonic:{}", s(&steps)),
            "--require-fit",
            "off",
        ]);
        assert!(o.status.success(), "{}", text(&o));
        let ports = |f: &Path| -> Vec<(String, String)> {
            let db: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(f).unwrap()).unwrap();
            db["PORT"]
                .as_object()
                .unwrap()
                .iter()
                .map(|(n, p)| (n.clone(), peer(p["description"].as_str().unwrap())))
                .collect()
        };
        let mut checked = 0;
        for step in std::fs::read_dir(&steps).unwrap() {
            let step = step.unwrap().path();
            if !step.is_dir() {
                continue;
            }
            for f in std::fs::read_dir(&step).unwrap() {
                let f = f.unwrap().path();
                let name = f.file_name().unwrap().to_str().unwrap().to_string();
                if name == "summary.json"
                    || name.ends_with(".patch.json")
                    || !ex.join(&name).exists()
                {
                    continue;
                }
                let installed = ports(&ex.join(&name));
                for (port, to) in ports(&f) {
                    match installed.iter().find(|(n, _)| *n == port) {
                        Some((_, was)) => assert_eq!(&to, was, "{topology} {name} {port}"),
                        // A port the change adds: a name no installed
                        // port has, on a link the switch did not have.
                        None => {
                            assert!(!installed.iter().any(|(_, w)| *w == to && to != "host port"))
                        }
                    }
                    checked += 1;
                }
            }
        }
        assert!(checked > 0, "{topology}");
    }
    // Port names in the topology file: growing keeps them, no name twice.
    let t = dir.join("named.json");
    let o = tagger(&["topo", "jellyfish:n=16,ports=8,r=4,seed=1", "--out", s(&t)]);
    assert!(o.status.success(), "{}", text(&o));
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&t).unwrap()).unwrap();
    let mut degree = std::collections::BTreeMap::new();
    for l in v["links"].as_array().unwrap() {
        for x in l.as_array().unwrap() {
            *degree.entry(x.as_u64().unwrap()).or_insert(0u64) += 1;
        }
    }
    for n in v["nodes"].as_array_mut().unwrap() {
        let ports = degree[&n["id"].as_u64().unwrap()] + n["hosts"].as_u64().unwrap();
        n["port_names"] = (1..=ports).map(|i| format!("Eth1/{i}")).collect();
    }
    std::fs::write(&t, v.to_string()).unwrap();
    let r = dir.join("named.rules.json");
    let o = tagger(&[
        "run",
        &format!("file:{}", s(&t)),
        "--elp",
        "shortest",
        "--rules-out",
        s(&r),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let steps = dir.join("named-steps");
    let o = tagger(&[
        "update",
        "--topology",
        s(&t),
        "--rules",
        s(&r),
        "--to",
        "grow:switches=1,seed=1",
        "--elp",
        "shortest",
        "--export-steps",
        &format!("sonic:{}", s(&steps)),
        "--require-fit",
        "off",
    ]);
    assert!(o.status.success(), "{}", text(&o));
}

/// A switch-by-switch change marks the steps whose state, with every state
/// since the last drain, closes a dependency cycle: the operator lets
/// those packets drain first, and says so; every other step's state is
/// acyclic together with those before it (#52 item 11).
#[test]
fn switch_by_switch_schedules_say_when_to_drain() {
    let dir = tmp("drain");
    let (t, g, c) = (dir.join("t.json"), dir.join("g.json"), dir.join("c.json"));
    for (algo, out) in [("greedy", &g), ("clos", &c)] {
        let o = tagger(&[
            "run",
            "fattree:k=4",
            "--elp",
            "kbounce:1",
            "--algo",
            algo,
            "--topology-out",
            s(&t),
            "--rules-out",
            s(out),
        ]);
        assert!(o.status.success(), "{}", text(&o));
    }
    let o = tagger(&[
        "update",
        "--topology",
        s(&t),
        "--rules",
        s(&g),
        "--to",
        s(&t),
        "--elp",
        "kbounce:1",
        "--new-rules",
        s(&c),
        "--json",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["schedule"], "switch-by-switch", "{v}");
    let rows = v["step_rows"].as_array().unwrap();
    assert!(rows.iter().all(|r| r["drain"].is_boolean()));
    assert!(rows.iter().any(|r| r["drain"] == true), "{v}");
    let o = tagger(&[
        "update",
        "--topology",
        s(&t),
        "--rules",
        s(&g),
        "--to",
        s(&t),
        "--elp",
        "kbounce:1",
        "--new-rules",
        s(&c),
    ]);
    assert!(text(&o).contains("DRAIN the switch first"), "{}", text(&o));
    assert!(text(&o).contains("marked DRAIN"), "{}", text(&o));
}

/// The old and the new ELP are given apart: moving a fabric from
/// `shortest` to `kbounce:1` plans the new ELP (not the old one again),
/// keeps the old ELP lossless until the routing moves, and the new one
/// after (#52 item 12); the churn says how a changed key counts (#52 item
/// 13).
#[test]
fn the_elp_changes_with_new_elp() {
    let dir = tmp("newelp");
    let (t, r) = (dir.join("t.json"), dir.join("r.json"));
    let o = tagger(&[
        "run",
        "fattree:k=4",
        "--elp",
        "shortest",
        "--topology-out",
        s(&t),
        "--rules-out",
        s(&r),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let o = tagger(&[
        "update",
        "--topology",
        s(&t),
        "--rules",
        s(&r),
        "--to",
        s(&t),
        "--elp",
        "shortest",
        "--new-elp",
        "kbounce:1",
        "--json",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["elp"], "shortest -> kbounce:1");
    assert_eq!(v["verified"], true, "{v}");
    assert!(v["priorities"].as_u64().unwrap() >= 2, "{v}");
    assert!(v["churn_entries"].as_u64().unwrap() > 0);
    let rows = v["step_rows"].as_array().unwrap();
    assert_eq!(rows.last().unwrap()["new_elps_lossless"], true, "{v}");
    assert_eq!(rows[0]["old_elps_lossless"], true, "{v}");
    let (a, d, c) = (
        v["entries_added"].as_u64().unwrap(),
        v["entries_removed"].as_u64().unwrap(),
        v["entries_changed"].as_u64().unwrap(),
    );
    assert_eq!(v["churn_entries"].as_u64().unwrap(), a + d + c);
    assert_eq!(
        v["entry_writes_delete_add"].as_u64().unwrap(),
        a + d + 2 * c
    );
    // With --elp alone the new ELP is the old one: kbounce:1 stays unplanned.
    let o = tagger(&[
        "update",
        "--topology",
        s(&t),
        "--rules",
        s(&r),
        "--to",
        s(&t),
        "--elp",
        "shortest",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["churn_entries"], 0, "{v}");
}

/// What an operator does with `--export-steps`: install the plan's own
/// export, then copy each step's files over the switches' (deleting the
/// cleared ones). After every step, the directory every switch runs is read
/// back by `tagger verify --exported` (every packet, any routing) and
/// passes, for a two-phase growth and for a switch-by-switch change with
/// drains (#52: the decoded-switch-function check on every update step).
/// Unless the directory drains first, what ran before it and what runs
/// after it, read back, must be acyclic together too. The Jellyfish 40
/// changes are ones whose classes once failed the export: a drain window
/// led by the drained state, a two-phase union over the traffic classes,
/// and steps whose classes only a drain separates.
#[test]
fn every_running_configuration_of_an_update_reads_back() {
    let dir = tmp("running");
    for (topology, algo, to, elp, new_algo) in [
        (
            "jellyfish:n=30,ports=10,r=4,seed=2",
            "search",
            "grow:switches=2,seed=1",
            "shortest",
            None,
        ),
        ("fattree:k=4", "greedy", "", "kbounce:1", Some("clos")),
        (
            "jellyfish:n=40,ports=8,r=4,seed=2",
            "search",
            "drain:links=2",
            "shortest",
            None,
        ),
        (
            "jellyfish:n=40,ports=8,r=4,seed=2",
            "greedy",
            "drain:links=2",
            "shortest",
            None,
        ),
        (
            "jellyfish:n=40,ports=8,r=4,seed=4",
            "search",
            "grow:switches=2",
            "shortest",
            None,
        ),
    ] {
        let (t, r, live, steps, u) = (
            dir.join("t.json"),
            dir.join("r.json"),
            dir.join("live"),
            dir.join("steps"),
            dir.join("u.json"),
        );
        let _ = std::fs::remove_dir_all(&live);
        let _ = std::fs::remove_dir_all(&steps);
        let o = tagger(&[
            "run",
            topology,
            "--elp",
            elp,
            "--algo",
            algo,
            "--topology-out",
            s(&t),
            "--rules-out",
            s(&r),
            "--export",
            &format!("sonic:{}", s(&live)),
            "--require-fit",
            "off",
        ]);
        assert!(o.status.success(), "{}", text(&o));
        let mut args = vec![
            "update".to_string(),
            "--topology".into(),
            s(&t).into(),
            "--rules".into(),
            s(&r).into(),
            "--elp".into(),
            elp.into(),
            "--export-steps".into(),
            format!("sonic:{}", s(&steps)),
            "--require-fit".into(),
            "off".into(),
            "--topology-out".into(),
            s(&u).into(),
        ];
        match new_algo {
            None => args.extend(["--to".into(), to.into()]),
            Some(a) => {
                let c = dir.join("c.json");
                let o = tagger(&[
                    "run",
                    topology,
                    "--elp",
                    elp,
                    "--algo",
                    a,
                    "--rules-out",
                    s(&c),
                ]);
                assert!(o.status.success(), "{}", text(&o));
                args.extend([
                    "--to".into(),
                    s(&t).into(),
                    "--new-rules".into(),
                    s(&c).into(),
                ]);
            }
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = tagger(&args);
        assert!(o.status.success(), "{}", text(&o));
        let read = |p: &Path| -> serde_json::Value {
            serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
        };
        let none = dir.join("no-paths");
        std::fs::write(&none, "").unwrap();
        let listed = read(&steps.join("summary.json"));
        let listed = listed["steps"].as_array().unwrap();
        assert!(!listed.is_empty());
        let (mut drains, mut prepares, mut replayed) = (0, 0, 0);
        let union = steps.join(tagger::update::UNION_FILE);
        let union_topo = tagger_generators::file::read_json_file(&union).unwrap();
        // Before ports are bound (the first directory then), the installed
        // export does not read on the union topology.
        let mut ran = tagger::sonic::read(&union_topo, &live)
            .ok()
            .map(|b| b.rules);
        assert!(ran.is_some() || listed[0]["action"] == "ports");
        for step in listed {
            let sub = steps.join(step["dir"].as_str().unwrap());
            let mut sum = read(&sub.join("summary.json"));
            let mut running = read(&live.join("summary.json"));
            let node = |x: &serde_json::Value| x["node"].as_u64().unwrap();
            let touched: Vec<u64> = step["switches"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_u64().unwrap())
                .collect();
            // A switch the step clears gets its base with nothing
            // lossless: a file like the others, replayed like them.
            for v in step["cleared"].as_array().unwrap() {
                assert!(
                    sub.join(format!("{v}.json")).exists(),
                    "{}: {v}",
                    step["dir"]
                );
            }
            let mut list: Vec<serde_json::Value> = running["switches"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|x| !touched.contains(&node(x)))
                .cloned()
                .collect();
            for x in sum["switches"].as_array().unwrap() {
                let f = format!("{}.json", node(x));
                // The step's patch applies to what the switch runs and
                // makes exactly the step's configuration: replayed through
                // the patches, nothing stale stays.
                if let Ok(text) = std::fs::read_to_string(live.join(&f)) {
                    let mut db: serde_json::Value = serde_json::from_str(&text).unwrap();
                    let base = read(&sub.join(format!("{}.base.json", node(x))));
                    assert_eq!(db, base, "{}: {f}'s base is what it runs", step["dir"]);
                    let patch: json_patch::Patch =
                        serde_json::from_value(read(&sub.join(format!("{}.patch.json", node(x)))))
                            .unwrap();
                    json_patch::patch(&mut db, &patch).unwrap();
                    assert_eq!(db, read(&sub.join(&f)), "{}: {f}", step["dir"]);
                    replayed += 1;
                }
                for g in [
                    f.clone(),
                    format!("{}.patch.json", node(x)),
                    format!("{}.base.json", node(x)),
                ] {
                    std::fs::copy(sub.join(&g), live.join(&g)).unwrap();
                }
                list.push(x.clone());
            }
            list.sort_by_key(node);
            for k in ["tags", "priorities"] {
                let most = sum[k].as_u64().unwrap().max(running[k].as_u64().unwrap());
                sum[k] = most.into();
            }
            sum["switches"] = list.into();
            running = sum;
            std::fs::write(live.join("summary.json"), running.to_string()).unwrap();
            drains += usize::from(step["drain"] == true);
            prepares += usize::from(step["action"] == "prepare");
            let runs = tagger::sonic::read(&union_topo, &live).unwrap().rules;
            if let Some(ran) = ran.as_ref().filter(|_| step["drain"] != true) {
                let mut both = runs.clone();
                both.entries.extend(&ran.entries);
                both.entries.sort_unstable();
                both.entries.dedup();
                let together = tagger::verify::check_used(&union_topo, &both, |_| true);
                assert!(
                    together.is_ok(),
                    "{topology} {to}: before and after {} together: {:?}",
                    step["dir"],
                    together
                );
            }
            ran = Some(runs);
            let o = tagger(&[
                "verify",
                "--topology",
                s(&union),
                "--exported",
                s(&live),
                "--paths",
                s(&none),
                // Exported with --require-fit off: a two-phase step may
                // hold more priorities than the profile's two.
                "--max-priorities",
                "8",
            ]);
            assert!(
                o.status.success(),
                "{topology} after {}: {}",
                step["dir"],
                text(&o)
            );
        }
        if new_algo.is_some() {
            assert!(drains > 0, "the switch-by-switch change drains");
        }
        assert!(replayed > 0, "{topology}: no patch replayed");
        eprintln!(
            "{topology}: {} directories, {prepares} preparations",
            listed.len()
        );
    }
}

/// The summary names the links a change drops and adds by their ends and
/// ports (a random `drain` had said nothing of which link went), in the
/// text and in `--json`.
#[test]
fn updates_name_the_links_they_drop_and_add() {
    let dir = tmp("links");
    let topo = "leafspine:leaves=4,spines=2";
    let j = update(&dir, topo, "drain:links=1,seed=3", "kbounce:1", &[]);
    let dropped = j["links_dropped"].as_array().unwrap();
    assert_eq!(dropped.len(), 1, "{j}");
    let name = dropped[0].as_str().unwrap();
    assert!(
        name.starts_with("switch ") && name.contains(" Ethernet") && name.contains(" -- "),
        "{name}"
    );
    assert_eq!(j["links_added"].as_array().unwrap().len(), 0);
    // The text says the same.
    let o = tagger(&[
        "update",
        "--topology",
        topo,
        "--rules",
        s(&dir.join("old.rules.json")),
        "--to",
        "drain:links=1,seed=3",
        "--elp",
        "kbounce:1",
    ]);
    let out = text(&o);
    assert!(
        out.contains(&format!("links dropped 1 of 8 old links: {name}")),
        "{out}"
    );
    let j = update(&dir, topo, "grow:leaves=1", "kbounce:1", &[]);
    let added: Vec<&str> = j["links_added"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap())
        .collect();
    assert_eq!(added.len(), 2, "the new leaf's two uplinks: {added:?}");
    assert!(
        added.iter().all(|a| a.starts_with("switch 6 ")),
        "{added:?}"
    );
}

/// Where no extension keeps a `search` plan's two priorities, the summary
/// offers the plan near the installed one, and `--near` moves to it switch
/// by switch (here the default does too: the extension does not fit the
/// switches' lossless queues): the rules written are that plan, and they
/// verify on the new topology.
#[test]
fn near_moves_to_the_plan_near_the_installed_one() {
    let dir = tmp("near");
    let topo = "jellyfish:n=200,ports=32,r=12,seed=3";
    let old = dir.join("old.rules.json");
    let o = tagger(&[
        "run",
        topo,
        "--elp",
        "shortest",
        "--algo",
        "search",
        "--max-tcs",
        "none",
        "--rules-out",
        s(&old),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let base = [
        "update",
        "--topology",
        topo,
        "--rules",
        s(&old),
        "--to",
        "grow:switches=2,seed=1",
        "--elp",
        "shortest",
        "--max-tcs",
        "none",
    ];
    let o = tagger(&base);
    assert!(o.status.success(), "{}", text(&o));
    let out = text(&o);
    assert!(out.contains("near          2 priorities, churn "), "{out}");
    // The extension needs 3 lossless queues at some ports; spectrum2 has
    // 2, so the near plan, which fits at less churn than the plan from
    // scratch, is taken without --near too (#70 item 7).
    assert!(out.contains("the switches cannot hold it"), "{out}");
    assert!(out.contains("it is the new plan"), "{out}");
    assert!(
        out.contains("fit           spectrum2: new plan fits"),
        "{out}"
    );
    let (new_rules, new_topo) = (dir.join("new.rules.json"), dir.join("new.topo.json"));
    let mut args = base.to_vec();
    args.extend([
        "--near",
        "--json",
        "--rules-out",
        s(&new_rules),
        "--topology-out",
        s(&new_topo),
    ]);
    let o = tagger(&args);
    assert!(o.status.success(), "{}", text(&o));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["near"]["taken"], true, "{j}");
    assert_eq!(j["priorities"], 2);
    assert_eq!(j["old_priorities"], 2);
    assert_eq!(j["near"]["churn_entries"], j["churn_entries"]);
    assert!(j["near"]["churn_entries"].as_u64() < j["scratch_churn_entries"].as_u64());
    assert_eq!(j["schedule"], "switch-by-switch");
    let o = tagger(&[
        "verify",
        s(&new_topo),
        "--rules",
        s(&new_rules),
        "--elp",
        "shortest",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let rules = RuleSet::read(&new_rules).unwrap();
    assert_eq!(rules.priorities, 2);
    // A near plan and a given plan are two different targets.
    let mut args = base.to_vec();
    args.extend(["--near", "--new-rules", s(&new_rules)]);
    let o = tagger(&args);
    assert!(!o.status.success());
    assert!(text(&o).contains("--near"), "{}", text(&o));
}
