//! Every parser against arbitrary input: it returns a value or an error,
//! never panics, and never allocates on the strength of a number it read
//! (a node id of 4,294,967,295 once sized a table). Each property also
//! checks what it returns: a value prints back to an equal value (specs,
//! algorithm names, topology, rules and profile files), and an error names
//! a line the input has (path files, ibnetdiscover files, forwarding-table
//! dumps) or the file (sweep specs).
//!
//! Two kinds of input per parser: arbitrary bytes (as lossy UTF-8), and a
//! valid input with a few bytes replaced, inserted or cut, which reaches
//! deeper than random text. CI runs 256 cases per property; for a longer
//! run, `PROPTEST_CASES=100000 cargo test --release --test fuzz_parsers`.

use proptest::prelude::*;
use std::path::Path;
use tagger::TopologySpec;
use tagger::elp::{ElpSpec, PathList};
use tagger::rules::RuleSet;
use tagger::sweep::Sweep;
use tagger::tagging::Algo;

const TOPOLOGY: &str = r#"{"format": "tagger-topology/1", "name": "t",
 "nodes": [{"id": 0, "kind": "switch", "level": 0, "hosts": 2}, {"id": 1, "kind": "switch", "level": 1, "hosts": 0}, {"id": 2, "kind": "switch", "level": 0, "hosts": 2}],
 "links": [[0, 1], [1, 2]]}"#;

const RULES: &str = r#"{"format": "tagger-rules/1", "topology": "t", "algo": "greedy", "priorities": 1, "initial_tag": 1,
 "entries": [{"node": 0, "in_link": null, "tag": 1, "out_link": 0, "next_tag": 1, "priority": 1, "next_priority": 1},
  {"node": 1, "in_link": 0, "tag": 1, "out_link": 1, "next_tag": 1, "priority": 1, "next_priority": 1}]}"#;

const PATHS: &str = "# a comment\n0 1 2\n2 1 0\n";

const IBNET: &str = "# ibnetdiscover-style\nswitchguid=0x200001(200001)\nSwitch\t8 \"S-0000000000200001\"\t# \"sw1\"\n[1]\t\"H-0000000000100000\"[1](100001)\t# \"h1\"\n[3]\t\"S-0000000000200002\"[3]\n\nSwitch 8 \"S-0000000000200002\"\n[1] \"H-0000000000100002\"[1]\n[3] \"S-0000000000200001\"[3] w=4\n\nCa 1 \"H-0000000000100000\"\n[1](100001) \"S-0000000000200001\"[1]\n\nHca 1 \"H-0000000000100002\"\n[1] \"S-0000000000200002\"[1]\n";

const LFTS: &str = "Unicast lids [0-3] of switch Lid 1 guid 0x0000000000200001 ('sw1'):\n0x0001 000 # Switch portguid 0x0000000000200001: 'sw1'\n0x0002 001 # Channel Adapter portguid 0x0000000000100001: 'h1'\n0x0003 003 # Channel Adapter portguid 0x0000000000100003: 'h2'\n3 lids dumped\nUnicast lids [0-3] of switch Lid 4 guid 0x0000000000200002 ('sw2'):\n0x0002 003 # Channel Adapter portguid 0x0000000000100001: 'h1'\n0x0003 001 # Channel Adapter portguid 0x0000000000100003: 'h2'\n";

const SPEC: &str = "name = \"f\"\nseed = 1\n[[group]]\nname = \"g\"\ntopology = \"fattree\"\nparams = { k = [4, 6] }\nelp = [\"kbounce:1\", \"shortest+random:10\"]\nalgo = [\"greedy\", \"search:budget=1e3\"]\ntrials = 2\nmemory_budget = \"1GiB\"\n";

/// A valid input with up to four edits (replace, insert or cut a byte).
fn mutated(base: &'static str) -> impl Strategy<Value = String> {
    prop::collection::vec((0usize..4096, 0u8..3, any::<u8>()), 0..5).prop_map(move |edits| {
        let mut b = base.as_bytes().to_vec();
        for (at, op, byte) in edits {
            let i = at % (b.len() + 1);
            match op {
                0 if i < b.len() => b[i] = byte,
                1 => b.insert(i, byte),
                _ if i < b.len() => {
                    b.remove(i);
                }
                _ => {}
            }
        }
        String::from_utf8_lossy(&b).into_owned()
    })
}

fn bytes() -> impl Strategy<Value = String> {
    prop::collection::vec(any::<u8>(), 0..256)
        .prop_map(|b| String::from_utf8_lossy(&b).into_owned())
}

/// Spec-like text: families, keys and numbers from small alphabets, so
/// that most cases get past the first character.
fn spec_like() -> impl Strategy<Value = String> {
    let word = prop::sample::select(vec![
        "fattree",
        "leafspine",
        "bcube",
        "hyperx",
        "jellyfish",
        "file",
        "shortest",
        "kbounce",
        "dor",
        "ksp",
        "random",
        "k",
        "n",
        "ports",
        "r",
        "seed",
        "l",
        "s",
        "t",
        "maxlen",
        "pairs",
        "leaves",
        "spines",
        "hosts",
        "links",
        "greedy",
        "search",
        "exact",
        "clos",
        "brute",
        "budget",
        "timeout",
        "time",
        "paths",
        "restarts",
    ]);
    let num = prop::sample::select(vec![
        "0",
        "1",
        "2",
        "4",
        "7",
        "8",
        "64",
        "-1",
        "1e3",
        "5e9",
        "1.5",
        "4294967296",
        "18446744073709551616",
        "99999999999",
        "",
    ]);
    let sep = prop::sample::select(vec![":", "=", ",", "+", " ", ""]);
    prop::collection::vec((word, sep.clone(), num, sep), 1..8).prop_map(|parts| {
        parts
            .into_iter()
            .map(|(w, a, n, b)| format!("{w}{a}{n}{b}"))
            .collect()
    })
}

fn topo() -> tagger::Topology {
    tagger::generators::file::parse_json(TOPOLOGY, "t").unwrap()
}

/// Where an error names a line (`line N`), N is a line of the input (or
/// the one just past it, where the input ends too soon), lines counted as
/// the parsers count them (a lone `\r` ends one too).
fn names_a_line_of(e: &impl std::fmt::Display, input: &str) -> Result<(), TestCaseError> {
    let text = e.to_string();
    let lines = tagger::generators::file::text_lines(input).count() + 1;
    for w in text.split("line ").skip(1) {
        let digits: String = w.chars().take_while(char::is_ascii_digit).collect();
        if let Ok(n) = digits.parse::<usize>() {
            prop_assert!(
                (1..=lines).contains(&n),
                "'{text}' names line {n} of an input of {lines} lines"
            );
        }
    }
    Ok(())
}

proptest! {
    /// A spec that parses prints (canonically) as a spec that parses to
    /// the same value.
    #[test]
    fn topology_specs(s in prop_oneof![bytes(), spec_like()]) {
        if let Ok(t) = TopologySpec::parse(&s) {
            prop_assert_eq!(TopologySpec::parse(&t.canonical()).ok(), Some(t));
        }
    }

    /// A spec that parses has a family, and parses the same way again.
    #[test]
    fn elp_specs(s in prop_oneof![bytes(), spec_like()]) {
        if let Ok(e) = ElpSpec::parse(&s) {
            prop_assert!(!e.families.is_empty());
            prop_assert_eq!(ElpSpec::parse(&e.text).ok(), Some(e));
        }
    }

    /// An algorithm that parses is named by a text that parses to it.
    #[test]
    fn algorithm_names(s in prop_oneof![bytes(), spec_like()]) {
        if let Ok(a) = s.parse::<Algo>() {
            prop_assert_eq!(a.name().parse::<Algo>().ok(), Some(a));
        }
    }

    /// A topology that parses writes a file that reads back the same.
    #[test]
    fn topology_json(s in prop_oneof![bytes(), mutated(TOPOLOGY)]) {
        if let Ok(t) = tagger::generators::file::parse_json(&s, "fuzz") {
            let text = tagger::generators::file::to_json(&t);
            let back = tagger::generators::file::parse_json(&text, "fuzz").unwrap();
            prop_assert_eq!(tagger::generators::file::to_json(&back), text);
        }
    }

    /// Rules that parse write a file that reads back equal, and whatever
    /// parses, the verifier takes without panicking.
    #[test]
    fn rules_json(s in prop_oneof![bytes(), mutated(RULES)]) {
        if let Ok(r) = RuleSet::parse(&s, Path::new("fuzz.json")) {
            let back = RuleSet::parse(&r.to_json(), Path::new("fuzz.json")).unwrap();
            prop_assert_eq!(&back, &r);
            let _ = tagger::verify::verify(&topo(), &r, None);
        }
    }

    /// A path file's error names a line the file has; every path parsed
    /// is a walk of the topology.
    #[test]
    fn path_files(s in prop_oneof![bytes(), mutated(PATHS)]) {
        let t = topo();
        match PathList::parse(&t, &s, Path::new("fuzz.txt")) {
            Ok(list) => {
                for p in list.iter() {
                    for w in p.windows(2) {
                        prop_assert!(t.links().iter().any(|&[a, b]| (a, b) == (w[0], w[1]) || (a, b) == (w[1], w[0])));
                    }
                }
            }
            Err(e) => names_a_line_of(&e, &s)?,
        }
    }

    /// An ibnetdiscover file's error names a line the file has; one that
    /// parses has switches.
    #[test]
    fn ibnetdiscover_files(s in prop_oneof![bytes(), mutated(IBNET)]) {
        match tagger::generators::ibnet::parse(&s, "fuzz") {
            Ok(t) => prop_assert!(t.node_count() > 0),
            Err(e) => names_a_line_of(&e, &s)?,
        }
    }

    /// A forwarding-table dump's error names a line the dump has.
    #[test]
    fn forwarding_table_dumps(s in prop_oneof![bytes(), mutated(LFTS)]) {
        let t = tagger::generators::ibnet::parse(IBNET, "t").unwrap();
        if let Err(e) = tagger::elp::lfts::parse(&t, &s, Path::new("fuzz.dump")) {
            names_a_line_of(&e, &s)?;
        }
    }

    /// A sweep spec that parses stays within the scenario cap it was
    /// given; one that does not is named in the error.
    #[test]
    fn sweep_specs(s in prop_oneof![bytes(), mutated(SPEC)]) {
        match Sweep::parse(&s, "fuzz.toml", 1000) {
            Ok(sw) => prop_assert!(!sw.scenarios.is_empty() && sw.scenarios.len() <= 1000),
            Err(e) => prop_assert!(e.to_string().contains("fuzz.toml"), "{}", e),
        }
    }

    /// Each profile that parses writes TOML that reads back equal.
    #[test]
    fn switch_profiles(s in prop_oneof![bytes(), mutated(PROFILES)]) {
        if let Ok(all) = tagger::capacity::Profile::parse_all(&s, "fuzz.toml") {
            for p in all.values() {
                let back = tagger::capacity::Profile::parse_all(&p.to_toml(), "back.toml").unwrap();
                prop_assert!(back.values().any(|b| b == p), "{} does not read back", p.name);
            }
        }
    }
}

const PROFILES: &str = tagger::capacity::profile::BUILTIN;

/// The valid inputs the mutations start from are valid: otherwise the
/// properties above would only ever test error paths.
#[test]
fn the_seeds_are_valid() {
    let t = topo();
    let r = RuleSet::parse(RULES, Path::new("r.json")).unwrap();
    assert!(tagger::verify::verify(&t, &r, None).ok());
    PathList::parse(&t, PATHS, Path::new("p.txt")).unwrap();
    let ib = tagger::generators::ibnet::parse(IBNET, "t").unwrap();
    assert_eq!((ib.node_count(), ib.link_count()), (2, 1));
    let routes = tagger::elp::lfts::parse(&ib, LFTS, Path::new("d")).unwrap();
    assert_eq!(routes.len(), 2);
    assert_eq!(
        Sweep::parse(SPEC, "s.toml", 1000).unwrap().scenarios.len(),
        16
    );
    assert!(
        tagger::capacity::Profile::parse_all(PROFILES, "b.toml")
            .unwrap()
            .len()
            >= 5
    );
}
