//! Output: atomic file writes and the Parquet tables of a sweep.

#[cfg(feature = "tables")]
pub mod parquet;
pub mod record;
pub mod schema;

use crate::error::{Error, Result};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Temporaries this process is writing: removed by
/// [`remove_live_temporaries`] when a signal ends it.
static LIVE: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

/// Creates the temporary `tmp` with `create` and records it as being
/// written, both under the lock a signal's handler takes (and keeps until
/// the process exits): a temporary is either made and removed by the
/// handler, or never made.
fn create_tracked<T>(
    tmp: &Path,
    create: impl FnOnce() -> std::io::Result<T>,
) -> std::io::Result<T> {
    let mut l = LIVE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    l.push(tmp.to_path_buf());
    let made = create();
    if made.is_err() {
        l.pop();
    }
    made
}

/// Records a temporary as being written (`live`) or gone (renamed into
/// place or removed).
fn track(tmp: &Path, live: bool) {
    let mut l = LIVE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if live {
        l.push(tmp.to_path_buf());
    } else if let Some(i) = l.iter().rposition(|p| p == tmp) {
        l.swap_remove(i);
    }
}

/// Held while a commit renames its outputs into place: a signal handler
/// waits for the renames to end, so an interrupted commit has replaced
/// every output or none, and never leaves a directory moved aside.
static RENAMING: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Removes every temporary this process is writing (files and staged
/// directories, and earlier outputs moved aside): what a signal handler
/// calls before the process exits, so that an interrupted run leaves no
/// `.NAME.tmp-PID-N` behind. A commit renaming its outputs finishes first.
pub fn remove_live_temporaries() {
    // Held until the process exits: no rename starts after this.
    let renaming = RENAMING
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    std::mem::forget(renaming);
    // Held until the process exits too: no temporary is made after this.
    let mut live = LIVE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let l = std::mem::take(&mut *live);
    std::mem::forget(live);
    for p in l {
        // The process may still be writing into a staged directory while
        // it is removed (a file created behind the removal leaves it not
        // empty): again, until it is gone; the writes fail once it is.
        for _ in 0..100 {
            match std::fs::remove_file(&p).or_else(|_| std::fs::remove_dir_all(&p)) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => continue,
                _ => break,
            }
        }
    }
}

/// Removes the temporaries beside `target` (`.NAME.tmp-PID-N`) left by
/// processes that no longer run (killed with SIGKILL, or the machine
/// stopped): a later write of the same output clears them.
pub fn remove_stale_temporaries(target: &Path) {
    let (Some(dir), Some(name)) = (target.parent(), target.file_name()) else {
        return;
    };
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let prefix = format!(".{}.tmp-", name.to_string_lossy());
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let n = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = n
            .strip_prefix(&prefix)
            .and_then(|rest| rest.split('-').next())
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists() {
            let p = e.path();
            let _ = std::fs::remove_file(&p).or_else(|_| std::fs::remove_dir_all(&p));
        }
    }
}

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
    let Some(target) = replaced(path).map_err(|e| E::from(Error::io(path, e)))? else {
        let result = (|| {
            let mut f = std::fs::OpenOptions::new().write(true).open(path)?;
            write(&mut f).map_err(Failed::Write)?;
            Ok(f.flush()?)
        })();
        return settle(path, result);
    };
    remove_stale_temporaries(&target);
    let tmp = temp_path(&target);
    let result = (|| {
        let mut f = create_tracked(&tmp, || std::fs::File::create(&tmp))?;
        write(&mut f).map_err(Failed::Write)?;
        f.flush()?;
        f.sync_all()?;
        Ok(std::fs::rename(&tmp, &target)?)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    track(&tmp, false);
    settle(path, result)
}

/// Where a write to `path` lands: the regular file (existing or new,
/// symbolic links followed) that a temporary sibling will replace, or
/// `None` for a device, FIFO or socket, written in place (a rename would
/// replace it with a regular file). A directory is an error.
fn replaced(path: &Path) -> std::io::Result<Option<PathBuf>> {
    let target = follow_links(path)?;
    match std::fs::metadata(&target) {
        Ok(m) if m.is_dir() => Err(std::io::Error::new(
            std::io::ErrorKind::IsADirectory,
            "is a directory",
        )),
        Ok(m) if !m.is_file() => Ok(None),
        _ => Ok(Some(target)),
    }
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

/// Writes a new file of a directory being staged ([`Staging::dir`]: made
/// empty, renamed into place whole once complete): directly, with no
/// temporary of its own, since no reader sees the directory before it is
/// complete (a temporary and a rename per file cost a directory search
/// each: an export of 20,000 switches took minutes). An existing file is
/// an error.
///
/// # Errors
/// [`Error::Io`] naming the path.
pub fn write_staged(path: &Path, text: &str) -> Result<()> {
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .and_then(|mut f| f.write_all(text.as_bytes()))
        .map_err(|e| Error::io(path, e))
}

/// A path as the file system resolves it: symbolic links followed, made
/// absolute, and for a file that does not exist yet its directory resolved;
/// with the file's identity (device, inode) when it exists.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Resolved {
    path: PathBuf,
    id: Option<(u64, u64)>,
}

impl Resolved {
    fn of(path: &Path) -> Resolved {
        use std::os::unix::fs::MetadataExt;
        let id = std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()));
        if let Ok(c) = std::fs::canonicalize(path) {
            return Resolved { path: c, id };
        }
        // A dangling symlink names the file it would create.
        let path = follow_links(path).unwrap_or_else(|_| path.to_path_buf());
        let path = path.as_path();
        let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        let path = match (abs.parent(), abs.file_name()) {
            (Some(dir), Some(name)) => std::fs::canonicalize(dir)
                .map(|d| d.join(name))
                .unwrap_or(abs.clone()),
            _ => abs.clone(),
        };
        Resolved { path, id }
    }

    /// One file: the same resolved path, or the same file identity (a
    /// hard link).
    fn same(&self, other: &Resolved) -> bool {
        self.path == other.path || (self.id.is_some() && self.id == other.id)
    }
}

/// True for a path that exists and is neither a regular file nor a
/// directory (`/dev/null`, a FIFO): several outputs may go there.
fn is_device(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir())
}

/// Refuses, before any work, outputs that would overwrite each other or
/// the run's own inputs: two `outputs` naming one file (by resolved path or
/// by file identity, so links and hard links count), an output that is one
/// of the `inputs`, and an output file or input inside an output directory
/// of `dirs` (which an export replaces whole), or two such directories
/// nested. Each item is (what names it, e.g. `--rules-out`; the path).
/// Standard output (`-`) and devices such as `/dev/null` are exempt.
///
/// # Errors
/// [`Error::SameFile`] naming both options and the file.
pub fn check_distinct(
    outputs: &[(&str, &Path)],
    dirs: &[(&str, &Path)],
    inputs: &[(&str, &Path)],
) -> Result<()> {
    let resolve = |items: &[(&str, &Path)]| -> Vec<(String, Resolved)> {
        items
            .iter()
            .filter(|(_, p)| *p != Path::new("-") && !is_device(p))
            .map(|(f, p)| (f.to_string(), Resolved::of(p)))
            .collect()
    };
    let (outs, ins, dirs) = (resolve(outputs), resolve(inputs), resolve(dirs));
    let same = |first: &str, second: &str, path: &Path| {
        Err(Error::SameFile {
            first: first.into(),
            second: second.into(),
            path: path.to_path_buf(),
        })
    };
    for (i, (f, r)) in outs.iter().enumerate() {
        if let Some((g, _)) = outs[i + 1..].iter().find(|(_, r2)| r.same(r2)) {
            return same(f, g, &r.path);
        }
        if let Some((g, _)) = ins.iter().find(|(_, r2)| r.same(r2)) {
            return same(f, &format!("the input {g}"), &r.path);
        }
    }
    for (i, (d, dr)) in dirs.iter().enumerate() {
        let inside = |r: &Resolved| r.path.starts_with(&dr.path) || dr.path.starts_with(&r.path);
        if let Some((f, r)) = outs.iter().find(|(_, r)| inside(r)) {
            return same(d, f, &r.path);
        }
        if let Some((f, r)) = ins.iter().find(|(_, r)| r.path.starts_with(&dr.path)) {
            return same(d, &format!("the input {f}"), &r.path);
        }
        if let Some((e, er)) = dirs[i + 1..].iter().find(|(_, er)| inside(er)) {
            return same(d, e, &er.path);
        }
    }
    Ok(())
}

/// A file output's writer, run when its [`Staging`] commits.
type FileWriter<'a> = Box<dyn FnOnce(&mut (dyn Write + Send)) -> Result<()> + 'a>;
/// A directory output's filler, given the (temporary) directory to fill.
type DirFiller<'a> = Box<dyn FnOnce(&Path) -> Result<()> + 'a>;

enum Staged<'a> {
    File(PathBuf, FileWriter<'a>),
    Dir(PathBuf, DirFiller<'a>, fn(&Path) -> Result<()>),
}

/// A run's outputs, written all or nothing: [`Staging::commit`] writes
/// every regular file and directory to a temporary sibling first, and only
/// when all of them are complete renames them into place (a directory
/// replaces the old one whole, so no stale file of an earlier output
/// stays). If any write fails, the temporaries are removed and no output
/// has changed. Standard output (`-`) and devices cannot be staged: they
/// are written last, once the files are in place.
#[derive(Default)]
pub struct Staging<'a> {
    items: Vec<Staged<'a>>,
}

impl std::fmt::Debug for Staging<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Staging")
            .field("outputs", &self.items.len())
            .finish()
    }
}

impl<'a> Staging<'a> {
    /// A file output at `path`, written by `write` at commit.
    pub fn file(
        &mut self,
        path: &Path,
        write: impl FnOnce(&mut (dyn Write + Send)) -> Result<()> + 'a,
    ) {
        self.items
            .push(Staged::File(path.to_path_buf(), Box::new(write)));
    }

    /// A directory output at `path`, filled by `fill` (given an empty
    /// directory) at commit. `replaceable` says whether an existing
    /// directory at `path` may be replaced (its error is returned if not),
    /// checked again at commit.
    pub fn dir(
        &mut self,
        path: &Path,
        replaceable: fn(&Path) -> Result<()>,
        fill: impl FnOnce(&Path) -> Result<()> + 'a,
    ) {
        self.items
            .push(Staged::Dir(path.to_path_buf(), Box::new(fill), replaceable));
    }

    /// Writes every output (see [`Staging`]).
    ///
    /// # Errors
    /// The first write's error ([`Error::Io`] naming the path, or the
    /// writer's own); no output has changed then, unless the error came
    /// from standard output or a device, which are written last.
    pub fn commit(self) -> Result<()> {
        // Temporaries made so far, removed on any error.
        let mut made: Vec<(PathBuf, PathBuf, bool)> = Vec::new();
        let mut direct: Vec<(PathBuf, FileWriter<'a>)> = Vec::new();
        let cleanup = |made: &[(PathBuf, PathBuf, bool)]| {
            for (tmp, _, is_dir) in made {
                let _ = if *is_dir {
                    std::fs::remove_dir_all(tmp)
                } else {
                    std::fs::remove_file(tmp)
                };
            }
        };
        // Every temporary is registered while it exists, so that a signal
        // removes it; this forgets them all once the commit has ended.
        struct Forget(Vec<PathBuf>);
        impl Drop for Forget {
            fn drop(&mut self) {
                for t in &self.0 {
                    track(t, false);
                }
            }
        }
        let mut forget = Forget(Vec::new());
        for item in self.items {
            let r = match item {
                Staged::File(path, write) => {
                    let target = if path == Path::new("-") {
                        None
                    } else {
                        match replaced(&path) {
                            Ok(t) => t,
                            Err(e) => {
                                cleanup(&made);
                                return Err(Error::io(&path, e));
                            }
                        }
                    };
                    let Some(target) = target else {
                        direct.push((path, write));
                        continue;
                    };
                    remove_stale_temporaries(&target);
                    let tmp = temp_path(&target);
                    forget.0.push(tmp.clone());
                    (|| {
                        let mut f = create_tracked(&tmp, || std::fs::File::create(&tmp))
                            .map_err(|e| Error::io(&path, e))?;
                        made.push((tmp.clone(), target, false));
                        let mut w = std::io::BufWriter::new(&mut f);
                        write(&mut w)?;
                        w.flush().map_err(|e| Error::io(&path, e))?;
                        drop(w);
                        f.sync_all().map_err(|e| Error::io(&path, e))
                    })()
                }
                Staged::Dir(path, fill, replaceable) => (|| {
                    replaceable(&path)?;
                    // Through a symbolic link, the directory it names is
                    // replaced and the link stays.
                    let path = follow_links(&path).map_err(|e| Error::io(&path, e))?;
                    remove_stale_temporaries(&path);
                    let tmp = temp_path(&path);
                    forget.0.push(tmp.clone());
                    create_tracked(&tmp, || std::fs::create_dir_all(&tmp))
                        .map_err(|e| Error::io(&path, e))?;
                    made.push((tmp.clone(), path.clone(), true));
                    fill(&tmp)
                })(),
            };
            if let Err(e) = r {
                cleanup(&made);
                return Err(e);
            }
        }
        // Standard output and devices before anything is renamed into
        // place: one that fails (a full disk behind /dev/full, a closed
        // pipe) leaves every file output as it was.
        for (path, write) in direct {
            if let Err(e) = write_atomic_with(&path, write) {
                cleanup(&made);
                return Err(e);
            }
        }
        // The renames are quick and hold off a signal's handler, which
        // then removes the old directories moved aside (tracked as
        // temporaries) if the process has not yet.
        let mut aside: Vec<PathBuf> = Vec::new();
        {
            let _renaming = RENAMING
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            for (i, (tmp, target, is_dir)) in made.iter().enumerate() {
                let r = if *is_dir {
                    swap_dir(tmp, target).map(|old| aside.extend(old))
                } else {
                    std::fs::rename(tmp, target).map_err(|e| Error::io(target, e))
                };
                if let Err(e) = r {
                    cleanup(&made[i..]);
                    for old in &aside {
                        track(old, false);
                    }
                    return Err(e);
                }
            }
        }
        for old in aside {
            let _ = std::fs::remove_dir_all(&old);
            track(&old, false);
        }
        Ok(())
    }
}

/// Puts the complete directory `tmp` where `target` is: the old `target`
/// (if any) is moved aside, tracked as a temporary, and returned for the
/// caller to remove; if the second rename fails, the old one is put back.
fn swap_dir(tmp: &Path, target: &Path) -> Result<Option<PathBuf>> {
    if std::fs::symlink_metadata(target).is_err() {
        return std::fs::rename(tmp, target)
            .map(|()| None)
            .map_err(|e| Error::io(target, e));
    }
    let old = temp_path(target);
    track(&old, true);
    if let Err(e) = std::fs::rename(target, &old) {
        track(&old, false);
        return Err(Error::io(target, e));
    }
    if let Err(e) = std::fs::rename(tmp, target) {
        let _ = std::fs::rename(&old, target);
        track(&old, false);
        return Err(Error::io(target, e));
    }
    Ok(Some(old))
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
