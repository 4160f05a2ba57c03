//! Everything shipped in datasets/ reads: every sweep spec parses and
//! expands within the default cap, every topology and path file loads, and
//! every switch profile file validates.

mod common;

use std::path::{Path, PathBuf};
use tagger::sweep::{DEFAULT_MAX_SCENARIOS, Sweep};

fn files(dir: &str, ext: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let mut out: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|f| f.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == ext))
        .collect();
    out.sort();
    assert!(!out.is_empty(), "no .{ext} in {}", dir.display());
    out
}

#[test]
fn every_sweep_spec_parses() {
    for f in files("datasets", "toml") {
        let text = std::fs::read_to_string(&f).unwrap();
        let s = Sweep::parse(&text, &f.display().to_string(), DEFAULT_MAX_SCENARIOS)
            .unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        assert!(!s.scenarios.is_empty(), "{}", f.display());
    }
    // The embedded default is datasets/default.toml.
    let default = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets/default.toml"),
    )
    .unwrap();
    assert_eq!(default, tagger::sweep::DEFAULT_SPEC);
}

#[test]
fn every_topology_and_path_file_loads() {
    for f in files("datasets/topologies", "json") {
        let t = tagger::generators::file::read_json_file(&f).unwrap();
        assert!(t.node_count() > 0);
    }
    let (t, e) = common::design_example();
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets/topologies/design-example.paths"),
    )
    .unwrap();
    let listed = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .count();
    assert_eq!(e.counts(&t).paths, listed as u128);
}

#[test]
fn every_switch_profile_file_validates() {
    for f in files("datasets/switches", "toml") {
        let text = std::fs::read_to_string(&f).unwrap();
        let all = tagger::capacity::Profile::parse_all(&text, &f.display().to_string())
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(!all.is_empty());
    }
}
