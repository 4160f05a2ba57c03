use super::*;

#[test]
fn interrupted_then_resumed_equals_uninterrupted() {
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let whole = execute(a.path(), false, None);
    assert_eq!((whole.ran, whole.skipped, whole.failed), (11, 0, 2));
    // Interrupt: the final files never appeared and scenarios 2, 5 and 9 had
    // not finished.
    interrupted(b.path(), SPEC, 2);
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
    // A finished sweep leaves only its tables; resumed, it finds them
    // and runs nothing; another spec is refused.
    let mut left: Vec<String> = std::fs::read_dir(b.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["runs.parquet", "switches.parquet"]);
    let again = execute(b.path(), true, None);
    assert_eq!((again.ran, again.skipped, again.failed), (0, 11, 2));
    assert_eq!(again.rows.len(), resumed.rows.len());
    assert!(!b.path().join(".parts").exists());
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

/// A second writer on the same output is refused while the first holds it
/// (here: the lock held by hand, as a running sweep holds it), with nothing
/// of the first's touched; shards lock apart, so a job array can share a
/// directory; the lock goes with its holder.
#[test]
fn a_second_sweep_on_one_output_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    execute(dir.path(), false, None);
    let before = std::fs::read(dir.path().join("runs.parquet")).unwrap();
    // A finished sweep removes its lock file; a running one holds it.
    assert!(!dir.path().join(".lock-all").exists());
    let held = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(dir.path().join(".lock-all"))
        .unwrap();
    std::io::Write::write_all(&mut &held, b"tagger sweep, pid 1").unwrap();
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
    assert!(!dir.path().join(".parts").exists());
    // A shard of the same sweep is not blocked by it.
    execute(dir.path(), false, Some("1/2".parse().unwrap()));
    drop(held);
    assert_eq!(execute(dir.path(), true, None).ran, 0);
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
    // What the parts take (a finished sweep keeps none): an interrupted
    // sweep's, measured on the same disk and removed.
    let probe = disk.0.path().join("probe");
    let before = nix_free(disk.0.path());
    super::interrupted(&probe, SPEC, 1);
    let parts_bytes = before - nix_free(disk.0.path());
    std::fs::remove_dir_all(&probe).unwrap();
    // Leave about half of what the new pair needs free, beyond the parts.
    let free = {
        let s = nix_free(disk.0.path());
        s.saturating_sub(need / 2 + parts_bytes)
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
    interrupted(b.path(), SPEC, 2);
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
    assert!(!parts.exists(), "a finished sweep keeps no parts");
    let temps: Vec<String> = std::fs::read_dir(b.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".tmp-"))
        .collect();
    assert!(temps.is_empty(), "{temps:?}");
}
