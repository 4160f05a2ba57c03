//! Output: atomic file writes and the Parquet tables of a sweep.

pub mod parquet;

use crate::error::{Error, Result};
use std::io::Write;
use std::path::{Path, PathBuf};

/// A temporary sibling of `path`, unique to this process and call.
pub fn temp_path(path: &Path) -> PathBuf {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let name = path
        .file_name()
        .map_or("out".into(), |n| n.to_string_lossy().into_owned());
    path.with_file_name(format!(
        ".{name}.tmp-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ))
}

/// Writes via `write` into a temporary sibling of `path`, then renames it into
/// place, so readers never see a half-written file. On error the temporary is
/// removed and `path` is untouched.
///
/// # Errors
/// [`Error::Io`] naming the path.
pub fn write_atomic(
    path: &Path,
    write: impl FnOnce(&mut std::fs::File) -> std::io::Result<()>,
) -> Result<()> {
    let tmp = temp_path(path);
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        write(&mut f)?;
        f.flush()?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(Error::io(path, e));
    }
    Ok(())
}

/// [`write_atomic`] for a string.
///
/// # Errors
/// As [`write_atomic`].
pub fn write_string(path: &Path, text: &str) -> Result<()> {
    write_atomic(path, |f| f.write_all(text.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_leaves_nothing_on_failure() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.txt");
        write_string(&p, "hello").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "hello");
        let err = write_atomic(&p, |_| Err(std::io::Error::other("boom"))).unwrap_err();
        assert!(err.to_string().contains("x.txt"));
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "hello");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        let missing = dir.path().join("no/such/dir/y.txt");
        assert!(write_string(&missing, "x").is_err());
    }
}
