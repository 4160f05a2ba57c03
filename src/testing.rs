//! Fixtures the unit tests share (the integration tests have their own in
//! `tests/common`, which cannot reach crate-private items).

use crate::elp::{ElpSet, ElpSpec};
use crate::rules::RuleSet;
use tagger_generators::{Topology, TopologySpec};

/// The topology a spec string names.
pub(crate) fn topo(spec: &str) -> Topology {
    TopologySpec::parse(spec).unwrap().build().unwrap()
}

/// `topo` with its ELP and the rules `algo` tags it with, verified.
pub(crate) fn plan_on(topo: Topology, elp: &str, algo: &str) -> (Topology, ElpSet, RuleSet) {
    let e = ElpSet::build(&topo, &ElpSpec::parse(elp).unwrap()).unwrap();
    let tg = crate::tagging::tag(&topo, &e, algo.parse().unwrap(), Default::default()).unwrap();
    let r = RuleSet::from_tagging(&topo, &tg);
    assert!(crate::verify::verify(&topo, &r, Some(&e)).ok());
    (topo, e, r)
}

/// [`plan_on`] the topology a spec string names.
pub(crate) fn plan(spec: &str, elp: &str, algo: &str) -> (Topology, ElpSet, RuleSet) {
    plan_on(topo(spec), elp, algo)
}
