use super::*;

/// Every spec shipped in `datasets/` parses and expands (a renamed key or
/// a typo there would otherwise surface only when a user runs it).
#[test]
fn every_shipped_spec_is_valid() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets");
    let mut names = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml") {
            let text = std::fs::read_to_string(&path).unwrap();
            let file = path.file_name().unwrap().to_string_lossy().to_string();
            let sweep =
                Sweep::parse(&text, &file, 10_000).unwrap_or_else(|e| panic!("{file}: {e}"));
            assert!(!sweep.scenarios.is_empty(), "{file}");
            // The spec's name is its file name, so outputs say which.
            assert_eq!(format!("{}.toml", sweep.name), file);
            names.push(file);
        }
    }
    assert!(names.len() >= 8, "{names:?}");
}

#[test]
fn jobs_are_bounded_by_scenarios_and_cores() {
    let cores = std::thread::available_parallelism().unwrap().get();
    assert_eq!(
        sweep::effective_jobs(10_000, 5),
        5.min(sweep::JOBS_PER_CORE * cores)
    );
    assert_eq!(
        sweep::effective_jobs(10_000, 1_000_000),
        sweep::JOBS_PER_CORE * cores
    );
    assert_eq!(sweep::effective_jobs(1, 0), 1);
    assert_eq!(sweep::effective_jobs(3, 2), 2);
}

/// The spec's up-front compatibility check agrees with what the pipeline
/// does, on every family: a grid point it refuses fails when run, and one
/// it accepts runs.
#[test]
fn up_front_checks_agree_with_the_pipeline() {
    use tagger::TopologySpec;
    use tagger::cycle::CycleBackend;
    use tagger::elp::{ElpSet, ElpSpec};
    use tagger::tagging::{Algo, tag};
    for topo in [
        "fattree:k=4",
        "leafspine:leaves=3,spines=2",
        "bcube:n=2,k=1",
        "hyperx:l=2,s=3",
        "jellyfish:n=10,ports=5,r=4",
    ] {
        // A forwarding-table dump reads only against an InfiniBand fabric.
        let lfts = format!(
            "lfts:{}/datasets/ib/jellyfish16.dfsssp.lfts.dump",
            env!("CARGO_MANIFEST_DIR")
        );
        for (elp, algo) in [
            ("kbounce:1", "greedy"),
            ("dor", "greedy"),
            ("shortest", "clos"),
            ("shortest", "greedy"),
            (lfts.as_str(), "greedy"),
        ] {
            let spec = format!(
                "name = \"c\"\n[[group]]\nname = \"g\"\ntopology = \"{topo}\"\nelp = \"{elp}\"\nalgo = \"{algo}\"\n"
            );
            let accepted = Sweep::parse(&spec, "c.toml", 10);
            let t = TopologySpec::parse(topo).unwrap().build().unwrap();
            let runs = ElpSet::build(&t, &ElpSpec::parse(elp).unwrap())
                .and_then(|e| tag(&t, &e, algo.parse::<Algo>().unwrap(), CycleBackend::Ordered));
            assert_eq!(
                accepted.is_ok(),
                runs.is_ok(),
                "{topo} {elp} {algo}: spec {:?}, run {:?}",
                accepted.err().map(|e| e.to_string()),
                runs.err().map(|e| e.to_string())
            );
        }
    }
}
