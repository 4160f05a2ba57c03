use super::*;

/// Two outputs on one file (by name, through a link, or a hard link), an
/// output that is an input, and an output inside the export directory
/// are refused before any work, and nothing changes.
#[test]
fn outputs_never_overwrite_each_other_or_inputs() {
    let d = tempfile::tempdir().unwrap();
    let (t, r) = plan_files(d.path());
    let p = |n: &str| d.path().join(n).to_str().unwrap().to_string();
    std::os::unix::fs::symlink(p("r.json"), p("link.json")).unwrap();
    std::fs::hard_link(p("t.json"), p("hard.json")).unwrap();
    let before = std::fs::read(&r).unwrap();
    let run = |extra: &[&str]| {
        let mut a = vec!["run", "fattree:k=4", "--elp", "kbounce:1", "--algo", "clos"];
        a.extend_from_slice(extra);
        tagger(&a)
    };
    let x = p("x");
    let link = p("link.json");
    let ex = p("ex");
    let inside = p("ex/a.json");
    let ex_spec = format!("sonic:{ex}");
    let topo_file = format!("file:{t}");
    let cases: Vec<Vec<&str>> = vec![
        vec!["--rules-out", &x, "--topology-out", &x],
        vec!["--paths-out", &x, "--rules-out", &x],
        vec!["--rules-out", &link, "--topology-out", &r],
        vec!["--rules-out", &inside, "--export", &ex_spec],
    ];
    for extra in &cases {
        let o = tagger(&{
            let mut a = vec!["run", "fattree:k=4", "--elp", "kbounce:1", "--algo", "clos"];
            a.extend_from_slice(extra);
            a
        });
        let _ = &run;
        assert_eq!(o.status.code(), Some(1), "{extra:?}: {}", text(&o));
        assert!(text(&o).contains("name the same file"), "{}", text(&o));
        assert!(!Path::new(&x).exists());
        assert!(!Path::new(&ex).exists());
    }
    let _ = ex;
    for extra in [
        vec![
            topo_file.as_str(),
            "--elp",
            "kbounce:1",
            "--topology-out",
            &t,
        ],
        vec![
            topo_file.as_str(),
            "--elp",
            "kbounce:1",
            "--rules-out",
            "hard.json",
        ],
    ] {
        let mut a = vec!["run"];
        a.extend_from_slice(&extra);
        let o = bin().args(&a).current_dir(d.path()).output().unwrap();
        assert_eq!(o.status.code(), Some(1), "{extra:?}: {}", text(&o));
        assert!(text(&o).contains("the input TOPOLOGY"), "{}", text(&o));
    }
    assert_eq!(std::fs::read(&r).unwrap(), before);
    // Export: an input inside the directory it would replace.
    let o = tagger(&[
        "export",
        "--topology",
        &t,
        "--rules",
        &r,
        "--out",
        d.path().to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    // The report over a sweep's results.
    let spec = concat!(env!("CARGO_MANIFEST_DIR"), "/datasets/failures-small.toml");
    let sw = p("sw");
    let o = tagger(&["sweep", spec, "--out", &sw, "--no-report"]);
    assert!(o.status.success(), "{}", text(&o));
    let runs = p("sw/runs.parquet");
    let kept = std::fs::read(&runs).unwrap();
    let o = tagger(&["report", &sw, "--out", &runs]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert_eq!(std::fs::read(&runs).unwrap(), kept);
    let o = tagger(&["report", &sw]);
    assert!(o.status.success(), "{}", text(&o));
    // Standard output and devices are exempt.
    let o = run(&["--rules-out", "/dev/null", "--topology-out", "/dev/null"]);
    assert!(o.status.success(), "{}", text(&o));
}

/// Every subcommand, each of its outputs set to each of its inputs (by
/// name, through a symlink, and through a dangling symlink to another
/// output): refused before any work, naming both, the input unchanged.
#[test]
fn no_subcommand_writes_over_its_inputs() {
    let d = tempfile::tempdir().unwrap();
    let p = |n: &str| d.path().join(n).to_str().unwrap().to_string();
    let (t, r, paths, fail, t2) = (
        p("t.json"),
        p("r.json"),
        p("p.txt"),
        p("f.txt"),
        p("t2.json"),
    );
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
    std::fs::write(&fail, "0 8\n").unwrap();
    std::fs::copy(&t, &t2).unwrap();
    let (tf, pf, ff) = (
        format!("file:{t}"),
        format!("file:{paths}"),
        format!("file:{fail}"),
    );
    // (arguments, the options naming its outputs, the input files)
    type Case<'a> = (Vec<&'a str>, Vec<&'a str>, Vec<&'a str>);
    let cases: Vec<Case> = vec![
        (vec!["topo", &tf], vec!["--out"], vec![&t]),
        (
            vec!["elp", &tf, "--elp", &pf],
            vec!["--paths-out"],
            vec![&t, &paths],
        ),
        (
            vec![
                "failures",
                &tf,
                "--elp",
                "kbounce:1",
                "--fail",
                &ff,
                "--rules",
                &r,
            ],
            vec!["--out"],
            vec![&t, &fail, &r],
        ),
        (
            vec!["run", &tf, "--elp", &pf, "--algo", "clos"],
            vec!["--topology-out", "--rules-out", "--paths-out"],
            vec![&t, &paths],
        ),
        (
            vec![
                "update",
                "--topology",
                &t,
                "--rules",
                &r,
                "--to",
                &t2,
                "--elp",
                "kbounce:1",
            ],
            vec!["--rules-out", "--topology-out", "--out"],
            vec![&t, &r, &t2],
        ),
        (
            vec!["export", "--topology", &t, "--rules", &r, "--paths", &paths],
            vec!["--out"],
            vec![&t, &r, &paths],
        ),
    ];
    let link = p("link");
    let kept: Vec<(String, Vec<u8>)> = [&t, &r, &paths, &fail, &t2]
        .iter()
        .map(|f| (f.to_string(), std::fs::read(f).unwrap()))
        .collect();
    for (args, outs, ins) in &cases {
        for out in outs {
            for input in ins {
                std::fs::remove_file(&link).ok();
                std::os::unix::fs::symlink(input, &link).unwrap();
                for target in [*input, link.as_str()] {
                    let mut a = args.clone();
                    a.extend([*out, target]);
                    let o = tagger(&a);
                    assert_eq!(o.status.code(), Some(1), "{a:?}: {}", text(&o));
                    assert!(
                        text(&o).contains("name the same file"),
                        "{a:?}: {}",
                        text(&o)
                    );
                    for (f, bytes) in &kept {
                        assert_eq!(&std::fs::read(f).unwrap(), bytes, "{a:?} changed {f}");
                    }
                }
            }
        }
    }
    // Two outputs through a dangling symlink: the link's target is the
    // other output.
    let target = p("target.json");
    std::fs::remove_file(&link).ok();
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let o = tagger(&[
        "run",
        "fattree:k=4",
        "--elp",
        "kbounce:1",
        "--topology-out",
        &link,
        "--rules-out",
        &target,
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("name the same file"), "{}", text(&o));
    assert!(!Path::new(&target).exists());
}

/// Every input must be a regular file: a device (`/dev/zero` never ends),
/// a FIFO (blocks until a writer comes) or a link to one is refused at
/// once, naming the file, for each kind of input.
#[test]
fn inputs_must_be_regular_files() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let (t, r) = plan_files(dir);
    let fifo = dir.join("fifo");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    std::os::unix::fs::symlink("/dev/zero", dir.join("zero.json")).unwrap();
    let ex = dir.join("ex");
    let o = tagger(&[
        "export",
        "--topology",
        &t,
        "--rules",
        &r,
        "--out",
        ex.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    std::fs::remove_file(ex.join("4.json")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", ex.join("4.json")).unwrap();
    for bad in ["/dev/zero", "fifo", "zero.json"] {
        let file = format!("file:{bad}");
        let cases: Vec<Vec<&str>> = vec![
            vec!["run", &file, "--elp", "shortest"],
            vec!["run", "fattree:k=4", "--elp", &file],
            vec!["run", "fattree:k=4", "--elp", "shortest", "--switch", &file],
            vec!["verify", "--topology", &t, "--rules", bad],
            vec!["verify", "--topology", &t, "--rules", &r, "--paths", bad],
            vec!["sweep", bad, "--out", "sw"],
            vec![
                "failures",
                "fattree:k=4",
                "--elp",
                "kbounce:1",
                "--fail",
                &file,
            ],
        ];
        for args in cases {
            let o = bounded(&args, dir);
            assert_eq!(o.status.code(), Some(1), "{args:?}: {}", text(&o));
            assert!(
                text(&o).contains("not a regular file"),
                "{args:?}: {}",
                text(&o)
            );
        }
    }
    let o = bounded(&["verify", "--topology", &t, "--exported", "ex"], dir);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("not a regular file"), "{}", text(&o));
    // Parquet inputs: a sweep's tables, a shard, a part of --resume.
    let spec = concat!(env!("CARGO_MANIFEST_DIR"), "/datasets/failures-small.toml");
    let mkfifo = |p: &Path| {
        std::fs::remove_file(p).unwrap();
        assert!(Command::new("mkfifo").arg(p).status().unwrap().success());
    };
    for table in ["runs.parquet", "switches.parquet"] {
        let sw = dir.join(format!("sw-{table}"));
        let sws = sw.to_str().unwrap();
        let o = tagger(&["sweep", spec, "--out", sws, "--no-report"]);
        assert!(o.status.success(), "{}", text(&o));
        mkfifo(&sw.join(table));
        let o = bounded(&["report", sws], dir);
        assert_eq!(o.status.code(), Some(1), "report {table}: {}", text(&o));
        assert!(text(&o).contains("not a regular file"), "{}", text(&o));
    }
    let sh = dir.join("sh");
    let shs = sh.to_str().unwrap();
    for i in ["1/2", "2/2"] {
        let o = tagger(&["sweep", spec, "--out", shs, "--shard", i, "--no-report"]);
        assert!(o.status.success(), "{}", text(&o));
    }
    mkfifo(&sh.join("switches-shard-2-of-2.parquet"));
    let o = bounded(&["merge", shs], dir);
    assert_eq!(o.status.code(), Some(1), "merge: {}", text(&o));
    assert!(text(&o).contains("not a regular file"), "{}", text(&o));
    // `--resume` runs a scenario again whose part is not a regular file.
    // (A sweep that died at its merge leaves its parts: a directory
    // stands where runs.parquet goes.)
    let rs = dir.join("rs");
    let rss = rs.to_str().unwrap();
    std::fs::create_dir_all(rs.join("runs.parquet")).unwrap();
    let o = tagger(&["sweep", spec, "--out", rss, "--no-report"]);
    assert!(!o.status.success(), "{}", text(&o));
    std::fs::remove_dir(rs.join("runs.parquet")).unwrap();
    let part = std::fs::read_dir(rs.join(".parts/all"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(".runs.parquet"))
        .expect("a scenario's part");
    mkfifo(&part);
    let o = bounded(
        &["sweep", spec, "--out", rss, "--resume", "--no-report"],
        dir,
    );
    assert!(o.status.success(), "resume: {}", text(&o));
    assert!(text(&o).contains("1 run now"), "resume: {}", text(&o));
    // `--switch file:` with no path says so.
    let o = tagger(&[
        "run",
        "fattree:k=4",
        "--elp",
        "shortest",
        "--switch",
        "file:",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("is empty"), "{}", text(&o));
}
