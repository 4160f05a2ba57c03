use super::*;

/// Every reported cycle is a closed walk of enabled edges, the cycles
/// are distinct, and the graph left after removing one edge of each is
/// acyclic (checked by the Kahn oracle).
#[test]
fn cycles_are_real_and_cover_the_graph() {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
    for _ in 0..200 {
        let n = rng.random_range(2..12u32);
        let m = rng.random_range(1..30usize);
        let mut edges: Vec<(u32, u32)> = (0..m)
            .map(|_| (rng.random_range(0..n), rng.random_range(0..n)))
            .filter(|(a, b)| a != b)
            .collect();
        edges.sort_unstable();
        edges.dedup();
        let on: Vec<bool> = edges.iter().map(|_| rng.random_ratio(3, 4)).collect();
        let found = cycles(&edges, &on, usize::MAX);
        let enabled: Vec<(u32, u32)> = edges
            .iter()
            .zip(&on)
            .filter(|(_, o)| **o)
            .map(|(e, _)| *e)
            .collect();
        assert_eq!(
            found.is_empty(),
            !crate::tagging::has_cycle(enabled.clone()),
            "{enabled:?}"
        );
        let mut cut = on.clone();
        for c in &found {
            for (i, &e) in c.iter().enumerate() {
                assert!(on[e as usize]);
                let next = c[(i + 1) % c.len()];
                assert_eq!(edges[e as usize].1, edges[next as usize].0, "{c:?}");
            }
            cut[*c.last().unwrap() as usize] = false;
        }
        let left: Vec<(u32, u32)> = edges
            .iter()
            .zip(&cut)
            .filter(|(_, o)| **o)
            .map(|(e, _)| *e)
            .collect();
        assert!(!crate::tagging::has_cycle(left));
    }
}

/// A first try that runs out at once hands over to the local search,
/// and the solver then finishes the same target: the answer, the proof
/// and the plan are those of a first try that does not run out.
#[test]
fn a_first_try_that_runs_out_ends_the_same() {
    let topo = tagger_generators::TopologySpec::parse("fattree:k=4")
        .unwrap()
        .build()
        .unwrap();
    for (elp, optimum) in [("kbounce:2", 3), ("kbounce:1", 2)] {
        let elp =
            crate::elp::ElpSet::build(&topo, &crate::elp::ElpSpec::parse(elp).unwrap()).unwrap();
        let (budget, control) = (Budget::unlimited(), crate::tagging::Control::new());
        let cx = crate::tagging::Context::new(&topo, &elp, &budget, &control);
        let run = |first_try| {
            let start = Start {
                from: None,
                first_try,
                work: 0,
            };
            plan_with(&cx, Algo::EXACT, Some(300_000), start).unwrap()
        };
        let (quick, slow) = (run(FIRST_TRY_WORK), run(1));
        for t in [&quick, &slow] {
            assert_eq!((t.priorities, t.lower_bound), (optimum, optimum));
        }
        assert_eq!(quick.keys, slow.keys);
        let proof = |t: &Tagging| t.effort.as_ref().unwrap().proof_paths;
        assert_eq!(proof(&quick) > 0, optimum > 2);
        assert_eq!(proof(&slow) > 0, optimum > 2);
    }
}

/// One priority on a triangle of transitions is impossible; two are
/// enough.
#[test]
fn the_solver_proves_and_finds() {
    let mut paths = ChannelPaths::default();
    for p in [[0, 1, 2], [1, 2, 0], [2, 0, 1]] {
        paths.push(&p).unwrap();
    }
    let solve = |p: u32| {
        let mut enc = Encoding::new(p);
        for i in 0..paths.len() {
            enc.add_path(paths.path(i)).unwrap();
        }
        enc.solve(
            None,
            None,
            &crate::tagging::Control::new(),
            &mut 0,
            &Budget::unlimited(),
        )
        .unwrap()
    };
    assert!(matches!(solve(1), Answer::Impossible));
    let Answer::Plan(kept) = solve(2) else {
        panic!("two priorities fit a triangle");
    };
    let plan: FxHashMap<(ChannelId, ChannelId), Vec<bool>> = [(0, 1), (1, 2), (2, 0)]
        .into_iter()
        .map(|e| (e, (0..2).map(|t| kept[t].contains(&e)).collect()))
        .collect();
    for row in &kept {
        assert!(!crate::tagging::has_cycle(row.clone()));
    }
    // Replay each path through the plan: it stays within 2.
    for i in 0..paths.len() {
        let mut t = 1usize;
        for w in paths.path(i).windows(2) {
            if !plan[&(w[0], w[1])][t - 1] {
                t += 1;
            }
        }
        assert!(t <= 2);
    }
}
