//! The `tagger` binary as a user runs it: outputs, exit codes, and clear
//! errors that leave no half-written files.
//!
//! One test per command or guarantee, sharing the runner: the inputs
//! (`inputs.rs`), `run` (`run.rs`), `sweep` and `merge` (`sweep.rs`),
//! `failures` (`failures.rs`), `export` and `verify --exported`
//! (`export.rs`).

use std::path::Path;
use std::process::Command;

#[path = "../common/mod.rs"]
mod common;
use common::{fails_with, tagger, text};

fn files_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

mod export;
mod failures;
mod inputs;
mod run;
mod sweep;
