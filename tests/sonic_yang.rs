//! SONiC exports validated with libyang's yanglint against SONiC's own YANG
//! models (scripts/validate-sonic.py), with each value taken by its leaf's
//! type as SONiC's YANG layer takes it: keys, types, patterns, ranges,
//! mandatory fields, `when`/`must` conditions and references.
//!
//! The models are `../shared/sonic-yang` beside the repository where it
//! exists (all of sonic-buildimage's, as CI has them), and the copies in
//! `datasets/sonic-yang` always; a test checks that those copies are
//! byte-identical to the originals. Needs python3 and yanglint (Debian:
//! libyang-tools, which .ci/run installs); without them the tests say so
//! and pass, except under CI=true where they fail, and so does a missing
//! `../shared/sonic-yang` under CI.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod common;
use common::{tagger, text};

/// SONiC's own models, where this checkout has them.
fn shared_models() -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/sonic-yang");
    if p.is_dir() {
        Some(p)
    } else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must have ../shared/sonic-yang (SONiC's models)"
        );
        eprintln!("skipped against SONiC's full model set: ../shared/sonic-yang is absent");
        None
    }
}

/// The copies this repository carries.
fn own_models() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets/sonic-yang")
}

fn validate(dir: &Path, models: &Path) -> Output {
    Command::new("python3")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/scripts/validate-sonic.py"
        ))
        .arg(dir)
        .arg("--yang")
        .arg(models)
        .output()
        .unwrap()
}

/// The models to validate against: SONiC's full set where present (the
/// carried copies are byte-identical to theirs, and the full set adds any
/// constraint other modules place on these tables), else the copies.
fn model_dirs() -> Vec<PathBuf> {
    vec![shared_models().unwrap_or_else(own_models)]
}

fn have_yanglint() -> bool {
    // The script applies each switch's patch with `jsonpatch`, the
    // library SONiC's generic config updater uses.
    let ok = Command::new("yanglint").arg("--version").output().is_ok()
        && Command::new("python3")
            .args(["-c", "import jsonpatch"])
            .output()
            .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must install yanglint (libyang-tools) and python3 with jsonpatch"
        );
        eprintln!(
            "skipped: yanglint, python3 or its jsonpatch is not installed (apt-get install libyang-tools; pip install -r scripts/requirements.txt)"
        );
    }
    ok
}

/// The models this repository carries are SONiC's, unchanged: each is
/// byte-identical to the file of the same name in ../shared/sonic-yang.
#[test]
fn carried_models_are_sonics_own() {
    let Some(shared) = shared_models() else {
        return;
    };
    let mut n = 0;
    for f in std::fs::read_dir(own_models()).unwrap() {
        let f = f.unwrap().path();
        if f.extension().is_none_or(|e| e != "yang") {
            continue;
        }
        let name = f.file_name().unwrap();
        let original = std::fs::read(shared.join(name))
            .unwrap_or_else(|e| panic!("{}: not one of SONiC's models: {e}", name.display()));
        assert_eq!(
            std::fs::read(&f).unwrap(),
            original,
            "{} differs from SONiC's",
            name.display()
        );
        n += 1;
    }
    assert!(n >= 10, "{n} models");
}

/// Several families, algorithms and switch profiles, every plan within a
/// switch's traffic classes: every switch file is valid against SONiC's
/// models, and no export has an ACL table.
#[test]
fn exports_validate_against_sonics_models() {
    if !have_yanglint() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    let cases: [(&str, &str, &str, &str, &[&str]); 8] = [
        ("clos", "fattree:k=8", "kbounce:1", "clos", &[]),
        (
            "clos2",
            "fattree:k=4",
            "kbounce:2",
            "clos",
            &["--switch", "drafts-40g"],
        ),
        (
            "jelly",
            "jellyfish:n=30,ports=8,r=5,seed=2",
            "shortest",
            "greedy",
            &["--require-fit", "off"],
        ),
        (
            "jelly-search",
            "jellyfish:n=40,ports=10,r=6,seed=1",
            "shortest",
            "search",
            &["--switch", "tomahawk"],
        ),
        ("bcube", "bcube:n=3,k=1", "dor", "greedy", &[]),
        (
            "hyperx",
            "hyperx:l=2,s=3,k=2,t=2",
            "dor",
            "search",
            &["--switch", "spectrum1"],
        ),
        (
            "tomahawk5",
            "leafspine:leaves=4,spines=2,hosts=4",
            "kbounce:1",
            "clos",
            &["--switch", "tomahawk5", "--cable-m", "2.5"],
        ),
        (
            "greedy-ft",
            "fattree:k=6",
            "kbounce:2",
            "greedy",
            &["--switch", "drafts-40g"],
        ),
    ];
    for (name, topo, elp, algo, extra) in cases {
        let out = format!("sonic:{}", p(name));
        let mut args = vec!["run", topo, "--elp", elp, "--algo", algo, "--export", &out];
        args.extend_from_slice(extra);
        let o = tagger(&args);
        assert!(o.status.success(), "{name}: {}", text(&o));
        for models in model_dirs() {
            let v = validate(&dir.path().join(name), &models);
            assert!(
                v.status.success(),
                "{name} against {}: {}",
                models.display(),
                text(&v)
            );
        }
        for f in std::fs::read_dir(dir.path().join(name)).unwrap() {
            let s = std::fs::read_to_string(f.unwrap().path()).unwrap();
            assert!(!s.contains("ACL_"), "{name}: an ACL table");
        }
    }

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
        "--elp",
        "kbounce:1",
        "--out",
        &p("named"),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    // The copies alone suffice to load and check an export.
    for models in [own_models()].into_iter().chain(model_dirs()) {
        let v = validate(&dir.path().join("named"), &models);
        assert!(v.status.success(), "{}", text(&v));
    }
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

    // Edits SONiC's validation refuses, named by the field.
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
        ("\"Ethernet0|3-4\"", "\"Ethernet0|8-9\"", "pg_num"),
        ("\"mtu\": \"9100\"", "\"mtu\": \"9300\"", "mtu"),
        (
            "\"pool\": \"ingress_lossless_pool\"",
            "\"pool\": \"no_such_pool\"",
            "pool",
        ),
        ("\"dynamic_th\": \"7\"", "\"dynamic_th\": \"abc\"", "int32"),
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
        // Each switch's patch follows its edited file (what is judged is
        // the configuration, not a stale patch).
        for f in std::fs::read_dir(&m).unwrap() {
            let name = f.unwrap().file_name().to_string_lossy().into_owned();
            let Some(v) = name.strip_suffix(".base.json") else {
                continue;
            };
            let load = |n: String| -> serde_json::Value {
                serde_json::from_str(&std::fs::read_to_string(m.join(n)).unwrap()).unwrap()
            };
            let patch = json_patch::diff(&load(name.clone()), &load(format!("{v}.json")));
            std::fs::write(
                m.join(format!("{v}.patch.json")),
                serde_json::to_string(&patch).unwrap(),
            )
            .unwrap();
        }
        let v = validate(&m, &own_models());
        assert_eq!(v.status.code(), Some(1), "{to}: {}", text(&v));
        assert!(text(&v).contains(want), "{to}: {}", text(&v));
    }
}
