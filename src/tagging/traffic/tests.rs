use super::*;
use crate::cycle::{NaiveDag, has_cycle};
use crate::elp::{ElpSet, ElpSpec};
use crate::tagging::{Tagging, tag};
use crate::testing::topo;

fn plan(spec: &str, elp: &str, algo: &str) -> (Topology, Tagging) {
    let t = topo(spec);
    let e = ElpSet::build(&t, &ElpSpec::parse(elp).unwrap()).unwrap();
    let tg = tag(&t, &e, algo.parse().unwrap(), Default::default()).unwrap();
    (t, tg)
}

const CASES: &[(&str, &str, &str)] = &[
    ("fattree:k=4", "kbounce:1", "clos"),
    ("fattree:k=4", "kbounce:2", "greedy"),
    ("fattree:k=8", "kbounce:2", "clos"),
    ("leafspine:leaves=4,spines=2,hosts=1", "kbounce:1", "greedy"),
    ("jellyfish:n=30,ports=8,r=4,seed=2", "shortest", "greedy"),
    ("jellyfish:n=30,ports=8,r=4,seed=2", "shortest", "search"),
    ("bcube:n=3,k=1", "dor", "greedy"),
    ("hyperx:l=2,s=3,k=1,t=1", "shortest", "brute"),
    ("fattree:k=4", "kbounce:1", "greedy-ttl"),
];

/// The complete function the classes define: every key's decision, and
/// per priority an acyclic dependency graph over every packet (ELP or
/// not), with priorities that never fall.
fn check_complete(t: &Topology, tg: &Tagging, c: &Classification) {
    for k in &tg.keys {
        let n = c
            .nodes
            .iter()
            .find(|n| n.node == k.node)
            .expect("node classified");
        let class = n.class_of(k.in_channel, k.tag).expect("member classified");
        assert_eq!(class.priority, k.priority, "{k:?}");
        let j = t
            .out_channels(k.node)
            .iter()
            .position(|&o| o == k.out_channel)
            .unwrap();
        assert_eq!(
            class.egress[j],
            Some((k.next_tag, k.next_priority)),
            "{k:?}"
        );
    }
    let top = tg.priorities as usize;
    let mut same: Vec<Vec<(u32, u32)>> = vec![Vec::new(); top + 1];
    for n in &c.nodes {
        let outs = t.out_channels(n.node);
        for &(from, _, ci) in &n.ingress {
            let class = &n.classes[ci as usize];
            for (j, e) in class.egress.iter().enumerate() {
                let Some((_, q)) = *e else { continue };
                assert!(q >= class.priority);
                if let Some(f) = from
                    && q == class.priority
                {
                    same[q as usize].push((f, outs[j]));
                }
            }
        }
    }
    for (p, e) in same.into_iter().enumerate() {
        assert!(
            !has_cycle(e),
            "priority {p} of the complete function has a cycle"
        );
    }
}

#[test]
fn the_complete_function_keeps_every_key_and_no_cycle() {
    for &(spec, elp, algo) in CASES {
        let (t, tg) = plan(spec, elp, algo);
        let c = classify(&t, &tg.keys).unwrap();
        check_complete(&t, &tg, &c);
    }
}

/// The fast backend against the oracle: the same classes.
#[test]
fn every_backend_gives_the_same_classes() {
    for &(spec, elp, algo) in CASES {
        let (t, tg) = plan(spec, elp, algo);
        assert_eq!(
            classify_with::<OrderedDag>(&t, &tg.keys).unwrap(),
            classify_with::<NaiveDag>(&t, &tg.keys).unwrap(),
            "{spec} {elp} {algo}"
        );
    }
}

/// The key order does not matter, nor the thread count.
#[test]
fn deterministic() {
    let (t, tg) = plan("jellyfish:n=30,ports=8,r=4,seed=2", "shortest", "greedy");
    let a = classify(&t, &tg.keys).unwrap();
    let mut rev = tg.keys.clone();
    rev.reverse();
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let b = one.install(|| classify(&t, &rev).unwrap());
    assert_eq!(a, b);
}

/// A Clos bounce plan needs at most two classes per arriving priority
/// (from above and from below) and a host class: fat-tree k=8 `kbounce:2`
/// fits the seven a switch has.
#[test]
fn clos_plans_need_few_classes() {
    let (t, tg) = plan("fattree:k=8", "kbounce:2", "clos");
    let c = classify(&t, &tg.keys).unwrap();
    assert!(c.max() <= 7, "{}", c.max());
    assert!(c.over(7).is_empty());
}

/// Without completions (a TTL plan), a class gives exactly its members'
/// decisions: free ports lossy.
#[test]
fn ttl_plans_leave_free_ports_lossy() {
    let (t, tg) = plan("fattree:k=4", "kbounce:1", "greedy-ttl");
    let c = classify(&t, &tg.keys).unwrap();
    for n in &c.nodes {
        let outs = t.out_channels(n.node);
        for &(from, tag, ci) in &n.ingress {
            for (j, e) in n.classes[ci as usize].egress.iter().enumerate() {
                let key = tg.keys.iter().find(|k| {
                    k.node == n.node
                        && k.in_channel == from
                        && k.tag == tag
                        && k.out_channel == outs[j]
                });
                assert_eq!(*e, key.map(|k| (k.next_tag, k.next_priority)));
            }
        }
    }
}

/// A U-turn a class makes lossless at one end of a link is refused where
/// it would close a cycle: on a leaf-spine, leaf 0 takes its arrivals from
/// the spines into its host class (which keeps priority 1 up to every
/// spine, the way back included); from then on a spine keeping the U-turn
/// down to leaf 0, or another leaf keeping its own, would close a cycle
/// through leaf 0, so those get a second class instead.
#[test]
fn u_turns_never_close_a_cycle() {
    let (t, tg) = plan("leafspine:leaves=4,spines=2,hosts=1", "shortest", "greedy");
    let c = classify(&t, &tg.keys).unwrap();
    check_complete(&t, &tg, &c);
    assert_eq!(c.nodes[0].classes.len(), 1, "{:?}", c.nodes[0]);
    assert!(
        c.nodes.iter().skip(1).all(|n| n.classes.len() == 2),
        "{c:?}"
    );
}

/// Keys in any order give the classes their sorted order gives (the
/// plans hold them sorted and are borrowed; others are sorted first).
#[test]
fn key_order_does_not_change_the_classes() {
    for &(spec, elp, algo) in CASES {
        let (t, tg) = plan(spec, elp, algo);
        assert!(
            tg.keys.is_sorted(),
            "{spec} {algo}: plans hold their keys sorted"
        );
        let want = classify(&t, &tg.keys).unwrap();
        let mut keys = tg.keys.clone();
        keys.reverse();
        assert_eq!(classify(&t, &keys).unwrap(), want, "{spec} {algo} reversed");
    }
}

/// Completions through a hub per class and as direct edges give the same
/// classes (the graphs have the same paths among channels), at nodes
/// with many ports and parallel links, on the fast backend and the
/// oracle.
#[test]
fn hubs_and_direct_completions_give_the_same_classes() {
    for (spec, elp, algo) in [
        (
            "leafspine:leaves=8,spines=2,hosts=2,links=3",
            "shortest",
            "greedy",
        ),
        (
            "leafspine:leaves=6,spines=3,hosts=1,links=4",
            "kbounce:1",
            "greedy",
        ),
        ("jellyfish:n=30,ports=8,r=4,seed=2", "shortest", "search"),
        ("jellyfish:n=30,ports=8,r=4,seed=2", "shortest", "greedy"),
        (
            "jellyfish:n=24,ports=6,r=3,seed=5",
            "random:300,seed=3",
            "greedy",
        ),
        (
            "jellyfish:n=24,ports=6,r=4,seed=1",
            "shortest+random:200",
            "greedy",
        ),
        ("fattree:k=4", "kbounce:2", "greedy"),
        ("fattree:k=8", "kbounce:2", "clos"),
        ("bcube:n=3,k=1", "dor", "greedy"),
    ]
    .into_iter()
    .map(|(s, e, a)| (s.to_string(), e.to_string(), a))
    .chain((1..=40).map(|seed| {
        (
            format!("jellyfish:n=16,ports=6,r=4,seed={seed}"),
            format!("random:120,seed={seed}"),
            "greedy",
        )
    })) {
        let (t, tg) = plan(&spec, &elp, algo);
        let direct = classify_hubs::<OrderedDag>(&t, &tg.keys, usize::MAX).unwrap();
        for hub_ports in [0, 4] {
            assert_eq!(
                classify_hubs::<OrderedDag>(&t, &tg.keys, hub_ports).unwrap(),
                direct,
                "{spec} {elp} {algo}: hubs past {hub_ports} ports"
            );
        }
        assert_eq!(
            classify_hubs::<NaiveDag>(&t, &tg.keys, 0).unwrap(),
            direct,
            "{spec} {elp} {algo}: naive backend"
        );
        check_complete(&t, &tg, &direct);
    }
}

/// On a long chain every completion's check would walk back to the last
/// accepted U-turn; past [`CHECK_WORK`] arcs a check refuses the member
/// instead. The classes stay a complete acyclic function, as many per
/// switch as the full checks give here.
#[test]
fn long_chains_bound_their_checks_and_stay_valid() {
    let t = crate::testing::chain(6000);
    let e = ElpSet::build(&t, &ElpSpec::parse("random:60,seed=3").unwrap()).unwrap();
    let tg = tag(&t, &e, "greedy".parse().unwrap(), Default::default()).unwrap();
    let c = classify(&t, &tg.keys).unwrap();
    check_complete(&t, &tg, &c);
    let full = classify_with::<NaiveDag>(&t, &tg.keys).unwrap();
    assert_ne!(c, full, "the bound was reached");
    assert_eq!(c.max(), full.max());
}
