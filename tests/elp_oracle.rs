//! Oracle tests of the ELP stage: path counts, longest ELP and the brute-force
//! tagged graph against an enumerator written here from docs/model.md's
//! definitions (DFS over walks), independent of the ELP language code.

use std::collections::{BTreeSet, VecDeque};
use tagger::cycle::CycleBackend;
use tagger::elp::{ElpSet, ElpSpec, enumerate};
use tagger::generators::{Family, NodeKind, Topology};
use tagger::tagging::{Algo, tag};

mod common;
use common::topo;

fn dist_from(t: &Topology, s: u32) -> Vec<u32> {
    let mut d = vec![u32::MAX; t.node_count()];
    let mut q = VecDeque::from([s]);
    d[s as usize] = 0;
    while let Some(v) = q.pop_front() {
        for w in t.neighbors(v) {
            if d[w as usize] == u32::MAX {
                d[w as usize] = d[v as usize] + 1;
                q.push_back(w);
            }
        }
    }
    d
}

/// All shortest paths as node sequences, by DFS along distance layers.
fn oracle_shortest(t: &Topology) -> BTreeSet<Vec<u32>> {
    let mut out = BTreeSet::new();
    for &s in t.endpoints() {
        for &d in t.endpoints() {
            if s == d {
                continue;
            }
            let ds = dist_from(t, d);
            if ds[s as usize] == u32::MAX {
                continue;
            }
            let mut stack = vec![vec![s]];
            while let Some(p) = stack.pop() {
                let v = *p.last().unwrap();
                if v == d {
                    out.insert(p);
                    continue;
                }
                let nbrs: BTreeSet<u32> = t.neighbors(v).collect();
                for w in nbrs {
                    if ds[w as usize] + 1 == ds[v as usize] {
                        let mut q = p.clone();
                        q.push(w);
                        stack.push(q);
                    }
                }
            }
        }
    }
    out
}

/// k-bounce walks as channel sequences, straight from the definition.
fn oracle_kbounce(t: &Topology, k: u32) -> Vec<Vec<u32>> {
    let levels = t.nodes().iter().map(|n| n.level.unwrap()).max().unwrap();
    let maxlen = 2 * (k + 1) * levels;
    let up = |c: u32| t.level(t.channel_dst(c)) > t.level(t.channel_src(c));
    let mut out = Vec::new();
    for &s in t.endpoints() {
        let mut stack: Vec<Vec<u32>> = t.out_channels(s).iter().map(|&c| vec![c]).collect();
        while let Some(p) = stack.pop() {
            let c = *p.last().unwrap();
            let bounces = p.windows(2).filter(|w| !up(w[0]) && up(w[1])).count() as u32;
            if bounces > k {
                continue;
            }
            let v = t.channel_dst(c);
            if !up(c) && v != s && t.is_endpoint(v) {
                out.push(p.clone());
            }
            if p.len() as u32 >= maxlen {
                continue;
            }
            for &c2 in t.out_channels(v) {
                if c2 != c ^ 1 {
                    let mut q = p.clone();
                    q.push(c2);
                    stack.push(q);
                }
            }
        }
    }
    out
}

/// Dimension-order paths, computed pair by pair from coordinates.
fn oracle_dor(t: &Topology) -> BTreeSet<Vec<u32>> {
    let mut out = BTreeSet::new();
    match *t.family() {
        Family::HyperX { l, s, .. } => {
            for &a in t.endpoints() {
                for &b in t.endpoints() {
                    if a == b {
                        continue;
                    }
                    let (mut cur, target) = (t.coords(a).unwrap(), t.coords(b).unwrap());
                    let mut path = vec![a];
                    for d in 0..l as usize {
                        if cur[d] != target[d] {
                            cur[d] = target[d];
                            path.push(cur.iter().rev().fold(0, |acc, &x| acc * s + x));
                        }
                    }
                    out.insert(path);
                }
            }
        }
        Family::BCube { n, k } => {
            let servers = n.pow(k + 1);
            for a in 0..servers {
                for b in 0..servers {
                    if a == b {
                        continue;
                    }
                    let (mut cur, target) = (t.coords(a).unwrap(), t.coords(b).unwrap());
                    let mut path = vec![a];
                    for i in (0..=k as usize).rev() {
                        if cur[i] != target[i] {
                            let here = cur.iter().rev().fold(0, |acc, &x| acc * n + x);
                            let sw = servers
                                + i as u32 * n.pow(k)
                                + tagger::generators::bcube::switch_index(here, n, i as u32);
                            cur[i] = target[i];
                            path.push(sw);
                            path.push(cur.iter().rev().fold(0, |acc, &x| acc * n + x));
                        }
                    }
                    out.insert(path);
                }
            }
        }
        _ => unreachable!(),
    }
    out
}

fn language_paths(t: &Topology, spec: &str) -> (ElpSet, BTreeSet<Vec<u32>>, u64) {
    let elp = ElpSet::build(t, &ElpSpec::parse(spec).unwrap()).unwrap();
    let mut set = BTreeSet::new();
    let n = enumerate::for_each_path(t, &elp, 10_000_000, |p| {
        set.insert(p.to_vec());
        Ok(())
    })
    .unwrap();
    (elp, set, n)
}

/// The brute-force tagged graph from explicit channel sequences.
fn oracle_bf(paths: &[Vec<u32>]) -> (usize, usize) {
    let mut nodes = BTreeSet::new();
    let mut edges = BTreeSet::new();
    for p in paths {
        for (h, &c) in p.iter().enumerate() {
            nodes.insert((c, h));
            if h > 0 {
                edges.insert((p[h - 1], h - 1, c));
            }
        }
    }
    (nodes.len(), edges.len())
}

fn channel_paths(t: &Topology, node_paths: &BTreeSet<Vec<u32>>) -> Vec<Vec<u32>> {
    // Expand node sequences into every channel sequence (parallel links).
    let mut out = Vec::new();
    for p in node_paths {
        let mut partial: Vec<Vec<u32>> = vec![vec![]];
        for w in p.windows(2) {
            let chans: Vec<u32> = t
                .out_channels(w[0])
                .iter()
                .copied()
                .filter(|&c| t.channel_dst(c) == w[1])
                .collect();
            partial = partial
                .into_iter()
                .flat_map(|q| {
                    chans.iter().map(move |&c| {
                        let mut q = q.clone();
                        q.push(c);
                        q
                    })
                })
                .collect();
        }
        out.extend(partial);
    }
    out
}

fn bf_of(t: &Topology, elp: &ElpSet) -> (usize, usize) {
    let bf = tag(t, elp, Algo::Brute, CycleBackend::Ordered).unwrap();
    (
        bf.states.len(),
        bf.keys.iter().filter(|k| k.in_channel.is_some()).count(),
    )
}

#[test]
fn shortest_matches_oracle() {
    for spec in [
        "fattree:k=4",
        "fattree:k=6",
        "bcube:n=3,k=1",
        "bcube:n=2,k=2",
        "hyperx:l=2,s=3,k=1,t=1",
        "hyperx:l=2,s=3,k=2,t=1",
        "jellyfish:n=12,ports=5,r=3,seed=4",
        "leafspine:leaves=3,spines=2,hosts=1,links=2",
    ] {
        let t = topo(spec);
        let want = oracle_shortest(&t);
        let (elp, got, n) = language_paths(&t, "shortest");
        assert_eq!(got, want, "{spec}");
        assert_eq!(n as usize, want.len(), "{spec}: enumerated once each");
        let c = elp.counts(&t);
        assert_eq!(c.paths, want.len() as u128, "{spec}: DP count");
        assert!(c.paths_exact);
        assert_eq!(
            c.longest as usize,
            want.iter().map(|p| p.len() - 1).max().unwrap(),
            "{spec}"
        );
        assert_eq!(c.pairs_covered, c.pairs_total, "{spec}");
        assert_eq!(
            bf_of(&t, &elp),
            oracle_bf(&channel_paths(&t, &want)),
            "{spec}: tagged graph"
        );
    }
}

#[test]
fn kbounce_matches_oracle() {
    for spec in [
        "fattree:k=4",
        "fattree:k=6",
        "leafspine:leaves=4,spines=2,hosts=1",
    ] {
        for k in 0..=3 {
            if spec == "fattree:k=6" && k > 1 {
                continue; // the oracle's DFS grows too fast; k=4 covers the rest
            }
            let t = topo(spec);
            let want = oracle_kbounce(&t, k);
            let (elp, got, _) = language_paths(&t, &format!("kbounce:{k}"));
            let c = elp.counts(&t);
            assert_eq!(c.paths, want.len() as u128, "{spec} K={k}: DP count");
            let want_nodes: BTreeSet<Vec<u32>> = want
                .iter()
                .map(|p| {
                    std::iter::once(t.channel_src(p[0]))
                        .chain(p.iter().map(|&c| t.channel_dst(c)))
                        .collect()
                })
                .collect();
            assert_eq!(got, want_nodes, "{spec} K={k}: enumeration");
            let pairs: BTreeSet<(u32, u32)> = want_nodes
                .iter()
                .map(|p| (p[0], *p.last().unwrap()))
                .collect();
            assert_eq!(c.pairs_covered as usize, pairs.len(), "{spec} K={k}: pairs");
            assert_eq!(
                c.longest as usize,
                want.iter().map(Vec::len).max().unwrap(),
                "{spec} K={k}"
            );
            assert_eq!(
                bf_of(&t, &elp),
                oracle_bf(&want),
                "{spec} K={k}: tagged graph"
            );
        }
    }
}

#[test]
fn dor_matches_oracle() {
    for spec in [
        "bcube:n=3,k=1",
        "bcube:n=2,k=2",
        "hyperx:l=2,s=3,k=1,t=1",
        "hyperx:l=2,s=3,k=2,t=1",
        "hyperx:l=3,s=2,k=1,t=1",
    ] {
        let t = topo(spec);
        let want = oracle_dor(&t);
        let (elp, got, _) = language_paths(&t, "dor");
        assert_eq!(got, want, "{spec}");
        let c = elp.counts(&t);
        assert_eq!(c.paths, want.len() as u128, "{spec}");
        assert_eq!(
            c.longest as usize,
            want.iter().map(|p| p.len() - 1).max().unwrap(),
            "{spec}"
        );
        assert_eq!(
            bf_of(&t, &elp),
            oracle_bf(&channel_paths(&t, &want)),
            "{spec}: tagged graph"
        );
    }
}

#[test]
fn random_and_file_paths() {
    let t = topo("jellyfish:n=30,ports=6,r=4,seed=2");
    let (elp, got, _) = language_paths(&t, "random:200,maxlen=8,seed=5");
    let ex = elp.explicit.as_ref().unwrap();
    assert_eq!(got.len(), ex.len());
    for p in ex.iter() {
        assert!(
            t.is_endpoint(p[0]) && t.is_endpoint(*p.last().unwrap()) && p[0] != *p.last().unwrap()
        );
        assert!(p.len() <= 9);
        let distinct: BTreeSet<_> = p.iter().collect();
        assert_eq!(distinct.len(), p.len(), "self-avoiding");
        for w in p.windows(2) {
            assert!(t.neighbors(w[0]).any(|x| x == w[1]));
        }
    }
    // Same seed, same paths; at any thread count.
    let again = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap()
        .install(|| language_paths(&t, "random:200,maxlen=8,seed=5").1);
    assert_eq!(got, again);
    // A union with shortest enumerates each node sequence once.
    let (_, union, n) = language_paths(&t, "shortest+random:200,maxlen=8,seed=5");
    let sp = oracle_shortest(&t);
    let want: BTreeSet<_> = sp.union(&got).cloned().collect();
    assert_eq!(union, want);
    assert_eq!(n as usize, want.len());
}

#[test]
fn path_file_errors_name_the_line() {
    let t = topo("leafspine:leaves=4,spines=2,hosts=1");
    let dir = tempfile::tempdir().unwrap();
    for (text, want) in [
        ("0 4 1\n0 9 1\n", "line 2: node 9 does not exist"),
        ("# c\n0 1\n", "line 2: nodes 0 and 1 are not linked"),
        ("0\n", "line 1: a path needs at least two nodes"),
        ("0 4\n", "line 1: node 4 is not an endpoint"),
        ("0 x 1\n", "line 1: 'x' is not a node id"),
        ("0 4 0\n", "starts and ends at node 0"),
    ] {
        let p = dir.path().join("p.txt");
        std::fs::write(&p, text).unwrap();
        let e = ElpSet::build(
            &t,
            &ElpSpec::parse(&format!("file:{}", p.display())).unwrap(),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains(want), "{text:?}: {e}");
    }
}

#[test]
fn family_mismatches_are_errors() {
    let jf = topo("jellyfish:n=10,ports=4,r=3,seed=1");
    for (spec, want) in [
        ("kbounce:1", "needs a tiered topology"),
        ("dor", "needs a HyperX or BCube"),
    ] {
        let e = ElpSet::build(&jf, &ElpSpec::parse(spec).unwrap())
            .unwrap_err()
            .to_string();
        assert!(e.contains(want), "{e}");
    }
    let nohosts = topo("hyperx:l=2,s=3,t=0");
    assert!(
        ElpSet::build(&nohosts, &ElpSpec::parse("shortest").unwrap())
            .unwrap_err()
            .to_string()
            .contains("0 endpoints")
    );
    // The cause is typed, for a caller to match, and says the same.
    use tagger::elp::Mismatch;
    let e = ElpSet::build(&jf, &ElpSpec::parse("kbounce:1").unwrap()).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "ELP 'kbounce:1': kbounce needs a tiered topology with a level on every node; {} has none",
            jf.name()
        )
    );
    assert!(matches!(
        e,
        tagger::Error::ElpTopology {
            cause: Mismatch::NotTiered { .. },
            ..
        }
    ));
    let e = ElpSet::build(&jf, &ElpSpec::parse("dor").unwrap()).unwrap_err();
    assert!(
        matches!(&e, tagger::Error::ElpTopology { cause: Mismatch::NotDirect { family, .. }, .. } if family == "jellyfish"),
        "{e:?}"
    );
    let e = ElpSet::build(&nohosts, &ElpSpec::parse("shortest").unwrap()).unwrap_err();
    assert!(matches!(
        e,
        tagger::Error::ElpTopology {
            cause: Mismatch::TooFewEndpoints { endpoints: 0, .. },
            ..
        }
    ));
    assert!(std::error::Error::source(&e).is_some());
    assert_eq!(topo("bcube:n=2,k=1").nodes()[0].kind, NodeKind::Server);
}

#[test]
fn elp_stage_is_thread_count_independent() {
    let t = topo("jellyfish:n=60,ports=8,r=5,seed=9");
    let spec = ElpSpec::parse("shortest+random:100").unwrap();
    let run = |threads| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| {
                let elp = ElpSet::build(&t, &spec).unwrap();
                let bf = tag(&t, &elp, Algo::GREEDY, CycleBackend::Ordered).unwrap();
                (elp.counts(&t), bf.keys, bf.states)
            })
    };
    assert_eq!(run(1), run(4));
}

/// All simple paths between two nodes, by DFS (the oracle for Yen).
fn all_simple_paths(t: &Topology, s: u32, d: u32) -> Vec<Vec<u32>> {
    let mut out = Vec::new();
    let mut stack = vec![vec![s]];
    while let Some(p) = stack.pop() {
        let v = *p.last().unwrap();
        if v == d {
            out.push(p);
            continue;
        }
        let nbrs: BTreeSet<u32> = t.neighbors(v).collect();
        for w in nbrs {
            if !p.contains(&w) {
                let mut q = p.clone();
                q.push(w);
                stack.push(q);
            }
        }
    }
    out
}

#[test]
fn ksp_matches_oracle() {
    for (spec, k) in [
        ("jellyfish:n=10,ports=4,r=3,seed=2", 5),
        ("leafspine:leaves=3,spines=2,hosts=1,links=2", 3),
        ("hyperx:l=2,s=3,k=1,t=1", 4),
        ("bcube:n=2,k=1", 2),
    ] {
        let t = topo(spec);
        let (elp, got, _) = language_paths(&t, &format!("ksp:{k}"));
        let ex = elp.explicit.as_ref().unwrap();
        assert_eq!(got.len(), ex.len(), "{spec}");
        for &s in t.endpoints() {
            for &d in t.endpoints() {
                if s == d {
                    continue;
                }
                let mut all: Vec<usize> = all_simple_paths(&t, s, d).iter().map(Vec::len).collect();
                all.sort_unstable();
                all.truncate(k);
                let mut mine: Vec<usize> = got
                    .iter()
                    .filter(|p| p[0] == s && *p.last().unwrap() == d)
                    .map(Vec::len)
                    .collect();
                mine.sort_unstable();
                assert_eq!(
                    mine, all,
                    "{spec}: {s} -> {d}: Yen gives the K shortest lengths"
                );
            }
        }
        for p in &got {
            let distinct: BTreeSet<_> = p.iter().collect();
            assert_eq!(distinct.len(), p.len(), "{spec}: simple path");
        }
    }
    // Sampled pairs: exactly N pairs, the same at any thread count.
    let t = topo("jellyfish:n=40,ports=6,r=4,seed=1");
    let (elp, got, _) = language_paths(&t, "ksp:3,pairs=50,seed=9");
    let pairs: BTreeSet<(u32, u32)> = got.iter().map(|p| (p[0], *p.last().unwrap())).collect();
    assert_eq!(pairs.len(), 50);
    assert_eq!(elp.counts(&t).pairs_covered, 50);
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap()
        .install(|| language_paths(&t, "ksp:3,pairs=50,seed=9").1);
    assert_eq!(one, got);
    for (bad, msg) in [
        ("ksp", "needs K"),
        ("ksp:0", "K = 0"),
        ("ksp:2,pairs=0", "pairs = 0"),
        ("ksp:2,foo=1", "unknown parameter 'foo'"),
    ] {
        assert!(
            ElpSpec::parse(bad).unwrap_err().to_string().contains(msg),
            "{bad}"
        );
    }
}
