use super::*;

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
}

/// Two outputs on standard output, or one beside `--json`: refused before
/// any work, as a usage error.
#[test]
fn one_output_on_standard_output() {
    let run = [
        "run",
        "fattree:k=4",
        "--elp",
        "kbounce:1",
        "--rules-out",
        "-",
    ];
    fails_with(
        &[&run[..], &["--paths-out", "-"]].concat(),
        1,
        "only one output can go to standard output",
    );
    fails_with(
        &[&run[..], &["--json"]].concat(),
        1,
        "--rules-out - and --json",
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
    fails_with(
        &[
            "run",
            "fattree:k=4",
            "--elp",
            "kbounce:1",
            "--algo",
            "greedy",
            "--time-limit",
            "1",
        ],
        1,
        "--time-limit: algorithm 'greedy': a time limit applies to auto, search and exact only",
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

/// One count per concept, in the target's words: the plan's lossless
/// entries, then what the switch holds for them (ACL rules, or a SONiC
/// export's port maps and no ACL); a read-back counts the transitions the
/// switches apply, which is more than the plan's entries.
#[test]
fn the_summary_counts_entries_once_and_the_install_in_the_targets_words() {
    let dir = tempfile::tempdir().unwrap();
    let (out, topo) = (dir.path().join("x"), dir.path().join("t.json"));
    let plain = tagger(&["run", "leafspine:leaves=4,spines=2", "--elp", "kbounce:1"]);
    let plain = text(&plain);
    let entries = plain
        .lines()
        .find(|l| l.starts_with("entries       "))
        .unwrap_or_else(|| panic!("{plain}"))
        .to_string();
    assert!(entries.contains("64 lossless entries"), "{plain}");
    assert!(
        plain.contains(
            "as ACL        40 rules: 28 ACL entries over port sets and 12 tag-to-queue entries"
        ),
        "{plain}"
    );
    assert!(plain.contains("(64 lossless entries, "), "{plain}");
    let sonic = tagger(&[
        "run",
        "leafspine:leaves=4,spines=2",
        "--elp",
        "kbounce:1",
        "--topology-out",
        topo.to_str().unwrap(),
        "--export",
        &format!("sonic:{}", out.display()),
    ]);
    assert!(sonic.status.success(), "{}", text(&sonic));
    let sonic = text(&sonic);
    assert!(sonic.contains(&entries), "{sonic}");
    assert!(
        !sonic.contains("ACL entr") && !sonic.contains("as ACL"),
        "{sonic}"
    );
    assert!(
        sonic.contains("as SONiC      port maps, no ACL: 44 TAGGER_* maps"),
        "{sonic}"
    );
    assert!(sonic.contains("  ACL         none used"), "{sonic}");
    let back = tagger(&[
        "verify",
        "--exported",
        out.to_str().unwrap(),
        topo.to_str().unwrap(),
    ]);
    assert!(back.status.success(), "{}", text(&back));
    assert!(
        text(&back).contains("(88 lossless transitions as the switches apply them, ELP or not, "),
        "{}",
        text(&back)
    );
}
