//! Two-tier leaf-spine Clos: the smallest network with levels, and the home of
//! the docs/model.md 1-bounce deadlock example.

use crate::model::{Family, Node, Topology};

/// Builds `leaves` leaf switches (level 0, `hosts` hosts each, ids first) and
/// `spines` spine switches (level 1), every leaf joined to every spine by
/// `links` parallel links.
///
/// Complexity: O(leaves * spines * links).
pub fn leaf_spine(leaves: u32, spines: u32, hosts: u32, links: u32) -> Topology {
    let mut nodes = Vec::with_capacity((leaves + spines) as usize);
    nodes.extend((0..leaves).map(|_| Node::switch(Some(0), hosts)));
    nodes.extend((0..spines).map(|_| Node::switch(Some(1), 0)));
    let mut ls = Vec::with_capacity((leaves * spines * links) as usize);
    for leaf in 0..leaves {
        for s in 0..spines {
            for _ in 0..links {
                ls.push([leaf, leaves + s]);
            }
        }
    }
    let family = Family::LeafSpine {
        leaves,
        spines,
        hosts,
        links,
    };
    Topology::new(family.canonical(), family, nodes, ls)
        .expect("leaf-spine construction is valid by design")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts() {
        let t = leaf_spine(4, 2, 1, 1);
        assert_eq!(t.node_count(), 6);
        assert_eq!(t.link_count(), 8);
        assert_eq!(t.endpoints(), &[0, 1, 2, 3]);
        assert_eq!(t.degree(4), 4);
        let t = leaf_spine(3, 2, 0, 2);
        assert_eq!(t.link_count(), 12);
        assert!(t.endpoints().is_empty());
    }
}
