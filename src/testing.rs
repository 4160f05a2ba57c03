//! Fixtures the unit tests share (the integration tests have their own in
//! `tests/common`, which cannot reach crate-private items).

use crate::elp::{ElpSet, ElpSpec};
use crate::rules::RuleSet;
use tagger_generators::{Topology, TopologySpec};

/// The topology a spec string names.
pub(crate) fn topo(spec: &str) -> Topology {
    TopologySpec::parse(spec).unwrap().build().unwrap()
}

/// A path of `n` switches, one host each: the long-chain worst case.
pub(crate) fn chain(n: u32) -> Topology {
    use tagger_generators::model::{Family, Node};
    Topology::new(
        "chain",
        Family::File,
        vec![Node::switch(None, 1); n as usize],
        (0..n - 1).map(|i| [i, i + 1]).collect(),
    )
    .unwrap()
}

/// `topo` with its ELP and the rules `algo` tags it with, verified, the
/// plan held to `max_tcs` traffic classes per switch
/// (`None`: no limit), as `tagger run` holds it to a switch's.
pub(crate) fn plan_on_within(
    topo: Topology,
    elp: &str,
    algo: &str,
    max_tcs: Option<u32>,
) -> (Topology, ElpSet, RuleSet) {
    let e = ElpSet::build(&topo, &ElpSpec::parse(elp).unwrap()).unwrap();
    let budget = crate::budget::Budget::unlimited();
    let control = crate::tagging::Control::new();
    let cx = crate::tagging::Context::new(&topo, &e, &budget, &control).with_max_tcs(max_tcs);
    let tg = crate::tagging::tag_in(&cx, algo.parse().unwrap()).unwrap();
    let r = RuleSet::from_tagging(&topo, &tg);
    assert!(crate::verify::verify(&topo, &r, Some(&e)).ok());
    (topo, e, r)
}

/// [`plan_on_within`] the topology a spec string names, held to the seven traffic classes a stock switch has for
/// lossless traffic.
pub(crate) fn plan_fitted(spec: &str, elp: &str, algo: &str) -> (Topology, ElpSet, RuleSet) {
    plan_on_within(topo(spec), elp, algo, Some(7))
}

/// `topo`'s shortest-path ELP beside the converged routes of one failure
/// scenario (every fifth link down), as a failure-aware plan has them:
/// two blocks of sources, the second with links that are gone.
pub(crate) fn shortest_with_failures(topo: &Topology) -> ElpSet {
    use crate::elp::Shortest;
    let mut e = ElpSet::build(topo, &ElpSpec::parse("shortest").unwrap()).unwrap();
    let dead: Vec<bool> = (0..topo.link_count()).map(|l| l % 5 == 2).collect();
    e.shortest = Some(Shortest::union(vec![
        Shortest::build_masked(topo, &vec![false; topo.link_count()]),
        Shortest::build_masked(topo, &dead),
    ]));
    e
}
