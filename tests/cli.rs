//! The `tagger` binary as a user runs it: outputs, exit codes, and clear
//! errors that leave no half-written files.
//!
//! One file past 600 lines on purpose: the binary's behaviour as a user
//! meets it, one test per command or guarantee, sharing the runner.

use std::path::Path;
use std::process::Command;

mod common;
use common::{tagger, text};

fn files_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn topo_writes_and_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("ft.json");
    let o = tagger(&["topo", "fattree:k=4", "--out", json.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    let t = text(&o);
    assert!(
        t.contains("20 switches")
            && t.contains("links      32")
            && t.contains("diameter   4 links"),
        "{t}"
    );
    let back = tagger(&["topo", &format!("file:{}", json.display())]);
    assert!(back.status.success(), "{}", text(&back));
    assert!(text(&back).contains("20 switches"));
    let a = tagger::topo::file::read_json_file(&json).unwrap();
    let b = tagger::topo::build("fattree:k=4").unwrap();
    assert_eq!((a.nodes(), a.links()), (b.nodes(), b.links()));
    let el = dir.path().join("ft.txt");
    assert!(
        tagger(&[
            "topo",
            "fattree:k=4",
            "--format",
            "edgelist",
            "--out",
            el.to_str().unwrap()
        ])
        .status
        .success()
    );
    assert_eq!(std::fs::read_to_string(&el).unwrap().lines().count(), 32);
}

#[test]
fn bad_input_fails_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.json");
    for (args, want) in [
        (
            vec!["topo", "fattree:k=5", "--out", out.to_str().unwrap()],
            "k = 5: must be even",
        ),
        (vec!["topo", "jellyfish:n=9,ports=4,r=3"], "must be even"),
        (
            vec!["topo", "file:/nonexistent/t.json"],
            "cannot read topology file",
        ),
        (
            vec![
                "run",
                "fattree:k=4",
                "--elp",
                "kbounce:1",
                "--algo",
                "fastest",
            ],
            "unknown algorithm",
        ),
        (
            vec!["run", "fattree:k=4", "--elp", "kbounce:1", "--cycle", "dfs"],
            "unknown cycle backend",
        ),
        (
            vec![
                "run",
                "jellyfish:n=10,ports=4,r=3",
                "--elp",
                "shortest",
                "--algo",
                "clos",
            ],
            "needs a topology with levels",
        ),
        (
            vec!["elp", "fattree:k=4", "--elp", "dor"],
            "dor needs a HyperX or BCube",
        ),
    ] {
        let o = tagger(&args);
        assert!(!o.status.success(), "{args:?} should fail");
        let t = text(&o);
        assert!(t.contains("error: ") && t.contains(want), "{args:?}: {t}");
        assert!(!t.contains("panicked"), "{t}");
    }
    assert!(files_in(dir.path()).is_empty(), "no output file on failure");
    let bad = dir.path().join("bad.json");
    std::fs::write(
        &bad,
        "{\"format\": \"tagger-topology/1\", \"nodes\": [], \"links\": [[0, 1]]}",
    )
    .unwrap();
    let t = text(&tagger(&["topo", &format!("file:{}", bad.display())]));
    assert!(
        t.contains("bad.json: links[0] = [0, 1]: node 0 does not exist"),
        "{t}"
    );
}

#[test]
fn run_exports_rules_that_verify() {
    let dir = tempfile::tempdir().unwrap();
    let (topo, rules, paths) = (
        dir.path().join("t.json"),
        dir.path().join("r.json"),
        dir.path().join("p.txt"),
    );
    let o = tagger(&[
        "run",
        "fattree:k=4",
        "--elp",
        "kbounce:1",
        "--algo",
        "greedy",
        "--json",
        "--topology-out",
        topo.to_str().unwrap(),
        "--rules-out",
        rules.to_str().unwrap(),
        "--paths-out",
        paths.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    for key in [
        "topology",
        "elp",
        "algo",
        "switches",
        "servers",
        "hosts",
        "links",
        "endpoints",
        "paths",
        "longest_elp",
        "priorities",
        "acl_exact_total",
        "acl_exact_max",
        "acl_compressed_total",
        "acl_compressed_max",
        "rules_total",
        "rules_max",
        "verified",
        "seconds",
    ] {
        assert!(v.get(key).is_some(), "missing {key} in {v}");
    }
    assert_eq!(v["verified"], true);
    assert!(v["seconds"]["total"].as_f64().is_some());
    assert_eq!(
        std::fs::read_to_string(&paths).unwrap().lines().count() as u64,
        v["paths"].as_u64().unwrap()
    );
    let args = [
        "verify",
        "--topology",
        topo.to_str().unwrap(),
        "--rules",
        rules.to_str().unwrap(),
        "--paths",
        paths.to_str().unwrap(),
    ];
    let ok = tagger(&args);
    assert!(
        ok.status.success() && text(&ok).starts_with("verified: deadlock-free"),
        "{}",
        text(&ok)
    );
    // Switches with fewer lossless queues than the plan's priorities (greedy
    // uses 3 here): refused, naming both.
    let few = tagger(&[&args[..], &["--max-priorities", "2"]].concat());
    assert_eq!(few.status.code(), Some(1), "{}", text(&few));
    assert!(
        text(&few)
            .contains("[priorities] the rules use 3 lossless priorities; the switches have 2"),
        "{}",
        text(&few)
    );
    // Break the rules: drop the entries of node 8 (an aggregation switch).
    let r = std::fs::read_to_string(&rules).unwrap();
    let broken: String = r
        .lines()
        .filter(|l| !l.contains("{\"node\": 8,"))
        .collect::<Vec<_>>()
        .join("\n");
    let broken = broken.replace(",\n]}", "\n]}");
    std::fs::write(&rules, broken).unwrap();
    let bad = tagger(&args);
    assert_eq!(bad.status.code(), Some(1));
    assert!(
        text(&bad).contains("[replay]") && text(&bad).contains("has no lossless entry"),
        "{}",
        text(&bad)
    );
}

#[test]
fn elp_json_and_path_limit() {
    let o = tagger(&["elp", "fattree:k=4", "--elp", "kbounce:1", "--json"]);
    assert!(o.status.success(), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    for key in [
        "paths",
        "longest_elp",
        "pairs_covered",
        "pairs_total",
        "channels_used",
        "bf_nodes",
        "bf_edges",
        "seconds",
    ] {
        assert!(v.get(key).is_some(), "missing {key}");
    }
    assert_eq!(v["paths"], 2992);
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("p.txt");
    let o = tagger(&[
        "elp",
        "fattree:k=4",
        "--elp",
        "kbounce:1",
        "--paths-out",
        p.to_str().unwrap(),
        "--max-paths",
        "100",
    ]);
    assert!(!o.status.success());
    assert!(
        text(&o).contains("more than 100 ELP paths: over the limit"),
        "{}",
        text(&o)
    );
    assert!(
        files_in(dir.path()).is_empty(),
        "no half-written paths file"
    );
}

#[test]
fn sweep_records_failures_and_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("s.toml");
    std::fs::write(
        &spec,
        "name = \"t\"\n[[group]]\nname = \"g\"\ntopology = \"fattree:k=4\"\nelp = [\"kbounce:1\", \"kbounce:2\"]\nalgo = \"clos:1\"\n",
    )
    .unwrap();
    let out = dir.path().join("out");
    let o = tagger(&[
        "sweep",
        spec.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--jobs",
        "2",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let t = text(&o);
    assert!(t.contains("2 scenarios: 1 ok, 1 failed"), "{t}");
    assert!(
        t.contains(&format!("report: {}", out.join("report.html").display())),
        "{t}"
    );
    assert_eq!(
        files_in(&out),
        vec![
            ".lock-all",
            ".parts",
            "report.html",
            "runs.parquet",
            "switches.parquet"
        ]
    );
    let page = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(page.contains("<h2>Failed scenarios</h2>"), "{page}");
    // An absurd --jobs is bounded (here by the 2 scenarios), not 100,000
    // threads; --no-report writes no page.
    let out3 = dir.path().join("out3");
    let o = tagger(&[
        "sweep",
        spec.to_str().unwrap(),
        "--out",
        out3.to_str().unwrap(),
        "--jobs",
        "100000",
        "--no-report",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains("2 scenarios, 2 at a time"),
        "{}",
        text(&o)
    );
    assert!(!out3.join("report.html").exists());
    // `tagger report` writes it later, where asked.
    let o = tagger(&[
        "report",
        out3.to_str().unwrap(),
        "--out",
        dir.path().join("r.html").to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(dir.path().join("r.html").exists());
    let o = tagger(&["report", dir.path().join("nowhere").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o).contains("nowhere/runs.parquet"), "{}", text(&o));
    // A spec error stops before any work, naming file, group and key.
    std::fs::write(
        &spec,
        "name = \"t\"\n[[group]]\nname = \"g\"\ntopology = \"fattree:k=4\"\nelp = \"kbounce:x\"\n",
    )
    .unwrap();
    let o = tagger(&[
        "sweep",
        spec.to_str().unwrap(),
        "--out",
        dir.path().join("out2").to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    assert!(
        text(&o).contains("s.toml: group 1 ('g'), key elp"),
        "{}",
        text(&o)
    );
    assert!(!dir.path().join("out2").exists());
}

#[test]
fn run_over_its_memory_budget_fails_cleanly() {
    let o = tagger(&[
        "run",
        "fattree:k=8",
        "--elp",
        "kbounce:1",
        "--algo",
        "clos",
        "--memory-budget",
        "64KiB",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let t = text(&o);
    assert!(
        t.contains("memory budget exceeded in") && t.contains("64.00 KiB"),
        "{t}"
    );
    assert!(!t.contains("panicked"), "{t}");
    let o = tagger(&[
        "run",
        "fattree:k=8",
        "--elp",
        "kbounce:1",
        "--memory-budget",
        "lots",
    ]);
    assert!(!o.status.success());
    assert!(text(&o).contains("'lots' is not a size"), "{}", text(&o));
    let o = tagger(&[
        "run",
        "fattree:k=4",
        "--elp",
        "kbounce:1",
        "--memory-budget",
        "1GiB",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("of a 1.00 GiB budget"), "{}", text(&o));
}

/// Ctrl-C during a long search ends it with the best plan so far, which is
/// verified and written; the run says it stopped early and exits 0.
#[test]
fn ctrl_c_ends_a_search_with_a_verified_plan() {
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("rules.json");
    let topo = dir.path().join("topo.json");
    let child = Command::new(env!("CARGO_BIN_EXE_tagger"))
        .args([
            "run",
            "jellyfish:n=300,ports=64,r=12,seed=1",
            "--elp",
            "shortest",
            "--algo",
            "search:budget=100000000000",
            "--rules-out",
            rules.to_str().unwrap(),
            "--topology-out",
            topo.to_str().unwrap(),
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Let it reach the local search (greedy and the constructions take
    // well under a second at this size).
    std::thread::sleep(std::time::Duration::from_secs(3));
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let o = child.wait_with_output().unwrap();
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(t.contains("stopped early"), "{t}");
    assert!(t.contains("verified: deadlock-free"), "{t}");
    let v = tagger(&[
        "verify",
        "--topology",
        topo.to_str().unwrap(),
        "--rules",
        rules.to_str().unwrap(),
    ]);
    assert!(v.status.success(), "{}", text(&v));
}

/// Outputs onto devices, FIFOs, links and standard output: written, not
/// replaced by a regular file; their errors are errors.
#[test]
fn outputs_onto_devices_fifos_links_and_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let run = |out_flag: &str, out: &str| {
        tagger(&[
            "run",
            "fattree:k=4",
            "--elp",
            "kbounce:1",
            "--algo",
            "clos",
            out_flag,
            out,
        ])
    };
    if Path::new("/dev/full").exists() {
        let o = run("--rules-out", "/dev/full");
        assert_eq!(o.status.code(), Some(1), "{}", text(&o));
        assert!(
            text(&o).contains("/dev/full: No space left on device"),
            "{}",
            text(&o)
        );
        assert!(!std::fs::metadata("/dev/full").unwrap().is_file());
    }
    // A FIFO gets the data (a reader drains it) and stays a FIFO.
    let fifo = dir.path().join("pipe");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
    };
    let o = run("--rules-out", fifo.to_str().unwrap());
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        reader
            .join()
            .unwrap()
            .starts_with("{\"format\": \"tagger-rules/1\"")
    );
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
    // A link: its target is replaced, the link stays.
    let real = dir.path().join("real.json");
    std::fs::write(&real, "old").unwrap();
    let link = dir.path().join("link.json");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let o = run("--topology-out", link.to_str().unwrap());
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        std::fs::read_to_string(&real)
            .unwrap()
            .contains("tagger-topology/1")
    );
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    // `-`: the data alone on stdout, the summary on stderr.
    let o = run("--rules-out", "-");
    assert!(o.status.success(), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["format"], "tagger-rules/1");
    assert!(String::from_utf8_lossy(&o.stderr).contains("verified: deadlock-free"));
    // Two outputs on stdout, or one beside --json: refused before any work.
    let o = tagger(&[
        "run",
        "fattree:k=4",
        "--elp",
        "kbounce:1",
        "--rules-out",
        "-",
        "--paths-out",
        "-",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o).contains("only one output can go to standard output"),
        "{}",
        text(&o)
    );
    let o = tagger(&[
        "run",
        "fattree:k=4",
        "--elp",
        "kbounce:1",
        "--rules-out",
        "-",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o).contains("--rules-out - and --json"),
        "{}",
        text(&o)
    );
}

/// Messages that name the fault (each of these once said something else:
/// a missing parameter, a serde variant, "trailing characters", a key that
/// was not at fault); and a byte-order mark is not an error.
#[test]
fn error_messages_name_the_fault() {
    let dir = tempfile::tempdir().unwrap();
    let file = |name: &str, body: &[u8]| {
        let p = dir.path().join(name);
        std::fs::write(&p, body).unwrap();
        p.to_str().unwrap().to_string()
    };
    let fails_with = |args: &[&str], want: &str| {
        let o = tagger(args);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", text(&o));
        let t = text(&o);
        assert!(t.contains(want), "{args:?}: {t}");
        assert!(!t.contains("panicked"), "{t}");
    };
    // A spec is parsed with the other arguments: a usage error (exit 2)
    // naming the argument, before any work.
    for (spec, want) in [
        ("fattree:K=4", "parameter K = 4: unknown parameter"),
        ("fattree:x=1", "parameter x = 1: unknown parameter"),
    ] {
        let o = tagger(&["topo", spec]);
        assert_eq!(o.status.code(), Some(2), "{spec}: {}", text(&o));
        let t = text(&o);
        assert!(
            t.contains(&format!("invalid value '{spec}' for '[TOPOLOGY]'")) && t.contains(want),
            "{t}"
        );
    }
    let t = file(
        "t.json",
        br#"{"format": "tagger-topology/1", "name": "x", "nodes": [{"id": 0, "kind": "switch", "hosts": 1}, {"id": 1, "kind": "switch", "hosts": 4294967296}], "links": [[0, 1]]}"#,
    );
    fails_with(
        &["topo", &format!("file:{t}")],
        "nodes[1].hosts: 4294967296 must be in 0..=4294967295",
    );
    let t = file(
        "t3.json",
        br#"{"format": "tagger-topology/1", "name": "x", "nodes": [{"id": 0, "kind": "switch", "hosts": 1}, {"id": 1, "kind": "switch", "hosts": 1}], "links": [[0, 1, 2]]}"#,
    );
    fails_with(
        &["topo", &format!("file:{t}")],
        "a link is two node ids, e.g. [0, 4]; this one has 3",
    );
    let s = file(
        "s.toml",
        b"name = \"s\"\nmemory_budget = -5\n[[group]]\nname = \"g\"\ntopology = \"fattree:k=4\"\nelp = \"kbounce:1\"\n",
    );
    let out = dir.path().join("o");
    fails_with(
        &["sweep", &s, "--out", out.to_str().unwrap()],
        "memory_budget: -5 bytes: must be at least 1 byte",
    );
    let s = file(
        "s2.toml",
        b"name = \"s2\"\n[[group]]\nname = \"g\"\ntopology = \"fattree\"\nparams = { k = [4, 6, 8] }\nelp = \"kbounce:1\"\ntrials = 5\n",
    );
    fails_with(
        &[
            "sweep",
            &s,
            "--out",
            out.to_str().unwrap(),
            "--max-scenarios",
            "3",
        ],
        "group 1 ('g'): 3 topologies x 1 ELPs x 1 algorithms x 1 cycle backends x 5 trials = 15 scenarios",
    );
    // A byte-order mark and comments in a path file, a spec and a topology.
    let p = file("p.txt", b"\xef\xbb\xbf# hosts at 0 and 1\n0 8 1\n");
    let o = tagger(&["elp", "fattree:k=4", "--elp", &format!("file:{p}")]);
    assert!(o.status.success(), "{}", text(&o));
    let s = file(
        "bom.toml",
        b"\xef\xbb\xbfname = \"bom\"\n[[group]]\nname = \"g\"\ntopology = \"fattree:k=4\"\nelp = \"kbounce:1\"\n",
    );
    let o = tagger(&["sweep", &s, "--out", dir.path().join("b").to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    let t = file(
        "bom.json",
        b"\xef\xbb\xbf{\"format\": \"tagger-topology/1\", \"nodes\": [{\"id\": 0, \"kind\": \"switch\", \"hosts\": 1}, {\"id\": 1, \"kind\": \"switch\", \"hosts\": 1}], \"links\": [[0, 1]]}",
    );
    let o = tagger(&["topo", &format!("file:{t}")]);
    assert!(o.status.success(), "{}", text(&o));
}

/// A large network is written at once and its costly figure (the endpoint
/// diameter) skipped, saying how to get it.
#[test]
fn topo_on_a_large_network_writes_first_and_skips_the_diameter() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("big.json");
    let o = tagger(&[
        "topo",
        "jellyfish:n=200000,ports=8,r=4",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains(
            "diameter   - (skipped: 200000 endpoints; `tagger topo --diameter` computes it)"
        ),
        "{}",
        text(&o)
    );
    assert!(std::fs::metadata(&out).unwrap().len() > 10_000_000);
    let o = tagger(&["topo", "fattree:k=8", "--diameter"]);
    assert!(
        text(&o).contains("diameter   4 links between endpoints"),
        "{}",
        text(&o)
    );
}

/// `--time-limit` stops a search that would run far longer, with its best
/// plan verified and the stop reported; it is refused where it means
/// nothing.
#[test]
fn time_limit_stops_the_search_with_a_verified_plan() {
    let o = tagger(&[
        "run",
        "jellyfish:n=300,ports=64,r=12,seed=1",
        "--elp",
        "shortest",
        "--algo",
        "search:budget=1e12",
        "--time-limit",
        "1",
        "--json",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["search_stopped_early"], true);
    assert_eq!(v["verified"], true);
    assert_eq!(v["algo"], "search:budget=1000000000000,seed=0,time=1");
    // The default, auto, passes the limit to its search.
    let o = tagger(&[
        "run",
        "jellyfish:n=300,ports=64,r=12,seed=1",
        "--elp",
        "shortest",
        "--time-limit",
        "1",
        "--json",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["verified"], true);
    let tried: Vec<&str> = v["tried"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["algo"].as_str().unwrap())
        .collect();
    assert_eq!(tried, ["greedy", "search:budget=1000000000,seed=0,time=1"]);
    let o = tagger(&[
        "run",
        "fattree:k=4",
        "--elp",
        "kbounce:1",
        "--algo",
        "greedy",
        "--time-limit",
        "1",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o).contains(
            "--time-limit: algorithm 'greedy': a time limit applies to auto, search and exact only"
        ),
        "{}",
        text(&o)
    );
}

/// ELP tables past the budget are refused before they are built: the
/// 100,000-switch Jellyfish's shortest-path rows (about 16 GiB), 50M random
/// walks and the k=200 fat-tree's 3-bounce automaton (620 MiB), in `elp`
/// and in `run`. With the automaton in budget, its walk count (1.6 GiB of
/// DP tables, and hours of work) is refused before it starts.
#[test]
fn elp_budgets_refuse_up_front() {
    for (cmd, topo, elp, budget, needs) in [
        (
            "elp",
            "jellyfish:n=100000,ports=32,r=16",
            "shortest",
            "1GiB",
            "",
        ),
        (
            "run",
            "jellyfish:n=100000,ports=32,r=16",
            "shortest",
            "1GiB",
            "",
        ),
        (
            "elp",
            "jellyfish:n=2000,ports=64,r=12",
            "random:50000000",
            "1GiB",
            "",
        ),
        ("elp", "fattree:k=200", "kbounce:3", "600MiB", " 619.51 MiB"),
        ("run", "fattree:k=200", "kbounce:3", "1GiB", " 1.61 GiB"),
    ] {
        let o = tagger(&[cmd, topo, "--elp", elp, "--memory-budget", budget]);
        assert_eq!(o.status.code(), Some(1), "{}", text(&o));
        assert!(
            text(&o).contains(&format!(
                "memory budget exceeded in elp: needs an estimated{needs}"
            )),
            "{cmd} {topo} {elp}: {}",
            text(&o)
        );
    }
}

/// A generated topology past the budget is refused before it is built.
#[test]
fn topology_budgets_refuse_up_front() {
    let o = tagger(&[
        "run",
        "jellyfish:n=5000000,ports=64,r=32",
        "--elp",
        "shortest",
        "--memory-budget",
        "1GiB",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains("memory budget exceeded in generate: needs an estimated 2.53 GiB"),
        "{}",
        text(&o)
    );
}

/// docs/formats.md's column tables are what `tagger schema` prints (the
/// definition the Parquet writer uses), and every key of `run --json`
/// (`seconds.x` as `seconds_x`) is one of the runs columns with a matching
/// type: one schema behind the JSON, the Parquet files and the docs.
#[test]
fn one_schema_behind_json_parquet_and_docs() {
    let md = tagger(&["schema"]);
    assert!(md.status.success(), "{}", text(&md));
    let md = String::from_utf8(md.stdout).unwrap();
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/formats.md"))
            .unwrap();
    let begin = doc.find("<!-- schema:begin -->\n").unwrap() + 22;
    let end = doc.find("<!-- schema:end -->").unwrap();
    assert_eq!(
        &doc[begin..end],
        md,
        "docs/formats.md's column tables differ from `tagger schema`: paste its output between the schema markers"
    );
    let js = tagger(&["schema", "--format", "json"]);
    let js: serde_json::Value = serde_json::from_slice(&js.stdout).unwrap();
    let runs = js["runs.parquet"].as_array().unwrap();
    let col = |name: &str| runs.iter().find(|c| c["name"] == name);
    let o = tagger(&[
        "run",
        "fattree:k=4",
        "--elp",
        "kbounce:1",
        "--algo",
        "search",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let mut keys = 0;
    for (k, x) in v.as_object().unwrap() {
        let flat: Vec<(String, &serde_json::Value)> = match x.as_object() {
            Some(inner) => inner.iter().map(|(i, y)| (format!("{k}_{i}"), y)).collect(),
            None => vec![(k.clone(), x)],
        };
        for (name, y) in flat {
            let c = col(&name).unwrap_or_else(|| panic!("JSON key {name} is no runs column"));
            let ok = match c["type"].as_str().unwrap() {
                "string" => y.is_string() || y.is_null(),
                "u64" | "u32" => y.is_u64() || y.is_null(),
                "i64" => y.is_i64() || y.is_null(),
                "f64" => y.is_f64() || y.is_null(),
                "bool" => y.is_boolean() || y.is_null(),
                t => panic!("unknown type {t}"),
            };
            assert!(ok, "{name} = {y} is not a {}", c["type"]);
            keys += 1;
        }
    }
    assert!(keys > 40, "only {keys} keys");
    for c in runs
        .iter()
        .chain(js["switches.parquet"].as_array().unwrap())
    {
        assert!(!c["doc"].as_str().unwrap().is_empty(), "{c} has no doc");
    }
}

/// `run` fits the plan to the switch named on the command line, and a bad
/// profile is refused before any work, naming the file, profile and field.
#[test]
fn switch_profiles_on_the_command_line() {
    let o = tagger(&[
        "run",
        "fattree:k=8",
        "--elp",
        "kbounce:2",
        "--algo",
        "clos",
        "--switch",
        "drafts-40g",
        "--cable-m",
        "150",
        "--json",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["switch_profile"], "drafts-40g");
    assert_eq!(v["headroom_model"], "simple");
    assert_eq!(v["cable_m"], 150.0);
    assert_eq!(v["switches_over_queues"], 0);
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.toml");
    std::fs::write(
        &bad,
        tagger::capacity::profile::BUILTIN.replace(
            "lossless_buffer_bytes = 35_966_016",
            "lossless_buffer_bytes = -1",
        ),
    )
    .unwrap();
    let spec = format!("file:{}#spectrum2", bad.display());
    let o = tagger(&[
        "run",
        "fattree:k=4",
        "--elp",
        "kbounce:1",
        "--switch",
        &spec,
    ]);
    assert_eq!(o.status.code(), Some(1));
    let t = text(&o);
    assert!(
        t.contains("bad.toml")
            && t.contains("[spectrum2] lossless_buffer_bytes")
            && !t.contains("priorities"),
        "{t}"
    );
    let o = tagger(&[
        "run",
        "fattree:k=4",
        "--elp",
        "kbounce:1",
        "--switch",
        "nexus",
    ]);
    // A switch profile spec is parsed with the other arguments: a usage
    // error naming the option.
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o).contains("invalid value 'nexus' for '--switch <NAME>'"),
        "{}",
        text(&o)
    );
    assert!(text(&o).contains("[nexus] name: no such profile (known: drafts-40g, spectrum1, spectrum2, tomahawk, tomahawk5)"), "{}", text(&o));
}

/// `--classes 3` installs one plan shared by three classes: its rules carry
/// the classes' host tags, `tagger verify` replays every class from its own
/// tag and accepts them, and a class tag removed from the header makes that
/// class's host entries violations.
#[test]
fn application_classes_share_verified_queues() {
    let dir = tempfile::tempdir().unwrap();
    let (topo, rules) = (dir.path().join("t.json"), dir.path().join("r.json"));
    let o = tagger(&[
        "run",
        "leafspine:leaves=4,spines=2,hosts=1",
        "--elp",
        "kbounce:1",
        "--algo",
        "clos",
        "--classes",
        "3",
        "--json",
        "--topology-out",
        topo.to_str().unwrap(),
        "--rules-out",
        rules.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        (
            v["classes"].as_u64(),
            v["classes_stride"].as_u64(),
            v["queues_shared"].as_u64(),
            v["queues_separate"].as_u64()
        ),
        (Some(3), Some(1), Some(4), Some(6))
    );
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&rules).unwrap()).unwrap();
    assert_eq!(r["classes"], serde_json::json!([1, 2, 3]));
    assert_eq!(r["priorities"], 4);
    let args = [
        "verify",
        "--topology",
        topo.to_str().unwrap(),
        "--rules",
        rules.to_str().unwrap(),
    ];
    let o = tagger(&args);
    assert!(o.status.success(), "{}", text(&o));
    let text_rules = std::fs::read_to_string(&rules)
        .unwrap()
        .replace("\"classes\": [1,2,3]", "\"classes\": [1,2]");
    std::fs::write(&rules, text_rules).unwrap();
    let o = tagger(&args);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o).contains("hosts send one of the classes' tags [1, 2]"),
        "{}",
        text(&o)
    );
}

/// `--algo` and `--cycle` are parsed with the other arguments: a bad value
/// is a usage error (exit 2) naming the option, before any work.
#[test]
fn bad_algorithm_and_backend_are_usage_errors() {
    for (opt, val, msg) in [
        ("--algo", "magic", "unknown algorithm"),
        ("--cycle", "dfs", "unknown cycle backend 'dfs'"),
        ("--algo", "search:budget=-1", "budget = -1"),
    ] {
        let o = tagger(&["run", "fattree:k=4", "--elp", "kbounce:1", opt, val]);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        let t = text(&o);
        assert!(
            t.contains(&format!("invalid value '{val}' for '{opt}")) && t.contains(msg),
            "{t}"
        );
    }
}

/// `tagger merge` combines the shards of a sweep into the pair a local
/// sweep of the same spec writes (rows in scenario order, timings aside),
/// and refuses missing shards (by index) and shards of another spec.
#[test]
fn merge_combines_shards_and_refuses_mixtures() {
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("s.toml");
    let spec_text = "name = \"m\"\n[[group]]\nname = \"g\"\ntopology = \"fattree\"\nparams = { k = [4, 6] }\nelp = [\"kbounce:0\", \"kbounce:1\"]\nalgo = [\"clos\", \"greedy\"]\n";
    std::fs::write(&spec, spec_text).unwrap();
    let (shards, local) = (dir.path().join("shards"), dir.path().join("local"));
    let sweep = |out: &Path, shard: Option<&str>| {
        let mut args = vec![
            "sweep",
            spec.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ];
        if let Some(s) = shard {
            args.extend(["--shard", s]);
        }
        let o = tagger(&args);
        assert!(o.status.success(), "{}", text(&o));
    };
    sweep(&shards, Some("1/3"));
    sweep(&shards, Some("3/3"));
    let o = tagger(&["merge", shards.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o).contains("missing shard 2 of 3"), "{}", text(&o));
    // Shard 2 of another spec.
    std::fs::write(&spec, spec_text.replace("name = \"m\"", "name = \"other\"")).unwrap();
    sweep(&shards, Some("2/3"));
    let o = tagger(&["merge", shards.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o).contains("differ in tagger.spec"), "{}", text(&o));
    std::fs::write(&spec, spec_text).unwrap();
    sweep(&shards, Some("2/3"));
    let o = tagger(&["merge", shards.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("3 shards, 8 scenarios (0 failed)"),
        "{}",
        text(&o)
    );
    sweep(&local, None);
    // Every column but the timing and process ones, row by row.
    let rows = |d: &Path, f: &str| {
        let batches = tagger::output::parquet::read_batches(&d.join(f)).unwrap();
        let mut out = Vec::new();
        for b in &batches {
            for r in 0..b.num_rows() {
                let mut row = Vec::new();
                for (i, field) in b.schema().fields().iter().enumerate() {
                    let n = field.name();
                    if n.starts_with("seconds_") || n == "peak_rss_bytes" || n == "threads" {
                        continue;
                    }
                    row.push(format!("{:?}", b.column(i).slice(r, 1)));
                }
                out.push(row);
            }
        }
        out
    };
    for f in ["runs.parquet", "switches.parquet"] {
        assert_eq!(rows(&shards, f), rows(&local, f), "{f}");
    }
    let o = tagger(&["merge", dir.path().to_str().unwrap()]);
    assert!(text(&o).contains("no shard files"), "{}", text(&o));
}

/// `tagger failures` end to end: the hand-counted fat-tree case through a
/// failure file, both routing models, JSON and Parquet; bad input refused.
#[test]
fn failures_what_if_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("down.txt");
    std::fs::write(&f, "# ToR 0 loses its link to aggregation switch 8\n0 8\n").unwrap();
    let out = dir.path().join("trials.parquet");
    let o = tagger(&[
        "failures",
        "fattree:k=4",
        "--elp",
        "kbounce:1",
        "--algo",
        "clos",
        "--fail",
        &format!("file:{}", f.display()),
        "--routing",
        "converged,local",
        "--json",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["plan"]["priorities"], 2);
    let reps = v["failures"].as_array().unwrap();
    assert_eq!(reps.len(), 2);
    let conv = &reps[0]["trials"][0];
    let local = &reps[1]["trials"][0];
    assert_eq!(conv["routing"], "converged");
    assert_eq!(conv["paths"], 182);
    assert_eq!(conv["lossless_paths_fraction"], 1.0);
    assert_eq!(local["paths"], 196);
    assert_eq!(local["failed"], "0-8");
    let frac = local["lossless_paths_fraction"].as_f64().unwrap();
    assert!((frac - 194.0 / 196.0).abs() < 1e-12, "{frac}");
    assert_eq!(reps[1]["figures"]["verified"], true);
    let batches = tagger::output::parquet::read_batches(&out).unwrap();
    assert_eq!(batches.iter().map(|b| b.num_rows()).sum::<usize>(), 2);
    let js = tagger(&["schema", "--format", "json"]);
    let js: serde_json::Value = serde_json::from_slice(&js.stdout).unwrap();
    let want: Vec<&str> = js["failures.parquet"].as_array().unwrap()[1..]
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    let got: Vec<String> = batches[0]
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    assert_eq!(got, want);
    // The text table.
    let o = tagger(&[
        "failures",
        "fattree:k=4",
        "--elp",
        "shortest",
        "--fail",
        "links:2,trials=4",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("converged"), "{}", text(&o));
    for (args, code, msg) in [
        (
            vec!["--fail", "links:x"],
            2,
            "failures 'links:x': count = x",
        ),
        (
            vec!["--routing", "sideways"],
            2,
            "unknown routing 'sideways'",
        ),
        (vec!["--fail", "links:999"], 1, "999 links cannot fail"),
    ] {
        let mut a = vec!["failures", "fattree:k=4", "--elp", "shortest"];
        a.extend(args);
        let o = tagger(&a);
        assert_eq!(o.status.code(), Some(code), "{a:?}: {}", text(&o));
        assert!(text(&o).contains(msg), "{a:?}: {}", text(&o));
    }
    let o = tagger(&["failures", "hyperx:l=2,s=3,t=1", "--elp", "dor"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o).contains("routes traffic on shortest paths"),
        "{}",
        text(&o)
    );
}

/// `failures --rules` judges the rules the operator installed instead of
/// planning: the same trials as the run that wrote them, the file named;
/// rules that do not verify on the topology are refused.
#[test]
fn failures_judge_the_installed_rules() {
    let dir = tempfile::tempdir().unwrap();
    let (t, r) = common::plan_files(dir.path());
    let (ts, rs) = (t.as_str(), r.as_str());
    let what_if = |extra: &[&str]| {
        let mut a = vec![
            "failures",
            ts,
            "--elp",
            "kbounce:1",
            "--fail",
            "links:2,trials=4",
            "--json",
        ];
        a.extend(extra);
        let o = tagger(&a);
        assert!(o.status.success(), "{a:?}: {}", text(&o));
        serde_json::from_slice::<serde_json::Value>(&o.stdout).unwrap()
    };
    let planned = what_if(&["--algo", "clos"]);
    let given = what_if(&["--algo", "clos", "--rules", rs]);
    assert_eq!(given["plan"]["rules"], rs);
    assert_eq!(given["plan"]["algo"], "installed: clos");
    assert_eq!(given["plan"]["priorities"], 2);
    assert_eq!(given["failures"], planned["failures"]);
    // Greedy's plan judged as installed, while --algo replans with clos:
    // the trials' lossless shares are the installed rules'.
    let g = dir.path().join("g.json");
    let o = tagger(&[
        "run",
        ts,
        "--elp",
        "kbounce:1",
        "--algo",
        "greedy",
        "--rules-out",
        g.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let greedy = what_if(&["--algo", "clos", "--rules", g.to_str().unwrap()]);
    assert_eq!(greedy["plan"]["algo"], "installed: greedy");
    // Rules shared by two application classes: the what-if replays one
    // class's hosts, so it says so instead of judging half of them.
    let c2 = dir.path().join("c2.json");
    let c2s = c2.to_str().unwrap();
    let o = tagger(&[
        "run",
        ts,
        "--elp",
        "kbounce:1",
        "--algo",
        "clos",
        "--classes",
        "2",
        "--rules-out",
        c2s,
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let o = tagger(&["failures", ts, "--elp", "kbounce:1", "--rules", c2s]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("2 application classes"), "{}", text(&o));
    let o = tagger(&[
        "failures",
        "fattree:k=8",
        "--elp",
        "kbounce:1",
        "--rules",
        rs,
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains("the installed rules")
            && text(&o).contains("the topology is 'fattree:k=8'"),
        "{}",
        text(&o)
    );
}

/// `run --export sonic:DIR`, `export` and `verify --sonic`: the exported
/// directory verifies on its own, and a broken reference is named.
#[test]
fn sonic_export_installs_and_verifies() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    let o = tagger(&[
        "run",
        "jellyfish:n=30,ports=8,r=5,seed=2",
        "--elp",
        "shortest",
        "--algo",
        "search",
        "--topology-out",
        &p("t.json"),
        "--rules-out",
        &p("r.json"),
        "--export",
        &format!("sonic:{}", p("sonic")),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("exported 30 switches"), "{}", text(&o));
    let o = tagger(&["verify", "--topology", &p("t.json"), "--sonic", &p("sonic")]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).starts_with("verified: deadlock-free"),
        "{}",
        text(&o)
    );
    let o = tagger(&[
        "export",
        "--topology",
        &p("t.json"),
        "--rules",
        &p("r.json"),
        "--elp",
        "shortest",
        "--out",
        &p("again"),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    for f in std::fs::read_dir(dir.path().join("sonic")).unwrap() {
        let f = f.unwrap();
        assert_eq!(
            std::fs::read(f.path()).unwrap(),
            std::fs::read(dir.path().join("again").join(f.file_name())).unwrap()
        );
    }
    let s = std::fs::read_to_string(dir.path().join("sonic/0.json")).unwrap();
    std::fs::write(
        dir.path().join("sonic/0.json"),
        s.replace(
            "\"tc_to_pg_map\": \"TAGGER_TC_TO_PG_0\"",
            "\"tc_to_pg_map\": \"NOPE\"",
        ),
    )
    .unwrap();
    let o = tagger(&["verify", "--topology", &p("t.json"), "--sonic", &p("sonic")]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o).contains("TC_TO_PRIORITY_GROUP_MAP|NOPE is referenced but not defined"),
        "{}",
        text(&o)
    );
    let o = tagger(&[
        "run",
        "fattree:k=4",
        "--elp",
        "shortest",
        "--export",
        "cisco:x",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o).contains("invalid value 'cisco:x' for '--export <EXPORT>'")
            && text(&o).contains("expected sonic:DIR"),
        "{}",
        text(&o)
    );
}

/// `export --format json` and its read-back, a configured DSCP and queue
/// mapping, buffers sized for the switch and cable given, and bad mapping
/// values refused before any work (clap's exit 2 for a list that is not
/// numbers, exit 1 naming the index for a value out of range).
#[test]
fn export_formats_mappings_and_switch_models() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    let o = tagger(&[
        "run",
        "fattree:k=4",
        "--elp",
        "kbounce:1",
        "--algo",
        "clos",
        "--topology-out",
        &p("t.json"),
        "--rules-out",
        &p("r.json"),
        "--export",
        &format!("json:{}", p("table")),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("(neutral table)"), "{}", text(&o));
    let o = tagger(&[
        "verify",
        "--topology",
        &p("t.json"),
        "--exported",
        &p("table"),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let o = tagger(&[
        "export",
        "--topology",
        &p("t.json"),
        "--rules",
        &p("r.json"),
        "--out",
        &p("s"),
        "--dscp",
        "26,46",
        "--queues",
        "4,3",
        "--switch",
        "tomahawk",
        "--cable-m",
        "40",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("buffers for tomahawk"), "{}", text(&o));
    let sw: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("s/0.json")).unwrap())
            .unwrap();
    assert!(
        sw["BUFFER_PROFILE"]
            .as_object()
            .unwrap()
            .keys()
            .any(|k| k.ends_with("_40m")),
        "{sw}"
    );
    let o = tagger(&["verify", "--topology", &p("t.json"), "--exported", &p("s")]);
    assert!(o.status.success(), "{}", text(&o));
    let o = tagger(&[
        "export",
        "--topology",
        &p("t.json"),
        "--rules",
        &p("r.json"),
        "--out",
        &p("x"),
        "--dscp",
        "3,x",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("'x' is not a number"), "{}", text(&o));
    let o = tagger(&[
        "run",
        "fattree:k=4",
        "--elp",
        "shortest",
        "--export",
        &format!("sonic:{}", p("y")),
        "--queues",
        "3,8",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o).contains("queues[1] = 8: must be in 1..=7"),
        "{}",
        text(&o)
    );
    assert!(!dir.path().join("y").exists());
}

/// `run --require-fit` fails (exit 1, naming the checks, nothing written)
/// when a switch does not fit the switch model, and passes when all do;
/// without it the same run succeeds and says which switches do not fit.
#[test]
fn require_fit_refuses_a_plan_the_switches_cannot_hold() {
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("r.json");
    let rules_s = rules.to_str().unwrap();
    let base = ["run", "fattree:k=4", "--elp", "kbounce:0"];
    let with = |extra: &[&str]| {
        let mut a: Vec<&str> = base.to_vec();
        a.extend(extra);
        tagger(&a)
    };
    let o = with(&["--require-fit", "--rules-out", rules_s]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(rules.exists());
    std::fs::remove_file(&rules).unwrap();
    let far = ["--cable-m", "100000", "--rules-out", rules_s];
    let o = with(&[&far[..], &["--require-fit"]].concat());
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains(
            "--require-fit: switches do not fit spectrum2 (20 over buffer): nothing written"
        ) && text(&o).contains("20 of 20 switches do NOT fit"),
        "{}",
        text(&o)
    );
    assert!(!rules.exists(), "nothing is written");
    let o = with(&far);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("20 of 20 switches do NOT fit"),
        "{}",
        text(&o)
    );
}

/// `verify --exported` replays the ELP the export records without being
/// told (and `--elp` replaces it); its priority limit is the recorded
/// profile's lossless queues, and a switch written with `--require-fit off`
/// is named as not fitting (#52 items 8 and 9).
#[test]
fn verify_exported_replays_the_recorded_elp_and_takes_the_profiles_limit() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    let o = tagger(&[
        "run",
        "fattree:k=4",
        "--elp",
        "kbounce:1",
        "--algo",
        "clos",
        "--topology-out",
        &p("t.json"),
        "--export",
        &format!("sonic:{}", p("e")),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let o = tagger(&["verify", "--topology", &p("t.json"), "--exported", &p("e")]);
    assert!(o.status.success(), "{}", text(&o));
    let replayed = |o: &std::process::Output| -> u64 {
        let t = text(o);
        let at = t.find(" ELP transitions replayed").expect("a replay count");
        t[..at]
            .rsplit(|c: char| !c.is_ascii_digit())
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    let kb1 = replayed(&o);
    assert!(kb1 > 0, "{}", text(&o));
    let o = tagger(&[
        "verify",
        "--topology",
        &p("t.json"),
        "--exported",
        &p("e"),
        "--elp",
        "shortest",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(replayed(&o) < kb1, "{}", text(&o));
    // Three priorities on a profile with two lossless queues.
    let o = tagger(&[
        "run",
        "fattree:k=4",
        "--elp",
        "kbounce:2",
        "--algo",
        "clos",
        "--export",
        &format!("sonic:{}", p("f")),
        "--require-fit",
        "off",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let o = tagger(&["verify", "--topology", &p("t.json"), "--exported", &p("f")]);
    assert!(!o.status.success(), "{}", text(&o));
    let t = text(&o);
    assert!(
        t.contains("does not fit (exported with --require-fit off)"),
        "{t}"
    );
    assert!(t.contains("3 lossless priorities"), "{t}");
    let o = tagger(&[
        "verify",
        "--topology",
        &p("t.json"),
        "--exported",
        &p("f"),
        "--max-priorities",
        "8",
    ]);
    assert!(o.status.success(), "{}", text(&o));
}

/// The scripts that read the Parquet output say what to install when
/// duckdb is missing (Python started without its site packages), instead
/// of a traceback.
#[test]
fn scripts_without_duckdb_say_what_to_install() {
    if std::process::Command::new("python3")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("skipped: no python3");
        return;
    }
    for script in [
        "summarize.py",
        "check_sweep.py",
        "validate-sweep-exports.py",
    ] {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/").to_string() + script;
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("runs.parquet"), b"").unwrap();
        let o = std::process::Command::new("python3")
            .args(["-I", "-S", &path, d.path().to_str().unwrap()])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{script}: {err}");
        assert!(!err.contains("Traceback"), "{script}: {err}");
        assert!(
            err.contains("pip install -r scripts/requirements.txt"),
            "{script}: {err}"
        );
    }
}

/// `tagger --help` names every table `tagger schema` describes (#50).
#[test]
fn top_level_help_names_every_table() {
    let help = String::from_utf8(tagger(&["--help"]).stdout).unwrap();
    let schema = String::from_utf8(tagger(&["schema"]).stdout).unwrap();
    let tables: Vec<&str> = schema
        .lines()
        .filter_map(|l| l.strip_prefix("#### `")?.strip_suffix(".parquet`"))
        .collect();
    assert_eq!(tables.len(), 5, "{tables:?}");
    for t in tables {
        assert!(help.contains(t), "tagger --help does not name {t}:\n{help}");
    }
}

/// Every subcommand takes the network the same way: as its first argument
/// or as `--topology`, a generator spec or a file alike; both, or
/// neither, is a usage error.
#[test]
fn the_topology_is_given_one_way() {
    let dir = tempfile::tempdir().unwrap();
    let (t, r) = common::plan_files(dir.path());
    let out = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let (ex1, ex2) = (out("ex1"), out("ex2"));
    let commands: Vec<Vec<&str>> = vec![
        vec!["topo"],
        vec!["elp", "--elp", "kbounce:1"],
        vec!["run", "--elp", "kbounce:1", "--algo", "clos"],
        vec![
            "failures",
            "--elp",
            "kbounce:1",
            "--fail",
            "links:1,trials=1",
            "--no-replan",
            "--no-aware",
        ],
        vec!["verify", "--rules", &r],
        vec![
            "update",
            "--rules",
            &r,
            "--elp",
            "kbounce:1",
            "--to",
            "drain:links=1",
            "--no-compare",
        ],
    ];
    for args in &commands {
        for topology in [t.as_str(), "fattree:k=4"] {
            let mut first = vec![args[0], topology];
            first.extend(&args[1..]);
            let mut option = vec![args[0], "--topology", topology];
            option.extend(&args[1..]);
            let (a, b) = (tagger(&first), tagger(&option));
            assert!(a.status.success(), "{first:?}: {}", text(&a));
            assert!(b.status.success(), "{option:?}: {}", text(&b));
            // Same answer either way (the lines that carry no timing).
            let lines = |o: &std::process::Output| -> Vec<String> {
                String::from_utf8_lossy(&o.stdout)
                    .lines()
                    .filter(|l| !l.contains("second") && !l.contains("memory"))
                    .map(str::to_string)
                    .collect()
            };
            assert_eq!(lines(&a), lines(&b), "{first:?}");
        }
        let mut both = vec![args[0], &t, "--topology", &t];
        both.extend(&args[1..]);
        let o = tagger(&both);
        assert_eq!(o.status.code(), Some(2), "{both:?}: {}", text(&o));
        assert!(text(&o).contains("cannot be used with"), "{}", text(&o));
        let o = tagger(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        assert!(text(&o).contains("TOPOLOGY"), "{}", text(&o));
    }
    for (topology, dest) in [(t.as_str(), &ex1), ("fattree:k=4", &ex2)] {
        let o = tagger(&["export", topology, "--rules", &r, "--out", dest]);
        assert!(o.status.success(), "{}", text(&o));
    }
    assert_eq!(files_in(Path::new(&ex1)), files_in(Path::new(&ex2)));
    let o = tagger(&["verify", "fattree:k=4", "--exported", &ex1]);
    assert!(o.status.success(), "{}", text(&o));
    // The spec of another network is refused as the rules' header says.
    let o = tagger(&["verify", "fattree:k=6", "--rules", &r]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains("the rules are for topology"),
        "{}",
        text(&o)
    );
}
