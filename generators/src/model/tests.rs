use super::*;

/// The sizes known before building are the sizes built.
#[test]
fn sizes_before_building_match() {
    for spec in [
        "fattree:k=4",
        "fattree:k=10",
        "leafspine:leaves=5,spines=3,links=2",
        "bcube:n=3,k=2",
        "bcube:n=4,k=0",
        "hyperx:l=2,s=4,k=2",
        "hyperx:l=3,s=3",
        "jellyfish:n=30,ports=8,r=5,seed=2",
    ] {
        let crate::TopologySpec::Generated(f) = crate::TopologySpec::parse(spec).unwrap() else {
            panic!("{spec}");
        };
        let t = crate::TopologySpec::parse(spec).unwrap().build().unwrap();
        assert_eq!(
            f.size(),
            Some((t.node_count() as u64, t.link_count() as u64)),
            "{spec}"
        );
    }
}

fn path3() -> Topology {
    Topology::new(
        "p",
        Family::File,
        vec![
            Node::switch(None, 1),
            Node::switch(None, 0),
            Node::switch(None, 1),
        ],
        vec![[0, 1], [1, 2], [1, 2]],
    )
    .unwrap()
}

#[test]
fn channels_and_ports() {
    let t = path3();
    assert_eq!(t.channel_count(), 6);
    assert_eq!(t.out_channels(1), &[1, 2, 4]);
    assert_eq!(t.channel_src(3), 2);
    assert_eq!(t.channel_dst(3), 1);
    assert_eq!(Topology::reverse(3), 2);
    assert_eq!(t.channel_from(2, 2), 5);
    assert_eq!(t.endpoints(), &[0, 2]);
    assert_eq!(t.endpoint_index(1), NOT_ENDPOINT);
    assert!(t.is_connected());
    assert_eq!(t.degree(1), 3);
}

#[test]
fn rejects_bad_links() {
    let e = Topology::new("x", Family::File, vec![Node::server(); 2], vec![[0, 2]]).unwrap_err();
    assert!(e.to_string().contains("node 2 does not exist"), "{e}");
    let e = Topology::new("x", Family::File, vec![Node::server(); 2], vec![[1, 1]]).unwrap_err();
    assert!(e.to_string().contains("self-loop"), "{e}");
}
