//! The README's and docs/' examples run as written, so they cannot drift
//! from the program.
//!
//! A fenced block whose info string is `sh example` is a shell example; one
//! whose info string names a file (`json file=my-fabric.json`, `toml
//! file=example.toml`) is a file the examples after it use. The blocks of
//! one document run in order in one fresh directory holding `datasets/`
//! and `scripts/` (links to the repository's), with the built `tagger`
//! first on `PATH`, under `bash -euo pipefail`. Every other block (outputs,
//! the two commands, cluster jobs, long runs) is shown, not run.
//!
//! An example that runs `python3` needs the scripts' packages
//! (`scripts/requirements.txt`). A fresh machine has none, and the README's
//! test command must pass there, so without them such an example is skipped
//! with a note on stderr; under CI (`CI` set), which installs them, it runs.

use std::path::{Path, PathBuf};
use std::process::Command;

/// One runnable block: where it starts (1-based line), and what it is.
#[derive(Debug)]
enum Block {
    Shell { line: usize, script: String },
    File { name: String, text: String },
}

/// The runnable blocks of a Markdown text, in order.
fn blocks(md: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut lines = md.lines().enumerate();
    while let Some((i, l)) = lines.next() {
        let Some(info) = l.trim_start().strip_prefix("```") else {
            continue;
        };
        let info = info.trim().to_string();
        let mut body = String::new();
        for (_, l) in lines.by_ref() {
            if l.trim_start().starts_with("```") {
                break;
            }
            body.push_str(l);
            body.push('\n');
        }
        let words: Vec<&str> = info.split_whitespace().collect();
        if words.len() == 2 && words[0] == "sh" && words[1] == "example" {
            out.push(Block::Shell {
                line: i + 1,
                script: body,
            });
        } else if let Some(name) = words.iter().find_map(|w| w.strip_prefix("file=")) {
            out.push(Block::File {
                name: name.to_string(),
                text: body,
            });
        }
    }
    out
}

fn documents() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut docs = vec![root.join("README.md")];
    let mut more: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    more.sort();
    docs.extend(more);
    docs
}

#[test]
fn the_parser_finds_examples_and_files() {
    let md = "text\n```sh\nnot run\n```\n```json file=a.json\n{}\n```\n```sh example\ntagger x\necho y\n```\n```text\nout\n```\n";
    let b = blocks(md);
    assert_eq!(b.len(), 2, "{b:?}");
    assert!(matches!(&b[0], Block::File { name, text } if name == "a.json" && text == "{}\n"));
    assert!(matches!(&b[1], Block::Shell { line: 8, script } if script == "tagger x\necho y\n"));
}

#[test]
fn every_example_in_the_readme_and_docs_runs() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bin = Path::new(env!("CARGO_BIN_EXE_tagger")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut ran = 0;
    let python_ready = python_packages_installed();
    for doc in documents() {
        let b = blocks(&std::fs::read_to_string(&doc).unwrap());
        if b.is_empty() {
            continue;
        }
        let dir = tempfile::tempdir().unwrap();
        for d in ["datasets", "scripts"] {
            std::os::unix::fs::symlink(root.join(d), dir.path().join(d)).unwrap();
        }
        for block in b {
            match block {
                Block::File { name, text } => {
                    std::fs::write(dir.path().join(&name), text).unwrap();
                }
                Block::Shell { line, script } => {
                    if script.contains("python3") && !python_ready {
                        eprintln!(
                            "{}:{line}: skipped: it runs python3 and the scripts' packages are not installed (pip install -r scripts/requirements.txt)",
                            doc.display()
                        );
                        ran += 1;
                        continue;
                    }
                    let o = Command::new("bash")
                        .args(["-euo", "pipefail", "-c", &script])
                        .current_dir(dir.path())
                        .env("PATH", &path)
                        .output()
                        .unwrap();
                    assert!(
                        o.status.success(),
                        "{}:{line}: the example failed ({}):\n{script}\nstdout:\n{}\nstderr:\n{}\n(the Python examples need `pip install -r scripts/requirements.txt`)",
                        doc.display(),
                        o.status,
                        String::from_utf8_lossy(&o.stdout),
                        String::from_utf8_lossy(&o.stderr)
                    );
                    ran += 1;
                }
            }
        }
        validate_exports(dir.path(), &doc);
    }
    // The README alone has four; a parser that finds none must not pass.
    assert!(ran >= 4, "only {ran} examples found");
}

/// Every SONiC export the examples of one document wrote validates
/// against SONiC's YANG models (scripts/validate-sonic.py) and holds no ACL
/// table; skipped with a note where yanglint is not installed (CI installs
/// it, and there it is a failure).
fn validate_exports(dir: &Path, doc: &Path) {
    let mut exports = Vec::new();
    for e in walk(dir) {
        if e.file_name().is_some_and(|n| n == "summary.json")
            && std::fs::read_to_string(&e).is_ok_and(|t| t.contains("\"tagger-sonic/"))
        {
            exports.push(e.parent().unwrap().to_path_buf());
        }
    }
    if exports.is_empty() {
        return;
    }
    if Command::new("yanglint").arg("--version").output().is_err() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must install yanglint (libyang-tools)"
        );
        eprintln!(
            "{}: {} exports not validated: yanglint is not installed",
            doc.display(),
            exports.len()
        );
        return;
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/validate-sonic.py");
    for e in exports {
        for f in std::fs::read_dir(&e).unwrap() {
            let text = std::fs::read_to_string(f.unwrap().path()).unwrap();
            assert!(!text.contains("ACL_"), "{}: an ACL table", e.display());
        }
        let o = Command::new("python3")
            .arg(&script)
            .arg(&e)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{}: the export {} is not valid against SONiC's models:\n{}{}",
            doc.display(),
            e.display(),
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
    }
}

/// Every file under `dir`, not following the links to `datasets/` and
/// `scripts/`.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let t = e.file_type().unwrap();
            if t.is_symlink() {
                continue;
            }
            if t.is_dir() {
                todo.push(e.path());
            } else {
                out.push(e.path());
            }
        }
    }
    out
}

/// Whether the scripts' Python packages can be imported. Under CI they
/// must be: CI installs them, and a missing one there is a failure, not a
/// skip.
fn python_packages_installed() -> bool {
    let ok = Command::new("python3")
        .args(["-c", "import duckdb"])
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        ok || std::env::var_os("CI").is_none(),
        "CI is set but python3 cannot import duckdb: .ci/run installs scripts/requirements.txt"
    );
    ok
}
