//! The traffic classes of a window of an update's states (those between
//! two drains), chosen on a ladder from "beside everything that runs" down
//! to "each state alone".

use crate::error::Result;
use crate::rules::Entry;
use crate::tagging::traffic::Classification;
use tagger_generators::NodeId;

/// How a window's states were classified (weakest first): each alone,
/// together, together beside the dependencies of switches the window does
/// not touch, beside those of all but the first step's switches, together
/// with the state in place kept within what runs (passing through it drops
/// dependencies, adds none), or beside every dependency of what runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Rung {
    EachAlone,
    Together,
    Untouched,
    ExceptFirst,
    Within,
    Running,
}

impl Rung {
    pub(super) fn as_str(self) -> &'static str {
        match self {
            Rung::Running => "beside-running",
            Rung::Within => "within-running",
            Rung::ExceptFirst => "beside-running-but-the-first-step",
            Rung::Untouched => "beside-untouched",
            Rung::Together => "together",
            Rung::EachAlone => "each-alone",
        }
    }
}

/// Traffic classes of a window's states (the first the state in place,
/// when it leads):
/// classified together beside the running dependencies (`running`'s
/// same-priority transitions); failing that (a cycle, or more classes than
/// the switches have), with the state in place kept within them; beside
/// all but those of the first step's switches (a window opened by a drain:
/// their old configuration is gone when the step is done, the others' runs
/// until their own step); beside those of switches the window does not
/// touch; together alone; each state alone. Every result is judged by the caller, so a lower rung is a weaker
/// guess, never a weaker check.
pub(super) fn window_classes(
    topo: &tagger_generators::Topology,
    running: &[Entry],
    first: &[NodeId],
    touched: &std::collections::BTreeSet<NodeId>,
    states: &[crate::rules::RuleSet],
    max_tcs: u32,
) -> Result<(Vec<Classification>, Rung)> {
    let deps = |keep: &dyn Fn(&Entry) -> bool| -> Vec<(u32, u32, u32)> {
        let mut d: Vec<(u32, u32, u32)> = running
            .iter()
            .filter(|e| e.priority == e.next_priority && keep(e))
            .filter_map(|e| {
                let c_in = topo.channel_from(e.in_link?, e.node) ^ 1;
                Some((e.priority, c_in, topo.channel_from(e.out_link, e.node)))
            })
            .collect();
        d.sort_unstable();
        d.dedup();
        d
    };
    let all = deps(&|_| true);
    // A rung whose classes need more than the switches have is no better
    // than a cycle: the export would refuse it.
    let within_tcs = |c: &[Classification]| c.iter().all(|c| c.max() <= max_tcs as usize);
    let mut last = None;
    for (rung, seed, within) in [
        (Rung::Running, all.clone(), None),
        (Rung::Within, Vec::new(), Some(all.as_slice())),
        (Rung::ExceptFirst, deps(&|e| !first.contains(&e.node)), None),
        (Rung::Untouched, deps(&|e| !touched.contains(&e.node)), None),
        (Rung::Together, Vec::new(), None),
    ] {
        match crate::sonic::classify_states(topo, &seed, within, states) {
            Ok(c) if within_tcs(&c) => return Ok((c, rung)),
            Ok(c) => last = Some(Ok((c, rung))),
            Err(e) => last = Some(Err(e)),
        }
    }
    let each = states
        .iter()
        .map(|s| crate::sonic::classify_states(topo, &[], None, std::slice::from_ref(s)))
        .collect::<Result<Vec<_>>>();
    match each {
        Ok(c) => Ok((c.into_iter().flatten().collect(), Rung::EachAlone)),
        // Over the classes everywhere: the export says where.
        Err(e) => match last {
            Some(Ok(found)) => Ok(found),
            _ => Err(e),
        },
    }
}
