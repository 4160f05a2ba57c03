//! The pipeline up to one stage, on one thread, for counting instructions
//! under valgrind (`scripts/instructions.py`): the instructions of a stage
//! are those of the run up to it less those of the run up to the stage
//! before. Counts do not depend on the machine's load, so a change that
//! makes a stage do more work shows however noisy the timings are.
//!
//! `instructions STAGE TOPOLOGY ELP ALGO`, STAGE one of `topology`, `elp`,
//! `tag`, `rules` (the rule set, its counts and the SONiC traffic classes,
//! as a run computes them) and `verify`. Run without arguments (as `cargo
//! bench` does) it only says how to use it.

use tagger::TopologySpec;
use tagger::elp::{ElpSet, ElpSpec};
use tagger::rules::RuleSet;

const STAGES: [&str; 5] = ["topology", "elp", "tag", "rules", "verify"];

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(upto) = args
        .first()
        .and_then(|s| STAGES.iter().position(|x| x == s))
    else {
        println!(
            "instructions: run by scripts/instructions.py under valgrind (usage: instructions {} TOPOLOGY ELP ALGO)",
            STAGES.join("|")
        );
        return;
    };
    let [_, topo, elp, algo] = &args[..] else {
        eprintln!("instructions: expected STAGE TOPOLOGY ELP ALGO");
        std::process::exit(2);
    };
    // One thread: work stealing would make the counts vary.
    rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build_global()
        .expect("a one-thread pool");
    let t = TopologySpec::parse(topo).unwrap().build().unwrap();
    if upto == 0 {
        return;
    }
    let e = ElpSet::build(&t, &ElpSpec::parse(elp).unwrap()).unwrap();
    std::hint::black_box(e.counts(&t));
    if upto == 1 {
        return;
    }
    let tg = tagger::tagging::tag(&t, &e, algo.parse().unwrap(), Default::default()).unwrap();
    if upto == 2 {
        return;
    }
    let r = RuleSet::from_tagging(&t, &tg);
    std::hint::black_box(r.counts(t.node_count()));
    std::hint::black_box(tagger::sonic::traffic_classes(&t, &r, 7).ok());
    if upto == 3 {
        return;
    }
    let report = tagger::verify::verify(&t, &r, Some(&e));
    assert!(report.ok(), "{report}");
}
