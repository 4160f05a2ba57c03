use super::*;
use crate::cycle::NaiveDag;

/// The list runs from `head` to `tail` through every placed vertex with
/// rising labels, and every edge points up the order.
fn check_order(d: &OrderedDag) {
    let mut seen = 0;
    let (mut v, mut prev_label) = (d.head, None);
    while v != NIL {
        let l = d.label(v);
        assert!(
            prev_label.is_none_or(|p| p < l),
            "labels rise along the list"
        );
        prev_label = Some(l);
        seen += 1;
        v = d.link[v as usize][1];
    }
    let placed = d.slot.iter().filter(|s| s.label != UNPLACED).count();
    assert_eq!(seen, placed, "the list holds every placed vertex");
    for a in 0..d.slot.len() as u32 {
        for &b in d.adj.out.list(d.adj.node[a as usize].out) {
            assert!(d.label(a) < d.label(b), "edge {a} -> {b} points down");
        }
    }
}

/// A bounded check gives up on a long walk, with the graph as it was,
/// and answers as the full check does when the walk is short.
#[test]
fn bounded_checks_give_up_with_the_graph_unchanged() {
    // Two paths, q = 0 -> ... -> m-1 laid out before p = m -> ... ->
    // 2m-1: an edge from p's end to q's start closes no cycle, and
    // its check walks both paths.
    let m = 500u32;
    let mut d = OrderedDag::with_vertices(2 * m as usize);
    let rank: Vec<u32> = (0..2 * m).collect();
    d.hint_order(&rank);
    for v in (1..2 * m).filter(|&v| v != m) {
        assert!(d.try_add_edge(v - 1, v));
    }
    let edges = d.edge_count();
    assert!(!d.try_add_edge_within(2 * m - 1, 0, 64), "gave up");
    assert!(!d.has_edge(2 * m - 1, 0));
    assert_eq!(d.edge_count(), edges);
    check_order(&d);
    assert!(d.try_add_edge_within(2 * m - 1, 0, 1 << 20));
    assert!(d.has_edge(2 * m - 1, 0));
    check_order(&d);
    // Short checks answer as in full: a cycle of three, an edge
    // present already, a forward edge.
    assert!(!d.try_add_edge_within(3, 1, 64));
    assert!(d.try_add_edge_within(0, 1, 64));
    assert!(d.try_add_edge_within(m, m + 5, 64));
    check_order(&d);
}

/// Moving vertex after vertex into the gap behind one vertex halves the
/// gap each time, so the windowed relabelling runs many times.
#[test]
fn repeated_moves_into_one_gap_relabel() {
    let m = 300u32;
    let (a, z) = (m, m + 1);
    let mut d = OrderedDag::with_vertices(m as usize + 2);
    let rank: Vec<u32> = (0..m + 2).collect();
    d.hint_order(&rank);
    let mut o = NaiveDag::with_vertices(m as usize + 2);
    assert!(d.try_add_edge(a, z) && o.try_add_edge(a, z));
    for v in 0..m {
        assert!(d.try_add_edge(a, v));
        assert!(o.try_add_edge(a, v));
        // And a chain among the moved ones, in the direction the
        // moves reverse.
        if v > 0 {
            assert_eq!(d.try_add_edge(v, v - 1), o.try_add_edge(v, v - 1));
        }
    }
    for v in 0..m {
        assert_eq!(d.try_add_edge(v, a), o.try_add_edge(v, a), "{v} -> {a}");
    }
    check_order(&d);
    assert_eq!(d.edge_count(), o.edge_count());
    assert!(d.relabels > 0, "the gap ran out at least once");
}

/// Edges in runs sharing a tail, as greedy asks them (where known
/// ancestors are reused), with removals between runs that must drop
/// them, against the oracle.
#[test]
fn runs_of_one_tail_match_the_oracle() {
    let n = 300u32;
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let mut rnd = move |m: u32| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % u64::from(m)) as u32
    };
    let mut d = OrderedDag::with_vertices(n as usize);
    let mut o = NaiveDag::with_vertices(n as usize);
    let mut kept = Vec::new();
    let mut rejected = 0;
    for round in 0..40 {
        let mut edges: Vec<(u32, u32)> = (0..200).map(|_| (rnd(n), rnd(n))).collect();
        edges.sort_unstable();
        for (a, b) in edges {
            let ok = d.try_add_edge(a, b);
            assert_eq!(ok, o.try_add_edge(a, b), "round {round}: {a} -> {b}");
            if ok {
                kept.push((a, b));
            } else {
                rejected += 1;
            }
            // Removing an edge into the run's tail (or above it) takes
            // ancestors away mid-run.
            if rnd(8) == 0 {
                let into_a: Vec<usize> = (0..kept.len()).filter(|&i| kept[i].1 == a).collect();
                let i = match into_a.first() {
                    Some(&i) => i,
                    None => rnd(kept.len() as u32) as usize,
                };
                let (x, y) = kept.swap_remove(i);
                d.remove_edge(x, y);
                o.remove_edge(x, y);
            }
        }
    }
    check_order(&d);
    assert_eq!(d.edge_count(), o.edge_count());
    assert!(rejected > 1000, "only {rejected} rejections");
}

/// A removal drops the ancestors known for the current tail: after
/// `2 -> 3` goes, `2` no longer reaches `3`, so `3 -> 2` is acyclic
/// even though a search from tail `3` saw `2` as an ancestor.
#[test]
fn removal_forgets_known_ancestors() {
    let mut d = OrderedDag::with_vertices(4);
    d.hint_order(&[0, 1, 2, 3]);
    assert!(d.try_add_edge(0, 1));
    assert!(d.try_add_edge(2, 3));
    // Searches forward from 0 and backward from 3, meeting nothing.
    assert!(d.try_add_edge(3, 0));
    d.remove_edge(2, 3);
    assert!(d.try_add_edge(3, 2));
    assert!(!d.try_add_edge(2, 3));
    check_order(&d);
}

/// Random insertions on a few hundred vertices, lazily placed, against
/// the oracle, with the order checked at the end.
#[test]
fn random_insertions_match_the_oracle() {
    let n = 400;
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut rnd = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % n as u64) as u32
    };
    let mut d = OrderedDag::with_vertices(n);
    let mut o = NaiveDag::with_vertices(n);
    for i in 0..6000 {
        let (a, b) = (rnd(), rnd());
        assert_eq!(
            d.try_add_edge(a, b),
            o.try_add_edge(a, b),
            "insertion {i}: {a} -> {b}"
        );
    }
    check_order(&d);
    assert_eq!(d.edge_count(), o.edge_count());
}

/// Batches probed in parallel give the answers of one edge at a time
/// (the oracle's), over several blocks, with runs of one tail, repeated
/// edges and self-loops, on graphs lazily placed and hinted; and the
/// probes refuse only what the oracle refuses.
#[test]
fn batches_match_one_edge_at_a_time() {
    let n = 500u32;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .expect("a pool");
    let mut x: u64 = 0x0bad_5eed_1234_5678;
    let mut rnd = move |m: u32| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % u64::from(m)) as u32
    };
    for hinted in [false, true] {
        let mut d = OrderedDag::with_vertices(n as usize);
        if hinted {
            let rank: Vec<u32> = (0..n).map(|v| (v * 7919) % n).collect();
            d.hint_order(&rank);
        }
        let mut o = NaiveDag::with_vertices(n as usize);
        let (mut refused, mut probed) = (0, 0);
        for round in 0..6 {
            let len = [1, 700, PROBE_BLOCK, 3 * PROBE_BLOCK + 5][round % 4];
            let mut edges: Vec<(u32, u32)> = (0..len).map(|_| (rnd(n), rnd(n))).collect();
            edges.sort_unstable();
            let probe = PROBE.with_borrow_mut(|p| {
                p.forget();
                edges
                    .iter()
                    .map(|&(a, b)| d.closes_cycle(a, b, p))
                    .collect::<Vec<_>>()
            });
            // Two threads, or the probes are skipped.
            let got = pool.install(|| d.try_add_edges(&edges));
            for (i, &(a, b)) in edges.iter().enumerate() {
                let want = o.try_add_edge(a, b);
                assert_eq!(got[i], want, "round {round}, edge {i}: {a} -> {b}");
                assert!(!(probe[i] && want), "probe refused {a} -> {b}");
                refused += usize::from(!want);
                probed += usize::from(probe[i]);
            }
            check_order(&d);
        }
        assert_eq!(d.edge_count(), o.edge_count());
        assert!(refused > 1000, "only {refused} refusals");
        // Most refusals close a cycle through edges of earlier blocks.
        assert!(probed > refused / 2, "{probed} of {refused} probed");
    }
}

/// The graph built at once from runs of one tail is the one the edges in
/// turn leave: the same lists in the same order, the same labels, and the
/// same answers (given up or not) to the insertions that follow; edges
/// not in runs take the in-turn path, and a cycle gives `None` either way.
#[test]
fn a_graph_built_from_runs_is_the_one_built_in_turn() {
    let n = 300u32;
    let mut x: u64 = 0x005e_ed0f_a11e_d6e5;
    let mut rnd = move |m: u32| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % u64::from(m)) as u32
    };
    for trial in 0..20 {
        // A DAG along a random order, with repeats, tails' runs in a
        // random order (not by id), heads in no order within a run.
        let pos: Vec<u32> = {
            let mut p: Vec<u32> = (0..n).collect();
            for i in (1..n as usize).rev() {
                p.swap(i, rnd(i as u32 + 1) as usize);
            }
            p
        };
        let mut by_pos = vec![0u32; n as usize];
        for v in 0..n {
            by_pos[pos[v as usize] as usize] = v;
        }
        let mut tails: Vec<u32> = (0..n).collect();
        for i in (1..n as usize).rev() {
            tails.swap(i, rnd(i as u32 + 1) as usize);
        }
        let mut edges = Vec::new();
        for &a in &tails {
            let above = n - 1 - pos[a as usize];
            for _ in 0..rnd(8) {
                if above > 0 {
                    let b = by_pos[(pos[a as usize] + 1 + rnd(above)) as usize];
                    edges.push((a, b));
                    if rnd(4) == 0 {
                        edges.push((a, b));
                    }
                }
            }
        }
        let (mut fast, mut slow) = built_both_ways(n, &edges);
        for i in 0..400 {
            let (a, b, work) = (rnd(n), rnd(n), [16, 64, usize::MAX][i % 3]);
            assert_eq!(
                fast.try_add_edge_within(a, b, work),
                slow.try_add_edge_within(a, b, work),
                "trial {trial}, insertion {i}: {a} -> {b}"
            );
        }
        // Out of runs (the first tail's edges split) and cyclic inputs.
        if let Some(&(a, b)) = edges.first() {
            let mut split = edges.clone();
            split.push((a, b));
            built_both_ways(n, &split);
            let mut cyclic = edges.clone();
            cyclic.push((b, a));
            assert!(OrderedDag::from_acyclic(n as usize, &cyclic).is_none());
            cyclic.sort_unstable();
            assert!(OrderedDag::from_acyclic(n as usize, &cyclic).is_none());
            assert!(OrderedDag::from_acyclic(n as usize, &[(a, a)]).is_none());
        }
    }
}

/// `edges` built at once and in turn, checked to be the same graph
/// (lists in order, labels).
fn built_both_ways(n: u32, edges: &[(u32, u32)]) -> (OrderedDag, OrderedDag) {
    let fast = OrderedDag::from_acyclic(n as usize, edges).expect("acyclic");
    let slow: OrderedDag = crate::cycle::from_acyclic_in_turn(n as usize, edges).expect("acyclic");
    assert_eq!(fast.edge_count(), slow.edge_count());
    for v in 0..n as usize {
        let (f, s) = (fast.adj.node[v], slow.adj.node[v]);
        assert_eq!(
            fast.adj.out.list(f.out),
            slow.adj.out.list(s.out),
            "out of {v}"
        );
        assert_eq!(
            fast.adj.inn.list(f.inn),
            slow.adj.inn.list(s.inn),
            "into {v}"
        );
        assert_eq!(fast.slot[v].label, slow.slot[v].label, "label of {v}");
    }
    check_order(&fast);
    (fast, slow)
}
