//! Fat-tree (Al-Fares, Loukissas and Vahdat, "A scalable, commodity data center
//! network architecture", SIGCOMM 2008).

use crate::model::{Family, Node, NodeId, Topology};

/// Builds a `k`-ary fat-tree.
///
/// Node ids: ToRs (edge switches) `pod * k/2 + i` first, then aggregation
/// switches in the same order, then the `(k/2)^2` cores. Levels: ToR 0,
/// aggregation 1, core 2; each ToR has `k/2` hosts. Aggregation switch `j` of
/// every pod links to cores `j*k/2 .. (j+1)*k/2`.
///
/// Complexity: O(k^3) time and space (`5k^2/4` switches, `k^3/2` links).
///
/// # Panics
/// If `k` is odd or zero; [`crate::TopologySpec::parse`] rejects those first.
pub fn fat_tree(k: u32) -> Topology {
    assert!(
        k >= 2 && k.is_multiple_of(2),
        "fat-tree k must be even and >= 2"
    );
    let h = k / 2;
    let pods = k;
    let tors = pods * h;
    let aggs = pods * h;
    let cores = h * h;
    let mut nodes = Vec::with_capacity((tors + aggs + cores) as usize);
    nodes.extend((0..tors).map(|_| Node::switch(Some(0), h)));
    nodes.extend((0..aggs).map(|_| Node::switch(Some(1), 0)));
    nodes.extend((0..cores).map(|_| Node::switch(Some(2), 0)));
    let agg = |pod: u32, j: u32| -> NodeId { tors + pod * h + j };
    let mut links = Vec::with_capacity((k * k * k / 2) as usize);
    for pod in 0..pods {
        for i in 0..h {
            for j in 0..h {
                links.push([pod * h + i, agg(pod, j)]);
            }
        }
    }
    for pod in 0..pods {
        for j in 0..h {
            for c in 0..h {
                links.push([agg(pod, j), tors + aggs + j * h + c]);
            }
        }
    }
    let family = Family::FatTree { k };
    Topology::new(family.canonical(), family, nodes, links)
        .expect("fat-tree construction is valid by design")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn counts_degrees_levels(half in 1u32..12) {
            let k = 2 * half;
            let t = fat_tree(k);
            prop_assert_eq!(t.node_count() as u32, 5 * k * k / 4);
            prop_assert_eq!(t.link_count() as u32, k * k * k / 2);
            prop_assert_eq!(t.total_hosts() as u32, k * k * k / 4);
            prop_assert_eq!(t.endpoints().len() as u32, k * k / 2);
            for v in 0..t.node_count() as u32 {
                let expect = if t.level(v) == Some(0) { k / 2 } else { k };
                // ToRs use k/2 ports for links (the other k/2 for hosts).
                prop_assert_eq!(t.degree(v) as u32, expect);
                prop_assert_eq!(t.degree(v) as u32 + t.node(v).hosts, k, "every fat-tree switch has k ports");
            }
            for &[a, b] in t.links() {
                let (la, lb) = (t.level(a).unwrap(), t.level(b).unwrap());
                prop_assert_eq!(la.abs_diff(lb), 1);
            }
            prop_assert!(t.is_connected());
        }
    }
}
