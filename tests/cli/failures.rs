use super::*;

/// `tagger failures` end to end: the hand-counted fat-tree case through a
/// failure file, both routing models, JSON and Parquet; bad input refused.
#[test]
fn failures_what_if_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("down.txt");
    std::fs::write(&f, "# ToR 0 loses its link to aggregation switch 8\n0 8\n").unwrap();
    let out = dir.path().join("trials.parquet");
    let o = tagger(&[
        "failures",
        "fattree:k=4",
        "--elp",
        "kbounce:1",
        "--algo",
        "clos",
        "--fail",
        &format!("file:{}", f.display()),
        "--routing",
        "converged,local",
        "--json",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["plan"]["priorities"], 2);
    let reps = v["failures"].as_array().unwrap();
    assert_eq!(reps.len(), 2);
    let conv = &reps[0]["trials"][0];
    let local = &reps[1]["trials"][0];
    assert_eq!(conv["routing"], "converged");
    assert_eq!(conv["paths"], 182);
    assert_eq!(conv["lossless_paths_fraction"], 1.0);
    assert_eq!(local["paths"], 196);
    assert_eq!(local["failed"], "0-8");
    let frac = local["lossless_paths_fraction"].as_f64().unwrap();
    assert!((frac - 194.0 / 196.0).abs() < 1e-12, "{frac}");
    assert_eq!(reps[1]["figures"]["verified"], true);
    let batches = tagger::output::parquet::read_batches(&out).unwrap();
    assert_eq!(batches.iter().map(|b| b.num_rows()).sum::<usize>(), 2);
    let js = tagger(&["schema", "--format", "json"]);
    let js: serde_json::Value = serde_json::from_slice(&js.stdout).unwrap();
    let want: Vec<&str> = js["failures.parquet"].as_array().unwrap()[1..]
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    let got: Vec<String> = batches[0]
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    assert_eq!(got, want);
    // The text table.
    let o = tagger(&[
        "failures",
        "fattree:k=4",
        "--elp",
        "shortest",
        "--fail",
        "links:2,trials=4",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("converged"), "{}", text(&o));
    for (args, code, msg) in [
        (
            vec!["--fail", "links:x"],
            2,
            "failures 'links:x': count = x",
        ),
        (
            vec!["--routing", "sideways"],
            2,
            "unknown routing 'sideways'",
        ),
        (vec!["--fail", "links:999"], 1, "999 links cannot fail"),
    ] {
        let mut a = vec!["failures", "fattree:k=4", "--elp", "shortest"];
        a.extend(args);
        let o = tagger(&a);
        assert_eq!(o.status.code(), Some(code), "{a:?}: {}", text(&o));
        assert!(text(&o).contains(msg), "{a:?}: {}", text(&o));
    }
    let o = tagger(&["failures", "hyperx:l=2,s=3,t=1", "--elp", "dor"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o).contains("routes traffic on shortest paths"),
        "{}",
        text(&o)
    );
}

/// `failures --rules` judges the rules the operator installed instead of
/// planning: the same trials as the run that wrote them, the file named;
/// rules that do not verify on the topology are refused.
#[test]
fn failures_judge_the_installed_rules() {
    let dir = tempfile::tempdir().unwrap();
    let (t, r) = common::plan_files(dir.path());
    let (ts, rs) = (t.as_str(), r.as_str());
    let what_if = |extra: &[&str]| {
        let mut a = vec![
            "failures",
            ts,
            "--elp",
            "kbounce:1",
            "--fail",
            "links:2,trials=4",
            "--json",
        ];
        a.extend(extra);
        let o = tagger(&a);
        assert!(o.status.success(), "{a:?}: {}", text(&o));
        serde_json::from_slice::<serde_json::Value>(&o.stdout).unwrap()
    };
    let planned = what_if(&["--algo", "clos"]);
    let given = what_if(&["--algo", "clos", "--rules", rs]);
    assert_eq!(given["plan"]["rules"], rs);
    assert_eq!(given["plan"]["algo"], "installed: clos");
    assert_eq!(given["plan"]["priorities"], 2);
    assert_eq!(given["failures"], planned["failures"]);
    // Greedy's plan judged as installed, while --algo replans with clos:
    // the trials' lossless shares are the installed rules'.
    let g = dir.path().join("g.json");
    let o = tagger(&[
        "run",
        ts,
        "--elp",
        "kbounce:1",
        "--algo",
        "greedy",
        "--rules-out",
        g.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let greedy = what_if(&["--algo", "clos", "--rules", g.to_str().unwrap()]);
    assert_eq!(greedy["plan"]["algo"], "installed: greedy");
    // Rules shared by two application classes: the what-if replays one
    // class's hosts, so it says so instead of judging half of them.
    let c2 = dir.path().join("c2.json");
    let c2s = c2.to_str().unwrap();
    let o = tagger(&[
        "run",
        ts,
        "--elp",
        "kbounce:1",
        "--algo",
        "clos",
        "--classes",
        "2",
        "--rules-out",
        c2s,
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let o = tagger(&["failures", ts, "--elp", "kbounce:1", "--rules", c2s]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("2 application classes"), "{}", text(&o));
    let o = tagger(&[
        "failures",
        "fattree:k=8",
        "--elp",
        "kbounce:1",
        "--rules",
        rs,
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains("the installed rules")
            && text(&o).contains("the topology is 'fattree:k=8'"),
        "{}",
        text(&o)
    );
}
