use super::*;

/// Runs `args` with standard output read by nobody (the read end closed at
/// once, as `| head -c0` does): the command must end quietly, exit 0 and
/// not panic.
fn closed_pipe(args: &[&str], dir: &Path) {
    let mut child = bin()
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    assert_eq!(out.status.code(), Some(0), "{args:?}: {err}");
}

#[test]
fn a_closed_pipe_is_a_quiet_exit() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let ok = tagger(&[
        "run",
        "fattree:k=4",
        "--elp",
        "kbounce:1",
        "--algo",
        "clos",
        "--topology-out",
        dir.join("t.json").to_str().unwrap(),
        "--rules-out",
        dir.join("r.json").to_str().unwrap(),
    ]);
    assert!(ok.status.success(), "{}", text(&ok));
    let spec = concat!(env!("CARGO_MANIFEST_DIR"), "/datasets/failures-small.toml");
    for args in [
        &["topo", "fattree:k=8"][..],
        &["run", "fattree:k=4", "--elp", "kbounce:1", "--algo", "clos"],
        &[
            "run",
            "fattree:k=4",
            "--elp",
            "kbounce:1",
            "--algo",
            "clos",
            "--json",
        ],
        &[
            "run",
            "fattree:k=8",
            "--elp",
            "kbounce:1",
            "--algo",
            "clos",
            "--rules-out",
            "-",
        ],
        &[
            "elp",
            "fattree:k=8",
            "--elp",
            "shortest",
            "--paths-out",
            "-",
        ],
        &["verify", "--topology", "t.json", "--rules", "r.json"],
        &["schema"],
        &["sweep", spec, "--out", "sw", "--no-report"],
        &[
            "sweep",
            spec,
            "--out",
            "sh",
            "--shard",
            "1/1",
            "--no-report",
        ],
        &["merge", "sh"],
        &[
            "export",
            "--topology",
            "t.json",
            "--rules",
            "r.json",
            "--out",
            "ex",
        ],
    ] {
        closed_pipe(args, dir);
    }
}

/// A run ended by a signal while its outputs are staged leaves no
/// temporary behind, and temporaries of processes that died without a
/// chance to clean up (SIGKILL) are removed by the next write of the
/// same output; a live process's are kept.
#[test]
fn interrupted_runs_leave_no_temporaries() {
    let d = tempfile::tempdir().unwrap();
    let t = d.path().join("t.json");
    let temps = || -> Vec<String> {
        std::fs::read_dir(d.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains(".tmp-"))
            .collect()
    };
    for signal in ["INT", "TERM"] {
        // Standard output is a pipe nobody reads: the rules block on it
        // once its buffer is full, after the topology's temporary is
        // complete and before it is renamed into place.
        let mut child = bin()
            .args([
                "run",
                "fattree:k=8",
                "--elp",
                "kbounce:2",
                "--rules-out",
                "-",
            ])
            .arg("--topology-out")
            .arg(&t)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let start = std::time::Instant::now();
        while temps().is_empty() {
            assert!(
                start.elapsed() < std::time::Duration::from_secs(60),
                "no temporary appeared"
            );
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let kill = Command::new("kill")
            .args([format!("-{signal}"), child.id().to_string()])
            .status()
            .unwrap();
        assert!(kill.success());
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(130), "SIG{signal}");
        assert_eq!(temps(), Vec::<String>::new(), "SIG{signal}");
        assert!(!t.exists(), "SIG{signal}");
    }
    // A dead process's temporary goes with the next write; a live one's
    // (this test's own process) stays.
    let dead = d.path().join(".t.json.tmp-4294967295-0");
    let live = d
        .path()
        .join(format!(".t.json.tmp-{}-0", std::process::id()));
    std::fs::write(&dead, "x").unwrap();
    std::fs::write(&live, "x").unwrap();
    let o = tagger(&[
        "run",
        "fattree:k=4",
        "--elp",
        "kbounce:1",
        "--topology-out",
        t.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(!dead.exists() && live.exists() && t.exists());
    // So does one of an output written on its own (a path file).
    let paths = d.path().join("p.txt");
    let dead = d.path().join(".p.txt.tmp-4294967295-3");
    std::fs::write(&dead, "x").unwrap();
    let o = tagger(&[
        "elp",
        "fattree:k=4",
        "--elp",
        "kbounce:1",
        "--paths-out",
        paths.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(!dead.exists() && paths.exists());
}

/// SIGTERM at any moment of an `update --export-steps` that replaces an
/// earlier steps directory leaves no temporary (staged, or the earlier
/// directory moved aside), and the directory is whole: the earlier steps
/// or the new ones, never neither (#70 item 8). Ten kill times spread over
/// the run; after a SIGKILL, the next write of the same output removes
/// what the killed process left.
#[test]
fn interrupted_updates_leave_no_temporaries() {
    let d = tempfile::tempdir().unwrap();
    let p = |n: &str| d.path().join(n).to_str().unwrap().to_string();
    let (t, r, steps) = (p("t.json"), p("r.json"), d.path().join("steps"));
    let o = tagger(&[
        "run",
        "jellyfish:n=30,ports=8,r=4,seed=1",
        "--elp",
        "shortest",
        "--algo",
        "search",
        "--topology-out",
        &t,
        "--rules-out",
        &r,
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let target = format!("sonic:{}", steps.display());
    let args = [
        "update",
        t.as_str(),
        "--rules",
        r.as_str(),
        "--to",
        "grow:switches=2,seed=3",
        "--elp",
        "shortest",
        "--export-steps",
        target.as_str(),
    ];
    let whole = |what: &str| {
        let s = std::fs::read_to_string(steps.join("summary.json"))
            .unwrap_or_else(|e| panic!("{what}: no summary.json: {e}"));
        let v: serde_json::Value = serde_json::from_str(&s).unwrap();
        for x in v["steps"].as_array().unwrap() {
            let dir = steps.join(x["dir"].as_str().unwrap());
            assert!(
                dir.join("summary.json").exists(),
                "{what}: {}",
                dir.display()
            );
        }
    };
    let temps = || -> Vec<String> {
        std::fs::read_dir(d.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains(".tmp-"))
            .collect()
    };
    let t0 = std::time::Instant::now();
    let o = tagger(&args);
    assert!(o.status.success(), "{}", text(&o));
    let took = t0.elapsed();
    whole("first");
    for k in 0..10u32 {
        let mut child = bin()
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(took * k / 9);
        let _ = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status();
        let status = child.wait().unwrap();
        // Killed before its handler is installed, the process dies of the
        // signal (nothing written yet); after, it exits 130 (or 0, done).
        assert!(
            matches!(status.code(), Some(0 | 130) | None),
            "kill {k}: {status:?}"
        );
        assert_eq!(temps(), Vec::<String>::new(), "kill {k}");
        whole(&format!("kill {k}"));
    }
    // SIGKILL: nothing is cleaned then; the next write is.
    let mut child = bin()
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while temps().is_empty() && start.elapsed() < took * 4 {
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    let _ = Command::new("kill")
        .args(["-KILL", &child.id().to_string()])
        .status();
    child.wait().unwrap();
    let o = tagger(&args);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(temps(), Vec::<String>::new(), "after SIGKILL");
    whole("after SIGKILL");
}

/// A run over the switch's limits (more priorities than queues, tags past
/// DSCP's 64) fails like verify, and writes none of its outputs; raised
/// limits let it through.
#[test]
fn a_failed_run_writes_nothing() {
    let d = tempfile::tempdir().unwrap();
    let p = |n: &str| d.path().join(n).to_str().unwrap().to_string();
    let (c, t, ex) = (p("c.json"), p("t.json"), p("ex"));
    let o = tagger(&[
        "run",
        "fattree:k=4",
        "--elp",
        "kbounce:1",
        "--algo",
        "clos",
        "--classes",
        "64",
        "--max-tcs",
        "none",
        "--rules-out",
        &c,
        "--topology-out",
        &t,
        "--export",
        &format!("sonic:{ex}"),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("[priorities]"), "{}", text(&o));
    assert!(text(&o).contains("[tags]"), "{}", text(&o));
    for f in [&c, &t, &ex] {
        assert!(!Path::new(f).exists(), "{f} written");
    }
    // Raised limits: the run passes, but the export cannot map 65
    // priorities to queues, so still nothing is written.
    let o = tagger(&[
        "run",
        "fattree:k=4",
        "--elp",
        "kbounce:1",
        "--algo",
        "clos",
        "--classes",
        "64",
        "--max-tcs",
        "none",
        "--max-priorities",
        "65",
        "--max-tags",
        "65",
        "--rules-out",
        &c,
        "--export",
        &format!("sonic:{ex}"),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(!Path::new(&c).exists() && !Path::new(&ex).exists());
    let o = tagger(&[
        "run",
        "fattree:k=4",
        "--elp",
        "kbounce:1",
        "--algo",
        "clos",
        "--classes",
        "64",
        "--max-tcs",
        "none",
        "--max-priorities",
        "65",
        "--max-tags",
        "65",
        "--rules-out",
        &c,
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(Path::new(&c).exists());
    // An output on a full device fails the run before any file output is
    // put in place: devices are written before the files are renamed.
    if Path::new("/dev/full").exists() {
        let (r, e1, nr) = (p("r.json"), p("e1"), p("nr.json"));
        for extra in [
            vec!["--rules-out", "/dev/full", "--export"],
            vec!["--paths-out", "/dev/full", "--rules-out"],
        ] {
            let target = if extra[2] == "--export" {
                format!("sonic:{e1}")
            } else {
                r.clone()
            };
            let mut a = vec!["run", "fattree:k=4", "--elp", "kbounce:1", "--algo", "clos"];
            a.extend(&extra);
            a.push(&target);
            let o = tagger(&a);
            assert_eq!(o.status.code(), Some(1), "{a:?}: {}", text(&o));
            assert!(text(&o).contains("none was changed"), "{}", text(&o));
            assert!(!Path::new(&e1).exists() && !Path::new(&r).exists(), "{a:?}");
        }
        let (t2, c2) = (p("t2.json"), p("c2.json"));
        let o = tagger(&[
            "run",
            "fattree:k=4",
            "--elp",
            "kbounce:1",
            "--algo",
            "clos",
            "--topology-out",
            &t2,
            "--rules-out",
            &c2,
        ]);
        assert!(o.status.success(), "{}", text(&o));
        let o = tagger(&[
            "update",
            "--topology",
            &t2,
            "--rules",
            &c2,
            "--to",
            "drain:links=1",
            "--elp",
            "kbounce:1",
            "--out",
            "/dev/full",
            "--rules-out",
            &nr,
        ]);
        assert_eq!(o.status.code(), Some(1), "{}", text(&o));
        assert!(text(&o).contains("none was changed"), "{}", text(&o));
        assert!(!Path::new(&nr).exists(), "{}", text(&o));
    }
}
