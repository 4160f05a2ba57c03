//! The verifier against deliberately broken rule sets, and round trips of
//! every algorithm on every family.

use tagger::Topology;
use tagger::elp::ElpSet;
use tagger::rules::{Entry, RuleSet, compress};
use tagger::verify::{Violation, verify};

mod common;
use common::plan as setup;

fn kinds(t: &Topology, r: &RuleSet, e: &ElpSet) -> Vec<&'static str> {
    verify(t, r, Some(e))
        .violations
        .iter()
        .map(Violation::kind)
        .collect()
}

#[test]
fn valid_rules_verify() {
    let (t, e, r) = setup("fattree:k=4", "kbounce:1", "clos");
    let rep = verify(&t, &r, Some(&e));
    assert!(rep.ok(), "{rep}");
    assert!(rep.transitions_replayed > 0);
}

#[test]
fn closing_a_same_priority_cycle_is_caught() {
    // Up-down rules on a leaf-spine; add the bounce entries of docs/model.md's worked
    // example at priority 1, closing (1->4)->(4->2)->(2->5)->(5->1)->(1->4).
    let (t, e, mut r) = setup("leafspine:leaves=4,spines=2,hosts=1", "kbounce:0", "greedy");
    let link = |a: u32, b: u32| {
        t.links()
            .iter()
            .position(|&l| l == [a.min(b), a.max(b)])
            .unwrap() as u32
    };
    for (node, from, to) in [(4, 1, 2), (2, 4, 5), (5, 2, 1), (1, 5, 4)] {
        r.entries.push(Entry {
            node,
            in_link: Some(link(from, node)),
            tag: 1,
            out_link: link(node, to),
            next_tag: 1,
            priority: 1,
            next_priority: 1,
        });
    }
    r.entries.sort();
    r.entries.dedup();
    let rep = verify(&t, &r, Some(&e));
    let Some(Violation::Cycle { priority, channels }) = rep.find("cycle") else {
        panic!("no cycle found: {rep}");
    };
    assert_eq!(*priority, 1);
    // The cycle, from wherever it was entered.
    let hops: Vec<(u32, u32)> = channels.iter().map(|&(_, a, b)| (a, b)).collect();
    let ring = [(1, 4), (4, 2), (2, 5), (5, 1)];
    let start = ring.iter().position(|h| *h == hops[0]).expect("a ring hop");
    assert_eq!(hops.len(), 4, "{hops:?}");
    for (i, h) in hops.iter().enumerate() {
        assert_eq!(*h, ring[(start + i) % 4], "{hops:?}");
    }
    let msg = rep.find("cycle").unwrap().to_string();
    assert!(
        msg.contains("priority 1 has a cyclic buffer dependency"),
        "{msg}"
    );
    for hop in ["(1->4)", "(4->2)", "(2->5)", "(5->1)"] {
        assert!(msg.contains(hop), "{msg}");
    }
}

#[test]
fn two_actions_for_one_key_are_caught() {
    let (t, e, mut r) = setup("fattree:k=4", "kbounce:1", "clos");
    let mut dup = r.entries[10];
    let was = dup.next_tag;
    dup.next_tag += 1;
    dup.next_priority += 1;
    r.entries.push(dup);
    let rep = verify(&t, &r, Some(&e));
    assert_eq!(
        rep.find("key"),
        Some(&Violation::Key {
            node: dup.node,
            in_link: dup.in_link,
            tag: dup.tag,
            out_link: dup.out_link,
            next_tags: [was, was + 1],
        }),
        "{rep}"
    );
}

#[test]
fn a_lowered_priority_is_caught() {
    let (t, e, mut r) = setup("fattree:k=4", "kbounce:1", "clos");
    let i = r
        .entries
        .iter()
        .position(|x| x.next_tag == 2 && x.tag == 2)
        .unwrap();
    r.entries[i].next_tag = 1;
    r.entries[i].next_priority = 1;
    let rep = verify(&t, &r, Some(&e));
    assert_eq!(
        rep.find("decrease"),
        Some(&Violation::Decrease {
            entry: r.entries[i]
        }),
        "{rep}"
    );
}

#[test]
fn a_missing_entry_is_caught_by_replay() {
    let (t, e, mut r) = setup("fattree:k=4", "kbounce:1", "greedy");
    r.entries.remove(r.entries.len() / 2);
    let rep = verify(&t, &r, Some(&e));
    let v = rep.find("replay").expect("replay violation");
    assert!(matches!(v, Violation::Replay { .. }), "{v:?}");
    assert!(v.to_string().contains("has no lossless entry"), "{v}");
}

#[test]
fn inconsistent_queue_is_caught() {
    let (t, e, mut r) = setup("fattree:k=4", "kbounce:1", "clos");
    r.entries[5].priority += 1;
    r.entries[5].next_priority += 1;
    assert!(kinds(&t, &r, &e).contains(&"queue"));
}

#[test]
fn every_algorithm_on_every_family_verifies() {
    for (spec, elps, algos) in [
        (
            "fattree:k=4",
            &["shortest", "kbounce:0", "kbounce:2", "kbounce:1+random:50"][..],
            &["brute", "greedy", "clos:3"][..],
        ),
        (
            "leafspine:leaves=4,spines=3,hosts=2,links=2",
            &["kbounce:1", "shortest"],
            &["brute", "greedy", "clos:1"],
        ),
        (
            "bcube:n=3,k=1",
            &["dor", "shortest", "dor+random:30"],
            &["brute", "greedy"],
        ),
        (
            "hyperx:l=2,s=3,k=2,t=1",
            &["dor", "shortest"],
            &["brute", "greedy"],
        ),
        (
            "jellyfish:n=30,ports=6,r=4,seed=1",
            &[
                "shortest",
                "random:80",
                "shortest+random:80",
                "ksp:4",
                "ksp:3,pairs=100+shortest",
            ],
            &["brute", "greedy"],
        ),
    ] {
        for elp in elps {
            for algo in algos {
                let (t, e, r) = setup(spec, elp, algo);
                let rep = verify(&t, &r, Some(&e));
                assert!(rep.ok(), "{spec} {elp} {algo}: {rep}");
            }
        }
    }
}

#[test]
fn rules_json_round_trip_and_compression_is_exact() {
    let (t, _, r) = setup(
        "jellyfish:n=30,ports=6,r=4,seed=1",
        "shortest+random:80",
        "greedy",
    );
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("r.json");
    std::fs::write(&p, r.to_json()).unwrap();
    let back = RuleSet::read(&p).unwrap();
    assert_eq!(back.entries, r.entries);
    assert_eq!(back.priorities, r.priorities);
    let mut total_c = 0;
    for es in r.by_node(t.node_count()) {
        let c = compress(es);
        total_c += c.len();
        let mut expanded: Vec<Entry> = c
            .iter()
            .flat_map(|x| {
                x.in_links.iter().flat_map(move |&i| {
                    x.out_links.iter().map(move |&o| Entry {
                        node: es[0].node,
                        in_link: i,
                        tag: x.tag,
                        out_link: o,
                        next_tag: x.next_tag,
                        priority: x.priority,
                        next_priority: x.next_priority,
                    })
                })
            })
            .collect();
        expanded.sort();
        assert_eq!(
            expanded,
            es.to_vec(),
            "expanding the compressed entries gives the exact ones"
        );
    }
    assert!(
        total_c < r.entries.len(),
        "compression helps on this instance"
    );
}

#[test]
fn bad_rules_files_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("r.json");
    std::fs::write(&p, "{\"format\": \"tagger-rules/1\", \"topology\": \"x\"}").unwrap();
    let e = RuleSet::read(&p).unwrap_err().to_string();
    assert!(e.contains("r.json") && e.contains("missing field"), "{e}");
}

/// Every header field the verifier reads is checked: what hosts send
/// (`initial_tag`) is where the replay starts, `priorities` must match the
/// entries, the topology must be the one given, and a switch's queues cap
/// the priorities.
#[test]
fn the_header_is_checked_against_the_entries() {
    let (t, e, r) = setup("fattree:k=4", "kbounce:1", "clos");
    // Hosts said to send tag 5, entries matching tag 1: refused.
    let mut bad = r.clone();
    bad.initial_tag = 5;
    let k = kinds(&t, &bad, &e);
    assert!(k.contains(&"entry") && k.contains(&"replay"), "{k:?}");
    // The same plan with every tag 1000 higher, hosts sending 1001: valid.
    let mut shifted = r.clone();
    shifted.initial_tag = 1001;
    for x in &mut shifted.entries {
        x.tag += 1000;
        x.next_tag += 1000;
    }
    let rep = verify(&t, &shifted, Some(&e));
    assert!(rep.ok(), "{rep}");
    assert_eq!(
        rep.transitions_replayed,
        verify(&t, &r, Some(&e)).transitions_replayed
    );
    for (field, mutate) in [
        (
            "priorities",
            (|r: &mut RuleSet| r.priorities = 64) as fn(&mut RuleSet),
        ),
        ("priorities", |r| r.priorities = u32::MAX),
        ("topology", |r| r.topology = "fattree:k=6".into()),
        ("initial_tag", |r| r.initial_tag = 0),
    ] {
        let mut bad = r.clone();
        mutate(&mut bad);
        let rep = verify(&t, &bad, Some(&e));
        assert!(
            rep.violations.iter().any(
                |v| matches!(v, Violation::Header { field: f, .. } if *f == field)
                    && v.to_string().contains(field)
            ),
            "{field}: {rep}"
        );
    }
    // A nameless topology file is named by its path: the same file reached
    // by another path is the same topology.
    let named = |name: &str| {
        let mut json: serde_json::Value =
            serde_json::from_str(&tagger::generators::file::to_json(&t)).unwrap();
        json.as_object_mut().unwrap().remove("name");
        tagger::generators::file::parse_json(&json.to_string(), name).unwrap()
    };
    let mut by_path = r.clone();
    by_path.topology = "./nets/ft.json".into();
    assert!(verify(&named("/srv/nets/ft.json"), &by_path, Some(&e)).ok());
    assert!(!verify(&named("/srv/nets/other.json"), &by_path, Some(&e)).ok());
    // Queues: 2 priorities fit 2, not 1.
    let lim = |n| tagger::verify::Limits {
        max_priorities: Some(n),
        max_tags: None,
    };
    assert!(tagger::verify::verify_within(&t, &r, Some(&e), &lim(2)).ok());
    let rep = tagger::verify::verify_within(&t, &r, Some(&e), &lim(1));
    assert_eq!(
        rep.find("priorities"),
        Some(&Violation::Priorities { used: 2, queues: 1 }),
        "{rep}"
    );
    // Tags: the plan's largest tag fits exactly; one tag fewer does not.
    let top = r
        .entries
        .iter()
        .map(|e| e.tag.max(e.next_tag))
        .max()
        .unwrap();
    let tags = |n| tagger::verify::Limits {
        max_priorities: None,
        max_tags: Some(n),
    };
    assert!(tagger::verify::verify_within(&t, &r, Some(&e), &tags(top)).ok());
    let rep = tagger::verify::verify_within(&t, &r, Some(&e), &tags(top - 1));
    assert_eq!(
        rep.find("tags"),
        Some(&Violation::Tags {
            used: top,
            max: top - 1
        }),
        "{rep}"
    );
}
