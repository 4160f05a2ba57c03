//! Sweeps end to end: Parquet read back row by row, determinism across job
//! counts, and a failing grid point recorded while the rest succeed.
//!
//! One file past 600 lines on purpose: the sweep's end-to-end tests share
//! fixtures (specs, read-back helpers) and each runs real sweeps.

use arrow_array::cast::AsArray;
use arrow_array::types::{UInt32Type, UInt64Type};
use arrow_array::{Array, RecordBatch};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use std::path::{Path, PathBuf};
use tagger::sweep::{self, Options, Shard, Sweep};

const SPEC: &str = r#"
name = "test"
seed = 3

[[group]]
name = "ft"
topology = "fattree"
params = { k = [4, 6] }
elp = ["kbounce:1", "kbounce:2"] # kbounce:2 is past clos:1: failed rows
algo = ["clos:1", "greedy"]

[[group]]
name = "jf"
topology = "jellyfish"
params = { n = 24, ports = 6, r = 4 }
elp = "shortest+random:50"
algo = "greedy"
trials = 3
"#;

fn read(path: &Path) -> RecordBatch {
    let f = std::fs::File::open(path).unwrap();
    let builder = ParquetRecordBatchReaderBuilder::try_new(f).unwrap();
    let schema = builder.schema().clone();
    let batches: Vec<RecordBatch> = builder.build().unwrap().map(Result::unwrap).collect();
    assert!(batches.len() <= 1, "small tables come back as one batch");
    batches
        .into_iter()
        .next()
        .unwrap_or_else(|| RecordBatch::new_empty(schema))
}

fn strs(b: &RecordBatch, name: &str) -> Vec<Option<String>> {
    let c = b
        .column_by_name(name)
        .unwrap_or_else(|| panic!("column {name}"));
    let c = c.as_string::<i32>();
    (0..c.len())
        .map(|i| c.is_valid(i).then(|| c.value(i).to_string()))
        .collect()
}

fn u64s(b: &RecordBatch, name: &str) -> Vec<Option<u64>> {
    let c = b
        .column_by_name(name)
        .unwrap_or_else(|| panic!("column {name}"));
    let c = c.as_primitive::<UInt64Type>();
    (0..c.len())
        .map(|i| c.is_valid(i).then(|| c.value(i)))
        .collect()
}

fn u32s(b: &RecordBatch, name: &str) -> Vec<Option<u32>> {
    let c = b.column_by_name(name).unwrap().as_primitive::<UInt32Type>();
    (0..c.len())
        .map(|i| c.is_valid(i).then(|| c.value(i)))
        .collect()
}

fn run(jobs: usize, dir: &Path) -> Vec<sweep::Outcome> {
    let sw = Sweep::parse(SPEC, "test.toml", 1000).unwrap();
    let out = sweep::run_all(&sw.scenarios, jobs, |_| {}).unwrap();
    sweep::write(dir, &sw, &out, jobs).unwrap();
    out
}

#[test]
fn parquet_rows_match_the_runs() {
    let dir = tempfile::tempdir().unwrap();
    let outcomes = run(2, dir.path());
    let runs = read(&dir.path().join("runs.parquet"));
    assert_eq!(runs.num_rows(), outcomes.len());
    assert_eq!(runs.num_rows(), 2 * 2 * 2 + 3);
    let status = strs(&runs, "status");
    let elp = strs(&runs, "elp");
    let prio = u32s(&runs, "priorities");
    let ids = u64s(&runs, "scenario_id");
    for (i, o) in outcomes.iter().enumerate() {
        assert_eq!(ids[i], Some(o.scenario.id));
        match &o.result {
            Ok(s) => {
                assert_eq!(status[i].as_deref(), Some("ok"));
                assert_eq!(prio[i], Some(s.figures.priorities));
                assert_eq!(
                    u64s(&runs, "acl_exact_max")[i],
                    Some(s.figures.acl_exact_max)
                );
            }
            Err(e) => {
                assert_eq!(status[i].as_deref(), Some("failed"));
                assert_eq!(elp[i].as_deref(), Some("kbounce:2"));
                assert!(e.contains("not within kbounce:1"), "{e}");
                assert_eq!(strs(&runs, "error")[i].as_deref(), Some(e.as_str()));
                assert_eq!(prio[i], None);
            }
        }
    }
    assert_eq!(
        status
            .iter()
            .filter(|s| s.as_deref() == Some("failed"))
            .count(),
        2
    );
    // Clos gives K+1 on the fat-trees.
    for (i, o) in outcomes.iter().enumerate() {
        if o.scenario.algo.name() == "clos:1" && o.result.is_ok() {
            assert_eq!(prio[i], Some(2));
        }
    }
    let nodes = read(&dir.path().join("switches.parquet"));
    let ok_nodes: usize = outcomes.iter().map(|o| o.nodes.len()).sum();
    assert_eq!(nodes.num_rows(), ok_nodes);
    let total: u64 = u64s(&nodes, "acl_exact").iter().map(|x| x.unwrap()).sum();
    let want: u64 = outcomes
        .iter()
        .filter_map(|o| o.result.as_ref().ok())
        .map(|s| s.figures.acl_exact_total)
        .sum();
    assert_eq!(total, want);
    // The spec and version travel in the file metadata.
    let f = std::fs::File::open(dir.path().join("runs.parquet")).unwrap();
    let meta = ParquetRecordBatchReaderBuilder::try_new(f)
        .unwrap()
        .metadata()
        .clone();
    let kv = meta.file_metadata().key_value_metadata().unwrap();
    assert!(
        kv.iter()
            .any(|k| k.key == "tagger.spec" && k.value.as_deref() == Some(SPEC))
    );
    assert!(kv.iter().any(|k| k.key == "tagger.version"));
}

#[test]
fn same_rows_at_any_job_count() {
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    run(1, a.path());
    run(4, b.path());
    let (ra, rb) = (
        read(&a.path().join("runs.parquet")),
        read(&b.path().join("runs.parquet")),
    );
    for (i, field) in ra.schema().fields().iter().enumerate() {
        let name = field.name();
        if name.starts_with("seconds_") || name == "peak_rss_bytes" || name == "threads" {
            continue;
        }
        assert_eq!(
            ra.column(i).to_data(),
            rb.column(i).to_data(),
            "column {name}"
        );
    }
    let (na, nb) = (
        read(&a.path().join("switches.parquet")),
        read(&b.path().join("switches.parquet")),
    );
    assert_eq!(na, nb);
}

/// Columns whose values depend on the machine, not on the spec.
const VOLATILE: [&str; 10] = [
    "seconds_generate",
    "seconds_failures",
    "seconds_elp",
    "seconds_tag",
    "seconds_rules",
    "seconds_verify",
    "seconds_total",
    "peak_rss_bytes",
    "threads",
    "version",
];

fn stable(b: &RecordBatch) -> RecordBatch {
    let keep: Vec<usize> = (0..b.num_columns())
        .filter(|&i| !VOLATILE.contains(&b.schema().field(i).name().as_str()))
        .collect();
    b.project(&keep).unwrap()
}

/// Rows keyed by (scenario_id, and node for switch rows), without volatile columns.
fn rows_by_key(b: &RecordBatch) -> std::collections::BTreeMap<(u64, u32), RecordBatch> {
    let s = stable(b);
    let ids = u64s(b, "scenario_id");
    let nodes = b.column_by_name("node").map(|_| u32s(b, "node"));
    (0..b.num_rows())
        .map(|i| {
            (
                (ids[i].unwrap(), nodes.as_ref().map_or(0, |n| n[i].unwrap())),
                s.slice(i, 1),
            )
        })
        .collect()
}

fn execute(dir: &Path, resume: bool, shard: Option<Shard>) -> sweep::Done {
    let sw = Sweep::parse(SPEC, "test.toml", 1000).unwrap();
    sweep::execute(
        dir,
        &sw,
        &Options {
            jobs: 2,
            resume,
            shard,
        },
        |_| {},
    )
    .unwrap()
}

#[test]
fn interrupted_then_resumed_equals_uninterrupted() {
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let whole = execute(a.path(), false, None);
    assert_eq!((whole.ran, whole.skipped, whole.failed), (11, 0, 2));
    // Interrupt: the final files never appeared and scenarios 2, 5 and 9 had
    // not finished.
    execute(b.path(), false, None);
    std::fs::remove_file(b.path().join("runs.parquet")).unwrap();
    std::fs::remove_file(b.path().join("switches.parquet")).unwrap();
    for id in [2, 5, 9] {
        let parts = b.path().join(".parts/all");
        std::fs::remove_file(parts.join(format!("{id}.runs.parquet"))).unwrap();
        let _ = std::fs::remove_file(parts.join(format!("{id}.switches.parquet")));
    }
    let resumed = execute(b.path(), true, None);
    assert_eq!((resumed.ran, resumed.skipped), (3, 8));
    for f in ["runs.parquet", "switches.parquet"] {
        assert_eq!(
            rows_by_key(&read(&a.path().join(f))),
            rows_by_key(&read(&b.path().join(f))),
            "{f}"
        );
    }
    // Resuming a finished sweep runs nothing; another spec is refused.
    assert_eq!(execute(b.path(), true, None).ran, 0);
    let other = Sweep::parse(&SPEC.replace("seed = 3", "seed = 4"), "other.toml", 1000).unwrap();
    let e = sweep::execute(
        b.path(),
        &other,
        &Options {
            jobs: 1,
            resume: true,
            shard: None,
        },
        |_| {},
    )
    .unwrap_err();
    assert!(e.to_string().contains("different sweep spec"), "{e}");
}

#[test]
fn shards_together_equal_the_whole() {
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    execute(a.path(), false, None);
    let mut runs = std::collections::BTreeMap::new();
    let mut nodes = std::collections::BTreeMap::new();
    let mut total = 0;
    for i in 1..=3 {
        let d = execute(b.path(), false, Some(Shard { index: i, count: 3 }));
        total += d.selected;
        runs.extend(rows_by_key(&read(
            &b.path().join(format!("runs-shard-{i}-of-3.parquet")),
        )));
        nodes.extend(rows_by_key(&read(
            &b.path().join(format!("switches-shard-{i}-of-3.parquet")),
        )));
    }
    assert_eq!(total, 11);
    assert_eq!(runs, rows_by_key(&read(&a.path().join("runs.parquet"))));
    assert_eq!(
        nodes,
        rows_by_key(&read(&a.path().join("switches.parquet")))
    );
    assert!(
        "0/3".parse::<Shard>().is_err()
            && "4/3".parse::<Shard>().is_err()
            && "x".parse::<Shard>().is_err()
    );
}

#[test]
fn all_failed_sweep_still_writes_typed_tables() {
    let dir = tempfile::tempdir().unwrap();
    let sw = Sweep::parse(
        "name = \"f\"\n[[group]]\nname = \"g\"\ntopology = \"fattree:k=4\"\nelp = \"kbounce:1\"\nalgo = \"clos:0\"\n",
        "f.toml",
        10,
    )
    .unwrap();
    let d = sweep::execute(
        dir.path(),
        &sw,
        &Options {
            jobs: 1,
            resume: false,
            shard: None,
        },
        |_| {},
    )
    .unwrap();
    assert_eq!(d.failed, 1);
    let nodes = read(&dir.path().join("switches.parquet"));
    assert_eq!(nodes.num_rows(), 0);
    assert!(nodes.column_by_name("acl_exact").is_some());
}

/// A group over its memory budget fails row by row with the stage named;
/// the other group, under the spec-wide budget, succeeds; budgets land in
/// the table and the estimates are the same at any job count.
#[test]
fn memory_budget_fails_only_the_scenarios_over_it() {
    let spec = r#"
name = "budget"
memory_budget = "1GiB"

[[group]]
name = "roomy"
topology = "fattree:k=4"
elp = "kbounce:1"
algo = "clos"

[[group]]
name = "tight"
topology = "fattree:k=8"
elp = "kbounce:1"
algo = "clos"
memory_budget = 4096
"#;
    let sw = Sweep::parse(spec, "b.toml", 10).unwrap();
    let mut estimates = Vec::new();
    for jobs in [1, 2] {
        let dir = tempfile::tempdir().unwrap();
        let d = sweep::execute(
            dir.path(),
            &sw,
            &Options {
                jobs,
                resume: false,
                shard: None,
            },
            |_| {},
        )
        .unwrap();
        assert_eq!(d.failed, 1);
        let runs = read(&dir.path().join("runs.parquet"));
        assert_eq!(
            strs(&runs, "status"),
            vec![Some("ok".into()), Some("failed".into())]
        );
        let err = strs(&runs, "error")[1].clone().unwrap();
        assert!(
            err.contains("memory budget exceeded in") && err.contains("4.00 KiB"),
            "{err}"
        );
        assert_eq!(
            u64s(&runs, "memory_budget_bytes"),
            vec![Some(1 << 30), Some(4096)]
        );
        let est = u64s(&runs, "memory_estimate_bytes");
        assert!(est[0].is_some_and(|e| e > 0 && e < 1 << 30) && est[1].is_none());
        estimates.push(est);
    }
    assert_eq!(estimates[0], estimates[1]);
    for (bad, key) in [
        ("memory_budget = \"lots\"\n", "memory_budget"),
        ("memory_budget = 0\n", "memory_budget"),
    ] {
        let e = Sweep::parse(
            &format!(
                "name = \"b\"\n{bad}{}",
                &spec[spec.find("[[group]]").unwrap()..]
            ),
            "b.toml",
            10,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains(&format!("b.toml: {key}")), "{e}");
    }
    let e = Sweep::parse(
        &spec.replace("memory_budget = 4096", "memory_budget = \"9 parsecs\""),
        "b.toml",
        10,
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("group 2 ('tight'), key memory_budget") && e.contains("parsecs"),
        "{e}"
    );
}

/// Every spec shipped in `datasets/` parses and expands (a renamed key or
/// a typo there would otherwise surface only when a user runs it).
#[test]
fn every_shipped_spec_is_valid() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets");
    let mut names = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml") {
            let text = std::fs::read_to_string(&path).unwrap();
            let file = path.file_name().unwrap().to_string_lossy().to_string();
            let sweep =
                Sweep::parse(&text, &file, 10_000).unwrap_or_else(|e| panic!("{file}: {e}"));
            assert!(!sweep.scenarios.is_empty(), "{file}");
            // The spec's name is its file name, so outputs say which.
            assert_eq!(format!("{}.toml", sweep.name), file);
            names.push(file);
        }
    }
    assert!(names.len() >= 8, "{names:?}");
}

/// A second writer on the same output is refused while the first holds it
/// (here: the lock held by hand, as a running sweep holds it), with nothing
/// of the first's touched; shards lock apart, so a job array can share a
/// directory; the lock goes with its holder.
#[test]
fn a_second_sweep_on_one_output_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    execute(dir.path(), false, None);
    let before = std::fs::read(dir.path().join("runs.parquet")).unwrap();
    let held = std::fs::OpenOptions::new()
        .write(true)
        .open(dir.path().join(".lock-all"))
        .unwrap();
    held.lock().unwrap();
    let sw = Sweep::parse(SPEC, "test.toml", 1000).unwrap();
    let opts = Options {
        jobs: 1,
        resume: false,
        shard: None,
    };
    let e = sweep::execute(dir.path(), &sw, &opts, |_| {}).unwrap_err();
    assert!(
        e.to_string()
            .contains("another process is writing this output (tagger sweep, pid"),
        "{e}"
    );
    assert_eq!(
        std::fs::read(dir.path().join("runs.parquet")).unwrap(),
        before
    );
    assert!(dir.path().join(".parts/all/spec.toml").exists());
    // A shard of the same sweep is not blocked by it.
    execute(dir.path(), false, Some("1/2".parse().unwrap()));
    drop(held);
    assert_eq!(execute(dir.path(), true, None).ran, 0);
}

#[test]
fn jobs_are_bounded_by_scenarios_and_cores() {
    let cores = std::thread::available_parallelism().unwrap().get();
    assert_eq!(
        sweep::effective_jobs(10_000, 5),
        5.min(sweep::JOBS_PER_CORE * cores)
    );
    assert_eq!(
        sweep::effective_jobs(10_000, 1_000_000),
        sweep::JOBS_PER_CORE * cores
    );
    assert_eq!(sweep::effective_jobs(1, 0), 1);
    assert_eq!(sweep::effective_jobs(3, 2), 2);
}

/// A tmpfs of `kib` KiB, unmounted on drop; `None` where this process may
/// not mount (not root, or no tmpfs).
struct SmallDisk(tempfile::TempDir);

impl SmallDisk {
    fn mount(kib: u64) -> Option<Self> {
        let dir = tempfile::tempdir().ok()?;
        let ok = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={kib}k"), "tmpfs"])
            .arg(dir.path())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        ok.then_some(SmallDisk(dir))
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg(self.0.path())
            .status();
    }
}

/// The disk fills while the merged pair is written: the old pair stays as
/// it was (no new runs file beside an old switches file), no temporary is
/// left, and once there is room `--resume` publishes the new pair.
#[test]
fn a_full_disk_never_leaves_a_mixed_pair() {
    let Some(disk) = SmallDisk::mount(4096) else {
        eprintln!("skipped: cannot mount a tmpfs here (needs root)");
        return;
    };
    let out = disk.0.path().join("out");
    execute(&out, false, None);
    let pair = |f: &str| std::fs::read(out.join(f)).unwrap();
    let (runs, switches) = (pair("runs.parquet"), pair("switches.parquet"));
    let need =
        (runs.len() as u64).div_ceil(4096) * 4096 + (switches.len() as u64).div_ceil(4096) * 4096;
    // Leave about half of what the new pair needs free, beyond the parts.
    let free = {
        let s = nix_free(disk.0.path());
        s.saturating_sub(need / 2)
    };
    std::fs::write(disk.0.path().join("filler"), vec![0u8; free as usize]).unwrap();
    let sw = Sweep::parse(SPEC, "test.toml", 1000).unwrap();
    let opts = Options {
        jobs: 1,
        resume: false,
        shard: None,
    };
    let e = sweep::execute(&out, &sw, &opts, |_| {}).unwrap_err();
    assert!(e.to_string().contains("No space left on device"), "{e}");
    // It was the merge that failed: every scenario's parts were written.
    let parts = std::fs::read_dir(out.join(".parts/all")).unwrap().count();
    assert_eq!(
        parts,
        2 * sw.scenarios.len() + 1,
        "parts and the spec stamp"
    );
    assert!(pair("runs.parquet") == runs, "runs.parquet changed");
    assert!(
        pair("switches.parquet") == switches,
        "switches.parquet changed"
    );
    let temps: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".tmp-"))
        .collect();
    assert!(temps.is_empty(), "{temps:?}");
    std::fs::remove_file(disk.0.path().join("filler")).unwrap();
    let resumed = sweep::execute(
        &out,
        &sw,
        &Options {
            resume: true,
            ..opts
        },
        |_| {},
    )
    .unwrap();
    assert_eq!(resumed.ran, 0);
    let fresh = tempfile::tempdir().unwrap();
    execute(fresh.path(), false, None);
    for f in ["runs.parquet", "switches.parquet"] {
        assert_eq!(
            rows_by_key(&read(&out.join(f))),
            rows_by_key(&read(&fresh.path().join(f))),
            "{f}"
        );
    }
}

/// Free bytes on the filesystem of `p` (from `df`, to stay dependency-free).
fn nix_free(p: &Path) -> u64 {
    let o = std::process::Command::new("df")
        .args(["-B1", "--output=avail"])
        .arg(p)
        .output()
        .unwrap();
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .nth(1)
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

/// When the second file of the pair cannot be written (here: a directory
/// stands where it goes), the first is not published either.
#[test]
fn the_pair_is_published_together_or_not_at_all() {
    let dir = tempfile::tempdir().unwrap();
    execute(dir.path(), false, None);
    let runs = std::fs::read(dir.path().join("runs.parquet")).unwrap();
    std::fs::remove_file(dir.path().join("switches.parquet")).unwrap();
    std::fs::create_dir(dir.path().join("switches.parquet")).unwrap();
    let sw = Sweep::parse(&SPEC.replace("seed = 3", "seed = 5"), "test.toml", 1000).unwrap();
    let opts = Options {
        jobs: 2,
        resume: false,
        shard: None,
    };
    let e = sweep::execute(dir.path(), &sw, &opts, |_| {}).unwrap_err();
    assert!(e.to_string().contains("switches.parquet"), "{e}");
    assert!(
        std::fs::read(dir.path().join("runs.parquet")).unwrap() == runs,
        "runs.parquet was replaced without its switches file"
    );
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".tmp-"))
        .collect();
    assert!(names.is_empty(), "{names:?}");
}

/// `--resume` trusts a scenario only when both its parts are there and
/// readable; a lost switches part or a corrupt part runs it again, and
/// temporaries of a run that died are cleaned.
#[test]
fn resume_checks_both_parts_and_cleans_temporaries() {
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    execute(a.path(), false, None);
    execute(b.path(), false, None);
    let parts = b.path().join(".parts/all");
    std::fs::remove_file(parts.join("0.switches.parquet")).unwrap();
    std::fs::write(parts.join("1.runs.parquet"), b"PAR1 not really").unwrap();
    std::fs::write(parts.join(".7.runs.parquet.tmp-99999-0"), b"half").unwrap();
    std::fs::write(b.path().join(".runs.parquet.tmp-99999-3"), b"half").unwrap();
    let resumed = execute(b.path(), true, None);
    assert_eq!((resumed.ran, resumed.skipped), (2, 9));
    for f in ["runs.parquet", "switches.parquet"] {
        assert_eq!(
            rows_by_key(&read(&a.path().join(f))),
            rows_by_key(&read(&b.path().join(f))),
            "{f}"
        );
    }
    let temps: Vec<String> = std::fs::read_dir(&parts)
        .unwrap()
        .chain(std::fs::read_dir(b.path()).unwrap())
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".tmp-"))
        .collect();
    assert!(temps.is_empty(), "{temps:?}");
}

/// The spec's up-front compatibility check agrees with what the pipeline
/// does, on every family: a grid point it refuses fails when run, and one
/// it accepts runs.
#[test]
fn up_front_checks_agree_with_the_pipeline() {
    use tagger::cycle::CycleBackend;
    use tagger::elp::{ElpSet, ElpSpec};
    use tagger::tagging::{Algo, tag};
    use tagger::topo::TopologySpec;
    for topo in [
        "fattree:k=4",
        "leafspine:leaves=3,spines=2",
        "bcube:n=2,k=1",
        "hyperx:l=2,s=3",
        "jellyfish:n=10,ports=5,r=4",
    ] {
        for (elp, algo) in [
            ("kbounce:1", "greedy"),
            ("dor", "greedy"),
            ("shortest", "clos"),
            ("shortest", "greedy"),
        ] {
            let spec = format!(
                "name = \"c\"\n[[group]]\nname = \"g\"\ntopology = \"{topo}\"\nelp = \"{elp}\"\nalgo = \"{algo}\"\n"
            );
            let accepted = Sweep::parse(&spec, "c.toml", 10);
            let t = TopologySpec::parse(topo).unwrap().build().unwrap();
            let runs = ElpSet::build(&t, &ElpSpec::parse(elp).unwrap())
                .and_then(|e| tag(&t, &e, algo.parse::<Algo>().unwrap(), CycleBackend::Ordered));
            assert_eq!(
                accepted.is_ok(),
                runs.is_ok(),
                "{topo} {elp} {algo}: spec {:?}, run {:?}",
                accepted.err().map(|e| e.to_string()),
                runs.err().map(|e| e.to_string())
            );
        }
    }
}

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
    go(b.path(), 3, false, None);
    std::fs::remove_file(b.path().join("failures.parquet")).unwrap();
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
