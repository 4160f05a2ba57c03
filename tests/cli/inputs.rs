use super::*;

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
    let a = tagger::generators::file::read_json_file(&json).unwrap();
    let b = tagger::generators::build("fattree:k=4").unwrap();
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
        // A typed cause is printed once, not once by its error and again
        // as the error's source.
        assert_eq!(t.matches(want).count(), 1, "{args:?}: {t}");
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

/// Help is help everywhere, and only when it reaches its reader: `tagger
/// help --help` and `tagger help run` work (the latter as `tagger run
/// --help`), help or a version that cannot be written is an error, a
/// usage error exits 2; `--elp`'s help lists every family, and
/// `failures --routing both` means converged and local (#70, low).
#[test]
fn help_is_written_or_fails() {
    let o = tagger(&["help", "--help"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("Usage: tagger help"), "{}", text(&o));
    let (a, b) = (tagger(&["help", "run"]), tagger(&["run", "--help"]));
    assert!(a.status.success() && a.stdout == b.stdout);
    let run_help = String::from_utf8(b.stdout).unwrap();
    assert!(run_help.contains("file:PATH or lfts:PATH"), "{run_help}");
    assert!(!run_help.contains('\u{1b}'), "styled help into a pipe");
    assert_eq!(tagger(&["help", "nosuch"]).status.code(), Some(1));
    assert_eq!(tagger(&["nosuch"]).status.code(), Some(2));
    if Path::new("/dev/full").exists() {
        for args in [
            &["--help"][..],
            &["run", "--help"],
            &["--version"],
            &["help"],
        ] {
            let full = std::fs::OpenOptions::new()
                .write(true)
                .open("/dev/full")
                .unwrap();
            let o = Command::new(env!("CARGO_BIN_EXE_tagger"))
                .args(args)
                .stdout(full)
                .output()
                .unwrap();
            assert_eq!(o.status.code(), Some(1), "{args:?}: {}", text(&o));
            assert!(text(&o).contains("No space left"), "{args:?}: {}", text(&o));
        }
    }
    let o = tagger(&[
        "failures",
        "fattree:k=4",
        "--elp",
        "kbounce:1",
        "--fail",
        "links:1,trials=2",
        "--routing",
        "both",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let out = text(&o);
    assert!(
        out.contains("\nconverged ") && out.contains("\nlocal "),
        "{out}"
    );
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
