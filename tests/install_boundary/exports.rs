use super::*;

/// The rules file at `r` rewritten by `edit` into `out`.
fn edited(r: &str, out: &Path, edit: impl FnOnce(&mut serde_json::Value)) -> String {
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(r).unwrap()).unwrap();
    edit(&mut v);
    std::fs::write(out, v.to_string()).unwrap();
    out.to_str().unwrap().to_string()
}

/// `tagger export` verifies first: a rule set `verify` refuses (a priority
/// folded into another, an entry dropped, another topology's rules, more
/// priorities than the queues) is not exported and nothing is written.
#[test]
fn export_refuses_what_verify_refuses() {
    let d = tempfile::tempdir().unwrap();
    let (t, r) = plan_files(d.path());
    let fold = |v: &mut serde_json::Value| {
        for e in v["entries"].as_array_mut().unwrap() {
            for k in ["priority", "next_priority", "tag", "next_tag"] {
                if e[k] == 2 {
                    e[k] = 1.into();
                }
            }
        }
        v["priorities"] = 1.into();
    };
    let folded = edited(&r, &d.path().join("folded.json"), fold);
    let dropped = edited(&r, &d.path().join("dropped.json"), |v| {
        v["entries"].as_array_mut().unwrap().remove(7);
    });
    let other = edited(&r, &d.path().join("other.json"), |v| {
        v["topology"] = "fattree:k=6".into();
    });
    let t6 = d.path().join("t6.json");
    let r6 = d.path().join("r6.json");
    let o = tagger(&[
        "run",
        "fattree:k=6",
        "--elp",
        "kbounce:2",
        "--algo",
        "clos",
        "--topology-out",
        t6.to_str().unwrap(),
        "--rules-out",
        r6.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let elp = d.path().join("elp.paths");
    for (topo, rules, why) in [
        (t.as_str(), folded.as_str(), "cycle"),
        (t.as_str(), dropped.as_str(), "[replay]"),
        (t.as_str(), other.as_str(), "topology"),
    ] {
        for format in ["sonic", "json"] {
            let out = d.path().join(format!("ex-{format}"));
            let o = tagger(&[
                "export",
                "--topology",
                topo,
                "--rules",
                rules,
                "--out",
                out.to_str().unwrap(),
                "--format",
                format,
                "--paths",
                elp.to_str().unwrap(),
            ]);
            assert_eq!(o.status.code(), Some(1), "{rules}: {}", text(&o));
            assert!(text(&o).contains(why), "{rules}: {}", text(&o));
            assert!(text(&o).contains("nothing written"), "{}", text(&o));
            assert!(!out.exists(), "{rules}: {format} export written");
        }
    }
    // Three priorities against two queues: refused by the same limit as
    // verify's; allowed when the queues are raised.
    let out = d.path().join("ex-q");
    let args = |extra: &[&str]| {
        let mut a = vec![
            "export",
            "--topology",
            t6.to_str().unwrap(),
            "--rules",
            r6.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--max-priorities",
        ];
        a.extend_from_slice(extra);
        tagger(&a)
    };
    let o = args(&["2"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("[priorities]"), "{}", text(&o));
    assert!(!out.exists());
    // Raised, the switch model's two lossless queues still refuse it, unless
    // the export is told to write switches that do not fit.
    let o = args(&["3"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("do not fit spectrum2"), "{}", text(&o));
    let o = args(&["3", "--require-fit", "off"]);
    assert!(o.status.success(), "{}", text(&o));
    // A path the plan cannot carry losslessly: the path file's check.
    let paths = d.path().join("bad.paths");
    std::fs::write(&paths, "0 4 0 4 0\n").unwrap();
    let out2 = d.path().join("ex-p");
    let o = tagger(&[
        "export",
        "--topology",
        &t,
        "--rules",
        &r,
        "--out",
        out2.to_str().unwrap(),
        "--paths",
        paths.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(!out2.exists());
}

/// An update's steps never replace an export (the configuration the
/// switches run, which every step is applied to), and an export never
/// replaces an update's steps: each kind of output replaces only an
/// earlier one of its own (#70 item 10).
#[test]
fn steps_and_exports_never_replace_each_other() {
    let d = tempfile::tempdir().unwrap();
    let (t, r) = plan_files(d.path());
    let (installed, steps) = (d.path().join("installed"), d.path().join("steps"));
    let o = tagger(&[
        "export",
        "--topology",
        &t,
        "--rules",
        &r,
        "--out",
        installed.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let before = std::fs::read_dir(&installed).unwrap().count();
    let update = |extra: &[&str]| {
        let mut a = vec![
            "update",
            "--topology",
            &t,
            "--rules",
            &r,
            "--to",
            "drain:links=1",
            "--elp",
            "kbounce:1",
        ];
        a.extend(extra);
        tagger(&a)
    };
    let into_export = format!("sonic:{}", installed.display());
    for extra in [
        vec!["--steps-out", installed.to_str().unwrap()],
        vec!["--export-steps", into_export.as_str()],
    ] {
        let o = update(&extra);
        assert_eq!(o.status.code(), Some(1), "{}", text(&o));
        assert!(text(&o).contains("holds an export"), "{}", text(&o));
        assert_eq!(std::fs::read_dir(&installed).unwrap().count(), before);
    }
    // Steps replace earlier steps; an export does not.
    let o = update(&["--steps-out", steps.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    let o = update(&["--steps-out", steps.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    let o = tagger(&[
        "export",
        "--topology",
        &t,
        "--rules",
        &r,
        "--out",
        steps.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("holds an update's steps"), "{}", text(&o));
}

/// An export replaces its directory whole (no file of an earlier, larger
/// export stays), and refuses a directory that holds anything else.
#[test]
fn exports_replace_their_directory_and_nothing_else() {
    let d = tempfile::tempdir().unwrap();
    let (t, r) = plan_files(d.path());
    let ex = d.path().join("ex");
    for format in ["sonic", "json"] {
        let o = tagger(&[
            "run",
            "fattree:k=6",
            "--elp",
            "kbounce:1",
            "--algo",
            "clos",
            "--export",
            &format!("{format}:{}", ex.display()),
        ]);
        assert!(o.status.success(), "{}", text(&o));
        // 45 switches (a SONiC one: its configuration, base and patch)
        // and summary.json.
        let per = if format == "sonic" { 3 } else { 1 };
        assert_eq!(std::fs::read_dir(&ex).unwrap().count(), 45 * per + 1);
        let o = tagger(&[
            "export",
            "--topology",
            &t,
            "--rules",
            &r,
            "--out",
            ex.to_str().unwrap(),
            "--format",
            format,
        ]);
        assert!(o.status.success(), "{}", text(&o));
        let mut names: Vec<String> = std::fs::read_dir(&ex)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names.len(), 20 * per + 1, "{names:?}");
        assert!(!names.iter().any(|n| n == "44.json"), "{names:?}");
        let o = tagger(&[
            "verify",
            "--topology",
            &t,
            "--exported",
            ex.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", text(&o));
    }
    // Not an export: refused, and left as it was.
    let foreign = d.path().join("foreign");
    std::fs::create_dir(&foreign).unwrap();
    std::fs::write(foreign.join("notes.txt"), "mine").unwrap();
    for args in [
        vec!["export", "--topology", &t, "--rules", &r, "--out"],
        vec![
            "run",
            "fattree:k=4",
            "--elp",
            "kbounce:1",
            "--algo",
            "clos",
            "--export",
        ],
    ] {
        let mut args = args.clone();
        let spec = format!("sonic:{}", foreign.display());
        let target = if args[0] == "run" {
            spec.as_str()
        } else {
            foreign.to_str().unwrap()
        };
        args.push(target);
        let o = tagger(&args);
        assert_eq!(o.status.code(), Some(1), "{}", text(&o));
        assert!(text(&o).contains("not a tagger export"), "{}", text(&o));
        assert_eq!(std::fs::read_dir(&foreign).unwrap().count(), 1);
    }
    // A file where the directory should be.
    let file = d.path().join("a-file");
    std::fs::write(&file, "x").unwrap();
    let o = tagger(&[
        "export",
        "--topology",
        &t,
        "--rules",
        &r,
        "--out",
        file.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "x");
    // Through a symbolic link: the directory it names is replaced, the
    // link stays.
    let (real, link) = (d.path().join("real"), d.path().join("cur"));
    let export = |dir: &Path, format: &str| {
        tagger(&[
            "export",
            "--topology",
            &t,
            "--rules",
            &r,
            "--format",
            format,
            "--out",
            dir.to_str().unwrap(),
        ])
    };
    assert!(export(&real, "sonic").status.success());
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let o = export(&link, "json");
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    let s = std::fs::read_to_string(real.join("summary.json")).unwrap();
    assert!(s.contains("tagger-switch-table"), "{s}");
    // A user's file in an earlier export is not deleted with it.
    std::fs::write(real.join("NOTES.txt"), "mine").unwrap();
    let o = export(&link, "sonic");
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains("NOTES.txt, which no export writes"),
        "{}",
        text(&o)
    );
    assert_eq!(
        std::fs::read_to_string(real.join("NOTES.txt")).unwrap(),
        "mine"
    );
    // A summary.json with only a format field is not an export.
    let fake = d.path().join("fake");
    std::fs::create_dir(&fake).unwrap();
    std::fs::write(fake.join("summary.json"), r#"{"format":"tagger-sonic/2"}"#).unwrap();
    std::fs::write(fake.join("0.json"), "mine").unwrap();
    let o = export(&fake, "sonic");
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("not a tagger export"), "{}", text(&o));
    assert_eq!(
        std::fs::read_to_string(fake.join("0.json")).unwrap(),
        "mine"
    );
}
