use super::*;

/// Numbers past what the headroom arithmetic holds are errors naming the
/// field, never a wrapped figure (a 1e17 m cable once gave "all switches
/// fit" and an xoff of 2^64-1): on the command line, in a topology file,
/// in a sweep spec and in a switch profile.
#[test]
fn out_of_range_numbers_are_errors() {
    let d = tempfile::tempdir().unwrap();
    let (t, _) = plan_files(d.path());
    let run = |extra: &[&str]| {
        let mut a = vec!["run", "fattree:k=4", "--elp", "kbounce:1", "--algo", "clos"];
        a.extend_from_slice(extra);
        tagger(&a)
    };
    for (extra, field) in [
        (&["--cable-m", "1e17"][..], "cable_m"),
        (&["--speed-gbps", "1e9"], "port_speed_gbps"),
    ] {
        let o = run(extra);
        assert_eq!(o.status.code(), Some(1), "{}", text(&o));
        assert!(text(&o).contains(field), "{}", text(&o));
        assert!(text(&o).contains("out of range"), "{}", text(&o));
    }
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&t).unwrap()).unwrap();
    let ends = v["links"][0].clone();
    v["links"][0] = serde_json::json!({"ends": ends, "cable_m": 1e17});
    let f = d.path().join("far.json");
    std::fs::write(&f, v.to_string()).unwrap();
    let o = tagger(&[
        "run",
        &format!("file:{}", f.display()),
        "--elp",
        "kbounce:1",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("links[0].cable_m"), "{}", text(&o));
    let spec = d.path().join("far.toml");
    std::fs::write(
        &spec,
        "name = \"far\"\ncable_m = [100, 1e17]\n[[group]]\nname = \"g\"\ntopology = \"fattree:k=4\"\nelp = \"kbounce:1\"\nalgo = \"clos\"\n",
    )
    .unwrap();
    let out = d.path().join("far-out");
    let o = tagger(&[
        "sweep",
        spec.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("cable_m"), "{}", text(&o));
    assert!(!out.join("runs.parquet").exists());
    // A profile file with a size past 2^40 bytes.
    let some = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/datasets/switches/example.toml"
    ));
    let text0 = std::fs::read_to_string(some).unwrap();
    let huge = text0
        .lines()
        .map(|l| {
            if l.trim_start().starts_with("port_mtu") {
                "port_mtu = 9000000000000000000".to_string()
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    assert_ne!(huge, text0, "{} has a port_mtu line", some.display());
    let pf = d.path().join("huge.toml");
    std::fs::write(&pf, huge).unwrap();
    let o = run(&["--switch", &format!("file:{}", pf.display())]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("port_mtu"), "{}", text(&o));
}

/// Without `--memory-budget`, a run gets half the machine's memory, so an
/// instance far too large is refused by its estimate at once instead of
/// ending in an aborted allocation; `none` lifts the default.
#[test]
fn the_default_budget_refuses_what_the_machine_cannot_hold() {
    let o = tagger(&[
        "run",
        "jellyfish:n=1000000,ports=64,r=12",
        "--elp",
        "shortest",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains("memory budget exceeded in elp"),
        "{}",
        text(&o)
    );
    let o = tagger(&[
        "run",
        "fattree:k=4",
        "--elp",
        "kbounce:1",
        "--memory-budget",
        "none",
        "--json",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v["memory_budget_bytes"].is_null(), "{v}");
    let o = tagger(&["run", "fattree:k=4", "--elp", "kbounce:1", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v["memory_budget_bytes"].as_u64().unwrap() > 0, "{v}");
    // The export is charged too: a chain whose first switch has 2^32 - 1
    // host ports plans in no time, and its export (16 TiB) is refused
    // before it allocates, by `run --export` and by `export`.
    let d = tempfile::tempdir().unwrap();
    let p = |n: &str| d.path().join(n).to_str().unwrap().to_string();
    let chain = p("chain.json");
    std::fs::write(
        &chain,
        r#"{"format":"tagger-topology/1","name":"chain","nodes":[{"id":0,"kind":"switch","hosts":4294967295},{"id":1,"kind":"switch","hosts":1},{"id":2,"kind":"switch","hosts":1}],"links":[[0,1],[1,2]]}"#,
    )
    .unwrap();
    let (t, r, ex) = (p("t.json"), p("r.json"), p("ex"));
    let file = format!("file:{chain}");
    let o = bounded(
        &[
            "run",
            &file,
            "--elp",
            "shortest",
            "--export",
            &format!("sonic:{ex}"),
        ],
        d.path(),
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains("memory budget exceeded in export"),
        "{}",
        text(&o)
    );
    let o = tagger(&[
        "run",
        &file,
        "--elp",
        "shortest",
        "--topology-out",
        &t,
        "--rules-out",
        &r,
    ]);
    assert!(o.status.success(), "{}", text(&o));
    for format in ["sonic", "json"] {
        let o = bounded(
            &[
                "export",
                "--topology",
                &t,
                "--rules",
                &r,
                "--format",
                format,
                "--out",
                &ex,
            ],
            d.path(),
        );
        assert_eq!(o.status.code(), Some(1), "{format}: {}", text(&o));
        assert!(
            text(&o).contains("memory budget exceeded in export"),
            "{}",
            text(&o)
        );
    }
    assert!(!Path::new(&ex).exists());
}

/// Messages: numbers past 64 bits or the time limit say "out of range", a
/// stopped count says "more than" its limit, and an error quoting a huge
/// value stays a bounded excerpt with control characters escaped.
#[test]
fn messages_name_ranges_and_stay_bounded() {
    let d = tempfile::tempdir().unwrap();
    for (args, want) in [
        (
            vec![
                "run",
                "jellyfish:n=20,ports=6,r=4,seed=18446744073709551616",
                "--elp",
                "shortest",
            ],
            "seed = 18446744073709551616: out of range",
        ),
        (
            vec![
                "run",
                "fattree:k=4",
                "--elp",
                "kbounce:1",
                "--algo",
                "search:budget=1e30",
            ],
            "budget = 1e30 is out of range",
        ),
        (
            vec![
                "run",
                "fattree:k=4",
                "--elp",
                "kbounce:1",
                "--algo",
                "search",
                "--time-limit",
                "1e300",
            ],
            "out of range (at most 10000000 seconds)",
        ),
        (
            vec![
                "elp",
                "fattree:k=4",
                "--elp",
                "kbounce:1",
                "--paths-out",
                "-",
                "--max-paths",
                "1000",
            ],
            "more than 1000 ELP paths",
        ),
    ] {
        let o = tagger(&args);
        assert!(!o.status.success(), "{args:?}");
        assert!(text(&o).contains(want), "{args:?}: {}", text(&o));
    }
    let spec = d.path().join("long.toml");
    std::fs::write(
        &spec,
        format!(
            "name = \"x\"\n[[group]]\nname = \"g\"\ntopology = \"fattree:k=4\"\nelp = \"\\u001b[31m{}\"\nalgo = \"clos\"\n",
            "y".repeat(1_000_000)
        ),
    )
    .unwrap();
    let out = d.path().join("o");
    let o = tagger(&[
        "sweep",
        spec.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.len() < 4_000, "{} bytes", err.len());
    assert!(err.contains("more characters"), "{err}");
    assert!(!err.contains('\u{1b}'), "{err}");
}
