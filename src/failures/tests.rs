//! The per-destination counts against an oracle that lists every route
//! and replays it hop by hop through the rule entries.

use super::replay::{Compiled, Outcome, analyze};
use super::*;
use crate::rules::RuleSet;
use std::collections::{BTreeSet, HashMap};
use tagger_generators::{ChannelId, NodeId};

use crate::testing::topo;

fn rules_for(t: &Topology, elp: &str, algo: &str) -> RuleSet {
    let set = ElpSet::build(t, &ElpSpec::parse(elp).unwrap()).unwrap();
    let tg = tagging::tag(t, &set, algo.parse().unwrap(), CycleBackend::default()).unwrap();
    let r = RuleSet::from_tagging(t, &tg);
    assert!(crate::verify::verify(t, &r, Some(&set)).ok());
    r
}

fn bfs_dist(t: &Topology, to: NodeId, dead: &[bool], dead_nodes: &[bool]) -> Vec<u32> {
    let mut d = vec![u32::MAX; t.node_count()];
    if dead_nodes[to as usize] {
        return d;
    }
    d[to as usize] = 0;
    let mut q = std::collections::VecDeque::from([to]);
    while let Some(v) = q.pop_front() {
        for &c in t.out_channels(v) {
            let w = t.channel_dst(c);
            if !dead[(c >> 1) as usize] && d[w as usize] == u32::MAX {
                d[w as usize] = d[v as usize] + 1;
                q.push_back(w);
            }
        }
    }
    d
}

/// Every route from `v` to `to` down the distance `d` over live links.
fn dag_routes(
    t: &Topology,
    v: NodeId,
    to: NodeId,
    d: &[u32],
    dead: &[bool],
) -> Vec<Vec<ChannelId>> {
    if v == to {
        return vec![Vec::new()];
    }
    let mut out = Vec::new();
    for &c in t.out_channels(v) {
        let w = t.channel_dst(c);
        if !dead[(c >> 1) as usize]
            && d[v as usize] != u32::MAX
            && d[w as usize] + 1 == d[v as usize]
        {
            for mut r in dag_routes(t, w, to, d, dead) {
                r.insert(0, c);
                out.push(r);
            }
        }
    }
    out
}

/// Per ordered pair `(s, t)`, its distinct routes.
type PairRoutes = Vec<((NodeId, NodeId), BTreeSet<Vec<ChannelId>>)>;

/// The routes of every pair `(s, t)`, listed.
fn routes(t: &Topology, dead: &[bool], dead_nodes: &[bool], routing: Routing) -> PairRoutes {
    let none = vec![false; t.link_count()];
    let mut out = Vec::new();
    for &dst in t.endpoints() {
        let dd = bfs_dist(t, dst, dead, dead_nodes);
        let dh = bfs_dist(t, dst, &none, &vec![false; t.node_count()]);
        for &s in t.endpoints() {
            if s == dst {
                continue;
            }
            let mut set = BTreeSet::new();
            if !dead_nodes[s as usize] && !dead_nodes[dst as usize] {
                match routing {
                    Routing::Converged => set.extend(dag_routes(t, s, dst, &dd, dead)),
                    Routing::Local => {
                        for r in dag_routes(t, s, dst, &dh, &none) {
                            let Some(i) = r.iter().position(|&c| dead[(c >> 1) as usize]) else {
                                set.insert(r);
                                continue;
                            };
                            let v = t.channel_src(r[i]);
                            let from = (i > 0).then(|| t.channel_src(r[i - 1]));
                            let cands: Vec<ChannelId> = t
                                .out_channels(v)
                                .iter()
                                .copied()
                                .filter(|&c| {
                                    !dead[(c >> 1) as usize] && Some(t.channel_dst(c)) != from
                                })
                                .collect();
                            let best = cands
                                .iter()
                                .map(|&c| dd[t.channel_dst(c) as usize])
                                .min()
                                .unwrap_or(u32::MAX);
                            if best == u32::MAX {
                                continue;
                            }
                            for &c in &cands {
                                if dd[t.channel_dst(c) as usize] == best {
                                    for tail in dag_routes(t, t.channel_dst(c), dst, &dd, dead) {
                                        let mut p = r[..i].to_vec();
                                        p.push(c);
                                        p.extend(tail);
                                        set.insert(p);
                                    }
                                }
                            }
                        }
                    }
                }
            }
            out.push(((s, dst), set));
        }
    }
    out
}

/// The oracle's outcome, plus every listed route with whether it stayed
/// lossless.
#[allow(clippy::type_complexity)]
fn oracle(
    t: &Topology,
    rules: &RuleSet,
    dead: &[bool],
    dead_nodes: &[bool],
    routing: Routing,
) -> (
    Outcome,
    BTreeSet<(ChannelId, ChannelId)>,
    Vec<(Vec<ChannelId>, bool)>,
) {
    let table: HashMap<(NodeId, Option<u32>, u32, u32), (u32, usize)> = rules
        .entries
        .iter()
        .enumerate()
        .map(|(i, e)| ((e.node, e.in_link, e.tag, e.out_link), (e.next_tag, i)))
        .collect();
    let mut o = Outcome::default();
    let mut deps = BTreeSet::new();
    let mut fallback = BTreeSet::new();
    let mut entries = BTreeSet::new();
    let mut listed = Vec::new();
    for ((_, _), set) in routes(t, dead, dead_nodes, routing) {
        o.pairs += 1;
        if set.is_empty() {
            o.pairs_disconnected += 1;
            continue;
        }
        let mut all = true;
        for r in &set {
            o.paths += 1;
            let mut tag = Some(rules.initial_tag);
            let mut prev: Option<ChannelId> = None;
            for &c in r {
                if let Some(p) = prev {
                    deps.insert((p, c));
                }
                if let Some(tg) = tag {
                    let v = t.channel_src(c);
                    match table.get(&(v, prev.map(|p| p >> 1), tg, c >> 1)) {
                        Some(&(nt, i)) => {
                            tag = Some(nt);
                            entries.insert(i);
                        }
                        None => {
                            tag = None;
                            fallback.insert((prev, c));
                        }
                    }
                }
                prev = Some(c);
            }
            if tag.is_some() {
                o.lossless_paths += 1;
            } else {
                all = false;
            }
            listed.push((r.clone(), tag.is_some()));
        }
        if all {
            o.pairs_lossless += 1;
        }
    }
    o.fallback = vec![fallback.len() as u64];
    o.entries = vec![entries.len() as u64];
    (o, deps, listed)
}

fn ones(b: &[u64]) -> u64 {
    b.iter().map(|w| w.count_ones() as u64).sum()
}

/// Compares the counting replay with the oracle on one trial.
fn compare(t: &Topology, rules: &RuleSet, tr: &Trial, routing: Routing, what: &str) {
    let plan = Compiled::new(t, rules);
    let (dl, dn) = (tr.dead_links(t), tr.dead_nodes(t));
    let got = analyze(t, &plan, &dl, &dn, routing);
    let (want, deps, _) = oracle(t, rules, &dl, &dn, routing);
    let ctx = format!("{what} {routing} {tr:?}");
    assert_eq!(got.pairs, want.pairs, "{ctx}");
    assert_eq!(got.pairs_disconnected, want.pairs_disconnected, "{ctx}");
    assert_eq!(got.paths, want.paths, "{ctx}: routes");
    assert_eq!(got.lossless_paths, want.lossless_paths, "{ctx}: lossless");
    assert_eq!(got.pairs_lossless, want.pairs_lossless, "{ctx}");
    assert_eq!(
        ones(&got.fallback),
        want.fallback[0],
        "{ctx}: fallback hops"
    );
    assert_eq!(ones(&got.entries), want.entries[0], "{ctx}: entries used");
    let mut edges: Vec<(ChannelId, ChannelId)> = (0..plan.transitions())
        .filter(|&i| got.used[(i / 64) as usize] >> (i % 64) & 1 == 1)
        .filter_map(|i| plan.channels_of(t, i))
        .collect();
    edges.sort_unstable();
    let want_edges: Vec<_> = deps.into_iter().collect();
    assert_eq!(edges, want_edges, "{ctx}: dependencies");
}

#[test]
fn counts_match_listed_routes() {
    for (spec, elp, algo) in [
        ("fattree:k=4", "shortest", "greedy"),
        ("fattree:k=4", "kbounce:1", "clos"),
        ("fattree:k=6", "kbounce:1", "greedy"),
        ("jellyfish:n=16,ports=6,r=4,seed=3", "shortest", "greedy"),
        ("leafspine:leaves=4,spines=3,links=2", "shortest", "greedy"),
    ] {
        let t = topo(spec);
        let rules = rules_for(&t, elp, algo);
        for fail in [
            "links:1,trials=6,seed=2",
            "links:3,trials=6,seed=5",
            "switches:1,trials=3,seed=1",
        ] {
            for tr in FailureSpec::parse(fail).unwrap().draw(&t).unwrap() {
                for routing in [Routing::Converged, Routing::Local] {
                    compare(&t, &rules, &tr, routing, &format!("{spec} {elp} {algo}"));
                }
            }
        }
    }
}

fn ft4_trial(pairs: &[(NodeId, NodeId)]) -> Trial {
    let t = topo("fattree:k=4");
    let mut links: Vec<u32> = pairs
        .iter()
        .map(|&(a, b)| {
            t.links()
                .iter()
                .position(|&l| l == [a, b] || l == [b, a])
                .unwrap() as u32
        })
        .collect();
    links.sort_unstable();
    Trial {
        links,
        switches: Vec::new(),
    }
}

/// Fat-tree k=4, ToR 0's link to aggregation switch 8 down, local reroute.
/// Routes from 0 keep to agg 9 (4 ECMP routes lost, none added). Routes
/// into 0 that reach agg 8 are deflected: from ToR 1 the packet may not
/// return to 1, so it climbs to cores 16 and 17 and U-turns back down
/// through 8 (2 routes); from other pods it bounces at ToR 1 (8 -> 1 -> 9,
/// 2 routes per source). 156 + 13 + 27 = 196 routes; the `shortest` plan
/// loses the 12 bounces and 2 U-turns, `kbounce:1` with `clos` keeps the
/// bounces and loses the U-turns only.
#[test]
fn one_failed_tor_link_under_local_reroute() {
    let t = topo("fattree:k=4");
    let tr = ft4_trial(&[(0, 8)]);
    let (dl, dn) = (tr.dead_links(&t), tr.dead_nodes(&t));
    for (elp, algo, lossless) in [("shortest", "greedy", 182), ("kbounce:1", "clos", 194)] {
        let rules = rules_for(&t, elp, algo);
        let o = analyze(&t, &Compiled::new(&t, &rules), &dl, &dn, Routing::Local);
        assert_eq!((o.paths, o.lossless_paths), (196, lossless), "{elp}");
        assert_eq!(o.pairs_disconnected, 0);
        let (_, _, listed) = oracle(&t, &rules, &dl, &dn, Routing::Local);
        let uturn = |r: &[ChannelId]| r.windows(2).any(|w| w[0] ^ 1 == w[1]);
        assert_eq!(listed.iter().filter(|(r, _)| uturn(r)).count(), 2);
        assert_eq!(
            listed
                .iter()
                .filter(|(r, _)| bounces(&t, r) == 1 && !uturn(r))
                .count(),
            12
        );
        for (r, ok) in &listed {
            if elp == "kbounce:1" {
                assert_eq!(*ok, !uturn(r), "{r:?}");
            } else {
                assert_eq!(*ok, bounces(&t, r) == 0 && !uturn(r), "{r:?}");
            }
        }
        // Converged routing: 4 routes fewer for each pair with ToR 0,
        // nothing bounces, every route stays lossless.
        let c = analyze(&t, &Compiled::new(&t, &rules), &dl, &dn, Routing::Converged);
        assert_eq!((c.paths, c.lossless_paths), (182, 182), "{elp}");
    }
    // One link cannot create a dependency cycle in either model.
    let rules = rules_for(&t, "shortest", "greedy");
    let (_, deps, _) = oracle(&t, &rules, &dl, &dn, Routing::Local);
    let deps: Vec<_> = deps.into_iter().collect();
    assert_eq!(cbd::shortest_cycle(t.channel_count(), &deps), None);
}

/// Down-then-up turns of a route (levels of a tiered network).
fn bounces(t: &Topology, r: &[ChannelId]) -> usize {
    let up = |c: ChannelId| t.level(t.channel_dst(c)) > t.level(t.channel_src(c));
    r.windows(2).filter(|w| !up(w[0]) && up(w[1])).count()
}

/// Correlated failures on fat-tree k=4, six links around two aggregation
/// switches: agg 8 (pod 0) loses both cores and agg 11 (pod 1) loses all
/// four links. Pod 0 then reaches the core only through cores 18-19 and
/// pod 1 only through cores 16-17, so converged shortest routes between
/// them bounce at a ToR of pod 2 or 3, in both directions: plain PFC has
/// a dependency cycle, and the `kbounce:1` plan keeps all 238 routes lossless
/// where the `shortest` plan keeps 110.
#[test]
fn correlated_failures_bounce_and_deadlock_plain_pfc() {
    let t = topo("fattree:k=4");
    let tr = ft4_trial(&[(8, 16), (8, 17), (2, 11), (3, 11), (11, 18), (11, 19)]);
    let (dl, dn) = (tr.dead_links(&t), tr.dead_nodes(&t));
    let mut lossless = Vec::new();
    for (elp, algo) in [("shortest", "greedy"), ("kbounce:1", "clos")] {
        let rules = rules_for(&t, elp, algo);
        let (want, deps, listed) = oracle(&t, &rules, &dl, &dn, Routing::Converged);
        assert!(listed.iter().any(|(r, _)| bounces(&t, r) > 0));
        let deps: Vec<_> = deps.into_iter().collect();
        assert!(cbd::shortest_cycle(t.channel_count(), &deps).is_some());
        let o = analyze(&t, &Compiled::new(&t, &rules), &dl, &dn, Routing::Converged);
        assert_eq!(
            (o.paths, o.lossless_paths),
            (want.paths, want.lossless_paths)
        );
        assert_eq!(o.pairs_disconnected, 0);
        lossless.push((o.paths, o.lossless_paths));
    }
    assert_eq!(lossless, [(238, 110), (238, 238)]);
}

/// With a `kbounce:K` `clos` plan, a converged route stays lossless
/// exactly when it has at most K bounces (and no U-turn), on random
/// failures, route by route.
#[test]
fn kbounce_plans_keep_exactly_the_routes_within_k_bounces() {
    for (spec, k) in [
        ("fattree:k=4", 1u32),
        ("fattree:k=4", 2),
        ("fattree:k=6", 1),
    ] {
        let t = topo(spec);
        let rules = rules_for(&t, &format!("kbounce:{k}"), "clos");
        let mut seen_bounce = false;
        for tr in FailureSpec::parse("links:6,trials=25,seed=11")
            .unwrap()
            .draw(&t)
            .unwrap()
        {
            let (dl, dn) = (tr.dead_links(&t), tr.dead_nodes(&t));
            let (_, _, listed) = oracle(&t, &rules, &dl, &dn, Routing::Converged);
            for (r, ok) in listed {
                let b = bounces(&t, &r);
                seen_bounce |= b > 0;
                assert_eq!(ok, b <= k as usize, "{spec} K={k} {r:?}");
            }
        }
        assert!(seen_bounce, "{spec}: no trial bounced");
    }
}

/// With no failure every route is lossless and plain PFC on shortest
/// up-down routes has no cycle.
#[test]
fn no_failure_no_loss() {
    for (spec, elp, algo) in [
        ("fattree:k=6", "shortest", "greedy"),
        ("jellyfish:n=30,ports=8,r=5,seed=2", "shortest", "greedy"),
    ] {
        let t = topo(spec);
        let rules = rules_for(&t, elp, algo);
        let plan = Compiled::new(&t, &rules);
        for routing in [Routing::Converged, Routing::Local] {
            let o = analyze(
                &t,
                &plan,
                &vec![false; t.link_count()],
                &vec![false; t.node_count()],
                routing,
            );
            assert!(o.paths > 0);
            assert_eq!(o.lossless_paths, o.paths, "{spec} {routing}");
            assert_eq!(o.pairs_disconnected, 0);
            assert_eq!(ones(&o.fallback), 0);
        }
    }
    let t = topo("fattree:k=6");
    let rules = rules_for(&t, "shortest", "greedy");
    let p = Plan {
        topo: &t,
        elp: &ElpSpec::parse("shortest").unwrap(),
        rules: &rules,
        algo: Algo::GREEDY,
        cycle: CycleBackend::default(),
    };
    let r = what_if(
        &p,
        &FailureSpec::parse("links:0,trials=2").unwrap(),
        &[Routing::Converged, Routing::Local],
        Options::default(),
        &Budget::unlimited(),
    )
    .unwrap();
    for rep in &r {
        assert_eq!(rep.figures.cbd_rate, 0.0);
        assert_eq!(rep.figures.lossless_paths_min, Some(1.0));
        assert!(rep.figures.verified);
    }
}

/// Same rows at any thread count, and the failure-aware plan covers
/// every trial.
#[test]
fn what_if_is_deterministic_and_verified() {
    let t = topo("fattree:k=6");
    let rules = rules_for(&t, "kbounce:1", "clos");
    let elp = ElpSpec::parse("kbounce:1").unwrap();
    let p = Plan {
        topo: &t,
        elp: &elp,
        rules: &rules,
        algo: "clos".parse().unwrap(),
        cycle: CycleBackend::default(),
    };
    let spec = FailureSpec::parse("links:4,trials=8,seed=3").unwrap();
    let go = |threads: usize| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| {
                what_if(
                    &p,
                    &spec,
                    &[Routing::Converged, Routing::Local],
                    Options::default(),
                    &Budget::unlimited(),
                )
                .unwrap()
            })
    };
    let (a, b) = (go(1), go(3));
    for (x, y) in a.iter().zip(&b) {
        assert_eq!(x.trials, y.trials);
        assert_eq!(x.figures, y.figures);
        assert!(x.figures.verified);
        assert!(x.trials.iter().all(|r| r.verified));
        assert!(x.figures.aware_priorities.unwrap() >= 2);
    }
    // A plan that does not cover shortest routes is refused.
    let t = topo("hyperx:l=2,s=3,t=1");
    let rules = rules_for(&t, "dor", "greedy");
    let elp = ElpSpec::parse("dor").unwrap();
    let p = Plan {
        topo: &t,
        elp: &elp,
        rules: &rules,
        algo: Algo::GREEDY,
        cycle: CycleBackend::default(),
    };
    let e = what_if(
        &p,
        &spec,
        &[Routing::Converged],
        Options::default(),
        &Budget::unlimited(),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("routes traffic on shortest paths"), "{e}");
}
