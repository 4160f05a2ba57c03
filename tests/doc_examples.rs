//! The README's and docs/' examples run as written, so they cannot drift
//! from the program.
//!
//! A fenced block whose info string is `sh example` is a shell example; one
//! whose info string names a file (`json file:my-fabric.json`, `toml
//! file:example.toml`) is a file the examples after it use. The blocks of
//! one document run in order in one fresh directory holding `datasets/`
//! and `scripts/` (links to the repository's), with the built `tagger`
//! first on `PATH`, under `bash -euo pipefail`. Every other block (outputs,
//! the two commands, cluster jobs, long runs) is shown, not run.
//!
//! A `text output` block right after an example is what the example
//! prints, and is compared with its standard output: its lines must appear
//! in the output in order and next to each other, except that a line
//! `...` stands for any number of lines, and seconds (`0.00 s`, `1.2 s`)
//! match any seconds. An excerpt need not start at the first line or end
//! at the last.
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
    Shell {
        line: usize,
        script: String,
        output: Option<(usize, String)>,
    },
    File {
        name: String,
        text: String,
    },
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
                output: None,
            });
        } else if words == ["text", "output"] {
            match out.last_mut() {
                Some(Block::Shell { output, .. }) if output.is_none() => {
                    *output = Some((i + 1, body));
                }
                _ => panic!("line {}: a `text output` block follows no example", i + 1),
            }
        } else if let Some(name) = words.iter().find_map(|w| w.strip_prefix("file:")) {
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

/// `line` with every number of seconds (`12 s`, `0.25 s`) as `# s`.
fn seconds_masked(line: &str) -> String {
    let b = line.as_bytes();
    let mut out = String::new();
    let mut i = 0;
    while i < b.len() {
        let start = i;
        if b[i].is_ascii_digit() && (i == 0 || !b[i - 1].is_ascii_alphanumeric()) {
            let mut j = i;
            while j < b.len() && (b[j].is_ascii_digit() || b[j] == b'.') {
                j += 1;
            }
            let unit = line[j..].starts_with(" s")
                && line[j + 2..]
                    .chars()
                    .next()
                    .is_none_or(|c| !c.is_alphanumeric());
            if unit {
                out.push_str("# s");
                i = j + 2;
                continue;
            }
            out.push_str(&line[start..j]);
            i = j;
            continue;
        }
        let c = line[i..].chars().next().unwrap();
        out.push(c);
        i += c.len_utf8();
    }
    out
}

/// Where `expected` (a `text output` block) does not match `actual` (the
/// example's standard output), as the module docs say: `None` if it
/// matches, else the first expected line not found where it should be.
fn mismatch(expected: &str, actual: &str) -> Option<String> {
    let actual: Vec<String> = actual
        .lines()
        .map(|l| seconds_masked(l.trim_end()))
        .collect();
    // Runs of lines between `...` lines, each to be found after the last.
    let mut runs: Vec<Vec<String>> = vec![Vec::new()];
    for l in expected.lines() {
        if l.trim() == "..." {
            runs.push(Vec::new());
        } else {
            runs.last_mut().unwrap().push(seconds_masked(l.trim_end()));
        }
    }
    let mut from = 0;
    for run in runs.iter().filter(|r| !r.is_empty()) {
        let at = (from..=actual.len().saturating_sub(run.len()))
            .find(|&k| actual.len() >= k + run.len() && actual[k..k + run.len()] == run[..]);
        match at {
            Some(k) => from = k + run.len(),
            None => {
                // The longest prefix of the run found, to name the line.
                let (best, _) = (from..actual.len())
                    .map(|k| {
                        let n = run
                            .iter()
                            .zip(&actual[k..])
                            .take_while(|(a, b)| a == b)
                            .count();
                        (n, k)
                    })
                    .max_by_key(|&(n, k)| (n, std::cmp::Reverse(k)))
                    .unwrap_or((0, 0));
                return Some(run[best.min(run.len() - 1)].clone());
            }
        }
    }
    None
}

#[test]
fn output_blocks_match_excerpts_of_the_output() {
    let out = "topology x\nauto kept clos (0.12 s)\nb\nc\nd\n";
    assert_eq!(mismatch("auto kept clos (0.00 s)\nb\n", out), None);
    assert_eq!(mismatch("topology x\n...\nc\nd\n", out), None);
    assert_eq!(mismatch("b\nd\n", out), Some("d".to_string()));
    assert_eq!(mismatch("b\n...\ne\n", out), Some("e".to_string()));
    assert_eq!(mismatch("c\n...\nb\n", out), Some("b".to_string()));
    assert_eq!(seconds_masked("s1 2 s, x 3.5 s)"), "s1 # s, x # s)");
    assert_eq!(seconds_masked("10 switches"), "10 switches");
}

#[test]
fn the_parser_finds_examples_and_files() {
    let md = "text\n```sh\nnot run\n```\n```json file:a.json\n{}\n```\n```sh example\ntagger x\necho y\n```\n```text\nout\n```\n";
    let b = blocks(md);
    assert_eq!(b.len(), 2, "{b:?}");
    assert!(matches!(&b[0], Block::File { name, text } if name == "a.json" && text == "{}\n"));
    assert!(
        matches!(&b[1], Block::Shell { line: 8, script, output: None } if script == "tagger x\necho y\n")
    );
    let md = "```sh example\ntagger x\n```\n```text output\nout\n```\n";
    assert!(matches!(&blocks(md)[0], Block::Shell { output: Some((4, o)), .. } if o == "out\n"));
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
                Block::Shell {
                    line,
                    script,
                    output,
                } => {
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
                    if let Some((at, expected)) = output {
                        let actual = String::from_utf8_lossy(&o.stdout);
                        if let Some(l) = mismatch(&expected, &actual) {
                            panic!(
                                "{}:{at}: the example's output drifted from what the doc shows; not found where it should be:\n{l}\nthe output:\n{actual}",
                                doc.display()
                            );
                        }
                    }
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
