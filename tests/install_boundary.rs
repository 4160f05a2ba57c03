//! The install boundary (#30): what leaves the engine is verified, outputs
//! never overwrite each other or the run's inputs, a failed run writes
//! nothing, and a closed pipe is a quiet exit.

mod common;

use common::{tagger, text};
use std::path::Path;
use std::process::{Command, Stdio};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_tagger"))
}

/// Runs `args` with standard output read by nobody (the read end closed at
/// once, as `| head -c0` does): the command must end quietly, exit 0 and
/// not panic.
fn closed_pipe(args: &[&str], dir: &Path) {
    let mut child = bin()
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    assert_eq!(out.status.code(), Some(0), "{args:?}: {err}");
}

#[test]
fn a_closed_pipe_is_a_quiet_exit() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let ok = tagger(&[
        "run",
        "fattree:k=4",
        "--elp",
        "kbounce:1",
        "--algo",
        "clos",
        "--topology-out",
        dir.join("t.json").to_str().unwrap(),
        "--rules-out",
        dir.join("r.json").to_str().unwrap(),
    ]);
    assert!(ok.status.success(), "{}", text(&ok));
    let spec = concat!(env!("CARGO_MANIFEST_DIR"), "/datasets/failures-small.toml");
    for args in [
        &["topo", "fattree:k=8"][..],
        &["run", "fattree:k=4", "--elp", "kbounce:1", "--algo", "clos"],
        &[
            "run",
            "fattree:k=4",
            "--elp",
            "kbounce:1",
            "--algo",
            "clos",
            "--json",
        ],
        &[
            "run",
            "fattree:k=8",
            "--elp",
            "kbounce:1",
            "--algo",
            "clos",
            "--rules-out",
            "-",
        ],
        &[
            "elp",
            "fattree:k=8",
            "--elp",
            "shortest",
            "--paths-out",
            "-",
        ],
        &["verify", "--topology", "t.json", "--rules", "r.json"],
        &["schema"],
        &["sweep", spec, "--out", "sw", "--no-report"],
        &[
            "sweep",
            spec,
            "--out",
            "sh",
            "--shard",
            "1/1",
            "--no-report",
        ],
        &["merge", "sh"],
        &[
            "export",
            "--topology",
            "t.json",
            "--rules",
            "r.json",
            "--out",
            "ex",
        ],
    ] {
        closed_pipe(args, dir);
    }
}
