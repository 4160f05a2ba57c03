//! Output: atomic file writes and the Parquet tables of a sweep.

pub mod parquet;
pub mod record;

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

/// Writes via `write` to `path`, so that readers never see a half-written
/// file:
///
/// - a regular file (or a new one) is written to a temporary sibling and
///   renamed into place; on error the temporary is removed and `path` is
///   untouched;
/// - a symbolic link is followed: its target is what gets replaced, and the
///   link stays a link;
/// - a device, FIFO or socket is written in place (a rename would replace
///   it with a regular file); its errors (`/dev/full`: no space) are
///   errors;
/// - `-` is standard output.
///
/// # Errors
/// [`Error::Io`] naming the path.
pub fn write_atomic(
    path: &Path,
    write: impl FnOnce(&mut (dyn Write + Send)) -> std::io::Result<()>,
) -> Result<()> {
    write_atomic_with(path, |f| write(f).map_err(|e| Error::io(shown(path), e)))
}

/// `path` as errors name it: `-` is standard output.
pub fn shown(path: &Path) -> &Path {
    if path == Path::new("-") {
        Path::new("standard output")
    } else {
        path
    }
}

/// [`write_atomic`] for a writer whose own failures are not I/O errors (a
/// Parquet encoder, a path enumeration that can stop): `write`'s error is
/// returned as it is, the file left untouched as on any error; the
/// function's own I/O (create, flush, sync, rename) fails as
/// [`Error::Io`], converted into `E`.
///
/// # Errors
/// `write`'s error, or the I/O error naming the path.
pub fn write_atomic_with<E: From<Error>>(
    path: &Path,
    write: impl FnOnce(&mut (dyn Write + Send)) -> std::result::Result<(), E>,
) -> std::result::Result<(), E> {
    /// Where a write failed: in `write`, or in this function's own I/O.
    enum Failed<E> {
        Write(E),
        Io(std::io::Error),
    }
    impl<E> From<std::io::Error> for Failed<E> {
        fn from(e: std::io::Error) -> Self {
            Failed::Io(e)
        }
    }
    let settle = |shown: &Path, r: std::result::Result<(), Failed<E>>| match r {
        Ok(()) => Ok(()),
        Err(Failed::Write(e)) => Err(e),
        Err(Failed::Io(e)) => Err(E::from(Error::io(shown, e))),
    };
    if path == Path::new("-") {
        let mut out = std::io::BufWriter::new(std::io::stdout());
        let r = write(&mut out)
            .map_err(Failed::Write)
            .and_then(|()| out.flush().map_err(Failed::Io));
        return settle(shown(path), r);
    }
    let target = follow_links(path).map_err(|e| E::from(Error::io(path, e)))?;
    match std::fs::metadata(&target) {
        Ok(m) if m.is_dir() => {
            return Err(E::from(Error::io(
                path,
                std::io::Error::new(std::io::ErrorKind::IsADirectory, "is a directory"),
            )));
        }
        Ok(m) if !m.is_file() => {
            let result = (|| {
                let mut f = std::fs::OpenOptions::new().write(true).open(&target)?;
                write(&mut f).map_err(Failed::Write)?;
                Ok(f.flush()?)
            })();
            return settle(path, result);
        }
        _ => {}
    }
    let tmp = temp_path(&target);
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        write(&mut f).map_err(Failed::Write)?;
        f.flush()?;
        f.sync_all()?;
        Ok(std::fs::rename(&tmp, &target)?)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    settle(path, result)
}

/// `path` with symbolic links followed to the end, dangling ones too (the
/// file they name is created).
fn follow_links(path: &Path) -> std::io::Result<PathBuf> {
    let mut p = path.to_path_buf();
    // Linux gives up after 40 links; so do we.
    for _ in 0..40 {
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let t = std::fs::read_link(&p)?;
                p = match p.parent() {
                    Some(dir) if t.is_relative() => dir.join(t),
                    _ => t,
                };
            }
            _ => return Ok(p),
        }
    }
    Err(std::io::Error::other("too many levels of symbolic links"))
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

    /// A link's target is replaced and the link stays; a dangling link
    /// creates its target; a directory is an error.
    #[test]
    fn links_are_followed() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.txt");
        std::fs::write(&real, "old").unwrap();
        let link = dir.path().join("link.txt");
        std::os::unix::fs::symlink("real.txt", &link).unwrap();
        let chain = dir.path().join("chain.txt");
        std::os::unix::fs::symlink(&link, &chain).unwrap();
        write_string(&chain, "new").unwrap();
        assert_eq!(std::fs::read_to_string(&real).unwrap(), "new");
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert!(
            std::fs::symlink_metadata(&chain)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        let dangling = dir.path().join("dangling.txt");
        std::os::unix::fs::symlink("made.txt", &dangling).unwrap();
        write_string(&dangling, "x").unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.path().join("made.txt")).unwrap(),
            "x"
        );
        let loop_a = dir.path().join("a");
        std::os::unix::fs::symlink("b", &loop_a).unwrap();
        std::os::unix::fs::symlink("a", dir.path().join("b")).unwrap();
        assert!(write_string(&loop_a, "x").is_err());
        assert!(write_string(dir.path(), "x").is_err());
    }

    /// Devices are written in place: /dev/null stays a device, /dev/full
    /// reports no space.
    #[test]
    fn devices_are_written_not_replaced() {
        write_string(Path::new("/dev/null"), "x").unwrap();
        assert!(!std::fs::metadata("/dev/null").unwrap().is_file());
        if Path::new("/dev/full").exists() {
            let e = write_string(Path::new("/dev/full"), "x").unwrap_err();
            assert!(e.to_string().contains("/dev/full"), "{e}");
            assert!(!std::fs::metadata("/dev/full").unwrap().is_file());
        }
    }
}
