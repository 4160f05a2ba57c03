use super::*;

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
                // The cause stays typed: `clos:1` refusing a 2-bounce ELP.
                assert!(
                    matches!(e, tagger::sweep::Failed::Run(tagger::Error::Algo { algo, .. }) if algo == "clos:1"),
                    "{e:?}"
                );
                let e = e.to_string();
                assert!(e.contains("not within kbounce:1"), "{e}");
                assert_eq!(strs(&runs, "error")[i].as_deref(), Some(e.as_str()));
                assert_eq!(strs(&runs, "error_kind")[i].as_deref(), Some("algo"));
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
            strs(&runs, "error_kind"),
            vec![None, Some("memory_budget".into())]
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
