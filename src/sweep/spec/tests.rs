use super::*;

fn parse(t: &str) -> Result<Sweep> {
    Sweep::parse(t, "t.toml", 100)
}

/// One network spelled two ways is one grid point, labelled canonically
/// (the seed stays out unless the grid gave it).
#[test]
fn grid_labels_are_canonical() {
    let s = parse(
        r#"
name = "x"
[[group]]
name = "a"
topology = ["bcube:k=1,n=4", "bcube:n=4,k=1", "leafspine:spines=2,leaves=4", "jellyfish:r=3,n=20,ports=6", "jellyfish:n=20,ports=6,r=3,seed=7"]
elp = "shortest"
"#,
    )
    .unwrap();
    let labels: Vec<&str> = s
        .scenarios
        .iter()
        .map(|x| x.topology_text.as_str())
        .collect();
    assert_eq!(
        labels,
        [
            "bcube:n=4,k=1",
            "bcube:n=4,k=1",
            "leafspine:leaves=4,spines=2,hosts=1,links=1",
            "jellyfish:n=20,ports=6,r=3",
            "jellyfish:n=20,ports=6,r=3,seed=7"
        ]
    );
    // The explicit seed is kept; the other Jellyfish draws the trial's.
    assert_eq!(s.scenarios[4].topology.canonical(), labels[4]);
}

#[test]
fn switches_and_cables_expand_the_grid() {
    let s = parse(
        "name = \"x\"\nswitch = [\"spectrum2\", \"tomahawk\"]\ncable_m = [10, 300.5]\n[[group]]\nname = \"a\"\ntopology = \"fattree:k=4\"\nelp = \"kbounce:1\"\n[[group]]\nname = \"b\"\ntopology = \"fattree:k=4\"\nelp = \"kbounce:1\"\nswitch = \"drafts-40g\"\nspeed_gbps = 25\n",
    )
    .unwrap();
    let got: Vec<(String, f64, f64)> = s
        .scenarios
        .iter()
        .map(|c| {
            (
                c.switch.name.clone(),
                c.switch.cable_m,
                c.switch.port_speed_gbps,
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("spectrum2".into(), 10.0, 100.0),
            ("spectrum2".into(), 300.5, 100.0),
            ("tomahawk".into(), 10.0, 100.0),
            ("tomahawk".into(), 300.5, 100.0),
            ("drafts-40g".into(), 10.0, 25.0),
            ("drafts-40g".into(), 300.5, 25.0),
        ]
    );
    // Without switch keys every scenario gets the default profile.
    let d = parse(
        "name = \"x\"\n[[group]]\nname = \"a\"\ntopology = \"fattree:k=4\"\nelp = \"kbounce:1\"\n",
    )
    .unwrap();
    assert_eq!(d.scenarios[0].switch, crate::capacity::Profile::default());
}

#[test]
fn expands_the_grid() {
    let s = parse(
        r#"name = "x"
seed = 7
[[group]]
name = "jf"
topology = "jellyfish"
params = { n = [20, 30], ports = 6, r = [3, 4] }
elp = "shortest"
algo = ["greedy", "brute"]
trials = 2
"#,
    )
    .unwrap();
    assert_eq!(s.scenarios.len(), 2 * 2 * 2 * 2);
    assert_eq!(s.scenarios[0].topology_text, "jellyfish:n=20,ports=6,r=3");
    // Trials get different seeds, and seeds depend only on (seed, id).
    assert_ne!(s.scenarios[0].topology, s.scenarios[1].topology);
    let again = parse(&s.text).unwrap();
    assert_eq!(again.scenarios[5].seed, s.scenarios[5].seed);
}

#[test]
fn errors_name_file_group_and_key() {
    let g =
        "name = \"x\"\n[[group]]\nname = \"a\"\ntopology = \"fattree:k=4\"\nelp = \"kbounce:1\"\n";
    let switch_cases = [
        (
            format!("{g}switch = \"spectrum9\"\n"),
            "group 1 ('a'), key switch: switch profile built-in: [spectrum9]",
        ),
        (
            format!("{g}cable_m = [100, \"far\"]\n"),
            "key cable_m: \"far\" is not a number",
        ),
        (format!("{g}cable_m = -5\n"), "key cable_m"),
        (format!("{g}headroom = \"exact\"\n"), "key headroom"),
        (
            format!("{g}switch = \"tomahawk\"\nheadroom = \"sonic\"\n"),
            "key headroom",
        ),
        (
            format!("{g}switch = \"file:/no/such.toml\"\n"),
            "key switch: /no/such.toml",
        ),
        (format!("{g}switch = []\n"), "key switch: empty list"),
        // Type errors name the key and the value, as the line has them.
        (
            format!("trials = \"3\"\n{g}"),
            "line 1: trials = \"3\": invalid type: string \"3\", expected u64",
        ),
        (
            format!("{g}algo = 5\n"),
            "line 6: algo = 5: expected a string or a list of strings",
        ),
        (
            format!("{g}routing = [\"local\", 2]\n"),
            "routing = [\"local\", 2]: expected a string or a list of strings",
        ),
    ];
    for (text, want) in &switch_cases {
        let e = parse(text).unwrap_err().to_string();
        assert!(e.contains(want), "{text}: {e}");
    }
    let cases = [
        ("name = \"x\"\n", "grid is empty"),
        (
            "name = \"x\"\n[[group]]\nname = \"a\"\ntopology = \"fattree:k=3\"\nelp = \"shortest\"\n",
            "group 1 ('a'), key topology",
        ),
        (
            "name = \"x\"\n[[group]]\nname = \"a\"\ntopology = \"fattree:k=4\"\nelp = \"bogus\"\n",
            "key elp",
        ),
        (
            "name = \"x\"\n[[group]]\nname = \"a\"\ntopology = \"fattree:k=4\"\nelp = \"shortest\"\nalgo = \"magic\"\n",
            "key algo",
        ),
        (
            "name = \"x\"\n[[group]]\nname = \"a\"\ntopology = \"fattree:k=4\"\nelp = \"shortest\"\ncycle = \"dfs\"\n",
            "key cycle",
        ),
        (
            "name = \"x\"\n[[group]]\nname = \"a\"\ntopology = \"fattree:k=4\"\nelp = []\n",
            "key elp",
        ),
        (
            "name = \"x\"\n[[group]]\nname = \"a\"\ntopology = \"fattree:k=4\"\nelp = \"shortest\"\ncolour = 1\n",
            "unknown field",
        ),
        (
            "name = \"x\"\n[[group]]\nname = \"a\"\ntopology = \"fattree\"\nparams = { k = [] }\nelp = \"shortest\"\n",
            "params.k",
        ),
        (
            "name = \"x\"\n[[group]]\nname = \"a\"\ntopology = [\"hyperx:l=2,s=3\", \"fattree:k=4\"]\nelp = \"dor\"\n",
            "group 1 ('a'), key elp: 'dor' on 'fattree:k=4': dor needs a HyperX or BCube topology",
        ),
        (
            "name = \"x\"\n[[group]]\nname = \"a\"\ntopology = \"jellyfish:n=10,ports=5,r=4\"\nelp = \"shortest\"\nalgo = [\"greedy\", \"clos\"]\n",
            "key algo: 'clos' on 'jellyfish:n=10,ports=5,r=4': the Clos scheme needs a tiered topology",
        ),
        (
            "name = \"x\"\n[[group]]\nname = \"a\"\ntopology = \"file:/no/such/net.json\"\nelp = \"shortest\"\n",
            "key topology: 'file:/no/such/net.json': cannot read /no/such/net.json",
        ),
        (
            "name = \"x\"\n[[group]]\nname = \"a\"\ntopology = \"fattree:k=4\"\nelp = \"shortest+file:/no/such/p.txt\"\n",
            "key elp: 'shortest+file:/no/such/p.txt': cannot read /no/such/p.txt",
        ),
        (
            "name = \"x\"\n[[group]]\nname = \"a\"\ntopology = \"fattree:k=4\"\nelp = \"shortest\"\ntrials = 500\n",
            "500 trials = 500 scenarios, 500 in the sweep so far: more than the cap of 100",
        ),
    ];
    for (text, want) in cases {
        let e = parse(text).unwrap_err().to_string();
        assert!(e.starts_with("t.toml: "), "{e}");
        assert!(e.contains(want), "want '{want}' in: {e}");
    }
}

/// A value its own parser refuses stays that parser's typed error under
/// the spec's location, so a caller can match it.
#[test]
fn spec_errors_keep_their_typed_causes() {
    use crate::error::SpecFault;
    let g = "name = \"x\"\n[[group]]\nname = \"a\"\ntopology = \"fattree:k=4\"\n";
    let e = parse(&format!("{g}elp = \"kbounce:x=1\"\n")).unwrap_err();
    assert!(
        matches!(&e, Error::SweepSpec { location, cause, .. }
            if location.ends_with("key elp")
                && matches!(&**cause, SpecFault::Value(inner) if matches!(**inner, Error::ElpSyntax { .. }))),
        "{e:?}"
    );
    let e = parse(&format!("{g}elp = \"file:/no/such/p.txt\"\n")).unwrap_err();
    assert!(
        matches!(&e, Error::SweepSpec { cause, .. }
            if matches!(&**cause, SpecFault::Unreadable { cause, .. }
                if cause.kind() == std::io::ErrorKind::NotFound)),
        "{e:?}"
    );
    let e = parse(&format!(
        "memory_budget = \"8 parsecs\"\n{g}elp = \"shortest\"\n"
    ))
    .unwrap_err();
    assert!(
        matches!(&e, Error::SweepSpec { cause, .. }
            if matches!(**cause, SpecFault::Size(crate::ValueError::UnknownUnit { .. }))),
        "{e:?}"
    );
    assert_eq!(e.kind(), "sweep_spec");
}
