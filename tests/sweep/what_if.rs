use super::*;

const FAIL_SPEC: &str = r#"
name = "fail"
seed = 2
routing = ["converged", "local"]

[[group]]
name = "ft"
topology = "fattree"
params = { k = [4, 6] }
elp = "kbounce:1"
algo = "clos"
failures = ["links:1,trials=3,seed=5", "links:3,trials=3,seed=5"]

[[group]]
name = "jf"
topology = "jellyfish:n=20,ports=6,r=4,seed=1"
elp = "shortest"
failures = "switches:1,trials=2"
replan = false

[[group]]
name = "plain"
topology = "fattree:k=4"
elp = "shortest"
"#;

/// A sweep with failures writes failures.parquet (one row per scenario and
/// trial, joined by scenario id), the runs' aggregates match their trials,
/// and the rows are the same at any job count, resumed, and sharded.
#[test]
fn failure_sweeps_write_trials_and_aggregates() {
    let sw = Sweep::parse(FAIL_SPEC, "fail.toml", 100).unwrap();
    assert_eq!(sw.scenarios.len(), 2 * 2 * 2 + 2 + 1);
    let go = |dir: &Path, jobs: usize, resume: bool, shard: Option<Shard>| {
        sweep::execute(
            dir,
            &sw,
            &Options {
                jobs,
                resume,
                shard,
            },
            |_| {},
        )
        .unwrap()
    };
    let (a, b, c) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    let done = go(a.path(), 1, false, None);
    assert_eq!(done.failed, 0, "{:?}", done.rows);
    assert_eq!(done.failures_path, Some(a.path().join("failures.parquet")));
    let runs = read(&a.path().join("runs.parquet"));
    let fails = read(&a.path().join("failures.parquet"));
    assert_eq!(fails.num_rows(), 8 * 3 + 2 * 2);
    let ids = u64s(&fails, "scenario_id");
    let spec = strs(&runs, "failures_spec");
    let trials = u32s(&runs, "failures_trials");
    for (i, id) in u64s(&runs, "scenario_id").iter().enumerate() {
        let n = ids.iter().filter(|x| *x == id).count();
        assert_eq!(n as u32, trials[i].unwrap_or(0), "scenario {id:?}");
        assert_eq!(spec[i].is_none(), n == 0);
    }
    // Every trial verified; no replanning where the spec says so.
    let c_ver = fails.column_by_name("verified").unwrap().as_boolean();
    assert!((0..c_ver.len()).all(|i| c_ver.value(i)));
    let repl = u32s(&fails, "replanned_priorities");
    let routing = strs(&fails, "routing");
    assert_eq!(repl.iter().filter(|r| r.is_none()).count(), 4);
    assert!(routing.iter().any(|r| r.as_deref() == Some("local")));
    // The same rows with more jobs, after an interruption, and sharded.
    super::interrupted(b.path(), FAIL_SPEC, 3);
    let parts = b.path().join(".parts/all");
    std::fs::remove_file(parts.join("3.failures.parquet")).unwrap();
    assert_eq!(go(b.path(), 2, true, None).ran, 1);
    for i in 1..=2 {
        go(c.path(), 2, false, Some(Shard { index: i, count: 2 }));
    }
    let m = sweep::merge::merge(c.path()).unwrap();
    assert_eq!(m.failures_path, Some(c.path().join("failures.parquet")));
    let key = |dir: &Path| read(&dir.join("failures.parquet"));
    assert_eq!(key(a.path()), key(b.path()));
    assert_eq!(key(a.path()), key(c.path()));
    assert_eq!(
        rows_by_key(&read(&a.path().join("runs.parquet"))),
        rows_by_key(&read(&c.path().join("runs.parquet")))
    );
}

#[test]
fn failure_keys_are_checked_up_front() {
    for (bad, msg) in [
        ("failures = \"links:x\"", "key failures: failures 'links:x'"),
        (
            "failures = \"links:1\"\nrouting = \"sideways\"",
            "unknown routing 'sideways'",
        ),
        ("routing = \"local\"", "key routing: given without failures"),
        (
            "failures = \"file:/nonexistent/f.txt\"",
            "cannot read /nonexistent/f.txt",
        ),
    ] {
        let spec = format!(
            "name = \"x\"\n[[group]]\nname = \"g\"\ntopology = \"fattree:k=4\"\nelp = \"shortest\"\n{bad}\n"
        );
        let e = Sweep::parse(&spec, "x.toml", 10).unwrap_err().to_string();
        assert!(e.contains(msg), "{bad}: {e}");
    }
}

const GROWTH_SPEC: &str = r#"
name = "growth"
seed = 2

[[group]]
name = "jf"
topology = "jellyfish:n=24,ports=8,r=4,seed=1"
elp = "shortest"
algo = ["greedy", "search:budget=1e6"]
growth = ["grow:switches=2,steps=3"]

[[group]]
name = "ft"
topology = "fattree:k=4"
elp = "kbounce:1"
algo = "clos"
growth = "drain:links=1,steps=2,seed=5"

[[group]]
name = "ls"
topology = "leafspine:leaves=4,spines=2,hosts=3"
elp = "kbounce:1"
algo = "clos"
growth = "grow:leaves=1,steps=2"
"#;

/// `growth.parquet` without its timing column.
fn growth_rows(path: &Path) -> RecordBatch {
    let b = read(path);
    let keep: Vec<usize> = (0..b.num_columns())
        .filter(|&i| b.schema().field(i).name() != "growth_seconds")
        .collect();
    b.project(&keep).unwrap()
}

/// A sweep with `growth` writes growth.parquet: one row per scenario and
/// step, every step verified, the switch count growing by the change; the
/// same rows sharded and merged.
#[test]
fn growth_sweeps_write_a_row_per_step() {
    let sw = Sweep::parse(GROWTH_SPEC, "growth.toml", 100).unwrap();
    assert_eq!(sw.scenarios.len(), 4);
    let (a, c) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let go = |dir: &Path, shard: Option<Shard>| {
        sweep::execute(
            dir,
            &sw,
            &Options {
                jobs: 2,
                resume: false,
                shard,
            },
            |_| {},
        )
        .unwrap()
    };
    let done = go(a.path(), None);
    assert_eq!(done.failed, 0, "{:?}", done.rows);
    assert_eq!(done.growth_path, Some(a.path().join("growth.parquet")));
    let g = read(&a.path().join("growth.parquet"));
    assert_eq!(g.num_rows(), 3 + 3 + 2 + 2);
    assert_eq!(
        u64s(&g, "scenario_id"),
        [0, 0, 0, 1, 1, 1, 2, 2, 3, 3].map(Some).to_vec()
    );
    assert_eq!(
        u32s(&g, "growth_switches"),
        [26, 28, 30, 26, 28, 30, 20, 20, 7, 8].map(Some).to_vec()
    );
    let ver = g.column_by_name("growth_verified").unwrap().as_boolean();
    assert!((0..ver.len()).all(|i| ver.value(i)));
    let changes = strs(&g, "growth_change");
    assert_eq!(changes[1].as_deref(), Some("grow:switches=2,seed=2"));
    assert_eq!(changes[7].as_deref(), Some("drain:links=1,seed=6"));
    assert_eq!(changes[9].as_deref(), Some("grow:leaves=1"));
    // A leaf added to a leaf-spine keeps it tiered: clos plans it from
    // scratch with the same two priorities.
    let p = u32s(&g, "growth_priorities");
    let sp = u32s(&g, "growth_scratch_priorities");
    assert_eq!((p[8], p[9], sp[9]), (Some(2), Some(2), Some(2)));
    for i in 1..=2 {
        go(c.path(), Some(Shard { index: i, count: 2 }));
    }
    let m = sweep::merge::merge(c.path()).unwrap();
    assert_eq!(m.growth_path, Some(c.path().join("growth.parquet")));
    assert_eq!(
        growth_rows(&a.path().join("growth.parquet")),
        growth_rows(&c.path().join("growth.parquet"))
    );
    // The merged files name no shard, as the unsharded sweep's.
    let meta = |p: &Path| tagger::output::parquet::read_metadata(p).unwrap();
    assert_eq!(
        meta(&a.path().join("runs.parquet")),
        meta(&c.path().join("runs.parquet"))
    );
    merge_trusts_no_file_name(c.path());
}

/// `merge` checks what a shard file holds, not its name: a shard copied
/// over another, or one missing a scenario, is refused.
fn merge_trusts_no_file_name(dir: &Path) {
    use tagger::output::parquet::{read_batches, read_metadata, write_batches};
    let name = |t: &str, i: u32| dir.join(format!("{t}-shard-{i}-of-2.parquet"));
    let keep: Vec<(PathBuf, Vec<u8>)> = ["runs", "switches", "growth"]
        .iter()
        .map(|t| (name(t, 2), std::fs::read(name(t, 2)).unwrap()))
        .collect();
    for t in ["runs", "switches", "growth"] {
        std::fs::copy(name(t, 1), name(t, 2)).unwrap();
    }
    let e = sweep::merge::merge(dir).unwrap_err().to_string();
    assert!(e.contains("holds shard 1/2, not shard 2 of 2"), "{e}");
    for (p, bytes) in &keep {
        std::fs::write(p, bytes).unwrap();
    }
    sweep::merge::merge(dir).unwrap();
    // Shard 2 with its last scenario's row dropped (its metadata kept).
    let runs = name("runs", 2);
    let b = read_batches(&runs).unwrap();
    let b = b[0].slice(0, b[0].num_rows() - 1);
    let kv = read_metadata(&runs).unwrap();
    let kv: Vec<(&str, String)> = kv.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
    write_batches(&runs, &[b], &kv).unwrap();
    let e = sweep::merge::merge(dir).unwrap_err().to_string();
    assert!(e.contains("scenario 3 of the spec's 4 missing"), "{e}");
    // The report refuses a switches table of another sweep beside runs.
    tagger::report::charts(dir).unwrap();
    let sw = dir.join("switches.parquet");
    let b = read_batches(&sw).unwrap();
    let kv: Vec<(String, String)> = read_metadata(&sw)
        .unwrap()
        .into_iter()
        .map(|(k, v)| {
            let v = if k == "tagger.spec" {
                v + "\n# another sweep"
            } else {
                v
            };
            (k, v)
        })
        .collect();
    let kv: Vec<(&str, String)> = kv.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
    write_batches(&sw, &b, &kv).unwrap();
    let e = tagger::report::charts(dir).unwrap_err().to_string();
    assert!(e.contains("different sweeps"), "{e}");
}

#[test]
fn growth_keys_are_checked_up_front() {
    for (spec, says) in [
        (
            GROWTH_SPEC.replace("drain:links=1,steps=2,seed=5", "grow:switches=1"),
            "break the levels",
        ),
        (
            GROWTH_SPEC.replace("grow:switches=2,steps=3", "grow:leaves=2"),
            "no tiers",
        ),
        (GROWTH_SPEC.replace("steps=3", "steps=0"), "steps"),
        (
            GROWTH_SPEC.replace("grow:switches=2", "grow:switchs=2"),
            "switchs",
        ),
        (
            GROWTH_SPEC.replace("algo = \"clos\"", "algo = \"clos\"\nclasses = 2"),
            "single-class",
        ),
        (
            GROWTH_SPEC.replace("algo = \"clos\"", "algo = \"greedy-ttl\""),
            "greedy-ttl",
        ),
    ] {
        let e = Sweep::parse(&spec, "g.toml", 100).unwrap_err().to_string();
        assert!(e.contains(says) && e.contains("growth"), "{e}");
    }
}

/// The report draws the growth paths: a point per step for the extended
/// and the from-scratch churn of every scenario.
#[test]
fn growth_paths_are_charted() {
    let sw = Sweep::parse(GROWTH_SPEC, "growth.toml", 100).unwrap();
    let dir = tempfile::tempdir().unwrap();
    sweep::execute(
        dir.path(),
        &sw,
        &Options {
            jobs: 2,
            resume: false,
            shard: None,
        },
        |_| {},
    )
    .unwrap();
    let charts = tagger::report::charts(dir.path()).unwrap();
    let c = charts
        .iter()
        .find(|c| c.title.contains("growth step"))
        .expect("a growth chart");
    assert_eq!(c.points, 2 * (3 + 3 + 2 + 2));
    assert_eq!(c.panels.len(), 3);
}
