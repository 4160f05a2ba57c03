//! `tagger merge DIR`: the shards of a sweep (`--shard I/N`, e.g. the tasks
//! of a cluster job array) combined into one `runs.parquet` and one
//! `switches.parquet`, rows in scenario order, as a single-machine sweep of
//! the same spec writes them.

use super::rows_of;
use super::store::{SHARD_KEY, lock, publish_pair};
use crate::error::{Error, Result, TableFault};
use crate::output::parquet::{differing_key, meta_value, read_metadata as meta_of};
use arrow_array::{Array, RecordBatch};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What a merge combined.
#[derive(Debug)]
pub struct Merged {
    /// Shards combined.
    pub shards: u64,
    /// Runs (scenarios) merged.
    pub runs: usize,
    /// Of those, failed.
    pub failed: usize,
    /// The merged `runs.parquet`.
    pub runs_path: PathBuf,
    /// The merged `switches.parquet`.
    pub switches_path: PathBuf,
    /// `failures.parquet`, when the shards carry failure trials.
    pub failures_path: Option<PathBuf>,
    /// `growth.parquet`, when the shards carry growth paths.
    pub growth_path: Option<PathBuf>,
}

/// One shard's files.
struct ShardFiles {
    runs: PathBuf,
    switches: PathBuf,
    failures: Option<PathBuf>,
    growth: Option<PathBuf>,
}

/// Merges the shard files in `dir`.
///
/// # Errors
/// [`Error::Merge`] when there are no shards, shards of different counts,
/// specs or engine versions, a shard without its switches file, missing
/// shards (named by index), a file whose `tagger.shard` metadata is not
/// the shard its name says, or scenario ids that are not each of the
/// spec's once in its own shard; Parquet and I/O errors naming the file.
pub fn merge(dir: &Path) -> Result<Merged> {
    let bad = |reason: String| Error::Merge {
        dir: dir.to_path_buf(),
        reason,
    };
    let (count, shards) = shard_files(dir)?;
    // A table some shards have, all must have.
    let all_or_none = |table: &str, has: &dyn Fn(&ShardFiles) -> bool| -> Result<bool> {
        let with = shards.values().filter(|f| has(f)).count();
        if with != 0 && with != shards.len() {
            let (&(_, i), _) = shards
                .iter()
                .find(|(_, f)| !has(f))
                .expect("some shard lacks it");
            return Err(bad(format!(
                "shard {i} of {count} has no {table}-shard-{i}-of-{count}.parquet while other shards do"
            )));
        }
        Ok(with > 0)
    };
    let with_failures = all_or_none("failures", &|f| f.failures.is_some())?;
    let with_growth = all_or_none("growth", &|f| f.growth.is_some())?;
    let lock_file = lock(dir, "all", "merge")?;
    let (mut fails, mut growth) = (Vec::new(), Vec::new());
    let mut meta: Option<(PathBuf, Vec<(String, String)>)> = None;
    let (mut runs, mut nodes) = (Vec::new(), Vec::new());
    // Each scenario id, and the shard whose runs file holds it.
    let mut owner: BTreeMap<u64, u64> = BTreeMap::new();
    for (&(c, i), f) in &shards {
        let m = meta_of(&f.runs)?;
        // A file holds the shard its metadata says, whatever its name.
        if let Some(why) = holds_its_shard(f, &m, i, c)? {
            return Err(bad(why));
        }
        let before = runs.len();
        runs.extend(crate::output::parquet::read_batches(&f.runs)?);
        for r in rows_of(&runs[before..])? {
            let id = r.scenario_id;
            if id % c != i - 1 {
                return Err(bad(format!(
                    "{} holds scenario {id}, which shard {} of {c} runs",
                    f.runs.display(),
                    id % c + 1
                )));
            }
            if let Some(j) = owner.insert(id, i) {
                return Err(bad(format!(
                    "scenario {id} appears twice (shard {j} and shard {i} of {c})"
                )));
            }
        }
        match &meta {
            None => meta = Some((f.runs.clone(), m)),
            Some((first, want)) => {
                if let Some(key) = differing_key(&m, want, &["tagger.spec", "tagger.version"]) {
                    return Err(bad(format!(
                        "{} and {} differ in {key}: shards of different sweeps or engine versions",
                        first.display(),
                        f.runs.display()
                    )));
                }
            }
        }
        nodes.extend(crate::output::parquet::read_batches(&f.switches)?);
        if let Some(p) = &f.failures {
            fails.extend(crate::output::parquet::read_batches(p)?);
        }
        if let Some(p) = &f.growth {
            growth.extend(crate::output::parquet::read_batches(p)?);
        }
    }
    let (first, mut meta) = meta.expect("at least one shard");
    let Some(spec) = meta_value(&meta, "tagger.spec") else {
        return Err(bad(format!(
            "{} carries no tagger.spec metadata: not a tagger shard",
            first.display()
        )));
    };
    if let Some(why) = not_every_scenario_once(&owner, spec) {
        return Err(bad(why));
    }
    // The merged files are the whole sweep, no shard.
    meta.retain(|(k, _)| k != SHARD_KEY);
    let runs = by_scenario(&runs, &first)?;
    let nodes = by_scenario(&nodes, &first)?;
    let (runs_path, switches_path) = (dir.join("runs.parquet"), dir.join("switches.parquet"));
    let kv: Vec<(&str, String)> = meta.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
    publish_pair(
        (&runs_path, std::slice::from_ref(&runs)),
        (&switches_path, std::slice::from_ref(&nodes)),
        &kv,
    )?;
    let extra = |has: bool, table: &str, batches: &[RecordBatch]| -> Result<Option<PathBuf>> {
        if !has {
            return Ok(None);
        }
        let path = dir.join(format!("{table}.parquet"));
        let merged = by_scenario(batches, &first)?;
        crate::output::parquet::write_batches(&path, std::slice::from_ref(&merged), &kv)?;
        Ok(Some(path))
    };
    let failures_path = extra(with_failures, "failures", &fails)?;
    let growth_path = extra(with_growth, "growth", &growth)?;
    let rows = rows_of(std::slice::from_ref(&runs))?;
    super::release(dir, "all", lock_file);
    Ok(Merged {
        shards: count,
        runs: rows.len(),
        failed: rows.iter().filter(|r| r.error.is_some()).count(),
        runs_path,
        switches_path,
        failures_path,
        growth_path,
    })
}

/// Shard files by (count, index).
type Shards = BTreeMap<(u64, u64), ShardFiles>;

/// The shard files in `dir`, by (count, index), from their
/// `runs-shard-I-of-N.parquet` names: every shard of one count present,
/// each with its switches file.
///
/// # Errors
/// [`Error::Merge`] naming what is missing or mixed; I/O errors.
fn shard_files(dir: &Path) -> Result<(u64, Shards)> {
    let bad = |reason: String| Error::Merge {
        dir: dir.to_path_buf(),
        reason,
    };
    let names: Vec<String> = std::fs::read_dir(dir)
        .map_err(|e| Error::io(dir, e))?
        .filter_map(|e| Some(e.ok()?.file_name().to_str()?.to_string()))
        .collect();
    let mut shards = Shards::new();
    for n in &names {
        let Some(rest) = n
            .strip_prefix("runs-shard-")
            .and_then(|r| r.strip_suffix(".parquet"))
        else {
            continue;
        };
        let Some((i, c)) = rest
            .split_once("-of-")
            .and_then(|(i, c)| Some((i.parse::<u64>().ok()?, c.parse::<u64>().ok()?)))
        else {
            continue;
        };
        let switches = format!("switches-shard-{i}-of-{c}.parquet");
        if !names.contains(&switches) {
            return Err(bad(format!("{n} has no {switches} beside it")));
        }
        let failures = format!("failures-shard-{i}-of-{c}.parquet");
        let growth = format!("growth-shard-{i}-of-{c}.parquet");
        shards.insert(
            (c, i),
            ShardFiles {
                runs: dir.join(n),
                switches: dir.join(switches),
                failures: names.contains(&failures).then(|| dir.join(failures)),
                growth: names.contains(&growth).then(|| dir.join(growth)),
            },
        );
    }
    let Some(&(count, _)) = shards.keys().next() else {
        return Err(bad(
            "no shard files (runs-shard-I-of-N.parquet) to merge".into()
        ));
    };
    if let Some(&(other, _)) = shards.keys().find(|k| k.0 != count) {
        return Err(bad(format!(
            "shards of different sweeps: some are of {count}, some of {other}"
        )));
    }
    let missing: Vec<String> = (1..=count)
        .filter(|i| !shards.contains_key(&(count, *i)))
        .map(|i| i.to_string())
        .collect();
    if !missing.is_empty() {
        return Err(bad(format!(
            "missing shard{} {} of {count}",
            if missing.len() > 1 { "s" } else { "" },
            missing.join(", ")
        )));
    }
    Ok((count, shards))
}

/// Why a shard's files do not hold shard `i` of `c`, as their names say
/// (each file's `tagger.shard` metadata; `runs_meta` is its runs file's).
fn holds_its_shard(
    f: &ShardFiles,
    runs_meta: &[(String, String)],
    i: u64,
    c: u64,
) -> Result<Option<String>> {
    let mut files: Vec<&PathBuf> = vec![&f.switches];
    files.extend(f.failures.iter().chain(f.growth.iter()));
    let check = |file: &Path, kv: &[(String, String)]| {
        let said = meta_value(kv, SHARD_KEY);
        (said != Some(format!("{i}/{c}").as_str())).then(|| {
            format!(
                "{} holds {}, not shard {i} of {c} as its name says",
                file.display(),
                said.map_or("no shard metadata".to_string(), |s| format!("shard {s}"))
            )
        })
    };
    if let Some(why) = check(&f.runs, runs_meta) {
        return Ok(Some(why));
    }
    for file in files {
        if let Some(why) = check(file, &meta_of(file)?) {
            return Ok(Some(why));
        }
    }
    Ok(None)
}

/// Why the scenario ids held (`owner`) are not each scenario of the spec
/// once. The spec is parsed again where it can be (a switch file it names
/// may not be on this machine); otherwise the ids held must at least run
/// from 0 without a gap.
fn not_every_scenario_once(owner: &BTreeMap<u64, u64>, spec: &str) -> Option<String> {
    let expected = super::Sweep::parse(spec, "tagger.spec", usize::MAX)
        .ok()
        .map(|s| s.scenarios.len() as u64);
    let want = expected.unwrap_or_else(|| owner.keys().next_back().map_or(0, |&m| m + 1));
    let missing: Vec<String> = (0..want)
        .filter(|id| !owner.contains_key(id))
        .take(10)
        .map(|id| id.to_string())
        .collect();
    if !missing.is_empty() {
        return Some(format!(
            "scenario{} {} of the spec's {want} missing from the shards",
            if missing.len() > 1 { "s" } else { "" },
            missing.join(", ")
        ));
    }
    owner
        .range(want..)
        .next()
        .map(|(&extra, _)| format!("scenario {extra} is not one of the spec's {want}"))
}

/// The batches' rows as one batch, stably ordered by `scenario_id`: a
/// scenario's rows come from one shard, in its order.
fn by_scenario(batches: &[RecordBatch], origin: &Path) -> Result<RecordBatch> {
    let pq = |cause: TableFault| Error::Parquet {
        path: origin.to_path_buf(),
        cause,
    };
    let first = batches
        .first()
        .ok_or_else(|| pq("no record batch".into()))?;
    let mut order: Vec<(u64, usize, usize)> = Vec::new();
    for (b, batch) in batches.iter().enumerate() {
        if batch.schema() != first.schema() {
            return Err(pq("shards have different columns".into()));
        }
        // Through the column's declaration: a missing or mistyped
        // scenario_id is an error naming it, not a panic.
        let ids = super::tables::ScenarioOf::read_rows(batch)
            .map_err(|e| pq(TableFault::Column(Box::new(e))))?;
        for (r, id) in ids.iter().enumerate() {
            let id = id.ok_or_else(|| pq(format!("row {r} has no scenario_id").into()))?;
            order.push((id.scenario_id, b, r));
        }
    }
    order.sort_by_key(|&(id, _, _)| id);
    let picks: Vec<(usize, usize)> = order.iter().map(|&(_, b, r)| (b, r)).collect();
    let columns = (0..first.num_columns())
        .map(|c| {
            let cols: Vec<&dyn Array> = batches.iter().map(|b| b.column(c).as_ref()).collect();
            arrow_select::interleave::interleave(&cols, &picks)
                .map_err(|e| pq(TableFault::Arrow(e)))
        })
        .collect::<Result<Vec<_>>>()?;
    RecordBatch::try_new(first.schema(), columns).map_err(|e| pq(TableFault::Arrow(e)))
}
