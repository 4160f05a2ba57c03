//! Fewest priorities: the lower bound, `search` and `exact` against known
//! optima, on every topology family, through the whole pipeline (so every
//! plan here has passed the independent verifier).

use tagger::cycle::CycleBackend;
use tagger::elp::{ElpSet, ElpSpec};
use tagger::pipeline::{self, RunConfig, RunResult};
use tagger::tagging::{self, Algo};
use tagger::{Topology, TopologySpec};

fn run(topo: &str, elp: &str, algo: &str) -> RunResult {
    pipeline::run(&RunConfig {
        topology: TopologySpec::parse(topo).unwrap(),
        elp: ElpSpec::parse(elp).unwrap(),
        algo: algo.parse().unwrap(),
        cycle: CycleBackend::Ordered,
        memory_budget: None,
        switch: Default::default(),
        max_tcs: None,
        classes: 1,
        limits: Default::default(),
    })
    .unwrap_or_else(|e| panic!("{topo} {elp} {algo}: {e}"))
}

fn build(topo: &str, elp: &str) -> (Topology, ElpSet) {
    let t = TopologySpec::parse(topo).unwrap().build().unwrap();
    let e = ElpSet::build(&t, &ElpSpec::parse(elp).unwrap()).unwrap();
    (t, e)
}

#[test]
fn lower_bound_is_one_without_a_cycle_and_two_with_one() {
    // Valley-free routing on a fat-tree never closes a dependency cycle.
    let r = run("fattree:k=4", "kbounce:0", "greedy");
    assert_eq!(
        (
            r.summary.figures.priorities,
            r.summary.figures.priorities_lower_bound
        ),
        (1, 1)
    );
    assert!(r.summary.figures.priorities_optimal);
    // One bounce does, so one priority is impossible.
    let r = run("fattree:k=4", "kbounce:1", "brute");
    assert_eq!(r.summary.figures.priorities_lower_bound, 2);
    assert!(!r.summary.figures.priorities_optimal);
}

/// The known optima: K+1 on a fat-tree with `kbounce:K` (the Clos
/// scheme's count), 2 on DESIGN's worked example. `exact` must find them
/// and prove them (its bound equals its count).
#[test]
fn exact_proves_the_known_optima() {
    let dir = tempfile::tempdir().unwrap();
    let paths = dir.path().join("design.paths");
    std::fs::write(&paths, "1 4 2 5 3\n2 5 1 4 0\n").unwrap();
    for (topo, elp, want) in [
        ("fattree:k=4", "kbounce:1".to_string(), 2),
        ("fattree:k=4", "kbounce:2".to_string(), 3),
        (
            "leafspine:leaves=4,spines=2,hosts=1",
            "kbounce:1".to_string(),
            2,
        ),
        (
            "leafspine:leaves=4,spines=2,hosts=1",
            format!("file:{}", paths.display()),
            2,
        ),
    ] {
        let r = run(topo, &elp, "exact:timeout=300");
        let s = &r.summary;
        assert_eq!(s.figures.priorities, want, "{topo} {elp}");
        assert_eq!(
            s.figures.priorities_lower_bound, want,
            "{topo} {elp}: not proven"
        );
        assert!(s.figures.priorities_optimal);
        assert_eq!(s.figures.search_stopped_early, Some(false));
        // Past the dependency bound (2), the proof is the solver's, on a
        // sub-ELP (at most the paths it was given).
        match s.figures.proof_paths {
            Some(n) => assert!(
                want > 2 && n > 0 && n <= s.figures.paths,
                "{topo} {elp}: {n}"
            ),
            None => assert!(want <= 2, "{topo} {elp}: no proof reported"),
        }
    }
}

/// The Tagger paper's Jellyfish 100/32 instances, where greedy needs 3: the
/// search finds 2, which the lower bound proves optimal.
#[test]
fn search_reaches_two_where_greedy_needs_three() {
    for topo in [
        "jellyfish:n=100,ports=32,r=12,seed=1",
        "jellyfish:n=100,ports=32,r=12,seed=2",
        "jellyfish:n=100,ports=32,r=8,seed=1",
    ] {
        let g = run(topo, "shortest", "greedy").summary;
        let s = run(topo, "shortest", "search").summary;
        assert_eq!(g.figures.priorities, 3, "{topo}: greedy changed");
        assert_eq!(s.figures.priorities, 2, "{topo}");
        assert!(s.figures.priorities_optimal, "{topo}");
        assert!(s.figures.search_steps.is_some());
    }
}

/// The Clos scheme's K+1 is not always the minimum: on a two-spine
/// leaf-spine `exact` proves 2 for `kbounce:2`, so a `clos` plan above its
/// bound says why it does not claim optimality, and the summary shows one
/// headroom figure (the switch model's).
#[test]
fn clos_is_not_always_optimal_and_says_so() {
    let topo = "leafspine:leaves=4,spines=2";
    let c = run(topo, "kbounce:2", "clos");
    let e = run(topo, "kbounce:2", "exact").summary;
    assert_eq!((c.summary.figures.priorities, e.figures.priorities), (3, 2));
    assert!(e.figures.priorities_optimal);
    let text = tagger::render::run(&c, None, None);
    assert!(
        text.contains("lower bound 2 (optimality not proven: clos's K+1"),
        "{text}"
    );
    // "sonic headroom, ... headroom up to X": one figure, the model's.
    assert_eq!(text.matches("headroom").count(), 2, "{text}");
    let fat = tagger::render::run(&run("fattree:k=4", "kbounce:1", "clos"), None, None);
    assert!(fat.contains("lower bound 2 (optimal)"), "{fat}");
}

/// A local search that did not run reports no steps and no residue (0
/// would read as "no path failed"), and says why, in the figures and the
/// summary; one that ran and reached the bound reports both.
#[test]
fn a_skipped_local_search_reads_as_not_searched() {
    let topo = "jellyfish:n=100,ports=32,r=8,seed=1";
    for (algo, why) in [
        ("search:paths=10", "28276 paths pass paths=10"),
        ("search:budget=0", "the budget is 0"),
    ] {
        let r = run(topo, "shortest", algo);
        let f = &r.summary.figures;
        assert_eq!(f.priorities, 3, "{algo}");
        assert_eq!((f.search_steps, f.search_residue), (None, None), "{algo}");
        let skipped = f.search_skipped.as_deref().unwrap_or_default();
        assert!(skipped.contains(why), "{algo}: {skipped}");
        let text = tagger::render::run(&r, None, None);
        assert!(
            text.contains(&format!("search        local search not run: {skipped}")),
            "{text}"
        );
    }
    // Without paths=N the local search runs wherever its state fits the
    // memory budget: 2 MiB holds the run but not the state (about 2.2 MiB).
    let small = pipeline::run(&RunConfig {
        topology: TopologySpec::parse(topo).unwrap(),
        elp: ElpSpec::parse("shortest").unwrap(),
        algo: "search".parse().unwrap(),
        cycle: CycleBackend::Ordered,
        memory_budget: Some(2 << 20),
        switch: Default::default(),
        max_tcs: None,
        classes: 1,
        limits: Default::default(),
    })
    .unwrap();
    let f = &small.summary.figures;
    assert_eq!((f.priorities, f.search_steps), (3, None));
    let skipped = f.search_skipped.as_deref().unwrap_or_default();
    assert!(
        skipped.contains("28276 paths") && skipped.contains("does not fit"),
        "{skipped}"
    );
    let f = run(topo, "shortest", "search").summary.figures;
    assert_eq!(f.search_skipped, None);
    assert_eq!(f.search_residue, Some(0));
    assert!(f.search_steps.is_some_and(|s| s > 0));
    assert!(f.search_evaluations.is_some_and(|e| e > 0));
    assert_eq!(f.search_stalled, Some(false));
}

/// Without being told about levels' meaning, the search matches the Clos
/// scheme's K+1 on fat-trees (greedy needs K+2).
#[test]
fn search_matches_clos_on_fat_trees() {
    for k in [4, 8] {
        for b in 1..=2u32 {
            let topo = format!("fattree:k={k}");
            let elp = format!("kbounce:{b}");
            let s = run(&topo, &elp, "search").summary;
            assert_eq!(s.figures.priorities, b + 1, "{topo} {elp}");
        }
    }
}

/// Every family: search and exact never need more priorities than greedy,
/// their bound never passes their count, and each plan is verified (the
/// pipeline fails otherwise).
#[test]
fn search_and_exact_on_every_family() {
    for (topo, elp) in [
        ("bcube:n=3,k=1", "dor"),
        ("bcube:n=3,k=1", "shortest"),
        ("hyperx:l=2,s=4,t=1", "dor"),
        ("hyperx:l=2,s=3,t=1", "shortest"),
        (
            "jellyfish:n=30,ports=8,r=4,seed=3",
            "shortest+random:200,seed=2",
        ),
        ("jellyfish:n=30,ports=8,r=4,seed=5", "ksp:3"),
        ("leafspine:leaves=4,spines=3,hosts=1", "kbounce:2"),
        ("fattree:k=4", "shortest"),
    ] {
        let g = run(topo, elp, "greedy").summary;
        for algo in ["search", "exact:timeout=300"] {
            let s = run(topo, elp, algo).summary;
            assert!(
                s.figures.priorities <= g.figures.priorities,
                "{topo} {elp} {algo}: {} > greedy {}",
                s.figures.priorities,
                g.figures.priorities
            );
            assert!(s.figures.priorities_lower_bound <= s.figures.priorities);
            assert!(s.verified);
        }
        let e = run(topo, elp, "exact:timeout=300").summary;
        assert!(
            e.figures.priorities_optimal,
            "{topo} {elp}: exact did not finish"
        );
    }
}

/// Same seed and budget, same rules, on one thread or two, with the
/// unrestricted search alone and with the default pair.
#[test]
fn search_is_deterministic_at_any_thread_count() {
    let (t, e) = build("jellyfish:n=100,ports=32,r=8,seed=1", "shortest");
    for algo in [
        "search:budget=20000000,seed=3,symmetric=0",
        "search:budget=20000000,seed=3",
    ] {
        let algo: Algo = algo.parse().unwrap();
        let at = |threads: usize| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap()
                .install(|| tagging::tag(&t, &e, algo, CycleBackend::Ordered).unwrap())
        };
        let (one, two) = (at(1), at(2));
        assert_eq!(one.keys, two.keys, "{}", algo.name());
        assert_eq!(one.effort, two.effort, "{}", algo.name());
        assert!(one.effort.as_ref().unwrap().steps > 0, "the search ran");
    }
}

#[test]
fn algorithm_names_round_trip_and_bad_parameters_are_named() {
    for s in [
        "search",
        "search:budget=5,seed=2",
        "search:budget=5,seed=2,time=1.5",
        "search:budget=5,seed=0,paths=10",
        "search:budget=5,seed=0,symmetric=0",
        "search:budget=5,seed=0,symmetric=1",
        "exact",
        "exact:timeout=2.5",
    ] {
        let a: Algo = s.parse().unwrap();
        assert_eq!(a.name().parse::<Algo>().unwrap(), a, "{s}");
    }
    // Budgets in exponent form, when whole.
    for (s, want) in [
        ("search:budget=5e9", 5_000_000_000u64),
        ("search:budget=1.5E9", 1_500_000_000),
        ("search:budget=2.50e1", 25),
        ("search:budget=7", 7),
    ] {
        let Algo::Search(tagger::tagging::SearchParams { budget, .. }) = s.parse().unwrap() else {
            panic!("{s}");
        };
        assert_eq!(budget, want, "{s}");
    }
    for (bad, msg) in [
        ("search:steps=5", "unknown parameter 'steps'"),
        ("search:budget=x", "budget = x"),
        ("search:budget=1.5", "budget = 1.5"),
        ("search:budget=1.25e1", "budget = 1.25e1"),
        ("search:budget=1e20", "budget = 1e20"),
        ("search:budget=e5", "budget = e5"),
        ("search:paths=-1e3", "paths = -1e3"),
        ("search:time=0", "time = 0"),
        ("search:symmetric=2", "symmetric = 2 must be 0 or 1"),
        ("exact:timeout=-1", "timeout = -1"),
        ("exact:foo=1", "unknown parameter 'foo'"),
    ] {
        let e = bad.parse::<Algo>().unwrap_err().to_string();
        assert!(e.contains(msg), "{bad}: {e}");
    }
}

/// The same without levels: the fat-tree read from a file with every level
/// removed, the k-bounce paths given as a path file. The closeness ranking
/// puts the ToRs lowest, and up*/down* over it is the Clos scheme again.
#[test]
fn search_matches_clos_without_levels() {
    let dir = tempfile::tempdir().unwrap();
    let (t, _) = build("fattree:k=4", "kbounce:0");
    let mut json: serde_json::Value =
        serde_json::from_str(&tagger::generators::file::to_json(&t)).unwrap();
    for n in json["nodes"].as_array_mut().unwrap() {
        n["level"] = serde_json::Value::Null;
    }
    let topo_file = dir.path().join("ft.json");
    std::fs::write(&topo_file, json.to_string()).unwrap();
    for b in 1..=2u32 {
        let (t, e) = build("fattree:k=4", &format!("kbounce:{b}"));
        let mut text = String::new();
        tagger::elp::enumerate::for_each_path(&t, &e, u64::MAX, |p| {
            let line: Vec<String> = p.iter().map(u32::to_string).collect();
            text += &(line.join(" ") + "\n");
            Ok(())
        })
        .unwrap();
        let paths = dir.path().join(format!("kb{b}.paths"));
        std::fs::write(&paths, text).unwrap();
        let topo = format!("file:{}", topo_file.display());
        let elp = format!("file:{}", paths.display());
        let s = run(&topo, &elp, "search").summary;
        assert_eq!(s.figures.priorities, b + 1, "kbounce:{b} without levels");
    }
}

/// `search` (by default a reversal-symmetric and an unrestricted local
/// search side by side): its plans pass the verifier on every family,
/// never use more priorities than greedy, and are the same on one thread
/// or two.
#[test]
fn symmetric_search_is_verified_and_deterministic() {
    for (topo, elp) in [
        ("fattree:k=4", "kbounce:1"),
        ("leafspine:leaves=4,spines=2,hosts=1", "shortest"),
        ("bcube:n=3,k=1", "shortest"),
        ("hyperx:l=2,s=3,t=1", "shortest"),
        ("jellyfish:n=40,ports=12,r=6,seed=3", "shortest"),
    ] {
        let s = run(topo, elp, "search:budget=5000000").summary;
        let g = run(topo, elp, "greedy").summary;
        assert!(s.verified, "{topo} {elp}");
        assert!(s.figures.priorities <= g.figures.priorities, "{topo} {elp}");
    }
    // A Jellyfish whose local search runs (greedy and the constructions
    // stop at 3; 2 exists).
    let (t, e) = build("jellyfish:n=200,ports=64,r=12,seed=2", "shortest");
    let algo: Algo = "search:budget=50000000,seed=1,symmetric=1".parse().unwrap();
    let at = |threads: usize| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| tagging::tag(&t, &e, algo, CycleBackend::Ordered).unwrap())
    };
    let (one, two) = (at(1), at(2));
    assert_eq!(one.keys, two.keys);
    assert_eq!(one.effort, two.effort);
    assert!(one.effort.as_ref().unwrap().steps > 0, "the search ran");
    assert_eq!(one.priorities, 2);
    let rules = tagger::rules::RuleSet::from_tagging(&t, &one);
    assert!(tagger::verify::verify(&t, &rules, Some(&e)).ok());
}

/// Where the target is out of reach (`exact` proves 3 on this fat-tree) the
/// local search gives up by the stall rule long before the default budget,
/// and the run says so.
#[test]
fn an_unreachable_target_is_given_up_as_stalled() {
    let r = run("fattree:k=4", "kbounce:2", "search");
    let f = &r.summary.figures;
    assert_eq!((f.priorities, f.priorities_lower_bound), (3, 2));
    assert_eq!(f.search_stalled, Some(true));
    assert_eq!(f.search_stopped_early, Some(false));
    let evaluations = f.search_evaluations.unwrap();
    assert!(evaluations < tagging::SEARCH_BUDGET / 10, "{evaluations}");
    assert!(f.search_residue.is_some_and(|r| r > 0));
    let text = tagger::render::run(&r, None, None);
    assert!(text.contains("it had stopped making progress"), "{text}");
    assert!(
        text.contains("of a budget of 1000000000 path evaluations"),
        "{text}"
    );
}
