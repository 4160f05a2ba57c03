use super::*;

#[test]
fn sweep_records_failures_and_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("s.toml");
    std::fs::write(
        &spec,
        "name = \"t\"\n[[group]]\nname = \"g\"\ntopology = \"fattree:k=4\"\nelp = [\"kbounce:1\", \"kbounce:2\"]\nalgo = \"clos:1\"\n",
    )
    .unwrap();
    let out = dir.path().join("out");
    let o = tagger(&[
        "sweep",
        spec.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--jobs",
        "2",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let t = text(&o);
    assert!(t.contains("2 scenarios: 1 ok, 1 failed"), "{t}");
    assert!(
        t.contains(&format!("report: {}", out.join("report.html").display())),
        "{t}"
    );
    assert_eq!(
        files_in(&out),
        vec!["report.html", "runs.parquet", "switches.parquet"]
    );
    let page = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(page.contains("<h2>Failed scenarios</h2>"), "{page}");
    // An absurd --jobs is bounded (here by the 2 scenarios), not 100,000
    // threads; --no-report writes no page.
    let out3 = dir.path().join("out3");
    let o = tagger(&[
        "sweep",
        spec.to_str().unwrap(),
        "--out",
        out3.to_str().unwrap(),
        "--jobs",
        "100000",
        "--no-report",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains("2 scenarios, 2 at a time"),
        "{}",
        text(&o)
    );
    assert!(!out3.join("report.html").exists());
    // `tagger report` writes it later, where asked.
    let o = tagger(&[
        "report",
        out3.to_str().unwrap(),
        "--out",
        dir.path().join("r.html").to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(dir.path().join("r.html").exists());
    let o = tagger(&["report", dir.path().join("nowhere").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o).contains("nowhere/runs.parquet"), "{}", text(&o));
    // A spec error stops before any work, naming file, group and key.
    std::fs::write(
        &spec,
        "name = \"t\"\n[[group]]\nname = \"g\"\ntopology = \"fattree:k=4\"\nelp = \"kbounce:x\"\n",
    )
    .unwrap();
    let o = tagger(&[
        "sweep",
        spec.to_str().unwrap(),
        "--out",
        dir.path().join("out2").to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    assert!(
        text(&o).contains("s.toml: group 1 ('g'), key elp"),
        "{}",
        text(&o)
    );
    assert!(!dir.path().join("out2").exists());
}

/// `tagger merge` combines the shards of a sweep into the pair a local
/// sweep of the same spec writes (rows in scenario order, timings aside),
/// and refuses missing shards (by index) and shards of another spec.
#[test]
fn merge_combines_shards_and_refuses_mixtures() {
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("s.toml");
    let spec_text = "name = \"m\"\n[[group]]\nname = \"g\"\ntopology = \"fattree\"\nparams = { k = [4, 6] }\nelp = [\"kbounce:0\", \"kbounce:1\"]\nalgo = [\"clos\", \"greedy\"]\n";
    std::fs::write(&spec, spec_text).unwrap();
    let (shards, local) = (dir.path().join("shards"), dir.path().join("local"));
    let sweep = |out: &Path, shard: Option<&str>| {
        let mut args = vec![
            "sweep",
            spec.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ];
        if let Some(s) = shard {
            args.extend(["--shard", s]);
        }
        let o = tagger(&args);
        assert!(o.status.success(), "{}", text(&o));
    };
    sweep(&shards, Some("1/3"));
    sweep(&shards, Some("3/3"));
    let o = tagger(&["merge", shards.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o).contains("missing shard 2 of 3"), "{}", text(&o));
    // Shard 2 of another spec.
    std::fs::write(&spec, spec_text.replace("name = \"m\"", "name = \"other\"")).unwrap();
    sweep(&shards, Some("2/3"));
    let o = tagger(&["merge", shards.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o).contains("differ in tagger.spec"), "{}", text(&o));
    std::fs::write(&spec, spec_text).unwrap();
    sweep(&shards, Some("2/3"));
    let o = tagger(&["merge", shards.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("3 shards, 8 scenarios (0 failed)"),
        "{}",
        text(&o)
    );
    sweep(&local, None);
    // Every column but the timing and process ones, row by row.
    let rows = |d: &Path, f: &str| {
        let batches = tagger::output::parquet::read_batches(&d.join(f)).unwrap();
        let mut out = Vec::new();
        for b in &batches {
            for r in 0..b.num_rows() {
                let mut row = Vec::new();
                for (i, field) in b.schema().fields().iter().enumerate() {
                    let n = field.name();
                    if n.starts_with("seconds_") || n == "peak_rss_bytes" || n == "threads" {
                        continue;
                    }
                    row.push(format!("{:?}", b.column(i).slice(r, 1)));
                }
                out.push(row);
            }
        }
        out
    };
    for f in ["runs.parquet", "switches.parquet"] {
        assert_eq!(rows(&shards, f), rows(&local, f), "{f}");
    }
    let o = tagger(&["merge", dir.path().to_str().unwrap()]);
    assert!(text(&o).contains("no shard files"), "{}", text(&o));
}

/// The scripts that read the Parquet output say what to install when
/// duckdb is missing (Python started without its site packages), instead
/// of a traceback.
#[test]
fn scripts_without_duckdb_say_what_to_install() {
    if std::process::Command::new("python3")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("skipped: no python3");
        return;
    }
    for script in [
        "summarize.py",
        "check_sweep.py",
        "validate-sweep-exports.py",
    ] {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/").to_string() + script;
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("runs.parquet"), b"").unwrap();
        let o = std::process::Command::new("python3")
            .args(["-I", "-S", &path, d.path().to_str().unwrap()])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{script}: {err}");
        assert!(!err.contains("Traceback"), "{script}: {err}");
        assert!(
            err.contains("pip install -r scripts/requirements.txt"),
            "{script}: {err}"
        );
    }
}
