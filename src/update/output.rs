//! What `tagger update` writes: a row per step (`--json`, Parquet), and the
//! per-step rule deltas an operator applies (`--steps-out DIR`).

use super::{Step, Update};
use crate::error::Result;
use crate::output::record::record;
use crate::rules::Entry;
use serde::Serialize;
use serde_json::{Value, json};
use std::path::Path;

/// Format of a step file and of the steps directory's `summary.json`.
pub const STEPS_FORMAT: &str = "tagger-update-steps/1";

record! {
    /// One step of an update schedule (a row of `update.parquet`).
    #[derive(Clone, Debug, Serialize, PartialEq)]
    pub struct StepRow [prefix = ""] {
        /// Step number, from 1.
        pub step: u32,
        /// What the step does: unplug (delete the entries of links about to
        /// be recabled), add (install new entries beside the old), remove
        /// (delete entries the new plan no longer has) or replace (one
        /// switch's table swapped for its new one).
        pub action: String,
        /// Switches the step changes.
        pub switches: u32,
        /// The switches' node ids (union topology), space-separated.
        pub switch_list: String,
        /// Entries the step installs.
        pub entries_added: u64,
        /// Entries the step deletes.
        pub entries_removed: u64,
        /// The step's switches may change in any order (the verified
        /// state bounds every partial one).
        pub any_order: bool,
        /// Packets the step's switch decided with its old table must drain
        /// before its new table goes in: the states before and after the
        /// step, together, do not verify (switch by switch only).
        pub drain: bool,
        /// The state the step leaves passed the independent verifier on the
        /// union topology (consistent, no decrease, acyclic per priority).
        pub verified: bool,
        /// Lossless priorities the state's entries use.
        pub priorities: u32,
        /// Distinct same-priority dependencies in that state.
        pub dependency_edges: u64,
        /// Every old ELP finds an entry at every hop in that state.
        pub old_elps_lossless: bool,
        /// Every new ELP finds an entry at every hop in that state.
        pub new_elps_lossless: bool,
    }
}

fn nodes_text(v: &[u32]) -> String {
    v.iter().map(u32::to_string).collect::<Vec<_>>().join(" ")
}

impl StepRow {
    fn of(i: usize, s: &Step) -> Self {
        StepRow {
            step: i as u32 + 1,
            action: s.action.as_str().into(),
            switches: s.switches.len() as u32,
            switch_list: nodes_text(&s.switches),
            entries_added: s.add.len() as u64,
            entries_removed: s.remove.len() as u64,
            any_order: s.any_order,
            drain: s.drain,
            verified: s.state.ok(),
            priorities: s.state.priorities,
            dependency_edges: s.state.dependency_edges,
            old_elps_lossless: s.old_lossy.is_none(),
            new_elps_lossless: s.new_lossy.is_none(),
        }
    }
}

impl Update {
    /// A row per step.
    pub fn rows(&self) -> Vec<StepRow> {
        self.steps
            .iter()
            .enumerate()
            .map(|(i, s)| StepRow::of(i, s))
            .collect()
    }

    /// The summary `tagger update --json` prints: the plan, the churn
    /// against the installed plan (and a from-scratch plan's, when
    /// computed), and a row per step.
    pub fn to_json(&self, old: &str, new: &str, elp: &str) -> Value {
        let c = &self.churn;
        let scratch = self.scratch.as_ref();
        let mut v = json!({
            "old_topology": old,
            "new_topology": new,
            "union_topology": self.correspondence.union.name(),
            "elp": elp,
            "algo": self.plan.algo,
            "priorities": self.plan.priorities,
            "old_priorities": self.old_priorities,
            "lower_bound": self.lower_bound,
            "entries": self.plan.entries.len(),
            "churn_entries": c.entries(),
            "entries_added": c.added,
            "entries_removed": c.removed,
            "entries_changed": c.changed,
            "entry_writes_delete_add": c.added + c.removed + 2 * c.changed,
            "switches_touched": c.switches_touched,
            "links_kept": self.correspondence.links_kept(),
            "old_links": self.correspondence.link.len(),
            "links_dropped": self.correspondence.dropped().iter().map(|&x| self.correspondence.link_name(x)).collect::<Vec<_>>(),
            "links_added": self.correspondence.added().iter().map(|&x| self.correspondence.link_name(x)).collect::<Vec<_>>(),
            "warning": self.correspondence.mismatch(),
            "scratch_algo": scratch.map(|s| s.algo.clone()),
            "scratch_priorities": scratch.map(|s| s.priorities),
            "scratch_churn_entries": scratch.map(|s| s.churn.entries()),
            "fit": self.fit.as_ref().map(fit_json),
            "scratch_fit": scratch.and_then(|s| s.fit.as_ref()).map(fit_json),
            "scratch_switches_touched": scratch.map(|s| s.churn.switches_touched),
            "near": self.near.as_ref().map(|n| json!({
                "priorities": n.priorities,
                "churn_entries": n.churn.entries(),
                "switches_touched": n.churn.switches_touched,
                "evaluations": n.evaluations,
                "taken": n.taken,
                "unreachable": n.unreachable,
                "fit": n.fit.as_ref().map(fit_json),
            })),
            "near_refused": self.near_refused,
            "reorder": self.reordered.as_ref().map(|r| json!({
                "outcome": r.outcome(),
                "target": r.target,
                "greedy_priorities": r.greedy_priorities,
                "reached": r.reached,
                "evaluations": r.effort.evaluations,
                "residue": r.effort.residue,
                "stalled": r.effort.stalled,
                "stopped": r.effort.stopped_early,
                "skipped": r.effort.skipped,
                "forced_paths": r.forced.as_ref().map(|f| f.paths),
                "forced_example": r.forced.as_ref().map(|f| &f.example),
            })),
            "schedule": self.kind.as_str(),
            "two_phase_refused": self.two_phase_refused.as_ref().map(ToString::to_string),
            "extension_refused": self.extension_refused,
            "classes_over": self.classes_over,
            "steps": self.steps.len(),
            "verified_steps": self.verified_steps(),
            "verified": self.ok(),
            "step_rows": self.rows(),
        });
        // Beside the macro's literal: it is at its recursion limit.
        v["unfit"] = json!(self.unfit);
        v
    }

    /// Writes the steps as Parquet, with the change in the metadata.
    ///
    /// # Errors
    /// [`crate::Error::Parquet`] or [`crate::Error::Io`] naming the path.
    #[cfg(feature = "tables")]
    pub fn write_parquet(&self, path: &Path, old: &str, new: &str, elp: &str) -> Result<()> {
        crate::output::write_atomic_with(path, |f| self.write_parquet_to(f, path, old, new, elp))
    }

    /// [`Update::write_parquet`] into `f` (a staged output); `path` names
    /// it in errors.
    ///
    /// # Errors
    /// As [`Update::write_parquet`].
    #[cfg(feature = "tables")]
    pub fn write_parquet_to(
        &self,
        f: &mut (dyn std::io::Write + Send),
        path: &Path,
        old: &str,
        new: &str,
        elp: &str,
    ) -> Result<()> {
        let mut table = crate::output::parquet::Table::with_columns(StepRow::COLUMNS);
        for row in self.rows() {
            StepRow::push_row(Some(&row), &mut table);
        }
        crate::output::parquet::write_batches_to(
            f,
            path,
            &[table.into_batch(path)?],
            &[
                ("tagger.old_topology", old.to_string()),
                ("tagger.new_topology", new.to_string()),
                ("tagger.elp", elp.to_string()),
                ("tagger.priorities", self.plan.priorities.to_string()),
                ("tagger.churn_entries", self.churn.entries().to_string()),
                ("tagger.version", env!("CARGO_PKG_VERSION").to_string()),
            ],
        )
    }

    /// Fills `dir` (empty) with what an operator applies: the union
    /// topology (`topology.json`, whose ids every step file uses; its
    /// first links are the new topology's, with the same ids), one
    /// `step-N-ACTION.json` per step (`tagger-update-steps/1`: the
    /// switches, whether their order is free, and the entries to add and
    /// remove, in the rules file's entry form), and `summary.json`.
    ///
    /// # Errors
    /// [`crate::Error::Io`] naming the file.
    pub fn write_steps(&self, dir: &Path, summary: &Value) -> Result<()> {
        let topo = tagger_generators::file::to_json(&self.correspondence.union);
        crate::output::write_staged(&dir.join("topology.json"), &topo)?;
        for (i, s) in self.steps.iter().enumerate() {
            let v = json!({
                "format": STEPS_FORMAT,
                "topology": self.correspondence.union.name(),
                "step": i + 1,
                "action": s.action.as_str(),
                "switches": s.switches,
                "any_order": s.any_order,
                "drain": s.drain,
                "verified": s.state.ok(),
                "add": s.add,
                "remove": s.remove,
            });
            let name = format!("step-{}-{}.json", i + 1, s.action.as_str());
            let text = serde_json::to_string_pretty(&v).expect("JSON values serialise");
            crate::output::write_staged(&dir.join(name), &(text + "\n"))?;
        }
        let mut summary = summary.clone();
        summary["format"] = STEPS_FORMAT.into();
        let text = serde_json::to_string_pretty(&summary).expect("JSON values serialise");
        crate::output::write_staged(&dir.join("summary.json"), &(text + "\n"))
    }
}

/// A candidate plan's fit as `--json` gives it.
fn fit_json(f: &super::PlanFit) -> Value {
    json!({
        "profile": f.profile,
        "fits": f.fits(),
        "switches": f.switches,
        "lossless_queues_needed": f.queues_needed,
        "lossless_queues": f.queues,
        "switches_over_queues": f.over_queues,
        "switches_over_buffer": f.over_buffer,
        "switches_over_tcs": f.over_tcs,
    })
}

impl Update {
    /// The rules installed after each step, on the union topology: the
    /// installed plan with the steps' deltas applied in order.
    pub fn states(&self) -> Vec<crate::rules::RuleSet> {
        let mut entries: std::collections::BTreeSet<Entry> =
            self.installed.entries.iter().copied().collect();
        self.steps
            .iter()
            .map(|s| {
                for e in &s.remove {
                    entries.remove(e);
                }
                entries.extend(s.add.iter().copied());
                super::with_entries(
                    &self.installed,
                    self.correspondence.union.name(),
                    entries.iter().copied().collect(),
                )
            })
            .collect()
    }
}
