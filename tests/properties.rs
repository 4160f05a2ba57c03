//! Property tests over small random plans: rule compression, the rules
//! file round trip, and verifier mutations that must always be caught.

mod common;

use common::{plan, small_plan};
use proptest::prelude::*;
use std::collections::BTreeSet;
use tagger::rules::{Entry, RuleSet, compress};
use tagger::verify::{Violation, verify};

/// The entries a compressed entry stands for.
fn expand(node: u32, c: &tagger::rules::Compressed) -> Vec<Entry> {
    let mut out = Vec::new();
    for &in_link in &c.in_links {
        for &out_link in &c.out_links {
            out.push(Entry {
                node,
                in_link,
                tag: c.tag,
                out_link,
                next_tag: c.next_tag,
                priority: c.priority,
                next_priority: c.next_priority,
            });
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Per node, the compressed entries cover the node's entries exactly
    /// once each (no entry lost, none added, none twice), and never
    /// outnumber them.
    #[test]
    fn compression_covers_each_entry_exactly_once((t, elp, algo) in small_plan()) {
        let (topo, _, r) = plan(&t, &elp, &algo);
        for (v, entries) in r.by_node(topo.node_count()).into_iter().enumerate() {
            let c = compress(entries);
            prop_assert!(c.len() <= entries.len());
            let mut covered: Vec<Entry> = c.iter().flat_map(|x| expand(v as u32, x)).collect();
            covered.sort_unstable();
            let n = covered.len();
            covered.dedup();
            prop_assert_eq!(n, covered.len(), "an entry covered twice at node {}", v);
            prop_assert_eq!(&covered[..], entries, "node {}", v);
        }
    }

    /// A rules file reads back to every field it holds (header, classes,
    /// entries; the ingress map rebuilt from the entries) and writes out
    /// byte-identical.
    #[test]
    fn rules_files_round_trip((t, elp, algo) in small_plan(), stride in 0u32..3) {
        let (_, _, mut r) = plan(&t, &elp, &algo);
        if stride > 0 {
            r.classes = vec![r.initial_tag, r.initial_tag + stride * r.priorities];
        }
        let text = r.to_json();
        let back = RuleSet::parse(&text, std::path::Path::new("r.json")).unwrap();
        prop_assert_eq!(&back.topology, &r.topology);
        prop_assert_eq!(&back.algo, &r.algo);
        prop_assert_eq!(back.priorities, r.priorities);
        prop_assert_eq!(back.initial_tag, r.initial_tag);
        prop_assert_eq!(&back.classes, &r.classes);
        prop_assert_eq!(&back.entries, &r.entries);
        for (v, ingress) in back.ingress.iter().enumerate() {
            let want: BTreeSet<(u32, u32)> = r
                .entries
                .iter()
                .filter(|e| e.node as usize == v)
                .map(|e| (e.tag, e.priority))
                .collect();
            prop_assert_eq!(ingress.iter().copied().collect::<BTreeSet<_>>(), want);
        }
        prop_assert_eq!(back.to_json(), text);
    }

    /// Breaking a verified plan in a way that always breaks it is always
    /// caught, by the check that owns it: a second action for a key, a
    /// lowered priority, an entry the ELP needs removed.
    #[test]
    fn verifier_catches_every_mutation((t, elp, algo) in small_plan(), pick in any::<prop::sample::Index>()) {
        let (topo, e, r) = plan(&t, &elp, &algo);
        prop_assert!(verify(&topo, &r, Some(&e)).ok());
        let i = pick.index(r.entries.len());
        let x = r.entries[i];

        let mut two = r.clone();
        let mut dup = x;
        dup.next_tag += 1000;
        two.entries.push(dup);
        two.entries.sort_unstable();
        let rep = verify(&topo, &two, Some(&e));
        let is_key = matches!(rep.find("key"), Some(Violation::Key { node, tag, .. }) if *node == x.node && *tag == x.tag);
        prop_assert!(is_key, "{}", rep);

        if x.priority > 1 {
            let mut lower = r.clone();
            lower.entries[i].next_priority = x.priority - 1;
            let rep = verify(&topo, &lower, Some(&e));
            prop_assert_eq!(rep.find("decrease"), Some(&Violation::Decrease { entry: lower.entries[i] }));
        }

        let mut gone = r.clone();
        gone.entries.remove(i);
        gone.priorities = gone.entries.iter().map(|e| e.next_priority.max(e.priority)).max().unwrap_or(0);
        let rep = verify(&topo, &gone, Some(&e));
        prop_assert!(matches!(rep.find("replay"), Some(Violation::Replay { .. })), "{}", rep);
    }
}
