//! HyperX (Ahn et al., "HyperX: topology, routing, and packaging of efficient
//! large-scale networks", SC 2009).

use crate::model::{Family, Node, Topology};

/// Builds HyperX(`l`, `s`, `k`, `t`): `s^l` switches on an `l`-dimensional
/// lattice (id = sum of `coord[d] * s^d`), each pair of switches that differ
/// in exactly one coordinate joined by `k` parallel links, `t` hosts per
/// switch. Levels are absent.
///
/// Complexity: O(s^l * l * s * k).
pub fn hyperx(l: u32, s: u32, k: u32, t: u32) -> Topology {
    let n = s.pow(l);
    let nodes = vec![Node::switch(None, t); n as usize];
    let mut links =
        Vec::with_capacity((n as u64 * l as u64 * (s as u64 - 1) / 2 * k as u64) as usize);
    for u in 0..n {
        let mut stride = 1;
        for _d in 0..l {
            let c = (u / stride) % s;
            for x in c + 1..s {
                let v = u + (x - c) * stride;
                for _ in 0..k {
                    links.push([u, v]);
                }
            }
            stride *= s;
        }
    }
    let family = Family::HyperX { l, s, k, t };
    Topology::new(family.canonical(), family, nodes, links)
        .expect("HyperX construction is valid by design")
}

/// The dimension in which two adjacent HyperX switches differ.
pub fn link_dimension(u: u32, v: u32, s: u32) -> u32 {
    let (mut a, mut b, mut d) = (u, v, 0);
    while a % s == b % s {
        a /= s;
        b /= s;
        d += 1;
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn counts_and_degrees(l in 1u32..4, s in 2u32..6, k in 1u32..3, t in 0u32..3) {
            let topo = hyperx(l, s, k, t);
            let n = s.pow(l);
            prop_assert_eq!(topo.node_count() as u32, n);
            prop_assert_eq!(topo.link_count() as u32, n * l * (s - 1) / 2 * k);
            prop_assert_eq!(topo.total_hosts() as u32, n * t);
            prop_assert_eq!(topo.endpoints().len() as u32, if t > 0 { n } else { 0 });
            for v in 0..n {
                prop_assert_eq!(topo.degree(v) as u32, l * (s - 1) * k);
            }
            for &[a, b] in topo.links() {
                let (ca, cb) = (topo.coords(a).unwrap(), topo.coords(b).unwrap());
                let diff = ca.iter().zip(&cb).filter(|(x, y)| x != y).count();
                prop_assert_eq!(diff, 1);
                prop_assert_eq!(ca[link_dimension(a, b, s) as usize] != cb[link_dimension(a, b, s) as usize], true);
            }
            prop_assert!(topo.is_connected());
        }
    }
}
