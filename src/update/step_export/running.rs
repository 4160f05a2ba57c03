//! What every switch runs between an update's steps, and the judgement of
//! each running configuration by its read-back.

use crate::rules::Entry;
use crate::sonic::SharedExport;
use serde_json::{Value, json};
use tagger_generators::NodeId;

/// What every switch runs between steps: per switch, its file, its entry
/// in `summary.json`'s switch list, the largest tag and priority of the
/// export it came from, and an id that changes whenever its file does
/// (the read-back decodes each file once: `cache`).
#[derive(Clone, Debug)]
pub(super) struct Running {
    switches: std::collections::BTreeMap<NodeId, std::rc::Rc<RunningSwitch>>,
    cache: std::rc::Rc<crate::sonic::DecodeCache>,
    next_id: std::rc::Rc<std::cell::Cell<u64>>,
}

#[derive(Debug)]
struct RunningSwitch {
    switch: std::rc::Rc<crate::sonic::Switch>,
    listed: Value,
    tags: u64,
    priorities: u64,
    id: u64,
}

impl RunningSwitch {
    /// Whether `sw`'s configuration is the one this switch runs.
    fn runs(&self, sw: &std::rc::Rc<crate::sonic::Switch>) -> bool {
        std::rc::Rc::ptr_eq(&self.switch, sw) || self.switch.config == sw.config
    }
}

impl Running {
    pub(super) fn of(ex: &SharedExport) -> Self {
        let mut r = Running {
            switches: Default::default(),
            cache: Default::default(),
            next_id: Default::default(),
        };
        let all: Vec<NodeId> = ex.switches.iter().map(|s| s.node).collect();
        r.install(ex, &all);
        r
    }

    /// `ex`'s configuration of `nodes` installed; a node `ex` has no file
    /// for is cleared.
    pub(super) fn install(&mut self, ex: &SharedExport, nodes: &[NodeId]) {
        let num = |k: &str| ex.summary[k].as_u64().unwrap_or(0);
        let tags = if ex.summary["tags"].is_null() {
            num("priorities")
        } else {
            num("tags")
        };
        let listed: std::collections::BTreeMap<u64, &Value> = ex.summary["switches"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|x| Some((x["node"].as_u64()?, x)))
            .collect();
        for &v in nodes {
            let sw = ex
                .switches
                .binary_search_by_key(&v, |s| s.node)
                .ok()
                .map(|i| &ex.switches[i]);
            match (sw, listed.get(&u64::from(v))) {
                (Some(sw), Some(l)) => {
                    if let Some(r) = self.switches.get(&v)
                        && r.runs(sw)
                        && r.listed == **l
                    {
                        continue;
                    }
                    let id = self.next_id.get();
                    self.next_id.set(id + 1);
                    let r = RunningSwitch {
                        switch: sw.clone(),
                        listed: (*l).clone(),
                        tags,
                        priorities: num("priorities"),
                        id,
                    };
                    self.switches.insert(v, std::rc::Rc::new(r));
                }
                _ => {
                    self.switches.remove(&v);
                }
            }
        }
    }

    /// Switches whose configuration in `ex` differs from what they run.
    pub(super) fn differing(&self, ex: &SharedExport) -> Vec<NodeId> {
        let mut v: Vec<NodeId> = ex
            .switches
            .iter()
            .filter(|s| self.switches.get(&s.node).is_none_or(|r| !r.runs(s)))
            .map(|s| s.node)
            .chain(
                self.switches
                    .keys()
                    .copied()
                    .filter(|v| !ex.switches.iter().any(|s| s.node == *v)),
            )
            .collect();
        v.sort_unstable();
        v
    }

    /// The running configuration read back as `tagger verify --exported`
    /// reads a directory: its header is `summary`'s (the step's) with the
    /// largest tag and priority of what runs.
    pub(super) fn judge(
        &self,
        topo: &tagger_generators::Topology,
        summary: &Value,
        label: &str,
    ) -> std::result::Result<crate::sonic::ReadBack, crate::Error> {
        let mut summary = summary.clone();
        let (tags, prios) = self
            .switches
            .values()
            .fold((0, 0), |(t, p), r| (r.tags.max(t), r.priorities.max(p)));
        summary["switches"] =
            Value::Array(self.switches.values().map(|r| r.listed.clone()).collect());
        if !summary["tags"].is_null() {
            summary["tags"] = json!(tags.max(summary["tags"].as_u64().unwrap_or(0)));
        }
        summary["priorities"] = json!(prios.max(summary["priorities"].as_u64().unwrap_or(0)));
        let files = self
            .switches
            .iter()
            .map(|(&v, r)| (v, (&r.switch.config, r.id)))
            .collect();
        crate::sonic::read_parts(topo, label, &summary, &files, Some(&self.cache))
    }

    /// [`Running::judge`], then the step's state's entries all lossless as
    /// planned, and unless the step drains first, the dependencies of the
    /// configuration before and this one together acyclic.
    pub(super) fn judged(
        &self,
        topo: &tagger_generators::Topology,
        summary: &Value,
        label: &str,
        state: &crate::rules::RuleSet,
        before: &crate::sonic::ReadBack,
        drain: bool,
    ) -> std::result::Result<crate::sonic::ReadBack, crate::Error> {
        let back = self.judge(topo, summary, label)?;
        if let Some(e) = state
            .entries
            .iter()
            .find(|e| back.rules.entries.binary_search(e).is_err())
        {
            return Err(crate::Error::Update {
                reason: format!("the state's entry {e:?} is not what the switches do"),
            });
        }
        if !drain {
            acyclic_together(topo, &before.rules.entries, &back.rules.entries)?;
        }
        Ok(back)
    }

    /// [`Running::judged`]; failing only on the dependencies of before
    /// and after together, judged as a drain (`true` with it: what runs
    /// after passes alone, so it needs the fabric's lossless queues to
    /// empty first). The first error is the one returned.
    pub(super) fn judged_or_drained(
        &self,
        topo: &tagger_generators::Topology,
        summary: &Value,
        label: &str,
        state: &crate::rules::RuleSet,
        before: &crate::sonic::ReadBack,
        drain: bool,
    ) -> std::result::Result<(crate::sonic::ReadBack, bool), crate::Error> {
        match self.judged(topo, summary, label, state, before, drain) {
            Ok(back) => Ok((back, false)),
            Err(e) if drain => Err(e),
            Err(e) => match self.judged(topo, summary, label, state, before, true) {
                Ok(back) => Ok((back, true)),
                Err(_) => Err(e),
            },
        }
    }
}

/// Whether the buffer dependencies of two sets of lossless transitions,
/// taken together, are acyclic: vertices (channel, priority), an edge from
/// each transition's arriving (channel, priority) to its leaving one, in
/// any priority (the states differ in the actions of some keys, so their
/// union is no state a switch holds; only its dependencies matter).
fn acyclic_together(
    topo: &tagger_generators::Topology,
    a: &[Entry],
    b: &[Entry],
) -> std::result::Result<(), crate::Error> {
    let p = a
        .iter()
        .chain(b)
        .map(|e| e.priority.max(e.next_priority) as usize + 1)
        .max()
        .unwrap_or(1);
    let n = topo.channel_count() * p;
    let edges: Vec<(u32, u32)> = a
        .iter()
        .chain(b)
        .filter_map(|e| {
            let c_in = topo.channel_from(e.in_link?, e.node) ^ 1;
            let c_out = topo.channel_from(e.out_link, e.node);
            Some((
                (c_in as usize * p + e.priority as usize) as u32,
                (c_out as usize * p + e.next_priority as usize) as u32,
            ))
        })
        .collect();
    let Some(cycle) = crate::cycle::find_cycle(n, edges) else {
        return Ok(());
    };
    let shown: Vec<String> = cycle
        .iter()
        .map(|&x| {
            let c = x as usize / p;
            format!(
                "channel {} -> {} priority {}",
                topo.channel_src(c as u32),
                topo.channel_dst(c as u32),
                x as usize % p
            )
        })
        .collect();
    Err(crate::Error::Update {
        reason: format!(
            "what the switches ran before the step and run after it, together, have a dependency cycle (packets the old configuration decided are still in flight): {} -> back to the first",
            shown.join(" -> ")
        ),
    })
}
