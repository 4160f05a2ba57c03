//! Sweeps end to end: Parquet read back row by row, determinism across job
//! counts, and a failing grid point recorded while the rest succeed.

use arrow_array::cast::AsArray;
use arrow_array::types::{UInt32Type, UInt64Type};
use arrow_array::{Array, RecordBatch};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use std::path::Path;
use tagger::sweep::{self, Sweep};

const SPEC: &str = r#"
name = "test"
seed = 3

[[group]]
name = "ft"
topology = "fattree"
params = { k = [4, 6] }
elp = ["kbounce:1", "dor"]      # dor does not apply to fat-trees: failed rows
algo = ["clos", "greedy"]

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
    let reader = ParquetRecordBatchReaderBuilder::try_new(f)
        .unwrap()
        .build()
        .unwrap();
    let batches: Vec<RecordBatch> = reader.map(Result::unwrap).collect();
    arrow_select_concat(&batches)
}

fn arrow_select_concat(batches: &[RecordBatch]) -> RecordBatch {
    assert_eq!(batches.len(), 1, "small tables come back as one batch");
    batches[0].clone()
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
    let out = sweep::run_all(&sw.scenarios, jobs, |_| {});
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
                assert_eq!(prio[i], Some(s.priorities));
                assert_eq!(u64s(&runs, "acl_exact_max")[i], Some(s.acl_exact_max));
            }
            Err(e) => {
                assert_eq!(status[i].as_deref(), Some("failed"));
                assert_eq!(elp[i].as_deref(), Some("dor"));
                assert!(e.contains("dor needs a HyperX or BCube"), "{e}");
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
        4
    );
    // Clos gives K+1 on the fat-trees.
    for (i, o) in outcomes.iter().enumerate() {
        if o.scenario.algo.name() == "clos" && o.result.is_ok() {
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
        .map(|s| s.acl_exact_total)
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
