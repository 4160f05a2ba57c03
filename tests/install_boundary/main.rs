//! The install boundary (#30): what leaves the engine is verified, outputs
//! never overwrite each other or the run's inputs, a failed run writes
//! nothing, and a closed pipe is a quiet exit.
//!
//! Each guarantee of the install boundary is one test in this directory,
//! so the README's list and these tests match one to one: closed pipes,
//! interruptions and failed runs (`pipes.rs`), what exports refuse and
//! replace (`exports.rs`), outputs against each other and the inputs
//! (`outputs.rs`), and numbers, budgets and messages in range
//! (`limits.rs`).

#[path = "../common/mod.rs"]
mod common;

use common::{plan_files, tagger, text};
use std::path::Path;
use std::process::{Command, Stdio};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_tagger"))
}

/// Runs `args` in `dir`, failing the test (instead of hanging) if it has
/// not ended within a minute.
fn bounded(args: &[&str], dir: &Path) -> std::process::Output {
    let mut child = bin()
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > std::time::Duration::from_secs(60) {
            let _ = child.kill();
            panic!("{args:?} did not end within a minute");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

mod exports;
mod limits;
mod outputs;
mod pipes;
