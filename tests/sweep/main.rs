//! Sweeps end to end: Parquet read back row by row, determinism across job
//! counts, and a failing grid point recorded while the rest succeed.
//!
//! The fixtures (specs, read-back helpers) are here; the tests of the
//! tables (`tables.rs`), of resuming, shards and the published pair
//! (`resume.rs`), of the shipped specs and up-front checks (`specs.rs`)
//! and of failure and growth sweeps (`what_if.rs`) each run real sweeps.

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

/// A sweep of `spec` into `dir` that dies at its merge (a directory stands
/// where `runs.parquet` goes): every scenario's parts are left, as an
/// interrupted sweep leaves them, and no table is published. A finished
/// sweep keeps no parts, so this is how a test gets parts to resume from.
fn interrupted(dir: &Path, spec: &str, jobs: usize) {
    let sw = Sweep::parse(spec, "test.toml", 1000).unwrap();
    let _ = std::fs::remove_file(dir.join("runs.parquet"));
    std::fs::create_dir_all(dir.join("runs.parquet")).unwrap();
    let opts = Options {
        jobs,
        resume: false,
        shard: None,
    };
    let e = sweep::execute(dir, &sw, &opts, |_| {}).unwrap_err();
    assert!(e.to_string().contains("runs.parquet"), "{e}");
    std::fs::remove_dir(dir.join("runs.parquet")).unwrap();
    assert!(dir.join(".parts/all/spec.toml").exists());
}

mod resume;
mod specs;
mod tables;
mod what_if;
