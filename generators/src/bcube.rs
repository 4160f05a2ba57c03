//! BCube (Guo et al., "BCube: a high performance, server-centric network
//! architecture for modular data centers", SIGCOMM 2009).

use crate::model::{Family, Node, Topology};

/// Builds BCube(`n`, `k`): `n^(k+1)` servers (ids first, address digits
/// base `n`, digit 0 least significant) and `k+1` levels of `n^k` switches.
/// The level-`i` switch `j` (id `servers + i*n^k + j`) links the `n` servers
/// whose addresses differ only in digit `i`; `j` is the address with digit `i`
/// removed. Links are added server by server, level by level, so server port
/// `i` is its level-`i` link.
///
/// Servers forward traffic and are the endpoints; switches carry no hosts.
///
/// Complexity: O((k+1) n^(k+1)).
pub fn bcube(n: u32, k: u32) -> Topology {
    let servers = n.pow(k + 1);
    let per_level = n.pow(k);
    let mut nodes = Vec::with_capacity((servers + (k + 1) * per_level) as usize);
    nodes.extend((0..servers).map(|_| Node::server()));
    nodes.extend((0..(k + 1) * per_level).map(|_| Node::switch(None, 0)));
    let mut links = Vec::with_capacity((servers * (k + 1)) as usize);
    for a in 0..servers {
        for i in 0..=k {
            links.push([a, servers + i * per_level + switch_index(a, n, i)]);
        }
    }
    let family = Family::BCube { n, k };
    Topology::new(family.canonical(), family, nodes, links)
        .expect("BCube construction is valid by design")
}

/// Index within its level of the level-`i` switch that serves address `a`.
pub fn switch_index(a: u32, n: u32, i: u32) -> u32 {
    let low = n.pow(i);
    (a / (low * n)) * low + a % low
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::NodeKind;

    #[test]
    fn counts_and_digits() {
        for (n, k) in [(2, 0), (2, 1), (3, 1), (2, 2), (4, 2), (5, 1)] {
            let t = bcube(n, k);
            let servers = n.pow(k + 1);
            assert_eq!(t.count_kind(NodeKind::Server) as u32, servers);
            assert_eq!(t.count_kind(NodeKind::Switch) as u32, (k + 1) * n.pow(k));
            assert_eq!(t.link_count() as u32, servers * (k + 1));
            assert_eq!(t.endpoints().len() as u32, servers);
            for v in 0..t.node_count() as u32 {
                let expect = if v < servers { k + 1 } else { n };
                assert_eq!(t.degree(v) as u32, expect);
            }
            // Each switch's servers differ exactly in the switch's digit.
            for sw in servers..t.node_count() as u32 {
                let i = ((sw - servers) / n.pow(k)) as usize;
                let addrs: Vec<Vec<u32>> = t.neighbors(sw).map(|s| t.coords(s).unwrap()).collect();
                for a in &addrs {
                    for (d, (&x, &y)) in a.iter().zip(&addrs[0]).enumerate() {
                        if d != i {
                            assert_eq!(x, y);
                        }
                    }
                }
                assert_eq!(t.coords(sw).unwrap()[i], n);
            }
            assert!(t.is_connected());
        }
    }
}
