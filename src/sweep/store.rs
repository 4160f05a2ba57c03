//! The sweep's on-disk store: the output directory's lock, each
//! scenario's part files, temporaries left by a process that died, and the
//! pair of tables published together.

use super::Sweep;
use super::VERSION;
use super::outcome::Outcome;
use super::tables::tables;
use crate::error::{Error, Result};
use crate::output::parquet::write_batches;
use arrow_array::RecordBatch;
use std::path::Path;

pub(super) fn meta(sweep: &Sweep, shard: Option<super::Shard>) -> Vec<(&'static str, String)> {
    let mut m = vec![
        ("tagger.sweep", sweep.name.clone()),
        ("tagger.spec", sweep.text.clone()),
        ("tagger.version", VERSION.to_string()),
    ];
    // Which shard a file holds, so that `merge` does not trust its name.
    if let Some(sh) = shard {
        m.push((SHARD_KEY, format!("{}/{}", sh.index, sh.count)));
    }
    m
}

/// The metadata key naming a shard file's shard (`I/N`).
pub(super) const SHARD_KEY: &str = "tagger.shard";

/// Takes the exclusive lock of `dir`'s output for `tag` (all, or a shard):
/// held while the returned file lives, released by the OS if the process
/// dies. Shards of one sweep lock apart, so a job array shares a directory.
/// `command` (`sweep`, `merge`) is written into the lock file, so a
/// refused process is told who holds it.
pub(super) fn lock(dir: &Path, tag: &str, command: &str) -> Result<std::fs::File> {
    use std::io::{Read, Seek, Write};
    let path = dir.join(format!(".lock-{tag}"));
    let io = |e| Error::io(path.clone(), e);
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(io)?;
    match f.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => {
            let mut holder = String::new();
            let _ = f.read_to_string(&mut holder);
            let holder = holder.trim();
            return Err(Error::Busy {
                path: dir.to_path_buf(),
                holder: if holder.is_empty() {
                    "process unknown".into()
                } else {
                    holder.to_string()
                },
            });
        }
        Err(std::fs::TryLockError::Error(e)) => return Err(io(e)),
    }
    f.set_len(0).map_err(io)?;
    f.rewind().map_err(io)?;
    write!(f, "tagger {command}, pid {}", std::process::id()).map_err(io)?;
    Ok(f)
}

/// Publishes the merged pair so that a reader never sees a new runs file
/// beside an old switches file: both are written in full under temporary
/// names first (a full disk fails there, leaving the old pair as it was),
/// then renamed; if the second rename fails, the old runs file (kept as a
/// hard link) is put back. A crash between the two renames leaves the
/// parts, and `--resume` publishes the pair again.
pub(super) fn publish_pair(
    (runs_path, runs): (&Path, &[RecordBatch]),
    (switches_path, nodes): (&Path, &[RecordBatch]),
    meta: &[(&str, String)],
) -> Result<()> {
    let tmp_runs = crate::output::temp_path(runs_path);
    let tmp_switches = crate::output::temp_path(switches_path);
    let backup = crate::output::temp_path(runs_path);
    let clean = || {
        let _ = std::fs::remove_file(&tmp_runs);
        let _ = std::fs::remove_file(&tmp_switches);
        let _ = std::fs::remove_file(&backup);
    };
    let result = (|| {
        write_batches(&tmp_runs, runs, meta)?;
        write_batches(&tmp_switches, nodes, meta)?;
        let had_runs = std::fs::hard_link(runs_path, &backup).is_ok();
        std::fs::rename(&tmp_runs, runs_path).map_err(|e| Error::io(runs_path, e))?;
        if let Err(e) = std::fs::rename(&tmp_switches, switches_path) {
            if had_runs {
                let _ = std::fs::rename(&backup, runs_path);
            } else {
                let _ = std::fs::remove_file(runs_path);
            }
            return Err(Error::io(switches_path, e));
        }
        Ok(())
    })();
    clean();
    result
}

/// Writes a scenario's parts, its failures part (with `failures` in the
/// spec) and switches part (empty for a failed scenario) first: a runs part
/// present means the others were written.
pub(super) fn write_part(parts: &Path, sweep: &Sweep, o: &Outcome, threads: usize) -> Result<()> {
    let t = tables(&sweep.name, std::slice::from_ref(o), threads);
    let id = o.scenario.id;
    if sweep.has_failures() {
        t.fails
            .write(&parts.join(format!("{id}.failures.parquet")), &[])?;
    }
    if sweep.has_growth() {
        t.growth
            .write(&parts.join(format!("{id}.growth.parquet")), &[])?;
    }
    t.nodes
        .write(&parts.join(format!("{id}.switches.parquet")), &[])?;
    // The runs part last: it marks the scenario done.
    t.runs.write(&parts.join(format!("{id}.runs.parquet")), &[])
}

/// Removes the temporaries [`crate::output::write_atomic`] leaves when a
/// process dies mid-write: in `dir`, those of `of` only (other shards may
/// be writing theirs), or all of them.
pub(super) fn remove_temporaries(dir: &Path, of: Option<&Path>) -> Result<()> {
    let prefix = match of.and_then(Path::file_name) {
        Some(name) => format!(".{}.tmp-", name.to_string_lossy()),
        None => ".".to_string(),
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(());
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with(&prefix) && name.contains(".tmp-") {
            let p = e.path();
            std::fs::remove_file(&p).map_err(|err| Error::io(p, err))?;
        }
    }
    Ok(())
}

/// Writes `runs.parquet` and `switches.parquet` (and `failures.parquet`,
/// `growth.parquet` when the spec has them) for outcomes already in
/// memory (no parts, no resume); see [`super::execute`] for the sweep runner.
///
/// # Errors
/// I/O or Parquet errors naming the file.
pub fn write(dir: &Path, sweep: &Sweep, outcomes: &[Outcome], threads: usize) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let t = tables(&sweep.name, outcomes, threads);
    t.runs
        .write(&dir.join("runs.parquet"), &meta(sweep, None))?;
    t.nodes
        .write(&dir.join("switches.parquet"), &meta(sweep, None))?;
    if sweep.has_failures() {
        t.fails
            .write(&dir.join("failures.parquet"), &meta(sweep, None))?;
    }
    if sweep.has_growth() {
        t.growth
            .write(&dir.join("growth.parquet"), &meta(sweep, None))?;
    }
    Ok(())
}
