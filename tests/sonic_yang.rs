//! SONiC exports validated with libyang's yanglint against the YANG models
//! in datasets/sonic-yang (scripts/validate-sonic.py): keys, patterns,
//! ranges, mandatory fields and references. Needs python3 and yanglint
//! (Debian: libyang-tools, which .ci/run installs); without them the test
//! says so and passes, except under CI=true where it fails.

use std::path::Path;
use std::process::{Command, Output};

mod common;
use common::{tagger, text};

fn validate(dir: &Path) -> Output {
    Command::new("python3")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/scripts/validate-sonic.py"
        ))
        .arg(dir)
        .output()
        .unwrap()
}

fn have_yanglint() -> bool {
    let ok = Command::new("yanglint").arg("--version").output().is_ok()
        && Command::new("python3").arg("--version").output().is_ok();
    if !ok {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must install yanglint (libyang-tools) and python3"
        );
        eprintln!("skipped: yanglint or python3 is not installed (apt-get install libyang-tools)");
    }
    ok
}

/// Clos, greedy with ACL fallback (Jellyfish), BCube and a topology file
/// with its own port names: every switch file is valid; edits that break a
/// reference, a pattern or a range are not, and the message names the
/// field.
#[test]
fn exports_validate_against_the_yang_models() {
    if !have_yanglint() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    for (name, topo, elp, algo) in [
        ("clos", "fattree:k=8", "kbounce:1", "clos"),
        (
            "jelly",
            "jellyfish:n=30,ports=8,r=5,seed=2",
            "shortest",
            "greedy",
        ),
        ("bcube", "bcube:n=3,k=1", "dor", "greedy"),
    ] {
        let o = tagger(&[
            "run",
            topo,
            "--elp",
            elp,
            "--algo",
            algo,
            "--export",
            &format!("sonic:{}", p(name)),
        ]);
        assert!(o.status.success(), "{}", text(&o));
        let v = validate(&dir.path().join(name));
        assert!(v.status.success(), "{name}: {}", text(&v));
    }
    // The Jellyfish plan needs ACL rules on some switches, which validate too.
    let jelly: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("jelly/summary.json")).unwrap(),
    )
    .unwrap();
    assert!(jelly["sonic_switches_over_tcs"].as_u64().unwrap() > 0);

    // Port names from a topology file.
    let t = r#"{"format": "tagger-topology/1", "nodes": [
 {"id": 0, "kind": "switch", "level": 0, "hosts": 2, "port_names": ["Ethernet48", "Ethernet52", "Ethernet0", "Ethernet4"]},
 {"id": 1, "kind": "switch", "level": 0, "hosts": 2, "port_names": ["Ethernet48", "Ethernet52", "Ethernet0", "Ethernet4"]},
 {"id": 2, "kind": "switch", "level": 1, "hosts": 0, "port_names": ["Ethernet0", "Ethernet8"]},
 {"id": 3, "kind": "switch", "level": 1, "hosts": 0, "port_names": ["Ethernet0", "Ethernet8"]}],
 "links": [[0, 2], [0, 3], [1, 2], [1, 3]]}"#;
    std::fs::write(p("t.json"), t).unwrap();
    let o = tagger(&[
        "run",
        &format!("file:{}", p("t.json")),
        "--elp",
        "kbounce:1",
        "--algo",
        "greedy",
        "--rules-out",
        &p("r.json"),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let o = tagger(&[
        "export",
        "--topology",
        &p("t.json"),
        "--rules",
        &p("r.json"),
        "--out",
        &p("named"),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let v = validate(&dir.path().join("named"));
    assert!(v.status.success(), "{}", text(&v));
    let sw0 = std::fs::read_to_string(dir.path().join("named/0.json")).unwrap();
    assert!(sw0.contains("\"Ethernet48|3\""), "{sw0}");
    let o = tagger(&[
        "verify",
        "--topology",
        &p("t.json"),
        "--exported",
        &p("named"),
    ]);
    assert!(o.status.success(), "{}", text(&o));

    // Edits SONiC's validation refuses.
    for (from, to, want) in [
        (
            "\"tc_to_pg_map\": \"TAGGER_TC_TO_PG_0\"",
            "\"tc_to_pg_map\": \"NOPE\"",
            "tc_to_pg_map",
        ),
        (
            "\"pfc_enable\": \"3,4\"",
            "\"pfc_enable\": \"3,9\"",
            "pfc_enable",
        ),
        ("\"Ethernet0|3\"", "\"Ethernet0|8\"", "pg_num"),
        ("\"mtu\": \"9100\"", "\"mtu\": \"9300\"", "mtu"),
        (
            "\"pool\": \"ingress_lossless_pool\"",
            "\"pool\": \"no_such_pool\"",
            "pool",
        ),
    ] {
        let m = dir.path().join("mutated");
        let _ = std::fs::remove_dir_all(&m);
        std::fs::create_dir(&m).unwrap();
        let mut changed = false;
        for f in std::fs::read_dir(dir.path().join("clos")).unwrap() {
            let f = f.unwrap();
            let s = std::fs::read_to_string(f.path()).unwrap();
            changed |= s.contains(from);
            std::fs::write(m.join(f.file_name()), s.replace(from, to)).unwrap();
        }
        assert!(changed, "{from} is not in the export");
        let v = validate(&m);
        assert_eq!(v.status.code(), Some(1), "{to}: {}", text(&v));
        assert!(text(&v).contains(want), "{to}: {}", text(&v));
    }
}
