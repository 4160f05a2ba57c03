use super::*;
use tagger_generators::TopologySpec;

/// One BFS per endpoint (the first implementation, now the deep
/// fabrics' build), laid out dense: the oracle for the bit-parallel
/// build.
fn build_per_source(topo: &Topology) -> Shortest {
    let n = topo.node_count();
    let live = Live { topo, failed: None };
    let words = topo.endpoints().len().div_ceil(64);
    let chunks: Vec<Chunk> = (0..words)
        .map(|j| {
            let mut ch = live.chunk_per_source(j);
            ch.col = vec![0; n * ch.rows];
            for &(w, d, m) in &ch.marks {
                ch.col[w as usize * ch.rows + d as usize] |= m;
            }
            ch
        })
        .collect();
    Shortest::assemble(n, &chunks)
}

#[test]
fn bit_parallel_build_matches_per_source_bfs() {
    for spec in [
        "jellyfish:n=150,ports=12,r=6,seed=2",
        "jellyfish:n=70,ports=8,r=5,seed=9",
        "fattree:k=8",
        "bcube:n=4,k=2",
        "hyperx:l=2,s=5,k=2,t=1",
        "leafspine:leaves=9,spines=4,links=2",
    ] {
        let t = TopologySpec::parse(spec).unwrap().build().unwrap();
        let (fast, slow) = (Shortest::build(&t), build_per_source(&t));
        assert_eq!(
            (fast.words, fast.rows, fast.paths, fast.saturated),
            (slow.words, slow.rows, slow.paths, slow.saturated),
            "{spec}"
        );
        assert_eq!(
            (fast.longest, fast.pairs_covered),
            (slow.longest, slow.pairs_covered),
            "{spec}"
        );
        assert!(fast.reach == slow.reach, "{spec}: DAG rows differ");
        assert!(fast.paths > 0, "{spec}");
    }
}

/// Every row, count and bound of `a` and `b` agree.
fn same_table(a: &Shortest, b: &Shortest, what: &str) {
    assert_eq!(
        (
            a.words,
            a.rows,
            a.paths,
            a.saturated,
            a.longest,
            a.pairs_covered
        ),
        (
            b.words,
            b.rows,
            b.paths,
            b.saturated,
            b.longest,
            b.pairs_covered
        ),
        "{what}"
    );
    assert_eq!((a.block_words, &a.dead), (b.block_words, &b.dead), "{what}");
    for w in 0..a.nodes() as NodeId {
        for d in 0..a.rows {
            assert_eq!(a.row(w, d), b.row(w, d), "{what}: node {w} distance {d}");
        }
    }
}

/// The sparse table (per-source searches, rows only where a node has
/// them) is the dense one, row for row: on every family, over failed
/// links, and as a union of failure scenarios; the deep fabrics that
/// get it hold memory linear in their length, and within the
/// estimate.
#[test]
fn sparse_tables_are_the_dense_ones() {
    for spec in [
        "jellyfish:n=150,ports=12,r=6,seed=2",
        "fattree:k=8",
        "bcube:n=4,k=2",
        "hyperx:l=2,s=5,k=2,t=1",
        "leafspine:leaves=9,spines=4,links=2",
    ] {
        let t = TopologySpec::parse(spec).unwrap().build().unwrap();
        let dense = Shortest::build_as(&t, None, false);
        let sparse = Shortest::build_as(&t, None, true);
        assert!(sparse.sparse.is_some() && dense.sparse.is_none());
        same_table(&sparse, &dense, spec);
        let dead: Vec<bool> = (0..t.link_count()).map(|l| l % 7 == 3).collect();
        let mut d = Shortest::build_as(&t, Some(&dead), false);
        let mut s = Shortest::build_as(&t, Some(&dead), true);
        for x in [&mut d, &mut s] {
            x.dead = (0..t.link_count() as LinkId)
                .filter(|&l| dead[l as usize])
                .map(|l| (l, 0))
                .collect();
        }
        same_table(&s, &d, &format!("{spec} failed"));
        let du = Shortest::union(vec![Shortest::build_as(&t, None, false), d]);
        let su = Shortest::union(vec![Shortest::build_as(&t, None, true), s]);
        assert!(su.sparse.is_some());
        same_table(&su, &du, &format!("{spec} union"));
    }
    // A chain with hosts at its ends: deep, so sparse, its table
    // linear in the length (it was the square).
    let chain = |n: u32| {
        use tagger_generators::model::{Family, Node};
        let mut nodes = vec![Node::switch(None, 0); n as usize];
        nodes[0] = Node::switch(None, 1);
        nodes[n as usize - 1] = Node::switch(None, 1);
        Topology::new(
            "chain",
            Family::File,
            nodes,
            (0..n - 1).map(|i| [i, i + 1]).collect(),
        )
        .unwrap()
    };
    let (small, big) = (chain(500), chain(4000));
    assert!(Shortest::is_deep(&small).0);
    let (a, b) = (Shortest::build(&small), Shortest::build(&big));
    same_table(&a, &Shortest::build_as(&small, None, false), "chain 500");
    assert!(
        b.heap_bytes() < 10 * a.heap_bytes(),
        "{} {}",
        a.heap_bytes(),
        b.heap_bytes()
    );
    assert!(b.heap_bytes() <= Shortest::estimate_bytes(&big));
    assert_eq!((b.paths, b.longest, b.pairs_covered), (2, 3999, 2));
}

/// Two endpoints joined through 34 layers of 4 switches, each layer
/// to the next completely: 4^34 = 2^68 shortest paths each way, more
/// than `u64` holds, so the counts are taken again in `u128`; with 64
/// layers (2^128 paths) they saturate.
#[test]
fn counts_past_u64_are_exact_and_past_u128_saturate() {
    use tagger_generators::model::{Family, Node};
    let ladder = |layers: u32| {
        let mut nodes = vec![Node::switch(None, 1), Node::switch(None, 1)];
        nodes.extend(vec![Node::switch(None, 0); 4 * layers as usize]);
        let at = |layer: u32, i: u32| 2 + 4 * layer + i;
        let mut links: Vec<[u32; 2]> = (0..4).map(|i| [0, at(0, i)]).collect();
        for l in 1..layers {
            for i in 0..4 {
                links.extend((0..4).map(|j| [at(l - 1, i), at(l, j)]));
            }
        }
        links.extend((0..4).map(|i| [at(layers - 1, i), 1]));
        Topology::new("ladder", Family::File, nodes, links).unwrap()
    };
    let s = Shortest::build(&ladder(34));
    assert!(!s.saturated);
    assert_eq!(s.paths, 2 << 68);
    assert_eq!((s.longest, s.pairs_covered), (35, 2));
    let slow = build_per_source(&ladder(34));
    assert_eq!((slow.paths, slow.saturated), (s.paths, false));
    let s = Shortest::build(&ladder(64));
    assert!(s.saturated);
    assert_eq!(s.paths, u128::MAX);
}
