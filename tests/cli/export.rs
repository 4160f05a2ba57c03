use super::*;

/// `run --export sonic:DIR`, `export` and `verify --sonic`: the exported
/// directory verifies on its own, and a broken reference is named.
#[test]
fn sonic_export_installs_and_verifies() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    let o = tagger(&[
        "run",
        "jellyfish:n=30,ports=8,r=5,seed=2",
        "--elp",
        "shortest",
        "--algo",
        "search",
        "--topology-out",
        &p("t.json"),
        "--rules-out",
        &p("r.json"),
        "--export",
        &format!("sonic:{}", p("sonic")),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("exported 30 switches"), "{}", text(&o));
    let o = tagger(&["verify", "--topology", &p("t.json"), "--sonic", &p("sonic")]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).starts_with("verified: deadlock-free"),
        "{}",
        text(&o)
    );
    let o = tagger(&[
        "export",
        "--topology",
        &p("t.json"),
        "--rules",
        &p("r.json"),
        "--elp",
        "shortest",
        "--out",
        &p("again"),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    for f in std::fs::read_dir(dir.path().join("sonic")).unwrap() {
        let f = f.unwrap();
        assert_eq!(
            std::fs::read(f.path()).unwrap(),
            std::fs::read(dir.path().join("again").join(f.file_name())).unwrap()
        );
    }
    let s = std::fs::read_to_string(dir.path().join("sonic/0.json")).unwrap();
    std::fs::write(
        dir.path().join("sonic/0.json"),
        s.replace(
            "\"tc_to_pg_map\": \"TAGGER_TC_TO_PG_0\"",
            "\"tc_to_pg_map\": \"NOPE\"",
        ),
    )
    .unwrap();
    // The configuration alone edited: the switch would run what its patch
    // makes of its base, not this.
    let o = tagger(&["verify", "--topology", &p("t.json"), "--sonic", &p("sonic")]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o).contains("is not what 0.patch.json makes of 0.base.json"),
        "{}",
        text(&o)
    );
    let patch = std::fs::read_to_string(dir.path().join("sonic/0.patch.json")).unwrap();
    std::fs::write(
        dir.path().join("sonic/0.patch.json"),
        patch.replace("\"value\": \"TAGGER_TC_TO_PG_0\"", "\"value\": \"NOPE\""),
    )
    .unwrap();
    let o = tagger(&["verify", "--topology", &p("t.json"), "--sonic", &p("sonic")]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o).contains("TC_TO_PRIORITY_GROUP_MAP|NOPE is referenced but not defined"),
        "{}",
        text(&o)
    );
    let o = tagger(&[
        "run",
        "fattree:k=4",
        "--elp",
        "shortest",
        "--export",
        "cisco:x",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o).contains("invalid value 'cisco:x' for '--export <EXPORT>'")
            && text(&o).contains("expected sonic:DIR"),
        "{}",
        text(&o)
    );
}

/// `export --format json` and its read-back, a configured DSCP and queue
/// mapping, buffers sized for the switch and cable given, and bad mapping
/// values refused before any work (clap's exit 2 for a list that is not
/// numbers, exit 1 naming the index for a value out of range).
#[test]
fn export_formats_mappings_and_switch_models() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    let o = tagger(&[
        "run",
        "fattree:k=4",
        "--elp",
        "kbounce:1",
        "--algo",
        "clos",
        "--topology-out",
        &p("t.json"),
        "--rules-out",
        &p("r.json"),
        "--export",
        &format!("json:{}", p("table")),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("(neutral table)"), "{}", text(&o));
    let o = tagger(&[
        "verify",
        "--topology",
        &p("t.json"),
        "--exported",
        &p("table"),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let o = tagger(&[
        "export",
        "--topology",
        &p("t.json"),
        "--rules",
        &p("r.json"),
        "--out",
        &p("s"),
        "--dscp",
        "26,46",
        "--queues",
        "4,3",
        "--switch",
        "tomahawk",
        "--cable-m",
        "40",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("buffers for tomahawk"), "{}", text(&o));
    let sw: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("s/0.json")).unwrap())
            .unwrap();
    assert!(
        sw["BUFFER_PROFILE"]
            .as_object()
            .unwrap()
            .keys()
            .any(|k| k == "pg_lossless_100000_40m_profile"),
        "{sw}"
    );
    let o = tagger(&["verify", "--topology", &p("t.json"), "--exported", &p("s")]);
    assert!(o.status.success(), "{}", text(&o));
    let o = tagger(&[
        "export",
        "--topology",
        &p("t.json"),
        "--rules",
        &p("r.json"),
        "--out",
        &p("x"),
        "--dscp",
        "3,x",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("'x' is not a number"), "{}", text(&o));
    let o = tagger(&[
        "run",
        "fattree:k=4",
        "--elp",
        "shortest",
        "--export",
        &format!("sonic:{}", p("y")),
        "--queues",
        "3,8",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o).contains("queues[1] = 8: must be in 1..=7"),
        "{}",
        text(&o)
    );
    assert!(!dir.path().join("y").exists());
}

/// `verify --exported` replays the ELP the export records without being
/// told (and `--elp` replaces it); its priority limit is the recorded
/// profile's lossless queues, and a switch written with `--require-fit off`
/// is named as not fitting (#52 items 8 and 9).
#[test]
fn verify_exported_replays_the_recorded_elp_and_takes_the_profiles_limit() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    let o = tagger(&[
        "run",
        "fattree:k=4",
        "--elp",
        "kbounce:1",
        "--algo",
        "clos",
        "--topology-out",
        &p("t.json"),
        "--export",
        &format!("sonic:{}", p("e")),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let o = tagger(&["verify", "--topology", &p("t.json"), "--exported", &p("e")]);
    assert!(o.status.success(), "{}", text(&o));
    let replayed = |o: &std::process::Output| -> u64 {
        let t = text(o);
        let at = t.find(" ELP transitions replayed").expect("a replay count");
        t[..at]
            .rsplit(|c: char| !c.is_ascii_digit())
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    let kb1 = replayed(&o);
    assert!(kb1 > 0, "{}", text(&o));
    let o = tagger(&[
        "verify",
        "--topology",
        &p("t.json"),
        "--exported",
        &p("e"),
        "--elp",
        "shortest",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(replayed(&o) < kb1, "{}", text(&o));
    // Three priorities on a profile with two lossless queues.
    let o = tagger(&[
        "run",
        "fattree:k=4",
        "--elp",
        "kbounce:2",
        "--algo",
        "clos",
        "--export",
        &format!("sonic:{}", p("f")),
        "--require-fit",
        "off",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let o = tagger(&["verify", "--topology", &p("t.json"), "--exported", &p("f")]);
    assert!(!o.status.success(), "{}", text(&o));
    let t = text(&o);
    assert!(
        t.contains("does not fit (exported with --require-fit off)"),
        "{t}"
    );
    assert!(t.contains("3 lossless priorities"), "{t}");
    let o = tagger(&[
        "verify",
        "--topology",
        &p("t.json"),
        "--exported",
        &p("f"),
        "--max-priorities",
        "8",
    ]);
    assert!(o.status.success(), "{}", text(&o));
}
