//! The install boundary (#30): what leaves the engine is verified, outputs
//! never overwrite each other or the run's inputs, a failed run writes
//! nothing, and a closed pipe is a quiet exit.
//!
//! One file past 600 lines on purpose: each guarantee of the install
//! boundary is one test here, so the README's list and this file match one
//! to one.

mod common;

use common::{plan_files, tagger, text};
use std::path::Path;
use std::process::{Command, Stdio};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_tagger"))
}

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
        assert_eq!(std::fs::read_dir(&ex).unwrap().count(), 45 + 1);
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
        assert_eq!(names.len(), 20 + 1, "{names:?}");
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
}

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

/// Runs `args` in `dir`, failing the test (instead of hanging) if it has
/// not ended within a minute.
fn bounded(args: &[&str], dir: &Path) -> std::process::Output {
    let mut child = bin()
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > std::time::Duration::from_secs(60) {
            let _ = child.kill();
            panic!("{args:?} did not end within a minute");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
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
    let rs = dir.join("rs");
    let rss = rs.to_str().unwrap();
    let o = tagger(&["sweep", spec, "--out", rss, "--no-report"]);
    assert!(o.status.success(), "{}", text(&o));
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
